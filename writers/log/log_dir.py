"""One KRaft voter's metadata directory, written the way Kafka 3.9 lays it out on disk.

For `--voter ID=DIR` (Kafka's `UnifiedLog`/`KafkaMetadataLog` layout of `metadata.log.dir`):

    DIR/meta.properties                     version=1, cluster.id, node.id, directory.id
    DIR/.lock                               Kafka's lock (fcntl), held while we write (voter_lock)
    DIR/__cluster_metadata-0/
        00000000000000000000.log            segments named by base offset (%020d.log)
        <end offset %020d>-<epoch %010d>.checkpoint   snapshots (written via .checkpoint.part)
        quorum-state                        data_version 0 JSON
        leader-epoch-checkpoint             `<epoch> <start offset>` per epoch change
        partition.metadata                  topic_id = Uuid(0, 1), the metadata topic's id

Why each choice:
* Files are created 0600 and directories 0700, with the owner and group of DIR (`fsutil`):
  the log holds broker passwords in clear, and a controller running as its own user must be
  able to read what a root-run zk2kraft wrote.
* Every append is fsync'd (file), and every file creation or rename fsyncs the directory, so a
  batch reported durable survives a crash (design I5). Small files are replaced atomically
  (temp file, fsync, rename, directory fsync).
* `directory.id` is derived from cluster id + node id (design I6: a re-run writes the same bytes)
  and never one of Kafka's reserved ids (msb 0 and lsb < 100) nor text starting with '-'.
* Index files are not written: Kafka's metadata log always recovers every segment on start-up and
  rebuilds them (`KafkaMetadataLog` opens with recovery point 0, `LogLoader.recoverLog`).
* A directory that already holds another cluster's or another node's metadata is refused
  (`VoterStateError`); one that cannot be read or written is named (`VoterUnavailableError`).
* Opening scans any existing segments (framing, CRC, offset continuity) to find where the log
  ends: a damaged tail is an error, never truncated silently.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from writers.codec.batch import BatchHeader, batch_records
from writers.codec.records import ControlRecord, MetadataRecord
from writers.errors import LogCorruptionError, VoterStateError, VoterUnavailableError
from writers.log.fsutil import (
    Ownership,
    atomic_write,
    fsync_dir,
    make_private_dir,
    open_private,
    write_all,
)
from writers.log.names import directory_id_for, segment_name, snapshot_name
from writers.log.reader import (
    METADATA_PARTITION_DIR,
    METADATA_TOPIC_ID,
    SEGMENT_RE,
    SNAPSHOT_RE,
    MetaProperties,
    read_meta_properties,
    scan_frames,
)
from writers.log.voter_lock import acquire_voter_lock

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "EncodedBatch",
    "VoterDir",
    "snapshot_batches",
]

log = logging.getLogger(__name__)

DEFAULT_SEGMENT_BYTES = 1 << 30  # metadata.log.segment.bytes default (1 GiB)


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


def snapshot_batches(
    records: Sequence[MetadataRecord],
    *,
    epoch: int,
    timestamp_ms: int,
    last_contained_timestamp_ms: int,
) -> list[EncodedBatch]:
    """The batches of a snapshot `.checkpoint` holding `records` (Kafka's layout, `Snapshots.java`).

    A control batch with SNAPSHOT_HEADER, the records in data batches (≤ 8 MiB each), a control
    batch with SNAPSHOT_FOOTER; offsets restart at 0 inside the file and every batch carries the
    snapshot's epoch. Pure: the same arguments give the same bytes.

    Args:
        records: the metadata records of the full image, in replay order.
        epoch: the snapshot id's epoch (partitionLeaderEpoch of every batch).
        timestamp_ms: the batches' timestamp.
        last_contained_timestamp_ms: the header's LastContainedLogTimestamp.
    """
    header = ControlRecord(
        "SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": last_contained_timestamp_ms}
    )
    footer = ControlRecord("SNAPSHOT_FOOTER", {"version": 0})
    pairs = batch_records([header, *records, footer], base_offset=0, leader_epoch=epoch,
                          timestamp_ms=timestamp_ms)
    return [EncodedBatch(b.base_offset, b.last_offset, b.leader_epoch, data) for b, data in pairs]


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


class VoterDir:
    """The metadata directory of one voter, opened for appending (a `VoterLog`).

    Opening creates the layout if needed, takes `DIR/.lock`, checks or writes
    `meta.properties`, and scans existing segments to find `next_offset`.

    Args:
        path: the voter's `metadata.log.dir`.
        node_id: the voter's node id (`--voter ID=DIR`).
        cluster_id: the cluster id (ZooKeeper's `/cluster/id`).
        segment_bytes: roll to a new segment when the active one would exceed this size.
        recover_tail: after a crash, remove an incomplete or CRC-failing *last* batch of the
            last segment (only one that reaches the end of the file) and say so in
            `truncated_tail` and a WARNING. Damage anywhere else is always an error.

    Raises:
        VoterStateError: the directory belongs to another cluster or node.
        LogCorruptionError: its existing log is not a valid sequence of batches (names file,
            byte position and offset); nothing is truncated.
        VoterUnavailableError: the directory cannot be created, read, written or locked.
    """

    def __init__(
        self,
        path: Path,
        *,
        node_id: int,
        cluster_id: str,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        recover_tail: bool = False,
    ) -> None:
        if segment_bytes <= 0:
            raise ValueError("segment_bytes must be > 0")
        self.path = Path(path)
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.segment_bytes = segment_bytes
        self.partition_dir = self.path / METADATA_PARTITION_DIR
        self._release_lock: Callable[[], None] | None = None
        self._owner: Ownership | None = None
        self._seg_fd: int | None = None
        self._seg_size = 0
        self._epochs: list[tuple[int, int]] = []
        self.next_offset = 0
        self.log_start_offset = 0
        self.recover_tail = recover_tail
        self.truncated_tail: tuple[Path, int, int] | None = None
        try:
            self._open()
        except OSError as exc:
            self.close()
            raise self._unavailable("cannot open", exc) from exc
        except BaseException:
            self.close()
            raise

    # -- opening -------------------------------------------------------------------------------

    def _unavailable(self, what: str, exc: OSError) -> VoterUnavailableError:
        where = exc.filename if exc.filename else self.path
        return VoterUnavailableError(
            f"voter {self.node_id} ({self.path}): {what}: {where}: {exc.strerror or exc}"
        )

    def _open(self) -> None:
        # creates a missing directory (0700, owned like its parent) and takes or joins `.lock`
        self._release_lock = acquire_voter_lock(self.path)
        self._owner = Ownership.of_dir(self.path)
        existing = read_meta_properties(self.path)
        if existing is None:
            meta = MetaProperties(self.cluster_id, self.node_id,
                                  directory_id_for(self.cluster_id, self.node_id))
            atomic_write(self.path / "meta.properties", meta.render().encode(), self._owner)
        else:
            if existing.cluster_id != self.cluster_id:
                raise VoterStateError(
                    f"voter {self.node_id} ({self.path}): meta.properties has cluster.id "
                    f"{existing.cluster_id!r}, expected {self.cluster_id!r}"
                )
            if existing.node_id != self.node_id:
                raise VoterStateError(
                    f"voter {self.node_id} ({self.path}): meta.properties has node.id "
                    f"{existing.node_id}, expected {self.node_id}"
                )
        if make_private_dir(self.partition_dir, self._owner):
            fsync_dir(self.path)
        pm = self.partition_dir / "partition.metadata"
        if not pm.exists():
            atomic_write(pm, f"version: 0\ntopic_id: {METADATA_TOPIC_ID}".encode(), self._owner)
        self._scan_existing()

    def segments(self) -> list[Path]:
        """The log segments in base-offset order."""
        found = [p for p in self.partition_dir.iterdir() if SEGMENT_RE.match(p.name)]
        return sorted(found, key=lambda p: int(p.name[:20]))

    def _scan_existing(self) -> None:
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
                    if not self._epochs or frame.leader_epoch > self._epochs[-1][0]:
                        self._epochs.append((frame.leader_epoch, frame.base_offset))
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

    # -- appending -----------------------------------------------------------------------------

    def append(self, batch: EncodedBatch) -> None:
        """Append one batch and make it durable (fsync) before returning.

        Raises:
            VoterStateError: the batch does not start at `next_offset` (design I1).
            VoterUnavailableError: the write or fsync failed.
        """
        if batch.base_offset != self.next_offset:
            raise VoterStateError(
                f"voter {self.node_id} ({self.path}): batch at offset {batch.base_offset} "
                f"but the log's next offset is {self.next_offset}"
            )
        try:
            if self._seg_fd is None or (
                self._seg_size > 0 and self._seg_size + len(batch.data) > self.segment_bytes
            ):
                self._roll(batch.base_offset)
            assert self._seg_fd is not None
            write_all(self._seg_fd, batch.data)
            os.fsync(self._seg_fd)
            self._seg_size += len(batch.data)
            if not self._epochs or batch.leader_epoch > self._epochs[-1][0]:
                self._epochs.append((batch.leader_epoch, batch.base_offset))
                self._write_epoch_checkpoint()
        except OSError as exc:
            raise self._unavailable(f"cannot append offset {batch.base_offset}", exc) from exc
        self.next_offset = batch.last_offset + 1

    def batches_from(self, offset: int) -> list[EncodedBatch]:
        """The log's batches whose base offset is >= `offset`, as stored (for catching up a
        voter that trails the others after a crash).

        Raises:
            LogCorruptionError: a segment no longer scans cleanly.
            VoterUnavailableError: a segment cannot be read.
        """
        out: list[EncodedBatch] = []
        for seg in self.segments():
            try:
                data = seg.read_bytes()
            except OSError as exc:
                raise self._unavailable("cannot read", exc) from exc
            for h in scan_frames(data, file=str(seg)):
                if h.base_offset >= offset:
                    out.append(EncodedBatch(h.base_offset, h.last_offset, h.leader_epoch,
                                            data[h.position: h.position + h.size]))
        return out

    def truncate_to(self, next_offset: int) -> int:
        """Cut the log so that it ends just before `next_offset` (a batch boundary).

        Used only by a resume, for batches that never became durable on a majority (or an
        unclosed tail the journal names); the caller says so in its output. Whole segments
        after the cut are removed; leader-epoch-checkpoint is rewritten.

        Returns:
            How many offsets were removed.

        Raises:
            VoterStateError: `next_offset` is not a batch boundary of this log, or is before
                its start.
            VoterUnavailableError: a file cannot be changed.
        """
        if next_offset >= self.next_offset:
            return 0
        if next_offset < self.log_start_offset:
            raise VoterStateError(
                f"voter {self.node_id} ({self.path}): cannot truncate to offset {next_offset}, "
                f"before the log's start {self.log_start_offset}"
            )
        removed = self.next_offset - next_offset
        try:
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
            self._epochs = [(e, o) for e, o in self._epochs if o < next_offset]
            self._write_epoch_checkpoint()
            segs = self.segments()
            if segs:
                self._seg_fd = os.open(segs[-1], os.O_WRONLY | os.O_APPEND)
                self._seg_size = os.fstat(self._seg_fd).st_size
        except OSError as exc:
            raise self._unavailable(f"cannot truncate to offset {next_offset}", exc) from exc
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
        lines = ["0", str(len(self._epochs))] + [f"{e} {o}" for e, o in self._epochs]
        atomic_write(self.partition_dir / "leader-epoch-checkpoint",
                     ("\n".join(lines) + "\n").encode(), self._owner)

    def write_quorum_state(
        self, *, leader_epoch: int, voters: Sequence[int], leader_id: int = -1, voted_id: int = -1
    ) -> None:
        """Write `quorum-state` (data_version 0, static quorum) atomically.

        Args:
            leader_epoch: the epoch the quorum is in (at least the log's last batch epoch).
            voters: every voter's node id.
            leader_id: the leader, or -1 (the controllers elect one when they start).
            voted_id: the vote cast in this epoch, or -1.

        Raises:
            VoterUnavailableError: the file cannot be written.
        """
        state = {
            "clusterId": "",
            "leaderId": leader_id,
            "leaderEpoch": leader_epoch,
            "votedId": voted_id,
            "appliedOffset": 0,
            "currentVoters": [{"voterId": v} for v in sorted(voters)],
            "data_version": 0,
        }
        text = json.dumps(state, separators=(",", ":"))
        try:
            atomic_write(self.partition_dir / "quorum-state", text.encode(), self._owner)
        except OSError as exc:
            raise self._unavailable("cannot write quorum-state", exc) from exc

    def write_snapshot(self, end_offset: int, epoch: int, batches: Iterable[EncodedBatch]) -> Path:
        """Write a complete snapshot `.checkpoint` from encoded batches (header .. footer).

        The batches must already have offsets from 0 inside the file (Kafka's snapshot layout);
        the file appears under its final name only once complete and fsync'd.

        Args:
            end_offset: the snapshot id's (exclusive) end offset.
            epoch: the snapshot id's epoch.
            batches: the header control batch, the data batches, the footer control batch.

        Returns:
            The path of the `.checkpoint` file.

        Raises:
            VoterStateError: the batches' offsets are not contiguous from 0.
            VoterUnavailableError: the file cannot be written.
        """
        final = self.partition_dir / snapshot_name(end_offset, epoch)
        part = final.with_name(final.name + ".part")
        expected = 0
        try:
            fd = open_private(part, os.O_WRONLY | os.O_TRUNC, self._owner)
            try:
                for b in batches:
                    if b.base_offset != expected:
                        raise VoterStateError(
                            f"snapshot {final.name}: batch at offset {b.base_offset}, "
                            f"expected {expected}"
                        )
                    write_all(fd, b.data)
                    expected = b.last_offset + 1
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(part, final)
            fsync_dir(self.partition_dir)
        except OSError as exc:
            raise self._unavailable(f"cannot write snapshot {final.name}", exc) from exc
        except VoterStateError:
            part.unlink(missing_ok=True)
            raise
        return final

    @property
    def epochs(self) -> list[tuple[int, int]]:
        """(leader epoch, start offset) for each epoch in the log, as leader-epoch-checkpoint."""
        return list(self._epochs)

    def close(self) -> None:
        """Close the active segment and release the directory lock (idempotent)."""
        if self._seg_fd is not None:
            os.close(self._seg_fd)
            self._seg_fd = None
        if self._release_lock is not None:
            self._release_lock()
            self._release_lock = None

    def __enter__(self) -> VoterDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
