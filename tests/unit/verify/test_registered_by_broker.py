"""Who wrote a broker registration (`BrokerRegistration.registered_by_broker`), the one rule the
online mirror (keeps a broker's own registration) and parity (leaves its epoch out) share, in
each situation an image comes from. Broker 1's znode and ids below are written by hand."""

from __future__ import annotations

from typing import Any

import pytest

from migrate.translate.brokers import broker_records
from migrate.translate.framing import parse_target_version
from verify import MetadataImage, apply_records, compare, expected_image, load_records
from verify._loader import MetadataLoader
from verify.image import BrokerRegistration
from writers import MetadataRecord, RecordBatch
from zkreader import Broker, BrokerEndpoint, ClusterIdZnode, ClusterSnapshot, ZnodeStat

CLUSTER = "Z2kXampleClusterId0001"
CZXID = 0x1_0000_0025  # a znode's czxid: ZooKeeper epoch 1, counter 0x25
OWN = "7C9rNwqDS8-Oo6l1Y0w8Nw"  # a version-4 UUID, as Kafka's Uuid.randomUuid() draws
OTHER_OWN = "Gz6OvhBxTCWq3SMA4JX4Ww"  # another version-4 UUID: the broker after a restart
MV = parse_target_version("3.9")


def zk_broker(czxid: int = CZXID) -> Broker:
    return Broker(broker_id=1, json_version=5,
                  endpoints=(BrokerEndpoint("PLAINTEXT", "h1", 9092, "PLAINTEXT"),),
                  rack=None, jmx_port=-1, timestamp_ms=1, features={},
                  stat=ZnodeStat(czxid=czxid, mzxid=czxid, version=0,
                                 ctime_ms=1_700_000_000_000, mtime_ms=1_700_000_000_000))


def snapshot(czxid: int = CZXID) -> ClusterSnapshot:
    stat = ZnodeStat(czxid=1, mzxid=1, version=0, ctime_ms=1, mtime_ms=1)
    return ClusterSnapshot(cluster_id=ClusterIdZnode(CLUSTER, stat), brokers={1: zk_broker(czxid)})


def copy(czxid: int = CZXID) -> MetadataRecord:
    """zk2kraft's copy of the znode (`broker_records`, its derived incarnation id)."""
    return broker_records(zk_broker(czxid), MV, CLUSTER)[0]


def own(epoch: int, incarnation: str = OWN) -> MetadataRecord:
    """The RegisterBrokerRecord the stand-in (or Kafka's controller) writes for the broker."""
    data: dict[str, Any] = {
        "brokerId": 1, "isMigratingZkBroker": True, "incarnationId": incarnation,
        "brokerEpoch": epoch,
        "endPoints": [{"name": "PLAINTEXT", "host": "h1", "port": 9092, "securityProtocol": 0}],
        "features": [], "rack": None, "fenced": True, "inControlledShutdown": False}
    return MetadataRecord("REGISTER_BROKER_RECORD", 2, data)


NOOP = MetadataRecord("NO_OP_RECORD", 0, {})


def broker_1(image: MetadataImage) -> BrokerRegistration:
    return image.cluster.brokers[1]


def broker_differences(image: MetadataImage, czxid: int = CZXID) -> list[tuple[str, Any, Any]]:
    diffs = compare(expected_image(snapshot(czxid)), image)
    return [(d.field, d.zookeeper, d.quorum) for d in diffs if d.kind == "broker"]


def test_a_copy_from_zookeeper_is_not_the_brokers_own_whether_offsets_are_known_or_not() -> None:
    assert copy().data["brokerEpoch"] == CZXID
    assert broker_1(load_records([copy()]).image).registered_by_broker is False
    assert broker_1(apply_records(MetadataImage.EMPTY, [copy()])).registered_by_broker is False


def test_a_log_from_disk_where_the_broker_registered_itself_after_the_copy() -> None:
    image = load_records([copy(), NOOP, NOOP, own(epoch=3)]).image  # own record at offset 3
    assert (broker_1(image).epoch, broker_1(image).registered_by_broker) == (3, True)
    assert broker_differences(image) == []  # its epoch (an offset) is not ZooKeeper's czxid


def test_a_broker_that_registered_again_with_the_same_incarnation_keeps_its_first_epoch() -> None:
    """The stand-in (`writers.raft.brokers`) keeps the epoch of a same-incarnation
    re-registration: its second record, at offset 3, carries epoch 1. An epoch == offset
    rule takes it for a copy and reports the epoch."""
    image = load_records([copy(), own(epoch=1), NOOP, own(epoch=1)]).image
    assert (broker_1(image).epoch, broker_1(image).registered_by_broker) == (1, True)
    assert broker_differences(image) == []


def test_a_restarted_broker_registers_a_new_incarnation_at_a_new_epoch() -> None:
    image = load_records([copy(), own(epoch=1), NOOP, own(epoch=3, incarnation=OTHER_OWN)]).image
    reg = broker_1(image)
    assert (reg.epoch, reg.incarnation_id, reg.registered_by_broker) == (3, OTHER_OWN, True)


def test_the_online_mirrors_image_knows_no_offsets() -> None:
    """`apply_records` (what the mirror keeps while the stand-in appends the brokers'
    registrations) replays without offsets; the broker's own registration is still its own,
    so the mirror writes nothing over it."""
    image = apply_records(apply_records(MetadataImage.EMPTY, [copy()]), [own(epoch=5)])
    assert broker_1(image).registered_by_broker is True
    assert broker_differences(image) == []


def test_a_registration_read_from_a_snapshot_knows_no_offset() -> None:
    loader = MetadataLoader()
    loader.load_snapshot([RecordBatch(0, 1, 1, (own(epoch=7),))], end_offset=9, epoch=1)
    image = loader.finish().image
    assert broker_1(image).registered_by_broker is True
    assert broker_differences(image) == []


def test_a_stale_copy_stays_a_copy_and_its_epoch_a_difference() -> None:
    """The broker re-registered in ZooKeeper (new czxid) and the log still holds the copy of its
    old znode: it is zk2kraft's, so parity reports the epoch."""
    new = CZXID + 0x40
    image = load_records([copy()]).image
    assert broker_1(image).registered_by_broker is False
    assert broker_differences(image, czxid=new) == [("brokerEpoch", new, CZXID)]


@pytest.mark.parametrize(("incarnation", "by_broker"), [
    (OWN, True),                        # version 4
    ("iGMT4TuKU3KbkAya7hmeXQ", False),  # uuid5(NAMESPACE_DNS, "python.org"): version 5
    ("AAAAAAAAAAAAAAAAAAAAAA", True),   # Uuid(0,0): no version
    ("", True),                         # no id at all is not one zk2kraft writes
    ("not a uuid", True),
])
def test_the_incarnation_ids_uuid_version_decides(incarnation: str, by_broker: bool) -> None:
    reg = broker_1(apply_records(MetadataImage.EMPTY, [own(epoch=3, incarnation=incarnation)]))
    assert reg.registered_by_broker is by_broker
