"""`zk2kraft verify`: prove the voters' metadata log says what ZooKeeper says.

Flow: check flags (exit 2 naming the flag) before touching anything; read every `--voter` log
(exit 3 if a directory cannot be read, 2 if a log is corrupt — the message names file, byte and
offset); check that all voters hold the same log (a voter that differs is a difference of kind
`voter`, located at the first batch that differs); replay the first voter's log into an image
(`verify.load_log`; a transaction still open at the end is a difference of kind `transaction`);
read ZooKeeper afresh (exit 3 if unreachable); compare with the image ZooKeeper implies
(`verify.parity_report`, or the Spark job with `--spark-master`); print the differences and write
`--json` (`{"parity","differences","checked","provenance"}`, mode 0600, `-` = stdout). Exit 1 on
any difference, 0 on parity. Secrets never print: SCRAM is compared by digest, passwords by
presence, and the strict redaction policy applies to every output.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

import orjson
from rich.console import Console

from migrate._cmd_snapshot import read_snapshot
from migrate._private_file import check_output_path, write_private
from migrate._progress import ProgressBars, ProgressCallback, progress_wanted
from migrate._voterargs import check_voter_flags
from migrate._zkargs import connect_options
from verify import (
    Difference,
    JsonValue,
    LoadedLog,
    ParityReport,
    expected_image,
    load_log,
    parity_report,
    render_parity,
)
from writers import LogEntry, LogSource, RecordBatch, VoterUnavailableError, open_log_source
from zkreader import ClusterSnapshot

__all__ = ["VoterLogs", "check_verify_flags", "read_voters", "run"]


def check_verify_flags(args: argparse.Namespace) -> list[tuple[int, Path]]:
    """Validate `verify`'s flags before anything is read.

    Returns:
        The voters, in the order given.

    Raises:
        BadFlagError: `check_voter_flags` refused the voters (the rules `plan` and `migrate`
            apply too), or the `--json` path cannot be written.
    """
    voters = check_voter_flags(args.voters, required=True)
    check_output_path("--json", args.json)
    return voters


@dataclass(frozen=True, slots=True)
class VoterLogs:
    """What the voters hold: the reference voter's replayed log and how the others compare.

    Attributes:
        reference: node id of the voter whose log was replayed (the first `--voter`).
        loaded: its replayed image and provenance.
        differences: `voter` differences (a voter whose log differs from the reference).
    """

    reference: int
    loaded: LoadedLog
    differences: tuple[Difference, ...]


def _open(node_id: int, directory: Path) -> LogSource:
    if not directory.exists():
        raise VoterUnavailableError(f"--voter {node_id}={directory}: directory does not exist")
    try:
        return open_log_source(directory)
    except FileNotFoundError as exc:
        raise VoterUnavailableError(f"--voter {node_id}={directory}: {exc}") from None


def _fingerprint(src: LogSource) -> list[tuple[str, str]]:
    """(file name, sha256) of every snapshot and segment: equal logs have equal fingerprints."""
    out = []
    for path in [*src.snapshots, *src.segments]:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except OSError as exc:
            raise VoterUnavailableError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        out.append((path.name, h.hexdigest()))
    return out


def _batches(src: LogSource) -> Iterator[tuple[str, RecordBatch]]:
    for entry in src.entries():
        yield entry.file.name, entry.batch


def _describe(item: tuple[str, RecordBatch] | None) -> str:
    if item is None:
        return "(log ends here)"
    name, b = item
    return (f"{name}: batch at offset {b.base_offset}, epoch {b.leader_epoch}, "
            f"{len(b.records)} records")


def _first_difference(ref: LogSource, other: LogSource) -> tuple[int, str, str] | None:
    """The first batch on which two logs differ: (offset, reference side, other side)."""
    for a, b in zip_longest(_batches(ref), _batches(other)):
        if a is not None and b is not None and a[1] == b[1]:
            continue  # equal batches (even in differently rolled segments): content counts
        offset = (a or b)[1].base_offset  # type: ignore[index,unused-ignore]
        return offset, _describe(a), _describe(b)
    return None


def _with_progress(src: LogSource, progress: ProgressCallback | None) -> Iterator[LogEntry]:
    """The source's entries, reporting bytes replayed so far (a bar for 1M-partition logs)."""
    if progress is None:
        yield from src.entries()
        return
    total = sum(p.stat().st_size for p in [*src.snapshots, *src.segments])
    done = 0
    for entry in src.entries():
        yield entry
        done += entry.size
        progress(done, total)


