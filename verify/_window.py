"""The cutover window's parts, stacked: ours from our clock, Kafka's from its controller's log.

`migrate --cutover now|manual` reports `window_ms.tool` (t1 − t0) and `total` (t2 − t0). This
module splits the window into consecutive parts, so that they stack, and says for each part
where its figure comes from or why there is none:

Ours, on zk2kraft's monotonic clock:
* `tool`: fence sent (t0) → drain committed (t1);
* `migration_znode`: t1 → `/migration` written and journaled;
* `election` (stand-in only): `/migration` written and journaled → the new leader announced
  itself (its BeginQuorumEpoch reached us): the wait for followers, EndQuorumEpoch and the vote;
* `kafka_claim`: the new leader (with `--voter`: `--on-cutover` started) → `/controller`
  claimed by a KRaft controller (t2).

Kafka's, from the new leader's log:
* `reconcile`: "Claimed ZK controller leadership" (without it: → SYNC_KRAFT_TO_ZK) →
  KRAFT_CONTROLLER_TO_BROKER_COMM;
* `broker_rpcs`: KRAFT_CONTROLLER_TO_BROKER_COMM → DUAL_WRITE.

The first four add up to `total` (t2 − t0); Kafka's reconcile and its full metadata to the
brokers follow the claim and stack on top (t2 is when we saw the claim that Kafka's log line
stamps, so the two clocks meet there). The log's parts are differences between two lines of one log,
so the controller's clock never has to agree with ours; only to pick this cutover's lines out of
a log that may hold older ones, their timestamps (Kafka's default `[%d]` layout, read in this
host's local time zone) are compared with the wall-clock time of the fence, less a tolerance.

The election (stand-in only) is split further when the new leader's log is given
(`election_split`): our EndQuorumEpoch and Vote/BeginQuorumEpoch stamps (wall clock, taken as
each message was written or decoded) between its Raft state changes ("Completed transition to
CandidateState(...)" and "... to Leader(...)"). Those sub-parts mix the two clocks, so they hold
only when the controller's clock agrees with ours (one host, or NTP): a sub-part below -1 ms (the
log's resolution) means they do not, and the split is null with that reason; their sum equals
`election` whatever the clocks say, because each log line enters it once with each sign.

Kafka 3.9's migration driver (`KRaftMigrationDriver`) logs, at INFO:
`<id> transitioning from <STATE> to <STATE> state` on every state change and
`Claimed ZK controller leadership in <n> ns. Transitioned migration state from … to …` once it
holds `/controller`. Pure: lines in, figures out; reading the file is the caller's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

__all__ = ["DriverEvent", "ElectionSplit", "KafkaHandoff", "RaftEvent", "WindowPart",
           "WindowParts", "election_split", "kafka_handoff", "parse_driver_lines",
           "parse_raft_lines", "window_parts"]

_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)[,.](\d{3})\]")
_TRANSITION = re.compile(r"\b(\d+) transitioning from (\w+) to (\w+) state")
_CLAIMED = re.compile(r"Claimed ZK controller leadership")
# Kafka 3.9 QuorumState: "Completed transition to <state> from <state>", the states' toString
_RAFT_CANDIDATE = re.compile(
    r"Completed transition to CandidateState\(localId=(\d+),.*?\bepoch=(\d+)")
_RAFT_LEADER = re.compile(
    r"Completed transition to Leader\(localReplicaKey=ReplicaKey\(id=(\d+),.*?\bepoch=(\d+)")
_LOG_TOLERANCE_S = 2.0
"""How far before the fence (wall clock) a log line may be stamped and still count as this
cutover's: our wall clock and the controller's may differ a little, and log times are in ms."""

PART_NAMES = ("tool", "migration_znode", "election", "kafka_claim", "reconcile", "broker_rpcs")


@dataclass(frozen=True, slots=True)
class DriverEvent:
    """One migration-driver line: a state change (`to_state`) or the claim (`to_state` None).

    Attributes:
        at_s: the line's timestamp, seconds since the epoch (local time zone).
        node_id: the controller's id (state changes only; -1 for the claim line).
    """

    at_s: float
    node_id: int
    from_state: str | None
    to_state: str | None


def _stamp(line: str) -> float | None:
    m = _TIME.match(line)
    if m is None:
        return None
    try:
        base = datetime.strptime(m.group(1).replace("T", " "), "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    return base.timestamp() + int(m.group(2)) / 1000.0


def parse_driver_lines(lines: Iterable[str]) -> list[DriverEvent]:
    """The migration driver's state changes and claims in a Kafka controller's log, in order.

    Lines without a leading `[yyyy-MM-dd HH:mm:ss,SSS]` timestamp (stack traces, other layouts)
    are skipped.
    """
    out: list[DriverEvent] = []
    for line in lines:
        m = _TRANSITION.search(line)
        claimed = m is None and _CLAIMED.search(line) is not None
        if m is None and not claimed:
            continue
        at = _stamp(line)
        if at is None:
            continue
        if m is not None:
            out.append(DriverEvent(at, int(m.group(1)), m.group(2), m.group(3)))
        else:
            out.append(DriverEvent(at, -1, None, None))
    return out


@dataclass(frozen=True, slots=True)
class RaftEvent:
    """One Raft state change of a controller ("Completed transition to ...").

    Attributes:
        at_s: the line's timestamp, seconds since the epoch (local time zone, ms resolution).
        node_id: the controller whose state it is.
        state: `CandidateState` or `Leader`.
        epoch: the epoch it entered.
    """

    at_s: float
    node_id: int
    state: str
    epoch: int


def parse_raft_lines(lines: Iterable[str]) -> list[RaftEvent]:
    """The CandidateState and Leader transitions in a Kafka 3.9 controller's log, in order."""
    out: list[RaftEvent] = []
    for line in lines:
        if "Completed transition to " not in line:
            continue
        m = _RAFT_CANDIDATE.search(line)
        state = "CandidateState"
        if m is None:
            m, state = _RAFT_LEADER.search(line), "Leader"
        if m is None:
            continue
        at = _stamp(line)
        if at is not None:
            out.append(RaftEvent(at, int(m.group(1)), state, int(m.group(2))))
    return out


