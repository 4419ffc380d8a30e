"""`zk2kraft inspect PATH [--json]`: decode and validate a metadata log, print it.

PATH may be a voter directory (its `meta.properties` and `__cluster_metadata-0/`), a
`__cluster_metadata-0` directory, one `.log` segment or one `.checkpoint` snapshot. Every batch's
CRC, every offset and every record is checked; the first problem stops the command with its
file, byte position and offset (exit 2) after printing what came before it. Nothing is written.

Exit codes (also in `--help`): 0 valid; 2 PATH does not exist, is not a metadata log, or is
damaged; 3 PATH exists but cannot be read (permissions, I/O error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from migrate.errors import MigrateError
from verify import RedactionPolicy, inspect_json_lines, render_inspect
from writers import VoterStateError, open_log_source

__all__ = ["run"]


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
    if args.json:
        out = sys.stdout.buffer
        try:
            for obj in inspect_json_lines(source, policy):
                out.write(orjson.dumps(obj) + b"\n")
        finally:
            out.flush()
        return 0
    from rich.console import Console

    render_inspect(Console(), source, policy=policy, max_records=args.max_records)
    return 0
