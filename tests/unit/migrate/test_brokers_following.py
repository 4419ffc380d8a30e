"""After the claim, with the stand-in: do the brokers fetch from the new leader? The leader may
move after the handover, and a controller that does not lead answers DescribeQuorum with
NOT_LEADER_OR_FOLLOWER and leaderId 0 (Kafka sets only the error on that answer; 0 is the
field's default). A CI run read that 0 as a leader and died with `KeyError: 0`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from migrate.online.outcome import OnlineOutcome
from migrate.online.phases.handoff import Handoff
from tests.support.fake_online import FakeClock
from writers import VoterStatus, VoterUnavailableError
from writers.raft.wire import quorum_leader_and_observers

NONE, NOT_LEADER_OR_FOLLOWER = 0, 6


def _answer(error: int, leader: int, observers: dict[int, int]) -> dict[str, Any]:
    """A DescribeQuorum v1 answer as Kafka 3.9 sends it: a non-leader's carries the error and
    the schema defaults (leaderId 0, no observers)."""
    part: dict[str, Any] = {"partitionIndex": 0, "errorCode": error, "leaderId": 0,
                            "leaderEpoch": 0, "highWatermark": 0, "currentVoters": [],
                            "observers": []}
    if error == NONE:
        part.update(leaderId=leader, leaderEpoch=3, observers=[
            {"replicaId": b, "logEndOffset": 9, "lastFetchTimestamp": t,
             "lastCaughtUpTimestamp": t} for b, t in observers.items()])
    return {"errorCode": NONE, "topics": [{"topicName": "__cluster_metadata",
                                           "partitions": [part]}]}


def test_a_non_leaders_answer_names_no_leader() -> None:
    answer = _answer(NOT_LEADER_OR_FOLLOWER, -1, {})
    try:
        quorum_leader_and_observers(3002, answer)
    except VoterUnavailableError as exc:
        assert "voter 3002 answered DescribeQuorum with error 6" in str(exc)
    else:
        raise AssertionError("leaderId 0 of an error answer was read as a leader")


class _MovedLeaderQuorum:
    """3002 led after the handover, then 3001 won epoch 3: 3002 answers NOT_LEADER_OR_FOLLOWER,
    3001 answers with broker 0's fetch time moving by 500 ms per question."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.fetch_ms = 1_000

    def voter_status(self) -> list[VoterStatus]:
        return [VoterStatus(n, "ok", 10) for n in (3000, 3001, 3002)]

    def describe_quorum(self, node: int) -> tuple[int, dict[int, int]]:
        self.asked.append(node)
        if node != 3001:
            return quorum_leader_and_observers(node, _answer(NOT_LEADER_OR_FOLLOWER, -1, {}))
        self.fetch_ms += 500
        return quorum_leader_and_observers(node, _answer(NONE, 3001, {0: self.fetch_ms}))


def _handoff(quorum: Any, clock: FakeClock, said: list[str]) -> Handoff:
    out = OnlineOutcome()
    out.handover = {"new_leader": 3002, "new_epoch": 2, "elapsed_ms": 778.0}
    out.zk_brokers, out.brokers_unregistered = [0, 1], [1]
    c = SimpleNamespace(out=out, quorum=quorum, controller_id=3000, clock=clock.monotonic,
                        sleep=clock.sleep, o=SimpleNamespace(handoff_timeout_s=120.0),
                        sink=SimpleNamespace(say=said.append))
    return Handoff(c)  # type: ignore[arg-type]


def test_a_leader_that_moved_after_the_handover_is_found_and_its_brokers_counted() -> None:
    clock, quorum = FakeClock(), _MovedLeaderQuorum()
    said: list[str] = []
    handoff = _handoff(quorum, clock, said)

    handoff._brokers_following()

    assert quorum.asked[0] == 3002 and 3000 not in quorum.asked  # never the stand-in itself
    assert quorum.asked[1:] == [3001, 3001]  # two answers of one leader: broker 0 moved
    assert handoff.c.out.brokers_not_following == []
    assert said == ["every broker fetches from the new leader 3001 (DescribeQuorum)"]


def test_no_controller_leading_for_30_s_is_every_broker_not_following() -> None:
    class NobodyLeads(_MovedLeaderQuorum):
        def describe_quorum(self, node: int) -> tuple[int, dict[int, int]]:
            self.asked.append(node)
            raise VoterUnavailableError(f"voter {node} did not answer DescribeQuorum")

    clock, quorum = FakeClock(), NobodyLeads()
    said: list[str] = []
    handoff = _handoff(quorum, clock, said)
    began = clock.monotonic()

    handoff._brokers_following()

    assert 29.9 <= clock.monotonic() - began <= 30.2  # bounded: 30 s, then the verdict
    assert set(quorum.asked) == {3001, 3002}
    assert handoff.c.out.brokers_not_following == [0]
    assert said == ["WARNING: broker(s) [0] do not fetch from the new leader 3002 "
                    "(DescribeQuorum)"]
