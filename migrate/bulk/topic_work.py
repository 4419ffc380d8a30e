"""The one translate+encode loop over the topic table.

Shared by the in-process engine (`migrate.bulk.pipeline`) and the Spark workers
(`migrate.bulk.topic_columns`), so both give the same bytes by construction. It sits below both
so neither imports the other for it (the pipeline imports the Arrow side only on the Spark path).
The loop takes each topic as the translator's `TopicFields` (plain values): the in-process engine
takes them from the reader's model objects (`topic_fields`), the Spark workers from Arrow columns,
without rebuilding a model object.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from migrate.translate.topics import TopicFields, topic_records_of
from writers import MetadataVersion, encode_record
from zkreader import paused_gc

__all__ = ["EncodedTopics", "encode_topics"]


@dataclass(frozen=True, slots=True)
class EncodedTopics:
    """What translating and encoding topics gives: the values in log order, each one's type."""

    values: list[bytes]
    types: list[str]


def encode_topics(mv: MetadataVersion, topics: Iterable[TopicFields],
                  dir_cluster: str | None = None, offline: bool = False) -> EncodedTopics:
    """The one translate+encode loop, shared by Spark tasks and the in-process engine.

    `dir_cluster` and `offline` are `topic_records_of`'s (offline: every broker is stopped)."""
    values: list[bytes] = []
    types: list[str] = []
    with paused_gc():
        for fields in topics:
            for record in topic_records_of(fields, mv, dir_cluster, offline):
                values.append(encode_record(record))
                types.append(record.type)
    return EncodedTopics(values, types)
