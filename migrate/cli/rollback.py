"""`zk2kraft rollback`: undo an online cutover before finalisation, epoch-safely.

What it does, and why (Kafka's docs/ops.html, "Reverting to ZooKeeper mode During the
Migration", KAFKA-20488):

1. Holds every voter's `.lock` (`writers.hold_voter_locks`, as `migrate` does) for the whole
   rollback, so it refuses while one is held: a running KRaft controller owns ZooKeeper now and
   would claim `/controller` again (exit 3, naming the holder). Stop (deprovision) the
   controllers first; none can start meanwhile.
2. Refuses a finalised migration: once the log holds `ZkMigrationStateRecord(POST_MIGRATION)`
   there is no way back (exit 1).
3. Judges the persistent `/controller` against the journal: it removes one of the claims the
   journal says this migration's fences wrote, or a KRaft controller's claim above them (the
   controller that took over from us, stopped now), and refuses anything else (exit 1), or any
   persistent claim when there is no journal. Then one multi-op, checking `/controller_epoch`'s
   version and `/controller`'s: delete that `/controller` claim, delete `/migration`, and lift
   `/controller_epoch` to at least one above the highest `controller_epoch` written into any
   partition state znode. In dual-write the KRaft controller
   writes its own epoch there, and a ZooKeeper controller whose epoch is not above it aborts its
   leader elections for those partitions ("…already written by another controller").
4. Moves the online journal aside, so a later `migrate` does not resume a rolled-back run.
   A run that never fenced ZooKeeper (stopped during the pre-copy or the mirror) has nothing to
   roll back: ZooKeeper and the journal are left as they are, so the same `migrate` resumes it
   (or the operator removes the journal and clears the voters to start afresh).

The voters' logs are left alone (the operator deprovisions the controllers and clears their
metadata directories before migrating again); ZooKeeper brokers then elect a controller, and the
printed advice rolls them out of migration mode with their `__cluster_metadata-0` deleted
(`REVERT_BROKERS_FETCHED`: they fetched the discarded quorum's log as observers).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import orjson

from migrate._private_file import check_output_paths, voter_dirs, write_private
from migrate.cli.args import SUB_EPILOG, Subparsers, add_output, add_voters, add_zookeeper
from migrate.errors import BadFlagError, BlockersFoundError, JournalWriteError
from migrate.flags.voters import check_voter_flags
from migrate.flags.zookeeper import connect_options
from migrate.online import Journal, Phase, default_journal_dir
from migrate.online.operator_sequence import REVERT_BROKERS_FETCHED
from migrate.translate.framing import ZK_MIGRATION_STATE_POST_MIGRATION
from writers import METADATA_PARTITION_DIR, ReadPause, hold_voter_locks, open_log_source
from zkreader import (
    FenceState,
    claim_kraft_epoch,
    open_session,
    read_cluster,
    read_fence_state,
    release_claim,
)

__all__ = ["add_parser", "run"]


def _finalised(path: Path) -> bool:
    partition = path / METADATA_PARTITION_DIR
    if not partition.exists():
        return False
    for entry in open_log_source(partition).entries():
        for r in entry.batch.records:
            if r.type == "ZK_MIGRATION_STATE_RECORD" and \
                    r.data["zkMigrationState"] == ZK_MIGRATION_STATE_POST_MIGRATION:
                return True
    return False


def _judge_claim(state: FenceState, journal: Journal | None, journal_dir: Path) -> str | None:
    """Whose persistent `/controller` this is: "ours" (a claim the journal says one of this
    migration's fences wrote), "successor" (a KRaft controller's claim above ours, after one of
    our fences: the controller that took over from us), or None when there is no persistent one.

    Raises:
        BlockersFoundError: a persistent `/controller` the journal cannot vouch for (exit 1).
    """
    if state.controller is None or state.controller_ephemeral:
        return None
    if journal is None:
        raise BlockersFoundError(
            f"/controller holds a persistent claim ({state.controller.decode(errors='replace')}) "
            f"and there is no journal at {journal_dir / 'journal.json'} to say this migration "
            "wrote it: refusing to remove it. Pass --journal DIR of the run that fenced "
            "ZooKeeper")
    if state.controller in {c.encode() for c in journal.claims}:
        return "ours"
    ours = max((claim_kraft_epoch(c.encode()) for c in journal.claims), default=None)
    if ours is not None and state.kraft_controller_epoch > ours:
        return "successor"
    raise BlockersFoundError(
        f"/controller holds a persistent claim ({state.controller.decode(errors='replace')}) "
        f"that is none of the claims in the journal {journal.path} "
        f"({len(journal.claims)} claim(s), phase {journal.phase}) nor a KRaft controller's "
        "above them: another controller or tool wrote it; refusing to remove it (a KRaft "
        "migration zk2kraft did not fence, e.g. Kafka's own after a stand-in stopped early, is "
        "reverted as Kafka's guide says)")


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft rollback` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "rollback",
        help="undo an online cutover before finalisation (ZooKeeper's controller leads again)",
        description="Remove the /controller claim the journal says this migration wrote (or "
        "the claim of the KRaft controller that took over from it) and /migration in one "
        "multi-op checking /controller_epoch, and lift /controller_epoch above every "
        "controller_epoch in the partition state znodes (KAFKA-20488). Refuses while a "
        "voter's .lock is held (exit 3), after finalisation (exit 1), or when /controller "
        "holds a persistent claim the journal does not vouch for (exit 1). A run that never "
        "fenced ZooKeeper has nothing to roll back: its journal is kept, and the same "
        "migrate resumes it.",
        epilog=SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_zookeeper(p)
    add_voters(p, required=True)
    add_output(p)
    p.add_argument("--journal", metavar="DIR",
                   help="the online run's journal dir (default: <parent of the first voter "
                   "dir>/.zk2kraft-journal): its claims decide what may be removed; moved "
                   "aside once rolled back")


def run(args: argparse.Namespace) -> int:
    """Run the rollback; 0 when ZooKeeper can lead again (or already could, or this migration
    never fenced it)."""
    voters = check_voter_flags(args.voters, required=True)
    journal_dir = Path(args.journal).expanduser() if args.journal else \
        default_journal_dir(voters[0][1])
    check_output_paths([("--json", args.json)],
                       [*voter_dirs(voters), (f"--journal {journal_dir}", journal_dir)])
    try:
        journal = Journal.load(journal_dir)
    except ValueError as exc:
        raise BadFlagError(f"--journal: {exc}") from None
    # Only existing dirs: a missing one holds no log and no controller; rollback must not
    # create it (or its parents) just to lock it.
    with hold_voter_locks([path for _, path in voters if path.is_dir()]):
        for node_id, path in voters:
            if _finalised(path):
                raise BlockersFoundError(
                    f"--voter {node_id}={path}: the log holds "
                    "ZkMigrationStateRecord(POST_MIGRATION): the migration was finalised and "
                    "cannot be rolled back")
        with open_session(connect_options(args)) as session:
            before = read_fence_state(session, synced=True)
            owner = _judge_claim(before, journal, journal_dir)
            fenced = owner is not None or (journal is not None and journal.at_least(Phase.FENCED))
            doc: dict[str, object]
            if journal is not None and not fenced:
                doc = {"rolled_back": False,
                       "reason": f"this migration never fenced ZooKeeper (journal phase "
                       f"{journal.phase})"}
            elif before.controller is not None and before.controller_ephemeral and \
                    before.migration is None:
                doc = {"rolled_back": False,
                       "reason": "no KRaft claim: ZooKeeper already has its own controller"}
            else:
                snapshot = read_cluster(session, watch=False, pause=ReadPause.from_env())
                highest = max((s.controller_epoch for s in snapshot.partition_states.values()),
                              default=0)
                done = release_claim(session, min_controller_epoch=highest + 1,
                                     expect_controller=before.controller)
                doc = {"rolled_back": True, "highest_partition_controller_epoch": highest,
                       **done}
                if owner is not None:
                    doc["controller_claim"] = owner
        # The journal goes aside once its run is undone (or ZooKeeper leads again after a
        # fence), so a later `migrate` does not resume it. A run that never fenced keeps it:
        # its voters hold the log the journal describes, and the same `migrate` resumes it.
        moved = None
        if journal is not None and fenced:
            moved = journal_dir / "journal.rolled-back.json"
            try:
                os.replace(journal.path, moved)
            except OSError as exc:
                raise JournalWriteError(
                    f"journal {journal.path}: cannot move it aside to {moved} "
                    f"({exc.strerror or exc}) after "
                    + ("the rollback: ZooKeeper IS handed back" if doc["rolled_back"] else
                       "finding ZooKeeper handed back")
                    + "; remove the journal by hand before migrating again (a `migrate` "
                    "would resume the rolled-back run from it)") from exc
            doc["journal_moved_to"] = str(moved)
        elif journal is not None:
            doc["journal_kept"] = str(journal.path)
    if args.json is not None:
        write_private("--json", args.json, [orjson.dumps(doc, option=orjson.OPT_INDENT_2)])
    if not args.quiet:
        out = sys.stdout
        if doc["rolled_back"]:
            ce = doc["controller_epoch"]
            assert isinstance(ce, dict)
            out.write(f"rolled back: removed {', '.join(doc['removed']) or 'nothing'}; "  # type: ignore[arg-type]
                      f"/controller_epoch {ce['before']} -> {ce['after']} (above every "
                      f"partition state's controller_epoch, highest "
                      f"{doc['highest_partition_controller_epoch']})\n")
            # the brokers followed the KRaft quorum as observers: their copy goes with it
            out.write("ZooKeeper brokers will now elect a controller. Then "
                      f"{REVERT_BROKERS_FETCHED}; clear the KRaft controllers' metadata "
                      "directories before migrating again.\n")
        else:
            out.write(f"nothing to roll back: {doc['reason']}\n")
        if moved is not None:
            out.write(f"journal moved aside to {moved}\n")
        elif journal is not None:
            out.write(f"journal kept at {journal.path}: the same `zk2kraft migrate` resumes "
                      "this run; to start afresh instead, remove it and clear the voter "
                      "directories\n")
    return 0
