"""The stand-in's Raft rules (`writers.raft.leader.RaftLeader`), table-driven, without sockets.

Each table row is one request to a stand-in in a known state; the expected error codes, epochs
and offsets are written out by hand from Kafka 3.9's `KafkaRaftClient`/`LeaderState` rules (or,
where the stand-in deliberately differs, from docs/design/standin.md, "The stand-in's Raft rules").
Time is a number passed in (the fake clock); nothing reads a real clock.

The fixture log: epoch 1 holds offsets 0-4; the stand-in (node 1 of voters 1, 2, 3) then won
epoch 3, so its epoch starts at offset 5, and it appended offsets 5-9 (log end 10).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from writers import EncodedBatch, VoterUnavailableError, decode_response
from writers.raft.inbound import Inbound
from writers.raft.leader import TRANSITIONS, RaftLeader, RoleTransitionError
from writers.raft.log import LogIndex
from writers.raft.wire import Conn, quorum_leader_and_observers, sasl_step

CLUSTER = "0Mfr4A1VTA6BU-lAcnX1Mg"
OTHER_CLUSTER = "AAAAAAAAAAAAAAAAAAAAAA"
TOPIC_ID = bytes.fromhex("00000000000000000000000000000001")  # METADATA_TOPIC_ID, KIP-595

# Kafka's `Errors` codes, written out here (not imported from the table under test)
NONE = 0
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
UNSUPPORTED_SASL_MECHANISM = 33
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
SASL_AUTHENTICATION_FAILED = 58
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
INCONSISTENT_CLUSTER_ID = 104


def _batch(epoch: int, base: int, last: int) -> EncodedBatch:
    return EncodedBatch(base, last, epoch, b"\0" * 70)


def _leader(state: str = "leading", voters: tuple[int, ...] = (1, 2, 3)) -> RaftLeader:
    """The stand-in as node 1, leading epoch 3 (log end 10), or after `state`:
    `resigned` (EndQuorumEpoch sent, no one newer known), `voted` (then voted for 2 at
    epoch 4), `followed` (then 2 announced itself leader of epoch 4)."""
    index = LogIndex()
    index.add(_batch(1, 0, 4))
    raft = RaftLeader(1, voters, CLUSTER, index, fetch_timeout_ms=2000.0)
    raft.stand_for(3)
    raft.become_leader()
    index.add(_batch(3, 5, 9))
    if state != "leading":
        raft.resign()
    if state in ("voted", "followed"):
        assert raft.on_vote(_vote(2, 4, 3, 10)).granted
    if state == "followed":
        assert raft.on_begin_epoch(_begin(2, 4)).persist
    return raft


def _vote(candidate: int, epoch: int, last_epoch: int, last_offset: int,
          cluster: str | None = CLUSTER) -> dict[str, Any]:
    return {"clusterId": cluster, "topics": [{"topicName": "__cluster_metadata", "partitions": [{
        "partitionIndex": 0, "candidateEpoch": epoch, "candidateId": candidate,
        "lastOffsetEpoch": last_epoch, "lastOffset": last_offset}]}]}


def _begin(leader: int, epoch: int, cluster: str | None = CLUSTER) -> dict[str, Any]:
    return {"clusterId": cluster, "topics": [{"topicName": "__cluster_metadata", "partitions": [{
        "partitionIndex": 0, "leaderId": leader, "leaderEpoch": epoch}]}]}


def _end(epoch: int, cluster: str | None = CLUSTER) -> dict[str, Any]:
    return {"clusterId": cluster, "topics": [{"topicName": "__cluster_metadata", "partitions": [{
        "partitionIndex": 0, "leaderId": 2, "leaderEpoch": epoch,
        "preferredSuccessors": [1]}]}]}


def _part(offset: int, last_epoch: int, current: int) -> dict[str, Any]:
    return {"partition": 0, "currentLeaderEpoch": current, "fetchOffset": offset,
            "lastFetchedEpoch": last_epoch, "logStartOffset": -1, "partitionMaxBytes": 0}


def _fetch(replica: int, offset: int, last_epoch: int, current: int, *, max_wait: int = 500,
           cluster: str | None = CLUSTER) -> dict[str, Any]:
    return {"clusterId": cluster, "replicaState": {"replicaId": replica, "replicaEpoch": -1},
            "maxWaitMs": max_wait, "minBytes": 0, "maxBytes": 8388608, "isolationLevel": 0,
            "sessionId": 0, "sessionEpoch": -1, "topics": [{
                "topicId": TOPIC_ID, "partitions": [_part(offset, last_epoch, current)]}],
            "forgottenTopicsData": [], "rackId": ""}


def _partition(answer: dict[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = answer["topics"][0]["partitions"][0]
    return part


def _fetched(answer: dict[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = answer["responses"][0]["partitions"][0]
    return part


# -- the cluster id, checked first on every Raft RPC ---------------------------------------------

@pytest.mark.parametrize("rpc", ["vote", "begin", "end", "fetch"])
def test_another_cluster_id_is_inconsistent_before_anything_else(rpc: str) -> None:
    raft = _leader()
    if rpc == "vote":  # a request that would otherwise be INVALID_REQUEST
        answer = raft.vote_answer(raft.on_vote(_vote(-1, 4, 3, 10, OTHER_CLUSTER)))
        assert answer == {"errorCode": INCONSISTENT_CLUSTER_ID, "topics": []}
    elif rpc == "begin":  # one that would otherwise unseat the stand-in
        decision = raft.on_begin_epoch(_begin(2, 9, OTHER_CLUSTER))
        assert not decision.persist
        assert raft.begin_epoch_answer(decision) == {
            "errorCode": INCONSISTENT_CLUSTER_ID, "topics": []}
    elif rpc == "end":
        assert raft.on_end_epoch(_end(3, OTHER_CLUSTER)) == {
            "errorCode": INCONSISTENT_CLUSTER_ID, "topics": []}
    else:  # a negative offset would otherwise be INVALID_REQUEST
        assert raft.fetch_invalid(_fetch(2, -1, 3, 3, cluster=OTHER_CLUSTER)) == {
            "errorCode": INCONSISTENT_CLUSTER_ID, "responses": []}
    assert (raft.epoch, raft.is_leader(), raft.voted_for) == (3, True, 1)


@pytest.mark.parametrize("cluster", [CLUSTER, None])
def test_the_same_or_no_cluster_id_is_taken(cluster: str | None) -> None:
    raft = _leader("resigned")
    assert raft.on_vote(_vote(2, 4, 3, 10, cluster)).granted
    assert raft.fetch_invalid(_fetch(2, 10, 3, 3, cluster=cluster)) is None


# -- Vote ----------------------------------------------------------------------------------------

VOTES = [
    # (state, candidate, epoch, last epoch, last offset) -> (error, granted, persist, epoch after)
    pytest.param("leading", 2, 4, 3, 10, NONE, False, False, 3,
                 id="higher epoch while leading: refused, still leads (deliberate)"),
    pytest.param("leading", 2, 3, 3, 10, NONE, False, False, 3, id="own epoch while leading"),
    pytest.param("resigned", 2, 2, 3, 10, NONE, False, False, 3,
                 id="stale epoch: refused with NONE (deliberate; Kafka: FENCED_LEADER_EPOCH)"),
    pytest.param("resigned", 2, 4, 3, 10, NONE, True, True, 4, id="higher epoch, same log"),
    pytest.param("resigned", 2, 4, 3, 11, NONE, True, True, 4, id="higher epoch, longer log"),
    pytest.param("resigned", 2, 4, 3, 9, NONE, False, False, 3, id="shorter log"),
    pytest.param("resigned", 2, 4, 2, 100, NONE, False, False, 3,
                 id="older last epoch, more offsets"),
    pytest.param("resigned", -1, 4, 3, 10, INVALID_REQUEST, False, False, 3,
                 id="negative candidate id"),
    pytest.param("resigned", 7, 4, 3, 10, NONE, False, False, 3, id="candidate not a voter"),
    pytest.param("voted", 2, 4, 3, 10, NONE, True, False, 4, id="same candidate asks again"),
    pytest.param("voted", 3, 4, 3, 10, NONE, False, False, 4, id="second candidate, same epoch"),
    pytest.param("voted", 3, 5, 3, 10, NONE, True, True, 5, id="next epoch after voting"),
    pytest.param("followed", 3, 4, 3, 10, NONE, False, False, 4,
                 id="the epoch has a known leader"),
]


@pytest.mark.parametrize(("state", "candidate", "epoch", "last_epoch", "last_offset", "error",
                          "granted", "persist", "epoch_after"), VOTES)
def test_vote(state: str, candidate: int, epoch: int, last_epoch: int, last_offset: int,
              error: int, granted: bool, persist: bool, epoch_after: int) -> None:
    raft = _leader(state)
    decision = raft.on_vote(_vote(candidate, epoch, last_epoch, last_offset))
    answer = _partition(raft.vote_answer(decision))
    assert (answer["errorCode"], answer["voteGranted"]) == (error, granted)
    assert (decision.granted, decision.persist) == (granted, persist)
    assert raft.epoch == answer["leaderEpoch"] == epoch_after
    if persist:  # a grant at a new epoch: voted for the candidate, no leader known yet
        assert (raft.voted_for, answer["leaderId"]) == (candidate, -1)
    if state == "leading":
        assert raft.is_leader() and answer["leaderId"] == 1


def test_a_repeated_grant_waits_for_the_first_write() -> None:
    decision = _leader("voted").on_vote(_vote(2, 4, 3, 10))
    assert decision.wait_for_persist and not decision.persist


# -- BeginQuorumEpoch and EndQuorumEpoch ---------------------------------------------------------

BEGINS = [
    # (state, leader, epoch) -> (error, leader named, persist, epoch after, leading after)
    pytest.param("leading", 2, 4, NONE, 2, True, 4, False, id="higher epoch: steps down"),
    pytest.param("leading", 1, 3, NONE, 1, False, 3, True, id="its own epoch echoed"),
    pytest.param("leading", 2, 2, FENCED_LEADER_EPOCH, 1, False, 3, True, id="stale epoch"),
    pytest.param("leading", -1, 4, INVALID_REQUEST, 1, False, 3, True, id="negative leader id"),
    pytest.param("resigned", 2, 3, NONE, 2, True, 3, False,
                 id="resigned: another leader of the same epoch"),
    pytest.param("voted", 2, 4, NONE, 2, True, 4, False, id="the candidate it voted for won"),
    pytest.param("followed", 2, 4, NONE, 2, True, 4, False,
                 id="the known leader again: quorum-state written again"),
]


@pytest.mark.parametrize(("state", "leader", "epoch", "error", "named", "persist",
                          "epoch_after", "leading_after"), BEGINS)
def test_begin_quorum_epoch(state: str, leader: int, epoch: int, error: int, named: int,
                            persist: bool, epoch_after: int, leading_after: bool) -> None:
    raft = _leader(state)
    decision = raft.on_begin_epoch(_begin(leader, epoch))
    answer = _partition(raft.begin_epoch_answer(decision))
    assert (answer["errorCode"], answer["leaderId"], decision.persist) == (error, named, persist)
    assert (raft.epoch, raft.is_leader()) == (epoch_after, leading_after)
    if persist:
        assert raft.new_leader == leader


@pytest.mark.parametrize(("state", "epoch"), [("leading", 3), ("leading", 2), ("resigned", 3)])
def test_end_quorum_epoch_is_acknowledged(state: str, epoch: int) -> None:
    """Deliberate: acknowledged even when stale (Kafka: FENCED_LEADER_EPOCH); the stand-in
    stands for no election, so the request changes nothing."""
    raft = _leader(state)
    answer = _partition(raft.on_end_epoch(_end(epoch)))
    assert (answer["errorCode"], answer["leaderId"], answer["leaderEpoch"]) == (NONE, 1, 3)
    assert raft.is_leader() == (state == "leading")


# -- Fetch ---------------------------------------------------------------------------------------

INVALID_FETCHES = [
    # (offset, last fetched epoch, current leader epoch, max wait)
    pytest.param(-1, 3, 3, 500, id="negative fetch offset"),
    pytest.param(10, -1, 3, 500, id="negative last fetched epoch"),
    pytest.param(10, 4, 3, 500, id="last fetched epoch above the current leader epoch"),
    pytest.param(10, 3, 3, -1, id="negative max wait"),
]


@pytest.mark.parametrize(("offset", "last_epoch", "current", "max_wait"), INVALID_FETCHES)
def test_an_invalid_fetch_is_invalid_request(offset: int, last_epoch: int, current: int,
                                             max_wait: int) -> None:
    raft = _leader()
    answer = raft.fetch_invalid(_fetch(2, offset, last_epoch, current, max_wait=max_wait))
    assert answer is not None
    assert (_fetched(answer)["errorCode"], _fetched(answer)["highWatermark"]) == (
        INVALID_REQUEST, -1)
    assert raft.replicas[2].end_offset == -1


FETCHES = [
    # (state, replica, offset, last epoch, current epoch) -> (error or None = served,
    #   diverging (epoch, end offset) or None, leader named, epoch named)
    pytest.param("leading", 2, 10, 3, 3, None, None, 1, 3, id="at the end"),
    pytest.param("leading", 2, 5, 1, 3, None, None, 1, 3, id="at the end of epoch 1"),
    pytest.param("leading", 2, 0, 0, 3, None, None, 1, 3, id="empty log"),
    pytest.param("leading", 100, 10, 3, 3, None, None, 1, 3, id="an observer (a broker)"),
    pytest.param("leading", 2, 5, 1, 2, FENCED_LEADER_EPOCH, None, 1, 3, id="stale epoch"),
    pytest.param("leading", 2, 10, 3, 4, UNKNOWN_LEADER_EPOCH, None, 1, 3, id="future epoch"),
    pytest.param("leading", 2, 12, 3, 3, NONE, (3, 10), 1, 3, id="offset beyond the end"),
    pytest.param("leading", 2, 6, 1, 3, NONE, (1, 5), 1, 3, id="beyond its epoch's end"),
    pytest.param("leading", 2, 7, 2, 3, NONE, (1, 5), 1, 3,
                 id="an epoch this log does not have"),
    pytest.param("resigned", 2, 10, 3, 3, NOT_LEADER_OR_FOLLOWER, None, 1, 3,
                 id="resigned, follower at the end"),
    pytest.param("resigned", 2, 7, 3, 3, None, None, 1, 3,
                 id="resigned, follower behind is still served"),
    pytest.param("resigned", 2, 5, 1, 2, FENCED_LEADER_EPOCH, None, 1, 3,
                 id="resigned, stale epoch"),
    pytest.param("voted", 2, 7, 3, 3, FENCED_LEADER_EPOCH, None, -1, 4,
                 id="voted at a later epoch: no longer serves the one behind"),
    pytest.param("followed", 2, 10, 3, 3, FENCED_LEADER_EPOCH, None, 2, 4,
                 id="new leader known, old epoch: names it"),
    pytest.param("followed", 100, 10, 3, 4, NOT_LEADER_OR_FOLLOWER, None, 2, 4,
                 id="new leader known, its epoch: names it"),
]


@pytest.mark.parametrize(("state", "replica", "offset", "last_epoch", "current", "error",
                          "diverging", "leader", "epoch"), FETCHES)
def test_fetch(state: str, replica: int, offset: int, last_epoch: int, current: int,
               error: int | None, diverging: tuple[int, int] | None, leader: int,
               epoch: int) -> None:
    raft = _leader(state)
    assert raft.fetch_invalid(_fetch(replica, offset, last_epoch, current)) is None
    step = raft.fetch_step(replica, _part(offset, last_epoch, current), 1000.0,
                           can_wait=False, handover_pending=False)
    if error is None:
        assert step.answer is None  # served: the server reads from `offset`
        if replica in raft.replicas:
            assert (raft.replicas[replica].end_offset, raft.replicas[replica].last_fetch_ms) == (
                offset, 1000.0)
        return
    assert step.answer is not None
    part = _fetched(step.answer)
    assert part["errorCode"] == error
    assert part["currentLeader"] == {"leaderId": leader, "leaderEpoch": epoch}
    if diverging is not None:
        assert part["divergingEpoch"] == {"epoch": diverging[0], "endOffset": diverging[1]}
    else:
        assert "divergingEpoch" not in part and part["highWatermark"] == -1
    if replica in raft.replicas:
        assert raft.replicas[replica].end_offset == -1  # nothing counted from a refused fetch


@pytest.mark.parametrize(("can_wait", "handover_pending", "wait", "error", "counted"), [
    (True, True, True, None, False),
    (False, True, False, NOT_LEADER_OR_FOLLOWER, True),
    (False, False, False, NOT_LEADER_OR_FOLLOWER, False),
])
def test_an_observer_waits_for_the_new_leader_after_resigning(
        can_wait: bool, handover_pending: bool, wait: bool, error: int | None,
        counted: bool) -> None:
    step = _leader("resigned").fetch_step(100, _part(10, 3, 3), 0.0, can_wait=can_wait,
                                          handover_pending=handover_pending)
    assert (step.wait_for_leader, step.during_handover) == (wait, counted)
    assert (None if step.answer is None else _fetched(step.answer)["errorCode"]) == error


# -- the high watermark --------------------------------------------------------------------------

HIGH_WATERMARKS = [
    # (voters, followers' fetched ends) -> high watermark; the stand-in's own end is 10 and its
    # epoch starts at 5: the watermark is the end a majority reached, once past 5
    pytest.param((1, 2, 3), {}, 0, id="no follower fetched"),
    pytest.param((1, 2, 3), {2: 5}, 0, id="majority at the epoch start only"),
    pytest.param((1, 2, 3), {2: 6}, 6, id="one follower past the epoch start"),
    pytest.param((1, 2, 3), {2: 8, 3: 10}, 10, id="both followers, one at the end"),
    pytest.param((1, 2, 3, 4, 5), {2: 9, 3: 7, 4: 6}, 7, id="five voters: third end"),
    pytest.param((1, 2, 3, 4, 5), {2: 9}, 0, id="five voters: two of five is no majority"),
]


@pytest.mark.parametrize(("voters", "ends", "hw"), HIGH_WATERMARKS)
def test_high_watermark_advances_by_majority(voters: tuple[int, ...], ends: dict[int, int],
                                             hw: int) -> None:
    raft = _leader(voters=voters)
    for node, end in ends.items():
        raft.fetch_step(node, _part(end, 3 if end > 5 else 1, 3), 0.0, can_wait=False,
                        handover_pending=False)
    assert raft.hw == hw
    assert raft.known_hw() == (hw if hw > 5 else -1)


def test_high_watermark_never_goes_back_and_moves_once() -> None:
    raft = _leader()
    moved = raft.fetch_step(2, _part(8, 3, 3), 0.0, can_wait=False, handover_pending=False)
    assert moved.hw_moved and raft.hw == 8
    again = raft.fetch_step(2, _part(8, 3, 3), 1.0, can_wait=False, handover_pending=False)
    assert not again.hw_moved and raft.hw == 8
    raft.replicas[2].end_offset = 6  # even if a follower's end were lower later
    assert not raft.advance_hw() and raft.hw == 8


# -- check-quorum --------------------------------------------------------------------------------

CHECK_QUORUM = [
    # (voters, state, followers' last fetch ms, now ms) -> majority heard within 1.5 x 2000 ms
    pytest.param((1, 2, 3), "leading", {}, 0.0, False, id="no follower fetched"),
    pytest.param((1, 2, 3), "leading", {2: 0.0}, 3000.0, True, id="one follower at 1.5x"),
    pytest.param((1, 2, 3), "leading", {2: 0.0}, 3000.5, False, id="one follower past 1.5x"),
    pytest.param((1, 2, 3), "resigned", {2: 0.0, 3: 0.0}, 0.0, False, id="resigned"),
    pytest.param((1, 2, 3, 4, 5), "leading", {2: 0.0, 3: 10.0}, 3005.0, False,
                 id="five voters, one of two followers stale"),
    pytest.param((1, 2, 3, 4, 5), "leading", {2: 10.0, 3: 10.0}, 3005.0, True,
                 id="five voters, two followers fresh"),
]


@pytest.mark.parametrize(("voters", "state", "fetched_at", "now", "writable"), CHECK_QUORUM)
def test_check_quorum(voters: tuple[int, ...], state: str, fetched_at: dict[int, float],
                      now: float, writable: bool) -> None:
    raft = _leader(voters=voters)
    for node, at in fetched_at.items():
        raft.fetch_step(node, _part(10, 3, 3), at, can_wait=False, handover_pending=False)
    if state == "resigned":
        raft.resign()
    assert raft.check_quorum(now) is writable


# -- ControllerRegistration, broker RPCs before and after leading, SASL --------------------------

@pytest.mark.parametrize(("state", "error"), [("leading", REQUEST_TIMED_OUT),
                                              ("resigned", NOT_CONTROLLER)])
def test_controller_registration(state: str, error: int) -> None:
    assert _leader(state).on_controller_registration()["errorCode"] == error


@pytest.mark.parametrize(("state", "serving", "error"), [
    ("leading", False, REQUEST_TIMED_OUT), ("leading", True, None),
    ("resigned", True, NOT_CONTROLLER), ("followed", False, NOT_CONTROLLER)])
def test_broker_rpcs_before_serving_and_after_resigning(state: str, serving: bool,
                                                        error: int | None) -> None:
    answer = _leader(state).refuse_broker_rpc({"brokerEpoch": -1}, serving=serving)
    assert answer == (None if error is None else {"brokerEpoch": -1, "errorCode": error})


@pytest.mark.parametrize(("api_key", "body", "error", "authenticated", "closing"), [
    (17, {"mechanism": "PLAIN"}, NONE, False, False),
    (17, {"mechanism": "SCRAM-SHA-256"}, UNSUPPORTED_SASL_MECHANISM, False, False),
    (36, {"authBytes": b"\0admin\0secret"}, NONE, True, False),
    (36, {"authBytes": b"\0admin\0wrong"}, SASL_AUTHENTICATION_FAILED, False, True),
])
def test_sasl_plain(api_key: int, body: dict[str, Any], error: int, authenticated: bool,
                    closing: bool) -> None:
    conn = Conn(authenticated=False)
    answer = sasl_step(api_key, body, conn, {"admin": "secret"}, 1)
    assert answer["errorCode"] == error
    assert (conn.authenticated, conn.closing) == (authenticated, closing)


def test_every_error_code_the_rules_return_has_a_case() -> None:
    """The codes the tables above expect, against the list of codes `RaftLeader` and the SASL
    step can answer with (written out by hand from their source)."""
    expected = {row.values[5] for row in VOTES} | {row.values[3] for row in BEGINS} | {
        row.values[5] for row in FETCHES} | {INVALID_REQUEST, INCONSISTENT_CLUSTER_ID,
                                             REQUEST_TIMED_OUT, NOT_CONTROLLER,
                                             UNSUPPORTED_SASL_MECHANISM,
                                             SASL_AUTHENTICATION_FAILED}
    assert expected - {None} == {
        NONE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, UNSUPPORTED_SASL_MECHANISM,
        NOT_CONTROLLER, INVALID_REQUEST, SASL_AUTHENTICATION_FAILED, FENCED_LEADER_EPOCH,
        UNKNOWN_LEADER_EPOCH, INCONSISTENT_CLUSTER_ID}


# -- DescribeQuorum answers (the stand-in asks the new leader who its observers are) ------------

def _described(error: int, leader: int, observers: list[tuple[int, int]]) -> dict[str, Any]:
    return {"errorCode": NONE, "topics": [{"topicName": "__cluster_metadata", "partitions": [{
        "partitionIndex": 0, "errorCode": error, "leaderId": leader, "leaderEpoch": 4,
        "highWatermark": 10, "currentVoters": [], "observers": [
            {"replicaId": r, "logEndOffset": 10, "lastFetchTimestamp": t,
             "lastCaughtUpTimestamp": t} for r, t in observers]}]}]}


@pytest.mark.parametrize(("answer", "expected"), [
    (_described(NONE, 2, [(100, 1_700_000_000_123), (101, 1_700_000_000_456)]),
     (2, {100: 1_700_000_000_123, 101: 1_700_000_000_456})),
])
def test_describe_quorum_answer(answer: dict[str, Any],
                                expected: tuple[int, dict[int, int]]) -> None:
    assert quorum_leader_and_observers(3, answer) == expected


@pytest.mark.parametrize("leader", [-1, 0, 2])
def test_describe_quorum_error_is_unavailable_whatever_leader_id_it_carries(leader: int) -> None:
    """Kafka's non-leader sets only the error (`singletonErrorResponse`): its leaderId is the
    field's default 0, never a leader to ask next."""
    with pytest.raises(VoterUnavailableError, match="voter 3 answered DescribeQuorum with error 6"):
        quorum_leader_and_observers(3, _described(NOT_LEADER_OR_FOLLOWER, leader, []))


