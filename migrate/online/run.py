"""`migrate --cutover now|manual`: pre-copy, mirror, fenced cutover, drain, handoff (online).

Order, and why (docs/design/online-run.md, I1-I8 in docs/design/overview.md; Kafka's
`KRaftMigrationDriver`, `KafkaZkClient`):

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
(`resume.our_applied_fence`) and finish the drain; any other claim stays another controller's.

A notification's delta is per entity, O(changes): `zkreader.changed_entities` names the
entities, `zkreader.read_entities` re-reads them and `migrate.translate.delta.delta_records`
diffs them against the log's `MetadataImage`. Where nobody knows what changed (a session expiry, a
resume, the drain of a run resumed past the fence), the whole tree is re-read and the same
`delta_records` runs over `resync_keys(image, snapshot)`: every entity either the log or
ZooKeeper holds, so what ZooKeeper dropped meanwhile gets its removal record. O(cluster), and
only in those cases.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Callable
from typing import Any

from migrate.errors import BadFlagError
from migrate.online.fence_status import ZkFence, fence_of, marked
from migrate.online.journal import JOURNAL_FILE, Journal
from migrate.online.options import OnlineOptions, check_cutover_version
from migrate.online.outcome import CutoverRequest, OnlineOutcome, StatusSink, round_ms
from migrate.online.phases import Advance, Phase, Step, Stop
from migrate.online.phases.context import (
    SYSTEM_CLOCKS,
    Clocks,
    LiveZooKeeper,
    Preflight,
    RunContext,
    ZooKeeper,
    fenced_without_log,
    judge_tree,
    read_tree,
    translation_options,
)
from migrate.online.phases.cutover import Cutover
from migrate.online.phases.handoff import Handoff
from migrate.online.phases.mirror import Mirror
from migrate.online.phases.precopy import PreCopy
from migrate.online.phases.resume import read_back
from migrate.online.takeover import (
    explain_led_first,
    explain_recorded_leader,
    explain_takeover,
)
from migrate.online.transport import open_standin
from migrate.preflight.checks import PlanSummary
from migrate.preflight.findings import Finding
from migrate.translate.framing import trailer_records
from writers import (
    LocalVoterQuorum,
    QuorumLedElsewhereError,
    QuorumLog,
    TailRepair,
    VoterStateError,
    VoterUnavailableError,
    encode_record,
    hold_voter_locks,
)
from zkreader import (
    ClusterIdZnode,
    ControllerMovedError,
    FenceToken,
    MigrationState,
    ZkSession,
    kind_for_path,
    open_session,
    paused_gc,
    read_fence_state,
    write_migration_state,
)

__all__ = ["run_online"]

_LEADER_EPOCH = 1


class _Run:
    """One run: the driver. Which phase's handler runs is the journal's phase (`Phase`); each
    handler returns its outcome as a value (`phases.Step`), the driver journals the transition
    (`_enter`, the one place the phase changes) and runs the next handler, until `done` or a
    `Stop`. Kafka's `KRaftMigrationDriver` has this shape: a state enum, a transition table and
    one handler per state."""

    def __init__(self, c: RunContext, preflight: Preflight | None) -> None:
        self.c = c
        self.precopy = PreCopy(c, preflight)
        self.mirror = Mirror(c)
        self.cutover = Cutover(c, self.mirror)
        self.handoff = Handoff(c)
        self._gc_paused = contextlib.ExitStack()  # the collector's pause, fence -> handoff's end
        self._token: FenceToken | None = None  # the fence's, once ZooKeeper is fenced
        self._handlers: dict[Phase, Callable[[bool], Step]] = {
            Phase.PRECOPY: self._precopy,
            Phase.MIRROR: self._mirror,
            Phase.FENCING: self._fencing,
            Phase.FENCED: self._fenced,
            Phase.DRAINED: self._drained,
            Phase.MIGRATION: self._migration,
            Phase.HANDOFF: self._handoff,
        }

    def run(self) -> OnlineOutcome | Stop:
        """The driver's loop: replay the log, then each phase's handler until `done` or a
        `Stop` (returned as it is: the command reports the refusal)."""
        j = self.c.journal
        for batch in self.c.quorum.read_log():
            self.c.log.apply(batch.records)
        if self.c.quorum.last_offset > self.c.opened_at:
            self.c.out.resumed_from = j.phase.value
            self.c.sink.say(f"resuming in phase {j.phase}: the log holds offsets 0.."
                            f"{self.c.quorum.last_offset}")
        if j.phase is Phase.DONE:
            self.c.out.already_done = True
            self._finish_report()
            return self.c.out
        resumed = True  # the phase is the journal's, not one this process entered
        with self._gc_paused:  # from the fence (`_mirror`) to the handoff's end
            while True:
                step = self._handlers[j.phase](resumed)
                if isinstance(step, Stop):
                    return step
                _enter(self.c, step)
                if step.to is Phase.DONE:
                    return self.c.out
                resumed = False

    # -- one handler per phase: `resumed` says the phase was loaded from the journal ----------

    def _precopy(self, resumed: bool) -> Step:
        self.c.check_log_is_ours()
        return self.precopy.precopy()

    def _mirror(self, resumed: bool) -> Step:
        """Mirror until the gate opens, then the claim (`fencing`). A re-run first reads back
        the claims an earlier run sent, and resyncs the tree its watches no longer cover."""
        if resumed and self.c.journal.claims:
            return read_back(self.c)  # an earlier run's fence may have applied since
        if not self.c.watching:
            found = self.precopy.resync_resumed()
            if found is not None:
                return found
        self.mirror.until_cutover()
        # The window must not pay for the collector walking the pre-copy's millions of
        # objects (a full pass costs tenths of a second at 100k partitions): freeze what
        # exists and keep the collector off from the fence to the end of the handoff (`run`),
        # so the pass the fence and drain owe does not land on /migration's write (~5 ms of
        # CPU there at 1,000 partitions) or the handoff either.
        self.c.out.zk_brokers = sorted(self.c.log.image.cluster.brokers)
        for record in trailer_records(self.c.mv):
            encode_record(record)  # their encoders compile on first use: now, not in t0..t1
        gc.collect()
        gc.freeze()
        self._gc_paused.enter_context(paused_gc())
        return self.cutover.claim()

    def _fencing(self, resumed: bool) -> Step:
        """Fence with the claim journaled, then drain (nothing is journaled between the two: it
        would sit inside the window). A re-run at `fencing` reads back instead, never fencing
        twice."""
        if resumed:
            return read_back(self.c)
        fenced = self.cutover.fence()
        if isinstance(fenced, Advance):
            return fenced  # an earlier run's fence holds /controller (no t0: not this window's)
        t0, self._token = fenced
        self.c.out.fence_at = t0
        self.c.timings.stamp("fence", t0)
        t1, step = self.cutover.drain(self._token)
        if t1 is not None:
            self.c.timings.stamp("drained", t1)
        return step

    def _fenced(self, resumed: bool) -> Step:
        """Fenced by a fence read back (or journaled): finish the drain."""
        _, step = self.cutover.drain(self._fence_token())
        return step

    def _drained(self, resumed: bool) -> Step:
        token = self._fence_token()
        try:
            return self.cutover.write_migration(token)
        except VoterUnavailableError as exc:
            if fence_of(exc) is not None:  # it said where the fence stands
                raise
            raise marked(VoterUnavailableError(fenced_without_log(
                exc, self.c.controller_id, token)), ZkFence.FENCED) from exc

    def _migration(self, resumed: bool) -> Step:
        return self.handoff.begin()  # /migration written by an earlier run

    def _handoff(self, resumed: bool) -> Step:
        if resumed:
            return self.handoff.begin()  # stopped inside the handoff: begin it again
        token = self._fence_token()
        t2 = self.handoff.hand_off()
        if t2 is not None:
            self.c.timings.stamp("claimed", t2)
        self._window()
        self.c.out.fence = {"controller_epoch": token.controller_epoch,
                            "epoch_zk_version": token.epoch_zk_version}
        self._finish_report()
        return Advance(Phase.DONE, {"facts": self._facts()})

    # -----------------------------------------------------------------------------------------

    def _fence_token(self) -> FenceToken:
        """The fence's token: this run's, or the journal's (from `fenced` on)."""
        if self._token is None:
            assert self.c.journal.fence is not None
            self._token = FenceToken.from_json(self.c.journal.fence)
        return self._token

    def _window(self) -> None:
        """The window from the recorded stamps, when this run fenced and drained (t0, t1; t2
        when a KRaft controller claimed /controller in time): one monotonic clock."""
        stamps = self.c.out.stamps
        if "fence" not in stamps or "drained" not in stamps:
            return
        t0 = stamps["fence"]
        self.c.out.window_tool_ms = (stamps["drained"] - t0) * 1000.0
        claimed = stamps.get("claimed")
        self.c.out.window_total_ms = None if claimed is None else (claimed - t0) * 1000.0

    def _facts(self) -> dict[str, Any]:
        return {"last_offset": self.c.quorum.last_offset, "fence": self.c.out.fence,
                "window_ms": {"tool": round_ms(self.c.out.window_tool_ms),
                              "total": round_ms(self.c.out.window_total_ms)}}

    def _finish_report(self) -> None:
        self.c.out.last_offset = self.c.quorum.last_offset
        self.c.out.voters = self.c.voters()
        if self.c.out.already_done:
            facts = self.c.journal.facts
            self.c.out.fence = facts.get("fence")
            self.c.out.migration_zk_version = self.c.journal.migration_zk_version
            self.c.sink.say(f"this migration already finished (journal {self.c.journal.path}); "
                            "nothing to do")


