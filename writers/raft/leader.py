"""The stand-in's Raft rules as a pure state machine: requests in, answers and effects out.

`RaftLeader` holds what a Kafka 3.9 `QuorumState`/`LeaderState` holds for the stand-in (its role
with the role's epoch, vote and leader, the high watermark, each follower's fetched end) and
decides every Raft request the stand-in serves: Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch,
ControllerRegistration, and the check-quorum rule. The role is one object at a time, as Kafka's
`QuorumState` holds one `EpochState`: `Unattached` (with the vote it granted, if any),
`Candidate`, `Leader`, `Resigned` or `Follower` (a leader announced itself; the stand-in never
fetches from it), and it changes only along `TRANSITIONS`. It reads no clock (the caller passes
`now_ms`), opens no socket and writes no file: a decision that must be made durable before it is
answered says so (`VoteDecision.persist`, `BeginEpochDecision.persist`) and the server
(`writers.raft.server`) writes quorum-state, appends, wakes fetchers and answers.

The rules follow Kafka 3.9's `KafkaRaftClient` (facts, not code); where they deliberately differ,
docs/design/standin.md ("The stand-in's Raft rules, and where they differ from
KafkaRaftClient") says why. Every error code the stand-in answers with comes from
`writers.raft.errors`.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from writers.errors import VoterStateError
from writers.log.reader import METADATA_TOPIC_ID
from writers.raft.errors import (
    FENCED_LEADER_EPOCH,
    INCONSISTENT_CLUSTER_ID,
    INVALID_REQUEST,
    NONE,
    NOT_CONTROLLER,
    NOT_LEADER_OR_FOLLOWER,
    REQUEST_TIMED_OUT,
    UNKNOWN_LEADER_EPOCH,
)
from writers.raft.log import LogIndex

__all__ = ["CHECK_QUORUM_TIMEOUT_FACTOR", "METADATA_TOPIC", "TRANSITIONS", "BeginEpochDecision",
           "Candidate", "FetchStep", "Follower", "Leader", "RaftLeader", "Replica", "Resigned",
           "Role", "RoleState", "RoleTransitionError", "Unattached", "VoteDecision",
           "heard_from_majority"]

log = logging.getLogger(__name__)

METADATA_TOPIC = "__cluster_metadata"

CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
"""Kafka's `LeaderState`: a leader that has not had a Fetch from a majority of its voters
within 1.5 x `controller.quorum.fetch.timeout.ms` resigns (check-quorum)."""


def heard_from_majority(now_ms: float, last_fetches_ms: Sequence[float], voters: int,
                        fetch_timeout_ms: float) -> bool:
    """Whether the followers that fetched within Kafka's check-quorum time, with the leader
    itself, are a majority of `voters` (docs/design/standin.md, "The gate follows check-quorum").

    Kafka resets its check-quorum timer each time a majority has fetched since the last reset;
    counting each follower's latest Fetch in a window of the same length is the same rule for
    three voters and slightly stricter for more. Past that time the followers' own fetch timers
    (1 x the timeout) have run out too, and they stand for election without the leader."""
    window = fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR
    heard = sum(1 for t in last_fetches_ms if now_ms - t <= window)
    return 1 + heard >= voters // 2 + 1


class Role(enum.Enum):
    """The stand-in's Raft role (Kafka's `EpochState` kinds; a voted voter is Kafka 4's
    `UnattachedState` with a voted key, 3.9's `VotedState`)."""

    UNATTACHED = "unattached"  # no leader known at its epoch; may have voted for a candidate
    CANDIDATE = "candidate"  # voted for itself, asking the voters (`Election`)
    LEADER = "leader"  # won its epoch: appends, serves Fetch, answers brokers
    RESIGNED = "resigned"  # sent EndQuorumEpoch; no newer epoch or leader known yet
    FOLLOWER = "follower"  # a leader of its epoch announced itself (BeginQuorumEpoch)


