"""The stand-in's BrokerRegistration/BrokerHeartbeat decisions, against Kafka 3.9's rules.

Expected values are Kafka's (ClusterControlManager.registerBroker, BrokerHeartbeatManager.
calculateNextBrokerState, Errors): error codes 35, 77, 101, 102, 104, 119; a new incarnation is
fenced with the offset of its record as epoch; the same incarnation keeps its epoch; isCaughtUp
is `currentMetadataOffset >= offset of the RegisterBrokerRecord`; unfencing writes a
BrokerRegistrationChangeRecord v0 with fenced = -1.
"""

from __future__ import annotations

from typing import Any

import pytest

from writers import MetadataRecord, parse_metadata_version
from writers.raft.brokers import BrokerRegistry

CLUSTER = "q1Sh-9_ISia_zwGINzRvyQ"
MV39 = parse_metadata_version("3.9-IV0")  # feature level 21
MV35 = parse_metadata_version("3.5-IV2")
DIR_A = "Xk3pQ8sURvK3W2l0oq7yCw"
DIR_B = "b7tWZ4m5Re2cV0hYI1pXgA"
INC = "7C9rNwqDS8-Oo6l1Y0w8Nw"


def _request(**over: Any) -> dict[str, Any]:
    """A BrokerRegistration v4 as a 3.9.1 ZooKeeper-mode broker in migration mode sends it."""
    req: dict[str, Any] = {
        "brokerId": 1, "clusterId": CLUSTER, "incarnationId": INC,
        "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9092,
                       "securityProtocol": 0}],
        "features": [{"name": "metadata.version", "minSupportedVersion": 21,
                      "maxSupportedVersion": 21},
                     {"name": "kraft.version", "minSupportedVersion": 0,
                      "maxSupportedVersion": 1}],
        "rack": None, "isMigratingZkBroker": True, "logDirs": [DIR_A],
        "previousBrokerEpoch": -1}
    req.update(over)
    return req


def _registered(reg: BrokerRegistry, offset: int, **over: Any) -> MetadataRecord:
    out = reg.register(_request(**over), 0.0)
    assert out.answer["errorCode"] == 0, out.answer
    (record,) = out.records
    if out.epoch_is_offset:
        record = MetadataRecord(record.type, record.version,
                                {**record.data, "brokerEpoch": offset})
    reg.replayed(record, offset)
    return record


def test_new_incarnation_is_fenced_with_its_records_offset_as_epoch() -> None:
    reg = BrokerRegistry(CLUSTER, MV39)
    out = reg.register(_request(), 0.0)
    assert out.answer == {"throttleTimeMs": 0, "errorCode": 0, "brokerEpoch": -1}
    assert out.epoch_is_offset
    (rec,) = out.records
    assert (rec.type, rec.version) == ("REGISTER_BROKER_RECORD", 3)  # 3.7-IV2 and later
    assert rec.data["isMigratingZkBroker"] is True
    assert rec.data["fenced"] is True and rec.data["logDirs"] == [DIR_A]
    assert rec.data["incarnationId"] == INC
    assert rec.data["endPoints"] == [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9092,
                                      "securityProtocol": 0}]


def test_same_incarnation_keeps_epoch_and_fencing() -> None:
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 40)
    reg.replayed(MetadataRecord("BROKER_REGISTRATION_CHANGE_RECORD", 0,
                                {"brokerId": 1, "brokerEpoch": 40, "fenced": -1}), 41)
    again = reg.register(_request(), 1000.0)
    assert again.answer["brokerEpoch"] == 40 and not again.epoch_is_offset
    assert again.records[0].data["brokerEpoch"] == 40
    assert again.records[0].data["fenced"] is False


