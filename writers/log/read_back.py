"""Read back what each promoted voter holds and compare it with what was meant to be there.

Success is never reported from what was written, only from what reads back: every batch frame
checked, the bytes' digest compared, meta.properties and quorum-state as the run left them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from writers.errors import (
    LogCorruptionError,
    VoterStateError,
    VoterUnavailableError,
)
from writers.log.reader import (
    METADATA_PARTITION_DIR,
    SEGMENT_RE,
    open_log_source,
    read_meta_properties,
    read_quorum_state,
    scan_frames,
)
from writers.log.staging import ExpectedLog, StagedVoter

__all__ = ["read_back"]


def read_back(
    v: StagedVoter,
    expected: ExpectedLog,
    *,
    cluster_id: str,
    quorum_voters: Sequence[int],
    leader_id: int,
    leader_epoch: int,
) -> None:
    """Read back what `v` holds now and compare it with what it must hold.

    Every segment is re-read from disk: each batch frame is decoded and checked (length,
    magic, CRC-32C over its records, offsets contiguous from 0), the batch count and last
    offset must be the written ones, and the bytes' sha256 must equal that of the batches
    that were written, so every record is exactly the encoded one; `meta.properties` and
    `quorum-state` must name this cluster, node, quorum and leader; no staging copy may be
    left. Records are not decoded one by one again: the digest already proves they are the
    bytes the codec produced, and decoding every record three times cost most of a bulk run
    for no extra assurance (docs/benchmarks.md, "Figures behind code choices").

    Raises:
        VoterStateError: it reads back as anything else, a batch that does not decode
            included (exit 1; says what differs).
        VoterUnavailableError: it cannot be read (exit 3).
    """
    where = f"voter {v.node_id} ({v.path})"
    problems: list[str] = []
    meta = read_meta_properties(v.path)
    if meta is None or (meta.cluster_id, meta.node_id) != (cluster_id, v.node_id):
        problems.append(f"meta.properties is {meta!r}, expected cluster.id {cluster_id} and "
                        f"node.id {v.node_id}")
    partition = v.path / METADATA_PARTITION_DIR
    state = read_quorum_state(partition) if partition.is_dir() else None
    if state is None:
        problems.append("no quorum-state")
    else:
        listed = state.get("currentVoters")
        got_voters = sorted(
            x["voterId"] for x in (listed if isinstance(listed, list) else [])
            if isinstance(x, dict) and isinstance(x.get("voterId"), int)
        )
        if (state.get("leaderId"), state.get("leaderEpoch"), got_voters) != (
            leader_id, leader_epoch, sorted(quorum_voters)
        ):
            problems.append(f"quorum-state is {state}, expected leader {leader_id}, epoch "
                            f"{leader_epoch}, voters {sorted(quorum_voters)}")
    h = hashlib.sha256()
    size = 0
    batches = 0
    last = -1
    if partition.is_dir():
        source = open_log_source(partition)
        for seg in source.segments:
            try:
                data = seg.read_bytes()
            except OSError as exc:
                raise VoterUnavailableError(
                    f"{where}: {seg}: cannot read: {exc.strerror or exc}") from exc
            h.update(data)
            size += len(data)
            try:
                for frame in scan_frames(data, file=str(seg), expected_offset=last + 1):
                    batches += 1
                    last = frame.last_offset
            except LogCorruptionError as exc:
                problems.append(f"its log does not decode: {exc}")
                break
        stray = [p.name for p in partition.iterdir()
                 if p.suffix in (".log", ".checkpoint") and not SEGMENT_RE.match(p.name)]
        if source.snapshots or stray:
            problems.append(f"unexpected files {sorted(stray) or source.snapshots}")
    else:
        problems.append(f"no {METADATA_PARTITION_DIR}")
    if (size, h.hexdigest(), batches, last) != (
        expected.size, expected.digest, expected.batches, expected.last_offset
    ):
        problems.append(
            f"the log reads back as {batches} batches, {size} bytes, last offset {last}; "
            f"{expected.batches} batches, {expected.size} bytes, last offset "
            f"{expected.last_offset} were written"
        )
    if v.staging.exists():
        problems.append(f"{v.staging} is still there")
    if problems:
        raise VoterStateError(
            f"{where} does not hold the migrated log after promotion: "
            + "; ".join(problems) + ". The migration did not succeed"
        )
