"""The stand-in leader's pure parts: re-stamping batches and serving reads from its log index.

(Its Raft behaviour is tested against real Kafka 3.9.1 controllers in tests/oracle/test_standin.py.)
"""

from __future__ import annotations

import pytest

from writers import EncodedBatch, MetadataRecord, batch_records, decode_batch, restamp_batch
from writers.raft.log import LogIndex as _LogIndex


def _batch(base: int, n: int, epoch: int) -> EncodedBatch:
    records = [MetadataRecord("NO_OP_RECORD", 0, {}) for _ in range(n)]
    [(b, data)] = batch_records(records, base_offset=base, leader_epoch=epoch, timestamp_ms=1)
    return EncodedBatch(b.base_offset, b.last_offset, b.leader_epoch, data)


def test_restamp_moves_offset_and_epoch_and_keeps_the_crc_valid() -> None:
    original = _batch(0, 3, 1)
    moved = restamp_batch(original.data, 41, 7)
    assert (moved.base_offset, moved.last_offset, moved.leader_epoch) == (41, 43, 7)
    batch, end = decode_batch(moved.data, 0)  # checks the CRC-32C
    assert (batch.base_offset, batch.leader_epoch, end) == (41, 7, len(original.data))
    assert moved.data[21:] == original.data[21:]  # attributes onwards (the CRC's range) intact


def test_read_returns_whole_batches_capped_by_max_bytes_but_at_least_one() -> None:
    idx = _LogIndex()
    batches = [_batch(0, 1, 1), _batch(1, 2, 1), _batch(3, 1, 2)]
    for b in batches:
        idx.add(b)
    assert idx.end == 4
    assert idx.read(0, 1) == batches[0].data  # one batch even above max_bytes
    assert idx.read(1, 10**6) == batches[1].data + batches[2].data
    assert idx.read(2, 10**6) == batches[1].data + batches[2].data  # from the batch holding 2
    assert idx.read(4, 10**6) == b""


@pytest.mark.parametrize(("epoch", "expected"), [
    (1, (1, 3)),  # epoch 1 ends where epoch 2 starts
    (2, (2, 4)),  # the latest epoch ends at the log end
    (5, (2, 4)),  # an unknown higher epoch: the largest epoch below it
    (0, (0, 0)),
])
def test_end_for_epoch_tells_a_follower_where_logs_diverge(
    epoch: int, expected: tuple[int, int]
) -> None:
    idx = _LogIndex()
    for b in (_batch(0, 1, 1), _batch(1, 2, 1), _batch(3, 1, 2)):
        idx.add(b)
    assert idx.end_for_epoch(epoch) == expected
