"""BrokerRegistration (62) and BrokerHeartbeat (63) served by the stand-in over a real socket
(no Kafka needed: a one-voter quorum commits on the stand-in's own fsync). Real 3.9.1 brokers
registering through it: tests/oracle/test_standin_rehearsal.py.

Expected values are Kafka's: the broker epoch is the offset of the RegisterBrokerRecord,
`isCaughtUp` needs the broker's metadata offset at that offset, unfencing writes
BrokerRegistrationChangeRecord(fenced=-1); NOT_CONTROLLER (41) from a node that does not lead;
REQUEST_TIMED_OUT (7) before the stand-in takes brokers (the broker retries)."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import free_port
from writers import (
    MetadataRecord,
    StandInLeader,
    decode_response,
    encode_request,
    parse_metadata_version,
)

CLUSTER = "YnJva2VyLXJwY3MtdGVzdA"
MV = parse_metadata_version("3.9-IV0")


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[StandInLeader]:
    port = free_port()
    leader = StandInLeader(3000, listen=("127.0.0.1", port),
                           voters={3000: ("127.0.0.1", port)},
                           log_dir=tmp_path / "meta3000", cluster_id=CLUSTER)
    yield leader
    leader.close()


def _call(sock: socket.socket, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    sock.sendall(encode_request(key, version, 9, "zk-broker-1-", body))
    size = struct.unpack(">i", sock.recv(4))[0]
    data = b""
    while len(data) < size:
        data += sock.recv(size - len(data))
    return decode_response(key, version, data)[1]


def _registration(broker_id: int = 1) -> dict[str, Any]:
    return {"brokerId": broker_id, "clusterId": CLUSTER,
            "incarnationId": f"{broker_id}C9rNwqDS8-Oo6l1Y0w8Nw",
            "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9092 + broker_id,
                           "securityProtocol": 0}],
            "features": [{"name": "metadata.version", "minSupportedVersion": 21,
                          "maxSupportedVersion": 21}],
            "rack": None, "isMigratingZkBroker": True,
            "logDirs": [f"Xk3pQ8sURvK3W2l0oq7y{'ABCDEF'[broker_id]}w"], "previousBrokerEpoch": -1}


def _heartbeat(epoch: int, offset: int) -> dict[str, Any]:
    return {"brokerId": 1, "brokerEpoch": epoch, "currentMetadataOffset": offset,
            "wantFence": False, "wantShutDown": False, "offlineLogDirs": []}


def _records(standin: StandInLeader) -> list[tuple[int, str, dict[str, Any]]]:
    out = []
    for batch in standin.read_log():
        for i, rec in enumerate(batch.records):
            if isinstance(rec, MetadataRecord):
                out.append((batch.base_offset + i, rec.type, dict(rec.data)))
    return out


def test_advertises_the_versions_3_9_brokers_send(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        keys = {a["apiKey"]: (a["minVersion"], a["maxVersion"])
                for a in _call(sock, 18, 3, {})["apiKeys"]}
    assert keys[62] == (0, 4) and keys[63] == (0, 1)


def test_not_leading_answers_not_controller(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        assert _call(sock, 62, 4, _registration())["errorCode"] == 41
        assert _call(sock, 63, 1, _heartbeat(5, 5))["errorCode"] == 41


def test_register_heartbeat_unfence(standin: StandInLeader) -> None:
    standin.elect(10)
    standin.append_records([MetadataRecord("FEATURE_LEVEL_RECORD", 0, {
        "name": "metadata.version", "featureLevel": MV.feature_level})], timestamp_ms=0)
    with socket.create_connection(standin.listen, timeout=5) as sock:
        assert _call(sock, 62, 4, _registration())["errorCode"] == 7  # not serving yet
        standin.serve_brokers(MV)
        end = standin.next_offset
        reg = _call(sock, 62, 4, _registration())
        assert reg == {"throttleTimeMs": 0, "errorCode": 0, "brokerEpoch": end}
        again = _call(sock, 62, 4, _registration())  # same incarnation: same epoch
        assert again["brokerEpoch"] == end
        behind = _call(sock, 63, 1, _heartbeat(end, end - 1))
        assert (behind["errorCode"], behind["isCaughtUp"], behind["isFenced"]) == (0, False, True)
        stale = _call(sock, 63, 1, _heartbeat(end - 1, end + 5))
        assert stale["errorCode"] == 77
        ready = _call(sock, 63, 1, _heartbeat(end, end + 1))
        assert (ready["errorCode"], ready["isCaughtUp"], ready["isFenced"]) == (0, True, False)
    assert standin.broker_registrations() == {1: (end, True)}  # live: unfenced, heard from
    recs = _records(standin)
    registers = [r for r in recs if r[1] == "REGISTER_BROKER_RECORD"]
    assert registers[0][0] == end and registers[0][2]["brokerEpoch"] == end
    assert registers[0][2]["isMigratingZkBroker"] is True and registers[0][2]["fenced"] is True
    assert recs[-1][1:] == ("BROKER_REGISTRATION_CHANGE_RECORD",
                            {"brokerId": 1, "brokerEpoch": end, "fenced": -1})
    own = standin.take_own_records()
    assert [r.type for r in own] == ["REGISTER_BROKER_RECORD", "REGISTER_BROKER_RECORD",
                                     "BROKER_REGISTRATION_CHANGE_RECORD"]
    assert standin.take_own_records() == []


def test_writer_append_moves_behind_a_brokers_record(standin: StandInLeader,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The single writer encodes at the log's end on its own thread; a registration appended
    by the stand-in meanwhile moves the writer's batches behind it (offsets re-stamped)."""
    standin.elect(10)
    standin.serve_brokers(MV)
    encode = standin.encode

    def encode_then_register(records: Any, timestamp_ms: int) -> Any:
        batches = encode(records, timestamp_ms)
        if records and records[0].type == "TOPIC_RECORD":
            with socket.create_connection(standin.listen, timeout=5) as sock:
                assert _call(sock, 62, 4, _registration())["errorCode"] == 0
        return batches

    monkeypatch.setattr(standin, "encode", encode_then_register)
    start = standin.next_offset
    done = standin.append_records([MetadataRecord("TOPIC_RECORD", 0, {
        "name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAEA"})], timestamp_ms=0)
    assert (done.base_offset, done.last_offset) == (start + 1, start + 1)
    kinds = [(o, t) for o, t, _ in _records(standin)]
    assert kinds[-2:] == [(start, "REGISTER_BROKER_RECORD"), (start + 1, "TOPIC_RECORD")]
