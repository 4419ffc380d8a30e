"""The topic table as Arrow columns (what the Spark job ships): it must give back the very fields
the translator reads of the topics it was made from, survive Arrow's IPC (the JVM round trip's
format), and encode to the bytes the in-process engine gives."""

from __future__ import annotations

import pickle
from functools import partial

import pyarrow as pa
import pytest

from migrate.bulk.pipeline import chunk_topics, encode_log, topic_table
from migrate.bulk.topic_columns import (
    ENCODED_SCHEMA,
    TOPIC_SCHEMA,
    encode_topic_batch,
    fields_from_batch,
    topic_batch,
)
from migrate.translate.framing import TranslationOptions
from migrate.translate.topics import TopicFields, topic_fields
from tests.unit.migrate.test_pipeline import make_snapshot, st
from writers import SchemaError, parse_metadata_version
from zkreader import ConfigZnode, PartitionState, Topic, ZnodeStat


def _ipc(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch written as an Arrow stream and read back, as the JVM hands it on."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return pa.ipc.open_stream(sink.getvalue()).read_next_batch()


def _odd_topic(topic_id: str | None = None) -> TopicFields:
    """A topic with every optional part: reassignment in flight, a missing state znode, an
    ephemeral-owner stat, big zxids, a negative leader, a config value that is not a string."""
    big = ZnodeStat(2**40 + 1, 2**41, 7, 1_700_000_000_123, 1_700_000_000_456, 2**62 + 5, 3)
    topic = Topic("odd.topic_1", 3, topic_id, {2: (3, 1), 0: (1, 2, 3), 1: ()},
                  {0: (4,)}, {0: (3,)}, big)
    states: dict[int, PartitionState | None] = {
        2: PartitionState("odd.topic_1", 2, -1, 9, 4, (), 1, big),
        0: PartitionState("odd.topic_1", 0, 1, 0, 1, (1, 2), 0, st(5, version=2)),
        1: None,
    }
    config = ConfigZnode("topics/odd.topic_1",
                         {"retention.ms": "100", "x": 7, "ünïcode": "välue"},  # type: ignore[dict-item]
                         st(9))
    return topic_fields(topic, states, config)


def _tuples(value: object) -> object:
    """Lists as tuples, all the way down: Arrow gives lists where the model holds tuples."""
    if isinstance(value, list | tuple):
        return tuple(_tuples(v) for v in value)
    return value


def test_columns_give_back_the_translators_fields_after_an_ipc_round_trip() -> None:
    snapshot = make_snapshot(topics=6, missing_state=((0, 1), (2, 0)))
    topics = [*topic_table(snapshot), _odd_topic()]
    assert any(config is None for _, _, config, _ in topics)
    assert any(row[2] is None for *_, rows in topics for row in rows)  # a missing state znode
    batch = topic_batch(topics)
    assert batch.schema == TOPIC_SCHEMA and batch.num_rows == len(topics)
    back = list(fields_from_batch(_ipc(batch)))
    assert _tuples(back) == _tuples(topics)
    name, topic_id, config, rows = back[-1]
    assert (name, topic_id) == ("odd.topic_1", None)
    assert config == {"retention.ms": "100", "x": 7, "ünïcode": "välue"}  # JSON types kept
    # the znode's order, not sorted; (partition, replicas, state, removing, adding), the state
    # (isr, leader, leader_epoch, partition_epoch = the state znode's version, recovery)
    assert _tuples(rows) == (
        (2, (3, 1), ((), -1, 9, 7, 1), (), ()),
        (0, (1, 2, 3), ((1, 2), 1, 0, 2, 0), (3,), (4,)),
        (1, (), None, (), ()),
    )


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.9-IV0"])
def test_encoded_batches_concatenate_to_the_in_process_topic_records(mv: str) -> None:
    snapshot = make_snapshot(topics=30, uneven=True, missing_state=((1, 0),))
    version = parse_metadata_version(mv)
    options = TranslationOptions(metadata_version=version)
    job = pickle.loads(pickle.dumps(partial(encode_topic_batch, version, None, False)))
    outs = [_ipc(job(_ipc(topic_batch(c))))
            for c in chunk_topics(snapshot, parallelism=3)]
    assert len(outs) >= 3 and all(o.schema == ENCODED_SCHEMA for o in outs)
    chunked = [v for o in outs for v in o.column("value").to_pylist()]
    types = [t for o in outs for t in o.column("record_type").to_pylist()]
    direct = encode_log(snapshot, options)
    start = direct.values.index(chunked[0])
    assert chunked == direct.values[start:start + len(chunked)]
    # every topic record, and only those: 30 topics, their partitions, 15 configs
    partitions = sum(len(t.assignment) for t in snapshot.topics.values())
    assert types.count("TOPIC_RECORD") == 30
    assert types.count("PARTITION_RECORD") == partitions
    assert types.count("CONFIG_RECORD") == 15


def test_a_record_that_does_not_fit_raises_our_error_in_the_task() -> None:
    with pytest.raises(SchemaError):
        encode_topic_batch(parse_metadata_version("3.9-IV0"), None, False,
                           topic_batch([_odd_topic(topic_id="AAAAAAAAAAAAAAAAAAAAAQ")]))
