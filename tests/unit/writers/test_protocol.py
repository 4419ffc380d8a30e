"""Kafka's Raft and controller RPCs, checked against bytes real Kafka 3.9.1 controllers sent.

`captured/kafka_controllers.json` was recorded by `python -m tests.support.raft_capture` (two real
3.9.1 controllers behind recording proxies: ApiVersions, Fetch, Vote, BeginQuorumEpoch,
EndQuorumEpoch, ControllerRegistration, both directions). `captured/standin_v0.json` holds what
real controllers sent to and answered zk2kraft's stand-in leader at the versions it advertises
(Vote v0, BeginQuorumEpoch v0 and EndQuorumEpoch v0, which are not flexible).
`captured/broker_rpcs.json` holds a migrating ZooKeeper-mode broker's BrokerRegistration v4 and
BrokerHeartbeat v1 and a real 3.9.1 controller's answers. Nothing here was
produced by our encoder: every frame is Kafka's, and our encoder must reproduce it exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from writers import iter_batches
from writers.codec.protocol import (
    RecordDecodeError,
    UnsupportedApiError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    request_header_version,
    response_header_version,
)

CAPTURED = Path(__file__).parent / "captured"
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Kafka's fixed id of __cluster_metadata


def _frames(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = json.loads((CAPTURED / name).read_text(encoding="utf-8"))
    return doc, doc["frames"]


DOC, FRAMES = _frames("kafka_controllers.json")


def _ids(frames: list[dict[str, Any]]) -> list[str]:
    return [f"{f['direction']}-{f['api_key']}v{f['api_version']}-{i}" for i, f in enumerate(frames)]


def _of(frames: list[dict[str, Any]], direction: str, api_key: int) -> list[bytes]:
    return [bytes.fromhex(f["hex"]) for f in frames
            if f["direction"] == direction and f["api_key"] == api_key]


def test_capture_covers_every_api_a_controller_uses() -> None:
    kinds = {(f["direction"], f["api_key"]) for f in FRAMES}
    for api in (18, 1, 52, 53, 54, 70):
        assert ("request", api) in kinds and ("response", api) in kinds


@pytest.mark.parametrize("frame", FRAMES, ids=_ids(FRAMES))
def test_kafka_frame_decodes_and_reencodes_byte_for_byte(frame: dict[str, Any]) -> None:
    raw = bytes.fromhex(frame["hex"])
    key, version = frame["api_key"], frame["api_version"]
    if frame["direction"] == "request":
        req = decode_request(raw)
        assert (req.api_key, req.api_version) == (key, version)
        again = encode_request(key, version, req.correlation_id, req.client_id, req.body)
    else:
        corr, body = decode_response(key, version, raw)
        again = encode_response(key, version, corr, body)
    assert again[:4] == len(raw).to_bytes(4, "big")
    assert again[4:] == raw


def test_api_versions_request_names_kafkas_client() -> None:
    req = decode_request(_of(FRAMES, "request", 18)[0])
    assert req.api_version == 4
    assert req.client_id in ("raft-client-3001", "raft-client-3002")
    assert req.body == {"clientSoftwareName": "apache-kafka-java",
                        "clientSoftwareVersion": "3.9.1"}


def test_api_versions_response_uses_header_v0_and_lists_raft_apis() -> None:
    raw = _of(FRAMES, "response", 18)[0]
    # header v0: the correlation id, then straight into the body's int16 ErrorCode (no tag byte)
    assert raw[4:6] == b"\x00\x00"
    _, body = decode_response(18, 4, raw)
    ranges = {a["apiKey"]: (a["minVersion"], a["maxVersion"]) for a in body["apiKeys"]}
    # Kafka 3.9.1's controller: Fetch 0-17, Vote/BeginQuorumEpoch/EndQuorumEpoch 0-1,
    # FetchSnapshot 0-1, ControllerRegistration 0
    assert ranges[1] == (0, 17)
    assert ranges[52] == ranges[53] == ranges[54] == (0, 1)
    assert ranges[59] == (0, 1)
    assert ranges[70] == (0, 0)
    features = {f["name"] for f in body["supportedFeatures"]}
    assert features == {"kraft.version", "metadata.version"}


def test_fetch_request_is_for_the_metadata_partition() -> None:
    req = decode_request(_of(FRAMES, "request", 1)[0])
    assert req.api_version == 17
    assert req.body["replicaState"]["replicaId"] in (3001, 3002)
    assert req.body["maxWaitMs"] == 500
    topic = req.body["topics"][0]
    assert topic["topicId"] == METADATA_TOPIC_ID
    part = topic["partitions"][0]
    assert part["partition"] == 0 and part["partitionMaxBytes"] == 0


def test_fetch_response_carries_current_leader_and_record_batches() -> None:
    answers = [decode_response(1, 17, raw)[1] for raw in _of(FRAMES, "response", 1)]
    served = [b for b in answers if b["responses"][0]["partitions"][0]["errorCode"] == 0]
    assert served, "the capture holds no successful Fetch response"
    body = served[0]
    part = body["responses"][0]["partitions"][0]
    assert body["responses"][0]["topicId"] == METADATA_TOPIC_ID
    leader = part["currentLeader"]
    assert leader["leaderId"] in (3001, 3002) and leader["leaderEpoch"] == 1
    # the records field holds Kafka's own batches: our batch decoder reads them, stamped with
    # the leader's epoch
    batches = [b for _, b in iter_batches(part["records"])]
    assert batches and all(b.leader_epoch == 1 for b in batches)
    assert part["highWatermark"] >= 1


def test_vote_request_names_cluster_and_candidate() -> None:
    req = decode_request(_of(FRAMES, "request", 52)[0])
    assert req.body["clusterId"] == DOC["cluster_id"]
    part = req.body["topics"][0]["partitions"][0]
    assert req.body["topics"][0]["topicName"] == "__cluster_metadata"
    assert part["candidateId"] in (3001, 3002) and part["candidateEpoch"] == 1


def test_end_quorum_epoch_v1_names_the_other_voter() -> None:
    req = decode_request(_of(FRAMES, "request", 54)[0])
    part = req.body["topics"][0]["partitions"][0]
    assert {part["leaderId"], part["preferredCandidates"][0]["candidateId"]} == {3001, 3002}


def test_controller_registration_request() -> None:
    req = decode_request(_of(FRAMES, "request", 70)[0])
    assert req.body["controllerId"] in (3001, 3002)
    assert req.body["listeners"][0]["name"] == "CONTROLLER"
    assert req.body["zkMigrationReady"] is False


def test_header_versions_follow_flexibility() -> None:
    assert request_header_version(1, 17) == 2
    assert request_header_version(53, 0) == 1 and request_header_version(53, 1) == 2
    assert request_header_version(18, 2) == 1 and request_header_version(18, 3) == 2
    assert response_header_version(18, 4) == 0  # ApiVersions: always v0
    assert response_header_version(1, 17) == 1
    assert response_header_version(54, 0) == 0 and response_header_version(54, 1) == 1


def test_end_quorum_epoch_v0_bytes_by_hand() -> None:
    """EndQuorumEpoch v0 is not flexible: int16 string lengths, int32 array lengths, no tags."""
    body = {"clusterId": "c", "topics": [{"topicName": "t", "partitions": [
        {"partitionIndex": 0, "leaderId": 3000, "leaderEpoch": 1,
         "preferredSuccessors": [3001, 3002]}]}]}
    frame = encode_request(54, 0, 7, "z", body)
    expected = bytes.fromhex(
        "0036 0000 00000007 0001 7a"  # header v1: key 54, v0, corr 7, client "z" (int16 length)
        "0001 63"  # ClusterId "c"
        "00000001 0001 74"  # Topics: 1 entry, TopicName "t"
        "00000001 00000000 00000bb8 00000001"  # Partitions: 1, index 0, leader 3000, epoch 1
        "00000002 00000bb9 00000bba"  # PreferredSuccessors [3001, 3002]
    )
    assert frame[4:] == expected
    assert decode_request(expected).body == body


def test_null_cluster_id_in_a_non_flexible_version_is_int16_minus_one() -> None:
    body = {"clusterId": None, "topics": []}
    raw = encode_request(53, 0, 1, None, body)[4:]
    assert raw == bytes.fromhex("0035 0000 00000001 ffff" "ffff" "00000000")
    assert decode_request(raw).body == body


def test_unknown_api_names_its_correlation_id() -> None:
    raw = bytes.fromhex("0063 0000 0000002a ffff")
    with pytest.raises(UnsupportedApiError) as err:
        decode_request(raw)
    assert err.value.correlation_id == 42 and err.value.api_key == 99


def test_truncated_request_names_the_field() -> None:
    raw = _of(FRAMES, "request", 52)[0]
    with pytest.raises(RecordDecodeError, match="VoteRequest"):
        decode_request(raw[:-6])


def test_bytes_left_over_are_an_error() -> None:
    raw = _of(FRAMES, "request", 70)[0]
    with pytest.raises(RecordDecodeError, match="left after the body"):
        decode_request(raw + b"\x00")


SDOC, SFRAMES = _frames("standin_v0.json")


@pytest.mark.parametrize("frame", SFRAMES, ids=_ids(SFRAMES))
def test_kafka_frame_to_or_from_the_standin_reencodes_byte_for_byte(
    frame: dict[str, Any]
) -> None:
    test_kafka_frame_decodes_and_reencodes_byte_for_byte(frame)


def test_standin_capture_holds_kafkas_non_flexible_raft_frames() -> None:
    kinds = {(f["direction"], f["api_key"], f["api_version"]) for f in SFRAMES}
    assert {("response", 52, 0), ("response", 53, 0), ("response", 54, 0),
            ("request", 53, 0), ("request", 1, 17), ("request", 70, 0)} <= kinds


def test_vote_v0_answer_grants_the_standin_epoch_1() -> None:
    _, body = decode_response(52, 0, _of(SFRAMES, "response", 52)[0])
    part = body["topics"][0]["partitions"][0]
    assert part["voteGranted"] is True and part["leaderEpoch"] == 1 and part["leaderId"] == -1


def test_begin_and_end_quorum_epoch_v0_answers_accept_leader_3000() -> None:
    for api in (53, 54):
        raw = _of(SFRAMES, "response", api)[0]
        # header v0 for a non-flexible version: the body's int16 ErrorCode follows right away
        assert raw[4:6] == b"\x00\x00"
        _, body = decode_response(api, 0, raw)
        part = body["topics"][0]["partitions"][0]
        assert (part["errorCode"], part["leaderId"], part["leaderEpoch"]) == (0, 3000, 1)


def test_new_leader_announces_itself_to_the_standin_with_begin_quorum_epoch_v0() -> None:
    req = decode_request(_of(SFRAMES, "request", 53)[0])
    assert req.api_version == 0 and req.body["clusterId"] == SDOC["cluster_id"]
    part = req.body["topics"][0]["partitions"][0]
    assert part["leaderId"] in (3001, 3002) and part["leaderEpoch"] == 2


def test_followers_fetch_from_the_standin_at_its_epoch() -> None:
    reqs = [decode_request(raw) for raw in _of(SFRAMES, "request", 1)]
    parts = [r.body["topics"][0]["partitions"][0] for r in reqs]
    # a controller that knows no leader yet fetches at epoch 0 to discover one; after the
    # stand-in's FENCED_LEADER_EPOCH answer (with CurrentLeader) it fetches at epoch 1, and
    # after the LeaderChange record at offset 0 it is at offset 1 of epoch 1
    assert parts[0]["currentLeaderEpoch"] == 0
    assert [p["currentLeaderEpoch"] for p in parts[1:]] == [1] * (len(parts) - 1)
    assert (parts[-1]["fetchOffset"], parts[-1]["lastFetchedEpoch"]) == (1, 1)
    assert all(r.body["maxWaitMs"] == 500 and r.body["maxBytes"] == 8388608 for r in reqs)


# A ZooKeeper-mode 3.9.1 broker in migration mode registering with a real 3.9.1 controller in
# migration mode (`python -m tests.support.raft_capture OUT.json --brokers`): both directions
# are Kafka's own bytes.
BDOC, BFRAMES = _frames("broker_rpcs.json")


@pytest.mark.parametrize("frame", BFRAMES, ids=_ids(BFRAMES))
def test_broker_frame_reencodes_byte_for_byte(frame: dict[str, Any]) -> None:
    test_kafka_frame_decodes_and_reencodes_byte_for_byte(frame)


def test_broker_capture_holds_registration_v4_and_heartbeat_v1() -> None:
    kinds = {(f["direction"], f["api_key"], f["api_version"]) for f in BFRAMES}
    assert {("request", 62, 4), ("response", 62, 4), ("request", 63, 1),
            ("response", 63, 1)} <= kinds


def test_migrating_broker_registers_with_its_ibp_as_metadata_version() -> None:
    req = decode_request(_of(BFRAMES, "request", 62)[0]).body
    assert req["isMigratingZkBroker"] is True and req["clusterId"] == BDOC["cluster_id"]
    features = {f["name"]: (f["minSupportedVersion"], f["maxSupportedVersion"])
                for f in req["features"]}
    assert features["metadata.version"] == (21, 21)  # inter.broker.protocol.version 3.9
    assert len(req["logDirs"]) == 1 and req["previousBrokerEpoch"] == -1


def test_the_standin_decides_as_kafkas_controller_did() -> None:
    """Kafka's controller answered this broker's registration with epoch = the offset of its
    RegisterBrokerRecord, and its heartbeats with isCaughtUp once currentMetadataOffset reached
    that offset, fenced while the broker wanted fencing: the stand-in's registry, given the
    same requests, gives the same answers."""
    from writers import parse_metadata_version
    from writers.raft.brokers import BrokerRegistry

    reg = BrokerRegistry(BDOC["cluster_id"], parse_metadata_version("3.9-IV0"))
    raw = _of(BFRAMES, "request", 62)[0]
    kafka_answer = decode_response(62, 4, _of(BFRAMES, "response", 62)[0])[1]
    out = reg.register(decode_request(raw).body, 0.0)
    assert out.answer["errorCode"] == kafka_answer["errorCode"] == 0 and out.epoch_is_offset
    epoch = kafka_answer["brokerEpoch"]
    record = out.records[0]
    reg.replayed(type(record)(record.type, record.version, {**record.data, "brokerEpoch": epoch}),
                 epoch)
    heartbeats = zip(_of(BFRAMES, "request", 63), _of(BFRAMES, "response", 63), strict=True)
    for req_raw, resp_raw in heartbeats:
        ours = reg.heartbeat(decode_request(req_raw).body, 0.0).answer
        assert ours == decode_response(63, 1, resp_raw)[1]
