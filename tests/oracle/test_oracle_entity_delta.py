"""Kafka 3.9.1 judges the mirror's delta records (issue 8: per-entity diff, partition epochs).

A pre-copy (the bulk records, transaction left open), then the delta of a changed tree, then the
cutover's closing records, written as one voter log. Kafka's own `MetadataShell` replays it: the
partition whose state znode moved by two versions (one re-read of two folded updates) shows the
znode's version as its partition epoch, the one-step leader change shows Kafka's own bumps of
leader and partition epoch, a removed config key and a removed topic are gone, a new topic is
there. So what `migrate.translate.entities` assumes about Kafka's replay is what Kafka does.
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from migrate import (
    EntityKey,
    TranslationOptions,
    closing_records,
    delta_records,
    translate,
)
from tests.support.kafka import metadata_shell
from verify import MetadataImage, apply_records, compare, expected_image
from writers import QuorumWriter, VoterDir, batch_records
from zkreader import (
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ClusterSnapshot,
    ConfigZnode,
    PartitionState,
    Topic,
    ZnodeStat,
)

pytestmark = pytest.mark.oracle

CLUSTER = "zk2kraftOracleCluster1"
ORDERS = "Wn5eU0aORC2O8zaHk8aM7Q"
GONE = "hQ4sSGhOS4uZx1JwqSEmSw"
FRESH = "AAAAAAAAAAAAAAAAAAAAEA"


def _st(version: int = 0, czxid: int = 100) -> ZnodeStat:
    return ZnodeStat(czxid=czxid, mzxid=czxid, version=version, ctime_ms=1, mtime_ms=2)


def _state(topic: str, p: int, leader: int, isr: tuple[int, ...], leader_epoch: int,
           version: int) -> PartitionState:
    return PartitionState(topic, p, leader, leader_epoch, 3, isr, 0, _st(version))


def _before() -> ClusterSnapshot:
    brokers = {b: Broker(b, 5, (BrokerEndpoint("PLAINTEXT", f"b{b}", 9092, "PLAINTEXT"),), None,
                         -1, 1, {}, _st(czxid=4000 + b)) for b in (1, 2, 3)}
    return ClusterSnapshot(
        cluster_id=ClusterIdZnode(CLUSTER, _st()),
        brokers=brokers,
        topics={
            "orders": Topic("orders", 3, ORDERS, {0: (1, 2), 1: (2, 3)}, {}, {}, _st()),
            "gone": Topic("gone", 3, GONE, {0: (3,)}, {}, {}, _st()),
        },
        partition_states={
            ("orders", 0): _state("orders", 0, 1, (1, 2), 7, 11),
            ("orders", 1): _state("orders", 1, 2, (2, 3), 4, 5),
            ("gone", 0): _state("gone", 0, 3, (3,), 0, 0),
        },
        topic_configs={"orders": ConfigZnode("topics/orders", {
            "retention.ms": "1000", "cleanup.policy": "compact"}, _st())},
    )


def _after(before: ClusterSnapshot) -> ClusterSnapshot:
    return dataclasses.replace(
        before,
        topics={"orders": before.topics["orders"],
                "fresh": Topic("fresh", 3, FRESH, {0: (1,)}, {}, {}, _st())},
        partition_states={
            ("orders", 0): _state("orders", 0, 1, (1,), 7, 13),  # two folded ISR updates
            ("orders", 1): _state("orders", 1, 3, (3,), 5, 6),  # one leader change
            ("fresh", 0): _state("fresh", 0, 1, (1,), 0, 0),
        },
        topic_configs={"orders": ConfigZnode("topics/orders", {"retention.ms": "1000"}, _st())},
    )


def test_kafka_replays_our_delta_to_zookeepers_state(tmp_path: Path) -> None:
    options = TranslationOptions(close_migration=False)
    before, after = _before(), _after(_before())
    precopy = translate(before, options).records
    image = apply_records(MetadataImage.EMPTY,
                         [r for r in precopy if "TRANSACTION" not in r.type])
    keys = [EntityKey.topic("orders"), EntityKey.topic("gone"), EntityKey.topic("fresh")]
    delta = delta_records(image, after, keys, options)
    types = [r.type for r in delta.records]
    assert types.count("PARTITION_RECORD") == 2  # orders-0 (folded) and fresh-0
    assert types.count("PARTITION_CHANGE_RECORD") == 1  # orders-1
    assert compare(expected_image(after), apply_records(image, delta.records)) == []

    records = precopy + delta.records + closing_records(options.metadata_version)
    pairs = batch_records(records, base_offset=0, leader_epoch=1, timestamp_ms=1_700_000_000_000,
                          max_records=50)
    voter = VoterDir(tmp_path / "v1", node_id=3000, cluster_id=CLUSTER)
    with QuorumWriter([voter]) as q:
        for batch, _ in pairs:
            q.append_batch(batch)
        q.write_quorum_state(leader_epoch=1)
    seg = voter.segments()[0]

    assert metadata_shell(seg, "ls", "/image/topics/byName").split() == ["fresh", "orders"]
    p0 = metadata_shell(seg, "cat", "/image/topics/byName/orders/0")
    assert "isr=[1]" in p0 and "leader=1" in p0 and "leaderEpoch=7" in p0, p0
    assert "partitionEpoch=13" in p0, p0  # the znode's version, not 11 + 1
    p1 = metadata_shell(seg, "cat", "/image/topics/byName/orders/1")
    assert "isr=[3]" in p1 and "leader=3" in p1, p1
    assert "leaderEpoch=5" in p1 and "partitionEpoch=6" in p1, p1  # Kafka's own bumps
    configs = metadata_shell(seg, "tree", "/image/configs")
    assert "retention.ms" in configs and "cleanup.policy" not in configs, configs