def read_voters(
    voters: Sequence[tuple[int, Path]], *, progress: ProgressCallback | None = None
) -> VoterLogs:
    """Read every voter's log, compare them, and replay the first one.

    Args:
        voters: (node id, directory) pairs; the first one's log is replayed.
        progress: called as `progress(bytes_done, bytes_total)` while replaying.

    Raises:
        VoterUnavailableError: a voter directory or file cannot be read (exit 3).
        VoterStateError: a directory holds no metadata log.
        LogCorruptionError: a log is damaged (names file, byte position and offset; exit 2).
        ReplayError: a record does not apply to the image (names the offset; exit 2).
    """
    sources = [(node_id, _open(node_id, Path(d))) for node_id, d in voters]
    ref_id, ref = sources[0]
    ref_print = _fingerprint(ref)
    differences: list[Difference] = []
    for node_id, src in sources[1:]:
        if _fingerprint(src) == ref_print:
            continue
        first = _first_difference(ref, src)
        if first is not None:
            offset, ref_side, other_side = first
            differences.append(Difference("voter", str(node_id), f"offset {offset}",
                                          f"voter {ref_id}: {ref_side}",
                                          f"voter {node_id}: {other_side}"))
    loaded = load_log(_with_progress(ref, progress))
    return VoterLogs(ref_id, loaded, tuple(differences))


def _transaction_differences(loaded: LoadedLog) -> tuple[Difference, ...]:
    txn = loaded.open_transaction
    if txn is None:
        return ()
    return (Difference("transaction", txn.name or "(unnamed)", "<open>", None,
                       f"begun at offset {txn.begin_offset}; {txn.pending_records} records "
                       "not committed (a controller would abort them)"),)


def _compare(
    args: argparse.Namespace, logs: VoterLogs, snapshot: ClusterSnapshot
) -> ParityReport:
    expected = expected_image(snapshot)
    extra = logs.differences + _transaction_differences(logs.loaded)
    p = logs.loaded.provenance
    voter_ids: list[JsonValue] = [node_id for node_id, _ in args.voters]
    provenance: dict[str, JsonValue] = {
        "voters": voter_ids,
        "replayed_voter": logs.reference,
        "last_offset": p.last_offset,
        "last_epoch": p.last_epoch,
        "batches": p.batches,
        "records": p.records,
        "aborted_transactions": logs.loaded.aborted_transactions,
    }
    report = parity_report(expected, logs.loaded.image, extra=extra, provenance=provenance)
    if args.spark_master and args.spark_master != "in-process":
        from migrate._pipeline import compare_spark
        from migrate._spark import SparkStarter

        starter = SparkStarter(args.spark_master).start()
        try:
            diffs = compare_spark(expected, logs.loaded.image, starter.get())
        finally:
            starter.stop()
        report = ParityReport(extra + tuple(diffs), report.checked, report.provenance)
    return report


def run(args: argparse.Namespace) -> int:
    """Run `verify`; returns 1 on any difference, 0 on parity."""
    voters = check_verify_flags(args)
    options = connect_options(args)
    json_to_stdout = args.json == "-"
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=json_to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        logs = read_voters(voters, progress=bars.task("replaying the voter log (bytes)"))
        snapshot = read_snapshot(options, bars)
    report = _compare(args, logs, snapshot)
    document = orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2) + b"\n"
    if json_to_stdout:
        sys.stdout.buffer.write(document)
        sys.stdout.flush()
    elif args.json is not None:
        write_private("--json", args.json, [document])
    if not args.quiet:
        console = Console(stderr=json_to_stdout, highlight=False)
        render_parity(console, report)
    return 0 if report.parity else 1
