"""The topic table as Arrow columns: what the Spark job ships to its workers and gets back.

The driver turns each chunk of topics (`migrate.bulk.pipeline.chunk_topics`) into one Arrow record
batch, one row per topic, its partitions as list columns; a Spark worker reads the columns back
into the reader's model objects and runs the one translate+encode loop
(`migrate.bulk.topic_work.encode_works`) the in-process engine runs, so both give the same bytes by
construction. The encoded records come back as a binary column. No Python object crosses the
JVM boundary per record or per partition: the JVM only moves Arrow buffers.

Every field of the models is shipped (znode stats included), not just what the translator reads
today, so the rebuilt topics equal the snapshot's (a unit test checks it) and a translator that
starts reading another field stays right on Spark.

Imported only on the Spark path (driver and workers): pyarrow costs its import time there alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Any

import orjson
import pyarrow as pa

from migrate.bulk.topic_work import TopicWork, encode_works
from writers import MetadataVersion
from zkreader import ConfigZnode, PartitionState, Topic, new_partition_state, new_stat

__all__ = [
    "ENCODED_SCHEMA",
    "TOPIC_SCHEMA",
    "encode_topic_batch",
    "topic_batch",
    "works_from_batch",
]

_INTS = pa.list_(pa.int32())
_LONGS = pa.list_(pa.int64())

TOPIC_SCHEMA = pa.schema([
    ("name", pa.string()),
    ("json_version", pa.int32()),
    ("topic_id", pa.string()),  # null: the topic has none
    ("stat", _LONGS),  # the topic znode's ZnodeStat, fields in order
    ("partitions", _INTS),  # assignment keys, in the snapshot's order
    ("replicas", pa.list_(_INTS)),  # assignment values, aligned with `partitions`
    # per partition, aligned with `partitions`: the state znode as
    # [leader, leader_epoch, controller_epoch, leader_recovery_state, *stat], null when missing
    ("states", pa.list_(_LONGS)),
    ("isr", pa.list_(_INTS)),  # per partition, null when the state znode is missing
    ("adding_partitions", _INTS),
    ("adding_replicas", pa.list_(_INTS)),
    ("removing_partitions", _INTS),
    ("removing_replicas", pa.list_(_INTS)),
    # [entity_path, config, stat] as JSON (values keep their JSON types), null: no overrides
    ("config", pa.string()),
])
"""One row per topic."""

ENCODED_SCHEMA = pa.schema([
    ("value", pa.binary()),  # `encode_record` output, in log order
    ("record_type", pa.string()),  # the record's Kafka type name, for the counts
])
"""One row per record."""


_stat = attrgetter("czxid", "mzxid", "version", "ctime_ms", "mtime_ms", "ephemeral_owner",
                   "num_children")
_state = attrgetter("leader", "leader_epoch", "controller_epoch", "leader_recovery_state")


def _state_row(state: PartitionState | None) -> tuple[int, ...] | None:
    return None if state is None else _state(state) + _stat(state.stat)


def topic_batch(works: Iterable[TopicWork]) -> pa.RecordBatch:
    """The topics as one record batch of `TOPIC_SCHEMA` (on the driver)."""
    cols: dict[str, list[Any]] = {name: [] for name in TOPIC_SCHEMA.names}
    for work in works:
        t = work.topic
        cols["name"].append(t.name)
        cols["json_version"].append(t.json_version)
        cols["topic_id"].append(t.topic_id)
        cols["stat"].append(_stat(t.stat))
        cols["partitions"].append(list(t.assignment))
        cols["replicas"].append(list(t.assignment.values()))
        states = [work.states.get(p) for p in t.assignment]
        cols["states"].append(list(map(_state_row, states)))
        cols["isr"].append([None if st is None else st.isr for st in states])
        cols["adding_partitions"].append(list(t.adding_replicas))
        cols["adding_replicas"].append(list(t.adding_replicas.values()))
        cols["removing_partitions"].append(list(t.removing_replicas))
        cols["removing_replicas"].append(list(t.removing_replicas.values()))
        c = work.config
        cols["config"].append(None if c is None else orjson.dumps(
            [c.entity_path, c.config, _stat(c.stat)]).decode())
    return pa.RecordBatch.from_pydict(cols, schema=TOPIC_SCHEMA)


def works_from_batch(batch: pa.RecordBatch) -> Iterator[TopicWork]:
    """The topics of a `TOPIC_SCHEMA` batch as model objects (on a worker), in row order."""
    cols = batch.to_pydict()
    rows = zip(*(cols[name] for name in TOPIC_SCHEMA.names), strict=True)
    for (name, json_version, topic_id, stat, partitions, replicas, states, isr,
         adding_p, adding_r, removing_p, removing_r, config) in rows:
        topic = Topic(name, json_version, topic_id,
                      dict(zip(partitions, map(tuple, replicas), strict=True)),
                      dict(zip(adding_p, map(tuple, adding_r), strict=True)),
                      dict(zip(removing_p, map(tuple, removing_r), strict=True)),
                      new_stat(*stat))
        parts: dict[int, PartitionState | None] = {}
        for p, s, i in zip(partitions, states, isr, strict=True):
            parts[p] = None if s is None else new_partition_state(
                name, p, s[0], s[1], s[2], tuple(i), s[3],
                new_stat(s[4], s[5], s[6], s[7], s[8], s[9], s[10]))
        conf = None
        if config is not None:
            path, values, cstat = orjson.loads(config)
            conf = ConfigZnode(path, values, new_stat(*cstat))
        yield TopicWork(topic, parts, conf)


def encode_topic_batch(mv: MetadataVersion, dir_cluster: str | None, offline: bool,
                       batch: pa.RecordBatch) -> pa.RecordBatch:
    """Translate and encode the topics of one batch (runs in Spark workers; top-level so Spark
    pickles it by name). `dir_cluster` and `offline` are `topic_records`'.

    Returns:
        An `ENCODED_SCHEMA` batch: every record of the batch's topics, in log order.

    Raises:
        TranslationError: a znode cannot be expressed (names the path).
        SchemaError: a record does not fit its schema.
    """
    encoded = encode_works(mv, works_from_batch(batch), dir_cluster, offline)
    return pa.RecordBatch.from_arrays(
        [pa.array(encoded.values, pa.binary()), pa.array(encoded.types, pa.string())],
        schema=ENCODED_SCHEMA)

