"""The stand-in Raft voter: zk2kraft leads real KRaft controllers through Kafka's own RPCs.

Modules:

* `server`: `StandInLeader`, the thin server and its public `QuorumLog` API, and `StandInHost`,
  the public seam its helpers see it through.
* `leader`: `RaftLeader`, the Raft rules and the role (`Role`, `TRANSITIONS`) as a pure state
  machine: requests in, answers and effects out, no clock, socket or file.
* `inbound`: the listener: each request read, handed to the rules, its effects carried out,
  answered (SASL/PLAIN too).
* `election`: Vote until a majority granted, then the LeaderChange and BeginQuorumEpoch.
* `handover`: resigning with EndQuorumEpoch and waiting for a real controller's
  BeginQuorumEpoch; each message stamped.
* `broker_desk`: BrokerRegistration/BrokerHeartbeat answered once their records are committed,
  stale broker sessions fenced.
* `brokers`: the broker registry's decisions (pure).
* `commits`: appends on the loop and the wait for a majority to commit them.
* `serving`: the asyncio loop thread and the listener.
* `local_log`: the stand-in's log directory (`metadata.log.dir`) and its index.
* `log`: the log in memory (`LogIndex`) and re-stamping batches.
* `wire`: what it advertises (ApiVersions), the SASL/PLAIN steps, and the outbound RPCs to
  the other voters (`Peers`).
* `errors`: the one table of Kafka error codes it answers with.
"""

from __future__ import annotations

from writers.raft.log import restamp_batch
from writers.raft.server import HandoverEvent, HandoverResult, StandInLeader

__all__ = ["HandoverEvent", "HandoverResult", "StandInLeader", "restamp_batch"]
