"""The stand-in's own copy of the log: its `metadata.log.dir` on disk and the index in memory.

`LocalLog` owns the voter directory (`VoterDir`: the segments and `quorum-state`) and the
`LogIndex` Fetch is served from, and keeps them in step: a batch is persisted (fsync'd) before it
is indexed. It frames the single writer's records at the log's end, re-stamps batches into the
stand-in's epoch, and writes quorum-state off the loop in the order the state changed. What the
appends mean for the quorum (the high watermark, waking fetchers) is `StandInLeader`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from writers.codec.batch import batch_records
from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.errors import VoterStateError
from writers.log.log_dir import EncodedBatch, VoterDir
from writers.log.reader import open_log_source
from writers.raft.log import LogIndex, restamp_batch

__all__ = ["LocalLog"]


class LocalLog:
    """The stand-in's log directory and its index, loaded from what the directory holds.

    Raises:
        VoterStateError: the log dir belongs to another cluster or node.
        VoterUnavailableError: the log dir cannot be opened.
    """

    def __init__(self, log_dir: Path, *, node_id: int, cluster_id: str) -> None:
        self.dir = VoterDir(Path(log_dir), node_id=node_id, cluster_id=cluster_id)
        self.index = LogIndex()
        for b in self.dir.batches_from(0):
            self.index.add(b)
        self.state_lock: asyncio.Lock | None = None  # quorum-state writes, in order (loop)

    def encode(self, records: Sequence[MetadataRecord | ControlRecord], *, epoch: int,
               timestamp_ms: int) -> list[EncodedBatch]:
        """`records` framed at the log's end in `epoch`."""
        pairs = batch_records(records, base_offset=self.index.end, leader_epoch=epoch,
                              timestamp_ms=timestamp_ms)
        return [EncodedBatch(b.base_offset, b.last_offset, b.leader_epoch, d) for b, d in pairs]

    def append(self, batches: Sequence[EncodedBatch]) -> None:
        """Persist (fsync) and index `batches` (on the loop thread)."""
        for b in batches:
            self.dir.append(b)
            self.index.add(b)

    def behind_the_end(self, batches: Sequence[EncodedBatch], epoch: int) -> list[EncodedBatch]:
        """`batches` as encoded, or moved behind what was appended since they were (a broker's
        records appended by the stand-in meanwhile), re-stamped in `epoch`."""
        shift = self.index.end - batches[0].base_offset
        if not shift:
            return list(batches)
        return [restamp_batch(b.data, b.base_offset + shift, epoch) for b in batches]

    def stamped_in_order(self, batches: Sequence[EncodedBatch],
                         epoch: int) -> list[EncodedBatch]:
        """`batches` re-stamped in `epoch`, checked to continue the log without a gap.

        Raises:
            VoterStateError: they do not start at the log's end, or a batch's bytes hold other
                offsets than it says.
        """
        expected = self.index.end
        out = []
        for b in batches:
            if b.base_offset != expected:
                raise VoterStateError(
                    f"batch starts at offset {b.base_offset} but the stand-in's log ends "
                    f"at {expected}: batches must be appended in order without gaps")
            stamped = restamp_batch(b.data, b.base_offset, epoch)
            if stamped.last_offset != b.last_offset:
                raise VoterStateError(
                    f"batch at offset {b.base_offset} holds offsets up to "
                    f"{stamped.last_offset}, not {b.last_offset}")
            out.append(stamped)
            expected = b.last_offset + 1
        return out

    async def persist_state(self, **state: Any) -> None:
        """Write quorum-state off the loop (its fsyncs cost tens of ms under load: docs/
        benchmarks.md), one write at a time and in the order the state changed; the caller
        answers after it."""
        if self.state_lock is None:
            self.state_lock = asyncio.Lock()
        async with self.state_lock:
            await asyncio.to_thread(self.dir.write_quorum_state, **state)

    def read(self) -> Iterator[RecordBatch]:
        """The batches of the log as the directory holds them."""
        for entry in open_log_source(self.dir.path).entries():
            yield entry.batch

    def close(self) -> None:
        """Release the log directory (its `.lock`)."""
        self.dir.close()
