"""The pre-copy phase: the tree judged before the transport opened goes into the live logs,
after `FeatureLevelRecord` + `BeginTransactionRecord`, durable on a majority; the transaction
stays open (docs/design/online-run.md)."""

from __future__ import annotations

from migrate.online.phases import Advance, Phase, Step, Stop
from migrate.online.phases.context import (
    OWN_CLAIM,
    Preflight,
    RunContext,
    without,
    znode_version,
)
from migrate.online.phases.resume import earlier_fence_applied
from migrate.translate.framing import header_records
from writers import MetadataRecord, precopy_chunk
from writers import crash_point as _crash  # test-only hooks (writers/_faults.py)

__all__ = ["PreCopy"]


class PreCopy:
    """The pre-copy (a fresh run, or a resume inside it): the judged tree into the live logs
    inside the open transaction; or, resuming after it, the whole tree again with every watch
    re-armed and the difference written (`resync_resumed`)."""

    def __init__(self, c: RunContext, preflight: Preflight | None) -> None:
        self.c = c
        self.preflight = preflight  # a fresh run's: the tree read and judged before any write

    def precopy(self) -> Step:
        """Write the judged tree after the header, durably: `mirror` (with the durable offset),
        or `Stop` when a resumed pre-copy's fresh judgement found blockers."""
        start = self.c.clock()
        if self.preflight is not None:
            # a fresh run: the tree the pre-flight read (watches armed) and judged before the
            # transport opened; what changed since is in the change feed, for the mirror
            snapshot, self.c.out.summary = self.preflight.snapshot, self.preflight.summary
            self.preflight = None
        else:  # a resume inside the pre-copy: read and judge afresh
            snapshot = self.c.read(watch=True)
            self.c.out.summary = self.c.judge(snapshot)
        if self.c.out.summary.report.blockers:
            return Stop()
        self.c.migration_judged = znode_version(snapshot.migration)
        header: list[MetadataRecord] = []
        if self.c.quorum.last_offset <= self.c.opened_at:
            header = header_records(self.c.mv)
            self.c.quorum.append_records(header, timestamp_ms=self.c.ts(snapshot))
            self.c.log.apply(header)
        # On a fresh log the image is empty and this is the bulk copy; a resumed pre-copy also
        # removes what ZooKeeper dropped while the tool was down.
        body = self.c.resync_delta(snapshot).records
        delta = header + body
        self.c.sink.say(f"pre-copy: writing {len(delta)} records into the live logs of voter(s) "
                        f"{', '.join(str(t.node_id) for t in self.c.o.voters)} (transaction open)")
        chunk = precopy_chunk()
        for i in range(0, len(body), chunk):
            self.c.append(body[i:i + chunk], snapshot)
            _crash("precopy_batch")
        self.c.out.precopy_records = len(delta)
        # The stand-in's brokers register from now on: after the ZooKeeper copies of their
        # registrations, which theirs supersede (docs/design/standin.md "Brokers register with the
        # stand-in"); local voters take none.
        self.c.quorum.serve_brokers(self.c.mv)

        def durable() -> None:
            self.c.watching = True
            self.c.timings.took("precopy", start)
            self.c.sink.say(f"pre-copy durable on a majority: offsets "
                            f"0..{self.c.quorum.last_offset}")
        return Advance(Phase.MIRROR, {"last_durable_offset": self.c.quorum.durable_offset},
                       then=durable)

    def resync_resumed(self) -> Step | None:
        """A resume before the fence: the crashed run's watches died with its session and
        ZooKeeper may have changed or dropped anything meanwhile. Re-read the whole tree with
        every watch armed again, write the difference (removals included) and mirror on, so
        the drain again covers only what changes from here.

        Returns:
            None to mirror on; `fenced` when the KRaft claim judged is an earlier run's fence
            that applied (`resume`); `Stop` when the judgement found blockers.
        """
        start = self.c.clock()
        snapshot = self.c.read(watch=True)
        self.c.out.summary = self.c.judge(snapshot)
        if self.c.out.summary.report.blockers:
            if self.c.journal.claims and any(
                    f.code in OWN_CLAIM for f in self.c.out.summary.report.blockers):
                # the KRaft claim judged may be a fence an earlier run sent that applied after
                # this run read back "not applied": ours, then, not another controller's
                earlier = earlier_fence_applied(self.c)
                if earlier is not None:
                    self.c.out.summary = without(self.c.out.summary, OWN_CLAIM)
                    return earlier
            return Stop()
        self.c.migration_judged = znode_version(snapshot.migration)
        self.c.check_log_is_ours()
        delta = self.c.resync_delta(snapshot)
        chunk = precopy_chunk()
        for i in range(0, len(delta.records), chunk):
            self.c.append(delta.records[i:i + chunk], snapshot)
        self.c.ts(snapshot)
        self.c.watching = True
        self.c.out.mirrored_records += len(delta.records)
        self.c.timings.took("resync", start)
        self.c.sink.say(f"resume: re-read the whole tree (watches armed again); "
                        f"{len(delta.records)} record(s) of difference written, offsets "
                        f"0..{self.c.quorum.last_offset}")
        return None
