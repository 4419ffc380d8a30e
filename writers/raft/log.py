"""The stand-in leader's log in memory, and re-stamping batches for it.

`LogIndex` keeps the batches the stand-in persisted (by base offset, with the epoch start
offsets) so that a Fetch is served from memory; `restamp_batch` moves a batch to another base
offset and partitionLeaderEpoch, as a Kafka leader stamps the batches it appends.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

from writers.log.log_dir import EncodedBatch

__all__ = ["LogIndex", "restamp_batch"]


def restamp_batch(data: bytes, base_offset: int, leader_epoch: int) -> EncodedBatch:
    """The same batch at another base offset and partitionLeaderEpoch.

    The batch CRC covers attributes onwards, not the base offset nor the epoch, so the records
    and CRC stay as they are (how a Kafka leader stamps appended batches).
    """
    last_delta = struct.unpack_from(">i", data, 23)[0]  # v2 header: lastOffsetDelta at byte 23
    out = bytearray(data)
    struct.pack_into(">q", out, 0, base_offset)  # baseOffset
    struct.pack_into(">i", out, 12, leader_epoch)  # partitionLeaderEpoch
    return EncodedBatch(base_offset, base_offset + last_delta, leader_epoch, bytes(out))


@dataclass
class LogIndex:
    """The stand-in's log in memory: batches by base offset, for serving Fetch quickly."""

    bases: list[int] = field(default_factory=list)
    batches: list[EncodedBatch] = field(default_factory=list)
    epochs: list[tuple[int, int]] = field(default_factory=list)  # (epoch, start offset)

    def add(self, batch: EncodedBatch) -> None:
        self.bases.append(batch.base_offset)
        self.batches.append(batch)
        if not self.epochs or self.epochs[-1][0] != batch.leader_epoch:
            self.epochs.append((batch.leader_epoch, batch.base_offset))

    @property
    def end(self) -> int:
        return self.batches[-1].last_offset + 1 if self.batches else 0

    def last_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else 0

    def end_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= `epoch`, the offset that epoch ends before) — Kafka's
        `endOffsetForEpoch`, used to tell a follower where its log diverges."""
        best = (0, 0)
        for i, (e, _start) in enumerate(self.epochs):
            if e > epoch:
                break
            best = (e, self.epochs[i + 1][1] if i + 1 < len(self.epochs) else self.end)
        return best

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding `offset`, at least one, at most `max_bytes`."""
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0 or offset >= self.end:
            return b""
        out: list[bytes] = []
        size = 0
        while i < len(self.batches):
            data = self.batches[i].data
            if out and size + len(data) > max_bytes:
                break
            out.append(data)
            size += len(data)
            i += 1
        return b"".join(out)
