"""The stand-in's appends on the loop, and the wait for a majority to commit them.

An append is persisted and indexed (`LocalLog`), the high watermark advanced if the stand-in's
own fsync'd end was what it waited for (`RaftLeader.advance_hw`), and whoever waits is woken:
the committers blocked on the caller's thread (`wait`) and the long-polling fetchers on the loop
(`ServerLoop.notify`). `Inbound` reports the high watermark moving on a follower's Fetch the same
way (`hw_moved`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from writers.errors import VoterUnavailableError
from writers.log.log_dir import EncodedBatch
from writers.raft.leader import RaftLeader
from writers.raft.local_log import LocalLog
from writers.raft.serving import ServerLoop

__all__ = ["Commits"]


class Commits:
    """Appends and commit waits of the stand-in `node_id`; `clock` is the server's (monotonic,
    milliseconds), which the commit deadline is measured on."""

    def __init__(self, node_id: int, log: LocalLog, raft: RaftLeader,
                 serving: ServerLoop, clock: Callable[[], float]) -> None:
        self._node_id = node_id
        self._clock = clock
        self._log = log
        self._raft = raft
        self._serving = serving
        self._cond = threading.Condition()  # committers wait on it for the high watermark

    def append_now(self, batches: Sequence[EncodedBatch]) -> None:
        """Persist and index batches (on the loop thread), then wake the fetchers."""
        self._log.append(batches)
        if self._raft.advance_hw():
            self.hw_moved()
        self._serving.notify()

    def hw_moved(self) -> None:
        """Wake the committers waiting on the caller's thread and the long-polling fetchers."""
        self.wake_committers()
        self._serving.notify()

    def wake_committers(self) -> None:
        """Let every committer look at the high watermark and leadership again."""
        with self._cond:
            self._cond.notify_all()

    def wait(self, offset: int, timeout_s: float) -> None:
        """Block until `offset` is committed (high watermark past it).

        Raises:
            VoterUnavailableError: not within `timeout_s`.
        """
        deadline_ms = self._clock() + timeout_s * 1000.0
        with self._cond:
            while self._raft.hw <= offset:
                left = (deadline_ms - self._clock()) / 1000.0
                if left <= 0:
                    raise VoterUnavailableError(
                        f"stand-in {self._node_id}: offset {offset} not committed by a majority "
                        f"within {timeout_s:.0f}s (high watermark {self._raft.hw}; "
                        f"followers at {self._raft.follower_ends()})")
                self._cond.wait(min(left, 0.5))