# -- the listener's own answers (Inbound, no socket) ---------------------------------------------

def test_a_newer_api_versions_is_answered_with_unsupported_version_and_the_list() -> None:
    """As Kafka's brokers do: ApiVersions v0 with UNSUPPORTED_VERSION (35) and the versions the
    stand-in serves, so the client retries with one of them."""
    raft = _leader()
    host = SimpleNamespace(node_id=1, requests_served={}, sasl_users=None, raft=raft,
                           handover=None, desk=None)
    raw = bytes.fromhex("0012 0009 00000007 ffff 00")  # ApiVersions v9, correlation id 7
    frame = asyncio.run(Inbound(host)._answer(raw, Conn(authenticated=True)))
    correlation, body = decode_response(18, 0, frame[4:])
    assert (correlation, body["errorCode"]) == (7, 35)
    keys = {k["apiKey"]: (k["minVersion"], k["maxVersion"]) for k in body["apiKeys"]}
    assert keys == {1: (15, 17), 18: (0, 4), 52: (0, 0), 53: (0, 0), 54: (0, 0), 62: (0, 4),
                    63: (0, 1), 70: (0, 0)}


def test_an_observers_fetches_are_kept_for_the_broker_gate_without_moving_the_watermark() -> None:
    raft = _leader()  # leads epoch 3, log end 10
    raft.fetch_step(100, _part(7, 3, 3), 1000.0, can_wait=False, handover_pending=False)
    raft.fetch_step(100, _part(10, 3, 3), 1500.0, can_wait=False, handover_pending=False)
    raft.fetch_step(101, _part(4, 1, 2), 1600.0, can_wait=False, handover_pending=False)
    observed = {n: (r.last_fetch_ms, r.end_offset) for n, r in raft.observers.items()}
    # 101 asked at an older epoch: fenced, not a fetch of this epoch's log
    assert observed == {100: (1500.0, 10)}
    assert raft.hw == 0  # an observer is no voter: no majority from it
    raft.resign()
    raft.fetch_step(100, _part(10, 3, 3), 2000.0, can_wait=False, handover_pending=False)
    assert raft.observers[100].last_fetch_ms == 1500.0  # not leading: not counted


