"""`zk2kraft rollback`: undo an online cutover before finalisation, epoch-safely.

What it does, and why (Kafka's docs/ops.html, "Reverting to ZooKeeper mode During the
Migration", KAFKA-20488):

1. Holds every voter's `.lock` (`writers.hold_voter_locks`, as `migrate` does) for the whole
   rollback, so it refuses while one is held: a running KRaft controller owns ZooKeeper now and
   would claim `/controller` again (exit 3, naming the holder). Stop (deprovision) the
   controllers first; none can start meanwhile.
2. Refuses a finalised migration: once the log holds `ZkMigrationStateRecord(POST_MIGRATION)`
   there is no way back (exit 1).
3. One multi-op, checking `/controller_epoch`'s version: delete our persistent `/controller`
   claim, delete `/migration`, and lift `/controller_epoch` to at least one above the highest
   `controller_epoch` written into any partition state znode. In dual-write the KRaft controller
   writes its own epoch there, and a ZooKeeper controller whose epoch is not above it aborts its
   leader elections for those partitions ("…already written by another controller").
4. Moves the online journal aside, so a later `migrate` does not resume a rolled-back run.

The voters' logs are left alone (the operator deprovisions the controllers and clears their
metadata directories before migrating again); ZooKeeper brokers then elect a controller.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import orjson

from migrate._journal import default_journal_dir
from migrate._private_file import check_output_path, write_private
from migrate._translate_framing import ZK_MIGRATION_STATE_POST_MIGRATION
from migrate._voterargs import check_voter_flags
from migrate._zkargs import connect_options
from migrate.errors import BlockersFoundError
from writers import METADATA_PARTITION_DIR, hold_voter_locks, open_log_source
from zkreader import open_session, read_cluster, read_fence_state, release_claim

__all__ = ["run"]


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


def run(args: argparse.Namespace) -> int:
    """Run the rollback; 0 when ZooKeeper can lead again (or already could)."""
    voters = check_voter_flags(args.voters, required=True)
    check_output_path("--json", args.json)
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
            before = read_fence_state(session)
            if before.controller is not None and before.controller_ephemeral and \
                    before.migration is None:
                doc: dict[str, object] = {"rolled_back": False,
                                          "reason": "no KRaft claim: ZooKeeper already has its "
                                          "own controller"}
            else:
                snapshot = read_cluster(session, watch=False)
                highest = max((s.controller_epoch for s in snapshot.partition_states.values()),
                              default=0)
                done = release_claim(session, min_controller_epoch=highest + 1)
                doc = {"rolled_back": True, "highest_partition_controller_epoch": highest,
                       **done}
        journal = Path(args.journal) if args.journal else default_journal_dir(voters[0][1])
        moved = None
        if (journal / "journal.json").exists():
            moved = journal / "journal.rolled-back.json"
            os.replace(journal / "journal.json", moved)
            doc["journal_moved_to"] = str(moved)
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
            out.write("ZooKeeper brokers will now elect a controller. Remove the migration "
                      "configs from the brokers and clear the KRaft controllers' metadata "
                      "directories before migrating again.\n")
        else:
            out.write(f"nothing to roll back: {doc['reason']}\n")
        if moved is not None:
            out.write(f"journal moved aside to {moved}\n")
    return 0