def test_zookeeper_copy_is_superseded_by_the_brokers_registration() -> None:
    """Kafka's controller has no session for a fenced (copied) registration, so another
    incarnation is no duplicate: it gets a new epoch."""
    reg = BrokerRegistry(CLUSTER, MV39)
    reg.replayed(MetadataRecord("REGISTER_BROKER_RECORD", 3, {
        "brokerId": 1, "brokerEpoch": 4294967330, "incarnationId": "zk-derived-incarnation",
        "fenced": True, "isMigratingZkBroker": True, "logDirs": []}), 12)
    out = reg.register(_request(), 0.0)
    assert out.answer["errorCode"] == 0 and out.epoch_is_offset


@pytest.mark.parametrize(("over", "code"), [
    ({"clusterId": "other-cluster-id-12345"}, 104),  # INCONSISTENT_CLUSTER_ID
    ({"isMigratingZkBroker": False}, 102),  # BROKER_ID_NOT_REGISTERED in pre-migration
    ({"logDirs": []}, 119),  # INVALID_REGISTRATION: no directories
    ({"logDirs": ["AAAAAAAAAAAAAAAAAAAAAQ"]}, 119),  # reserved (Uuid(0, 1), UNASSIGNED)
    ({"logDirs": [DIR_A, DIR_A]}, 119),  # duplicated
    ({"features": [{"name": "metadata.version", "minSupportedVersion": 7,
                    "maxSupportedVersion": 20}]}, 35),  # UNSUPPORTED_VERSION: 21 not in range
])
def test_refusals_carry_kafkas_error_codes(over: dict[str, Any], code: int) -> None:
    out = BrokerRegistry(CLUSTER, MV39).register(_request(**over), 0.0)
    assert out.answer["errorCode"] == code and out.records == []


def test_missing_metadata_version_means_level_1_only() -> None:
    out = BrokerRegistry(CLUSTER, MV39).register(_request(features=[]), 0.0)
    assert out.answer["errorCode"] == 35


def test_finalized_kraft_version_must_be_supported() -> None:
    reg = BrokerRegistry(CLUSTER, MV39, kraft_version=1)
    features = [{"name": "metadata.version", "minSupportedVersion": 21,
                 "maxSupportedVersion": 21}]
    assert reg.register(_request(features=features), 0.0).answer["errorCode"] == 35


def test_another_brokers_directory_is_invalid() -> None:
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 10)
    out = reg.register(_request(brokerId=2, incarnationId="x" * 22, logDirs=[DIR_A]), 0.0)
    assert out.answer["errorCode"] == 119


def test_live_session_makes_another_incarnation_a_duplicate() -> None:
    reg = BrokerRegistry(CLUSTER, MV39, session_timeout_ms=9000)
    _registered(reg, 10)
    hb = reg.heartbeat({"brokerId": 1, "brokerEpoch": 10, "currentMetadataOffset": 10,
                        "wantFence": False, "wantShutDown": False}, 1000.0)
    reg.replayed(hb.records[0], 11)
    other = _request(incarnationId="Zz9rNwqDS8-Oo6l1Y0w8Nw", logDirs=[DIR_B])
    assert reg.register(other, 5000.0).answer["errorCode"] == 101
    assert reg.register(other, 10_001.0).answer["errorCode"] == 0  # session expired


def test_before_directories_no_log_dirs_and_record_v2() -> None:
    out = BrokerRegistry(CLUSTER, MV35).register(_request(
        logDirs=[], features=[{"name": "metadata.version", "minSupportedVersion": 1,
                               "maxSupportedVersion": 14}]), 0.0)
    assert out.answer["errorCode"] == 0
    assert out.records[0].version == 2 and "logDirs" not in out.records[0].data


