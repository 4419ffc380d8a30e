"""zk2kraft as a stand-in Raft voter: it leads real KRaft controllers through Kafka's own RPCs.

Why: a real deployment's controllers run on their own hosts and volumes, which the tool cannot
write. Instead zk2kraft takes one voter id of the static quorum (`controller.quorum.voters`),
wins the first election, and the running controllers follow it: they fetch the log it appends
and write it to their own disks. At cutover it resigns with EndQuorumEpoch and an ordinary
Raft election hands leadership to a warm real controller (docs/design.md, "The stand-in voter").

What it does, following Kafka 3.9's `KafkaRaftClient`/`LeaderState` (facts, not code):

* **Election.** On a fresh log it is a candidate at epoch 1 (the log's last epoch + 1), votes for
  itself and sends Vote v0 to every voter until a majority granted. Controllers must start with
  a long `controller.quorum.election.timeout.ms`, so that none of them becomes a candidate first
  (a real controller that wins writes its bootstrap records). Then it appends a LeaderChange
  control record (the start of its epoch) and sends BeginQuorumEpoch v0 to every voter that has
  not fetched yet, every `begin_retry_s`.
* **Fetch v17** for `__cluster_metadata`-0: whole batches from FetchOffset, capped by MaxBytes
  (followers send PartitionMaxBytes 0); when there is nothing to send it waits up to MaxWaitMs,
  answering early when the log grows or the high watermark moves. A follower's FetchOffset is
  its flushed end (voters flush before fetching), so the high watermark is the end offset of
  the (n/2)-th voter by descending end, the stand-in's own fsync'd end included, and only once
  it passes the epoch's start offset. A follower whose last fetched epoch disagrees with this
  log gets DivergingEpoch. Every answer carries the tagged CurrentLeader.
* **Durable = committed.** `append_*` writes and fsyncs the batches into the stand-in's own
  `metadata.log.dir` (the existing `VoterDir`), then returns once the high watermark passed
  them, i.e. a majority, real controllers' disks included, holds them.
* **ControllerRegistration** gets REQUEST_TIMED_OUT while it leads (the controller retries) and
  NOT_CONTROLLER after it resigned (so the controller re-resolves the leader and registers with
  the real one).
* **BrokerRegistration and BrokerHeartbeat** from migrating ZooKeeper-mode brokers, once
  `serve_brokers` was called (after the bootstrap): decided as Kafka's active controller does
  (`writers._standin_brokers`), their records appended and committed before the answer, the
  broker epoch being the offset of the broker's RegisterBrokerRecord. Before `serve_brokers`
  REQUEST_TIMED_OUT (the broker retries), after resigning NOT_CONTROLLER (it moves to the next
  leader with the epoch it has, which that leader's log holds). The records it appends itself
  are handed to the single writer by `take_own_records`, so its image knows them. A broker
  silent for longer than `broker.session.timeout.ms` is fenced, as Kafka's controller does.
* **Check-quorum.** `majority_writable` is Kafka's leader rule: a majority, the stand-in
  included, fetched within 1.5 x the controllers' `controller.quorum.fetch.timeout.ms`.
* **Resign.** `resign()` sends EndQuorumEpoch v0 to the followers at the log's end (at least
  one, since the end is committed), naming them as preferred successors, and returns once a
  real controller announced itself with BeginQuorumEpoch at a higher epoch. A follower still
  behind gets no EndQuorumEpoch (Kafka 3.9 has no pre-vote: one that stands with a shorter log
  is refused and unseats the new leader one epoch higher) and is still served the records it
  lacks until a later epoch is known, so its fetch timer never makes it stand. Afterwards it
  grants votes to candidates whose log is at least as long as its own, and answers Fetch as
  Kafka's voters do (FENCED_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER, naming the leader it knows).

TLS: with `tls_server`/`tls_client` the listener and the outbound connections speak TLS, as a
controller listener mapped to SSL does. SASL: with `sasl_users`/`sasl_client`, SASL/PLAIN
(SaslHandshake v1 + SaslAuthenticate) on both sides, as a SASL_PLAINTEXT or SASL_SSL controller
listener with PLAIN does. Not implemented: SCRAM, GSSAPI and OAUTHBEARER; snapshots
(FetchSnapshot); follower mode (the stand-in never truncates its own log).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from writers._mv import MetadataVersion
from writers._quorum_log import AppendResult, VoterStatus
from writers._standin_brokers import BrokerRegistry, Outcome
from writers._standin_errors import (
    FENCED_LEADER_EPOCH,
    NONE,
    NOT_CONTROLLER,
    NOT_LEADER_OR_FOLLOWER,
    REQUEST_TIMED_OUT,
    SASL_AUTHENTICATION_FAILED,
    UNKNOWN_LEADER_EPOCH,
    UNSUPPORTED_SASL_MECHANISM,
    UNSUPPORTED_VERSION,
)
from writers._standin_log import LogIndex, restamp_batch
from writers.codec.batch import batch_records
from writers.codec.protocol import (
    UnsupportedApiError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.errors import (
    QuorumLedElsewhereError,
    VoterStateError,
    VoterUnavailableError,
    WriterError,
)
from writers.log.log_dir import EncodedBatch, VoterDir
from writers.log.reader import METADATA_TOPIC_ID, open_log_source

__all__ = ["HandoverEvent", "HandoverResult", "StandInLeader", "heard_from_majority"]

log = logging.getLogger(__name__)

METADATA_TOPIC = "__cluster_metadata"

# What the stand-in advertises in ApiVersions; a controller then sends exactly these versions.
ADVERTISED: Mapping[int, tuple[int, int]] = {
    1: (17, 17),   # Fetch
    18: (0, 4),    # ApiVersions
    52: (0, 0),    # Vote
    53: (0, 0),    # BeginQuorumEpoch
    54: (0, 0),    # EndQuorumEpoch
    62: (0, 4),    # BrokerRegistration (3.9.1 brokers send v4)
    63: (0, 1),    # BrokerHeartbeat
    70: (0, 0),    # ControllerRegistration
}


CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
"""Kafka's `LeaderState`: a leader that has not had a Fetch from a majority of its voters
within 1.5 x `controller.quorum.fetch.timeout.ms` resigns (check-quorum)."""


def heard_from_majority(now_ms: float, last_fetches_ms: Sequence[float], voters: int,
                        fetch_timeout_ms: float) -> bool:
    """Whether the followers that fetched within Kafka's check-quorum time, with the leader
    itself, are a majority of `voters` (docs/design.md, "The gate follows check-quorum").

    Kafka resets its check-quorum timer each time a majority has fetched since the last reset;
    counting each follower's latest Fetch in a window of the same length is the same rule for
    three voters and slightly stricter for more. Past that time the followers' own fetch timers
    (1 x the timeout) have run out too, and they stand for election without the leader."""
    window = fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR
    heard = sum(1 for t in last_fetches_ms if now_ms - t <= window)
    return 1 + heard >= voters // 2 + 1


@dataclass(frozen=True, slots=True)
class HandoverEvent:
    """One message of the handover, stamped on both clocks as it happened.

    The wall-clock time (`time.time()`) lets the run line these up with the new leader's own
    log lines (`CandidateState`, `Leader`); the monotonic one with the run's other stamps.

    Attributes:
        kind: `followers_at_end` (every follower fetched up to the log's end, node -1;
            `detail` names those still behind if it gave up), `end_quorum_epoch_sent` (written
            to the voter's socket),
            `end_quorum_epoch_answered` (its response read, or the error), `vote_received` (a
            candidate's Vote request decoded), `vote_answered` (our answer about to be
            written), `begin_quorum_epoch_received` (a new leader's BeginQuorumEpoch decoded,
            before the stand-in writes its quorum-state).
        node: the voter the message went to or came from.
        epoch: the epoch it carried (ours for EndQuorumEpoch, the candidate's or leader's else).
        wall_s: `time.time()` when it happened.
        mono_s: `time.monotonic()` when it happened.
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


@dataclass
class _Conn:
    """One inbound connection's SASL state."""

    authenticated: bool
    closing: bool = False


@dataclass
class _Replica:
    """What the leader knows of one voter (Kafka's `LeaderState.ReplicaState`)."""

    node_id: int
    end_offset: int = -1  # flushed end (next offset it needs); -1 = not fetched this epoch
    last_fetch_ms: float = 0.0
    hw_sent: int = -1


class StandInLeader:
    """A `QuorumLog` whose voters are real KRaft controllers, led through Kafka's Raft RPCs.

    Args:
        node_id: the voter id the stand-in takes (its entry in `controller.quorum.voters`).
        listen: (host, port) of its controller listener (that entry's address).
        voters: every voter's id -> (host, port), the stand-in's own included.
        log_dir: the stand-in's `metadata.log.dir` (its log is persisted there).
        cluster_id: the cluster id every controller was formatted with.
        commit_timeout_s: how long an append waits for a majority to commit before
            `VoterUnavailableError`.
        fetch_timeout_ms: the controllers' `controller.quorum.fetch.timeout.ms` (Kafka's
            default 2000): `majority_writable` uses Kafka's check-quorum time, 1.5 x this.
        broker_session_timeout_ms: the controllers' `broker.session.timeout.ms` (Kafka's
            default 9000): a broker silent for longer is fenced (`serve_brokers`).
        clock: milliseconds, for the handover measure.
        tls_server: the listener's TLS context when the controller listener's security protocol
            is SSL (its certificate must be valid for the voter entry's host; require client
            certificates in it when the controllers set `ssl.client.auth=required`).
        tls_client: the TLS context the stand-in connects to the other voters with (trusting
            their certificates; with a client certificate for `ssl.client.auth=required`).
        sasl_users: user -> password accepted with SASL/PLAIN when the controller listener is
            SASL_PLAINTEXT or SASL_SSL (the `user_NAME="…"` entries of the listener's
            PlainLoginModule); None = no SASL.
        sasl_client: (user, password) the stand-in logs in with to the other voters (the
            module's `username`/`password`).

    Raises:
        VoterStateError: `node_id` is not among `voters`, or the log dir belongs elsewhere.
        VoterUnavailableError: the log dir or the listener cannot be opened.
    """

    def __init__(
        self,
        node_id: int,
        *,
        listen: tuple[str, int],
        voters: Mapping[int, tuple[str, int]],
        log_dir: Path,
        cluster_id: str,
        commit_timeout_s: float = 60.0,
        fetch_timeout_ms: float = 2000.0,
        broker_session_timeout_ms: float = 9000.0,
        begin_retry_s: float = 0.5,
        clock: Callable[[], float] = lambda: time.monotonic() * 1000.0,
        tls_server: ssl.SSLContext | None = None,
        tls_client: ssl.SSLContext | None = None,
        sasl_users: Mapping[str, str] | None = None,
        sasl_client: tuple[str, str] | None = None,
    ) -> None:
        if node_id not in voters:
            raise VoterStateError(
                f"stand-in id {node_id} is not one of the voters {sorted(voters)}")
        self.node_id = node_id
        self.listen = listen
        self.voters = dict(voters)
        self.cluster_id = cluster_id
        self.commit_timeout_s = commit_timeout_s
        self.fetch_timeout_ms = fetch_timeout_ms
        self.broker_session_timeout_ms = broker_session_timeout_ms
        self.begin_retry_s = begin_retry_s
        self._clock = clock
        self._tls_server = tls_server
        self._tls_client = tls_client
        self._sasl_users = dict(sasl_users) if sasl_users is not None else None
        self._sasl_client = sasl_client
        self._dir = VoterDir(Path(log_dir), node_id=node_id, cluster_id=cluster_id)
        self._index = LogIndex()
        for b in self._dir.batches_from(0):
            self._index.add(b)
        self._epoch = self._index.last_epoch()
        self._leading = False
        self._resigned = False
        self._voted_for: int = -1
        self._new_leader = -1  # the real controller leading `_epoch` after the handover
        self._led_epoch = -1  # the epoch the stand-in led (it resigns from it)
        self._state_lock: asyncio.Lock | None = None  # quorum-state writes, in order (loop)
        self._epoch_start = 0
        self._hw = 0
        self._replicas = {n: _Replica(n) for n in voters if n != node_id}
        self._lock = threading.Condition()
        self._handover: asyncio.Future[tuple[int, int, float]] | None = None
        self._trace: list[HandoverEvent] | None = None  # recording from resign() on
        self._resigned_fetches = 0
        self._loop = asyncio.new_event_loop()
        self._changed: asyncio.Future[None] = self._loop.create_future()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name=f"zk2kraft-standin-{node_id}", daemon=True)
        self._tasks: list[asyncio.Task[Any]] = []
        self._conns: set[asyncio.StreamWriter] = set()
        self.requests_served: dict[str, int] = {}
        self._brokers: BrokerRegistry | None = None  # set by serve_brokers (loop thread only)
        self._own_records: list[MetadataRecord] = []  # appended by the stand-in itself
        self._own_lock = threading.Lock()
        try:
            self._call(self._start_server(), 10.0)
        except BaseException:
            self._dir.close()
            raise

    # -- plumbing between the caller's thread and the loop ---------------------------------------

    def _call(self, coro: Any, timeout: float) -> Any:
        if not self._thread.is_alive():
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _start_server(self) -> None:
        host, port = self.listen
        try:
            self._server = await asyncio.start_server(self._serve, host, port,
                                                      ssl=self._tls_server)
        except OSError as exc:
            raise VoterUnavailableError(
                f"stand-in {self.node_id}: cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from exc

    def _notify(self) -> None:
        """Wake every long-polling Fetch (called on the loop)."""
        fut, self._changed = self._changed, self._loop.create_future()
        fut.set_result(None)

    async def _persist_state(self, **state: Any) -> None:
        """Write quorum-state off the loop (its fsyncs cost tens of ms under load: docs/
        benchmarks.md), one write at a time and in the order the state changed; the caller
        answers after it."""
        if self._state_lock is None:
            self._state_lock = asyncio.Lock()
        async with self._state_lock:
            await asyncio.to_thread(self._dir.write_quorum_state, **state)

    def _event(self, kind: str, node: int, epoch: int, detail: str | None = None) -> None:
        """Record one handover message (only once `resign()` started)."""
        if self._trace is not None:
            self._trace.append(HandoverEvent(kind, node, epoch, time.time(), time.monotonic(),
                                             detail))

    # -- election ------------------------------------------------------------------------------

    def elect(self, timeout_s: float = 120.0, *, rejoin: bool = False) -> int:
        """Become leader: Vote at the next epoch until a majority granted, then start the epoch.

        Args:
            timeout_s: how long to keep asking.
            rejoin: the stand-in led this quorum before and was restarted (a re-run after a
                crash). Voters that still follow its previous incarnation refuse until their
                `controller.quorum.fetch.timeout.ms` runs out, and voters that became
                candidates meanwhile sit at a higher epoch: both are waited out (the next vote
                goes one epoch above the highest seen), as a Raft candidate does. A voter that
                names another leader still ends the election.

        Returns:
            The epoch it leads.

        Raises:
            QuorumLedElsewhereError: a voter follows another leader (a real controller won; the
                stand-in must not lead over a log that moved on without it).
            VoterStateError: not `rejoin`, and a voter already knows a higher epoch or the
                stand-in as leader (a controller started an election before the stand-in).
            VoterUnavailableError: no majority granted within `timeout_s`.
        """
        epoch = self._call(self._elect(timeout_s, rejoin), timeout_s + 10)
        with self._lock:
            self._lock.notify_all()
        return int(epoch)

    async def _elect(self, timeout_s: float, rejoin: bool = False) -> int:
        ids = sorted(self.voters)
        self._stand_for(max(self._epoch, self._index.last_epoch()) + 1)
        granted = {self.node_id}
        majority = len(self.voters) // 2 + 1
        deadline = time.monotonic() + timeout_s
        last_epoch, end = self._index.last_epoch(), self._index.end
        while len(granted) < majority:
            if time.monotonic() > deadline:
                raise VoterUnavailableError(
                    f"stand-in {self.node_id}: only {sorted(granted)} granted the vote for epoch "
                    f"{self._epoch} within {timeout_s:.0f}s (a majority of {majority} is needed)")
            body = {"clusterId": self.cluster_id, "topics": [{
                "topicName": METADATA_TOPIC, "partitions": [{
                    "partitionIndex": 0, "candidateEpoch": self._epoch,
                    "candidateId": self.node_id, "lastOffsetEpoch": last_epoch,
                    "lastOffset": end}]}]}
            pending = [n for n in self._replicas if n not in granted]
            answers = await asyncio.gather(
                *(self._rpc(n, 52, 0, body, 1.0) for n in pending), return_exceptions=True)
            for n, ans in zip(pending, answers, strict=True):
                if isinstance(ans, BaseException):
                    continue
                part = ans["topics"][0]["partitions"][0] if ans["topics"] else {}
                leader, their_epoch = part.get("leaderId", -1), part.get("leaderEpoch", 0)
                if part.get("voteGranted"):
                    granted.add(n)
                elif rejoin and leader >= 0 and leader != self.node_id:
                    raise QuorumLedElsewhereError(
                        f"voter {n} refused the vote: it follows controller {leader} at epoch "
                        f"{their_epoch}", voter_id=n, leader_id=leader, leader_epoch=their_epoch)
                elif rejoin:
                    if their_epoch >= self._epoch:  # a candidate (or our old epoch) moved on
                        granted = {self.node_id}
                        self._stand_for(their_epoch + 1)
                        break
                elif their_epoch > self._epoch or leader >= 0:
                    raise VoterStateError(
                        f"voter {n} refused the vote: it is at epoch {part.get('leaderEpoch')} "
                        f"with leader {part.get('leaderId')}; a controller led before the "
                        "stand-in (start controllers with a long "
                        "controller.quorum.election.timeout.ms so the stand-in wins first)")
            if len(granted) < majority:
                await asyncio.sleep(0.2)
        # leader: the epoch starts with a LeaderChange record
        self._leading = True
        self._led_epoch = self._epoch
        self._dir.write_quorum_state(leader_epoch=self._epoch, voters=ids,
                                     leader_id=self.node_id, voted_id=self.node_id)
        leader_change = ControlRecord("LEADER_CHANGE", {
            "version": 0, "leaderId": self.node_id,
            "voters": [{"voterId": v} for v in ids],
            "grantingVoters": [{"voterId": v} for v in sorted(granted)]})
        self._epoch_start = self._index.end
        self._append_now(self._encode([leader_change], int(time.time() * 1000)))
        self._tasks.append(self._loop.create_task(self._begin_epoch_loop()))
        log.info("stand-in %d leads epoch %d (votes from %s)", self.node_id, self._epoch,
                 sorted(granted))
        return self._epoch

    def _stand_for(self, epoch: int) -> None:
        """Candidate at `epoch`: vote for itself, durably (quorum-state) before asking."""
        self._epoch = epoch
        self._voted_for = self.node_id
        self._dir.write_quorum_state(leader_epoch=epoch, voters=sorted(self.voters),
                                     voted_id=self.node_id)

    async def _begin_epoch_loop(self) -> None:
        """BeginQuorumEpoch to every voter that has not fetched in this epoch, until all have."""
        body = {"clusterId": self.cluster_id, "topics": [{
            "topicName": METADATA_TOPIC, "partitions": [{
                "partitionIndex": 0, "leaderId": self.node_id, "leaderEpoch": self._epoch}]}]}
        while self._leading:
            waiting = [n for n, r in self._replicas.items() if r.end_offset < 0]
            if not waiting:
                return
            await asyncio.gather(*(self._rpc(n, 53, 0, body, 1.0) for n in waiting),
                                 return_exceptions=True)
            await asyncio.sleep(self.begin_retry_s)

    # -- outbound RPCs -------------------------------------------------------------------------

    async def _rpc(
        self, node: int, api_key: int, version: int, body: Mapping[str, Any], timeout: float,
        on_sent: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """One request on a fresh connection to a voter (rare: votes, epoch changes);
        `on_sent` runs once the request itself (not a SASL step) is written."""

        async def go() -> dict[str, Any]:
            reader, writer = await self._open(node)
            try:
                return await self._exchange(reader, writer, api_key, version, 3, body, on_sent)
            finally:
                writer.close()

        return await asyncio.wait_for(go(), timeout)

    async def _open(self, node: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to a voter, logged in when the listener wants SASL/PLAIN."""
        host, port = self.voters[node]
        reader, writer = await asyncio.open_connection(
            host, port, ssl=self._tls_client,
            server_hostname=host if self._tls_client is not None else None)
        try:
            if self._sasl_client is not None:  # SASL/PLAIN, as Kafka's client does it
                user, password = self._sasl_client
                shake = await self._exchange(reader, writer, 17, 1, 1, {"mechanism": "PLAIN"})
                auth = await self._exchange(reader, writer, 36, 2, 2, {
                    "authBytes": b"\0" + user.encode() + b"\0" + password.encode()})
                if shake["errorCode"] != NONE or auth["errorCode"] != NONE:
                    raise VoterUnavailableError(
                        f"voter {node} refused the stand-in's SASL/PLAIN login as {user!r}: "
                        f"{auth.get('errorMessage') or shake['errorCode']}")
        except BaseException:
            writer.close()
            raise
        return reader, writer

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: int, ver: int,
        corr: int, data: Mapping[str, Any], sent: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """One request and its response; `sent` runs as soon as the request is handed to the
        socket (before any await: a busy loop must not make the stamp late)."""
        self._send(writer, key, ver, corr, data, sent)
        return await self._receive(reader, writer, key, ver)

    def _send(self, writer: asyncio.StreamWriter, key: int, ver: int, corr: int,
              data: Mapping[str, Any], sent: Callable[[], None] | None = None) -> None:
        writer.write(encode_request(key, ver, corr, f"zk2kraft-standin-{self.node_id}", data))
        if sent is not None:
            sent()

    async def _receive(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       key: int, ver: int) -> dict[str, Any]:
        await writer.drain()
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        return decode_response(key, ver, await reader.readexactly(size))[1]

    # -- serving -------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._conns.add(writer)
        conn = _Conn(authenticated=self._sasl_users is None)
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
            log.exception("stand-in %d: closing a connection after an error", self.node_id)
        finally:
            self._conns.discard(writer)
            writer.close()

    async def _answer(self, payload: bytes, conn: _Conn) -> bytes:
        try:
            req = decode_request(payload)
        except UnsupportedApiError as exc:
            if exc.api_key == 18 and exc.correlation_id is not None:  # newer ApiVersions
                return encode_response(18, 0, exc.correlation_id, {
                    "errorCode": UNSUPPORTED_VERSION, "apiKeys": self._api_keys()})
            raise
        self.requests_served[req.api] = self.requests_served.get(req.api, 0) + 1
        if req.api_key in (17, 36):
            body = self._sasl_step(req.api_key, req.body, conn)
            return encode_response(req.api_key, req.api_version, req.correlation_id, body)
        if not conn.authenticated and req.api_key != 18:
            raise WriterError(f"{req.api} before SASL authentication")
        handler = {1: self._fetch, 18: self._api_versions, 52: self._vote,
                   53: self._begin_epoch, 54: self._end_epoch,
                   62: self._broker_registration, 63: self._broker_heartbeat,
                   70: self._controller_registration}.get(req.api_key)
        if handler is None:
            raise WriterError(f"stand-in cannot answer {req.api}")
        body = await handler(req.body)
        return encode_response(req.api_key, req.api_version, req.correlation_id, body)

    def _sasl_step(self, api_key: int, body: dict[str, Any], conn: _Conn) -> dict[str, Any]:
        """SaslHandshake v1 and SaslAuthenticate for PLAIN (`authzid NUL user NUL password`)."""
        if api_key == 17:
            ok = body["mechanism"] == "PLAIN" and self._sasl_users is not None
            return {"errorCode": NONE if ok else UNSUPPORTED_SASL_MECHANISM,
                    "mechanisms": ["PLAIN"] if self._sasl_users is not None else []}
        parts = bytes(body["authBytes"]).split(b"\0")
        users = self._sasl_users or {}
        if len(parts) == 3 and users.get(parts[1].decode("utf-8", "replace")) == parts[2].decode(
                "utf-8", "replace"):
            conn.authenticated = True
            return {"errorCode": NONE, "errorMessage": None, "authBytes": b""}
        conn.closing = True  # Kafka closes the connection after a failed authentication
        log.warning("stand-in %d: SASL/PLAIN authentication failed", self.node_id)
        return {"errorCode": SASL_AUTHENTICATION_FAILED,
                "errorMessage": "Authentication failed: Invalid username or password",
                "authBytes": b""}

    def _api_keys(self) -> list[dict[str, int]]:
        advertised = dict(ADVERTISED)
        if self._sasl_users is not None:
            advertised.update({17: (1, 1), 36: (0, 2)})
        return [{"apiKey": k, "minVersion": lo, "maxVersion": hi}
                for k, (lo, hi) in sorted(advertised.items())]

    async def _api_versions(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"errorCode": NONE, "apiKeys": self._api_keys()}

    def _leader_id(self) -> int:
        """The leader of `_epoch` as far as the stand-in knows (-1: none known), as Kafka's
        voters put it in every Raft answer."""
        if self._leading or (self._resigned and self._epoch == self._led_epoch):
            return self.node_id  # resigned, nothing newer known: Kafka's ResignedState says so
        return self._new_leader

    async def _vote(self, body: dict[str, Any]) -> dict[str, Any]:
        part = body["topics"][0]["partitions"][0]
        epoch, candidate = part["candidateEpoch"], part["candidateId"]
        self._event("vote_received", candidate, epoch)
        granted = False
        if epoch == self._epoch and not self._leading and self._new_leader < 0:
            # the same candidate asking again in the epoch we voted in (its answer was lost):
            # granted again, as Kafka's voted state does; anyone else is refused
            granted = self._voted_for == candidate
            if granted and self._state_lock is not None:
                async with self._state_lock:  # the first grant's write may still be running
                    pass
        elif epoch > self._epoch and not self._leading:
            ours = (self._index.last_epoch(), self._index.end)
            theirs = (part["lastOffsetEpoch"], part["lastOffset"])
            granted = theirs >= ours
            if granted:  # the state first, so a second candidate of this epoch is refused
                self._epoch, self._voted_for, self._new_leader = epoch, candidate, -1
                await self._persist_state(leader_epoch=epoch, voters=sorted(self.voters),
                                          voted_id=candidate)
        log.info("stand-in %d: vote for %d at epoch %d %s", self.node_id, candidate, epoch,
                 "granted" if granted else "refused")
        self._event("vote_answered", candidate, epoch, "granted" if granted else "refused")
        return self._raft_answer(NONE, vote_granted=granted)

    def _raft_answer(self, error: int, *, vote_granted: bool | None = None) -> dict[str, Any]:
        part: dict[str, Any] = {"partitionIndex": 0, "errorCode": error,
                                "leaderId": self._leader_id(), "leaderEpoch": self._epoch}
        if vote_granted is not None:
            part["voteGranted"] = vote_granted
        return {"errorCode": NONE, "topics": [{"topicName": METADATA_TOPIC,
                                               "partitions": [part]}]}

    async def _begin_epoch(self, body: dict[str, Any]) -> dict[str, Any]:
        part = body["topics"][0]["partitions"][0]
        leader, epoch = part["leaderId"], part["leaderEpoch"]
        self._event("begin_quorum_epoch_received", leader, epoch)
        if epoch < self._epoch:  # a stale announcement (Kafka: `validateVoterOnlyRequest`)
            return self._raft_answer(FENCED_LEADER_EPOCH)
        if epoch > self._epoch or (not self._leading and leader != self.node_id):
            self._leading = False
            self._epoch = max(self._epoch, epoch)
            self._new_leader = leader
            # the new leader is known now: resign() returns while our own quorum-state is
            # written off the loop (durable before this answer goes out, as Kafka's)
            if self._handover is not None and not self._handover.done():
                self._handover.set_result((leader, epoch, self._clock()))
            self._notify()
            await self._persist_state(leader_epoch=self._epoch, voters=sorted(self.voters),
                                      leader_id=leader, voted_id=self._voted_for)
        answer = self._raft_answer(NONE)
        answer["topics"][0]["partitions"][0]["leaderId"] = leader
        return answer

    async def _end_epoch(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._raft_answer(NONE)

    async def _controller_registration(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._leading:  # the controller retries until a real leader takes it
            return {"errorCode": REQUEST_TIMED_OUT,
                    "errorMessage": "zk2kraft's stand-in leader does not register controllers"}
        return {"errorCode": NOT_CONTROLLER, "errorMessage": None}

    # -- brokers (BrokerRegistration, BrokerHeartbeat) -----------------------------------------

    def serve_brokers(self, mv: MetadataVersion, *, kraft_version: int = 0,
                      session_timeout_ms: float | None = None) -> None:
        """Start taking the brokers' registrations and heartbeats (call once the bootstrap
        is committed, so their records follow it as they follow Kafka's activation).

        The registrations already in the log (the pre-copy's, copied from ZooKeeper, or a
        resumed run's) are read first: Kafka's controller judges against what it replayed."""
        async def start() -> None:
            registry = BrokerRegistry(
                self.cluster_id, mv, kraft_version=kraft_version,
                session_timeout_ms=session_timeout_ms or self.broker_session_timeout_ms)
            for batch in self.read_log():
                for i, rec in enumerate(batch.records):
                    if isinstance(rec, MetadataRecord):
                        registry.replayed(rec, batch.base_offset + i)
            registry.activate(self._clock())
            started = self._brokers is not None  # a resumed run's second call: one loop
            self._brokers = registry
            if not started:
                self._tasks.append(self._loop.create_task(self._fence_stale_brokers()))

        self._call(start(), 60.0)

    async def _fence_stale_brokers(self) -> None:
        """While leading, fence each broker whose session timed out (`BrokerRegistry.
        fence_stale`), committed like a heartbeat's change; checked when the next session
        would expire, and at least every 250 ms (a heartbeat may have moved it)."""
        while self._leading and not self._resigned:
            assert self._brokers is not None
            outcome = self._brokers.fence_stale(self._clock())
            if outcome.records:
                log.info("stand-in %d: fencing broker %s, its session timed out",
                         self.node_id, outcome.records[0].data["brokerId"])
                try:
                    await self._apply_outcome(outcome)
                except Exception:  # the log cannot be appended to: the run's own appends fail too
                    log.exception("stand-in %d: fencing a broker failed", self.node_id)
                    return
                continue
            due = self._brokers.next_expiry_ms()
            wait_ms = 250.0 if due is None else min(250.0, max(due - self._clock(), 0.0) + 1.0)
            await asyncio.sleep(wait_ms / 1000.0)

    def take_own_records(self) -> list[MetadataRecord]:
        """The records the stand-in appended on its own (broker registrations and fencing
        changes) since the last call, in log order, for the single writer's image."""
        with self._own_lock:
            out, self._own_records = self._own_records, []
        return out

    def describe_quorum(self, node: int, timeout_s: float = 5.0
                        ) -> tuple[int, dict[int, int]]:
        """DescribeQuorum v1 to voter `node`, as `kafka-metadata-quorum describe` sends it: the
        leader it names and, when `node` leads, each observer's LastFetchTimestamp (the leader's
        clock, ms). ZooKeeper-mode brokers in migration mode are the quorum's observers.

        Raises:
            VoterUnavailableError: `node` did not answer, or answered with an error.
        """
        body = {"topics": [{"topicName": METADATA_TOPIC, "partitions": [{"partitionIndex": 0}]}]}
        try:
            ans = self._call(self._rpc(node, 55, 1, body, timeout_s), timeout_s + 5)
        except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
            raise VoterUnavailableError(
                f"voter {node} did not answer DescribeQuorum: {type(exc).__name__}: {exc}"
            ) from None
        part = ans["topics"][0]["partitions"][0] if ans.get("topics") else {}
        error = part.get("errorCode", ans.get("errorCode", NONE))
        if ans.get("errorCode", NONE) != NONE or error != NONE:
            if part.get("leaderId", -1) >= 0:
                return int(part["leaderId"]), {}  # NOT_LEADER_OR_FOLLOWER names the leader
            raise VoterUnavailableError(f"voter {node} answered DescribeQuorum with error "
                                        f"{error}")
        return int(part["leaderId"]), {int(o["replicaId"]): int(o["lastFetchTimestamp"])
                                       for o in part.get("observers", [])}

    def broker_registrations(self) -> dict[int, tuple[int, bool]]:
        """broker id -> (broker epoch, live) as the stand-in's log holds them; live = unfenced
        and heard from within the session timeout (Kafka's `hasValidSession`), so the old
        incarnation of a broker that restarted stops counting."""
        async def read() -> dict[int, tuple[int, bool]]:
            reg = self._brokers
            now = self._clock()
            return {} if reg is None else {n: (b.epoch, reg.live(n, now))
                                          for n, b in sorted(reg.brokers.items())}
        return self._call(read(), 10.0)  # type: ignore[no-any-return]

    async def _broker_registration(self, body: dict[str, Any]) -> dict[str, Any]:
        not_now = self._not_serving_brokers({"throttleTimeMs": 0, "brokerEpoch": -1})
        if not_now is not None:
            return not_now
        assert self._brokers is not None
        return await self._apply_outcome(self._brokers.register(body, self._clock()))

    async def _broker_heartbeat(self, body: dict[str, Any]) -> dict[str, Any]:
        not_now = self._not_serving_brokers({"throttleTimeMs": 0, "isCaughtUp": False,
                                             "isFenced": True, "shouldShutDown": False})
        if not_now is not None:
            return not_now
        assert self._brokers is not None
        return await self._apply_outcome(self._brokers.heartbeat(body, self._clock()))

    def _not_serving_brokers(self, fields: dict[str, Any]) -> dict[str, Any] | None:
        if self._resigned or not self._leading:
            return {**fields, "errorCode": NOT_CONTROLLER}
        if self._brokers is None:  # the bootstrap is not committed yet: the broker retries
            return {**fields, "errorCode": REQUEST_TIMED_OUT}
        return None

    async def _apply_outcome(self, outcome: Outcome) -> dict[str, Any]:
        """Append the outcome's records, wait until they are committed, then answer (Kafka
        answers a controller write once it is committed)."""
        answer = dict(outcome.answer)
        if not outcome.records:
            return answer
        assert self._brokers is not None
        records = list(outcome.records)
        if outcome.epoch_is_offset:  # a new incarnation: epoch = the offset its record gets
            reg = records[0]
            records[0] = MetadataRecord(reg.type, reg.version,
                                        {**reg.data, "brokerEpoch": self._index.end})
            answer["brokerEpoch"] = self._index.end
        batches = self._encode(records, int(time.time() * 1000))  # on the loop: no race
        self._append_now(batches)
        for i, rec in enumerate(records):
            self._brokers.replayed(rec, batches[0].base_offset + i)
        with self._own_lock:
            self._own_records.extend(records)
        deadline = time.monotonic() + self.commit_timeout_s
        while self._hw <= batches[-1].last_offset:
            if self._resigned or not self._leading:
                return {**answer, "errorCode": NOT_CONTROLLER}
            wait = deadline - time.monotonic()
            if wait <= 0:
                return {**answer, "errorCode": REQUEST_TIMED_OUT}
            try:
                await asyncio.wait_for(asyncio.shield(self._changed), min(wait, 0.5))
            except TimeoutError:
                pass
        return answer

    async def _fetch(self, body: dict[str, Any]) -> dict[str, Any]:
        replica_id = body["replicaState"]["replicaId"]
        topic = body["topics"][0] if body["topics"] else None
        if topic is None or topic["topicId"] != METADATA_TOPIC_ID or not topic["partitions"]:
            return {"errorCode": NONE, "responses": []}
        part = topic["partitions"][0]
        offset, last_epoch = part["fetchOffset"], part["lastFetchedEpoch"]
        max_bytes = body["maxBytes"] if body["maxBytes"] > 0 else 1 << 20
        deadline = time.monotonic() + body["maxWaitMs"] / 1000.0
        replica = self._replicas.get(replica_id)
        while True:
            if self._resigned and self._serves_lagging(replica, part):
                pass  # records it lacks, answered at once (the loop below does not wait)
            elif not self._leading or self._resigned:
                wait = deadline - time.monotonic()
                if (replica is None and self._resigned and self._new_leader < 0
                        and wait > 0):
                    # an observer (a broker) takes no part in the election: its Fetch waits
                    # for the new leader (or its MaxWait) instead of coming back at once,
                    # over and over (hundreds in one handover: docs/benchmarks.md), and then
                    # names it
                    try:
                        await asyncio.wait_for(asyncio.shield(self._changed), wait)
                    except TimeoutError:
                        pass
                    continue
                if self._handover is not None and not self._handover.done():
                    self._resigned_fetches += 1
                # As a Kafka voter answers a Fetch it does not lead (`validateLeaderOnlyRequest`):
                # an older epoch is fenced, and the answer names the leader it knows, so a
                # broker (a Raft observer, which gets no BeginQuorumEpoch) follows the new
                # leader at once instead of after its fetch timeout.
                stale = part["currentLeaderEpoch"] < self._epoch
                return self._fetch_answer(FENCED_LEADER_EPOCH if stale
                                          else NOT_LEADER_OR_FOLLOWER, -1, b"")
            if part["currentLeaderEpoch"] < self._epoch:
                return self._fetch_answer(FENCED_LEADER_EPOCH, -1, b"")
            if part["currentLeaderEpoch"] > self._epoch:
                return self._fetch_answer(UNKNOWN_LEADER_EPOCH, -1, b"")
            epoch_found, epoch_end = self._index.end_for_epoch(last_epoch)
            if offset > 0 and (epoch_found != last_epoch or epoch_end < offset):
                answer = self._fetch_answer(NONE, self._known_hw(), b"")
                answer["responses"][0]["partitions"][0]["divergingEpoch"] = {
                    "epoch": epoch_found, "endOffset": epoch_end}
                return answer
            if replica is not None:
                # every fetch counts as a sign of life, not only one that moved the offset: an
                # idle follower long-polls at its end and would look gone to the check-quorum gate
                replica.last_fetch_ms = self._clock()
                if offset > replica.end_offset:
                    replica.end_offset = offset
                    self._advance_hw()
            records = self._index.read(offset, max_bytes)
            if records or (replica is not None and replica.hw_sent != self._hw):
                break
            wait = deadline - time.monotonic()
            if wait <= 0:
                break
            try:
                await asyncio.wait_for(asyncio.shield(self._changed), wait)
            except TimeoutError:
                break
        if replica is not None:
            replica.hw_sent = self._hw
        return self._fetch_answer(NONE, self._known_hw(), records)

    def _serves_lagging(self, replica: _Replica | None, part: Mapping[str, Any]) -> bool:
        """After resigning, a voter that did not reach the log's end still gets the records it
        lacks, as long as no later epoch is known (no vote granted, no new leader): it gets no
        EndQuorumEpoch (one behind that stands is refused, then unseats the new leader one
        epoch higher: Kafka 3.9 has no pre-vote), and answered it keeps its fetch timer from
        running out, so it never stands on its own; the new leader's Vote request moves it on."""
        return (replica is not None and self._epoch == self._led_epoch
                and part["currentLeaderEpoch"] == self._epoch
                and part["fetchOffset"] < self._index.end)

    def _fetch_answer(self, error: int, hw: int, records: bytes) -> dict[str, Any]:
        return {"errorCode": NONE, "responses": [{"topicId": METADATA_TOPIC_ID, "partitions": [{
            "partitionIndex": 0, "errorCode": error, "highWatermark": hw,
            "logStartOffset": 0, "currentLeader": {"leaderId": self._leader_id(),
                                                   "leaderEpoch": self._epoch},
            "records": records}]}]}

    def _known_hw(self) -> int:
        """The high watermark a Fetch answer carries: -1 (unknown) until this epoch committed
        its start, as Kafka's leader answers. A restarted stand-in begins at 0 while its
        followers already know the previous epoch's; a lower value kills their raft thread
        ("Non-monotonic update of high watermark", real 3.9.1)."""
        return self._hw if self._hw > self._epoch_start else -1

    def _advance_hw(self) -> None:
        """High watermark: the end offset a majority reached, once past the epoch start."""
        ends = sorted([self._index.end] + [r.end_offset for r in self._replicas.values()],
                      reverse=True)
        candidate = ends[len(self.voters) // 2]
        if candidate > self._epoch_start and candidate > self._hw:
            self._hw = candidate
            with self._lock:
                self._lock.notify_all()
            self._notify()

    # -- appending (QuorumLog) -------------------------------------------------------------------

    def _encode(
        self, records: Sequence[MetadataRecord | ControlRecord], timestamp_ms: int
    ) -> list[EncodedBatch]:
        pairs = batch_records(records, base_offset=self._index.end, leader_epoch=self._epoch,
                              timestamp_ms=timestamp_ms)
        return [EncodedBatch(b.base_offset, b.last_offset, b.leader_epoch, d) for b, d in pairs]

    def _append_now(self, batches: Sequence[EncodedBatch]) -> None:
        """Persist and index batches (on the loop thread), then wake the fetchers."""
        for b in batches:
            self._dir.append(b)
            self._index.add(b)
        self._advance_hw()
        self._notify()

    @property
    def leader_epoch(self) -> int:
        """See `QuorumLog`."""
        return self._epoch

    @property
    def next_offset(self) -> int:
        """See `QuorumLog`."""
        return self._index.end

    @property
    def last_offset(self) -> int:
        """See `QuorumLog`."""
        return self._index.end - 1

    @property
    def durable_offset(self) -> int:
        """See `QuorumLog`: the last committed offset (high watermark - 1)."""
        return self._hw - 1

    @property
    def high_watermark(self) -> int:
        """The quorum's high watermark (first offset not yet committed)."""
        return self._hw

    @property
    def majority_writable(self) -> bool:
        """See `QuorumLog`: leading, and a majority heard from within Kafka's check-quorum
        time (`heard_from_majority`)."""
        return self._leading and not self._resigned and heard_from_majority(
            self._clock(), [r.last_fetch_ms for r in self._replicas.values()
                            if r.end_offset >= 0], len(self.voters), self.fetch_timeout_ms)

    def append_records(
        self, records: Sequence[MetadataRecord | ControlRecord], *, timestamp_ms: int
    ) -> AppendResult:
        """See `QuorumLog`: framed at `next_offset` in the stand-in's epoch; returns once
        committed."""
        self._require_leader()
        if not records:
            return AppendResult(self.next_offset, self.next_offset - 1, 0)
        # encoded on the caller's thread (the single writer), so the loop keeps serving fetches
        batches = self._encode(records, timestamp_ms)

        async def append() -> list[EncodedBatch]:
            out = list(batches)
            shift = self._index.end - batches[0].base_offset
            if shift:  # the stand-in appended a broker's records meanwhile: move behind them
                out = [restamp_batch(b.data, b.base_offset + shift, self._epoch)
                       for b in batches]
            self._append_now(out)
            if self._brokers is not None:
                offset = out[0].base_offset
                for rec in records:
                    if isinstance(rec, MetadataRecord):
                        self._brokers.replayed(rec, offset)
                    offset += 1
            return out

        done = self._call(append(), 60.0)
        return self._await_commit(done)

    def append_batches(self, batches: Sequence[EncodedBatch]) -> AppendResult:
        """See `QuorumLog`: batches must start at `next_offset` and be contiguous. Each batch's
        bytes are re-stamped with its `base_offset` and the stand-in's epoch (a migrated
        segment written from offset 0 moves behind the LeaderChange that opens the epoch).
        Returns once committed.

        Raises:
            VoterStateError: not leading, or the batches do not start at `next_offset`.
            VoterUnavailableError: no majority committed them within `commit_timeout_s`.
        """
        self._require_leader()
        if not batches:
            return AppendResult(self.next_offset, self.next_offset - 1, 0)

        async def append() -> list[EncodedBatch]:
            expected = self._index.end
            out = []
            for b in batches:
                if b.base_offset != expected:
                    raise VoterStateError(
                        f"batch starts at offset {b.base_offset} but the stand-in's log ends "
                        f"at {expected}: batches must be appended in order without gaps")
                stamped = restamp_batch(b.data, b.base_offset, self._epoch)
                if stamped.last_offset != b.last_offset:
                    raise VoterStateError(
                        f"batch at offset {b.base_offset} holds offsets up to "
                        f"{stamped.last_offset}, not {b.last_offset}")
                out.append(stamped)
                expected = b.last_offset + 1
            self._append_now(out)
            return out

        done = self._call(append(), 60.0)
        return self._await_commit(done)

    def _require_leader(self) -> None:
        if not self._leading or self._resigned:
            raise VoterStateError(f"stand-in {self.node_id} is not the leader "
                                  f"(epoch {self._epoch}); elect() first, or it resigned")

    def _await_commit(self, batches: Sequence[EncodedBatch]) -> AppendResult:
        self.wait_committed(batches[-1].last_offset)
        return AppendResult(batches[0].base_offset, batches[-1].last_offset, len(batches))

    def wait_committed(self, offset: int, timeout_s: float | None = None) -> None:
        """Block until `offset` is committed (high watermark past it).

        Raises:
            VoterUnavailableError: not within `timeout_s` (default `commit_timeout_s`).
        """
        timeout_s = timeout_s or self.commit_timeout_s
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._hw <= offset:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VoterUnavailableError(
                        f"stand-in {self.node_id}: offset {offset} not committed by a majority "
                        f"within {timeout_s:.0f}s (high watermark {self._hw}; "
                        f"followers at {self._follower_ends()})")
                self._lock.wait(min(left, 0.5))

    def _follower_ends(self) -> dict[int, int]:
        return {n: r.end_offset for n, r in sorted(self._replicas.items())}

    def voter_status(self) -> list[VoterStatus]:
        """See `QuorumLog`: the stand-in itself and each follower's fetched end."""
        out = [VoterStatus(self.node_id, "ok" if self._leading else "resigned", self._index.end)]
        for n, r in sorted(self._replicas.items()):
            state = "ok" if r.end_offset >= 0 else "not fetching"
            out.append(VoterStatus(n, state, r.end_offset if r.end_offset >= 0 else None))
        return out

    def read_log(self) -> Iterator[RecordBatch]:
        """See `QuorumLog`: the batches of the stand-in's own log (its LeaderChange included)."""
        for entry in open_log_source(self._dir.path).entries():
            yield entry.batch

    # -- handover ------------------------------------------------------------------------------

    def resign(
        self, *, preferred: Sequence[int] | None = None, timeout_s: float = 30.0
    ) -> HandoverResult:
        """Resign with EndQuorumEpoch and wait for a real controller to announce itself.

        Args:
            preferred: preferred successors, first = most wanted, each sent EndQuorumEpoch
                (default: the followers at the log's end).
            timeout_s: how long to wait for the new leader's BeginQuorumEpoch.

        Returns:
            Who leads now, at which epoch, and how long it took (new_leader -1 on timeout).
        """
        self._require_leader()

        async def wait_then_resign() -> HandoverResult:
            # one hop onto the loop: under load each cross-thread hand-off costs milliseconds
            self._trace = []
            # connections first, so that EndQuorumEpoch is written to every voter in one go
            ids = list(self._replicas)
            opened = await asyncio.gather(
                *(asyncio.wait_for(self._open(n), 2.0) for n in ids), return_exceptions=True)
            conns = {n: c for n, c in zip(ids, opened, strict=True)
                     if not isinstance(c, BaseException)}
            # committed means a majority, so at least one follower is at the end already; the
            # others are not waited for (hundreds of ms: docs/benchmarks.md) but kept from standing
            # (`_serves_lagging`) and left out of EndQuorumEpoch
            at_end = [n for n, r in self._replicas.items() if r.end_offset >= self._index.end]
            if not at_end:  # only when resigning with nothing committed at the end
                await self._await_all_followers(min(5.0, timeout_s))
                at_end = [n for n, r in self._replicas.items()
                          if r.end_offset >= self._index.end]
            behind = {n: r.end_offset for n, r in sorted(self._replicas.items())
                      if n not in at_end}
            self._event("followers_at_end", -1, self._epoch,
                        None if not behind else f"behind, served without EndQuorumEpoch: "
                        f"{behind} (log end {self._index.end})")
            order = list(preferred) if preferred is not None else sorted(at_end)
            try:
                return await self._resign(order, timeout_s, conns)
            finally:
                for _, w in conns.values():
                    w.close()

        return self._call(wait_then_resign(), timeout_s + 15)  # type: ignore[no-any-return]

    async def _await_all_followers(self, timeout_s: float) -> dict[int, int]:
        """Before resigning, let every follower reach the log's end (at most `timeout_s`).

        Kafka 3.9's Raft has no pre-vote: a follower still a few records behind that stands
        for election first is refused, comes back one epoch higher and unseats the leader just
        elected, and the quorum then waits a whole election timeout (seen with real 3.9.1 under
        load, a handover of about a second became minutes: docs/benchmarks.md). Committed by a
        majority is not enough here.

        Returns:
            The followers still behind when it gave up (empty: all at the log's end)."""
        deadline = time.monotonic() + timeout_s
        while any(r.end_offset < self._index.end for r in self._replicas.values()):
            if time.monotonic() > deadline:
                log.warning("stand-in %d resigns with followers behind: %s (log end %d)",
                            self.node_id, self._follower_ends(), self._index.end)
                return {n: e for n, e in self._follower_ends().items() if e < self._index.end}
            await asyncio.sleep(0.002)
        return {}

    async def _resign(
        self, order: list[int], timeout_s: float,
        conns: Mapping[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]],
    ) -> HandoverResult:
        self._handover = self._loop.create_future()
        if self._trace is None:
            self._trace = []
        self._resigned = True
        self._leading = False
        body = {"clusterId": self.cluster_id, "topics": [{
            "topicName": METADATA_TOPIC, "partitions": [{
                "partitionIndex": 0, "leaderId": self.node_id, "leaderEpoch": self._epoch,
                "preferredSuccessors": order}]}]}
        epoch0 = self._epoch

        def sent_to(n: int) -> Callable[[], None]:
            return lambda: self._event("end_quorum_epoch_sent", n, epoch0)

        # written here, before anything else runs on the loop (one iteration of a loaded loop
        # costs tens of ms: docs/benchmarks.md); the long-polling Fetches are woken after it
        for n in order:
            if n in conns:
                self._send(conns[n][1], 54, 0, 3, body, sent_to(n))
        self._notify()

        async def end_epoch(n: int) -> None:
            try:
                if n in conns:
                    ans = await asyncio.wait_for(self._receive(*conns[n], 54, 0), 2.0)
                else:  # its connection failed a moment ago: one more try
                    ans = await self._rpc(n, 54, 0, body, 2.0, on_sent=sent_to(n))
            except Exception as exc:  # recorded, not fatal: the others may still take over
                self._event("end_quorum_epoch_answered", n, epoch0,
                            f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
                return
            code = ans.get("errorCode", NONE)
            if code == NONE and ans.get("topics"):
                code = ans["topics"][0]["partitions"][0].get("errorCode", NONE)
            self._event("end_quorum_epoch_answered", n, epoch0,
                        None if code == NONE else f"error {code}")

        start = self._clock()
        await asyncio.gather(*(end_epoch(n) for n in order if n in self._replicas))
        try:
            leader, epoch, at = await asyncio.wait_for(asyncio.shield(self._handover), timeout_s)
        except TimeoutError:
            return HandoverResult(-1, self._epoch, self._clock() - start, tuple(self._trace),
                                  self._resigned_fetches)
        log.info("stand-in %d resigned; %d leads epoch %d after %.1f ms", self.node_id, leader,
                 epoch, at - start)
        return HandoverResult(leader, epoch, at - start, tuple(self._trace),
                              self._resigned_fetches)

    def close(self) -> None:
        """Stop serving and release the log directory (its `.lock`)."""
        async def stop() -> None:
            for t in self._tasks:
                t.cancel()
            if self._server is not None:
                self._server.close()
            for w in list(self._conns):
                w.close()
            current = asyncio.current_task()
            others = [t for t in asyncio.all_tasks() if t is not current]
            for t in others:
                t.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        if self._thread.is_alive():
            try:
                self._call(stop(), 10.0)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(10)
        self._dir.close()

    def __enter__(self) -> StandInLeader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