@dataclass(frozen=True, slots=True)
class KafkaHandoff:
    """When the new leader's driver entered each state of the takeover (epoch seconds).

    Attributes:
        node_id: the controller whose log it is (-1 if no state change was seen).
        claimed_s / sync_s / broker_comm_s / dual_write_s: "Claimed ZK controller
            leadership", → SYNC_KRAFT_TO_ZK, → KRAFT_CONTROLLER_TO_BROKER_COMM, → DUAL_WRITE.
    """

    node_id: int
    claimed_s: float | None
    sync_s: float | None
    broker_comm_s: float | None
    dual_write_s: float | None

    @property
    def complete(self) -> bool:
        """True once the driver reached DUAL_WRITE (nothing more to wait for)."""
        return self.dual_write_s is not None


def kafka_handoff(events: Sequence[DriverEvent], *, not_before_s: float) -> KafkaHandoff:
    """This cutover's takeover in one controller's driver events.

    Args:
        events: `parse_driver_lines` of that controller's log.
        not_before_s: the fence's wall-clock time; earlier lines (less a 2 s tolerance) belong
            to an earlier run and are ignored.
    """
    floor = not_before_s - _LOG_TOLERANCE_S
    node_id = -1
    claimed = sync = comm = dual = None
    for e in events:
        if e.at_s < floor:
            continue
        if e.to_state is None:
            claimed = claimed if claimed is not None else e.at_s
            continue
        if e.to_state == "SYNC_KRAFT_TO_ZK" and sync is None:
            sync, node_id = e.at_s, e.node_id
        elif e.to_state == "KRAFT_CONTROLLER_TO_BROKER_COMM" and sync is not None \
                and comm is None:
            comm = e.at_s
        elif e.to_state == "DUAL_WRITE" and comm is not None and dual is None:
            dual = e.at_s
    return KafkaHandoff(node_id, claimed, sync, comm, dual)


@dataclass(frozen=True, slots=True)
class WindowPart:
    """One stacked part of the window.

    Attributes:
        name: one of `PART_NAMES`.
        ms: its length, or None when it cannot be measured.
        source: "zk2kraft" (our monotonic clock) or "controller log" (Kafka's lines).
        what: from → to, in words.
        reason: why `ms` is None (None when measured).
    """

    name: str
    ms: float | None
    source: str
    what: str
    reason: str | None = None
    parts: tuple[WindowPart, ...] | None = None
    parts_reason: str | None = None

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "ms": None if self.ms is None else round(self.ms, 3), "source": self.source,
            "what": self.what, "reason": self.reason}
        if self.parts is not None or self.parts_reason is not None:
            doc["parts"] = (None if self.parts is None
                            else {p.name: p.to_json() for p in self.parts})
            doc["parts_reason"] = self.parts_reason
        return doc

    def stacked(self) -> list[tuple[WindowPart, float]]:
        """Each sub-part with its start relative to this part's start (none if not split)."""
        out, at = [], 0.0
        for p in self.parts or ():
            if p.ms is not None:
                out.append((p, at))
                at += p.ms
        return out


