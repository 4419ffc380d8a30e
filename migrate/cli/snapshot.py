"""`zk2kraft snapshot`: read the Kafka tree and dump it as redacted JSON lines (read-only).

The command only reads: no znode is created, changed or deleted. With `--out FILE` the dump is
written to a 0600 file that appears complete or not at all (temporary file, fsync, rename), so a
failed read never leaves a half dump that looks whole. The line format is documented in
`migrate/cli/snapshot_json.py` and in `zk2kraft snapshot --help`.
"""

from __future__ import annotations

import argparse
import sys

from migrate._private_file import check_output_path, write_private
from migrate._progress import ProgressBars, progress_wanted
from migrate.cli.args import SUB_EPILOG, Subparsers, add_zookeeper
from migrate.cli.snapshot_json import snapshot_lines
from migrate.flags.zookeeper import connect_options, read_snapshot

__all__ = ["add_parser", "run"]


_SNAPSHOT_FORMAT = """\
output: one JSON object per line,
  {"kind": K, "path": "/znode/path", "data": {...}, "stat": {"czxid", "mzxid", "version",
   "ctime_ms", "mtime_ms", "ephemeral_owner", "num_children"}}
  kinds in order: cluster_id, controller, controller_epoch, feature, migration, broker, topic,
  partition_state, pending_deletion (stat null), config, acl, delegation_token,
  producer_id_block, log_dir_event. Paths are relative to the chroot. Redacted as
  "<redacted>": SCRAM credentials, password/JAAS/secret configs, encrypted values and
  delegation-token details.

"""


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft snapshot` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "snapshot",
        help="read-only dump of the Kafka tree as JSON lines (secrets redacted)",
        description="Read the whole Kafka tree from ZooKeeper (read-only) and print one JSON "
        "object per znode-derived entity. SCRAM credentials and passwords are redacted.",
        epilog=_SNAPSHOT_FORMAT + SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_zookeeper(p)
    p.add_argument("--out", metavar="FILE", help="write to FILE (mode 0600) instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    """Run `snapshot`; returns 0 (errors propagate to `cli.main` with their exit codes)."""
    to_stdout = args.out is None or args.out == "-"
    check_output_path("--out", args.out)
    options = connect_options(args)
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        snapshot = read_snapshot(options, bars)
    if to_stdout:
        out = sys.stdout.buffer
        for line in snapshot_lines(snapshot):
            out.write(line)
        out.flush()
    else:
        write_private("--out", args.out, snapshot_lines(snapshot))
    return 0
