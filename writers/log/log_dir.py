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
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from writers.codec.batch import batch_records
from writers.codec.records import ControlRecord, MetadataRecord
from writers.errors import VoterStateError, VoterUnavailableError
from writers.log.fsutil import (
    Ownership,
    atomic_write,
    fsync_dir,
    make_private_dir,
    open_private,
    write_all,
)
from writers.log.names import directory_id_for, snapshot_name
from writers.log.reader import (
    METADATA_TOPIC_ID,
    MetaProperties,
    check_partition_dir,
    read_meta_properties,
)
from writers.log.segments import EncodedBatch, SegmentLog, voter_unavailable
from writers.log.voter_lock import acquire_voter_lock

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "EncodedBatch",
    "VoterDir",
    "snapshot_batches",
]

DEFAULT_SEGMENT_BYTES = 1 << 30  # metadata.log.segment.bytes default (1 GiB)


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


class VoterDir:
    """The metadata directory of one voter, opened for appending (a `VoterLog`).

    Opening creates the layout if needed, takes `DIR/.lock`, checks or writes
    `meta.properties`, and scans existing segments to find `next_offset`. The segments, where
    the log starts and ends and its epochs belong to its `SegmentLog` (`segments.py`).

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
        self._log = SegmentLog(self.path, node_id=node_id, segment_bytes=segment_bytes,
                               recover_tail=recover_tail)
        self.partition_dir = self._log.partition_dir
        self._release_lock: Callable[[], None] | None = None
        self._owner: Ownership | None = None
        self.recover_tail = recover_tail
        try:
            self._open()
        except OSError as exc:
            self.close()
            raise self._unavailable("cannot open", exc) from exc
        except BaseException:
            self.close()
            raise

    @property
    def next_offset(self) -> int:
        """The offset the next appended batch must start at."""
        return self._log.next_offset

    @property
    def log_start_offset(self) -> int:
        """The first segment's base offset (after the newest snapshot when there is none)."""
        return self._log.log_start_offset

    @property
    def truncated_tail(self) -> tuple[Path, int, int] | None:
        """With `recover_tail`: the torn last batch removed on opening (segment, position,
        bytes), or None."""
        return self._log.truncated_tail

    # -- opening -------------------------------------------------------------------------------

    def _unavailable(self, what: str, exc: OSError) -> VoterUnavailableError:
        return voter_unavailable(self.node_id, self.path, what, exc)

    def _open(self) -> None:
        # creates a missing directory (0700, owned like its parent) and takes or joins `.lock`
        self._release_lock = acquire_voter_lock(self.path)
        check_partition_dir(self.partition_dir)  # a plain file there: damaged data, exit 2
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
        self._log.open(self._owner)

    def segments(self) -> list[Path]:
        """The log segments in base-offset order."""
        return self._log.segments()

    # -- appending -----------------------------------------------------------------------------

    def append(self, batch: EncodedBatch) -> None:
        """Append one batch and make it durable (fsync) before returning.

        Raises:
            VoterStateError: the batch does not start at `next_offset` (design I1).
            VoterUnavailableError: the write or fsync failed.
        """
        try:
            self._log.append(batch)
        except OSError as exc:
            raise self._unavailable(f"cannot append offset {batch.base_offset}", exc) from exc

    def batches_from(self, offset: int) -> list[EncodedBatch]:
        """The log's batches whose base offset is >= `offset`, as stored (for catching up a
        voter that trails the others after a crash).

        Raises:
            LogCorruptionError: a segment no longer scans cleanly.
            VoterUnavailableError: a segment cannot be read.
        """
        return self._log.batches_from(offset)

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
        try:
            return self._log.truncate_to(next_offset)
        except OSError as exc:
            raise self._unavailable(f"cannot truncate to offset {next_offset}", exc) from exc

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
        return list(self._log.epochs)

    def close(self) -> None:
        """Close the active segment and release the directory lock (idempotent)."""
        self._log.close()
        if self._release_lock is not None:
            self._release_lock()
            self._release_lock = None

    def __enter__(self) -> VoterDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
