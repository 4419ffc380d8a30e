"""The stand-in's listener: each request read, decided, answered on its connection.

`Inbound` frames requests and answers, runs SASL/PLAIN, and hands each Raft request to the
state machine (`writers.raft.leader.RaftLeader`), then does what its decision says (persist
quorum-state, wake fetchers, long-poll a Fetch) before answering; broker RPCs go to
`writers.raft.broker_desk.BrokerDesk`. It sees the server through `InboundHost`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
from collections.abc import Callable
from typing import Any, Protocol

from writers.codec.protocol import UnsupportedApiError, decode_request, encode_response
from writers.errors import WriterError
from writers.log.reader import METADATA_TOPIC_ID
from writers.raft.broker_desk import BrokerDesk
from writers.raft.commits import Commits
from writers.raft.errors import NONE, UNSUPPORTED_VERSION
from writers.raft.handover import Handover
from writers.raft.leader import RaftLeader
from writers.raft.local_log import LocalLog
from writers.raft.serving import ServerLoop
from writers.raft.wire import Conn, api_keys, sasl_step

__all__ = ["Inbound", "InboundHost"]

log = logging.getLogger(__name__)


class InboundHost(Protocol):
    """What `Inbound` uses of the server: its part of `writers.raft.server.StandInHost`."""

    node_id: int
    requests_served: dict[str, int]
    sasl_users: dict[str, str] | None
    raft: RaftLeader
    local_log: LocalLog
    serving: ServerLoop
    handover: Handover
    desk: BrokerDesk
    commits: Commits
    clock: Callable[[], float]  # monotonic, milliseconds


class Inbound:
    """Serving the stand-in's listener.

    Args:
        host: the stand-in whose state machine, log and loop it uses.
    """

    def __init__(self, host: InboundHost) -> None:
        self._host = host
        self._raft, self._index = host.raft, host.raft.index  # the log the state machine reads
        self._handover, self._desk = host.handover, host.desk

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._host.serving.conns.add(writer)
        conn = Conn(authenticated=self._host.sasl_users is None)
        try:
            while not conn.closing:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                payload = await reader.readexactly(size)
                writer.write(await self._answer(payload, conn))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError,
                asyncio.CancelledError):
            pass  # the peer went away, or close() is stopping the server
        except Exception:  # a bug or a malformed request: log it, drop this connection only
            log.exception("stand-in %d: closing a connection after an error", self._host.node_id)
        finally:
            self._host.serving.conns.discard(writer)
            writer.close()

    async def _answer(self, payload: bytes, conn: Conn) -> bytes:
        try:
            req = decode_request(payload)
        except UnsupportedApiError as exc:
            if exc.api_key == 18 and exc.correlation_id is not None:  # newer ApiVersions
                keys = api_keys(self._host.sasl_users is not None)
                return encode_response(18, 0, exc.correlation_id, {
                    "errorCode": UNSUPPORTED_VERSION, "apiKeys": keys})
            raise
        self._host.requests_served[req.api] = self._host.requests_served.get(req.api, 0) + 1
        if req.api_key in (17, 36):
            body = sasl_step(req.api_key, req.body, conn, self._host.sasl_users,
                             self._host.node_id)
            return encode_response(req.api_key, req.api_version, req.correlation_id, body)
        if not conn.authenticated and req.api_key != 18:
            raise WriterError(f"{req.api} before SASL authentication")
        handler = {1: self._fetch, 18: self._api_versions, 52: self._vote,
                   53: self._begin_epoch, 54: self._end_epoch,
                   62: self._desk.register, 63: self._desk.heartbeat,
                   70: self._controller_registration}.get(req.api_key)
        if handler is None:
            raise WriterError(f"stand-in cannot answer {req.api}")
        body = await handler(req.body)
        return encode_response(req.api_key, req.api_version, req.correlation_id, body)

    async def _api_versions(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"errorCode": NONE, "apiKeys": api_keys(self._host.sasl_users is not None)}

    async def _vote(self, body: dict[str, Any]) -> dict[str, Any]:
        part = body["topics"][0]["partitions"][0] if body.get("topics") else {}
        epoch, candidate = part.get("candidateEpoch", -1), part.get("candidateId", -1)
        self._handover.event("vote_received", candidate, epoch)
        decision = self._raft.on_vote(body)
        if decision.wait_for_persist and self._host.local_log.state_lock is not None:
            # the first grant's write may still be running
            async with self._host.local_log.state_lock:
                pass
        if decision.persist:
            await self._host.local_log.persist_state(leader_epoch=epoch, voters=self._raft.voters,
                                                voted_id=candidate)
        log.info("stand-in %d: vote for %d at epoch %d %s", self._host.node_id, candidate, epoch,
                 "granted" if decision.granted else "refused")
        self._handover.event("vote_answered", candidate, epoch,
                             "granted" if decision.granted else "refused")
        return self._raft.vote_answer(decision)

    async def _begin_epoch(self, body: dict[str, Any]) -> dict[str, Any]:
        part = body["topics"][0]["partitions"][0] if body.get("topics") else {}
        self._handover.event("begin_quorum_epoch_received", part.get("leaderId", -1),
                             part.get("leaderEpoch", -1))
        decision = self._raft.on_begin_epoch(body)
        if decision.persist:
            leader = self._raft.new_leader
            # the new leader is known now: resign() returns while our own quorum-state is
            # written off the loop (durable before this answer goes out, as Kafka's)
            self._handover.announced(leader, part["leaderEpoch"], self._host.clock())
            self._host.serving.notify()
            await self._host.local_log.persist_state(leader_epoch=self._raft.epoch,
                                                voters=self._raft.voters, leader_id=leader,
                                                voted_id=self._raft.voted_for)
        return self._raft.begin_epoch_answer(decision)

    async def _end_epoch(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._raft.on_end_epoch(body)

    async def _controller_registration(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._raft.on_controller_registration()

    async def _fetch(self, body: dict[str, Any]) -> dict[str, Any]:
        invalid = self._raft.fetch_invalid(body)
        if invalid is not None:
            return invalid
        replica_id = body["replicaState"]["replicaId"]
        topic = body["topics"][0] if body["topics"] else None
        if topic is None or topic["topicId"] != METADATA_TOPIC_ID or not topic["partitions"]:
            return {"errorCode": NONE, "responses": []}
        part = topic["partitions"][0]
        max_bytes = body["maxBytes"] if body["maxBytes"] > 0 else 1 << 20
        deadline_ms = self._host.clock() + body["maxWaitMs"]
        while True:
            now_ms = self._host.clock()
            step = self._raft.fetch_step(
                replica_id, part, now_ms, can_wait=deadline_ms - now_ms > 0,
                handover_pending=self._handover.pending())
            if step.wait_for_leader:
                try:
                    await asyncio.wait_for(asyncio.shield(self._host.serving.changed),
                                           (deadline_ms - self._host.clock()) / 1000.0)
                except TimeoutError:
                    pass
                continue
            if step.during_handover:
                self._handover.resigned_fetches += 1
            if step.answer is not None:
                return step.answer
            if step.hw_moved:
                self._host.commits.hw_moved()
            records = self._index.read(part["fetchOffset"], max_bytes)
            if records or self._raft.has_news(replica_id):
                break
            wait = (deadline_ms - self._host.clock()) / 1000.0
            if wait <= 0:
                break
            try:
                await asyncio.wait_for(asyncio.shield(self._host.serving.changed), wait)
            except TimeoutError:
                break
        self._raft.sent_hw(replica_id)
        return self._raft.fetch_answer(NONE, self._raft.known_hw(), records)
