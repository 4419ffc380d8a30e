"""`migrate --cutover now|manual`: pre-copy, mirror, fenced cutover, drain, handoff (online).

Order, and why (docs/design.md "Online migration", I1-I8; Kafka's `KRaftMigrationDriver`,
`KafkaZkClient`):

1. The voters' `.lock`s are taken first and held to the end (`LocalVoterQuorum`), so no
   controller starts on a log that is still being written. One long-lived ZooKeeper session.
2. Pre-flight, then pre-copy: the whole tree is read with a watch on every znode and judged as
   `plan` judges it (`plan --standin` for the stand-in) before the transport opens, since
   opening writes (the stand-in's election and bootstrap commit on the controllers' disks, the
   journal): a refused run writes nothing anywhere. That tree is then translated and written to
   the *live* logs after `FeatureLevelRecord` + `BeginTransactionRecord`, durable on a majority.
   The transaction stays open: a controller started on this log now would discard it all.
3. Mirror: every notification leads to a re-read (which re-arms its watch) and the delta
   records, appended in notification order and durable before the next step. A connection loss
   re-arms the watches at the last zxid (`ChangeFeed`); a session expiry loses them, so the
   whole tree is re-read and the difference written, and the output says so.
4. Gate, then t0 and the fence (`zkreader.fence_zk_controller`, one multi-op). It writes
   `/migration` only at the version the pre-copy (or a resume's re-read) judged: one rewritten
   since fails the fence, nothing applied, no retry (`MigrationMovedError`).
5. Drain: `sync()` and every notification before its reply delivered, re-read what changed
   before the fence, append the final delta,
   `ZkMigrationStateRecord(MIGRATION)` and `EndTransactionRecord`, durable: t1. Then `/migration`
   with the last offset, checking the fence's `/controller_epoch` version (I4).
6. Handoff: `--on-cutover CMD`; t2 when a KRaft controller's claim of `/controller` carries a
   higher `kraftControllerEpoch` than ours. t0, t1, t2 come from one monotonic clock.

Every phase change is journaled (`journal.Journal`) before the next step, so a kill -9
anywhere resumes: before the fence by replaying the log into its image, re-reading the whole
tree with its watches armed again and writing the difference (removals included), then
mirroring on; at `fencing` by reading back whether the fence applied (never fencing twice);
after it by finishing the drain. The journal keeps every claim any run of this migration sent
(`Journal.claims`): a killed run's fence may still be in flight when the re-run reads back "not
applied" and apply later, so the read-back, the re-run's judgement of a KRaft `/controller`
and its own fence's failure all take any of those claims in `/controller` for our fence applied
(`_our_applied_fence`) and finish the drain; any other claim stays another controller's.

A notification's delta is per entity, O(changes): `zkreader.changed_entities` names the
entities, `zkreader.read_entities` re-reads them and `migrate.entities.delta_records` diffs them
against the log's `MetadataImage`. Where nobody knows what changed (a session expiry, a resume,
the drain of a run resumed past the fence), the whole tree is re-read and the same
`delta_records` runs over `resync_keys(image, snapshot)`: every entity either the log or
ZooKeeper holds, so what ZooKeeper dropped meanwhile gets its removal record. O(cluster), and
only in those cases.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrate._bulk import VoterTarget, judge
from migrate._pipeline import rest_counts, snapshot_timestamp_ms, translate_rest
from migrate._preflight import PlanSummary, standin_migration_finding, standin_summary
from migrate._standinargs import StandInSpec
from migrate._translate_framing import (
    ZK_MIGRATION_STATE_MIGRATION,
    scram_restatement_records,
)
from migrate.entities import EntityDelta, delta_records, resync_keys
from migrate.errors import BadFlagError, BlockersFoundError
from migrate.online.journal import Journal
from migrate.online.mirror_delta import LogState
from migrate.online.phase import Phase
from migrate.online.takeover import explain_takeover, refused_fence_advice
from migrate.online.transport import open_standin
from migrate.translate import TranslationOptions, header_records, trailer_records
from verify import MetadataImage, apply_records
from writers import (
    ControlRecord,
    LocalVoterQuorum,
    MetadataRecord,
    MetadataVersion,
    QuorumLedElsewhereError,
    QuorumLog,
    ReadPause,
    VoterStateError,
    VoterUnavailableError,
    crash_when,
    encode_record,
    hold_voter_locks,
    precopy_chunk,
)
from writers import crash_point as _crash  # test-only hooks (writers/_faults.py)
from writers import pause_point as _pause
from zkreader import (
    MIGRATION_ABSENT,
    ChangeEvent,
    ClusterIdZnode,
    ClusterSnapshot,
    ConnectOptions,
    ControllerMovedError,
    FenceState,
    FenceToken,
    MigrationMovedError,
    MigrationState,
    MigrationZnode,
    ZkSession,
    ZkSessionExpiredError,
    ZkUnreachableError,
    changed_entities,
    claim_json,
    fence_zk_controller,
    kind_for_path,
    open_session,
    paused_gc,
    read_cluster,
    read_entities,
    read_fence_state,
    write_migration_state,
)

__all__ = ["OnlineOptions", "OnlineOutcome", "check_cutover_version", "run_online"]

log = logging.getLogger(__name__)

_LEADER_EPOCH = 1
_IGNORED = ("/controller", "/controller_epoch", "/migration", "/admin/reassign_partitions",
            "/log_dir_event_notification", "/isr_change_notification")
_MIGRATION_PATH = "/migration"
_OWN_CLAIM = frozenset({"MIGRATION_ZNODE_EXISTS", "CONTROLLER_IS_KRAFT"})


def _crash_in_flight(session: ZkSession, point: str) -> Callable[[], None] | None:
    """The crash hook (test-only, `writers.crash_when`) for a multi-op in flight: a callback for
    zkreader's `in_flight` that fires once kazoo has written the request to the socket, so the
    kill leaves a request sent whose reply nobody reads. None when the hook is not asked for."""
    return crash_when(point, session.requests_written)


def check_cutover_version(mv: MetadataVersion) -> None:
    """`--cutover now|manual` writes a metadata transaction: metadata.version >= 3.6-IV1.

    Raises:
        BadFlagError: an older metadata.version (exit 2, says why).
    """
    if not mv.supports_transactions:
        raise BadFlagError(
            f"--metadata-version {mv.name}: an online cutover keeps the copied records "
            "inside an open metadata transaction (BeginTransactionRecord) until the fence, and "
            "metadata transactions need metadata.version 3.6-IV1 or later; use "
            "--cutover none for an offline copy at this version"
        )


@dataclass(frozen=True, slots=True)
class OnlineOptions:
    """Everything `run_online` needs, already checked by the command.

    Attributes:
        connect: ZooKeeper connection options.
        voters: the `--voter` targets; the first is the id written into `/controller`.
        metadata_version: `--metadata-version` (>= 3.6-IV1).
        password_encoder_secret: the brokers' secret (never logged).
        cutover: "now" or "manual".
        on_cutover: the `--on-cutover` shell command, if any.
        journal_dir: where the journal lives.
        overrides: attribute names of blocker override flags given.
        lag_bound_s: the gate's bound on the mirror's lag.
        handoff_timeout_s: how long to wait for a KRaft controller's claim (t2).
        broker_wait_s: with the stand-in, how long the gate waits for every ZooKeeper broker
            to be registered and unfenced with it (Kafka's WAIT_FOR_BROKERS) before it cuts
            over anyway, with a warning.
    """

    connect: ConnectOptions
    voters: tuple[VoterTarget, ...]
    metadata_version: MetadataVersion
    cutover: str
    journal_dir: Path
    password_encoder_secret: str | None = field(default=None, repr=False)
    on_cutover: str | None = None
    overrides: frozenset[str] = frozenset()
    lag_bound_s: float = 1.0
    handoff_timeout_s: float = 120.0
    broker_wait_s: float = 60.0
    standin: StandInSpec | None = None  # the stand-in transport instead of local voter dirs


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
    # drained -> handoff (window part `migration_znode`), split: `_IntervalCost.finish`
    migration_znode_ms: dict[str, float] | None = None
    fence: dict[str, Any] | None = None
    migration_zk_version: int | None = None
    voters: list[dict[str, object]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    session_expiries: int = 0
    on_cutover_exit: int | None = None
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
            "window_ms": {"tool": _r(self.window_tool_ms), "total": _r(self.window_total_ms),
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
            "phase_ms": {k: _r(v) for k, v in self.phase_ms.items()},
            "migration_znode_ms": (None if self.migration_znode_ms is None else
                                   {k: _r(v) for k, v in self.migration_znode_ms.items()}),
            "fence": self.fence,
            "migration_zk_version": self.migration_zk_version,
            "voters": self.voters,
            "repairs": self.repairs,
            "session_expiries": self.session_expiries,
            "on_cutover_exit_code": self.on_cutover_exit,
            "resumed_from": self.resumed_from,
            "already_done": self.already_done,
            "no_op": self.already_done,
        })
        return doc


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


def _main_thread_runqueue_ns() -> int | None:
    """Nanoseconds this process's main thread has waited for a CPU (`/proc/self/schedstat`'s
    second field; the thread group leader is the main thread), or None where it is not kept."""
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None


class _IntervalCost:
    """Where one interval's wall time went: named waits (journal fsyncs, ZooKeeper round trips)
    timed inside it, the process's CPU time across it (all threads, and the main thread's, which
    runs the interval), and how long the main thread waited for a CPU (the host's load).
    Reported as `migration_znode_ms` for drained -> handoff."""

    def __init__(self, clock: Callable[[], float], start: float) -> None:
        self.clock = clock
        self.start = start
        self.cpu_start = time.process_time()
        self.main_cpu_start = time.thread_time()
        self.runqueue_start = _main_thread_runqueue_ns()
        self.waits: dict[str, float] = {}

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        began = self.clock()
        try:
            yield
        finally:
            self.waits[name] = self.waits.get(name, 0.0) + (self.clock() - began) * 1000.0

    def finish(self, end: float) -> dict[str, float]:
        total = (end - self.start) * 1000.0
        out = {"total": total, **self.waits,
               "cpu": (time.process_time() - self.cpu_start) * 1000.0,
               "cpu_main_thread": (time.thread_time() - self.main_cpu_start) * 1000.0}
        runqueue = _main_thread_runqueue_ns()
        if runqueue is not None and self.runqueue_start is not None:
            out["runqueue_wait"] = (runqueue - self.runqueue_start) / 1e6
        return out


_MARKERS = frozenset({"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
                      "ABORT_TRANSACTION_RECORD"})


class _LogView:
    """What the log holds: the shared `MetadataImage` every delta (`delta_records`) compares
    against, and its framing (`LogState`: transaction open? ZkMigrationStateRecord written?)."""

    def __init__(self) -> None:
        self.image = MetadataImage.EMPTY
        self.framing = LogState()

    def apply(self, records: Sequence[MetadataRecord | ControlRecord]) -> None:
        self.framing.apply(records)
        meta = [r for r in records
                if isinstance(r, MetadataRecord) and r.type not in _MARKERS]
        if meta:
            self.image = apply_records(self.image, meta)


class StatusSink:
    """Where the run reports progress; the command renders it (rich live view or lines)."""

    def say(self, line: str) -> None:
        """A message the operator must see (printed once)."""
        log.info("%s", line)

    def mirror(self, figures: dict[str, Any]) -> None:
        """The live mirror figures (records mirrored, changes/s, lag, voters)."""

    def mirror_ended(self) -> None:
        """The mirror stopped (the cutover begins): a live view of its figures goes."""


# ----------------------------------------------------------------------------- the run


class _Run:
    def __init__(self, options: OnlineOptions, session: ZkSession, quorum: QuorumLog,
                 journal: Journal, sink: StatusSink, clock: Callable[[], float],
                 trigger: threading.Event, release_locks: Callable[[], None],
                 opened_at: int = -1, preflight: _Preflight | None = None) -> None:
        self.o = options
        self.preflight = preflight  # the tree read and judged before anything was written
        self.opened_at = opened_at  # last offset the transport wrote on opening (stand-in)
        self.release_locks = release_locks
        self.session = session
        self.quorum = quorum
        self.journal = journal
        self.sink = sink
        self.clock = clock
        self.trigger = trigger
        self.mv = options.metadata_version
        self.topts = _translation_options(options)
        self.log = _LogView()
        self.out = OnlineOutcome(cutover=options.cutover)
        self.controller_id = options.voters[0].node_id
        self.epoch = quorum.leader_epoch
        self._rate: list[tuple[float, int]] = []
        self._last_lag = 0.0
        self._warned: set[str] = set()
        self._last_ts = 0
        self._applied_early = False
        self._watching = False  # this process armed a watch on every entity (pre-copy/resync)
        # /migration's znode version in the tree this process judged (pre-copy or resync): the
        # fence writes it only at that version
        self._migration_judged: int | None = None
        self._broker_wait_start: float | None = None  # the gate began waiting for brokers
        self._after_drain: _IntervalCost | None = None  # t1 -> handoff, when t1 is this run's
        self._gc_paused = contextlib.ExitStack()  # the collector's pause, fence -> handoff's end

    # -- helpers ---------------------------------------------------------------------------

    def _append(self, records: Sequence[MetadataRecord], snapshot: ClusterSnapshot) -> None:
        """Append durably, then account for it in what the log holds."""
        if records:
            self.quorum.append_records(records, timestamp_ms=self._ts(snapshot))
            self.log.apply(records)
            self.journal.save(last_durable_offset=self.quorum.durable_offset)

    def _ts(self, snapshot: ClusterSnapshot | None) -> int:
        """Batch timestamp: the newest ZooKeeper mtime seen so far (I6: no wall clock)."""
        if snapshot is not None:
            self._last_ts = max(self._last_ts, snapshot_timestamp_ms(snapshot))
        return self._last_ts

    def _absorb_quorum_records(self) -> None:
        """Add what the quorum appended on its own (the stand-in: the brokers' registrations and
        fencing changes) to what the log holds, before a delta is computed against it."""
        own = self.quorum.take_own_records()
        if own:
            self.log.apply(own)
            self.out.broker_records += len(own)

    def _resync_delta(self, snapshot: ClusterSnapshot) -> EntityDelta:
        """The records that make the log hold exactly `snapshot`: every entity either side
        holds is diffed, so what only the log still holds gets its removal record."""
        self._absorb_quorum_records()
        return delta_records(self.log.image, snapshot, resync_keys(self.log.image, snapshot),
                             self.topts)

    def _read(self, *, watch: bool) -> ClusterSnapshot:
        """Read the tree, surviving connection losses and (loudly) session expiries."""
        if self.session.expired.is_set():
            self.session.expired.clear()
            self.out.session_expiries += 1
            self.sink.say("ZooKeeper session expired: its watches are gone; re-reading the "
                          "whole tree and writing the difference")
        return _read_tree(self.session, watch=watch, clock=self.clock)

    def _voters(self) -> list[dict[str, object]]:
        return [s.to_json() for s in self.quorum.voter_status()]

    def _check_log_is_ours(self) -> None:
        if self.quorum.last_offset <= self.opened_at:
            return
        if not self.log.framing.transaction_open and self.log.framing.migration_state is None:
            raise VoterStateError(
                "the voters hold a metadata log this tool did not leave open (no open "
                "'ZK Migration' transaction and no journal state for it); refusing to write "
                "into it. Point --voter at empty directories, or --journal at this run's journal")

    def _timed(self, name: str) -> contextlib.AbstractContextManager[None]:
        """Time a wait inside drained -> handoff (`migration_znode_ms`) when t1 is this run's."""
        meter = self._after_drain
        return contextlib.nullcontext() if meter is None else meter.timed(name)

    # -- phases ----------------------------------------------------------------------------

    def run(self) -> OnlineOutcome:
        j = self.journal
        for batch in self.quorum.read_log():
            self.log.apply(batch.records)
        if self.quorum.last_offset > self.opened_at:
            self.out.resumed_from = j.phase.value
            self.sink.say(f"resuming in phase {j.phase}: the log holds offsets 0.."
                          f"{self.quorum.last_offset}")
        if j.phase is Phase.DONE:
            self.out.already_done = True
            self._finish_report()
            return self.out
        token: FenceToken | None = None
        if j.phase is Phase.FENCING or (j.claims and not j.at_least(Phase.FENCED)):
            # at `fencing`, or before it with a fence sent by an earlier run: in flight then,
            # it may have applied since
            token = self._fence_readback()
        elif j.at_least(Phase.FENCED):
            assert j.fence is not None
            token = FenceToken.from_json(j.fence)
        t0 = t1 = None
        with self._gc_paused:  # from the fence (`_mirror_and_fence`) to the handoff's end
            if token is None:
                try:
                    t0, t1, token = self._mirror_and_fence()
                except _OurFenceFound as found:
                    token = found.token  # no t0: the window began in an earlier run
            try:
                if not j.at_least(Phase.DRAINED):
                    t1 = self._drain_explained(token)  # a resumed drain explains as the first does
                if not j.at_least(Phase.MIGRATION):
                    self._write_migration(token)
            except VoterUnavailableError as exc:
                if "ZooKeeper IS fenced" in str(exc):
                    raise
                raise VoterUnavailableError(_fenced_without_log(exc, self.controller_id, token)
                                            ) from exc
            t2 = self._handoff(token)
        if t2 is not None:
            self.out.stamps["claimed"] = t2
        if t0 is not None and t1 is not None:
            self.out.window_tool_ms = (t1 - t0) * 1000.0
            self.out.window_total_ms = None if t2 is None else (t2 - t0) * 1000.0
        self.out.fence = {"controller_epoch": token.controller_epoch,
                          "epoch_zk_version": token.epoch_zk_version}
        self._finish_report()
        j.enter(Phase.DONE, facts=self._facts())
        return self.out

    def _mirror_and_fence(self) -> tuple[float, float | None, FenceToken]:
        """Pre-copy (or the resume's resync), mirror, fence and drain: t0, t1 and the token.

        Raises:
            _OurFenceFound: a fence an earlier run sent turned out applied (`_our_applied_fence`).
        """
        j = self.journal
        if not j.at_least(Phase.MIRROR):
            self._check_log_is_ours()
            self._precopy()
        else:
            self._resync_resumed()
        self._mirror_until_cutover()
        # The window must not pay for the collector walking the pre-copy's millions of
        # objects (a full pass costs tenths of a second at 100k partitions): freeze what
        # exists and keep the collector off from the fence to the end of the handoff (`run`),
        # so the pass the fence and drain owe does not land on /migration's write (~5 ms of
        # CPU there at 1,000 partitions) or the handoff either.
        self.out.zk_brokers = sorted(self.log.image.cluster.brokers)
        for record in trailer_records(self.mv):
            encode_record(record)  # their encoders compile on first use: now, not in t0..t1
        gc.collect()
        gc.freeze()
        t1 = None
        self._gc_paused.enter_context(paused_gc())
        t0, token = self._fence()
        self.out.fence_at = t0
        self.out.stamps["fence"] = t0
        if not j.at_least(Phase.DRAINED):
            t1 = self._drain_explained(token)
            if t1 is not None:
                self.out.stamps["drained"] = t1
        return t0, t1, token

    def _facts(self) -> dict[str, Any]:
        return {"last_offset": self.quorum.last_offset, "fence": self.out.fence,
                "window_ms": {"tool": _r(self.out.window_tool_ms),
                              "total": _r(self.out.window_total_ms)}}

    def _finish_report(self) -> None:
        self.out.last_offset = self.quorum.last_offset
        self.out.voters = self._voters()
        if self.out.already_done:
            facts = self.journal.facts
            self.out.fence = facts.get("fence")
            self.out.migration_zk_version = self.journal.migration_zk_version
            self.sink.say(f"this migration already finished (journal {self.journal.path}); "
                          "nothing to do")

    def _judge(self, snapshot: ClusterSnapshot, *, after_fence: bool = False) -> PlanSummary:
        summary = _judge_tree(self.o, self.topts, snapshot)
        if after_fence:
            # Past the fence the go/no-go was decided (by the pre-copy, maybe in an earlier
            # run); the claim and /migration it finds now are our own.
            summary = _without(summary, _OWN_CLAIM)
        return summary

    def _precopy(self) -> None:
        start = self.clock()
        if self.preflight is not None:
            # a fresh run: the tree the pre-flight read (watches armed) and judged before the
            # transport opened; what changed since is in the change feed, for the mirror
            snapshot, self.out.summary = self.preflight.snapshot, self.preflight.summary
            self.preflight = None
        else:  # a resume inside the pre-copy: read and judge afresh
            snapshot = self._read(watch=True)
            self.out.summary = self._judge(snapshot)
        if self.out.summary.report.blockers:
            raise _Refused()
        self._migration_judged = _znode_version(snapshot.migration)
        header: list[MetadataRecord] = []
        if self.quorum.last_offset <= self.opened_at:
            header = header_records(self.mv)
            self.quorum.append_records(header, timestamp_ms=self._ts(snapshot))
            self.log.apply(header)
        # On a fresh log the image is empty and this is the bulk copy; a resumed pre-copy also
        # removes what ZooKeeper dropped while the tool was down.
        body = self._resync_delta(snapshot).records
        delta = header + body
        self.sink.say(f"pre-copy: writing {len(delta)} records into the live logs of voter(s) "
                      f"{', '.join(str(t.node_id) for t in self.o.voters)} (transaction open)")
        chunk = precopy_chunk()
        for i in range(0, len(body), chunk):
            self._append(body[i:i + chunk], snapshot)
            _crash("precopy_batch")
        self.out.precopy_records = len(delta)
        # The stand-in's brokers register from now on: after the ZooKeeper copies of their
        # registrations, which theirs supersede (docs/design.md "Brokers register with the
        # stand-in"); local voters take none.
        self.quorum.serve_brokers(self.mv)
        self.journal.enter(Phase.MIRROR, last_durable_offset=self.quorum.durable_offset)
        self._watching = True
        self.out.phase_ms["precopy"] = (self.clock() - start) * 1000.0
        self.sink.say(f"pre-copy durable on a majority: offsets 0..{self.quorum.last_offset}")

    def _resync_resumed(self) -> None:
        """A resume before the fence: the crashed run's watches died with its session and
        ZooKeeper may have changed or dropped anything meanwhile. Re-read the whole tree with
        every watch armed again, write the difference (removals included) and mirror on, so
        the drain again covers only what changes from here."""
        start = self.clock()
        snapshot = self._read(watch=True)
        self.out.summary = self._judge(snapshot)
        if self.out.summary.report.blockers:
            if self.journal.claims and any(
                    f.code in _OWN_CLAIM for f in self.out.summary.report.blockers):
                # the KRaft claim judged may be a fence an earlier run sent that applied after
                # this run read back "not applied": ours, then, not another controller's
                earlier = self._our_applied_fence(read_fence_state(self.session, synced=True))
                if earlier is not None:
                    self.out.summary = _without(self.out.summary, _OWN_CLAIM)
                    raise _OurFenceFound(earlier)
            raise _Refused()
        self._migration_judged = _znode_version(snapshot.migration)
        self._check_log_is_ours()
        delta = self._resync_delta(snapshot)
        chunk = precopy_chunk()
        for i in range(0, len(delta.records), chunk):
            self._append(delta.records[i:i + chunk], snapshot)
        self._ts(snapshot)
        self._watching = True
        self.out.mirrored_records += len(delta.records)
        self.out.phase_ms["resync"] = (self.clock() - start) * 1000.0
        self.sink.say(f"resume: re-read the whole tree (watches armed again); "
                      f"{len(delta.records)} record(s) of difference written, offsets "
                      f"0..{self.quorum.last_offset}")

    def _pending(self) -> list[ChangeEvent]:
        events = self.session.changes.drain()
        return [e for e in events if not e.path.startswith(_IGNORED)]

    def mirror_step(self, events: list[ChangeEvent]) -> int:
        """Re-read (re-arming the watches), append the delta; returns records written."""
        forced = self.session.expired.is_set()
        if not events and not forced:
            self._last_lag = 0.0
            return 0
        now = self.clock()
        if events:
            self._last_lag = now - min(e.at for e in events)
        try:
            delta = self._delta(events, watch=True)
        except BlockersFoundError as exc:  # a topic reusing another's id (refuse_reused_topic_ids)
            raise BlockersFoundError(f"{exc} Stopped before the fence: ZooKeeper was not "
                                     "changed and its controller keeps running.") from None
        _crash("mirror_append")
        self.out.mirrored_records += len(delta)
        self.out.mirror_steps += 1
        self.out.changes_seen += len(events)
        self._rate.append((self.clock(), len(events)))
        return len(delta)

    def _delta(self, events: list[ChangeEvent], *, watch: bool, append: bool = True
               ) -> list[MetadataRecord]:
        """Re-read what the events name (watches re-armed) and append the delta, durably.

        After a session expiry the watches are gone and nobody knows what changed while they
        were: the whole tree is re-read and compared by record identity instead.
        """
        if self.session.expired.is_set():
            snapshot = self._read(watch=watch)
            delta = self._resync_delta(snapshot).records
            if delta:
                self.log.apply(delta)  # the image and the framing (SCRAM removals) alike
                self._applied_early = True
                if append:
                    self.quorum.append_records(delta, timestamp_ms=self._ts(snapshot))
                    self.journal.save(last_durable_offset=self.quorum.durable_offset)
            self.sink.say(f"re-read the whole tree after the session expiry: {len(delta)} "
                          "record(s) of difference")
            return delta
        self._absorb_quorum_records()
        try:
            keys = self._retrying(lambda: changed_entities(
                self.session, [e.path for e in events], watch=watch))
            if not keys:
                return []
            part = self._retrying(lambda: read_entities(self.session, keys, watch=watch,
                                                            pause=ReadPause.from_env()))
        except _SessionExpired:
            return self._delta(events, watch=watch)  # the whole-tree branch above (appends)
        result = delta_records(self.log.image, part, keys, self.topts)
        for b in result.blockers:
            self._warn_once(f"blocker:{b.code}:{b.path}", f"WARNING: {b.code} at {b.path}: "
                            f"{b.message} (left out of the log)")
        if append:
            self._append(result.records, part)
        else:
            self._ts(part)
        return result.records

    def _sync(self) -> None:
        """`sync()` before the drain's reads, then every notification that came before its
        reply delivered to the change feed (kazoo runs watch callbacks on another thread); a
        session that expired meanwhile is noted (the drain then compares the whole tree) and
        the new session is synced instead."""
        for _ in range(2):
            try:
                self.session.retrying(lambda: self.session.kazoo.sync("/"), "/")
                self.session.run_queued_watch_callbacks()
                return
            except ZkSessionExpiredError:
                self.session.expired.set()
                time.sleep(0.2)
        self.session.retrying(lambda: self.session.kazoo.sync("/"), "/")
        self.session.run_queued_watch_callbacks()

    def _retrying(self, fn: Callable[[], Any]) -> Any:
        """Entity reads survive connection losses (the feed re-arms the watches)."""
        deadline = self.clock() + max(self.session.retry_s, 30.0)
        while True:
            try:
                return fn()
            except ZkUnreachableError as exc:
                if self.session.expired.is_set() or isinstance(exc, ZkSessionExpiredError):
                    self.session.expired.set()
                    raise _SessionExpired() from exc
                if self.clock() > deadline:
                    raise
                time.sleep(0.2)

    def _figures(self) -> dict[str, Any]:
        now = self.clock()
        self._rate = [(t, n) for t, n in self._rate if now - t <= 5.0]
        rate = sum(n for _, n in self._rate) / 5.0
        return {"records_mirrored": self.out.mirrored_records, "changes_per_s": rate,
                "lag_s": self._last_lag, "last_offset": self.quorum.last_offset,
                "voters": self._voters(), "steps": self.out.mirror_steps}

    def _mirror_until_cutover(self) -> None:
        start = self.clock()
        if self.o.cutover == "manual":
            self.sink.say("mirroring: press Enter (on a terminal) or send SIGUSR1 to pid "
                          f"{os.getpid()} to cut over")
        else:
            self.sink.say("mirroring until caught up, then cutting over")
        gate_start: float | None = None
        while True:
            events = self._pending()
            if not events and not self.session.expired.is_set():
                first = self.session.changes.get(timeout=0.05)
                if first is not None and not first.path.startswith(_IGNORED):
                    events = [first, *self._pending()]
            self.mirror_step(events)
            self.sink.mirror(self._figures())
            wants_cutover = self.o.cutover == "now" or self.trigger.is_set()
            if not wants_cutover:
                continue
            if gate_start is None:
                gate_start = self.clock()
                self.out.phase_ms["mirror"] = (gate_start - start) * 1000.0
            if self._gate_open(caught_up=not events):
                self.out.phase_ms["gate"] = (self.clock() - gate_start) * 1000.0
                self.sink.mirror_ended()
                return

    def _warn_once(self, key: str, line: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.sink.say(line)

    def _gate_open(self, *, caught_up: bool) -> bool:
        if not self.quorum.majority_writable:
            raise VoterUnavailableError(
                "a majority of voters is no longer writable: stopping before the fence "
                "(ZooKeeper was not changed; its controller keeps running)")
        if not caught_up and self._last_lag > self.o.lag_bound_s:
            return False
        events = self.session.get_children("/log_dir_event_notification") or []
        if events:
            self._warn_once("logdir", f"cutover waits: {len(events)} unprocessed "
                            "/log_dir_event_notification event(s) (the ZooKeeper controller "
                            "must handle them first)")
            return False
        if self.session.get("/admin/reassign_partitions") is not None:
            self._warn_once("reassign", "WARNING: cutover waits for /admin/reassign_partitions "
                            "(a reassignment submitted the ZooKeeper way) to finish")
            return False
        return self._brokers_registered()

    def _brokers_registered(self) -> bool:
        """With the stand-in: every broker ZooKeeper lists is registered with it, unfenced and
        heartbeating (only a heartbeat to the stand-in unfences; a ZooKeeper copy is fenced).
        Kafka's own migration waits for the brokers in WAIT_FOR_BROKERS; a broker that registers
        only with the next controller makes it repeat its UpdateMetadata round (docs/design.md).
        """
        self._absorb_quorum_records()
        held = self.quorum.broker_registrations()
        if held is None:  # local voters: the brokers register with the controllers started next
            return True
        waiting = sorted(b for b in self.log.image.cluster.brokers
                         if b not in held or not held[b][1])
        if not waiting:
            if self._broker_wait_start is not None:
                self.sink.say("every broker is registered with the stand-in and unfenced")
            self.out.brokers_unregistered = []
            return True
        now = self.clock()
        if self._broker_wait_start is None:
            self._broker_wait_start = now
            self.sink.say(f"cutover waits for broker(s) {waiting} to register with the stand-in "
                          f"and be unfenced (at most {self.o.broker_wait_s:g}s)")
        if now - self._broker_wait_start < self.o.broker_wait_s:
            return False
        self.out.brokers_unregistered = waiting
        self._warn_once("brokers", f"WARNING: broker(s) {waiting} did not register with the "
                        f"stand-in within {self.o.broker_wait_s:g}s (are they in migration mode "
                        "with controller.quorum.voters?); cutting over: they register with the "
                        "next controller")
        return True

    def _fence(self) -> tuple[float, FenceToken]:
        ts = int(time.time() * 1000)
        self.out.fence_wall_s = ts / 1000.0
        claim = claim_json(self.controller_id, self.epoch, ts)
        self.journal.add_claim(claim.decode())
        _pause("before_fence")
        _crash("before_fence")
        sent: list[tuple[float, float]] = []
        # every way here passes the pre-copy or the resync, which judged /migration
        assert self._migration_judged is not None
        self._adopt_controllers_migration_znode()
        retries = 3  # each for a new version of an empty /migration; a loop that never settles
        while True:
            try:
                token = fence_zk_controller(
                    self.session, kraft_controller_id=self.controller_id,
                    kraft_epoch=self.epoch, timestamp_ms=ts,
                    migration_version=self._migration_judged,
                    on_sent=lambda: sent.append((self.clock(), time.time())),
                    in_flight=_crash_in_flight(self.session, "fence_sent"))
                break
            except MigrationMovedError as exc:
                # nothing applied; a controller that created its empty /migration between the
                # read above and the multi-op is taken over like one created earlier
                retries -= 1
                if retries < 0 or not self._adopt_controllers_migration_znode():
                    raise MigrationMovedError(self._migration_moved_advice(exc)) from None
            except ControllerMovedError:
                # Someone fenced first. An earlier run's fence, still in flight when this run
                # read back "not applied", is one of them: its claim is journaled, and it is ours.
                earlier = self._our_applied_fence(read_fence_state(self.session, synced=True))
                if earlier is None:
                    raise
                raise _OurFenceFound(earlier) from None
        # the wall-clock times are taken where each boundary is, beside its monotonic stamp
        t0, self.out.wall_stamps["fence"] = sent[-1]
        # No journal write here: it would sit inside the window, and the `fencing` entry (our
        # exact claim) already lets a resume read back that the fence applied.
        self.out.phase_ms["fence"] = (self.clock() - t0) * 1000.0
        _crash("fence_unjournaled")
        _crash("after_fence")
        _pause("after_fence")
        return t0, token

    def _migration_moved_advice(self, exc: MigrationMovedError) -> str:
        """The fence's refusal, with what the operator does next. With the stand-in, it first
        hands the quorum to a real controller, so that it is not left leaderless until the
        controllers' fetch timeout (docs/design.md, "A refused fence hands the quorum over")."""
        if self.o.standin is None:
            return str(exc)
        try:
            self._resign()
        except Exception as resign_exc:  # noqa: BLE001 - the refusal is reported either way
            self.sink.say(f"WARNING: the stand-in could not resign: {resign_exc}")
        handover = self.out.handover or {}
        return refused_fence_advice(
            str(exc), int(handover.get("new_leader", -1)), int(handover.get("new_epoch", -1)),
            connect=self.o.connect.connect, journal_path=self.journal.path,
            handoff_timeout_s=self.o.handoff_timeout_s)

    def _adopt_controllers_migration_znode(self) -> bool:
        """With the stand-in: take a `/migration` that changed since it was judged as judged
        again when it is Kafka's "nothing migrated yet" (`ZkMigrationLeadershipState.EMPTY`,
        all four fields -1), which every controller in migration mode get-or-creates when it
        starts, whenever that is (before zk2kraft, with it or after it). The fence then writes
        it at the version read here, so a controller that records a real claim after this read
        still fails the fence (`MigrationMovedError`); a real claim read here keeps its
        blocker's words and fails the fence as before. Returns True when it took a new version.
        """
        if self.o.standin is None:
            return False
        got = self.session.get(_MIGRATION_PATH)
        version = MIGRATION_ABSENT if got is None else got[1].version
        if version == self._migration_judged or got is None:
            return False
        kind = kind_for_path(_MIGRATION_PATH)
        assert kind is not None
        znode = kind.decode(*got)
        assert isinstance(znode, MigrationZnode)
        finding = standin_migration_finding(znode)
        if finding is not None:
            self.sink.say(f"WARNING: {finding.message}")
            return False  # the fence refuses it (MigrationMovedError), nothing applied
        self.sink.say(f"/migration appeared or changed since it was judged (version "
                      f"{version}), holding Kafka's empty state (a controller in migration mode "
                      "created it when it started): the fence takes it over at that version")
        self._migration_judged = version
        return True

    def _fence_readback(self) -> FenceToken | None:
        """A crash at `fencing` (or before it, after an earlier run's fence was sent): did one
        of our fences apply? Never fence twice."""
        token = self._our_applied_fence(read_fence_state(self.session, synced=True))
        if token is not None:
            return token
        self.sink.say("the previous run stopped before its fence applied (read back); "
                      "mirroring again before fencing")
        self.journal.enter(Phase.MIRROR, claim=None)
        _pause("after_readback")
        return None

    def _our_applied_fence(self, now: FenceState) -> FenceToken | None:
        """The token of our fence when `now` (read after a `sync()`) shows one applied, else None.

        Ours means: `/controller` is a persistent node holding exactly one of the claims the
        journal kept (`Journal.claims`: every fence any run of this migration sent). Each
        carries its own millisecond timestamp, and only our fence multi-op creates it, bumping
        `/controller_epoch` in the same commit; anything else (another KRaft controller's
        claim, even with our broker id and epoch) stays someone else's. Journals it as fenced.
        """
        claims = [c.encode() for c in self.journal.claims]
        if (now.controller is None or now.controller_ephemeral or now.controller not in claims
                or now.controller_epoch is None or now.epoch_zk_version is None
                or now.migration_zk_version is None):
            return None
        token = FenceToken(now.controller_epoch, now.epoch_zk_version, now.migration_zk_version,
                           now.controller, already_applied=True)
        self.journal.enter(Phase.FENCED, fence=token.to_json())
        if now.controller == (self.journal.claim or "").encode():
            self.sink.say("the previous run's fence had applied (read back); finishing the drain")
        else:
            sent = _claim_timestamp(now.controller)
            self.sink.say(f"an earlier run's fence (its claim timestamped {sent}) had applied "
                          f"after all (read back: /controller_epoch {now.controller_epoch}); it "
                          "is ours, so not fencing again: finishing the drain")
        return token

    def _drain_explained(self, token: FenceToken) -> float | None:
        """`_drain`, with a voter loss explained the way the caller explains it."""
        try:
            return self._drain(token)
        except VoterUnavailableError as exc:
            raise VoterUnavailableError(_fenced_without_log(exc, self.controller_id, token)
                                        ) from exc
        except BlockersFoundError as exc:  # a topic reusing another's id, made in the window
            raise BlockersFoundError(
                f"{exc} ZooKeeper IS fenced (/controller claimed by {self.controller_id}) and "
                "the log is not closed, so the cluster has no controller until that re-run "
                "finishes the drain.") from None

    def _drain(self, token: FenceToken) -> float | None:
        """sync, re-read what was notified before the fence, append the final delta with
        `ZkMigrationStateRecord(MIGRATION)` + `EndTransactionRecord` in one durable append: t1."""
        start = self.clock()
        state = self.log.framing
        if state.migration_state == ZK_MIGRATION_STATE_MIGRATION and not state.transaction_open:
            self._restate_scram()  # a crash may have come between the trailer and it
            self.journal.enter(Phase.DRAINED, fence=token.to_json(),
                              last_durable_offset=self.quorum.durable_offset)
            return None
        self._sync()
        t_sync = self.clock()
        trailer = trailer_records(self.mv)
        if not self._watching:
            # A resume after the fence: the crashed run's notifications died with it and this
            # process armed no watch, so the whole tree is compared once.
            snapshot = self._read(watch=False)
            if self.out.summary is None:
                self.out.summary = self._judge(snapshot, after_fence=True)
            delta = self._resync_delta(snapshot).records
            if delta:
                self.log.apply(delta)  # the image and the framing (SCRAM removals) alike
            applied: list[MetadataRecord] = trailer
        else:
            snapshot = ClusterSnapshot()
            self._applied_early = False
            # watch=False: nothing is mirrored after this, and arming would cost every read
            # round a second round trip (its SetWatches) inside the window. `changed_entities`
            # still tells a new child of a notified list from an existing one by the watches the
            # mirror armed, so the drain re-reads only what changed.
            delta = self._delta(self._pending(), watch=False, append=False)
            applied = trailer if self._applied_early else delta + trailer
        self.out.delta_records = len(delta)
        _crash("mid_drain")
        t_read = self.clock()
        self.quorum.append_records(delta + trailer, timestamp_ms=self._ts(snapshot))
        t1, self.out.wall_stamps["drained"] = self.clock(), time.time()
        self._after_drain = _IntervalCost(self.clock, t1)
        self.log.apply(applied)
        if self._restate_scram():  # part of the window: durable before /migration and handoff
            t1, self.out.wall_stamps["drained"] = self.clock(), time.time()
            self._after_drain = _IntervalCost(self.clock, t1)
        self.out.phase_ms["drain_sync"] = (t_sync - start) * 1000.0
        self.out.phase_ms["drain_reread"] = (t_read - t_sync) * 1000.0
        self.out.phase_ms["drain_append"] = (t1 - t_read) * 1000.0
        with self._timed("journal"):
            self.journal.enter(Phase.DRAINED, fence=token.to_json(),
                              last_durable_offset=self.quorum.durable_offset)
        self.out.phase_ms["drain"] = (t1 - start) * 1000.0
        self.sink.say(f"fenced: /controller_epoch is now {token.controller_epoch}, /controller "
                      f"is claimed by {self.controller_id} (kraftControllerEpoch {self.epoch}); "
                      "ZooKeeper's controller can no longer write")
        self.sink.say(f"drained: {len(delta)} final delta record(s), ZkMigrationStateRecord"
                      f"(MIGRATION) and EndTransactionRecord durable; log ends at offset "
                      f"{self.quorum.last_offset}")
        _crash("after_end_transaction")
        return t1

    def _restate_scram(self) -> bool:
        """After a migration transaction that removed a SCRAM credential, state every live one
        again in a transaction of its own, durable before the handoff
        (`migrate.online.mirror_delta`: Kafka 3.9.1 would otherwise drop a mechanism's
        credentials from its image)."""
        if not self.log.framing.scram_restatement_due:
            return False
        records = scram_restatement_records(self.log.image.scram.records())
        if not records:
            return False  # no credential left: nothing Kafka could lose
        self.quorum.append_records(records, timestamp_ms=self._ts(None))
        self.log.apply(records)
        self.sink.say(f"restated {len(records) - 2} SCRAM credential(s) in a transaction of "
                      "their own: a SCRAM user was removed during the mirror (Kafka 3.9.1 would "
                      "otherwise drop its mechanism's credentials when it loads the migration)")
        return True

    def _write_migration(self, token: FenceToken) -> None:
        start = self.clock()
        state = MigrationState(self.controller_id, self.epoch, self.quorum.last_offset,
                               self.epoch)
        _crash("before_migration")
        with self._timed("zookeeper"):
            version = write_migration_state(
                self.session, token, state,
                in_flight=_crash_in_flight(self.session, "migration_sent"))
        self.out.stamps["migration_written"] = self.clock()
        self.out.wall_stamps["migration_written"] = time.time()
        _crash("after_migration")
        # journaled with the handoff, in one save (`_handoff`): a resume between the two would
        # write /migration again, which reads back as already applied (write_migration_state)
        self.out.migration_zk_version = version
        self.out.phase_ms["migration"] = (self.clock() - start) * 1000.0
        self.sink.say(f"/migration written: kraft_metadata_offset {self.quorum.last_offset}, "
                      f"kraft_metadata_epoch {self.epoch}")

    def _handoff(self, token: FenceToken) -> float | None:
        if self.out.migration_zk_version is None:  # written by an earlier run
            self.out.migration_zk_version = self.journal.migration_zk_version
        with self._timed("journal"):
            # `/migration` written (phase migration) and the handoff begun, in one durable save
            self.journal.enter(Phase.HANDOFF, migration_zk_version=self.out.migration_zk_version)
        self.out.stamps["handoff"] = self.clock()
        self.out.wall_stamps["handoff"] = time.time()
        if self._after_drain is not None:
            self.out.migration_znode_ms = self._after_drain.finish(self.out.stamps["handoff"])
        if not self._resign():
            # Local voters: writing is over, every voter's queued writes are finished (a voter
            # that failed on the last batch is recorded now, not lost); free the locks for the
            # controllers.
            self.release_locks()
            if not self.o.on_cutover:
                self.sink.say("no --on-cutover: start the KRaft controllers now (they find "
                              "ZkMigrationState MIGRATION and /migration, and take over)")
                return None
        if self.o.on_cutover:
            self._run_on_cutover()
        deadline = self.clock() + self.o.handoff_timeout_s
        while self.clock() < deadline:
            try:
                if read_fence_state(self.session).kraft_controller_epoch > self.epoch:
                    t2, self.out.wall_stamps["claimed"] = self.clock(), time.time()
                    self.sink.say("a KRaft controller claimed /controller: handoff complete")
                    self._brokers_following()
                    return t2
            except ZkUnreachableError:
                pass
            time.sleep(0.01)
        self.sink.say(f"no KRaft controller claimed /controller within "
                      f"{self.o.handoff_timeout_s:g}s: window_ms.total is null")
        return None

    def _brokers_following(self) -> None:
        """With the stand-in, after the claim: does every broker ZooKeeper listed at the fence
        (and registered with the stand-in then) fetch from the new leader? Asked the way
        `kafka-metadata-quorum describe --replication` asks (DescribeQuorum): a broker counts
        once its LastFetchTimestamp moved between two answers, so a broker that died after its
        last fetch does not. Waits at most 30 s (or --handoff-timeout)."""
        if self.out.handover is None:  # no handover: local voters, or the stand-in's timed out
            return
        leader = int(self.out.handover["new_leader"])
        expected = set(self.out.zk_brokers) - set(self.out.brokers_unregistered or [])
        if leader < 0 or not expected:
            return
        deadline = self.clock() + min(30.0, self.o.handoff_timeout_s)
        first: dict[int, int] | None = None
        moved: set[int] = set()
        while not expected <= moved and self.clock() < deadline:
            try:
                leader, seen = self.quorum.describe_quorum(leader)
            except VoterUnavailableError:
                seen = {}
            if seen and first is None:
                first = seen
            elif seen and first is not None:
                moved |= {b for b in expected if seen.get(b, -1) > first.get(b, -1)}
            if not expected <= moved:
                time.sleep(1.0)  # DescribeQuorum again once the brokers fetched more
        self.out.brokers_not_following = sorted(expected - moved)
        if self.out.brokers_not_following:
            self.sink.say(f"WARNING: broker(s) {self.out.brokers_not_following} do not fetch "
                          f"from the new leader {leader} (DescribeQuorum)")
        else:
            self.sink.say(f"every broker fetches from the new leader {leader} (DescribeQuorum)")

    def _run_on_cutover(self) -> None:
        assert self.o.on_cutover is not None  # the caller runs this only when it was given
        start = self.clock()
        env = {**os.environ, "ZK2KRAFT_LAST_OFFSET": str(self.quorum.last_offset),
               "ZK2KRAFT_LEADER_EPOCH": str(self.epoch),
               "ZK2KRAFT_VOTERS": ",".join(f"{t.node_id}={t.path}" for t in self.o.voters)}
        self.sink.say(f"running --on-cutover: {self.o.on_cutover}")
        proc = subprocess.Popen(self.o.on_cutover, shell=True, env=env)  # noqa: S602 - operator's command
        _crash("during_on_cutover")
        self.out.on_cutover_exit = proc.wait()
        self.out.phase_ms["on_cutover"] = (self.clock() - start) * 1000.0
        if self.out.on_cutover_exit != 0:
            self.sink.say(f"WARNING: --on-cutover exited {self.out.on_cutover_exit}")

    def _resign(self) -> bool:
        """The stand-in hands the quorum to a real controller (EndQuorumEpoch); local voters
        close (`QuorumLog.resign`). True when there was a handover (the stand-in's)."""
        start = self.clock()
        result = self.quorum.resign(timeout_s=self.o.handoff_timeout_s)
        if result is None:
            return False
        self.out.phase_ms["resign"] = (self.clock() - start) * 1000.0
        self.out.handover = {"new_leader": result.new_leader, "new_epoch": result.new_epoch,
                             "elapsed_ms": _r(result.elapsed_ms),
                             "fetches_answered": result.fetches_answered,
                             "events": [e.to_json() for e in result.events]}
        if result.new_leader >= 0:
            self.out.stamps["new_leader"] = self.clock()
            self.out.wall_stamps["new_leader"] = time.time()
        if result.new_leader < 0:
            self.sink.say("WARNING: the stand-in resigned but no controller announced itself "
                          f"within {self.o.handoff_timeout_s:g}s")
        else:
            self.sink.say(f"stand-in resigned: controller {result.new_leader} leads epoch "
                          f"{result.new_epoch} ({result.elapsed_ms:.0f} ms after "
                          "EndQuorumEpoch)")
        return True


def _without(summary: PlanSummary, codes: Set[str]) -> PlanSummary:
    """The summary without the blockers of these codes (warnings untouched)."""
    report = type(summary.report)(
        tuple(f for f in summary.report.blockers if f.code not in codes), summary.report.warnings)
    return PlanSummary(report, summary.records, summary.brokers, summary.topics,
                       summary.partitions)


def _fenced_without_log(exc: BaseException, controller_id: int, token: FenceToken) -> str:
    return (f"{exc}. ZooKeeper IS fenced (/controller claimed by {controller_id}, "
            f"/controller_epoch {token.controller_epoch}) but the log is not closed and "
            "/migration does not name it, so the cluster has no controller: make a majority of "
            "voters writable and re-run this same command (it resumes the drain from the "
            "journal), or run `zk2kraft rollback` to hand ZooKeeper back")


def _claim_timestamp(claim: bytes) -> str:
    """The `timestamp` of a `/controller` claim we wrote (for messages)."""
    try:
        return str(json.loads(claim).get("timestamp", "?"))
    except (ValueError, AttributeError):
        return "?"


def _znode_version(znode: MigrationZnode | None) -> int:
    """`/migration`'s znode version as read, or `MIGRATION_ABSENT`."""
    return MIGRATION_ABSENT if znode is None else znode.stat.version


class _Refused(Exception):
    pass


class _OurFenceFound(Exception):
    """A fence an earlier run of this migration sent had applied after all: the run goes on to
    the drain with its token, never fencing again."""

    def __init__(self, token: FenceToken) -> None:
        super().__init__("our earlier fence applied")
        self.token = token


class _SessionExpired(Exception):
    """The session expired under an entity read: the caller re-reads the whole tree."""


def _finish_migration_znode(session: ZkSession, journal: Journal, controller_id: int
                            ) -> int | None:
    """A stand-in re-run that cannot lead, after a drain that committed: write `/migration` as
    the stopped run was about to (its last offset, our epoch, checking the fence's
    `/controller_epoch` version). Without it Kafka's controller, finding MIGRATION in the log but
    no offset in `/migration`, logs "KRaft controller indicates an active migration, but the ZK
    state does not" and its migration driver stays inactive (real 3.9.1). Returns the offset
    written, or None when there was nothing to write or ZooKeeper moved on (someone claimed it).
    """
    if journal.phase is not Phase.DRAINED or journal.fence is None:
        return None
    token = FenceToken.from_json(journal.fence)
    offset = journal.last_durable_offset
    state = MigrationState(controller_id, journal.leader_epoch, offset, journal.leader_epoch)
    try:
        version = write_migration_state(session, token, state)
    except ControllerMovedError:
        return None
    journal.enter(Phase.MIGRATION, migration_zk_version=version)
    return offset


def _cluster_id(session: ZkSession) -> str:
    """`/cluster/id`'s id, decoded by the reader's own decoder (a malformed znode is the same
    `ZnodeFormatError`, exit 2, that the pre-copy's read would raise)."""
    path = "/cluster/id"
    got = session.get(path)
    if got is None:
        raise BadFlagError(f"--zookeeper: {path} is missing: not a Kafka cluster's chroot?")
    kind = kind_for_path(path)
    assert kind is not None
    znode = kind.decode(*got)
    assert isinstance(znode, ClusterIdZnode)
    return znode.cluster_id


@dataclass(frozen=True, slots=True)
class _Preflight:
    """A fresh run's first read of the tree (watches armed) and its judgement."""

    snapshot: ClusterSnapshot
    summary: PlanSummary


def _translation_options(options: OnlineOptions) -> TranslationOptions:
    return TranslationOptions(metadata_version=options.metadata_version,
                              password_encoder_secret=options.password_encoder_secret)


def _read_tree(session: ZkSession, *, watch: bool, clock: Callable[[], float]
               ) -> ClusterSnapshot:
    """Read the tree, retrying connection losses for a while (the caller notes expiries)."""
    deadline = clock() + max(session.retry_s, 30.0)
    while True:
        try:
            return read_cluster(session, watch=watch, pause=ReadPause.from_env())
        except ZkUnreachableError:
            if clock() > deadline:
                raise
            time.sleep(0.2)


def _judge_tree(options: OnlineOptions, topts: TranslationOptions, snapshot: ClusterSnapshot
                ) -> PlanSummary:
    """`plan`'s judgement of the tree (with `--standin`, `plan --standin`'s), without
    translating the topic table (the pre-copy translates it right after)."""
    rest = translate_rest(snapshot, topts)
    summary = judge(snapshot, rest, rest_counts(snapshot, rest),
                    voter_ids=[t.node_id for t in options.voters] if options.standin is None
                    else sorted(options.standin.voters), overrides=options.overrides)
    if options.standin is not None:
        # controllers in migration mode create an empty /migration when they start
        summary = standin_summary(summary, snapshot.migration)
    return summary


def _preflight(options: OnlineOptions, session: ZkSession, clock: Callable[[], float]
               ) -> _Preflight:
    """Read the tree with every watch armed and judge it, before the transport opens.

    A fresh run judges first because opening writes: the stand-in wins an election (the
    controllers commit its LeaderChange) and commits the PRE_MIGRATION bootstrap, local voters
    get their files, and the journal is saved. A run that is then refused must leave none of
    that behind, so blockers stop it here, where nothing has been written anywhere.
    The pre-copy copies this very snapshot; what changes meanwhile reaches the mirror through
    the watches this read armed.
    """
    snapshot = _read_tree(session, watch=True, clock=clock)
    return _Preflight(snapshot, _judge_tree(options, _translation_options(options), snapshot))


def run_online(options: OnlineOptions, *, sink: StatusSink,
               trigger: threading.Event | None = None,
               clock: Callable[[], float] = time.monotonic) -> OnlineOutcome:
    """Run the online migration (module docstring), resuming from the journal if there is one.

    Returns:
        The outcome (`outcome.refused` when blockers stopped it before anything was written).

    Raises:
        BadFlagError / ZnodeFormatError / TranslationError: bad input (exit 2).
        ZkUnreachableError / VoterUnavailableError: exit 3.
        ControllerMovedError: another controller holds ZooKeeper (exit 3).
        MigrationMovedError: `/migration` changed between the judged read and the fence; the
            fence applied nothing (exit 3).
        VoterStateError: the voters hold a log that is not this run's (exit 1).
    """
    check_cutover_version(options.metadata_version)
    trigger = trigger or threading.Event()
    try:
        Journal.load(options.journal_dir)
    except ValueError as exc:
        raise BadFlagError(f"--journal: {exc}") from None
    with contextlib.ExitStack() as locks:
        # Kafka's .lock on every voter, before anything else and for the whole run: no
        # controller can start on a log still being written, no second zk2kraft can interleave.
        locks.enter_context(hold_voter_locks([t.path for t in options.voters]))
        return _run_locked(options, sink, trigger, clock, locks.close)


def _run_locked(options: OnlineOptions, sink: StatusSink, trigger: threading.Event,
                clock: Callable[[], float], release_locks: Callable[[], None]
                ) -> OnlineOutcome:
    journal = Journal.load(options.journal_dir)
    with open_session(options.connect) as session:
        cluster_id = _cluster_id(session)
        ids = [t.node_id for t in options.voters]
        if journal is not None and (journal.cluster_id != cluster_id or journal.voters != ids):
            raise BadFlagError(
                f"--journal {options.journal_dir}: the journal is for cluster "
                f"{journal.cluster_id!r} with voters {journal.voters}, not {cluster_id!r} with "
                f"{ids}; point --journal elsewhere or remove it")
        preflight: _Preflight | None = None
        if journal is None:
            preflight = _preflight(options, session, clock)
            if preflight.summary.report.blockers:
                return _refused(options, preflight.summary)
        quorum: QuorumLog
        opened_at = -1
        if options.standin is not None:
            try:
                quorum, opened_at = open_standin(
                    options.standin, cluster_id=cluster_id, mv=options.metadata_version,
                    resuming=journal is not None, say=sink.say)
            except QuorumLedElsewhereError as exc:
                if journal is None:
                    raise
                stopped_in = journal.phase
                written = _finish_migration_znode(session, journal, options.standin.node_id)
                raise QuorumLedElsewhereError(
                    explain_takeover(exc, journal, read_fence_state(session), options.standin,
                                     connect=options.connect.connect, stopped_in=stopped_in,
                                     migration_written=written),
                    voter_id=exc.voter_id, leader_id=exc.leader_id,
                    leader_epoch=exc.leader_epoch) from None
        else:
            quorum = LocalVoterQuorum([(t.node_id, t.path) for t in options.voters],
                                      cluster_id=cluster_id, leader_epoch=_LEADER_EPOCH)
        try:
            repairs = getattr(quorum, "repairs", [])
            for r in repairs:
                sink.say(f"resume: {r.describe()} (a crash left the voters uneven)")
            if journal is None:
                journal = Journal(options.journal_dir, cluster_id=cluster_id, voters=ids,
                                  leader_epoch=quorum.leader_epoch)
                if quorum.last_offset > opened_at:
                    raise VoterStateError(
                        f"the voters already hold a metadata log (offsets 0.."
                        f"{quorum.last_offset}) and there is no journal at "
                        f"{journal.path}: refusing to write into a log this run did not start")
                journal.save()  # a fresh run: phase precopy
            run = _Run(options, session, quorum, journal, sink, clock, trigger, release_locks,
                       opened_at, preflight)
            if options.standin is not None:
                run.out.transport = options.standin.to_json()
            try:
                out = run.run()
            except _Refused:
                return run.out
            out.repairs = [r.describe() for r in repairs]
            return out
        finally:
            quorum.close()


def _refused(options: OnlineOptions, summary: PlanSummary) -> OnlineOutcome:
    """The outcome of a run the pre-flight refused: nothing written (the command exits 1)."""
    out = OnlineOutcome(summary=summary, cutover=options.cutover)
    if options.standin is not None:
        out.transport = options.standin.to_json()
    return out