def test_heartbeat_unfences_once_caught_up_with_its_registration() -> None:
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 50)
    behind = reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 49,
                            "wantFence": False, "wantShutDown": False}, 0.0)
    assert behind.answer == {"throttleTimeMs": 0, "errorCode": 0, "isCaughtUp": False,
                             "isFenced": True, "shouldShutDown": False}
    assert behind.records == []
    wants_fence = reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 50,
                                 "wantFence": True, "wantShutDown": False}, 0.0)
    assert wants_fence.answer["isCaughtUp"] and wants_fence.answer["isFenced"]
    assert wants_fence.records == []
    ready = reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 50,
                           "wantFence": False, "wantShutDown": False}, 0.0)
    assert ready.answer["isFenced"] is False and ready.answer["isCaughtUp"] is True
    (change,) = ready.records
    assert (change.type, change.version, change.data) == (
        "BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": 1, "brokerEpoch": 50, "fenced": -1})


def test_heartbeat_with_another_epoch_or_unregistered_is_stale() -> None:
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 50)
    for req in ({"brokerId": 1, "brokerEpoch": 49}, {"brokerId": 7, "brokerEpoch": 50}):
        out = reg.heartbeat({**req, "currentMetadataOffset": 60, "wantFence": False,
                             "wantShutDown": False}, 0.0)
        assert out.answer["errorCode"] == 77 and out.records == []


def test_shutdown_is_granted_and_fences() -> None:
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 50)
    out = reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 60,
                         "wantFence": True, "wantShutDown": True}, 0.0)
    assert out.answer["shouldShutDown"] is True and out.answer["isFenced"] is True
    assert out.records[0].data["fenced"] == 1


def test_a_newer_copied_registration_makes_the_brokers_epoch_stale() -> None:
    """The mirror writing a registration from ZooKeeper (a broker re-registered there) replaces
    the broker's own: its heartbeats are then stale and it registers again."""
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 50)
    reg.replayed(MetadataRecord("REGISTER_BROKER_RECORD", 3, {
        "brokerId": 1, "brokerEpoch": 4294967999, "incarnationId": "zk-derived-incarnation",
        "fenced": True, "isMigratingZkBroker": True, "logDirs": []}), 70)
    out = reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 80,
                         "wantFence": False, "wantShutDown": False}, 0.0)
    assert out.answer["errorCode"] == 77


# -- session expiry: Kafka 3.9 fences an unfenced broker whose last heartbeat is more than
# broker.session.timeout.ms (default 9000) ago, one broker at a time, the stalest first, with
# BrokerRegistrationChangeRecord v0 fenced = 1; its next caught-up heartbeat unfences it.


def _beat(reg: BrokerRegistry, broker: int, epoch: int, now_ms: float,
          offset: int = 1000) -> dict[str, Any]:
    out = reg.heartbeat({"brokerId": broker, "brokerEpoch": epoch,
                         "currentMetadataOffset": offset, "wantFence": False,
                         "wantShutDown": False}, now_ms)
    for i, rec in enumerate(out.records):
        reg.replayed(rec, 5000 + i)
    return out.answer


def _unfenced(reg: BrokerRegistry, broker: int, offset: int, now_ms: float) -> None:
    _registered(reg, offset, brokerId=broker, incarnationId=f"{INC[:-2]}{broker:02d}",
                logDirs=[{1: DIR_A, 2: DIR_B}[broker]])
    assert _beat(reg, broker, offset, now_ms)["isFenced"] is False


def test_a_silent_broker_is_fenced_after_the_session_timeout_not_before() -> None:
    reg = BrokerRegistry(CLUSTER, MV39, session_timeout_ms=9000)
    reg.activate(0.0)
    _unfenced(reg, 1, 50, now_ms=1000.0)
    assert reg.fence_stale(10_000.0).records == []  # exactly 9000 ms: still a valid session
    assert reg.next_expiry_ms() == 10_000.0
    out = reg.fence_stale(10_001.0)
    assert [(r.type, r.version, r.data) for r in out.records] == [
        ("BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": 1, "brokerEpoch": 50,
                                                  "fenced": 1})]
    reg.replayed(out.records[0], 60)
    assert not reg.live(1, 10_001.0)
    assert reg.fence_stale(20_000.0).records == []  # fenced once, not again
    assert reg.next_expiry_ms() is None


