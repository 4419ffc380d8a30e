"""Kafka's own legitimate changes in dual-write are their own class, not differences, and
everything near them is still a difference (issue 16, item 5). Values by hand, from Kafka 3.9:
a KRaft controller's ProducerIdsRecord holds the next free id N; `ZkProducerIdsClient.
writeProducerId(N)` then writes `{"broker":-1,"block_start":N,"block_end":N+999}` to ZooKeeper
(KRaftMigrationZkWriter, UpdateProducerId). A broker moved to KRaft registers
with the controller (a version-4 incarnation id) and has no /brokers/ids znode."""

from __future__ import annotations

from typing import Any

from verify import expected_image, load_records, parity_report
from writers import MetadataRecord
from zkreader import (
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ClusterSnapshot,
    ProducerIdBlock,
    ZnodeStat,
)

STAT = ZnodeStat(czxid=0x1_0000_0025, mzxid=0x1_0000_0025, version=0, ctime_ms=1, mtime_ms=1)
KRAFT_INCARNATION = "7C9rNwqDS8-Oo6l1Y0w8Nw"  # version 4: Kafka's Uuid.randomUuid()


def zk_broker(bid: int) -> Broker:
    return Broker(broker_id=bid, json_version=5,
                  endpoints=(BrokerEndpoint("PLAINTEXT", f"h{bid}", 9092, "PLAINTEXT"),),
                  rack=None, jmx_port=-1, timestamp_ms=1, features={}, stat=STAT)


def snapshot(*, block: ProducerIdBlock | None = None,
             brokers: tuple[int, ...] = ()) -> ClusterSnapshot:
    return ClusterSnapshot(cluster_id=ClusterIdZnode("Z2kXampleClusterId0001", STAT),
                           brokers={b: zk_broker(b) for b in brokers}, producer_id_block=block)


def producer_ids(next_id: int, broker: int = 1) -> MetadataRecord:
    return MetadataRecord("PRODUCER_IDS_RECORD", 0,
                          {"brokerId": broker, "brokerEpoch": 5, "nextProducerId": next_id})


def registration(bid: int, incarnation: str, epoch: int) -> MetadataRecord:
    data: dict[str, Any] = {
        "brokerId": bid, "isMigratingZkBroker": False, "incarnationId": incarnation,
        "brokerEpoch": epoch,
        "endPoints": [{"name": "PLAINTEXT", "host": f"h{bid}", "port": 9092,
                       "securityProtocol": 0}],
        "features": [], "rack": None, "fenced": False, "inControlledShutdown": False}
    return MetadataRecord("REGISTER_BROKER_RECORD", 2, data)


def judge(snap: ClusterSnapshot, records: list[MetadataRecord]) -> dict[str, Any]:
    report = parity_report(expected_image(snap), load_records(records).image)
    return {"parity": report.parity,
            "differences": [(d.kind, d.key, d.field, d.zookeeper, d.quorum)
                            for d in report.differences],
            "kafka": [(d.kind, d.key, d.field, d.zookeeper, d.quorum)
                      for d in report.changed_by_kafka]}


def test_a_block_the_kraft_controller_dual_wrote_is_kafkas_change() -> None:
    # the figures: ZooKeeper 7000 (block 6000..6999, broker -1), log 6000
    got = judge(snapshot(block=ProducerIdBlock(1, -1, 6000, 6999, STAT)), [producer_ids(6000)])
    assert got == {"parity": True, "differences": [],
                   "kafka": [("producer_ids", "cluster", "nextProducerId", 7000, 6000)]}


def test_a_block_zookeepers_controller_handed_out_must_match_exactly() -> None:
    # before the handover: broker 2 got 6000..6999 from ZooKeeper's controller; the log's
    # next id is 7000 (Kafka's migration: block_end + 1, KAFKA-15552)
    assert judge(snapshot(block=ProducerIdBlock(1, 2, 6000, 6999, STAT)),
                 [producer_ids(7000)])["parity"] is True
    # the same ZooKeeper block with a log one block behind is a difference, not Kafka's
    got = judge(snapshot(block=ProducerIdBlock(1, 2, 6000, 6999, STAT)), [producer_ids(6000)])
    assert got["differences"] == [("producer_ids", "cluster", "nextProducerId", 7000, 6000)]
    assert got["kafka"] == []


def test_a_dual_written_block_the_log_does_not_lead_to_is_a_difference() -> None:
    # ZooKeeper's block starts at 6000 but the log says 5000 (it misses Kafka's last record)
    got = judge(snapshot(block=ProducerIdBlock(1, -1, 6000, 6999, STAT)), [producer_ids(5000)])
    assert got["differences"] == [("producer_ids", "cluster", "nextProducerId", 7000, 5000)]
    # or the log leads ZooKeeper (ZooKeeper lost Kafka's write)
    got = judge(snapshot(block=ProducerIdBlock(1, -1, 6000, 6999, STAT)), [producer_ids(8000)])
    assert got["differences"] == [("producer_ids", "cluster", "nextProducerId", 7000, 8000)]


def test_a_broker_moved_to_kraft_is_kafkas_change() -> None:
    # brokers 1 and 2 rolled to KRaft: no znode; their own registrations (v4 incarnation ids)
    got = judge(snapshot(), [registration(1, KRAFT_INCARNATION, 120),
                             registration(2, "Gz6OvhBxTCWq3SMA4JX4Ww", 121)])
    assert got == {"parity": True, "differences": [],
                   "kafka": [("broker", "1", "<exists>", False, True),
                             ("broker", "2", "<exists>", False, True)]}


def test_a_copy_zk2kraft_wrote_of_a_gone_znode_is_still_a_difference() -> None:
    from migrate.translate.brokers import broker_records
    from migrate.translate.framing import parse_target_version

    copy = broker_records(zk_broker(1), parse_target_version("3.9"), "Z2kXampleClusterId0001")
    got = judge(snapshot(), copy)
    assert got["differences"] == [("broker", "1", "<exists>", False, True)]
    assert got["kafka"] == []
    # a znode the log does not hold at all stays a difference too
    assert judge(snapshot(brokers=(3,)), [])["differences"] == [
        ("broker", "3", "<exists>", True, False)]
