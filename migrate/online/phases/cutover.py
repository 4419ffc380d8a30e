"""The cutover phase: journal the claim, fence ZooKeeper's controller, drain what was notified
before the fence into the log and close its transaction (t1), then write `/migration` (whether
a fence an earlier run sent applied is `resume`'s)."""

from __future__ import annotations

from migrate.errors import BlockersFoundError
from migrate.online.fence_status import ZkFence, fence_of, marked, zk_lost
from migrate.online.phases import Advance, Phase
from migrate.online.phases.context import (
    MIGRATION_PATH,
    IntervalCost,
    RunContext,
    fenced_without_log,
)
from migrate.online.phases.handoff import resign
from migrate.online.phases.mirror import Mirror
from migrate.online.phases.resume import earlier_fence_applied
from migrate.online.takeover import refused_fence_advice
from migrate.preflight.checks import standin_migration_finding
from migrate.translate.framing import (
    ZK_MIGRATION_STATE_MIGRATION,
    scram_restatement_records,
    trailer_records,
)
from writers import MetadataRecord, VoterUnavailableError
from writers import crash_point as _crash  # test-only hooks (writers/_faults.py)
from writers import pause_point as _pause
from zkreader import (
    MIGRATION_ABSENT,
    ClusterSnapshot,
    ControllerMovedError,
    FenceNotAppliedError,
    FenceToken,
    MigrationMovedError,
    MigrationState,
    MigrationZnode,
    ZkUnreachableError,
    claim_json,
    kind_for_path,
)

__all__ = ["Cutover"]


