"""The state one online run shares between its phases (`RunContext`), and the small helpers
they all use: ZooKeeper as the run asks it (`ZooKeeper`, live: `LiveZooKeeper`), the log as the
run holds it (`LogView`), the tree's read and judgement, and the cost meter of drained ->
handoff (`IntervalCost`). A phase's outcome goes back to the driver (`migrate.online.run`) as a
value (`phases.Step`), not as an exception."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from migrate.bulk.pipeline import rest_counts, snapshot_timestamp_ms, translate_rest
from migrate.judge import judge
from migrate.online.journal import Journal
from migrate.online.mirror_delta import LogState
from migrate.online.options import OnlineOptions
from migrate.online.outcome import CutoverRequest, OnlineOutcome, StatusSink
from migrate.preflight.checks import PlanSummary, standin_summary
from migrate.translate.delta import delta_records
from migrate.translate.entities import EntityDelta, resync_keys
from migrate.translate.framing import TranslationOptions
from verify import MetadataImage, apply_records
from writers import ControlRecord, MetadataRecord, QuorumLog, ReadPause, VoterStateError, crash_when
from zkreader import (
    MIGRATION_ABSENT,
    ChangeEvent,
    ClusterSnapshot,
    EntityKey,
    FenceState,
    FenceToken,
    MigrationState,
    MigrationZnode,
    ZkSession,
    ZkUnreachableError,
    ZnodeStat,
    changed_entities,
    fence_zk_controller,
    read_cluster,
    read_entities,
    read_fence_state,
    write_migration_state,
)

__all__ = [
    "SYSTEM_CLOCKS",
    "Clocks",
    "IGNORED",
    "IntervalCost",
    "LiveZooKeeper",
    "LogView",
    "MIGRATION_PATH",
    "OWN_CLAIM",
    "Preflight",
    "RunContext",
    "SessionExpired",
    "Timings",
    "claim_timestamp",
    "crash_in_flight",
    "fenced_without_log",
    "judge_tree",
    "read_tree",
    "translation_options",
    "without",
    "znode_version",
    "ZooKeeper",
]

# notification paths the mirror does not translate (the run's own, or the gate's to judge)
IGNORED = ("/controller", "/controller_epoch", "/migration", "/admin/reassign_partitions",
           "/log_dir_event_notification", "/isr_change_notification")

MIGRATION_PATH = "/migration"

# the blockers our own fence leaves behind (a KRaft claim, /migration written)
OWN_CLAIM = frozenset({"MIGRATION_ZNODE_EXISTS", "CONTROLLER_IS_KRAFT"})


def crash_in_flight(session: ZkSession, point: str) -> Callable[[], None] | None:
    """The crash hook (test-only, `writers.crash_when`) for a multi-op in flight: a callback for
    zkreader's `in_flight` that fires once kazoo has written the request to the socket, so the
    kill leaves a request sent whose reply nobody reads. None when the hook is not asked for."""
    return crash_when(point, session.requests_written)


def _main_thread_runqueue_ns() -> int | None:
    """Nanoseconds this process's main thread has waited for a CPU (`/proc/self/schedstat`'s
    second field; the thread group leader is the main thread), or None where it is not kept."""
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None


class IntervalCost:
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


class Notifications(Protocol):
    """The change feed as the mirror reads it (`zkreader.ChangeFeed`)."""

    def get(self, timeout: float | None = None) -> ChangeEvent | None: ...

    def drain(self) -> list[ChangeEvent]: ...


class ZooKeeper(Protocol):
    """Every ZooKeeper operation the run's phases perform, behind one interface (Kafka's
    migration driver reaches ZooKeeper through its `MigrationClient` the same way): the live
    session (`LiveZooKeeper`) or a test's in-memory fake.

    Attributes:
        retry_s: the session's bound on one call (--zk-timeout).
        expired: set when the session expired (its watches are gone); the run clears it.
    """

    retry_s: float
    expired: threading.Event

    @property
    def state(self) -> str: ...

    @property
    def changes(self) -> Notifications: ...

    def get(self, path: str) -> tuple[bytes, ZnodeStat] | None: ...

    def get_children(self, path: str) -> list[str] | None: ...

    def sync(self, path: str = "/") -> None: ...

    def run_queued_watch_callbacks(self) -> None: ...

    def read_cluster(self, *, watch: bool) -> ClusterSnapshot: ...

    def changed_entities(self, paths: Iterable[str], *, watch: bool) -> list[EntityKey]: ...

    def read_entities(self, keys: Iterable[EntityKey], *, watch: bool) -> ClusterSnapshot: ...

    def fence(self, *, kraft_controller_id: int, kraft_epoch: int, timestamp_ms: int,
              migration_version: int, on_sent: Callable[[], None]) -> FenceToken: ...

    def read_fence_state(self, *, synced: bool = False,
                         timeout_s: float | None = None) -> FenceState: ...

    def write_migration_state(self, token: FenceToken, state: MigrationState) -> int: ...


class LiveZooKeeper:
    """`ZooKeeper` over the run's long-lived session and zkreader's reads and multi-ops."""

    def __init__(self, session: ZkSession) -> None:
        self.session = session
        self.retry_s = session.retry_s
        self.expired = session.expired

    @property
    def state(self) -> str:
        return self.session.state

    @property
    def changes(self) -> Notifications:
        return self.session.changes

    def get(self, path: str) -> tuple[bytes, ZnodeStat] | None:
        return self.session.get(path)

    def get_children(self, path: str) -> list[str] | None:
        return self.session.get_children(path)

    def sync(self, path: str = "/") -> None:
        self.session.sync(path)

    def run_queued_watch_callbacks(self) -> None:
        self.session.run_queued_watch_callbacks()

    def read_cluster(self, *, watch: bool) -> ClusterSnapshot:
        return read_cluster(self.session, watch=watch, pause=ReadPause.from_env())

    def changed_entities(self, paths: Iterable[str], *, watch: bool) -> list[EntityKey]:
        return changed_entities(self.session, paths, watch=watch)

    def read_entities(self, keys: Iterable[EntityKey], *, watch: bool) -> ClusterSnapshot:
        return read_entities(self.session, keys, watch=watch, pause=ReadPause.from_env())

    def fence(self, *, kraft_controller_id: int, kraft_epoch: int, timestamp_ms: int,
              migration_version: int, on_sent: Callable[[], None]) -> FenceToken:
        return fence_zk_controller(
            self.session, kraft_controller_id=kraft_controller_id, kraft_epoch=kraft_epoch,
            timestamp_ms=timestamp_ms, migration_version=migration_version, on_sent=on_sent,
            in_flight=crash_in_flight(self.session, "fence_sent"))

    def read_fence_state(self, *, synced: bool = False,
                         timeout_s: float | None = None) -> FenceState:
        return read_fence_state(self.session, synced=synced, timeout_s=timeout_s)

    def write_migration_state(self, token: FenceToken, state: MigrationState) -> int:
        return write_migration_state(self.session, token, state,
                                     in_flight=crash_in_flight(self.session, "migration_sent"))


_MARKERS = frozenset({"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
                      "ABORT_TRANSACTION_RECORD"})


class LogView:
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


@dataclass(frozen=True, slots=True)
class Clocks:
    """Every clock the run reads, passed in where it is read (a test gives its own)."""

    monotonic: Callable[[], float] = time.monotonic  # every stamp and duration (t0, t1, t2)
    wall: Callable[[], float] = time.time  # the claim's timestamp and the wall-clock stamps
    sleep: Callable[[float], None] = time.sleep  # the waits between retries and polls


SYSTEM_CLOCKS = Clocks()


class Timings:
    """Where the run's durations and stamps go: recorded at the step they measure, on the run's
    clocks, into the figures the report reads (`OnlineOutcome.phase_ms`, `stamps`,
    `wall_stamps`); the phases say what they measure, never how it is kept."""

    def __init__(self, out: OnlineOutcome, clock: Callable[[], float],
                 wall: Callable[[], float]) -> None:
        self._out = out
        self._clock = clock
        self._wall = wall

    def took(self, name: str, since: float, until: float | None = None) -> None:
        """`phase_ms[name]`: from `since` to `until` (default: now), in milliseconds."""
        end = self._clock() if until is None else until
        self._out.phase_ms[name] = (end - since) * 1000.0

    def mark(self, name: str, *, stamp: bool = True) -> float:
        """Now on the monotonic clock, returned; the wall clock's now beside it in
        `wall_stamps[name]`, and (`stamp`) the monotonic one in `stamps[name]`."""
        now = self._clock()
        self._out.wall_stamps[name] = self._wall()
        if stamp:
            self._out.stamps[name] = now
        return now

    def wall_at(self, name: str, wall: float) -> None:
        """`wall_stamps[name]` taken earlier, where its boundary was (the fence's send)."""
        self._out.wall_stamps[name] = wall

    def stamp(self, name: str, monotonic: float) -> None:
        """`stamps[name]`: a monotonic reading taken earlier (t0, t1, t2)."""
        self._out.stamps[name] = monotonic


class RunContext:
    """What every phase of one run shares: its inputs, the log as it holds it (`log`), the
    outcome being filled in (`out`), the clocks, and the helpers they all use.

    Attributes (beyond the arguments):
        mv / topts: the metadata version and the translation options.
        log: what the log holds (`LogView`); out: the outcome.
        controller_id / epoch: the id claimed in `/controller` and the leader epoch.
        last_ts: the newest ZooKeeper mtime seen (the batch timestamp, I6).
        watching: this process armed a watch on every entity (pre-copy or resync).
        migration_judged: `/migration`'s znode version in the tree this process judged (the
            pre-copy's or the resync's): the fence writes it only at that version.
        after_drain: t1 -> handoff's cost meter, when t1 is this run's.
    """

    def __init__(self, options: OnlineOptions, session: ZooKeeper, quorum: QuorumLog,
                 journal: Journal, sink: StatusSink, *, clock: Callable[[], float],
                 wall: Callable[[], float], sleep: Callable[[float], None],
                 trigger: CutoverRequest, release_locks: Callable[[], None],
                 opened_at: int = -1) -> None:
        self.o = options
        self.opened_at = opened_at  # last offset the transport wrote on opening (stand-in)
        self.release_locks = release_locks
        self.zk = session  # ZooKeeper, as the phases ask it
        self.quorum = quorum
        self.journal = journal
        self.sink = sink
        self.clock = clock  # monotonic: every stamp and duration
        self.wall = wall  # time.time(): the claim's timestamp and the wall-clock stamps
        self.sleep = sleep
        self.trigger = trigger
        self.mv = options.metadata_version
        self.topts = translation_options(options)
        self.log = LogView()
        self.out = OnlineOutcome(cutover=options.cutover)
        self.timings = Timings(self.out, clock, wall)  # durations and stamps, for the report
        self.controller_id = options.voters[0].node_id
        self.epoch = quorum.leader_epoch
        self.warned: set[str] = set()
        self.last_ts = 0
        self.watching = False
        self.migration_judged: int | None = None
        self.after_drain: IntervalCost | None = None

    def append(self, records: Sequence[MetadataRecord], snapshot: ClusterSnapshot) -> None:
        """Append durably, then account for it in what the log holds."""
        if records:
            self.quorum.append_records(records, timestamp_ms=self.ts(snapshot))
            self.log.apply(records)
            self.journal.save(last_durable_offset=self.quorum.durable_offset)

    def ts(self, snapshot: ClusterSnapshot | None) -> int:
        """Batch timestamp: the newest ZooKeeper mtime seen so far (I6: no wall clock)."""
        if snapshot is not None:
            self.last_ts = max(self.last_ts, snapshot_timestamp_ms(snapshot))
        return self.last_ts

    def absorb_quorum_records(self) -> None:
        """Add what the quorum appended on its own (the stand-in: the brokers' registrations and
        fencing changes) to what the log holds, before a delta is computed against it."""
        own = self.quorum.take_own_records()
        if own:
            self.log.apply(own)
            self.out.broker_records += len(own)

    def resync_delta(self, snapshot: ClusterSnapshot) -> EntityDelta:
        """The records that make the log hold exactly `snapshot`: every entity either side
        holds is diffed, so what only the log still holds gets its removal record."""
        self.absorb_quorum_records()
        return delta_records(self.log.image, snapshot, resync_keys(self.log.image, snapshot),
                             self.topts)

    def read(self, *, watch: bool) -> ClusterSnapshot:
        """Read the tree, surviving connection losses and (loudly) session expiries."""
        if self.zk.expired.is_set():
            self.zk.expired.clear()
            self.out.session_expiries += 1
            self.sink.say("ZooKeeper session expired: its watches are gone; re-reading the "
                          "whole tree and writing the difference")
        return read_tree(self.zk, watch=watch, clock=self.clock, sleep=self.sleep)

    def voters(self) -> list[dict[str, object]]:
        return [s.to_json() for s in self.quorum.voter_status()]

    def check_log_is_ours(self) -> None:
        if self.quorum.last_offset <= self.opened_at:
            return
        if not self.log.framing.transaction_open and self.log.framing.migration_state is None:
            raise VoterStateError(
                "the voters hold a metadata log this tool did not leave open (no open "
                "'ZK Migration' transaction and no journal state for it); refusing to write "
                "into it. Point --voter at empty directories, or --journal at this run's journal")

    def timed(self, name: str) -> contextlib.AbstractContextManager[None]:
        """Time a wait inside drained -> handoff (`migration_znode_ms`) when t1 is this run's."""
        meter = self.after_drain
        return contextlib.nullcontext() if meter is None else meter.timed(name)

    def judge(self, snapshot: ClusterSnapshot, *, after_fence: bool = False) -> PlanSummary:
        summary = judge_tree(self.o, self.topts, snapshot)
        if after_fence:
            # Past the fence the go/no-go was decided (by the pre-copy, maybe in an earlier
            # run); the claim and /migration it finds now are our own.
            summary = without(summary, OWN_CLAIM)
        return summary

    def warn_once(self, key: str, line: str) -> None:
        if key not in self.warned:
            self.warned.add(key)
            self.sink.say(line)


def without(summary: PlanSummary, codes: Set[str]) -> PlanSummary:
    """The summary without the blockers of these codes (warnings untouched)."""
    report = type(summary.report)(
        tuple(f for f in summary.report.blockers if f.code not in codes), summary.report.warnings)
    return PlanSummary(report, summary.records, summary.brokers, summary.topics,
                       summary.partitions, summary.source)


def fenced_without_log(exc: BaseException, controller_id: int, token: FenceToken) -> str:
    return (f"{exc}. ZooKeeper IS fenced (/controller claimed by {controller_id}, "
            f"/controller_epoch {token.controller_epoch}) but the log is not closed and "
            "/migration does not name it, so the cluster has no controller: make a majority of "
            "voters writable and re-run this same command (it resumes the drain from the "
            "journal), or run `zk2kraft rollback` to hand ZooKeeper back")


def claim_timestamp(claim: bytes) -> str:
    """The `timestamp` of a `/controller` claim we wrote (for messages)."""
    try:
        return str(json.loads(claim).get("timestamp", "?"))
    except (ValueError, AttributeError):
        return "?"


def znode_version(znode: MigrationZnode | None) -> int:
    """`/migration`'s znode version as read, or `MIGRATION_ABSENT`."""
    return MIGRATION_ABSENT if znode is None else znode.stat.version


class SessionExpired(Exception):
    """The session expired under an entity read: the caller re-reads the whole tree."""


@dataclass(frozen=True, slots=True)
class Preflight:
    """A fresh run's first read of the tree (watches armed) and its judgement."""

    snapshot: ClusterSnapshot
    summary: PlanSummary


def translation_options(options: OnlineOptions) -> TranslationOptions:
    return TranslationOptions(metadata_version=options.metadata_version,
                              password_encoder_secret=options.password_encoder_secret)


def read_tree(zk: ZooKeeper, *, watch: bool, clock: Callable[[], float],
              sleep: Callable[[float], None]) -> ClusterSnapshot:
    """Read the tree, retrying connection losses for a while (the caller notes expiries)."""
    deadline = clock() + max(zk.retry_s, 30.0)
    while True:
        try:
            return zk.read_cluster(watch=watch)
        except ZkUnreachableError:
            if clock() > deadline:
                raise
            sleep(0.2)


def judge_tree(options: OnlineOptions, topts: TranslationOptions, snapshot: ClusterSnapshot
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