# -- the role and its transitions (Kafka's QuorumState: one state object at a time) ---------------

def _in_role(state: str) -> RaftLeader:
    """The stand-in (node 1 of 1, 2, 3; log as above, end 10) in `state`: `fresh` (unattached at
    the log's last epoch 3, no vote), `candidate` (standing at 4), `leading` (epoch 3),
    `resigned` (from 3), `voted` (resigned, then voted for 2 at 4), `followed` (resigned, then 2
    leads 4), `fresh-followed` (never led; 2 announced itself at epoch 4)."""
    if state in ("leading", "resigned", "voted", "followed"):
        return _leader(state)
    index = LogIndex()
    index.add(_batch(1, 0, 4))
    index.add(_batch(3, 5, 9))
    raft = RaftLeader(1, (1, 2, 3), CLUSTER, index, fetch_timeout_ms=2000.0)
    if state == "candidate":
        raft.stand_for(4)
    elif state == "fresh-followed":
        assert raft.on_begin_epoch(_begin(2, 4)).persist
    return raft


def _act(raft: RaftLeader, action: str) -> None:
    if action == "stand":
        raft.stand_for(raft.epoch + 1)
    elif action == "win":
        raft.become_leader()
    elif action == "resign":
        raft.resign()
    elif action == "grant":  # a higher candidate with a log as long: granted unless leading
        raft.on_vote(_vote(2, raft.epoch + 1, 3, 10))
    else:  # "announce": 3 announces itself leader one epoch higher
        raft.on_begin_epoch(_begin(3, raft.epoch + 1))