class Cutover:
    """The cutover: the fence (one multi-op, never sent twice), the drain (the final delta,
    `ZkMigrationStateRecord(MIGRATION)` and `EndTransactionRecord`, durable: t1) and `/migration`
    naming the log's end (docs/design/online-run.md)."""

    def __init__(self, c: RunContext, mirror: Mirror) -> None:
        self.c = c
        self.mirror = mirror  # the drain reads what it left pending
        self._claim_ms = 0  # the journaled claim's timestamp, which the fence writes

    def claim(self) -> Advance:
        """The claim this run's fence writes into `/controller`: `fencing`, journaling it before
        the multi-op leaves (every earlier claim kept, `Journal.claim_changes`)."""
        self.c.sink.say(f"cutting over: ZooKeeper session {self.c.zk.state}")
        self._claim_ms = int(self.c.wall() * 1000)
        self.c.out.fence_wall_s = self._claim_ms / 1000.0
        claim = claim_json(self.c.controller_id, self.c.epoch, self._claim_ms)
        return Advance(Phase.FENCING, self.c.journal.claim_changes(claim.decode()))

    def fence(self) -> tuple[float, FenceToken] | Advance:
        """Fence with the claim journaled (`claim`): t0 and the token, or `fenced` when the
        fence was refused because an earlier run's fence holds `/controller` (`resume`).

        Raises:
            MigrationMovedError / ControllerMovedError: as `zkreader.fence_zk_controller`.
            ZkUnreachableError: ZooKeeper did not answer in time (`ZkSession.call`); it says,
                and carries (`fence_status.fence_of`), whether the fence was sent and applied.
        """
        sent: list[tuple[float, float]] = []
        try:
            return self._fence(sent)
        except ZkUnreachableError as exc:
            if fence_of(exc) is not None:
                raise
            applied = (ZkFence.NOT_FENCED if not sent or isinstance(exc, FenceNotAppliedError)
                       else ZkFence.MAY_BE_FENCED)
            raise zk_lost(exc, applied, journal=self.c.journal.path) from None

    def _fence(self, sent: list[tuple[float, float]]) -> tuple[float, FenceToken] | Advance:
        """`fence`, noting in `sent` when the multi-op goes out."""
        _pause("before_fence")
        _crash("before_fence")
        # every way here passes the pre-copy or the resync, which judged /migration
        assert self.c.migration_judged is not None
        self._adopt_controllers_migration_znode()
        retries = 3  # each for a new version of an empty /migration; a loop that never settles
        while True:
            try:
                token = self.c.zk.fence(
                    kraft_controller_id=self.c.controller_id, kraft_epoch=self.c.epoch,
                    timestamp_ms=self._claim_ms, migration_version=self.c.migration_judged,
                    on_sent=lambda: sent.append((self.c.clock(), self.c.wall())))
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
                earlier = earlier_fence_applied(self.c)
                if earlier is None:
                    raise
                return earlier
        # the wall-clock times are taken where each boundary is, beside its monotonic stamp
        t0, wall = sent[-1]
        self.c.timings.wall_at("fence", wall)
        # No journal write here: it would sit inside the window, and the `fencing` entry (our
        # exact claim) already lets a resume read back that the fence applied.
        self.c.timings.took("fence", t0)
        _crash("fence_unjournaled")
        _crash("after_fence")
        _pause("after_fence")
        return t0, token

    def _migration_moved_advice(self, exc: MigrationMovedError) -> str:
        """The fence's refusal, with what the operator does next. With the stand-in, it first
        hands the quorum to a real controller, so that it is not left leaderless until the
        controllers' fetch timeout (docs/design/standin-recovery.md, "A refused fence hands the
        quorum over")."""
        if self.c.o.standin is None:
            return str(exc)
        try:
            resign(self.c)
        except Exception as resign_exc:  # noqa: BLE001 - the refusal is reported either way
            self.c.sink.say(f"WARNING: the stand-in could not resign: {resign_exc}")
        handover = self.c.out.handover or {}
        return refused_fence_advice(
            str(exc), int(handover.get("new_leader", -1)), int(handover.get("new_epoch", -1)),
            connect=self.c.o.connect.connect, journal_path=self.c.journal.path,
            handoff_timeout_s=self.c.o.handoff_timeout_s)

    def _adopt_controllers_migration_znode(self) -> bool:
        """With the stand-in: take a `/migration` that changed since it was judged as judged
        again when it is Kafka's "nothing migrated yet" (`ZkMigrationLeadershipState.EMPTY`,
        all four fields -1), which every controller in migration mode get-or-creates when it
        starts, whenever that is (before zk2kraft, with it or after it). The fence then writes
        it at the version read here, so a controller that records a real claim after this read
        still fails the fence (`MigrationMovedError`); a real claim read here keeps its
        blocker's words and fails the fence as before. Returns True when it took a new version.
        """
        if self.c.o.standin is None:
            return False
        got = self.c.zk.get(MIGRATION_PATH)
        version = MIGRATION_ABSENT if got is None else got[1].version
        if version == self.c.migration_judged or got is None:
            return False
        kind = kind_for_path(MIGRATION_PATH)
        assert kind is not None
        znode = kind.decode(*got)
        assert isinstance(znode, MigrationZnode)
        finding = standin_migration_finding(znode)
        if finding is not None:
            self.c.sink.say(f"WARNING: {finding.message}")
            return False  # the fence refuses it (MigrationMovedError), nothing applied
        self.c.sink.say(f"/migration appeared or changed since it was judged (version "
                        f"{version}), holding Kafka's empty state (a controller in migration mode "
                        "created it when it started): the fence takes it over at that version")
        self.c.migration_judged = version
        return True

    def drain(self, token: FenceToken) -> tuple[float | None, Advance]:
        """`_drain`, with a voter loss explained the way the caller explains it: t1 (None when
        an earlier run's append was found complete) and `drained`."""
        try:
            return self._drain(token)
        except VoterUnavailableError as exc:
            raise marked(VoterUnavailableError(fenced_without_log(exc, self.c.controller_id,
                                                                  token)), ZkFence.FENCED
                         ) from exc
        except BlockersFoundError as exc:  # a topic reusing another's id, made in the window
            raise marked(BlockersFoundError(
                f"{exc} ZooKeeper IS fenced (/controller claimed by {self.c.controller_id}) and "
                "the log is not closed, so the cluster has no controller until that re-run "
                "finishes the drain."), ZkFence.FENCED) from None
        except ZkUnreachableError as exc:
            raise zk_lost(exc, ZkFence.FENCED, journal=self.c.journal.path,
                          controller_id=self.c.controller_id, token=token) from None

    def _drained(self, token: FenceToken) -> dict[str, object]:
        """What the journal saves with `drained`."""
        return {"fence": token.to_json(), "last_durable_offset": self.c.quorum.durable_offset}

    def _drain(self, token: FenceToken) -> tuple[float | None, Advance]:
        """sync, re-read what was notified before the fence, append the final delta with
        `ZkMigrationStateRecord(MIGRATION)` + `EndTransactionRecord` in one durable append: t1."""
        start = self.c.clock()
        state = self.c.log.framing
        if state.migration_state == ZK_MIGRATION_STATE_MIGRATION and not state.transaction_open:
            self._restate_scram()  # a crash may have come between the trailer and it
            return None, Advance(Phase.DRAINED, self._drained(token))
        self.mirror.sync()
        t_sync = self.c.clock()
        _pause("drain_synced")
        trailer = trailer_records(self.c.mv)
        if not self.c.watching:
            # A resume after the fence: the crashed run's notifications died with it and this
            # process armed no watch, so the whole tree is compared once.
            snapshot = self.c.read(watch=False)
            if self.c.out.summary is None:
                self.c.out.summary = self.c.judge(snapshot, after_fence=True)
            delta = self.c.resync_delta(snapshot).records
            if delta:
                self.c.log.apply(delta)  # the image and the framing (SCRAM removals) alike
            applied: list[MetadataRecord] = trailer
        else:
            snapshot = ClusterSnapshot()
            # watch=False: nothing is mirrored after this, and arming would cost every read
            # round a second round trip (its SetWatches) inside the window. `changed_entities`
            # still tells a new child of a notified list from an existing one by the watches the
            # mirror armed, so the drain re-reads only what changed.
            found = self.mirror.delta(self.mirror.pending(), watch=False, append=False,
                                      patience_s=self.c.zk.retry_s)
            delta = found.records
            applied = trailer if found.applied else delta + trailer
        self.c.out.delta_records = len(delta)
        _crash("mid_drain")
        t_read = self.c.clock()
        self.c.quorum.append_records(delta + trailer, timestamp_ms=self.c.ts(snapshot))
        t1 = self.c.timings.mark("drained", stamp=False)
        self.c.after_drain = IntervalCost(self.c.clock, t1)
        self.c.log.apply(applied)
        if self._restate_scram():  # part of the window: durable before /migration and handoff
            t1 = self.c.timings.mark("drained", stamp=False)
            self.c.after_drain = IntervalCost(self.c.clock, t1)
        self.c.timings.took("drain_sync", start, t_sync)
        self.c.timings.took("drain_reread", t_sync, t_read)
        self.c.timings.took("drain_append", t_read, t1)
        self.c.timings.took("drain", start, t1)

        def durable() -> None:
            self.c.sink.say(f"fenced: /controller_epoch is now {token.controller_epoch}, "
                            f"/controller is claimed by {self.c.controller_id} "
                            f"(kraftControllerEpoch {self.c.epoch}); ZooKeeper's controller can "
                            "no longer write")
            self.c.sink.say(f"drained: {len(delta)} final delta record(s), "
                            f"ZkMigrationStateRecord(MIGRATION) and EndTransactionRecord durable; "
                            f"log ends at offset {self.c.quorum.last_offset}")
            _crash("after_end_transaction")
        return t1, Advance(Phase.DRAINED, self._drained(token), then=durable)

    def _restate_scram(self) -> bool:
        """After a migration transaction that removed a SCRAM credential, state every live one
        again in a transaction of its own, durable before the handoff
        (`migrate.online.mirror_delta`: Kafka 3.9.1 would otherwise drop a mechanism's
        credentials from its image)."""
        if not self.c.log.framing.scram_restatement_due:
            return False
        records = scram_restatement_records(self.c.log.image.scram.records())
        if not records:
            return False  # no credential left: nothing Kafka could lose
        self.c.quorum.append_records(records, timestamp_ms=self.c.ts(None))
        self.c.log.apply(records)
        self.c.sink.say(f"restated {len(records) - 2} SCRAM credential(s) in a transaction of "
                        "their own: a SCRAM user was removed during the mirror (Kafka 3.9.1 would "
                        "otherwise drop its mechanism's credentials when it loads the migration)")
        return True

    def write_migration(self, token: FenceToken) -> Advance:
        """`/migration` names the log's end: `handoff`, journaling its version with the handoff's
        beginning in one save (a resume between the two would write /migration again, which reads
        back as already applied: `write_migration_state`)."""
        start = self.c.clock()
        state = MigrationState(self.c.controller_id, self.c.epoch, self.c.quorum.last_offset,
                               self.c.epoch)
        _crash("before_migration")
        try:
            with self.c.timed("zookeeper"):
                version = self.c.zk.write_migration_state(token, state)
        except ZkUnreachableError as exc:
            raise zk_lost(exc, ZkFence.FENCED, journal=self.c.journal.path,
                          controller_id=self.c.controller_id, token=token,
                          log_closed_at=self.c.quorum.last_offset) from None
        self.c.timings.mark("migration_written")
        _crash("after_migration")
        self.c.out.migration_zk_version = version
        self.c.timings.took("migration", start)
        self.c.sink.say(f"/migration written: kraft_metadata_offset {self.c.quorum.last_offset}, "
                        f"kraft_metadata_epoch {self.c.epoch}")
        return Advance(Phase.HANDOFF, {"migration_zk_version": version})