def _enter(c: RunContext | None, step: Advance, journal: Journal | None = None) -> None:
    """The one place the run's phase changes: `step` journaled in one durable save (timed into
    drained -> handoff's cost when t1 is this run's), then what the phase does once it is."""
    j = journal if c is None else c.journal
    assert j is not None
    with contextlib.nullcontext() if c is None else c.timed("journal"):
        j.enter(step.to, **step.changes)
    if step.then is not None:
        step.then()


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
    _enter(None, Advance(Phase.MIGRATION, {"migration_zk_version": version}), journal)
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


def _preflight(options: OnlineOptions, zk: ZooKeeper, clocks: Clocks) -> Preflight:
    """Read the tree with every watch armed and judge it, before the transport opens.

    A fresh run judges first because opening writes: the stand-in wins an election (the
    controllers commit its LeaderChange) and commits the PRE_MIGRATION bootstrap, local voters
    get their files, and the journal is saved. A run that is then refused must leave none of
    that behind, so blockers stop it here, where nothing has been written anywhere.
    The pre-copy copies this very snapshot; what changes meanwhile reaches the mirror through
    the watches this read armed.
    """
    snapshot = read_tree(zk, watch=True, clock=clocks.monotonic, sleep=clocks.sleep)
    return Preflight(snapshot, judge_tree(options, translation_options(options), snapshot))


