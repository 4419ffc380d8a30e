"""`plan --voter`: the dry-run diff between ZooKeeper and voters that already hold a log.

Before a re-run, or after a `migrate --cutover none` done days ago, an operator wants to know how
far the voters' copy has drifted from ZooKeeper without writing anything. Each voter directory
that holds a metadata log is replayed into an image (verify's loader) and compared with the image
ZooKeeper implies, field by field (verify's parity). A voter directory that does not exist yet, or
holds no log, has nothing to diff and is listed as such. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verify import ParityReport, expected_image, load_log, parity_report
from writers import VoterStateError, open_log_source
from zkreader import ClusterSnapshot

__all__ = ["VoterDiff", "voter_diffs"]


@dataclass(frozen=True, slots=True)
class VoterDiff:
    """One voter's dry-run diff.

    Attributes:
        node_id: the voter's node id (`--voter ID=DIR`).
        directory: its metadata.log.dir.
        parity: the comparison, or None when the directory holds no log yet.
    """

    node_id: int
    directory: Path
    parity: ParityReport | None


def voter_diffs(
    snapshot: ClusterSnapshot, voters: Sequence[tuple[int, Path]]
) -> list[VoterDiff]:
    """Compare every voter that holds a log with ZooKeeper's snapshot, by node id.

    Raises:
        LogCorruptionError: a voter's log is damaged (exit 2, names the file and offset).
        ReplayError: a record does not apply (exit 2, names the offset).
        VoterUnavailableError: a voter's files cannot be read (exit 3).
    """
    expected = expected_image(snapshot)
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
        report = parity_report(expected, loaded.image, provenance=provenance)
        out.append(VoterDiff(node_id, Path(directory), report))
    return out
