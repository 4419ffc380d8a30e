"""What the stand-in answers once it no longer leads, over a real socket (no Kafka needed;
real controllers: tests/oracle/test_standin_rehearsal.py). Kafka 3.9's voters answer the same
way (`KafkaRaftClient.validateLeaderOnlyRequest`, `validateVoterOnlyRequest`, the voted state's
`canGrantVote`): a Fetch at an older epoch is FENCED_LEADER_EPOCH (74), one at the current
epoch NOT_LEADER_OR_FOLLOWER (6), and both name the leader it knows in CurrentLeader, so a
broker (a Raft observer, which no BeginQuorumEpoch reaches) follows the new leader at once; a
candidate asking again for the vote it got is granted again, another candidate of that epoch is
refused; a BeginQuorumEpoch older than the stand-in's epoch is fenced and changes nothing.

The Fetch request is one a real 3.9.1 controller sent (tests/fixtures, the stand-in capture),
with its epoch changed."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import free_port
from tests.unit.writers.test_protocol import SFRAMES, _of
from tests.unit.writers.test_standin_sasl import _call
from writers import StandInLeader, decode_request

CLUSTER = "c3RhbmRpbi1yZXNpZ24tdA"[:22]
TOPIC = "__cluster_metadata"


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[StandInLeader]:
    port = free_port()
    s = StandInLeader(3000, listen=("127.0.0.1", port),
                      voters={3000: ("127.0.0.1", port), 3001: ("127.0.0.1", 1),
                              3002: ("127.0.0.1", 2)},
                      log_dir=tmp_path / "meta3000", cluster_id=CLUSTER)
    yield s
    s.close()


def _fetch(sock: socket.socket, corr: int, epoch: int, version: int = 17
           ) -> tuple[int, int, int]:
    body = decode_request(_of(SFRAMES, "request", 1)[-1]).body
    body["clusterId"] = CLUSTER
    body["maxWaitMs"] = 0
    body["topics"][0]["partitions"][0].update(
        {"currentLeaderEpoch": epoch, "fetchOffset": 0, "lastFetchedEpoch": 0})
    ans = _call(sock, 1, version, corr, body)
    assert ans is not None
    part = ans["responses"][0]["partitions"][0]
    leader = part["currentLeader"]
    return part["errorCode"], leader["leaderId"], leader["leaderEpoch"]


def _vote(sock: socket.socket, corr: int, candidate: int, epoch: int) -> dict[str, Any]:
    ans = _call(sock, 52, 0, corr, {"clusterId": CLUSTER, "topics": [{
        "topicName": TOPIC, "partitions": [{
            "partitionIndex": 0, "candidateEpoch": epoch, "candidateId": candidate,
            "lastOffsetEpoch": 0, "lastOffset": 0}]}]})
    assert ans is not None
    return dict(ans["topics"][0]["partitions"][0])


def _begin(sock: socket.socket, corr: int, leader: int, epoch: int) -> dict[str, Any]:
    ans = _call(sock, 53, 0, corr, {"clusterId": CLUSTER, "topics": [{
        "topicName": TOPIC, "partitions": [{
            "partitionIndex": 0, "leaderId": leader, "leaderEpoch": epoch}]}]})
    assert ans is not None
    return dict(ans["topics"][0]["partitions"][0])


def test_answers_name_the_new_leader_and_fence_older_epochs(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        # no leader known at epoch 0 (a fresh log): the current epoch, not leading
        assert _fetch(sock, 1, 0) == (6, -1, 0)
        # 3001 stands at epoch 1 and gets the vote; asking again it gets it again; 3002 not
        assert _vote(sock, 2, 3001, 1)["voteGranted"] is True
        assert _vote(sock, 3, 3001, 1)["voteGranted"] is True
        refused = _vote(sock, 4, 3002, 1)
        assert (refused["voteGranted"], refused["leaderEpoch"]) == (False, 1)
        # voted, no leader yet: an epoch-0 Fetch is fenced, naming epoch 1 and no leader
        assert _fetch(sock, 5, 0) == (74, -1, 1)
        # 3001 announces itself: the answers name it
        begun = _begin(sock, 6, 3001, 1)
        assert (begun["errorCode"], begun["leaderId"], begun["leaderEpoch"]) == (0, 3001, 1)
        assert _fetch(sock, 7, 0) == (74, 3001, 1)
        assert _fetch(sock, 8, 1) == (6, 3001, 1)
        # a stale announcement (epoch 0) is fenced and changes nothing
        stale = _begin(sock, 9, 3002, 0)
        assert (stale["errorCode"], stale["leaderId"], stale["leaderEpoch"]) == (74, 3001, 1)
        assert _fetch(sock, 10, 0) == (74, 3001, 1)
    # what it wrote for itself: the vote, then the leader (Kafka's quorum-state layout)
    state = (standin.local_log.dir.partition_dir / "quorum-state").read_text()
    assert '"leaderId":3001,"leaderEpoch":1,"votedId":3001' in state


def test_handover_events_are_stamped_on_the_injected_clock(tmp_path: Path) -> None:
    """`mono_s` is the server's clock (ms) in seconds, the clock `elapsed_ms` is measured on."""
    port = free_port()
    s = StandInLeader(3000, listen=("127.0.0.1", port),
                      voters={3000: ("127.0.0.1", port), 3001: ("127.0.0.1", 1)},
                      log_dir=tmp_path / "meta3000", cluster_id=CLUSTER, clock=lambda: 12_345.0)
    try:
        s.handover.trace = []  # recording, as from resign() on
        s.handover.event("vote_received", 3001, 1)
        assert [(e.kind, e.node, e.epoch, e.mono_s) for e in s.handover.trace] == [
            ("vote_received", 3001, 1, 12.345)]
    finally:
        s.close()


@pytest.mark.parametrize("version", [15, 16, 17])
def test_fetch_at_the_versions_older_brokers_send_is_answered(standin: StandInLeader,
                                                              version: int) -> None:
    # ZooKeeper-mode brokers in migration mode fetch the stand-in's log as observers with their
    # own release's Fetch: 3.5/3.6 send v15 (the first with ReplicaState), 3.7/3.8 v16, 3.9 v17
    # (Kafka's FetchRequest.json). Refused, they registered and never caught up (issue 29).
    # a Kafka client sends only what ApiVersions advertised ("The broker does not support
    # FETCH with version in range [0,15]. The supported range is [17,17]", 3.6.2's broker)
    with socket.create_connection(standin.listen, timeout=5) as sock:
        versions = _call(sock, 18, 3, 1, {"clientSoftwareName": "kafka",
                                           "clientSoftwareVersion": "3.6.2"})
        assert versions is not None
        (fetch,) = [k for k in versions["apiKeys"] if k["apiKey"] == 1]
        assert fetch["minVersion"] <= version <= fetch["maxVersion"], fetch
        assert _fetch(sock, 2, 0, version) == (6, -1, 0)  # answered: not leading at epoch 0
