"""Judging voters' logs: do all voters hold the same log, and how does each differ from ZooKeeper.

This is verify's kind of work (it judges; `migrate` only orchestrates), so `zk2kraft verify` and
`zk2kraft plan --voter` both come here:

- `read_voters` (verify): fingerprint every voter's files (sha256 per snapshot and segment);
  a voter whose fingerprint differs from the first voter's is located at the first batch that
  differs (batches compare by content, so differently rolled segments holding the same batches
  are equal); then the first voter's log is replayed into an image.
- `transaction_differences`: a metadata transaction still open at the end of the log is a
  difference (a controller taking over would abort it).
- `voter_diffs` (plan's dry run): every voter that already holds a log is replayed and compared
  field by field with the image ZooKeeper implies, its files judged as `verify` judges them
  (`voter_file_differences`, the voter set being the `--voter` ids `migrate` writes); one
  without a log has nothing to diff.

Nothing here writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from verify._expected import expected_image
from verify._loader import LoadedLog, load_log
from verify._parity import parity_report
from verify._report import Difference, ParityReport
from verify._voter_files import voter_file_differences
from writers import (
    LogEntry,
    LogSource,
    RecordBatch,
    VoterStateError,
    VoterUnavailableError,
    open_log_source,
)
from zkreader import ClusterSnapshot

__all__ = [
    "VoterDiff",
    "VoterLogs",
    "first_difference",
    "log_fingerprint",
    "read_voters",
    "transaction_differences",
    "voter_diffs",
]

ByteProgress = Callable[[int, int], None]
"""Called as `progress(bytes_done, bytes_total)` while a log is replayed."""


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


def log_fingerprint(src: LogSource) -> list[tuple[str, str]]:
    """(file name, sha256) of every snapshot and segment: equal logs have equal fingerprints.

    Raises:
        VoterUnavailableError: a file cannot be read (exit 3, names it).
    """
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


def first_difference(ref: LogSource, other: LogSource) -> tuple[int, str, str] | None:
    """The first batch on which two logs differ: (offset, reference side, other side).

    Returns None when every batch is equal (even if the segments are rolled differently).
    """
    for a, b in zip_longest(_batches(ref), _batches(other)):
        if a is not None and b is not None and a[1] == b[1]:
            continue  # equal batches (even in differently rolled segments): content counts
        offset = (a or b)[1].base_offset  # type: ignore[index,unused-ignore]
        return offset, _describe(a), _describe(b)
    return None


def _with_progress(src: LogSource, progress: ByteProgress | None) -> Iterator[LogEntry]:
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
    voters: Sequence[tuple[int, Path]], *, progress: ByteProgress | None = None
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
    ref_print = log_fingerprint(ref)
    differences: list[Difference] = []
    for node_id, src in sources[1:]:
        if log_fingerprint(src) == ref_print:
            continue
        first = first_difference(ref, src)
        if first is not None:
            offset, ref_side, other_side = first
            differences.append(Difference("voter", str(node_id), f"offset {offset}",
                                          f"voter {ref_id}: {ref_side}",
                                          f"voter {node_id}: {other_side}"))
    loaded = load_log(_with_progress(ref, progress))
    return VoterLogs(ref_id, loaded, tuple(differences))


def transaction_differences(loaded: LoadedLog) -> tuple[Difference, ...]:
    """A metadata transaction still open at the end of the log, as a `transaction` difference."""
    txn = loaded.open_transaction
    if txn is None:
        return ()
    return (Difference("transaction", txn.name or "(unnamed)", "<open>", None,
                       f"begun at offset {txn.begin_offset}; {txn.pending_records} records "
                       "not committed (a controller would abort them)"),)


@dataclass(frozen=True, slots=True)
class VoterDiff:
    """One voter's dry-run diff (`plan --voter`).

    Attributes:
        node_id: the voter's node id (`--voter ID=DIR`).
        directory: its metadata.log.dir.
        parity: the comparison, or None when the directory holds no log yet.
    """

    node_id: int
    directory: Path
    parity: ParityReport | None


def voter_diffs(
    snapshot: ClusterSnapshot, voters: Sequence[tuple[int, Path]], *, offline: bool = False
) -> list[VoterDiff]:
    """Compare every voter that holds a log with ZooKeeper's snapshot, by node id.

    Before a re-run, or after a `migrate --cutover none` done days ago, an operator wants to
    know how far the voters' copy has drifted from ZooKeeper without writing anything.
    `offline`: the voters hold (or will hold) an `--offline` log, whose partitions name no leader.

    Raises:
        LogCorruptionError: a voter's log is damaged (exit 2, names the file and offset).
        ReplayError: a record does not apply (exit 2, names the offset).
        VoterUnavailableError: a voter's files cannot be read (exit 3).
    """
    expected = expected_image(snapshot, offline=offline)
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    ids = [node_id for node_id, _ in voters]
    out: list[VoterDiff] = []
    for node_id, directory in sorted(voters):
        if not Path(directory).is_dir():
            out.append(VoterDiff(node_id, Path(directory), None))
            continue
        try:
            source = open_log_source(Path(directory))
        except VoterStateError:  # an empty or fresh directory: nothing written yet
            out.append(VoterDiff(node_id, Path(directory), None))
            continue
        loaded = load_log(source.entries())
        provenance: dict[str, int] = {
            "voter": node_id,
            "last_offset": loaded.provenance.last_offset,
            "last_epoch": loaded.provenance.last_epoch,
        }
        files = voter_file_differences([(node_id, Path(directory))], cluster_id=cluster_id,
                                       voter_ids=ids)
        report = parity_report(expected, loaded.image, extra=files, provenance=provenance)
        out.append(VoterDiff(node_id, Path(directory), report))
    return out