TRANSITIONS: Mapping[Role, frozenset[Role]] = {
    # a voter that knows no leader may stand, vote at a higher epoch, or follow an announcement
    Role.UNATTACHED: frozenset({Role.CANDIDATE, Role.UNATTACHED, Role.FOLLOWER}),
    # a candidate stands again one epoch higher (rejoin), wins, votes for a higher candidate, or
    # follows a leader that announced itself
    Role.CANDIDATE: frozenset({Role.CANDIDATE, Role.LEADER, Role.UNATTACHED, Role.FOLLOWER}),
    # a leader resigns, or follows a higher epoch's announcement; it refuses every Vote
    # (docs/design/standin.md: it does not step down on a Vote), so it never becomes unattached
    Role.LEADER: frozenset({Role.RESIGNED, Role.FOLLOWER}),
    # after the handover the stand-in never stands again: it votes or follows
    Role.RESIGNED: frozenset({Role.UNATTACHED, Role.FOLLOWER}),
    Role.FOLLOWER: frozenset({Role.CANDIDATE, Role.UNATTACHED, Role.FOLLOWER}),
}
"""The legal moves, role -> roles it may become (`RaftLeader` refuses any other)."""


class RoleTransitionError(VoterStateError):
    """A move `TRANSITIONS` does not allow (a bug in the caller, or a race it must not win:
    e.g. an election that would make the stand-in leader of an epoch it voted in for another)."""


@dataclass(frozen=True, slots=True)
class Unattached:
    """No leader known at `epoch`; `voted_for` the candidate it granted (-1: none)."""

    role: ClassVar[Role] = Role.UNATTACHED
    epoch: int
    voted_for: int = -1


@dataclass(frozen=True, slots=True)
class Candidate:
    """Standing at `epoch`, voted for itself."""

    role: ClassVar[Role] = Role.CANDIDATE
    epoch: int


@dataclass(frozen=True, slots=True)
class Leader:
    """Leading `epoch` (voted for itself)."""

    role: ClassVar[Role] = Role.LEADER
    epoch: int


@dataclass(frozen=True, slots=True)
class Resigned:
    """Resigned from `epoch`, the one it led; answers still name itself as that epoch's leader
    (Kafka's `ResignedState`)."""

    role: ClassVar[Role] = Role.RESIGNED
    epoch: int


@dataclass(frozen=True, slots=True)
class Follower:
    """`leader` announced itself leader of `epoch`; `voted_for` is kept from the role before, as
    quorum-state carries it (the stand-in never fetches from the leader)."""

    role: ClassVar[Role] = Role.FOLLOWER
    epoch: int
    leader: int
    voted_for: int = -1


RoleState = Unattached | Candidate | Leader | Resigned | Follower


@dataclass
class Replica:
    """What the leader knows of one voter (Kafka's `LeaderState.ReplicaState`)."""

    node_id: int
    end_offset: int = -1  # flushed end (next offset it needs); -1 = not fetched this epoch
    last_fetch_ms: float = 0.0
    hw_sent: int = -1


@dataclass(frozen=True, slots=True)
class VoteDecision:
    """A Vote's outcome and its effect; `RaftLeader.vote_answer` renders the answer once the
    effect is done (it names the leader and epoch known then, after any quorum-state write).

    Attributes:
        error: the error code (top-level for INCONSISTENT_CLUSTER_ID, else the partition's).
        granted: whether the vote was granted.
        persist: the grant moved the epoch: write quorum-state (epoch, voted for the
            candidate) before answering.
        wait_for_persist: the same candidate asked again: answer only after the first grant's
            quorum-state write finished.
    """

    error: int
    granted: bool
    persist: bool = False
    wait_for_persist: bool = False


@dataclass(frozen=True, slots=True)
class BeginEpochDecision:
    """A BeginQuorumEpoch's outcome and its effect; `RaftLeader.begin_epoch_answer` renders
    the answer once the effect is done.

    Attributes:
        error: the error code (top-level for INCONSISTENT_CLUSTER_ID, else the partition's).
        leader: the leader the request announced (named in the answer).
        persist: a new leader became known: the handover is done, fetchers are woken, and
            quorum-state (epoch, leader, vote) is written before answering.
    """

    error: int
    leader: int = -1
    persist: bool = False


@dataclass(frozen=True, slots=True)
class FetchStep:
    """One pass over a Fetch: answer now, read records, or wait.

    Attributes:
        answer: the answer to send now (an error, DivergingEpoch, or a top-level error), or
            None: read records from `fetchOffset` (and long-poll if there are none).
        wait_for_leader: an observer's Fetch after resigning, before a new leader is known:
            wait for a change (or MaxWait) and take another step.
        during_handover: counts as a Fetch answered during the handover.
        hw_moved: the follower's FetchOffset moved the high watermark (wake committers and
            long-polling fetchers).
    """

    answer: dict[str, Any] | None
    wait_for_leader: bool = False
    during_handover: bool = False
    hw_moved: bool = False