@dataclass(frozen=True, slots=True)
class WindowParts:
    """The parts in stacking order (`to_json` is `window_ms.parts`)."""

    parts: tuple[WindowPart, ...]

    def to_json(self) -> dict[str, dict[str, object]]:
        return {p.name: p.to_json() for p in self.parts}

    def stacked(self) -> list[tuple[WindowPart, float]]:
        """Each measured part with its start (ms after the fence, parts before it summed)."""
        out, at = [], 0.0
        for p in self.parts:
            if p.ms is not None:
                out.append((p, at))
                at += p.ms
        return out


_WHAT = {
    "tool": "fence sent -> drain committed (t1 - t0)",
    "migration_znode": "drain committed -> /migration written and journaled",
    "election": "/migration written -> the new leader's BeginQuorumEpoch (followers at the "
                "log's end, EndQuorumEpoch, the vote)",
    "kafka_claim": "new leader -> /controller claimed by a KRaft controller (t2)",
    "reconcile": "/controller claimed -> KRAFT_CONTROLLER_TO_BROKER_COMM (Kafka's /migration "
                 "write and full sync of its image to ZooKeeper, SYNC_KRAFT_TO_ZK)",
    "broker_rpcs": "KRAFT_CONTROLLER_TO_BROKER_COMM -> DUAL_WRITE (full metadata to the "
                   "brokers)",
}


@dataclass(frozen=True, slots=True)
class ElectionSplit:
    """The election's sub-parts (`parts`), or None with the reason (`reason`)."""

    parts: tuple[WindowPart, ...] | None
    reason: str | None = None


_SUB_WHAT = {
    "before_end_epoch": "/migration written and journaled -> EndQuorumEpoch written to the new "
                        "leader's socket (every follower at the log's end first, a connection)",
    "followers_catch_up": "/migration written and journaled -> connections to the voters open "
                          "and the followers at the log's end known",
    "end_epoch_write": "-> EndQuorumEpoch handed to the new leader's socket",
    "end_epoch_to_candidate": "EndQuorumEpoch sent -> the new leader logs CandidateState "
                              "(its request handling, its quorum-state written)",
    "candidate_to_vote": "CandidateState -> its Vote request decoded by the stand-in",
    "vote_answer": "Vote request decoded -> the stand-in's grant written (its quorum-state "
                   "written first)",
    "vote_to_leader": "our grant -> the new leader logs Leader (its quorum-state written)",
    "candidate_to_leader": "CandidateState -> Leader (the votes it won)",
    "leader_to_begin_epoch": "Leader -> its BeginQuorumEpoch decoded by the stand-in (its "
                             "LeaderChange appended and flushed first)",
    "begin_epoch_to_stamp": "BeginQuorumEpoch decoded -> the run's new_leader stamp (the "
                            "stand-in's quorum-state written, resign() returned)",
}
_LOG_RESOLUTION_MS = 1.0
"""Kafka's log lines are stamped to the millisecond (truncated), so a sub-part from one of our
stamps to a log line may come out up to this much below zero when the clocks agree."""


def _first(events: Sequence[Mapping[str, Any]], kind: str, node: int,
           epoch: int | None = None) -> Mapping[str, Any] | None:
    for e in events:
        if e.get("kind") == kind and e.get("node") == node and (
                epoch is None or e.get("epoch") == epoch):
            return e
    return None


