"""`zk2kraft prepare-broker --log-dirs DIR[,DIR...] [--dry-run]`: run on each stopped broker host
before its first start in KRaft mode after `migrate --offline`.

It gives the broker's first log dir the `directory.id` that `migrate --offline` names for every
replica of that broker (derived from the dir's own `cluster.id` and `broker.id`, so the two
never need to meet). Without it, a ZooKeeper-mode log dir gets a random id at the first KRaft
start, and the broker reports every replica's directory to the controller before its own
metadata image knows its broker epoch: `STALE_BROKER_EPOCH`, logged at ERROR on both sides,
until the image catches up (writers/log/broker_dirs.py has the Kafka facts). Nothing else is
changed: Kafka 3.9 and 4.x read the ZooKeeper-mode `meta.properties` (version 0) as it is.

Idempotent: a dir that already has this id is left alone, and a dir with another id (it ran with
migration enabled, or in KRaft mode) is never changed. Refuses while the broker runs (Kafka's
`.lock` in the dir is held: exit 3). Exit 2 when a dir is not a broker log dir.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from migrate.cli.args import SUB_EPILOG, Subparsers
from migrate.errors import BadFlagError
from writers import broker_directory_id, prepare_broker_log_dir

__all__ = ["add_parser", "run"]

_SAID = {
    "set": "directory.id set to {id}",
    "would set": "would set directory.id to {id} (--dry-run: nothing written)",
    "already set": "directory.id is already {id}: nothing to do",
    "kept": "has directory.id {have}, not {id}: kept (Kafka may know it); this broker's "
            "replicas will be re-reported at its first start",
    "not first": "not the first log dir: left alone (Kafka gives it an id at start)",
}


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft prepare-broker` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "prepare-broker",
        help="on each stopped broker host, after migrate --offline: give its first log dir "
        "the directory.id the log names",
        description="Run on each stopped broker host before its first start in KRaft mode "
        "after `migrate --offline`: gives the broker's first log dir the directory.id that "
        "the migrated log names for its replicas (derived from the dir's own cluster.id and "
        "broker.id), so the broker has no replica directory to report at start (without it: "
        "STALE_BROKER_EPOCH errors until its metadata catches up). Idempotent; never changes "
        "an existing directory.id; refuses while the broker runs (its .lock is held: exit 3).",
        epilog=SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--log-dirs", required=True, metavar="DIR[,DIR...]",
                   help="the broker's log.dirs, in the same order (the first one gets the id)")
    p.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")


def run(args: argparse.Namespace) -> int:
    """Run `prepare-broker`; see the module docstring."""
    dirs = [Path(d) for d in args.log_dirs.split(",") if d.strip()]
    if not dirs:
        raise BadFlagError("--log-dirs: give the broker's log.dirs, comma-separated")
    out = []
    for index, path in enumerate(dirs):
        found, done = prepare_broker_log_dir(path, first=index == 0, dry_run=args.dry_run)
        wanted = broker_directory_id(found.cluster_id, found.broker_id)
        out.append(f"{path}: broker {found.broker_id}: "
                   + _SAID[done].format(id=wanted, have=found.directory_id))
    sys.stdout.write("\n".join(out) + "\n")
    return 0
