"""BrokerRegistration and BrokerHeartbeat at the stand-in: the registry's decisions
(`writers.raft.brokers`, pure) appended, committed and then answered, and stale sessions fenced.

Kafka's active controller answers a registration or heartbeat once its records are committed;
`BrokerDesk` does the same on the stand-in's loop, through the server's append and its
high watermark, seen through `DeskHost` (`writers.raft.server.StandInLeader`'s public seam).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from writers._mv import MetadataVersion
from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.log.log_dir import EncodedBatch
from writers.raft.brokers import BrokerRegistry, Outcome
from writers.raft.commits import Commits
from writers.raft.errors import NOT_CONTROLLER, REQUEST_TIMED_OUT
from writers.raft.leader import RaftLeader
from writers.raft.local_log import LocalLog
from writers.raft.serving import ServerLoop

__all__ = ["BrokerDesk", "DeskHost"]

log = logging.getLogger(__name__)


class DeskHost(Protocol):
    """What `BrokerDesk` uses of the server: its part of `writers.raft.server.StandInHost`."""

    node_id: int
    cluster_id: str
    commit_timeout_s: float
    raft: RaftLeader
    local_log: LocalLog
    serving: ServerLoop
    commits: Commits
    clock: Callable[[], float]  # monotonic, milliseconds
    wall_clock: Callable[[], float]  # wall time, seconds (record timestamps)

    def read_log(self) -> Iterator[RecordBatch]: ...

    def encode(self, records: Sequence[MetadataRecord | ControlRecord],
                timestamp_ms: int) -> list[EncodedBatch]: ...


class BrokerDesk:
    """The brokers' side of the stand-in (on its loop, but `take_own_records`).

    Args:
        host: the stand-in whose log and loop it uses.
    """

    def __init__(self, host: DeskHost) -> None:
        self._host = host
        self.registry: BrokerRegistry | None = None  # set by start (loop thread only)
        self._own_records: list[MetadataRecord] = []  # appended by the stand-in itself
        self._own_lock = threading.Lock()

    async def start(self, mv: MetadataVersion, kraft_version: int,
                    session_timeout_ms: float) -> None:
        """Judge against the registrations already in the log, then serve (see
        `StandInLeader.serve_brokers`)."""
        host = self._host
        registry = BrokerRegistry(host.cluster_id, mv, kraft_version=kraft_version,
                                  session_timeout_ms=session_timeout_ms)
        for batch in host.read_log():
            for i, rec in enumerate(batch.records):
                if isinstance(rec, MetadataRecord):
                    registry.replayed(rec, batch.base_offset + i)
        registry.activate(host.clock())
        started = self.registry is not None  # a resumed run's second call: one loop
        self.registry = registry
        if not started:
            host.serving.spawn(self._fence_stale_brokers())

    async def _fence_stale_brokers(self) -> None:
        """While leading, fence each broker whose session timed out (`BrokerRegistry.
        fence_stale`), committed like a heartbeat's change; checked when the next session
        would expire, and at least every 250 ms (a heartbeat may have moved it)."""
        while self._host.raft.is_leader():
            assert self.registry is not None
            outcome = self.registry.fence_stale(self._host.clock())
            if outcome.records:
                log.info("stand-in %d: fencing broker %s, its session timed out",
                         self._host.node_id, outcome.records[0].data["brokerId"])
                try:
                    await self._apply_outcome(outcome)
                except Exception:  # the log cannot be appended to: the run's own appends fail too
                    log.exception("stand-in %d: fencing a broker failed", self._host.node_id)
                    return
                continue
            due = self.registry.next_expiry_ms()
            now = self._host.clock()
            wait_ms = 250.0 if due is None else min(250.0, max(due - now, 0.0) + 1.0)
            await asyncio.sleep(wait_ms / 1000.0)

    async def register(self, body: dict[str, Any]) -> dict[str, Any]:
        """BrokerRegistration: decided by the registry, answered once committed."""
        not_now = self._refusal({"throttleTimeMs": 0, "brokerEpoch": -1})
        if not_now is not None:
            return not_now
        assert self.registry is not None
        return await self._apply_outcome(self.registry.register(body, self._host.clock()))

    async def heartbeat(self, body: dict[str, Any]) -> dict[str, Any]:
        """BrokerHeartbeat: decided by the registry, answered once committed."""
        not_now = self._refusal({"throttleTimeMs": 0, "isCaughtUp": False,
                                 "isFenced": True, "shouldShutDown": False})
        if not_now is not None:
            return not_now
        assert self.registry is not None
        return await self._apply_outcome(self.registry.heartbeat(body, self._host.clock()))

    def _refusal(self, fields: dict[str, Any]) -> dict[str, Any] | None:
        return self._host.raft.refuse_broker_rpc(fields, serving=self.registry is not None)

    async def _apply_outcome(self, outcome: Outcome) -> dict[str, Any]:
        """Append the outcome's records, wait until they are committed, then answer (Kafka
        answers a controller write once it is committed)."""
        answer = dict(outcome.answer)
        if not outcome.records:
            return answer
        assert self.registry is not None
        records = list(outcome.records)
        if outcome.epoch_is_offset:  # a new incarnation: epoch = the offset its record gets
            reg = records[0]
            records[0] = MetadataRecord(reg.type, reg.version,
                                        {**reg.data, "brokerEpoch": self._host.local_log.index.end})
            answer["brokerEpoch"] = self._host.local_log.index.end
        batches = self._host.encode(records, int(self._host.wall_clock() * 1000))  # on the loop
        self._host.commits.append_now(batches)
        for i, rec in enumerate(records):
            self.registry.replayed(rec, batches[0].base_offset + i)
        with self._own_lock:
            self._own_records.extend(records)
        deadline_ms = self._host.clock() + self._host.commit_timeout_s * 1000.0
        while self._host.raft.hw <= batches[-1].last_offset:
            if not self._host.raft.is_leader():
                return {**answer, "errorCode": NOT_CONTROLLER}
            wait = (deadline_ms - self._host.clock()) / 1000.0
            if wait <= 0:
                return {**answer, "errorCode": REQUEST_TIMED_OUT}
            try:
                await asyncio.wait_for(asyncio.shield(self._host.serving.changed), min(wait, 0.5))
            except TimeoutError:
                pass
        return answer

    def writer_appended(self, records: Sequence[MetadataRecord | ControlRecord],
                        base_offset: int) -> None:
        """The single writer's `records` were appended from `base_offset` (on the loop): the
        registry, once serving, judges against them too."""
        if self.registry is None:
            return
        offset = base_offset
        for rec in records:
            if isinstance(rec, MetadataRecord):
                self.registry.replayed(rec, offset)
            offset += 1

    def take_own_records(self) -> list[MetadataRecord]:
        """See `StandInLeader.take_own_records`."""
        with self._own_lock:
            out, self._own_records = self._own_records, []
        return out

    def registrations(self, now_ms: float) -> dict[int, tuple[int, bool]]:
        """See `StandInLeader.broker_registrations` (on the loop)."""
        reg = self.registry
        return {} if reg is None else {n: (b.epoch, reg.live(n, now_ms))
                                      for n, b in sorted(reg.brokers.items())}

    def fenced_in_session(self, now_ms: float) -> set[int]:
        """The brokers heard from whose registration stays fenced (on the loop)."""
        reg = self.registry
        return set() if reg is None else {n for n in reg.brokers
                                          if reg.fenced_in_session(n, now_ms)}