class RaftLeader:
    """The stand-in's Raft state and rules, without I/O.

    Args:
        node_id: the stand-in's voter id.
        voters: every voter's id, the stand-in's own included.
        cluster_id: the cluster id the controllers were formatted with.
        index: the stand-in's log in memory (read here; appended to by the server).
        fetch_timeout_ms: the controllers' `controller.quorum.fetch.timeout.ms`.
    """

    def __init__(self, node_id: int, voters: Sequence[int], cluster_id: str, index: LogIndex,
                 *, fetch_timeout_ms: float = 2000.0) -> None:
        self.node_id = node_id
        self.voters = sorted(voters)
        self.cluster_id = cluster_id
        self.index = index
        self.fetch_timeout_ms = fetch_timeout_ms
        self.state: RoleState = Unattached(index.last_epoch())  # changed by `_move` only
        # the epoch the stand-in resigned from (-1: it never did): after the handover the
        # lagging followers of that epoch are still served, observers wait for the next
        # leader, and it never stands again, whatever role it moves on to
        self.resigned_from = -1
        self.epoch_start = 0
        self.hw = 0
        self.replicas = {n: Replica(n) for n in self.voters if n != node_id}
        # observers (the brokers in migration mode) that fetched in the epoch the stand-in
        # leads: end_offset = their last FetchOffset (reset when a new epoch starts)
        self.observers: dict[int, Replica] = {}

    # -- state ------------------------------------------------------------------------------

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    @property
    def role(self) -> Role:
        return self.state.role

    @property
    def epoch(self) -> int:
        """The epoch of the current role."""
        return self.state.epoch

    @property
    def voted_for(self) -> int:
        """The candidate it voted for in `epoch` (-1: none; itself as candidate and after)."""
        if isinstance(self.state, Unattached | Follower):
            return self.state.voted_for
        return self.node_id

    @property
    def new_leader(self) -> int:
        """The leader that announced itself for `epoch` (-1: none known)."""
        return self.state.leader if isinstance(self.state, Follower) else -1

    @property
    def resigned(self) -> bool:
        """It resigned (in any role since)."""
        return self.resigned_from >= 0

    def _move(self, state: RoleState) -> None:
        """The one place the role changes: refused unless `TRANSITIONS` allows it."""
        if state.role not in TRANSITIONS[self.state.role]:
            raise RoleTransitionError(
                f"stand-in {self.node_id}: {self.state.role.value} at epoch {self.epoch} "
                f"cannot become {state.role.value} at epoch {state.epoch}")
        self.state = state

    def leader_id(self) -> int:
        """The leader of `epoch` as far as the stand-in knows (-1: none known), as Kafka's
        voters put it in every Raft answer."""
        if self.role is Role.LEADER or self.resigned_from == self.epoch:
            return self.node_id  # resigned, nothing newer known: Kafka's ResignedState says so
        return self.new_leader

    def is_leader(self) -> bool:
        return self.role is Role.LEADER

    def stand_for(self, epoch: int) -> None:
        """Candidate at `epoch`, voting for itself (the server writes quorum-state).

        Raises:
            RoleTransitionError: it leads, or it resigned (the log moved on to the real
                controllers: a re-run stands with a new server, `elect(rejoin=True)`)."""
        if self.resigned:
            raise RoleTransitionError(
                f"stand-in {self.node_id} resigned from epoch {self.resigned_from}: it does "
                f"not stand again (at epoch {epoch})")
        self._move(Candidate(epoch))

    def become_leader(self) -> None:
        """Won the election: the epoch starts at the log's end (its LeaderChange goes there).

        Raises:
            RoleTransitionError: not a candidate any more (it voted for another or followed an
                announcement meanwhile)."""
        self._move(Leader(self.epoch))
        self.epoch_start = self.index.end
        self.observers = {}

    def resign(self) -> None:
        """Stop leading (EndQuorumEpoch is being sent).

        Raises:
            RoleTransitionError: not leading."""
        self._move(Resigned(self.epoch))
        self.resigned_from = self.epoch

    def follower_ends(self) -> dict[int, int]:
        return {n: r.end_offset for n, r in sorted(self.replicas.items())}

    def check_quorum(self, now_ms: float) -> bool:
        """Leading, and a majority heard from within Kafka's check-quorum time."""
        return self.is_leader() and heard_from_majority(
            now_ms, [r.last_fetch_ms for r in self.replicas.values() if r.end_offset >= 0],
            len(self.voters), self.fetch_timeout_ms)

    def advance_hw(self) -> bool:
        """High watermark: the end offset a majority reached (the stand-in's own fsync'd end
        included), once past the epoch start (Kafka's `LeaderState.maybeUpdateHighWatermark`).

        Returns:
            Whether it moved (the server then wakes committers and fetchers)."""
        ends = sorted([self.index.end] + [r.end_offset for r in self.replicas.values()],
                      reverse=True)
        candidate = ends[len(self.voters) // 2]
        if candidate > self.epoch_start and candidate > self.hw:
            self.hw = candidate
            return True
        return False

    def known_hw(self) -> int:
        """The high watermark a Fetch answer carries: -1 (unknown) until this epoch committed
        its start, as Kafka's leader answers. A restarted stand-in begins at 0 while its
        followers already know the previous epoch's; a lower value kills their raft thread
        ("Non-monotonic update of high watermark", real 3.9.1)."""
        return self.hw if self.hw > self.epoch_start else -1

    def cluster_id_ok(self, request_cluster_id: str | None) -> bool:
        """Kafka's `hasValidClusterId`: a request without a cluster id is taken."""
        return request_cluster_id is None or request_cluster_id == self.cluster_id

    # -- answers ----------------------------------------------------------------------------

    def raft_answer(self, error: int, *, vote_granted: bool | None = None) -> dict[str, Any]:
        """A Vote/BeginQuorumEpoch/EndQuorumEpoch answer naming the leader and epoch known."""
        part: dict[str, Any] = {"partitionIndex": 0, "errorCode": error,
                                "leaderId": self.leader_id(), "leaderEpoch": self.epoch}
        if vote_granted is not None:
            part["voteGranted"] = vote_granted
        return {"errorCode": NONE, "topics": [{"topicName": METADATA_TOPIC,
                                               "partitions": [part]}]}

    def fetch_answer(self, error: int, hw: int, records: bytes) -> dict[str, Any]:
        """A Fetch answer; every one carries the tagged CurrentLeader."""
        return {"errorCode": NONE, "responses": [{"topicId": METADATA_TOPIC_ID, "partitions": [{
            "partitionIndex": 0, "errorCode": error, "highWatermark": hw,
            "logStartOffset": 0, "currentLeader": {"leaderId": self.leader_id(),
                                                   "leaderEpoch": self.epoch},
            "records": records}]}]}

    @staticmethod
    def top_level_error(error: int, items: str) -> dict[str, Any]:
        """An answer that fails the whole request (`items`: the response's topic list key)."""
        return {"errorCode": error, items: []}

    # -- requests ---------------------------------------------------------------------------

    def on_vote(self, body: Mapping[str, Any]) -> VoteDecision:
        """Vote v0. Granted when the epoch is higher than the stand-in's, it does not lead, and
        the candidate's log is at least as long (last epoch, then end offset); the same
        candidate asking again in the epoch voted in is granted again. Refused while leading,
        even at a higher epoch (docs/design/standin.md: it does not step down on a Vote)."""
        if not self.cluster_id_ok(body.get("clusterId")):
            return VoteDecision(INCONSISTENT_CLUSTER_ID, False)
        part = body["topics"][0]["partitions"][0]
        epoch, candidate = part["candidateEpoch"], part["candidateId"]
        if candidate < 0:  # Kafka's `validateVoterOnlyRequest`
            return VoteDecision(INVALID_REQUEST, False)
        if candidate not in self.voters:
            return VoteDecision(NONE, False)
        if epoch == self.epoch and self.role in (Role.UNATTACHED, Role.CANDIDATE, Role.RESIGNED):
            # the same candidate asking again in the epoch we voted in (its answer was lost):
            # granted again, as Kafka's voted state does; anyone else is refused
            granted = self.voted_for == candidate
            return VoteDecision(NONE, granted, wait_for_persist=granted)
        if epoch > self.epoch and not self.is_leader():
            ours = (self.index.last_epoch(), self.index.end)
            theirs = (part["lastOffsetEpoch"], part["lastOffset"])
            if theirs >= ours:  # the state first, so a second candidate of this epoch is refused
                self._move(Unattached(epoch, voted_for=candidate))
                return VoteDecision(NONE, True, persist=True)
        elif epoch > self.epoch:
            log.warning("stand-in %d leads epoch %d and refuses candidate %d at epoch %d: a "
                        "controller stood for election while the stand-in leads (its fetches "
                        "timed out?)", self.node_id, self.epoch, candidate, epoch)
        return VoteDecision(NONE, False)

    def vote_answer(self, decision: VoteDecision) -> dict[str, Any]:
        """The VoteResponse for `decision`, naming the leader and epoch known now."""
        if decision.error == INCONSISTENT_CLUSTER_ID:
            return self.top_level_error(INCONSISTENT_CLUSTER_ID, "topics")
        return self.raft_answer(decision.error, vote_granted=decision.granted)

    def on_begin_epoch(self, body: Mapping[str, Any]) -> BeginEpochDecision:
        """BeginQuorumEpoch v0: a stale one is fenced; a higher epoch (or, not leading, another
        leader of this epoch) is followed: the stand-in stops leading and names that leader."""
        if not self.cluster_id_ok(body.get("clusterId")):
            return BeginEpochDecision(INCONSISTENT_CLUSTER_ID)
        part = body["topics"][0]["partitions"][0]
        leader, epoch = part["leaderId"], part["leaderEpoch"]
        if epoch < self.epoch:  # a stale announcement (Kafka: `validateVoterOnlyRequest`)
            return BeginEpochDecision(FENCED_LEADER_EPOCH)
        if leader < 0:
            return BeginEpochDecision(INVALID_REQUEST)
        persist = False
        if epoch > self.epoch or (not self.is_leader() and leader != self.node_id):
            self._move(Follower(epoch, leader, voted_for=self.voted_for))  # epoch >= ours here
            persist = True
        return BeginEpochDecision(NONE, leader, persist)

    def begin_epoch_answer(self, decision: BeginEpochDecision) -> dict[str, Any]:
        """The BeginQuorumEpochResponse for `decision`: an accepted one names the leader that
        announced itself, an error the leader and epoch known now."""
        if decision.error == INCONSISTENT_CLUSTER_ID:
            return self.top_level_error(INCONSISTENT_CLUSTER_ID, "topics")
        answer = self.raft_answer(decision.error)
        if decision.error == NONE:
            answer["topics"][0]["partitions"][0]["leaderId"] = decision.leader
        return answer

    def on_end_epoch(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """EndQuorumEpoch v0: acknowledged (the stand-in stands for no election)."""
        if not self.cluster_id_ok(body.get("clusterId")):
            return self.top_level_error(INCONSISTENT_CLUSTER_ID, "topics")
        return self.raft_answer(NONE)

    def on_controller_registration(self) -> dict[str, Any]:
        """ControllerRegistration: REQUEST_TIMED_OUT while leading (the controller retries),
        NOT_CONTROLLER after resigning (it re-resolves the leader)."""
        if self.is_leader():
            return {"errorCode": REQUEST_TIMED_OUT,
                    "errorMessage": "zk2kraft's stand-in leader does not register controllers"}
        return {"errorCode": NOT_CONTROLLER, "errorMessage": None}

    def refuse_broker_rpc(self, fields: Mapping[str, Any], *, serving: bool
                          ) -> dict[str, Any] | None:
        """BrokerRegistration/BrokerHeartbeat the stand-in cannot decide now: NOT_CONTROLLER
        after resigning (the broker moves to the next leader), REQUEST_TIMED_OUT before
        `serve_brokers` (the bootstrap is not committed yet: the broker retries). None: the
        broker registry decides (`writers.raft.brokers`).

        Args:
            fields: the response's other fields, as the RPC's error answer carries them.
            serving: `serve_brokers` was called.
        """
        if not self.is_leader():
            return {**fields, "errorCode": NOT_CONTROLLER}
        if not serving:
            return {**fields, "errorCode": REQUEST_TIMED_OUT}
        return None

    def fetch_invalid(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The checks made once per Fetch before any step: the cluster id, then Kafka's
        INVALID_REQUEST for a negative MaxWait, FetchOffset or LastFetchedEpoch, or a
        LastFetchedEpoch above the CurrentLeaderEpoch. None: valid (a Fetch for another topic
        is answered with no partitions by the server, as before)."""
        if not self.cluster_id_ok(body.get("clusterId")):
            return self.top_level_error(INCONSISTENT_CLUSTER_ID, "responses")
        topic = body["topics"][0] if body["topics"] else None
        if topic is None or not topic["partitions"]:
            return None
        part = topic["partitions"][0]
        if (body["maxWaitMs"] < 0 or part["fetchOffset"] < 0 or part["lastFetchedEpoch"] < 0
                or part["lastFetchedEpoch"] > part["currentLeaderEpoch"]):
            return self.fetch_answer(INVALID_REQUEST, -1, b"")
        return None

    def fetch_step(self, replica_id: int, part: Mapping[str, Any], now_ms: float, *,
                   can_wait: bool, handover_pending: bool) -> FetchStep:
        """One pass over a Fetch for `__cluster_metadata`-0 (repeated after each wait).

        Args:
            replica_id: the fetching replica (a voter, or an observer such as a broker).
            part: the request's partition (FetchOffset, LastFetchedEpoch, CurrentLeaderEpoch).
            now_ms: the clock, for the replica's last-fetch time (check-quorum).
            can_wait: the Fetch's MaxWait has not run out.
            handover_pending: resigned, and no new leader announced itself yet.
        """
        replica = self.replicas.get(replica_id)
        current = part["currentLeaderEpoch"]
        if self.resigned and self.serves_lagging(replica, part):
            pass  # records it lacks, answered at once (the server does not wait)
        elif not self.is_leader():
            if replica is None and self.resigned and self.new_leader < 0 and can_wait:
                # an observer (a broker) takes no part in the election: its Fetch waits for
                # the new leader (or its MaxWait) instead of coming back at once, over and
                # over, and then names it
                return FetchStep(None, wait_for_leader=True)
            # As a Kafka voter answers a Fetch it does not lead (`validateLeaderOnlyRequest`):
            # an older epoch is fenced, and the answer names the leader it knows, so a broker
            # (a Raft observer, which gets no BeginQuorumEpoch) follows the new leader at once
            # instead of after its fetch timeout.
            error = FENCED_LEADER_EPOCH if current < self.epoch else NOT_LEADER_OR_FOLLOWER
            return FetchStep(self.fetch_answer(error, -1, b""), during_handover=handover_pending)
        if current < self.epoch:
            return FetchStep(self.fetch_answer(FENCED_LEADER_EPOCH, -1, b""))
        if current > self.epoch:
            return FetchStep(self.fetch_answer(UNKNOWN_LEADER_EPOCH, -1, b""))
        offset, last_epoch = part["fetchOffset"], part["lastFetchedEpoch"]
        epoch_found, epoch_end = self.index.end_for_epoch(last_epoch)
        if offset > 0 and (epoch_found != last_epoch or epoch_end < offset):
            answer = self.fetch_answer(NONE, self.known_hw(), b"")
            answer["responses"][0]["partitions"][0]["divergingEpoch"] = {
                "epoch": epoch_found, "endOffset": epoch_end}
            return FetchStep(answer)
        if replica is None and replica_id >= 0:
            # an observer (a broker in migration mode): what the cutover's broker gate reads
            seen = self.observers.setdefault(replica_id, Replica(replica_id))
            seen.last_fetch_ms, seen.end_offset = now_ms, offset
        if replica is not None:
            # every fetch counts as a sign of life, not only one that moved the offset: an idle
            # follower long-polls at its end and would look gone to the check-quorum gate
            replica.last_fetch_ms = now_ms
            if offset > replica.end_offset:
                replica.end_offset = offset
                return FetchStep(None, hw_moved=self.advance_hw())
        return FetchStep(None)

    def serves_lagging(self, replica: Replica | None, part: Mapping[str, Any]) -> bool:
        """After resigning, a voter that did not reach the log's end still gets the records it
        lacks, as long as no later epoch is known (no vote granted, no new leader): it gets no
        EndQuorumEpoch (one behind that stands is refused, then unseats the new leader one
        epoch higher: Kafka 3.9 has no pre-vote), and answered it keeps its fetch timer from
        running out, so it never stands on its own; the new leader's Vote request moves it on."""
        return (replica is not None and self.epoch == self.resigned_from
                and part["currentLeaderEpoch"] == self.epoch
                and part["fetchOffset"] < self.index.end)

    def has_news(self, replica_id: int) -> bool:
        """A follower has not yet been sent the current high watermark (answer at once)."""
        replica = self.replicas.get(replica_id)
        return replica is not None and replica.hw_sent != self.hw

    def sent_hw(self, replica_id: int) -> None:
        replica = self.replicas.get(replica_id)
        if replica is not None:
            replica.hw_sent = self.hw
