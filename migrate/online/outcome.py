"""What an online run reports (`OnlineOutcome`, the `migrate --json` document) and where it says
what it does (`StatusSink`); what it is given is `migrate.online.options`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from migrate.preflight.checks import PlanSummary

__all__ = ["CutoverRequest", "OnlineOutcome", "StatusSink", "round_ms"]

log = logging.getLogger("migrate.online.run")  # the run's messages, under the run's name


class CutoverRequest:
    """The operator's "cut over now" (`--cutover manual`): Enter, read by a thread, or SIGUSR1.

    Not a `threading.Event`: a signal handler runs in the main thread between two of its
    bytecodes, and `Event.set` takes the lock `Event.clear` holds, so a SIGUSR1 landing while
    the run clears a refused request (`broker_gate`) would wait on itself forever. The mirror
    polls the flag and nobody waits on it, so a plain attribute (one store, atomic under the
    GIL) is all it needs.
    """

    def __init__(self) -> None:
        self._asked = False
        # called by `is_set` first: the CLI reads the signals delivered (migrate.cli.signal_inbox)
        self.poll: Callable[[], None] | None = None

    def set(self) -> None:
        self._asked = True

    def clear(self) -> None:
        self._asked = False

    def is_set(self) -> bool:
        if self.poll is not None:
            self.poll()
        return self._asked


@dataclass
class OnlineOutcome:
    """What the online run did; `to_json` is the `--json` document."""

    summary: PlanSummary | None = None
    cutover: str = "now"
    resumed_from: str | None = None
    already_done: bool = False
    last_offset: int = -1
    precopy_records: int = 0
    mirrored_records: int = 0
    broker_records: int = 0  # appended by the stand-in for the brokers' registrations/heartbeats
    brokers_unregistered: list[int] | None = None  # at the fence (stand-in only)
    # brokers whose fetches the new leader did not see after the claim (stand-in only)
    brokers_not_following: list[int] | None = None
    mirror_steps: int = 0
    changes_seen: int = 0
    delta_records: int = 0
    window_tool_ms: float | None = None
    window_total_ms: float | None = None
    phase_ms: dict[str, float] = field(default_factory=dict)
    # drained -> handoff (window part `migration_znode`), split: `IntervalCost.finish`
    migration_znode_ms: dict[str, float] | None = None
    fence: dict[str, Any] | None = None
    migration_zk_version: int | None = None
    voters: list[dict[str, object]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    session_expiries: int = 0
    on_cutover_exit: int | None = None
    # --on-cutover had not exited when --handoff-timeout ran out with no claim (left running)
    on_cutover_still_running: bool = False
    claim_awaited: bool = False  # the run waited for a KRaft controller's claim (t2)
    messages: list[str] = field(default_factory=list)
    fence_at: float | None = None  # t0 on the run's clock, for the canary (migrate.online.canary)
    canary: dict[str, Any] | None = None  # the canary's figures, shown inside window_ms
    transport: dict[str, Any] = field(default_factory=lambda: {"kind": "voter-dirs"})
    handover: dict[str, Any] | None = None  # the stand-in's resignation (who leads, how fast)
    # the window's boundaries on the run's clock (fence, drained, handoff, new_leader, claimed)
    # and the fence's wall-clock time, for the stacked parts (migrate.online.window_report)
    stamps: dict[str, float] = field(default_factory=dict)
    # the same boundaries on the wall clock (time.time(), taken beside each monotonic stamp):
    # with the stand-in's handover events they line up with the new leader's own log lines
    wall_stamps: dict[str, float] = field(default_factory=dict)
    fence_wall_s: float | None = None
    parts: dict[str, Any] | None = None  # window_ms.parts, set by the command
    zk_brokers: list[int] = field(default_factory=list)  # /brokers/ids as mirrored at the fence
    problems: list[dict[str, str]] = field(default_factory=list)  # what Kafka did not confirm
    error: dict[str, Any] | None = None  # the error that ended a failed run, and its exit code

    @property
    def refused(self) -> bool:
        """True when blockers stopped the run before anything was written."""
        return self.summary is not None and bool(self.summary.report.blockers)

    @property
    def status(self) -> str:
        """ok | refused | failed (an error ended the run) | unconfirmed (exit 4: problems)."""
        if self.refused:
            return "refused"
        if self.error is not None:
            return "failed"
        return "unconfirmed" if self.problems else "ok"

    def to_json(self) -> dict[str, object]:
        """The `migrate --json` document: the plan summary plus the online figures."""
        doc: dict[str, object] = self.summary.to_json() if self.summary is not None else {}
        doc.update({
            "status": self.status,
            "problems": self.problems,
            "error": self.error,
            "cutover": self.cutover,
            "transport": self.transport,
            "handover": self.handover,
            "stamps": {k: {"mono_s": round(v, 6),
                           "wall_s": (round(self.wall_stamps[k], 6)
                                      if k in self.wall_stamps else None)}
                       for k, v in self.stamps.items()},
            "window_ms": {"tool": round_ms(self.window_tool_ms),
                          "total": round_ms(self.window_total_ms),
                          **(self.canary or {}),
                          **({} if self.parts is None else {"parts": self.parts})},
            "delta_records": self.delta_records,
            "mirrored_records": self.mirrored_records,
            "broker_records": self.broker_records,
            "brokers_unregistered_at_fence": self.brokers_unregistered,
            "brokers_not_following_new_leader": self.brokers_not_following,
            "precopy_records": self.precopy_records,
            "mirror_steps": self.mirror_steps,
            "changes_seen": self.changes_seen,
            "last_offset": self.last_offset,
            "phase_ms": {k: round_ms(v) for k, v in self.phase_ms.items()},
            "migration_znode_ms": (None if self.migration_znode_ms is None else
                                   {k: round_ms(v) for k, v in self.migration_znode_ms.items()}),
            "fence": self.fence,
            "migration_zk_version": self.migration_zk_version,
            "voters": self.voters,
            "repairs": self.repairs,
            "session_expiries": self.session_expiries,
            "on_cutover_exit_code": self.on_cutover_exit,
            "on_cutover_still_running": self.on_cutover_still_running,
            "resumed_from": self.resumed_from,
            "already_done": self.already_done,
            "no_op": self.already_done,
        })
        return doc


def round_ms(v: float | None) -> float | None:
    """A figure in ms as the report shows it (3 decimals)."""
    return None if v is None else round(v, 3)


class StatusSink:
    """Where the run reports progress; the command renders it (rich live view or lines)."""

    def say(self, line: str) -> None:
        """A message the operator must see (printed once)."""
        log.info("%s", line)

    def mirror(self, figures: dict[str, Any]) -> None:
        """The live mirror figures (records mirrored, changes/s, lag, voters)."""

    def mirror_ended(self) -> None:
        """The mirror stopped (the cutover begins): a live view of its figures goes."""
