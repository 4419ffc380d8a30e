"""The log inside a voter's metadata directory: `DIR/__cluster_metadata-0/`'s segments.

`SegmentLog` owns the segment files (`%020d.log`, named by base offset), the active one that
batches are appended to, where the log starts and ends, and its leader epochs (written to
`leader-epoch-checkpoint`). `VoterDir` (`log_dir.py`) owns the directory around it: the lock,
`meta.properties`, `quorum-state` and the snapshots. log_dir.py's docstring says why each choice.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from writers.codec.batch import BatchHeader
from writers.errors import LogCorruptionError, VoterStateError, VoterUnavailableError
from writers.log.fsutil import Ownership, atomic_write, fsync_dir, open_private, write_all
from writers.log.names import segment_name
from writers.log.reader import (
    LEADER_EPOCH_CHECKPOINT,
    METADATA_PARTITION_DIR,
    SEGMENT_RE,
    SNAPSHOT_RE,
    scan_frames,
)

__all__ = ["EncodedBatch", "SegmentLog", "voter_unavailable"]

# VoterDir's logger: what a voter's log says keeps the one name (`-v` prints it).
log = logging.getLogger("writers.log.log_dir")


@dataclass(frozen=True, slots=True)
class EncodedBatch:
    """A record batch already encoded (v2 bytes), with the header facts the writers need.

    Attributes:
        base_offset: offset of its first record.
        last_offset: offset of its last record.
        leader_epoch: its partitionLeaderEpoch.
        data: the complete batch bytes.
    """

    base_offset: int
    last_offset: int
    leader_epoch: int
    data: bytes


def voter_unavailable(node_id: int, path: Path, what: str, exc: OSError) -> VoterUnavailableError:
    """The error for a voter directory `path` that cannot be read or written: names the file."""
    where = exc.filename if exc.filename else path
    return VoterUnavailableError(
        f"voter {node_id} ({path}): {what}: {where}: {exc.strerror or exc}"
    )


def _is_torn_tail(data: bytes, exc: LogCorruptionError) -> bool:
    """True when the damaged batch is the file's last one and runs to (or past) its end: what an
    interrupted append leaves behind, as opposed to damage in the middle of a log."""
    if exc.problem.startswith("offset "):
        return False  # gaps and overlaps are not torn writes
    rest = len(data) - exc.position
    if rest < 12:
        return True
    declared = int.from_bytes(data[exc.position + 8: exc.position + 12], "big", signed=True) + 12
    return exc.position + declared >= len(data)


class SegmentLog:
    """The segments of one voter's metadata log; `open` scans what is there.

    Args:
        path: the voter's `metadata.log.dir` (named in errors).
        node_id: the voter's node id (named in errors and warnings).
        segment_bytes: roll to a new segment when the active one would exceed this size.
        recover_tail: cut a torn last batch off when opening (`VoterDir` says when).
    """

    def __init__(self, path: Path, *, node_id: int, segment_bytes: int,
                 recover_tail: bool) -> None:
        self.path = path
        self.node_id = node_id
        self.partition_dir = path / METADATA_PARTITION_DIR
        self.segment_bytes = segment_bytes
        self.recover_tail = recover_tail
        self._owner: Ownership | None = None
        self._seg_fd: int | None = None
        self._seg_size = 0
        self.epochs: list[tuple[int, int]] = []  # (leader epoch, start offset)
        self.next_offset = 0
        self.log_start_offset = 0
        self.truncated_tail: tuple[Path, int, int] | None = None

    def segments(self) -> list[Path]:
        """The log segments in base-offset order."""
        found = [p for p in self.partition_dir.iterdir() if SEGMENT_RE.match(p.name)]
        return sorted(found, key=lambda p: int(p.name[:20]))

    # -- opening -------------------------------------------------------------------------------

    def open(self, owner: Ownership) -> None:
        """Scan the existing segments (new files get `owner`) and open the last for appending."""
        self._owner = owner
        segs = self.segments()
        if not segs:
            # An empty log continues after the newest snapshot, as Kafka's does
            # (`KafkaMetadataLog.truncateToLatestSnapshot`).
            ends = [int(m.group(1)) for p in self.partition_dir.iterdir()
                    if (m := SNAPSHOT_RE.match(p.name))]
            self.next_offset = self.log_start_offset = max(ends, default=0)
            return
        self.log_start_offset = int(segs[0].name[:20])
        expected: int | None = None
        last: BatchHeader | None = None
        for seg in segs:
            base = int(seg.name[:20])
            if expected is not None and base != expected:
                raise LogCorruptionError(
                    str(seg), 0, base,
                    f"segment starts at offset {base} but the previous segment ends before "
                    f"offset {expected} (missing or overlapping segment)",
                )
            data = seg.read_bytes()
            try:
                for frame in scan_frames(data, file=str(seg), expected_offset=base):
                    last = frame
                    if not self.epochs or frame.leader_epoch > self.epochs[-1][0]:
                        self.epochs.append((frame.leader_epoch, frame.base_offset))
            except LogCorruptionError as exc:
                if not (self.recover_tail and seg == segs[-1] and _is_torn_tail(data, exc)):
                    raise
                self._truncate_torn_tail(seg, len(data), exc)
            expected = last.last_offset + 1 if last is not None else base
        self.next_offset = expected if expected is not None else 0
        active = segs[-1]
        self._seg_fd = os.open(active, os.O_WRONLY | os.O_APPEND)
        self._seg_size = os.fstat(self._seg_fd).st_size

    def _truncate_torn_tail(self, seg: Path, size: int, exc: LogCorruptionError) -> None:
        """Cut an incomplete last batch (a crash mid-append) off, loudly: never silently."""
        with open(seg, "r+b") as f:
            f.truncate(exc.position)
            f.flush()
            os.fsync(f.fileno())
        self.truncated_tail = (seg, exc.position, size - exc.position)
        log.warning(
            "voter %d: removed a torn last batch from %s: %d byte(s) from position %d (%s)",
            self.node_id, seg, size - exc.position, exc.position, exc.problem,
        )

    def batches_from(self, offset: int) -> list[EncodedBatch]:
        """The batches whose base offset is >= `offset`, as stored (`VoterDir.batches_from`)."""
        out: list[EncodedBatch] = []
        for seg in self.segments():
            try:
                data = seg.read_bytes()
            except OSError as exc:
                raise voter_unavailable(self.node_id, self.path, "cannot read", exc) from exc
            for h in scan_frames(data, file=str(seg)):
                if h.base_offset >= offset:
                    out.append(EncodedBatch(h.base_offset, h.last_offset, h.leader_epoch,
                                            data[h.position: h.position + h.size]))
        return out

    # -- appending and cutting -----------------------------------------------------------------

    def append(self, batch: EncodedBatch) -> None:
        """Write `batch` at the end (rolling when the segment is full) and fsync it.

        Raises:
            VoterStateError: the batch does not start at `next_offset` (design I1).
            OSError: the write or fsync failed (`VoterDir.append` names the voter).
        """
        if batch.base_offset != self.next_offset:
            raise VoterStateError(
                f"voter {self.node_id} ({self.path}): batch at offset {batch.base_offset} "
                f"but the log's next offset is {self.next_offset}"
            )
        if self._seg_fd is None or (
            self._seg_size > 0 and self._seg_size + len(batch.data) > self.segment_bytes
        ):
            self._roll(batch.base_offset)
        assert self._seg_fd is not None
        write_all(self._seg_fd, batch.data)
        os.fsync(self._seg_fd)
        self._seg_size += len(batch.data)
        if not self.epochs or batch.leader_epoch > self.epochs[-1][0]:
            self.epochs.append((batch.leader_epoch, batch.base_offset))
            self._write_epoch_checkpoint()
        self.next_offset = batch.last_offset + 1

    def truncate_to(self, next_offset: int) -> int:
        """Remove the batches from `next_offset` on (`VoterDir.truncate_to`): whole segments
        after it, the rest of the one it falls in, the epochs after it; how many offsets.

        Raises:
            VoterStateError: `next_offset` is before the log's start or inside a batch.
            OSError: a file cannot be changed (`VoterDir.truncate_to` names the voter).
        """
        if next_offset >= self.next_offset:
            return 0
        if next_offset < self.log_start_offset:
            raise VoterStateError(
                f"voter {self.node_id} ({self.path}): cannot truncate to offset {next_offset}, "
                f"before the log's start {self.log_start_offset}"
            )
        removed = self.next_offset - next_offset
        if self._seg_fd is not None:
            os.close(self._seg_fd)
            self._seg_fd = None
        for seg in reversed(self.segments()):
            base = int(seg.name[:20])
            if base >= next_offset and base > self.log_start_offset:
                seg.unlink()
                continue
            data = seg.read_bytes()
            cut: int | None = None
            for h in scan_frames(data, file=str(seg)):
                if h.base_offset == next_offset:
                    cut = h.position
                    break
                if h.base_offset < next_offset <= h.last_offset:
                    raise VoterStateError(
                        f"voter {self.node_id} ({self.path}): offset {next_offset} is "
                        f"inside the batch {h.base_offset}..{h.last_offset}, not a boundary"
                    )
            if cut is None:
                cut = len(data) if base < next_offset else 0
            with open(seg, "r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())
            break
        fsync_dir(self.partition_dir)
        self.epochs = [(e, o) for e, o in self.epochs if o < next_offset]
        self._write_epoch_checkpoint()
        segs = self.segments()
        if segs:
            self._seg_fd = os.open(segs[-1], os.O_WRONLY | os.O_APPEND)
            self._seg_size = os.fstat(self._seg_fd).st_size
        self.next_offset = next_offset
        log.warning("voter %d: removed offsets %d..%d from the log", self.node_id,
                    next_offset, next_offset + removed - 1)
        return removed

    def _roll(self, base_offset: int) -> None:
        if self._seg_fd is not None:
            os.close(self._seg_fd)
            self._seg_fd = None
        seg = self.partition_dir / segment_name(base_offset)
        self._seg_fd = open_private(seg, os.O_WRONLY | os.O_EXCL | os.O_APPEND, self._owner)
        self._seg_size = 0
        fsync_dir(self.partition_dir)
        log.debug("voter %d: new segment %s", self.node_id, seg.name)

    def _write_epoch_checkpoint(self) -> None:
        lines = ["0", str(len(self.epochs))] + [f"{e} {o}" for e, o in self.epochs]
        atomic_write(self.partition_dir / LEADER_EPOCH_CHECKPOINT,
                     ("\n".join(lines) + "\n").encode(), self._owner)

    def close(self) -> None:
        """Close the active segment (idempotent)."""
        if self._seg_fd is not None:
            os.close(self._seg_fd)
            self._seg_fd = None
