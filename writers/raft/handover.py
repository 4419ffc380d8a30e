"""The stand-in's handover: EndQuorumEpoch to the followers at the log's end, then waiting for
a real controller's BeginQuorumEpoch; each message stamped, and who leads after it.

`Handover` runs on the stand-in's loop and sees the server through `HandoverHost`; the Raft
state it changes (resigned) is `writers.raft.leader.RaftLeader`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from writers.raft.errors import NONE
from writers.raft.leader import METADATA_TOPIC, RaftLeader
from writers.raft.local_log import LocalLog
from writers.raft.serving import ServerLoop
from writers.raft.wire import Peers

__all__ = ["Handover", "HandoverEvent", "HandoverHost", "HandoverResult"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HandoverEvent:
    """One message of the handover, stamped on both clocks as it happened.

    The wall-clock time (the server's injected `wall_clock`, `time.time()` by default) lets the
    run line these up with the new leader's own log lines (`CandidateState`, `Leader`); the
    monotonic one (the server's injected `clock`, `time.monotonic()` by default) with the run's
    other stamps.

    Attributes:
        kind: `followers_at_end` (every follower fetched up to the log's end, node -1;
            `detail` names those still behind if it gave up), `end_quorum_epoch_sent` (handed to
            the voter's socket: stamped just before the write),
            `end_quorum_epoch_answered` (its response read, or the error), `vote_received` (a
            candidate's Vote request decoded), `vote_answered` (our answer about to be
            written), `begin_quorum_epoch_received` (a new leader's BeginQuorumEpoch decoded,
            before the stand-in writes its quorum-state).
        node: the voter the message went to or came from.
        epoch: the epoch it carried (ours for EndQuorumEpoch, the candidate's or leader's else).
        wall_s: the server's wall clock (`time.time()` by default) when it happened.
        mono_s: the server's clock when it happened, in seconds (`StandInLeader`'s `clock`,
            the one `elapsed_ms` is measured on).
        detail: `granted`/`refused` for a vote answer, the error for a failed EndQuorumEpoch,
            else None.
    """

    kind: str
    node: int
    epoch: int
    wall_s: float
    mono_s: float
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "node": self.node, "epoch": self.epoch,
                "wall_s": round(self.wall_s, 6), "mono_s": round(self.mono_s, 6),
                "detail": self.detail}


@dataclass(frozen=True, slots=True)
class HandoverResult:
    """How leadership passed to a real controller.

    Attributes:
        new_leader: the node that announced itself (BeginQuorumEpoch), or -1 if none did.
        new_epoch: its epoch.
        elapsed_ms: from sending EndQuorumEpoch to its BeginQuorumEpoch reaching the stand-in.
        events: every EndQuorumEpoch, Vote and BeginQuorumEpoch of the handover, in order.
        fetches_answered: Fetch requests answered from resigning to the new leader's
            BeginQuorumEpoch (each one the voters and observers sent us in that time).
    """

    new_leader: int
    new_epoch: int
    elapsed_ms: float
    events: tuple[HandoverEvent, ...] = ()
    fetches_answered: int = 0


class HandoverHost(Protocol):
    """What `Handover` uses of the server: its part of `writers.raft.server.StandInHost`."""

    node_id: int
    cluster_id: str
    raft: RaftLeader
    local_log: LocalLog
    peers: Peers
    serving: ServerLoop
    clock: Callable[[], float]  # monotonic, milliseconds
    wall_clock: Callable[[], float]  # wall time, seconds (`HandoverEvent.wall_s`)


class Handover:
    """Resigning and the record of it.

    Args:
        host: the stand-in whose loop, peers and Raft state it uses.
    """

    def __init__(self, host: HandoverHost) -> None:
        self._host = host
        self._raft, self._index, self._peers = host.raft, host.local_log.index, host.peers
        self.future: asyncio.Future[tuple[int, int, float]] | None = None
        self.trace: list[HandoverEvent] | None = None  # recording from resign() on
        self.resigned_fetches = 0  # Fetches answered while waiting for the new leader

    def event(self, kind: str, node: int, epoch: int, detail: str | None = None) -> None:
        """Record one handover message (only once `resign()` started); stamped on the wall
        clock too, to line up with the controllers' own log lines."""
        if self.trace is not None:
            self.trace.append(HandoverEvent(kind, node, epoch, self._host.wall_clock(),
                                            self._host.clock() / 1000.0, detail))

    def pending(self) -> bool:
        """Resigned, and no new leader announced itself yet."""
        return self.future is not None and not self.future.done()

    def announced(self, leader: int, epoch: int, at_ms: float) -> None:
        """A new leader's BeginQuorumEpoch arrived: `resign()` returns."""
        if self.pending():
            assert self.future is not None
            self.future.set_result((leader, epoch, at_ms))

    async def resign(self, preferred: Sequence[int] | None, timeout_s: float) -> HandoverResult:
        """See `StandInLeader.resign` (on the loop)."""
        # one hop onto the loop: under load each cross-thread hand-off costs milliseconds
        self.trace = []
        # connections first, so that EndQuorumEpoch is written to every voter in one go
        ids = list(self._raft.replicas)
        opened = await asyncio.gather(
            *(asyncio.wait_for(self._peers.open(n), 2.0) for n in ids), return_exceptions=True)
        conns = {n: c for n, c in zip(ids, opened, strict=True)
                 if not isinstance(c, BaseException)}
        # committed means a majority, so at least one follower is at the end already; the
        # others are not waited for (hundreds of ms: docs/benchmarks.md) but kept from standing
        # (`RaftLeader.serves_lagging`) and left out of EndQuorumEpoch
        at_end = [n for n, r in self._raft.replicas.items() if r.end_offset >= self._index.end]
        if not at_end:  # only when resigning with nothing committed at the end
            await self._await_all_followers(min(5.0, timeout_s))
            at_end = [n for n, r in self._raft.replicas.items()
                      if r.end_offset >= self._index.end]
        behind = {n: r.end_offset for n, r in sorted(self._raft.replicas.items())
                  if n not in at_end}
        self.event("followers_at_end", -1, self._raft.epoch,
                   None if not behind else f"behind, served without EndQuorumEpoch: "
                   f"{behind} (log end {self._index.end})")
        order = list(preferred) if preferred is not None else sorted(at_end)
        try:
            return await self._end_epoch_and_wait(order, timeout_s, conns)
        finally:
            for _, w in conns.values():
                w.close()

    async def _await_all_followers(self, timeout_s: float) -> dict[int, int]:
        """Before resigning, let every follower reach the log's end (at most `timeout_s`).

        Kafka 3.9's Raft has no pre-vote: a follower still a few records behind that stands
        for election first is refused, comes back one epoch higher and unseats the leader just
        elected, and the quorum then waits a whole election timeout (seen with real 3.9.1 under
        load, a handover of about a second became minutes: docs/benchmarks.md). Committed by a
        majority is not enough here.

        Returns:
            The followers still behind when it gave up (empty: all at the log's end)."""
        deadline_ms = self._host.clock() + timeout_s * 1000.0
        while any(r.end_offset < self._index.end for r in self._raft.replicas.values()):
            if self._host.clock() > deadline_ms:
                log.warning("stand-in %d resigns with followers behind: %s (log end %d)",
                            self._host.node_id, self._raft.follower_ends(), self._index.end)
                return {n: e for n, e in self._raft.follower_ends().items() if e < self._index.end}
            await asyncio.sleep(0.002)
        return {}

    async def _end_epoch_and_wait(
        self, order: list[int], timeout_s: float,
        conns: Mapping[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]],
    ) -> HandoverResult:
        self.future = self._host.serving.loop.create_future()
        if self.trace is None:
            self.trace = []
        self._raft.resign()
        body = {"clusterId": self._host.cluster_id, "topics": [{
            "topicName": METADATA_TOPIC, "partitions": [{
                "partitionIndex": 0, "leaderId": self._host.node_id,
                "leaderEpoch": self._raft.epoch, "preferredSuccessors": order}]}]}
        epoch0 = self._raft.epoch

        def sent_to(n: int) -> Callable[[], None]:
            return lambda: self.event("end_quorum_epoch_sent", n, epoch0)

        # written here, before anything else runs on the loop (one iteration of a loaded loop
        # costs tens of ms: docs/benchmarks.md); the long-polling Fetches are woken after it
        for n in order:
            if n in conns:
                self._peers.send(conns[n][1], 54, 0, 3, body, sent_to(n))
        self._host.serving.notify()

        async def end_epoch(n: int) -> None:
            try:
                if n in conns:
                    ans = await asyncio.wait_for(self._peers.receive(*conns[n], 54, 0), 2.0)
                else:  # its connection failed a moment ago: one more try
                    ans = await self._peers.rpc(n, 54, 0, body, 2.0, on_sent=sent_to(n))
            except Exception as exc:  # recorded, not fatal: the others may still take over
                self.event("end_quorum_epoch_answered", n, epoch0,
                           f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
                return
            code = ans.get("errorCode", NONE)
            if code == NONE and ans.get("topics"):
                code = ans["topics"][0]["partitions"][0].get("errorCode", NONE)
            self.event("end_quorum_epoch_answered", n, epoch0,
                       None if code == NONE else f"error {code}")

        start = self._host.clock()
        await asyncio.gather(*(end_epoch(n) for n in order if n in self._raft.replicas))
        try:
            leader, epoch, at = await asyncio.wait_for(asyncio.shield(self.future), timeout_s)
        except TimeoutError:
            return HandoverResult(-1, self._raft.epoch, self._host.clock() - start,
                                  tuple(self.trace), self.resigned_fetches)
        log.info("stand-in %d resigned; %d leads epoch %d after %.1f ms", self._host.node_id,
                 leader, epoch, at - start)
        return HandoverResult(leader, epoch, at - start, tuple(self.trace),
                              self.resigned_fetches)