U, C, L, R, F = "unattached", "candidate", "leader", "resigned", "follower"
REFUSED = "refused"

ROLE_MOVES = [
    # (state, action) -> role after, or REFUSED (RoleTransitionError, role unchanged)
    pytest.param("fresh", "stand", C, id="unattached stands"),
    pytest.param("fresh", "win", REFUSED, id="unattached cannot lead without standing"),
    pytest.param("fresh", "resign", REFUSED, id="unattached cannot resign"),
    pytest.param("fresh", "grant", U, id="unattached votes"),
    pytest.param("fresh", "announce", F, id="unattached follows"),
    pytest.param("candidate", "stand", C, id="candidate stands one epoch higher (rejoin)"),
    pytest.param("candidate", "win", L, id="candidate wins"),
    pytest.param("candidate", "resign", REFUSED, id="candidate cannot resign"),
    pytest.param("candidate", "grant", U, id="candidate votes for a higher candidate"),
    pytest.param("candidate", "announce", F, id="candidate follows a leader"),
    pytest.param("leading", "stand", REFUSED, id="leader cannot stand"),
    pytest.param("leading", "win", REFUSED, id="leader cannot win again"),
    pytest.param("leading", "resign", R, id="leader resigns"),
    pytest.param("leading", "grant", L, id="leader refuses the vote, still leads"),
    pytest.param("leading", "announce", F, id="leader follows a higher epoch"),
    pytest.param("resigned", "stand", REFUSED, id="resigned never stands again"),
    pytest.param("resigned", "win", REFUSED, id="resigned cannot lead"),
    pytest.param("resigned", "resign", REFUSED, id="resigned cannot resign twice"),
    pytest.param("resigned", "grant", U, id="resigned votes"),
    pytest.param("resigned", "announce", F, id="resigned follows the new leader"),
    pytest.param("voted", "stand", REFUSED, id="voted after resigning: never stands again"),
    pytest.param("voted", "win", REFUSED, id="voted cannot lead"),
    pytest.param("voted", "grant", U, id="voted votes at the next epoch"),
    pytest.param("followed", "stand", REFUSED, id="followed after resigning: never stands"),
    pytest.param("followed", "resign", REFUSED, id="follower cannot resign"),
    pytest.param("followed", "grant", U, id="follower votes at the next epoch"),
    pytest.param("followed", "announce", F, id="follower follows the next leader"),
    pytest.param("fresh-followed", "stand", C, id="a follower that never led may stand"),
    pytest.param("fresh-followed", "win", REFUSED, id="a follower cannot lead without standing"),
]


