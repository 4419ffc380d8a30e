"""Write a complete metadata log into several voter directories: all of them, or none.

Used by `migrate --cutover none`. The caller holds every voter's `.lock` (`hold_voter_locks`)
for the whole run, so nothing else writes these directories meanwhile.

Where the copy is built, and why: inside the voter directory itself, in
`DIR/.zk2kraft-staging/`. A voter directory is often a mount point (a dedicated controller disk):
building next to it, in the parent, puts the copy on another filesystem (rename fails with
EXDEV) and measures free space on the wrong disk; renaming over the mount point fails with
EBUSY. Inside it, every rename is within one filesystem and the voter directory itself is never
replaced. Free space is checked per filesystem before the first byte is written.

Two phases, so a crash anywhere ends in "every voter promoted" or "none", never in between:

1. Stage: each `DIR/.zk2kraft-staging/` gets `meta.properties` and a complete
   `__cluster_metadata-0/` (identical batches through `QuorumWriter`, fsync'd, then
   `quorum-state`), and last `manifest.json`. Any failure removes every staging copy.
2. Promote: only once every voter is staged, a `PROMOTE` marker (naming every voter of the
   run) is written in each staging dir; that is the commit point. Then each voter's staged
   `__cluster_metadata-0` is renamed into place (an existing one without a log, as Kafka's
   format or a first start leaves it, is moved into the staging dir first), `meta.properties`
   too if the voter has none (a formatted directory keeps its own), and last the staging dirs
   are removed, `PROMOTE` after everything else in it.

After a kill -9 the next run, holding the locks, calls `recovery.recover_interrupted` first: if
any staging dir of the run carries `PROMOTE`, the promotion is finished for every voter named in it
(all staged copies were complete before the first marker was written); otherwise every staging
copy is removed. A failure inside one run during phase 2 undoes the voters already promoted
before the markers are removed, so a crash during the undo still finishes as "all promoted".

Afterwards `read_back.read_back` re-reads what each promoted voter now holds (every batch frame
checked, the bytes' digest compared) and compares it with what was meant to be there: success
is never reported from what was written, only from what reads back.

Everything created is private (files 0600, directories 0700) and owned like the voter
directory (`fsutil`); the staging copy holds broker passwords in clear until it is promoted.
The named steps (`fault_point`) let the fault tests kill or stop the run at each of them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from writers._faults import fault_point
from writers.errors import (
    VoterStateError,
    VoterUnavailableError,
    WriterError,
)
from writers.log.fsutil import Ownership, atomic_write, fsync_dir
from writers.log.log_dir import EncodedBatch, VoterDir
from writers.log.quorum import QuorumWriter
from writers.log.reader import (
    METADATA_PARTITION_DIR,
)

__all__ = [
    "PROMOTE_MARKER",
    "STAGING_DIR_NAME",
    "ExpectedLog",
    "StagedVoter",
    "check_free_space",
    "promote_one",
    "remove_staging",
    "stage_and_promote",
]

log = logging.getLogger(__name__)

STAGING_DIR_NAME = ".zk2kraft-staging"
"""The staging directory inside each voter directory (same filesystem, never the dir itself)."""

_MANIFEST = "manifest.json"
PROMOTE_MARKER = "PROMOTE"
_REPLACED = "replaced-" + METADATA_PARTITION_DIR
_SMALL_FILES_BYTES = 64 * 1024  # meta.properties, quorum-state, checkpoints, dirs, rounding


@dataclass(frozen=True, slots=True)
class StagedVoter:
    """One voter to write: its node id and its `metadata.log.dir`."""

    node_id: int
    path: Path

    @property
    def staging(self) -> Path:
        """`DIR/.zk2kraft-staging`: where its copy is built (its own filesystem)."""
        return self.path / STAGING_DIR_NAME


@dataclass(frozen=True, slots=True)
class ExpectedLog:
    """What every promoted voter must hold, to compare against when reading it back.

    Attributes:
        size: total bytes of the log's batches.
        digest: sha256 of the batches' bytes, in order.
        last_offset: offset of the last record (-1 for an empty log).
        batches: number of batches.
    """

    size: int
    digest: str
    last_offset: int
    batches: int

    @classmethod
    def of(cls, batches: Sequence[EncodedBatch]) -> ExpectedLog:
        """The expectation for these batches."""
        h = hashlib.sha256()
        size = 0
        for b in batches:
            h.update(b.data)
            size += len(b.data)
        return cls(size, h.hexdigest(), batches[-1].last_offset if batches else -1, len(batches))


# ----------------------------------------------------------------------------- space


def check_free_space(voters: Sequence[StagedVoter], log_bytes: int) -> None:
    """Refuse before writing when a voter's own filesystem cannot hold its copy.

    Voters sharing a filesystem (same device) need room for all their copies together.

    Raises:
        VoterUnavailableError: a filesystem is too small (exit 3, names the voters, the bytes
            needed and the bytes free).
    """
    need = log_bytes + _SMALL_FILES_BYTES
    by_device: dict[int, list[StagedVoter]] = {}
    for v in voters:
        try:
            by_device.setdefault(os.stat(v.path).st_dev, []).append(v)
        except OSError as exc:
            raise VoterUnavailableError(
                f"voter {v.node_id} ({v.path}): cannot stat: {exc.strerror or exc}") from exc
    for group in by_device.values():
        st = os.statvfs(group[0].path)
        free = st.f_bavail * st.f_frsize
        total = need * len(group)
        if free < total:
            names = ", ".join(f"voter {v.node_id} ({v.path})" for v in group)
            raise VoterUnavailableError(
                f"{names}: not enough free space on its filesystem: the metadata log needs "
                f"{total} bytes ({len(group)} x {need}), {free} are free; nothing was written"
            )


# ----------------------------------------------------------------------------- staging


def _stage(
    voters: Sequence[StagedVoter],
    *,
    cluster_id: str,
    batches: Sequence[EncodedBatch],
    quorum_voters: Sequence[int],
    leader_id: int,
    leader_epoch: int,
    progress: Callable[[int, int], None],
) -> None:
    """Phase 1: a complete, fsync'd copy with its manifest in every staging dir.

    Raises:
        VoterUnavailableError: a copy cannot be written (the caller removes every copy).
    """
    dirs: list[VoterDir] = []
    try:
        for v in voters:
            dirs.append(VoterDir(v.staging, node_id=v.node_id, cluster_id=cluster_id))
        writer = QuorumWriter(dirs)
    except BaseException:
        for d in dirs:
            d.close()
        raise
    try:
        progress(0, len(batches))
        for i, batch in enumerate(batches, 1):
            writer.append_encoded(batch)
            progress(i, len(batches))
            fault_point("staging-batch")
        writer.flush()
        if writer.failures:  # all or none: one voter's copy failing fails the run
            raise VoterUnavailableError("; ".join(f.error for f in writer.failures))
        for d in dirs:
            d.write_quorum_state(leader_epoch=leader_epoch, voters=list(quorum_voters),
                                 leader_id=leader_id)
    finally:
        writer.close()
    expected = ExpectedLog.of(batches)
    manifest = json.dumps({
        "voters": [[v.node_id, str(v.path)] for v in voters],
        "expected": {"size": expected.size, "digest": expected.digest,
                     "last_offset": expected.last_offset, "batches": expected.batches},
    }, sort_keys=True).encode()
    for v in voters:
        atomic_write(v.staging / _MANIFEST, manifest, Ownership.of_dir(v.path))


def remove_staging(staging: Path) -> None:
    """Remove a staging dir, its `PROMOTE` marker last (see the module docstring)."""
    if not staging.exists():
        return
    for child in staging.iterdir():
        if child.name == PROMOTE_MARKER:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    fsync_dir(staging)
    (staging / PROMOTE_MARKER).unlink(missing_ok=True)
    staging.rmdir()
    fsync_dir(staging.parent)


def _remove_all(voters: Sequence[StagedVoter]) -> None:
    for v in voters:
        try:
            remove_staging(v.staging)
        except OSError as exc:  # reported, and the next run removes it
            log.warning("voter %d: cannot remove %s: %s", v.node_id, v.staging, exc)


# ----------------------------------------------------------------------------- promotion


@dataclass(frozen=True, slots=True)
class _Moved:
    """What `promote_one` moved, so the same run can put it back."""

    log: bool
    meta: bool


def promote_one(v: StagedVoter) -> _Moved:
    """Move one voter's staged copy into place (idempotent: resumes a half-done one)."""
    staged = v.staging / METADATA_PARTITION_DIR
    live = v.path / METADATA_PARTITION_DIR
    moved_log = moved_meta = False
    if staged.exists():
        if live.exists():
            replaced = v.staging / _REPLACED
            if replaced.exists():
                shutil.rmtree(replaced)
            os.rename(live, replaced)  # a log dir without a log (checked by the caller)
        os.rename(staged, live)
        moved_log = True
    meta = v.staging / "meta.properties"
    if meta.exists() and not (v.path / "meta.properties").exists():
        os.rename(meta, v.path / "meta.properties")
        moved_meta = True
    fsync_dir(v.path)
    fsync_dir(v.staging)
    return _Moved(moved_log, moved_meta)