def election_split(
    stamps: Mapping[str, float],
    handover: Mapping[str, Any] | None,
    raft_events: Sequence[RaftEvent] | None,
    *,
    not_before_s: float | None,
    log_reason: str | None = None,
) -> ElectionSplit:
    """Split `election` (handoff -> new_leader) with the new leader's Raft log lines.

    Args:
        stamps: the run's monotonic stamps (`handoff`, `new_leader`).
        handover: the `handover` object of the report: `new_leader`, `new_epoch` and `events`
            (each `{"kind","node","epoch","wall_s","mono_s","detail"}`, `HandoverEvent`).
        raft_events: `parse_raft_lines` of the `--controller-log` files (None: none given).
        not_before_s: the fence's wall-clock time; older lines (less 2 s) are ignored.
        log_reason: why the logs could not be read, if they could not.

    Returns:
        The sub-parts in order, each a difference of two consecutive boundaries: on our
        monotonic clock when both are ours, on the wall clock otherwise. With our granted Vote
        to the new leader, `candidate_to_leader` is split at its Vote and our answer; with a
        `followers_at_end` event, `before_end_epoch` is split there into `followers_catch_up`
        and `end_epoch_write`.
    """
    if not handover or handover.get("new_leader", -1) < 0:
        return ElectionSplit(None, "no controller announced itself after EndQuorumEpoch")
    if "handoff" not in stamps or "new_leader" not in stamps:
        return ElectionSplit(None, "the run has no handoff or new_leader stamp")
    leader, epoch = int(handover["new_leader"]), int(handover["new_epoch"])
    events = handover.get("events") or []
    if not events:
        return ElectionSplit(None, "the report holds no handover events (an older zk2kraft)")
    if raft_events is None:
        return ElectionSplit(None, log_reason or "no --controller-log FILE given (the new "
                             "leader's server log)")
    floor = None if not_before_s is None else not_before_s - _LOG_TOLERANCE_S

    def line(state: str) -> float | None:
        for r in raft_events or ():
            if (r.node_id, r.state, r.epoch) == (leader, state, epoch) and (
                    floor is None or r.at_s >= floor):
                return r.at_s
        return None

    sent = _first(events, "end_quorum_epoch_sent", leader)
    begin = _first(events, "begin_quorum_epoch_received", leader, epoch)
    candidate, leads = line("CandidateState"), line("Leader")
    if sent is None:
        answered = _first(events, "end_quorum_epoch_answered", leader)
        return ElectionSplit(None, f"EndQuorumEpoch was never written to controller {leader}"
                             + (f" ({answered['detail']})" if answered else ""))
    if begin is None:
        return ElectionSplit(None, f"no BeginQuorumEpoch of controller {leader} at epoch "
                             f"{epoch} among the handover events")
    for state, at in (("CandidateState", candidate), ("Leader", leads)):
        if at is None:
            return ElectionSplit(None, f"no 'Completed transition to {state}(...epoch={epoch}"
                                 f"...)' line of controller {leader} in the --controller-log "
                                 "files after the fence")
    assert candidate is not None and leads is not None
    # boundaries: (sub-part ending here, ours?, monotonic s, wall s)
    bounds: list[tuple[str, bool, float, float]] = [("", True, stamps["handoff"], 0.0)]
    caught_up = _first(events, "followers_at_end", -1)
    if caught_up is not None:
        bounds += [("followers_catch_up", True, caught_up["mono_s"], caught_up["wall_s"]),
                   ("end_epoch_write", True, sent["mono_s"], sent["wall_s"])]
    else:
        bounds.append(("before_end_epoch", True, sent["mono_s"], sent["wall_s"]))
    bounds.append(("end_epoch_to_candidate", False, 0.0, candidate))
    vote = _first(events, "vote_received", leader, epoch)
    answer = _first(events, "vote_answered", leader, epoch)
    # The successor needs one grant besides its own: the other controller's may come first,
    # and then our grant (written later) is not on the election's path. On one host the
    # Leader line can only be later than what caused it, so a Leader line before our grant
    # means exactly that (seen in a benchmark run: docs/design/window.md, the election split).
    ours_counted = (vote is not None and answer is not None
                    and answer.get("detail") == "granted"
                    and (answer["wall_s"] - leads) * 1000.0 <= _LOG_RESOLUTION_MS)
    if ours_counted:
        assert vote is not None and answer is not None
        bounds += [("candidate_to_vote", True, vote["mono_s"], vote["wall_s"]),
                   ("vote_answer", True, answer["mono_s"], answer["wall_s"]),
                   ("vote_to_leader", False, 0.0, leads)]
    else:
        bounds.append(("candidate_to_leader", False, 0.0, leads))
    bounds += [("leader_to_begin_epoch", True, begin["mono_s"], begin["wall_s"]),
               ("begin_epoch_to_stamp", True, stamps["new_leader"], 0.0)]
    parts = []
    for (_, ours_a, mono_a, wall_a), (name, ours_b, mono_b, wall_b) in zip(
            bounds, bounds[1:], strict=False):
        if ours_a and ours_b:
            ms, source = (mono_b - mono_a) * 1000.0, "zk2kraft"
        else:
            ms = (wall_b - wall_a) * 1000.0
            source = "controller log" if not (ours_a or ours_b) else "zk2kraft + controller log"
        if ms < -_LOG_RESOLUTION_MS:
            return ElectionSplit(None, f"{name} came out {ms:.1f} ms: the controller's clock and "
                                 "ours disagree, or our stamp was taken late (the split needs "
                                 "both on one time)")
        parts.append(WindowPart(name, ms, source, _SUB_WHAT[name]))
    return ElectionSplit(tuple(parts))