def test_heartbeats_keep_the_session_and_one_after_fencing_unfences() -> None:
    reg = BrokerRegistry(CLUSTER, MV39, session_timeout_ms=9000)
    reg.activate(0.0)
    _unfenced(reg, 1, 50, now_ms=0.0)
    for t in range(2000, 30_000, 2000):  # broker.heartbeat.interval.ms 2000
        _beat(reg, 1, 50, float(t))
        assert reg.fence_stale(t + 1999.0).records == []
    (rec,) = reg.fence_stale(28_000.0 + 9001).records
    reg.replayed(rec, 70)
    # the broker comes back (e.g. out of a long GC pause): fenced until caught up, then unfenced
    behind = _beat(reg, 1, 50, 40_000.0, offset=49)
    assert (behind["isFenced"], behind["isCaughtUp"]) == (True, False)
    back = reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 70,
                          "wantFence": False, "wantShutDown": False}, 40_100.0)
    assert back.answer["isFenced"] is False
    assert [r.data for r in back.records] == [{"brokerId": 1, "brokerEpoch": 50, "fenced": -1}]


def test_the_stalest_broker_is_fenced_first_one_per_call() -> None:
    reg = BrokerRegistry(CLUSTER, MV39, session_timeout_ms=9000)
    reg.activate(0.0)
    _unfenced(reg, 1, 50, now_ms=3000.0)
    _unfenced(reg, 2, 60, now_ms=1000.0)
    first = reg.fence_stale(20_000.0).records
    assert [r.data["brokerId"] for r in first] == [2]
    reg.replayed(first[0], 70)
    second = reg.fence_stale(20_000.0).records
    assert [r.data["brokerId"] for r in second] == [1]


def test_an_unfenced_registration_from_the_log_times_out_from_activation() -> None:
    """Kafka's controller starts a session for every registration when it activates; one
    that never heartbeats to this controller is fenced a session timeout later."""
    reg = BrokerRegistry(CLUSTER, MV39, session_timeout_ms=9000)
    _registered(reg, 50)
    reg.replayed(MetadataRecord("BROKER_REGISTRATION_CHANGE_RECORD", 0,
                                {"brokerId": 1, "brokerEpoch": 50, "fenced": -1}), 51)
    assert reg.fence_stale(1e9).records == []  # not serving yet: no session has started
    reg.activate(5000.0)
    assert reg.fence_stale(14_000.0).records == []
    assert [r.data["fenced"] for r in reg.fence_stale(14_001.0).records] == [1]


def test_a_fenced_registration_never_times_out() -> None:
    reg = BrokerRegistry(CLUSTER, MV39, session_timeout_ms=9000)
    reg.activate(0.0)
    _registered(reg, 50)  # a new incarnation is fenced until its heartbeat unfences it
    assert reg.fence_stale(1e9).records == [] and reg.next_expiry_ms() is None


def test_a_broker_heard_from_but_behind_is_fenced_in_session_not_live() -> None:
    # what the cutover's refusal names "registered ... but fenced" (migrate.online.broker_gate)
    reg = BrokerRegistry(CLUSTER, MV39)
    _registered(reg, 50)
    assert not reg.fenced_in_session(1, 0.0)  # registered, never heard from
    reg.heartbeat({"brokerId": 1, "brokerEpoch": 50, "currentMetadataOffset": 49,
                   "wantFence": False, "wantShutDown": False}, 1_000.0)
    assert reg.fenced_in_session(1, 1_000.0) and not reg.live(1, 1_000.0)
    assert not reg.fenced_in_session(1, 1_000.0 + reg.session_timeout_ms + 1)  # lapsed
    _beat(reg, 1, 50, 2_000.0, offset=50)  # caught up: unfenced
    assert reg.live(1, 2_000.0) and not reg.fenced_in_session(1, 2_000.0)
    assert not reg.fenced_in_session(2, 2_000.0)  # unknown