def _unpromote_one(v: StagedVoter, moved: _Moved) -> None:
    """Undo `promote_one` (only while the run that promoted it still runs)."""
    if moved.meta:
        os.rename(v.path / "meta.properties", v.staging / "meta.properties")
    if moved.log:
        os.rename(v.path / METADATA_PARTITION_DIR, v.staging / METADATA_PARTITION_DIR)
    replaced = v.staging / _REPLACED
    if replaced.exists() and not (v.path / METADATA_PARTITION_DIR).exists():
        os.rename(replaced, v.path / METADATA_PARTITION_DIR)
    fsync_dir(v.path)


def _undo_promotion(voters: Sequence[StagedVoter],
                    promoted: Sequence[tuple[StagedVoter, _Moved]]) -> str:
    """Put back every voter promoted so far, then drop the markers and the staging copies.

    The markers go only once every voter is back: if this is cut short, they make the next
    run finish the promotion for all instead (still all or none).

    Returns:
        What state the voters are left in, for the error message.
    """
    undo = list(reversed(promoted))
    if len(promoted) < len(voters):
        # the voter it stopped at may have been moved in part: read what moved from the disk
        # (its staged log dir and meta.properties were both there before promotion began,
        # and meta.properties stays staged when the voter has its own)
        v = voters[len(promoted)]
        undo.insert(0, (v, _Moved(log=not (v.staging / METADATA_PARTITION_DIR).exists(),
                                  meta=not (v.staging / "meta.properties").exists())))
    try:
        for v, moved in undo:
            _unpromote_one(v, moved)
        for v in voters:
            (v.staging / PROMOTE_MARKER).unlink(missing_ok=True)
    except OSError as error:
        log.error("cannot undo the promotion: %s", error)
        return ("the voters may be half promoted; run the same command again to finish the "
                "promotion for all of them")
    _remove_all(voters)
    return "no voter was changed and the staging copies were removed"


