"""The stand-in Raft voter: zk2kraft leads real KRaft controllers through Kafka's own RPCs.

Modules: `server` (the asyncio server: sockets, the loop thread, disk; `StandInLeader`, built
from `serving`, `local_log` and `commits`), `brokers` (BrokerRegistration/BrokerHeartbeat
decisions, pure), `errors` (the one table of Kafka error codes it answers with), `log` (the log
in memory, re-stamping batches).
"""

from __future__ import annotations

from writers.raft.log import restamp_batch
from writers.raft.server import HandoverEvent, HandoverResult, StandInLeader

__all__ = ["HandoverEvent", "HandoverResult", "StandInLeader", "restamp_batch"]
