"""QuorumWriter: identical bytes to every voter, majority durability, strict offsets (I1)."""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import crc32c
import pytest

from migrate.cli.exit_codes import exit_code_for
from writers import (
    EncodedBatch,
    QuorumWriter,
    VoterDir,
    VoterStateError,
    VoterUnavailableError,
    WriterError,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"


def frame(base: int, count: int = 1, epoch: int = 1) -> EncodedBatch:
    """A valid v2 batch frame (header + CRC-32C) around opaque record bytes."""
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, 0, 0, -1, -1, -1, count) + bytes(8)
    head = struct.pack(">qiibI", base, 9 + len(after_crc), epoch, 2, crc32c.crc32c(after_crc))
    return EncodedBatch(base, base + count - 1, epoch, head + after_crc)


class MemVoter:
    """An in-memory VoterLog: records what it was given; can fail or block on demand."""

    def __init__(self, node_id: int, next_offset: int = 0) -> None:
        self.node_id = node_id
        self.next_offset = next_offset
        self.batches: list[EncodedBatch] = []
        self.fail_at: int | None = None
        self.gate: threading.Event | None = None
        self.before: dict[int, Callable[[], None]] = {}
        self.tried: dict[int, threading.Event] = {}
        self.closed = False

    def append(self, batch: EncodedBatch) -> None:
        if self.gate is not None:
            assert self.gate.wait(10)
        if batch.base_offset in self.before:
            self.before[batch.base_offset]()
        self.tried.setdefault(batch.base_offset, threading.Event()).set()
        if self.fail_at is not None and batch.base_offset >= self.fail_at:
            raise VoterUnavailableError(f"voter {self.node_id}: disk on fire")
        assert batch.base_offset == self.next_offset
        self.batches.append(batch)
        self.next_offset = batch.last_offset + 1

    def write_snapshot(self, end_offset: int, epoch: int, batches: Sequence[EncodedBatch]) -> Path:
        return Path(f"{end_offset}-{epoch}")

    def write_quorum_state(self, *, leader_epoch: int, voters: Sequence[int],
                           leader_id: int = -1, voted_id: int = -1) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_same_bytes_to_every_voter_in_order() -> None:
    vs = [MemVoter(i) for i in (1, 2, 3)]
    with QuorumWriter(vs) as q:
        for off in range(0, 10, 2):
            q.append_encoded(frame(off, 2))
        assert q.next_offset == 10
    assert all(v.closed for v in vs)
    assert vs[0].batches == vs[1].batches == vs[2].batches
    assert [b.base_offset for b in vs[0].batches] == [0, 2, 4, 6, 8]


def test_gap_and_overlap_raise_but_unchanged_resend_is_a_noop() -> None:
    vs = [MemVoter(i) for i in (1, 2, 3)]
    q = QuorumWriter(vs)
    q.append_encoded(frame(0, 2))
    with pytest.raises(VoterStateError, match="offset 3 but the quorum's next offset is 2"):
        q.append_encoded(frame(3))
    with pytest.raises(VoterStateError, match="starts at offset 1"):
        q.append_encoded(frame(1))
    q.append_encoded(frame(0, 2))  # a retry of the last durable batch
    with pytest.raises(VoterStateError, match="offset 0"):
        q.append_encoded(frame(0, 2, epoch=9))  # same offset, different bytes: not a retry
    q.append_encoded(frame(2))
    q.close()
    assert [b.base_offset for b in vs[0].batches] == [0, 2]


def test_failed_voter_is_dropped_and_reported_while_majority_holds() -> None:
    vs = [MemVoter(i) for i in (1, 2, 3)]
    vs[2].fail_at = 3
    q = QuorumWriter(vs)
    for off in range(6):
        q.append_encoded(frame(off))
    q.flush()
    assert q.live_voters == [1, 2]
    assert [(f.node_id, f.offset) for f in q.failures] == [(3, 3)]
    assert "disk on fire" in q.failures[0].error
    q.close()
    assert len(vs[0].batches) == 6 and len(vs[2].batches) == 3


def test_a_failure_is_reported_at_the_first_failed_offset_whatever_finishes_first() -> None:
    # The race the audit hit: voter 3 runs late, fails at offset 3, and its (also failing)
    # write of offset 4 finishes while the writer waits for offset 4's majority, before anyone
    # collected offset 3's result. The failure still belongs to offset 3.
    vs = [MemVoter(i) for i in (1, 2, 3)]
    late = threading.Event()
    vs[2].gate, vs[2].fail_at = late, 3
    vs[2].tried[4] = threading.Event()

    def voter_3_catches_up() -> None:
        late.set()
        assert vs[2].tried[4].wait(10)

    vs[0].before[4] = vs[1].before[4] = voter_3_catches_up
    q = QuorumWriter(vs, max_lag_batches=8)
    for off in range(6):
        q.append_encoded(frame(off))
    q.flush()
    assert [(f.node_id, f.offset) for f in q.failures] == [(3, 3)]
    assert q.live_voters == [1, 2]
    q.close()
    assert len(vs[2].batches) == 3


def test_losing_the_majority_raises_unavailable() -> None:
    vs = [MemVoter(i) for i in (1, 2, 3)]
    vs[1].fail_at = 2
    vs[2].fail_at = 2
    q = QuorumWriter(vs)
    q.append_encoded(frame(0, 2))
    with pytest.raises(VoterUnavailableError, match="only 1 of 3 voters writable") as err:
        q.append_encoded(frame(2))
    assert exit_code_for(err.value) == 3
    with pytest.raises(WriterError):
        q.append_encoded(frame(3))
    q.close()


def test_returns_once_a_majority_is_durable_without_waiting_for_a_slow_voter() -> None:
    vs = [MemVoter(i) for i in (1, 2, 3)]
    gate = threading.Event()
    vs[2].gate = gate
    q = QuorumWriter(vs, max_lag_batches=8)
    for off in range(5):
        q.append_encoded(frame(off))  # would hang if it waited for voter 3
    assert len(vs[0].batches) == 5 and vs[2].batches == []
    gate.set()
    q.flush()
    assert [b.base_offset for b in vs[2].batches] == [0, 1, 2, 3, 4]
    q.close()


def test_voters_must_agree_on_where_their_logs_end() -> None:
    with pytest.raises(VoterStateError, match="voter 1: 0, voter 2: 5"):
        QuorumWriter([MemVoter(1), MemVoter(2, 5)])
    with pytest.raises(VoterStateError, match="duplicate"):
        QuorumWriter([MemVoter(1), MemVoter(1)])


def test_real_voter_dirs_hold_identical_logs(tmp_path: Path) -> None:
    dirs = [VoterDir(tmp_path / f"v{i}", node_id=i, cluster_id=CLUSTER) for i in (1, 2, 3)]
    with QuorumWriter(dirs) as q:
        for off in range(20):
            q.append_encoded(frame(off, 1, epoch=1 + off // 10))
        q.write_quorum_state(leader_epoch=2)
    seg = "__cluster_metadata-0/00000000000000000000.log"
    first = (tmp_path / "v1" / seg).read_bytes()
    assert len(first) == 20 * len(frame(0).data)
    for i in (2, 3):
        assert (tmp_path / f"v{i}" / seg).read_bytes() == first
        assert (tmp_path / f"v{i}" / "__cluster_metadata-0/leader-epoch-checkpoint").read_text() \
            == "0\n2\n1 0\n2 10\n"