def _promote(voters: Sequence[StagedVoter]) -> None:
    """Phase 2: commit markers in every staging dir, then rename every copy into place.

    Raises:
        VoterUnavailableError: a step failed; the voters promoted so far were put back and
            every staging copy removed (or, if even that failed, the next run finishes the
            promotion for all).
    """
    promoted: list[tuple[StagedVoter, _Moved]] = []
    marker = json.dumps([[v.node_id, str(v.path)] for v in voters]).encode()
    try:
        for v in voters:
            atomic_write(v.staging / PROMOTE_MARKER, marker, Ownership.of_dir(v.path))
            fault_point("promote-marked")
        for v in voters:
            promoted.append((v, promote_one(v)))
            fault_point("promote-renamed")
    except BaseException as exc:  # an OSError, or Ctrl-C/SIGTERM: undo, then say so
        state = _undo_promotion(voters, promoted)
        if not isinstance(exc, OSError):
            log.warning("promotion interrupted: %s", state)
            raise
        raise VoterUnavailableError(
            f"cannot promote the staged log: {exc.filename or ''}: {exc.strerror or exc}; "
            f"{state}"
        ) from exc
    fault_point("promoted")
    for v in voters:
        remove_staging(v.staging)
        fault_point("cleaned")


def stage_and_promote(
    voters: Sequence[StagedVoter],
    *,
    cluster_id: str,
    batches: Sequence[EncodedBatch],
    quorum_voters: Sequence[int],
    leader_id: int,
    leader_epoch: int,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> None:
    """Write `batches` as the complete metadata log of every voter: all promoted, or none.

    The caller holds the voters' locks, has called `recover_interrupted`, and has checked
    that no voter holds a log yet (an existing `__cluster_metadata-0` without segments or
    snapshots is replaced).

    Args:
        voters: the voters to write.
        cluster_id: the cluster id for `meta.properties`.
        batches: the encoded log, offsets from 0.
        quorum_voters: every voter id of the quorum (for `quorum-state`).
        leader_id: `quorum-state`'s leader.
        leader_epoch: `quorum-state`'s epoch (the batches' epoch).
        progress: called with (batches written, total).

    Raises:
        VoterUnavailableError: a voter's filesystem is too small, or a copy cannot be
            written or promoted (exit 3); no voter was changed, no staging copy is left.
        VoterStateError: a staging dir still exists (call `recover_interrupted` first).
    """
    for v in voters:
        if v.staging.exists():
            raise VoterStateError(f"voter {v.node_id}: {v.staging} exists; recover it first")
    check_free_space(voters, sum(len(b.data) for b in batches))
    try:
        _stage(voters, cluster_id=cluster_id, batches=batches, quorum_voters=quorum_voters,
               leader_id=leader_id, leader_epoch=leader_epoch, progress=progress)
        fault_point("staged")
    except BaseException as exc:  # KeyboardInterrupt/SIGTERM too: nothing half-written stays
        _remove_all(voters)
        if isinstance(exc, OSError):
            raise VoterUnavailableError(
                f"cannot stage the metadata log: {exc.filename or ''}: {exc.strerror or exc}; "
                "no voter was changed and the staging copies were removed") from exc
        if isinstance(exc, WriterError):
            raise type(exc)(f"{exc}; no voter was changed and the staging copies were "
                            "removed") from exc
        raise
    _promote(voters)
