"""`zk2kraft inspect PATH [--json]`: decode and validate a metadata log, print it.

PATH may be a voter directory (its `meta.properties` and `__cluster_metadata-0/`), a
`__cluster_metadata-0` directory, one `.log` segment or one `.checkpoint` snapshot. Every batch's
CRC, every offset and every record is checked; the first problem stops the command with its
file, byte position and offset (exit 2) after printing what came before it. Nothing is written.

Exit codes (also in `--help`): 0 valid; 1 valid but the log ends inside an open metadata
transaction (a `BeginTransactionRecord` with no `End`/`AbortTransactionRecord` after it: a
controller taking over would abort it and drop its records, so the log is not what it looks
like; everything is still printed, the finding goes to stderr); 2 PATH does not exist, is not a
metadata log, or is damaged; 3 PATH exists but cannot be read (permissions, I/O error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from migrate.cli.args import SUB_EPILOG, Subparsers
from migrate.cli.exit_codes import EXIT_FINDINGS
from migrate.cli.std_streams import stop_at_stdout_failure
from migrate.errors import MigrateError
from verify import (
    RedactionPolicy,
    TransactionTracker,
    inspect_json_lines,
    open_transaction_message,
    render_inspect,
)
from writers import VoterStateError, open_log_source

__all__ = ["add_parser", "run"]


def _non_negative_int(value: str) -> int:
    try:
        result = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if result < 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be >= 0")
    return result


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft inspect` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "inspect",
        help="decode a voter dir, log dir, .log or .checkpoint",
        description="Decode and validate a metadata log: every CRC, offset and record.\n"
        "With --json, one object per record, {\"offset\",\"type\",\"version\",\"data\"}, "
        "named\nexactly as kafka-dump-log --cluster-metadata-decoder prints them (snapshots "
        "first,\nthen the log segments). Writes nothing.\n\n"
        "inspect's exit codes: 0 valid; 1 valid, but the log ends inside an open metadata\n"
        "transaction (a controller taking over would abort it and drop its records); 2 PATH\n"
        "missing, not a metadata log, or damaged (the message names file, byte position and\n"
        "offset; everything before the damage is printed first); 3 PATH exists but cannot be\n"
        "read (permissions, I/O error).",
        epilog=SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help="voter dir, log dir, .log or .checkpoint file")
    p.add_argument("--json", action="store_true", help="JSON lines, one record per line")
    p.add_argument("--max-records", type=_non_negative_int, default=200, metavar="N",
                   help="records listed in the readable view (default 200; counts cover all)")
    p.add_argument("--unredacted", action="store_true",
                   help="print SCRAM salts/keys, token details and sensitive config values "
                   "as stored (default: redacted); for byte-exact comparison with kafka-dump-log")


def run(args: argparse.Namespace) -> int:
    """Run `inspect`; see the module docstring.

    Raises:
        MigrateError: PATH missing or not a metadata log (exit 2).
        LogCorruptionError: the log is damaged (exit 2).
        VoterUnavailableError: PATH cannot be read (exit 3).
    """
    path = Path(args.path)
    try:
        source = open_log_source(path)
    except FileNotFoundError:
        raise MigrateError(f"{path}: no such file or directory") from None
    except VoterStateError as exc:  # not a log (or a foreign meta.properties): bad input
        raise MigrateError(str(exc)) from None
    policy = RedactionPolicy.DISABLED if args.unredacted else RedactionPolicy.STRICT
    stop_at_stdout_failure()  # the output is the work: no decoding into a pipe nobody reads
    if args.json:
        out = sys.stdout.buffer
        transactions = TransactionTracker()
        try:
            for obj in inspect_json_lines(source, policy, transactions):
                out.write(orjson.dumps(obj) + b"\n")
        finally:
            out.flush()
        open_txn = transactions.open
    else:
        from rich.console import Console

        open_txn = render_inspect(Console(), source, policy=policy,
                                  max_records=args.max_records).open_transaction
    if open_txn is not None:
        sys.stderr.write(f"zk2kraft inspect: {path}: {open_transaction_message(open_txn)}\n")
        return EXIT_FINDINGS
    return 0
