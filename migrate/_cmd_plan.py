"""`zk2kraft plan`: the pre-flight. Reads ZooKeeper, writes nothing but the reports asked for.

Flow: check every flag (exit 2 naming it) before connecting; read the tree (exit 3 if ZooKeeper
cannot be reached within `--zk-timeout`, exit 2 naming the znode if one is malformed); translate
it exactly as `migrate` would, to count the records and collect the translator's blockers; judge
it (`migrate._preflight`); print tables and write `--json`. Exit 1 when anything blocks.

Output routing keeps stdout machine-readable when asked: with `--json -` the document is the
only thing on stdout and the tables go to stderr; `--quiet` prints no tables or bars at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson
from rich.console import Console

from migrate._cmd_snapshot import read_snapshot
from migrate._preflight import PlanSummary, summarize
from migrate._private_file import check_output_path, write_private
from migrate._progress import ProgressBars, progress_wanted
from migrate._zkargs import connect_options
from migrate.errors import BadFlagError
from zkreader import ClusterSnapshot

__all__ = ["check_plan_flags", "plan_summary", "run"]


def check_plan_flags(args: argparse.Namespace) -> None:
    """Validate `plan`'s own flags before anything connects.

    Raises:
        BadFlagError: naming the flag (`--metadata-version`, `--voter`, `--json`, `--html`).
    """
    _parse_metadata_version(args.metadata_version)
    seen: set[int] = set()
    for node_id, directory in args.voters or ():
        if node_id in seen:
            raise BadFlagError(f"--voter {node_id}: node id given twice")
        seen.add(node_id)
        if Path(directory).exists() and not Path(directory).is_dir():
            raise BadFlagError(f"--voter {node_id}={directory}: not a directory")
    if args.json == "-" and args.html == "-":
        raise BadFlagError("--json - and --html -: only one document can go to stdout")
    check_output_path("--json", args.json)
    check_output_path("--html", args.html)
    if args.html is not None:
        raise BadFlagError("--html: the HTML report is not available in this build yet")


def _parse_metadata_version(value: str) -> None:
    from migrate.translate import parse_target_version

    parse_target_version(value)  # BadFlagError names --metadata-version and the valid range


def plan_summary(
    snapshot: ClusterSnapshot, *, metadata_version: str, password_encoder_secret: str | None
) -> PlanSummary:
    """Translate the snapshot as `migrate` would, and judge it: the plan's data.

    Raises:
        TranslationError: a znode cannot be expressed as KRaft records (exit 2, names the path).
    """
    from migrate.translate import TranslationOptions, translate

    result = translate(
        snapshot,
        TranslationOptions(
            metadata_version=metadata_version,
            password_encoder_secret=password_encoder_secret,
        ),
    )
    return summarize(
        snapshot,
        records=result.counts,
        extra_blockers=result.blockers,
        extra_warnings=result.warnings,
    )


def run(args: argparse.Namespace) -> int:
    """Run `plan`; returns 1 when blockers were found, else 0."""
    check_plan_flags(args)
    options = connect_options(args)
    json_to_stdout = args.json == "-"
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=json_to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        snapshot = read_snapshot(options, bars)
    summary = plan_summary(
        snapshot,
        metadata_version=args.metadata_version,
        password_encoder_secret=args.password_encoder_secret,
    )
    document = orjson.dumps(summary.to_json(), option=orjson.OPT_INDENT_2) + b"\n"
    if json_to_stdout:
        sys.stdout.buffer.write(document)
        sys.stdout.flush()
    elif args.json is not None:
        write_private(args.json, [document])
    if not args.quiet:
        _print_tables(summary, source=args.zookeeper, to_stderr=json_to_stdout)
    return 1 if summary.report.blockers else 0


def _print_tables(summary: PlanSummary, *, source: str, to_stderr: bool) -> None:
    from verify import render_plan

    console = Console(stderr=to_stderr, highlight=False)
    render_plan(
        console,
        blockers=summary.report.blockers,
        warnings=summary.report.warnings,
        records=summary.records,
        brokers=summary.brokers,
        topics=summary.topics,
        partitions=summary.partitions,
        source=source,
    )
