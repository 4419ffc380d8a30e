"""The stand-in's election: Vote at the next epoch until a majority granted, then the epoch
starts with a LeaderChange record and BeginQuorumEpoch goes to every voter not fetching yet.

`Election` runs on the stand-in's loop and sees the server through `ElectionHost`; the Raft
state it changes (candidate, leader) is `writers.raft.leader.RaftLeader`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from writers.codec.records import ControlRecord, MetadataRecord
from writers.errors import QuorumLedElsewhereError, VoterUnavailableError
from writers.log.log_dir import EncodedBatch
from writers.raft.commits import Commits
from writers.raft.leader import METADATA_TOPIC, RaftLeader
from writers.raft.local_log import LocalLog
from writers.raft.serving import ServerLoop
from writers.raft.wire import Peers

__all__ = ["Election", "ElectionHost"]

log = logging.getLogger(__name__)


class ElectionHost(Protocol):
    """What `Election` uses of the server: its part of `writers.raft.server.StandInHost`."""

    node_id: int
    cluster_id: str
    voters: dict[int, tuple[str, int]]
    begin_retry_s: float
    raft: RaftLeader
    local_log: LocalLog
    peers: Peers
    serving: ServerLoop
    commits: Commits
    clock: Callable[[], float]  # monotonic, milliseconds
    wall_clock: Callable[[], float]  # wall time, seconds (the LeaderChange's timestamp)

    def encode(self, records: Sequence[MetadataRecord | ControlRecord],
                timestamp_ms: int) -> list[EncodedBatch]: ...


class Election:
    """Winning the stand-in's epoch.

    Args:
        host: the stand-in whose loop, peers, log and Raft state it uses.
    """

    def __init__(self, host: ElectionHost) -> None:
        self._host = host
        self._raft, self._index, self._peers, self._dir = (host.raft, host.local_log.index,
                                                           host.peers, host.local_log.dir)

    async def run(self, timeout_s: float, rejoin: bool = False) -> int:
        """See `StandInLeader.elect` (on the loop)."""
        ids = sorted(self._host.voters)
        self._stand_for(max(self._raft.epoch, self._index.last_epoch()) + 1)
        granted = {self._host.node_id}
        majority = len(self._host.voters) // 2 + 1
        deadline_ms = self._host.clock() + timeout_s * 1000.0
        last_epoch, end = self._index.last_epoch(), self._index.end
        while len(granted) < majority:
            if self._host.clock() > deadline_ms:
                raise VoterUnavailableError(
                    f"stand-in {self._host.node_id}: only {sorted(granted)} granted the vote "
                    f"for epoch {self._raft.epoch} within {timeout_s:.0f}s "
                    f"(a majority of {majority} is needed)")
            body = {"clusterId": self._host.cluster_id, "topics": [{
                "topicName": METADATA_TOPIC, "partitions": [{
                    "partitionIndex": 0, "candidateEpoch": self._raft.epoch,
                    "candidateId": self._host.node_id, "lastOffsetEpoch": last_epoch,
                    "lastOffset": end}]}]}
            pending = [n for n in self._raft.replicas if n not in granted]
            answers = await asyncio.gather(
                *(self._peers.rpc(n, 52, 0, body, 1.0) for n in pending), return_exceptions=True)
            for n, ans in zip(pending, answers, strict=True):
                if isinstance(ans, BaseException):
                    continue
                part = ans["topics"][0]["partitions"][0] if ans["topics"] else {}
                leader, their_epoch = part.get("leaderId", -1), part.get("leaderEpoch", 0)
                if part.get("voteGranted"):
                    granted.add(n)
                elif rejoin and leader >= 0 and leader != self._host.node_id:
                    raise QuorumLedElsewhereError(
                        f"voter {n} refused the vote: it follows controller {leader} at epoch "
                        f"{their_epoch}", voter_id=n, leader_id=leader, leader_epoch=their_epoch)
                elif rejoin:
                    if their_epoch >= self._raft.epoch:  # a candidate (or our old epoch) moved on
                        granted = {self._host.node_id}
                        self._stand_for(their_epoch + 1)
                        break
                elif their_epoch > self._raft.epoch or leader >= 0:
                    # a controller stood for election (and may lead) before the stand-in asked:
                    # the caller says what that means for the brokers and the way out
                    raise QuorumLedElsewhereError(
                        f"voter {n} refused the vote: it is at epoch {their_epoch} with "
                        + (f"leader {leader}" if leader >= 0 else "no leader known yet")
                        + f" (the stand-in asked at epoch {self._raft.epoch})",
                        voter_id=n, leader_id=leader, leader_epoch=their_epoch)
            if len(granted) < majority:
                await asyncio.sleep(0.2)
        # leader: the epoch starts with a LeaderChange record
        self._raft.become_leader()
        self._dir.write_quorum_state(leader_epoch=self._raft.epoch, voters=ids,
                                     leader_id=self._host.node_id, voted_id=self._host.node_id)
        leader_change = ControlRecord("LEADER_CHANGE", {
            "version": 0, "leaderId": self._host.node_id,
            "voters": [{"voterId": v} for v in ids],
            "grantingVoters": [{"voterId": v} for v in sorted(granted)]})
        self._host.commits.append_now(
            self._host.encode([leader_change], int(self._host.wall_clock() * 1000)))
        self._host.serving.spawn(self._begin_epoch_loop())
        log.info("stand-in %d leads epoch %d (votes from %s)", self._host.node_id, self._raft.epoch,
                 sorted(granted))
        return self._raft.epoch

    def _stand_for(self, epoch: int) -> None:
        """Candidate at `epoch`: vote for itself, durably (quorum-state) before asking."""
        self._raft.stand_for(epoch)
        self._dir.write_quorum_state(leader_epoch=epoch, voters=sorted(self._host.voters),
                                     voted_id=self._host.node_id)

    async def _begin_epoch_loop(self) -> None:
        """BeginQuorumEpoch to every voter that has not fetched in this epoch, until all have."""
        body = {"clusterId": self._host.cluster_id, "topics": [{
            "topicName": METADATA_TOPIC, "partitions": [{
                "partitionIndex": 0, "leaderId": self._host.node_id,
                "leaderEpoch": self._raft.epoch}]}]}
        while self._raft.is_leader():
            waiting = [n for n, r in self._raft.replicas.items() if r.end_offset < 0]
            if not waiting:
                return
            await asyncio.gather(*(self._peers.rpc(n, 53, 0, body, 1.0) for n in waiting),
                                 return_exceptions=True)
            await asyncio.sleep(self._host.begin_retry_s)
