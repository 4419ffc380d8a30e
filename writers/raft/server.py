"""zk2kraft as a stand-in Raft voter: it leads real KRaft controllers through Kafka's own RPCs.

Why: a real deployment's controllers run on their own hosts and volumes, which the tool cannot
write. Instead zk2kraft takes one voter id of the static quorum (`controller.quorum.voters`),
wins the first election, and the running controllers follow it: they fetch the log it appends
and write it to their own disks. At cutover it resigns with EndQuorumEpoch and an ordinary
Raft election hands leadership to a warm real controller (docs/design/standin.md).

What it does, following Kafka 3.9's `KafkaRaftClient`/`LeaderState` (facts, not code):

* **Election.** On a fresh log it is a candidate at epoch 1 (the log's last epoch + 1), votes for
  itself and sends Vote v0 to every voter until a majority granted. Controllers must start with
  a long `controller.quorum.election.timeout.ms`, so that none of them becomes a candidate first
  (a real controller that wins writes its bootstrap records). Then it appends a LeaderChange
  control record (the start of its epoch) and sends BeginQuorumEpoch v0 to every voter that has
  not fetched yet, every `begin_retry_s`.
* **Fetch v15-v17** (3.9 controllers and brokers send v17, brokers of 3.7/3.8 v16, of 3.5/3.6
  v15) for `__cluster_metadata`-0: whole batches from FetchOffset, capped by MaxBytes
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
  (`writers.raft.brokers`), their records appended and committed before the answer, the
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

This module is the thin server and the public `QuorumLog` API: the loop thread and listener
(`serving`), the log directory and index (`local_log`), the appends and their commit wait
(`commits`). The Raft rules are `writers.raft.leader`'s (pure); `inbound`, `election`,
`handover` and `broker_desk` carry them out on the loop (docs/design/standin.md, "Where it lives").
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from writers._mv import MetadataVersion
from writers._quorum_log import AppendResult, BrokerServing, VoterStatus
from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.errors import (
    VoterStateError,
    VoterUnavailableError,
)
from writers.log.log_dir import EncodedBatch
from writers.raft.broker_desk import BrokerDesk, DeskHost
from writers.raft.commits import Commits
from writers.raft.election import Election, ElectionHost
from writers.raft.handover import Handover, HandoverEvent, HandoverHost, HandoverResult
from writers.raft.inbound import Inbound, InboundHost
from writers.raft.leader import METADATA_TOPIC, RaftLeader
from writers.raft.local_log import LocalLog
from writers.raft.serving import ServerLoop
from writers.raft.wire import Peers, quorum_leader_and_observers

__all__ = ["HandoverEvent", "HandoverResult", "StandInHost", "StandInLeader"]

log = logging.getLogger(__name__)


class StandInHost(DeskHost, ElectionHost, HandoverHost, InboundHost, Protocol):
    """The server's seam: all its helpers use of it, public members only.

    Each helper types its host with its own part (`DeskHost`, `ElectionHost`, `HandoverHost`,
    `InboundHost`, declared next to the helper so that it imports nothing of the server);
    `StandInLeader` is the one implementation (checked where it builds them), and a test may
    hand a helper a fake with just the members of its part. The parts are the Raft state
    (`raft`), the log (`local_log`), the loop (`serving`), appends and commit waits
    (`commits`), the other voters (`peers`), the helpers the listener dispatches to
    (`handover`, `desk`), the settings, and the two clocks (`clock`, monotonic ms, for every
    deadline and stamp; `wall_clock`, seconds, for record timestamps)."""


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
        clock: milliseconds on a monotonic clock: the handover measure and its stamps
            (`mono_s`), check-quorum, broker sessions, and every wait's deadline (election,
            commit, Fetch long-poll, a broker RPC's commit).
        wall_clock: seconds on the wall clock (`time.time`): the timestamps of the records it
            appends itself (LeaderChange, broker registrations) and the handover's `wall_s`.
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
        wall_clock: Callable[[], float] = time.time,
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
        self.clock = clock
        self.wall_clock = wall_clock
        self._tls_server = tls_server
        self.sasl_users = dict(sasl_users) if sasl_users is not None else None
        self.peers = Peers(node_id, voters, tls_client=tls_client, sasl_client=sasl_client)
        self.local_log = LocalLog(Path(log_dir), node_id=node_id, cluster_id=cluster_id)
        self.raft = RaftLeader(node_id, list(voters), cluster_id, self.local_log.index,
                                fetch_timeout_ms=fetch_timeout_ms)
        self.serving = ServerLoop(f"zk2kraft-standin-{node_id}")
        self.commits = Commits(node_id, self.local_log, self.raft, self.serving, clock)
        self.requests_served: dict[str, int] = {}
        host: StandInHost = self  # the seam the helpers see (mypy checks it here)
        self.desk = BrokerDesk(host)
        self.handover = Handover(host)
        self._election = Election(host)
        self._inbound = Inbound(host)
        try:
            self.serving.call(self._start_server(), 10.0)
        except BaseException:
            self.local_log.close()
            raise

    async def _start_server(self) -> None:
        host, port = self.listen
        try:
            await self.serving.listen(self._inbound.serve, host, port, self._tls_server)
        except OSError as exc:
            raise VoterUnavailableError(
                f"stand-in {self.node_id}: cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from exc

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
                stand-in must not lead over a log that moved on without it), or, not `rejoin`,
                a voter already knows a higher epoch (a controller stood for election before
                the stand-in asked; `leader_id` -1 when none is known yet).
            VoterUnavailableError: no majority granted within `timeout_s`.
        """
        epoch = self.serving.call(self._election.run(timeout_s, rejoin), timeout_s + 10)
        self.commits.wake_committers()
        return int(epoch)

    # -- brokers (BrokerRegistration, BrokerHeartbeat) -----------------------------------------

    def serve_brokers(self, mv: MetadataVersion, *, kraft_version: int = 0,
                      session_timeout_ms: float | None = None) -> None:
        """Start taking the brokers' registrations and heartbeats (call once the bootstrap
        is committed, so their records follow it as they follow Kafka's activation).

        The registrations already in the log (the pre-copy's, copied from ZooKeeper, or a
        resumed run's) are read first: Kafka's controller judges against what it replayed."""
        self.serving.call(self.desk.start(
            mv, kraft_version, session_timeout_ms or self.broker_session_timeout_ms), 60.0)

    def take_own_records(self) -> list[MetadataRecord]:
        """The records the stand-in appended on its own (broker registrations and fencing
        changes) since the last call, in log order, for the single writer's image."""
        return self.desk.take_own_records()

    def broker_registrations(self) -> dict[int, tuple[int, bool]]:
        """broker id -> (broker epoch, live) as the stand-in's log holds them; live = unfenced
        and heard from within the session timeout (Kafka's `hasValidSession`), so the old
        incarnation of a broker that restarted stops counting."""
        async def read() -> dict[int, tuple[int, bool]]:
            return self.desk.registrations(self.clock())
        return self.serving.call(read(), 10.0)

    def brokers_serving(self) -> dict[int, BrokerServing]:
        """Every broker registered with the stand-in or fetching from it in its epoch (see
        `BrokerServing`): the cutover fences only over brokers that serve."""
        async def read() -> dict[int, BrokerServing]:
            now = self.clock()
            window = self.broker_session_timeout_ms
            registered = self.desk.registrations(now)
            fenced = self.desk.fenced_in_session(now)
            fetches = {n: (r.last_fetch_ms, r.end_offset)
                       for n, r in self.raft.observers.items()}
            end = self.local_log.index.end
            return {n: BrokerServing(
                        n, registered.get(n, (-1, False))[1],
                        n in fetches and now - fetches[n][0] <= window,
                        end - fetches[n][1] if n in fetches else None, n in fenced)
                    for n in sorted(set(registered) | set(fetches))}
        return self.serving.call(read(), 10.0)

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
            ans = self.serving.call(self.peers.rpc(node, 55, 1, body, timeout_s), timeout_s + 5)
        except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
            raise VoterUnavailableError(
                f"voter {node} did not answer DescribeQuorum: {type(exc).__name__}: {exc}"
            ) from None
        return quorum_leader_and_observers(node, ans)

    # -- appending (QuorumLog) -------------------------------------------------------------------

    def encode(
        self, records: Sequence[MetadataRecord | ControlRecord], timestamp_ms: int
    ) -> list[EncodedBatch]:
        """`records` framed in the current epoch (not yet appended; see `StandInHost`)."""
        return self.local_log.encode(records, epoch=self.raft.epoch, timestamp_ms=timestamp_ms)

    @property
    def leader_epoch(self) -> int:
        """See `QuorumLog`."""
        return self.raft.epoch

    @property
    def next_offset(self) -> int:
        """See `QuorumLog`."""
        return self.local_log.index.end

    @property
    def last_offset(self) -> int:
        """See `QuorumLog`."""
        return self.local_log.index.end - 1

    @property
    def durable_offset(self) -> int:
        """See `QuorumLog`: the last committed offset (high watermark - 1)."""
        return self.raft.hw - 1

    @property
    def high_watermark(self) -> int:
        """The quorum's high watermark (first offset not yet committed)."""
        return self.raft.hw

    @property
    def majority_writable(self) -> bool:
        """See `QuorumLog`: leading, and a majority heard from within Kafka's check-quorum
        time (`heard_from_majority`)."""
        return self.raft.check_quorum(self.clock())

    def append_records(
        self, records: Sequence[MetadataRecord | ControlRecord], *, timestamp_ms: int
    ) -> AppendResult:
        """See `QuorumLog`: framed at `next_offset` in the stand-in's epoch; returns once
        committed."""
        self._require_leader()
        if not records:
            return AppendResult(self.next_offset, self.next_offset - 1, 0)
        # encoded on the caller's thread (the single writer), so the loop keeps serving fetches
        batches = self.encode(records, timestamp_ms)

        async def append() -> list[EncodedBatch]:
            out = self.local_log.behind_the_end(batches, self.raft.epoch)
            self.commits.append_now(out)
            self.desk.writer_appended(records, out[0].base_offset)
            return out

        done = self.serving.call(append(), 60.0)
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
            out = self.local_log.stamped_in_order(batches, self.raft.epoch)
            self.commits.append_now(out)
            return out

        done = self.serving.call(append(), 60.0)
        return self._await_commit(done)

    def _require_leader(self) -> None:
        if not self.raft.is_leader():
            raise VoterStateError(f"stand-in {self.node_id} is not the leader "
                                  f"(epoch {self.raft.epoch}); elect() first, or it resigned")

    def _await_commit(self, batches: Sequence[EncodedBatch]) -> AppendResult:
        self.wait_committed(batches[-1].last_offset)
        return AppendResult(batches[0].base_offset, batches[-1].last_offset, len(batches))

    def wait_committed(self, offset: int, timeout_s: float | None = None) -> None:
        """Block until `offset` is committed (high watermark past it).

        Raises:
            VoterUnavailableError: not within `timeout_s` (default `commit_timeout_s`).
        """
        self.commits.wait(offset, timeout_s or self.commit_timeout_s)

    def voter_status(self) -> list[VoterStatus]:
        """See `QuorumLog`: the stand-in itself and each follower's fetched end."""
        state = "ok" if self.raft.is_leader() else "resigned"
        out = [VoterStatus(self.node_id, state, self.local_log.index.end)]
        for n, r in sorted(self.raft.replicas.items()):
            state = "ok" if r.end_offset >= 0 else "not fetching"
            out.append(VoterStatus(n, state, r.end_offset if r.end_offset >= 0 else None))
        return out

    def read_log(self) -> Iterator[RecordBatch]:
        """See `QuorumLog`: the batches of the stand-in's own log (its LeaderChange included)."""
        return self.local_log.read()

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
        return self.serving.call(self.handover.resign(preferred, timeout_s), timeout_s + 15)

    def close(self) -> None:
        """Stop serving and release the log directory (its `.lock`)."""
        self.serving.stop()
        self.local_log.close()

    def __enter__(self) -> StandInLeader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
