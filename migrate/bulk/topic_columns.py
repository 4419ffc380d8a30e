"""The topic table as Arrow columns: what the Spark job ships to its workers and gets back.

The driver turns each chunk of topics (`migrate.bulk.pipeline.chunk_topics`) into one Arrow record
batch, one row per topic, its partitions as list columns. The columns hold exactly the
translator's `TopicFields` (`migrate.translate.topics`): what its records are made from, and
nothing the translator does not read. A Spark worker reads them back as those plain values,
without rebuilding the reader's model objects, and runs the one translate+encode loop
(`migrate.bulk.topic_work.encode_topics`) the in-process engine runs, so both give the same bytes
by construction. The encoded records come back as a binary column. No Python object crosses the
JVM boundary per record or per partition: the JVM only moves Arrow buffers.

Imported only on the Spark path (driver and workers): pyarrow costs its import time there alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson
import pyarrow as pa

from migrate.bulk.topic_work import encode_topics
from migrate.translate.topics import PartitionRow, TopicFields
from writers import MetadataVersion

__all__ = [
    "ENCODED_SCHEMA",
    "TOPIC_SCHEMA",
    "encode_topic_batch",
    "fields_from_batch",
    "topic_batch",
]

_INTS = pa.list_(pa.int32())

TOPIC_SCHEMA = pa.schema([
    ("name", pa.string()),
    ("topic_id", pa.string()),  # null: the topic has none
    ("config", pa.string()),  # the overrides as a JSON object (values keep their JSON types)
    ("partitions", _INTS),  # partition ids, in the snapshot's order
    ("replicas", pa.list_(_INTS)),  # aligned with `partitions`
    # aligned with `partitions`: the state znode's [leader, leader_epoch, partition_epoch,
    # leader_recovery_state] and its ISR, both null when the znode is missing
    ("states", pa.list_(_INTS)),
    ("isr", pa.list_(_INTS)),
    # reassignments in flight, only for the partitions that have them
    ("removing_partitions", _INTS),
    ("removing_replicas", pa.list_(_INTS)),
    ("adding_partitions", _INTS),
    ("adding_replicas", pa.list_(_INTS)),
])
"""One row per topic."""

ENCODED_SCHEMA = pa.schema([
    ("value", pa.binary()),  # `encode_record` output, in log order
    ("record_type", pa.string()),  # the record's Kafka type name, for the counts
])
"""One row per record."""


def topic_batch(topics: Iterable[TopicFields]) -> pa.RecordBatch:
    """The topics as one record batch of `TOPIC_SCHEMA` (on the driver)."""
    cols: dict[str, list[Any]] = {name: [] for name in TOPIC_SCHEMA.names}
    for name, topic_id, config, rows in topics:
        cols["name"].append(name)
        cols["topic_id"].append(topic_id)
        cols["config"].append(None if config is None else orjson.dumps(config).decode())
        cols["partitions"].append([r[0] for r in rows])
        cols["replicas"].append([r[1] for r in rows])
        states = [r[2] for r in rows]
        cols["states"].append([None if s is None else s[1:] for s in states])
        cols["isr"].append([None if s is None else s[0] for s in states])
        removing = [(r[0], r[3]) for r in rows if r[3]]
        cols["removing_partitions"].append([p for p, _ in removing])
        cols["removing_replicas"].append([r for _, r in removing])
        adding = [(r[0], r[4]) for r in rows if r[4]]
        cols["adding_partitions"].append([p for p, _ in adding])
        cols["adding_replicas"].append([r for _, r in adding])
    return pa.RecordBatch.from_pydict(cols, schema=TOPIC_SCHEMA)


def fields_from_batch(batch: pa.RecordBatch) -> Iterator[TopicFields]:
    """The topics of a `TOPIC_SCHEMA` batch as the translator's fields (on a worker), in row
    order."""
    cols = batch.to_pydict()
    for (name, topic_id, config, partitions, replicas, states, isr, removing_p, removing_r,
         adding_p, adding_r) in zip(*(cols[n] for n in TOPIC_SCHEMA.names), strict=True):
        removing = dict(zip(removing_p, removing_r, strict=True))
        adding = dict(zip(adding_p, adding_r, strict=True))
        rows: list[PartitionRow] = [
            (p, r, None if s is None else (i, s[0], s[1], s[2], s[3]),
             removing.get(p, ()), adding.get(p, ()))
            for p, r, s, i in zip(partitions, replicas, states, isr, strict=True)]
        yield name, topic_id, None if config is None else orjson.loads(config), rows


def encode_topic_batch(mv: MetadataVersion, dir_cluster: str | None, offline: bool,
                       batch: pa.RecordBatch) -> pa.RecordBatch:
    """Translate and encode the topics of one batch (runs in Spark workers; top-level so Spark
    pickles it by name). `dir_cluster` and `offline` are `topic_records_of`'s.

    Returns:
        An `ENCODED_SCHEMA` batch: every record of the batch's topics, in log order.

    Raises:
        TranslationError: a znode cannot be expressed (names the path).
        SchemaError: a record does not fit its schema.
    """
    encoded = encode_topics(mv, fields_from_batch(batch), dir_cluster, offline)
    return pa.RecordBatch.from_arrays(
        [pa.array(encoded.values, pa.binary()), pa.array(encoded.types, pa.string())],
        schema=ENCODED_SCHEMA)
