"""Write the same metadata log to every voter; a batch counts once durable on a majority.

`QuorumWriter` is the only way batches reach voter directories (docs/design/overview.md invariants
I1, I5):

* Each batch is encoded once and the identical bytes go to every voter (Kafka's advice for a
  hand-written multi-voter log: the same log on all voters, or an empty-log majority may elect a
  leader that truncates the copy).
* Every voter has its own single worker thread, so fsyncs run in parallel and each voter still
  sees its batches strictly in order. `append_batch` returns as soon as a majority has the batch
  fsync'd; a slower voter may trail by up to `max_lag_batches` before the writer waits for it.
* A voter whose write fails is reported (`failures`, a WARNING log) and dropped; writing goes on
  only while a majority of *all* voters remains, otherwise `VoterUnavailableError` (exit 3).
  A voter's results are only ever collected in the order its writes were queued (`_reap`), so
  the failure is reported at the first offset that failed, whichever future is noticed first.
* Base offsets are asserted, never assumed: a batch must start at `next_offset`. Re-sending the
  last durable batch unchanged (a retry) is accepted as a no-op; anything else raises, so a retry
  can never skip ahead or duplicate (docs/design/overview.md I1).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from writers.codec.batch import encode_batch
from writers.codec.records import RecordBatch
from writers.errors import VoterStateError, VoterUnavailableError, WriterError
from writers.log.log_dir import EncodedBatch

__all__ = ["QuorumWriter", "VoterFailure", "VoterLog"]

log = logging.getLogger(__name__)


class VoterLog(Protocol):
    """What `QuorumWriter` needs from one voter's log (`VoterDir` is the real one)."""

    @property
    def node_id(self) -> int:
        """The voter's node id."""
        ...

    @property
    def next_offset(self) -> int:
        """The offset the next appended batch must start at."""
        ...

    def append(self, batch: EncodedBatch) -> None:
        """Append and fsync one batch; raise `VoterUnavailableError` (or OSError) on failure."""
        ...

    def write_snapshot(
        self, end_offset: int, epoch: int, batches: Sequence[EncodedBatch]
    ) -> Path:
        """Write a complete `.checkpoint` durably."""
        ...

    def write_quorum_state(
        self, *, leader_epoch: int, voters: Sequence[int], leader_id: int = -1,
        voted_id: int = -1,
    ) -> None:
        """Write `quorum-state` durably."""
        ...

    def close(self) -> None:
        """Release the voter's files and lock."""
        ...


@dataclass(frozen=True, slots=True)
class VoterFailure:
    """A voter dropped from the write: which one, at which offset, and why."""

    node_id: int
    offset: int
    error: str


