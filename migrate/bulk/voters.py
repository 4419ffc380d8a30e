"""The voters of a bulk copy: their flags (`check_voters`) and what each one holds already.

A voter directory is judged before anything is written: one holding exactly the bytes this run
would write is left alone (a re-run is a no-op), one holding anything else is refused with what it
holds (`voter_state_findings`), and what a killed run left in a staging copy is reported
(`staging_findings`). `plan` asks the same questions without writing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from migrate.bulk.pipeline import (
    DEFAULT_RECORDS_PER_BATCH,
    plan_batches,
    snapshot_timestamp_ms,
)
from migrate.flags.voters import check_voter_flags
from migrate.preflight.findings import Finding
from verify import quorum_state_differences, quorum_state_facts, voter_file_differences
from writers import (
    METADATA_PARTITION_DIR,
    ExpectedLog,
    StagedVoter,
    VoterDir,
    VoterFileFormatError,
    VoterStateError,
    VoterUnavailableError,
    interrupted_staging,
    open_log_source,
    read_meta_properties,
)
from zkreader import ClusterSnapshot

__all__ = [
    "LEADER_EPOCH",
    "VoterTarget",
    "check_voters",
    "expected_log",
    "refresh_quorum_state",
    "staging_findings",
    "voter_holds",
    "voter_state_findings",
]

LEADER_EPOCH = 1
"""The single leader epoch of a freshly migrated log (and of quorum-state)."""

VoterTarget = StagedVoter
"""One `--voter ID=DIR`, in command-line order: the voter exactly as `writers` stages, promotes
and reads it back (its staging copy inside its own directory)."""


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_voters(voters: Sequence[tuple[int, Path]] | None) -> list[VoterTarget]:
    """Validate the `--voter` flags before anything connects.

    The rules every command shares are `flags.voters.check_voter_flags`; this adds migrate's
    own: each directory must be creatable and writable.

    Raises:
        BadFlagError: `check_voter_flags` refused the set (exit 2, names the flag).
        VoterUnavailableError: a directory cannot be created or written (exit 3, names it).
    """
    targets: list[VoterTarget] = []
    for node_id, path in check_voter_flags(voters, required=True):
        if path.exists():
            if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
                raise VoterUnavailableError(
                    f"--voter {node_id}={path}: the directory exists but is not readable and "
                    "writable"
                )
        else:
            base = _nearest_existing(path.parent)
            if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
                raise VoterUnavailableError(
                    f"--voter {node_id}={path}: cannot create the directory: {base} is not "
                    "a writable directory"
                )
        targets.append(VoterTarget(node_id, path))
    return targets


# ----------------------------------------------------------------------------- voter states


def expected_log(values: Sequence[bytes], snapshot: ClusterSnapshot, *,
                 records_per_batch: int = DEFAULT_RECORDS_PER_BATCH) -> ExpectedLog:
    """What `migrate` would write for these encoded records (size, digest, last offset).

    `plan --voter` judges voters against this, so plan and migrate agree on every voter.
    """
    return ExpectedLog.of(plan_batches(values, base_offset=0, leader_epoch=LEADER_EPOCH,
                                       timestamp_ms=snapshot_timestamp_ms(snapshot),
                                       records_per_batch=records_per_batch))


def voter_state_findings(targets: Sequence[VoterTarget], cluster_id: str,
                         expected: ExpectedLog) -> list[Finding]:
    """Every voter `migrate` would refuse, as a `VOTER_STATE` blocker naming its directory.

    Raises:
        VoterFileFormatError: a voter's file is damaged (exit 2).
        VoterUnavailableError: a voter cannot be read (exit 3).
    """
    out: list[Finding] = []
    all_ids = [t.node_id for t in targets]
    for t in targets:
        try:
            voter_holds(t, cluster_id, expected, all_ids)
        except VoterFileFormatError:
            raise
        except VoterStateError as exc:
            out.append(Finding("VOTER_STATE", str(exc), str(t.path)))
    return out


def staging_findings(targets: Sequence[VoterTarget]) -> list[Finding]:
    """Warnings for what a killed `migrate` left in these voters' staging dirs (for `plan`).

    `migrate` finishes or removes it first thing (`writers.recover_interrupted`), so nothing is
    blocked; but until then the voters may differ, and what `plan` diffs is not the whole story.
    Call only for voters whose `.lock` no one holds (a running `migrate` stages right now).
    """
    out: list[Finding] = []
    for left in interrupted_staging(targets):
        v = left.voter
        if left.committed:
            where = ("its staged log is not yet moved into place" if left.log_staged
                     else "its own log is in place, the staging dir is not yet removed")
            out.append(Finding(
                "PROMOTION_UNFINISHED",
                f"voter {v.node_id}: a `migrate` run was killed while promoting its log into "
                f"{', '.join(left.named) or v.path} ({v.staging} holds the commit marker; "
                f"{where}): the promotion is unfinished, and the voters may differ until it is. "
                "Running `migrate` again with the same --voter flags finishes it for every one "
                "of them before anything else.",
                str(v.path)))
        else:
            out.append(Finding(
                "STAGING_LEFT_OVER",
                f"voter {v.node_id}: {v.staging} is the incomplete staging copy of a `migrate` "
                "run killed before its promotion; no voter was changed by it, and `migrate` "
                "removes it when run again.",
                str(v.path)))
    return out


def _refuse_used_quorum_state(target: VoterTarget, partition: Path) -> None:
    """Refuse a voter whose `quorum-state` shows it took part in a quorum.

    Writing a fresh log with epoch 1 over a voter that was at epoch 5, or voted for 3002, would
    let it vote again in epochs it already voted in: Raft's one vote per epoch breaks.
    """
    state = quorum_state_facts(partition)
    if state is None:
        return
    if state.leader_epoch > LEADER_EPOCH or state.voted_id != -1:
        raise VoterStateError(
            f"voter {target.node_id} ({target.path}) holds {partition / 'quorum-state'} at "
            f"epoch {state.leader_epoch} (votedId {state.voted_id}, leaderId "
            f"{state.leader_id}): it has been part of a running quorum, and a migrated log "
            f"starts at epoch {LEADER_EPOCH}. Refusing to reset it: move the directory aside "
            "(or point --voter at an empty one)"
        )


def _own_quorum_state(partition: Path) -> bool:
    """True if `quorum-state` is absent or one a migration wrote (epoch 1, no vote cast).

    Such a file can be rewritten for a new voter set (a voter added to the --voter list): no
    controller has acted on it yet.
    """
    state = quorum_state_facts(partition)
    return state is None or (state.leader_epoch == LEADER_EPOCH and state.voted_id == -1)


def refresh_quorum_state(target: VoterTarget, all_ids: Sequence[int], leader_id: int,
                          cluster_id: str) -> bool:
    """Make an unchanged voter's own `quorum-state` name the voter set of this run.

    Returns:
        True if the file was rewritten.
    """
    partition = target.path / METADATA_PARTITION_DIR
    state = quorum_state_facts(partition)
    if (state is not None and state.voters is not None and state.leader_id == leader_id
            and not quorum_state_differences(target.node_id, state, given=all_ids,
                                             quorum=all_ids)):
        return False
    voter = VoterDir(target.path, node_id=target.node_id, cluster_id=cluster_id)
    try:
        voter.write_quorum_state(leader_epoch=LEADER_EPOCH, voters=list(all_ids),
                                 leader_id=leader_id)
    finally:
        voter.close()
    return True


def voter_holds(target: VoterTarget, cluster_id: str, expected: ExpectedLog,
                 all_ids: Sequence[int] = ()) -> bool:
    """True if the voter already holds exactly this log; False if it holds none.

    Raises:
        VoterStateError: it holds another cluster's or node's metadata, a different log, a
            quorum-state from a running quorum, or this log with files a controller would
            refuse (exit 1, says what it holds).
        VoterFileFormatError: one of its files is damaged (exit 2).
        VoterUnavailableError: it cannot be read.
    """
    path = target.path
    if not path.exists():
        return False
    meta = read_meta_properties(path)
    if meta is not None and meta.cluster_id != cluster_id:
        raise VoterStateError(
            f"voter {target.node_id} ({path}) belongs to cluster {meta.cluster_id!r}, not "
            f"{cluster_id!r} (ZooKeeper's /cluster/id); refusing to touch it"
        )
    if meta is not None and meta.node_id != target.node_id:
        raise VoterStateError(
            f"voter {target.node_id} ({path}): meta.properties says node.id={meta.node_id}; "
            "check the --voter ID=DIR pairs"
        )
    partition = path / METADATA_PARTITION_DIR
    if not partition.exists():
        return False
    source = open_log_source(partition)
    if not source.segments and not source.snapshots:
        _refuse_used_quorum_state(target, partition)
        return False
    if source.snapshots:
        raise VoterStateError(
            f"voter {target.node_id} ({path}) holds snapshot(s) "
            f"{', '.join(p.name for p in source.snapshots)}: a log this tool did not write "
            "(a formatted or running quorum); refusing to overwrite it"
        )
    h = hashlib.sha256()
    size = 0
    for seg in source.segments:
        try:
            data = seg.read_bytes()
        except OSError as exc:
            raise VoterUnavailableError(f"{seg}: cannot read: {exc.strerror or exc}") from exc
        h.update(data)
        size += len(data)
    if size == expected.size and h.hexdigest() == expected.digest:
        # the same log, but would a controller start on this directory? (never a false no-op)
        broken = voter_file_differences([(target.node_id, path)], cluster_id=cluster_id,
                                        voter_ids=list(all_ids) or [target.node_id])
        if _own_quorum_state(partition):  # ours, at epoch 1 with no vote: rewritten, not judged
            broken = tuple(d for d in broken if not d.field.startswith("quorum-state"))
        if broken:
            what = "; ".join(f"{d.field}: expected {d.zookeeper}, found {d.quorum}"
                             for d in broken)
            raise VoterStateError(
                f"voter {target.node_id} ({path}) holds this migration's log, but a controller "
                f"would not start on it: {what}. Refusing it as it stands: fix the file(s) "
                "or move the directory aside and migrate again"
            )
        return True
    last = -1
    for entry in source.entries():
        last = entry.batch.last_offset
    raise VoterStateError(
        f"voter {target.node_id} ({path}) already holds a different metadata log ({size} bytes, "
        f"last offset {last}); this migration is {expected.size} bytes ending at offset "
        f"{expected.last_offset}. Refusing to overwrite it: move it aside (or point --voter at "
        "an empty directory) if it is an old attempt"
    )