def run_online(options: OnlineOptions, *, sink: StatusSink,
               trigger: CutoverRequest | None = None,
               clocks: Clocks = SYSTEM_CLOCKS) -> OnlineOutcome:
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
    trigger = trigger or CutoverRequest()
    try:
        Journal.load(options.journal_dir)
    except ValueError as exc:
        raise BadFlagError(f"--journal: {exc}") from None
    with contextlib.ExitStack() as locks:
        # Kafka's .lock on every voter, before anything else and for the whole run: no
        # controller can start on a log still being written, no second zk2kraft can interleave.
        locks.enter_context(hold_voter_locks([t.path for t in options.voters]))
        return _run_locked(options, sink, trigger, clocks, locks.close)


def _run_locked(options: OnlineOptions, sink: StatusSink, trigger: CutoverRequest,
                clocks: Clocks, release_locks: Callable[[], None]
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
        preflight: Preflight | None = None
        if journal is None:
            preflight = _preflight(options, LiveZooKeeper(session), clocks)
            if preflight.summary.report.blockers:
                return _refused(options, _with_recorded_leader(options, preflight))
        quorum: QuorumLog
        repairs: list[TailRepair] = []  # what opening local voters changed after a crash
        opened_at = -1
        if options.standin is not None:
            try:
                quorum, opened_at = open_standin(
                    options.standin, cluster_id=cluster_id, mv=options.metadata_version,
                    resuming=journal is not None, say=sink.say)
            except QuorumLedElsewhereError as exc:
                if journal is None:  # a controller stood before the stand-in asked
                    raise QuorumLedElsewhereError(
                        explain_led_first(exc, read_fence_state(session), options.standin,
                                          connect=options.connect.connect,
                                          journal_path=options.journal_dir / JOURNAL_FILE),
                        voter_id=exc.voter_id, leader_id=exc.leader_id,
                        leader_epoch=exc.leader_epoch) from None
                stopped_in = journal.phase
                written = _finish_migration_znode(session, journal, options.standin.node_id)
                raise QuorumLedElsewhereError(
                    explain_takeover(exc, journal, read_fence_state(session), options.standin,
                                     connect=options.connect.connect, stopped_in=stopped_in,
                                     migration_written=written),
                    voter_id=exc.voter_id, leader_id=exc.leader_id,
                    leader_epoch=exc.leader_epoch) from None
        else:
            local = LocalVoterQuorum([(t.node_id, t.path) for t in options.voters],
                                     cluster_id=cluster_id, leader_epoch=_LEADER_EPOCH)
            quorum, repairs = local, local.repairs
        try:
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
            context = RunContext(options, LiveZooKeeper(session), quorum, journal, sink,
                                 clock=clocks.monotonic, wall=clocks.wall,
                                 sleep=clocks.sleep, trigger=trigger,
                                 release_locks=release_locks, opened_at=opened_at)
            if options.standin is not None:
                context.out.transport = options.standin.to_json()
            out = _Run(context, preflight).run()
            if isinstance(out, Stop):
                return context.out  # refused: its summary lists the blockers
            out.repairs = [r.describe() for r in repairs]
            return out
        finally:
            quorum.close()


def _with_recorded_leader(options: OnlineOptions, preflight: Preflight) -> PlanSummary:
    """The refusal's summary, its `MIGRATION_ZNODE_EXISTS` also saying who led and the way out when
    a controller that led without the stand-in recorded itself in `/migration`
    (`explain_recorded_leader`)."""
    summary, m = preflight.summary, preflight.snapshot.migration
    if options.standin is None or m is None:
        return summary
    said = explain_recorded_leader(m, options.standin, connect=options.connect.connect,
                                   journal_path=options.journal_dir / JOURNAL_FILE)
    if said is None:
        return summary
    blockers = tuple(Finding(f.code, f"{f.message} {said}", f.path)
                     if f.code == "MIGRATION_ZNODE_EXISTS" else f
                     for f in summary.report.blockers)
    return dataclasses.replace(summary, report=type(summary.report)(blockers,
                                                                    summary.report.warnings))


def _refused(options: OnlineOptions, summary: PlanSummary) -> OnlineOutcome:
    """The outcome of a run the pre-flight refused: nothing written (the command exits 1)."""
    out = OnlineOutcome(summary=summary, cutover=options.cutover)
    if options.standin is not None:
        out.transport = options.standin.to_json()
    return out
