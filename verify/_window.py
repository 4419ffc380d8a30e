"""The cutover window's parts, stacked: ours from our clock, Kafka's from its controller's log.

`migrate --cutover now|manual` reports `window_ms.tool` (t1 − t0) and `total` (t2 − t0). This
module splits the window into consecutive parts, so that they stack, and says for each part
where its figure comes from or why there is none:

Ours, on zk2kraft's monotonic clock:
* `tool`: fence sent (t0) → drain committed (t1);
* `migration_znode`: t1 → `/migration` written and journaled;
* `election` (stand-in only): EndQuorumEpoch sent → the new leader's BeginQuorumEpoch;
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

Kafka 3.9's migration driver (`KRaftMigrationDriver`) logs, at INFO:
`<id> transitioning from <STATE> to <STATE> state` on every state change and
`Claimed ZK controller leadership in <n> ns. Transitioned migration state from … to …` once it
holds `/controller`. Pure: lines in, figures out; reading the file is the caller's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = ["DriverEvent", "KafkaHandoff", "WindowPart", "WindowParts", "kafka_handoff",
           "parse_driver_lines", "window_parts"]

_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)[,.](\d{3})\]")
_TRANSITION = re.compile(r"\b(\d+) transitioning from (\w+) to (\w+) state")
_CLAIMED = re.compile(r"Claimed ZK controller leadership")
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

    def to_json(self) -> dict[str, object]:
        return {"ms": None if self.ms is None else round(self.ms, 3), "source": self.source,
                "what": self.what, "reason": self.reason}


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
    "election": "EndQuorumEpoch sent -> new leader's BeginQuorumEpoch",
    "kafka_claim": "new leader -> /controller claimed by a KRaft controller (t2)",
    "reconcile": "/controller claimed -> KRAFT_CONTROLLER_TO_BROKER_COMM (Kafka's /migration "
                 "write and full sync of its image to ZooKeeper, SYNC_KRAFT_TO_ZK)",
    "broker_rpcs": "KRAFT_CONTROLLER_TO_BROKER_COMM -> DUAL_WRITE (full metadata to the "
                   "brokers)",
}


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
        parts.append(ours("election", "handoff", "new_leader",
                          "no controller announced itself after EndQuorumEpoch within "
                          "--handoff-timeout"))
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
