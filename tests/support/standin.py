"""A static quorum of real Kafka 3.9.1 controllers led by zk2kraft's stand-in (oracle tests and
benchmarks/standin.py share it).

The controllers get a long election timeout, so that none of them becomes a candidate before the
stand-in has won epoch 1 (a real controller that wins first writes its bootstrap records). A
stand-in resignation still hands over at once: EndQuorumEpoch makes the preferred successor
stand for election without waiting for its timeout.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.kafka import KafkaController, free_port, random_cluster_id, storage_format
from writers import StandInLeader

__all__ = ["LONG_ELECTION", "StandInQuorum", "follower_segments", "standin_quorum"]

LONG_ELECTION = {
    "controller.quorum.election.timeout.ms": "30000",
    "controller.quorum.fetch.timeout.ms": "30000",
}
FOLLOWING = r"Completed transition to FollowerState\([^\n]*leader=3000[^\n]*"


@dataclass
class StandInQuorum:
    """The stand-in, the real controllers and where their logs are."""

    standin: StandInLeader
    controllers: list[KafkaController]
    standin_dir: Path
    cluster_id: str

    def controller(self, node_id: int) -> KafkaController:
        return next(c for c in self.controllers if c.node_id == node_id)


def follower_segments(directory: Path) -> list[Path]:
    """The `.log` segments of a metadata.log.dir, in offset order."""
    return sorted((directory / "__cluster_metadata-0").glob("*.log"))


@contextlib.contextmanager
def standin_quorum(
    root: Path,
    *,
    standin_id: int = 3000,
    controller_ids: Sequence[int] = (3001, 3002),
    heap: str = "256m",
    elect_timeout_s: float = 150.0,
    extra: Mapping[str, str] | None = None,
) -> Iterator[StandInQuorum]:
    """Start the controllers (formatted, long election timeout), let the stand-in win epoch 1,
    and wait until every controller logs that it follows the stand-in. `extra` adds controller
    properties (e.g. a short `controller.quorum.fetch.timeout.ms` so that a dead stand-in is
    noticed quickly; the election timeout stays long so the stand-in still wins first).

    Everything is stopped on exit; a controller that cannot start fails the caller with its log.
    """
    ids = [standin_id, *controller_ids]
    ports = {n: free_port() for n in ids}
    cluster = random_cluster_id()
    nodes = []
    for n in controller_ids:
        node = KafkaController(root / f"node{n}", root / f"meta{n}", node_id=n, quorum=ports,
                               heap=heap, extra={**LONG_ELECTION, **(extra or {})})
        storage_format(node.config_path, cluster)
        nodes.append(node)
    standin: StandInLeader | None = None
    try:
        for node in nodes:
            node.launch()
        standin = StandInLeader(
            standin_id, listen=("127.0.0.1", ports[standin_id]),
            voters={n: ("127.0.0.1", p) for n, p in ports.items()},
            log_dir=root / f"meta{standin_id}", cluster_id=cluster)
        standin.elect(elect_timeout_s)
        for node in nodes:
            node.wait_started()
        for node in nodes:
            node.wait_for_log(FOLLOWING.replace("3000", str(standin_id)), 60)
        yield StandInQuorum(standin, nodes, root / f"meta{standin_id}", cluster)
    finally:
        if standin is not None:
            standin.close()
        for node in nodes:
            node.stop()


def transitions(node: KafkaController) -> list[str]:
    """Every `Completed transition to X(...)` state name the node logged, in order."""
    return re.findall(r"Completed transition to ([A-Za-z]+)\(", node.log_text())