def _between(stamps: Mapping[str, float], start: str, end: str) -> float | None:
    if start in stamps and end in stamps:
        return (stamps[end] - stamps[start]) * 1000.0
    return None


def window_parts(
    stamps: Mapping[str, float],
    *,
    standin: bool,
    handoff: KafkaHandoff | None,
    log_reason: str | None,
    missing: Mapping[str, str] | None = None,
    split: ElectionSplit | None = None,
) -> WindowParts:
    """Stack the window from the run's clock stamps and the controller's log.

    Args:
        stamps: monotonic seconds the run recorded: `fence` (t0), `drained` (t1), `handoff`
            (/migration written and journaled; EndQuorumEpoch or `--on-cutover` starts),
            `new_leader` (stand-in: the new leader announced itself), `claimed` (t2).
        standin: the stand-in transport was used (else local voter directories).
        handoff: Kafka's takeover read from the controller's log, if a log was given.
        log_reason: why there is no `handoff` (or why it is incomplete), for the log's parts.
        missing: part name -> reason, for stamps the run knows are missing and why.
        split: the election's sub-parts (`election_split`; stand-in only).

    Returns:
        The six parts of `PART_NAMES`, unmeasurable ones None with their reason.
    """
    why = dict(missing or {})

    def ours(name: str, start: str, end: str, default_reason: str) -> WindowPart:
        ms = _between(stamps, start, end)
        return WindowPart(name, ms, "zk2kraft", _WHAT[name],
                          None if ms is not None else why.get(name, default_reason))

    resumed = "fence" not in stamps
    no_fence = "the fence happened in an earlier run (resumed): t0 is not on this run's clock"
    parts = [
        ours("tool", "fence", "drained", no_fence if resumed else "the drain did not finish"),
        ours("migration_znode", "drained", "handoff",
             no_fence if resumed else "/migration was not written in this run"),
    ]
    if standin:
        election = ours("election", "handoff", "new_leader",
                        "no controller announced itself after EndQuorumEpoch within "
                        "--handoff-timeout")
        if split is not None:
            election = replace(election, parts=split.parts, parts_reason=split.reason)
        parts.append(election)
        parts.append(ours("kafka_claim", "new_leader", "claimed",
                          "no KRaft controller claimed /controller within --handoff-timeout"))
    else:
        parts.append(WindowPart(
            "election", None, "zk2kraft", _WHAT["election"],
            "local voter directories: the controllers start from --on-cutover, so their "
            "start and election are inside kafka_claim"))
        claim = ours("kafka_claim", "handoff", "claimed",
                     "no KRaft controller claimed /controller within --handoff-timeout")
        parts.append(WindowPart(claim.name, claim.ms, claim.source,
                                "--on-cutover started -> /controller claimed by a KRaft "
                                "controller (t2)", claim.reason))
    parts.extend(_log_parts(handoff, log_reason))
    return WindowParts(tuple(parts))


def _log_parts(handoff: KafkaHandoff | None, reason: str | None) -> list[WindowPart]:
    def part(name: str, start: float | None, end: float | None, missing: str) -> WindowPart:
        if start is None or end is None:
            return WindowPart(name, None, "controller log", _WHAT[name], missing)
        return WindowPart(name, (end - start) * 1000.0, "controller log", _WHAT[name])

    if handoff is None:
        why = reason or "no --controller-log FILE given (the new leader's server log)"
        return [WindowPart(n, None, "controller log", _WHAT[n], why)
                for n in ("reconcile", "broker_rpcs")]
    base = f"{reason}: " if reason else ""
    return [
        part("reconcile", handoff.claimed_s if handoff.claimed_s is not None
             else handoff.sync_s, handoff.broker_comm_s,
             base + ("no 'transitioning from ... to SYNC_KRAFT_TO_ZK state' line after the "
                     "fence" if handoff.sync_s is None else "no 'to "
                     "KRAFT_CONTROLLER_TO_BROKER_COMM state' line after SYNC_KRAFT_TO_ZK")),
        part("broker_rpcs", handoff.broker_comm_s, handoff.dual_write_s,
             base + ("the driver did not reach KRAFT_CONTROLLER_TO_BROKER_COMM"
                     if handoff.broker_comm_s is None
                     else "no 'to DUAL_WRITE state' line after KRAFT_CONTROLLER_TO_BROKER_COMM")),
    ]