class QuorumWriter:
    """Appends batches to a set of voters with majority durability.

    Args:
        voters: every voter of the quorum (at least one); their logs must end at the same offset.
        max_lag_batches: how many batches a voter outside the majority may trail.
        encode: RecordBatch -> bytes (defaults to the codec's `encode_batch`).

    Raises:
        VoterStateError: duplicate node ids, or the voters' logs end at different offsets.
    """

    def __init__(
        self,
        voters: Sequence[VoterLog],
        *,
        max_lag_batches: int = 64,
        encode: Callable[[RecordBatch], bytes] | None = None,
    ) -> None:
        if not voters:
            raise ValueError("a quorum needs at least one voter")
        ids = [v.node_id for v in voters]
        if len(set(ids)) != len(ids):
            raise VoterStateError(f"duplicate voter node ids: {sorted(ids)}")
        ends = {v.node_id: v.next_offset for v in voters}
        if len(set(ends.values())) != 1:
            listing = ", ".join(f"voter {n}: {o}" for n, o in sorted(ends.items()))
            raise VoterStateError(f"voter logs end at different offsets ({listing})")
        self._voters = {v.node_id: v for v in voters}
        self._all_ids = sorted(ids)
        self.majority = len(voters) // 2 + 1
        self.max_lag_batches = max(1, max_lag_batches)
        self._encode = encode or encode_batch
        self._next = next(iter(ends.values()))
        self._last: EncodedBatch | None = None
        self._live: set[int] = set(ids)
        self._dropped: set[int] = set()
        self.failures: list[VoterFailure] = []
        self._pending: dict[int, deque[tuple[int, Future[None]]]] = {n: deque() for n in ids}
        self._pool = {
            n: ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"zk2kraft-voter-{n}")
            for n in ids
        }
        self._closed = False

    # -- state ---------------------------------------------------------------------------------

    @property
    def next_offset(self) -> int:
        """The offset the next batch must start at."""
        return self._next

    @property
    def live_voters(self) -> list[int]:
        """Node ids still being written to."""
        return sorted(self._live)

    @property
    def voter_ids(self) -> list[int]:
        """Every voter's node id (live or dropped)."""
        return list(self._all_ids)

    def _drop(self, node_id: int, offset: int, exc: BaseException) -> None:
        if node_id in self._dropped:
            return
        self._dropped.add(node_id)
        self._live.discard(node_id)
        failure = VoterFailure(node_id, offset, str(exc))
        self.failures.append(failure)
        log.warning(
            "voter %d dropped at offset %d: %s (%d of %d voters left, majority %d)",
            node_id, offset, exc, len(self._live), len(self._all_ids), self.majority,
        )

    def _require_majority(self, offset: int) -> None:
        if len(self._live) < self.majority:
            detail = "; ".join(f"voter {f.node_id} at offset {f.offset}: {f.error}"
                               for f in self.failures)
            self._closed = True
            raise VoterUnavailableError(
                f"only {len(self._live)} of {len(self._all_ids)} voters writable, a majority "
                f"of {self.majority} is needed (offset {offset}): {detail}"
            )

    def _reap(self, node_id: int, *, block_until: int = 0) -> None:
        """Collect finished writes of one voter; wait while more than `block_until` remain."""
        queue = self._pending[node_id]
        while queue and (queue[0][1].done() or len(queue) > block_until):
            offset, fut = queue.popleft()
            try:
                fut.result()
            except Exception as exc:  # any failure of this voter drops it
                self._drop(node_id, offset, exc)

    def _run(self, node_id: int, op: Callable[[], object]) -> None:
        if node_id in self._dropped:  # a dropped voter's queued writes are not attempted
            raise VoterUnavailableError(f"voter {node_id} was dropped")
        op()

    def _submit_all(self, offset: int, make: Callable[[VoterLog], Callable[[], object]]) -> None:
        """Run one operation on every live voter; return once a majority succeeded."""
        futures: dict[Future[None], int] = {}
        for n in sorted(self._live):
            self._reap(n, block_until=self.max_lag_batches - 1)
            if n not in self._live:
                continue
            fut: Future[None] = self._pool[n].submit(self._run, n, make(self._voters[n]))
            self._pending[n].append((offset, fut))
            futures[fut] = n
        self._require_majority(offset)
        ok = 0
        remaining = set(futures)
        while remaining and ok < self.majority:
            done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for fut in done:
                if fut.exception() is None:
                    ok += 1
                else:
                    # Collect this voter's older writes first, in order: one of them may have
                    # failed before this one (it finished earlier but nobody looked yet), and
                    # the failure must be reported at the first offset that failed.
                    self._reap(futures[fut], block_until=0)
            self._require_majority(offset)
        for n in list(self._live):
            self._reap(n, block_until=self.max_lag_batches)

    # -- writing -------------------------------------------------------------------------------

    def append_batch(self, batch: RecordBatch) -> None:
        """Encode one batch and append it to every voter (see `append_encoded`)."""
        data = self._encode(batch)
        self.append_encoded(
            EncodedBatch(batch.base_offset, batch.last_offset, batch.leader_epoch, data)
        )

    def append_encoded(self, batch: EncodedBatch) -> None:
        """Append encoded batch bytes to every live voter; return once durable on a majority.

        Raises:
            VoterStateError: the batch does not start at `next_offset` (and is not an unchanged
                re-send of the last durable batch).
            VoterUnavailableError: fewer than a majority of voters could make it durable.
            WriterError: the writer was closed, or lost its majority earlier.
        """
        if self._closed:
            raise WriterError("quorum writer is closed")
        if (
            self._last is not None
            and batch.base_offset == self._last.base_offset
            and batch.data == self._last.data
        ):
            log.debug("batch at offset %d re-sent unchanged: already durable", batch.base_offset)
            return
        if batch.base_offset != self._next:
            raise VoterStateError(
                f"batch starts at offset {batch.base_offset} but the quorum's next offset is "
                f"{self._next}: batches must be appended in order without gaps (a retry must "
                "re-send the same batch at the same offset)"
            )
        if batch.last_offset < batch.base_offset:
            raise VoterStateError(f"batch at offset {batch.base_offset} holds no records")
        self._submit_all(batch.base_offset, lambda v: lambda: v.append(batch))
        self._next = batch.last_offset + 1
        self._last = batch

    def write_snapshot(
        self, end_offset: int, epoch: int, batches: Sequence[EncodedBatch]
    ) -> None:
        """Write the same `.checkpoint` into every live voter (majority rule as for appends)."""
        if self._closed:
            raise WriterError("quorum writer is closed")
        self._submit_all(end_offset, lambda v: lambda: v.write_snapshot(end_offset, epoch, batches))

    def write_quorum_state(self, *, leader_epoch: int, leader_id: int = -1) -> None:
        """Write `quorum-state` (static voter set = every voter) into every live voter."""
        if self._closed:
            raise WriterError("quorum writer is closed")
        voters = self._all_ids
        self._submit_all(
            self._next,
            lambda v: lambda: v.write_quorum_state(
                leader_epoch=leader_epoch, voters=voters, leader_id=leader_id
            ),
        )

    def flush(self) -> None:
        """Wait for every live voter to finish its queued writes.

        Raises:
            VoterUnavailableError: a majority no longer holds.
        """
        for n in list(self._live):
            self._reap(n, block_until=0)
        self._require_majority(self._next)

    def close(self) -> None:
        """Finish queued writes (failures are still recorded), stop workers, close voters."""
        for n in self._all_ids:
            if n in self._live:
                self._reap(n, block_until=0)
            self._pool[n].shutdown(wait=True)
            self._voters[n].close()
        self._closed = True

    def __enter__(self) -> QuorumWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