@pytest.mark.parametrize(("state", "action", "after"), ROLE_MOVES)
def test_role_transitions(state: str, action: str, after: str) -> None:
    raft = _in_role(state)
    before = (raft.role, raft.epoch)
    if after == REFUSED:
        with pytest.raises(RoleTransitionError):
            _act(raft, action)
        assert (raft.role, raft.epoch) == before
        return
    _act(raft, action)
    assert raft.role.value == after


def test_the_transition_table() -> None:
    """The whole table, written out: role -> the roles it may become."""
    table = {role.value: sorted(r.value for r in targets) for role, targets in TRANSITIONS.items()}
    assert table == {U: [C, F, U], C: [C, F, L, U], L: [F, R], R: [F, U], F: [C, F, U]}


ROLE_FACTS = [
    # state -> (role, epoch, voted for, leader named, new leader, is leader, resigned)
    pytest.param("fresh", U, 3, -1, -1, -1, False, False, id="fresh"),
    pytest.param("candidate", C, 4, 1, -1, -1, False, False, id="candidate"),
    pytest.param("leading", L, 3, 1, 1, -1, True, False, id="leading"),
    pytest.param("resigned", R, 3, 1, 1, -1, False, True, id="resigned: names itself"),
    pytest.param("voted", U, 4, 2, -1, -1, False, True, id="voted: no leader known"),
    pytest.param("followed", F, 4, 2, 2, 2, False, True, id="followed: names the new leader"),
    pytest.param("fresh-followed", F, 4, -1, 2, 2, False, False, id="followed, never led"),
]


@pytest.mark.parametrize(("state", "role", "epoch", "voted_for", "leader_id", "new_leader",
                          "is_leader", "resigned"), ROLE_FACTS)
def test_what_each_role_says(state: str, role: str, epoch: int, voted_for: int, leader_id: int,
                             new_leader: int, is_leader: bool, resigned: bool) -> None:
    raft = _in_role(state)
    assert (raft.role.value, raft.epoch, raft.voted_for, raft.leader_id(), raft.new_leader,
            raft.is_leader(), raft.resigned) == (role, epoch, voted_for, leader_id, new_leader,
                                                 is_leader, resigned)
