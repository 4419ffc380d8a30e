"""`zk2kraft plan` names the source's Kafka version from what ZooKeeper holds, and the path.

The trees are written by hand as each Kafka writes them (docs/reference's znode table, Kafka
3.9.1 source): Kafka 2.8 at IBP 2.8 writes `/feature` version 1 (`min_version_level` and
`max_version_level`, status 1), `/controller` version 1 and broker registrations version 5;
Kafka 3.9 at IBP 3.9 writes `/feature` version 2 (max only) and `/controller` version 2 with
`kraftControllerEpoch`. Expected: a 2.8 tree is "2.8 or later, before 3.4" with the warning
that brokers older than 3.0 may have left directories without partition.metadata (naming the
prepare-broker step) and the online path saying to upgrade first; a 3.9 tree is "3.4 or
later", IBP "3.3 or later", no such warning, online possible.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from kazoo.client import KazooClient

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]


def plan(connect: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    result = subprocess.run([*ZK2KRAFT, "plan", "--zookeeper", connect, "--json", "-"],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "COLUMNS": "200"})
    return result, json.loads(result.stdout) if result.stdout.strip() else {}


def _tree(client: KazooClient, *, feature: dict[str, Any], controller: dict[str, Any]) -> None:
    put = lambda path, obj: client.create(path, json.dumps(obj).encode(), makepath=True)  # noqa: E731
    put("/cluster/id", {"version": "1", "id": "S8mNfXcLS4mBhHgpG6S9iQ"})
    put("/feature", feature)
    # ephemeral, as a running ZooKeeper controller holds it (persistent means a KRaft one)
    client.create("/controller", json.dumps(controller).encode(), ephemeral=True)
    put("/controller_epoch", 1)
    for b in (1, 2):
        put(f"/brokers/ids/{b}", {
            "version": 5, "host": f"b{b}", "port": 9092, "jmx_port": -1,
            "timestamp": "1700000000000", "endpoints": [f"PLAINTEXT://b{b}:9092"],
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}, "features": {}})
    put("/brokers/topics/rf1", {"version": 3, "partitions": {"0": [1], "1": [2]},
                                "adding_replicas": {}, "removing_replicas": {},
                                "topic_id": "Xr2y2Ue7T5yAdAx8xGGoXg"})
    for p, leader in ((0, 1), (1, 2)):
        put(f"/brokers/topics/rf1/partitions/{p}/state", {
            "controller_epoch": 1, "leader": leader, "version": 1, "leader_epoch": 0,
            "isr": [leader]})


def test_a_kafka_2_8_tree_is_named_and_warned_about(zk_server: Any, zk_chroot: str,
                                                    zk_chroot_client: KazooClient) -> None:
    _tree(zk_chroot_client,
          feature={"version": 1, "status": 1, "features": {}},
          controller={"version": 1, "brokerid": 1, "timestamp": "1700000000000"})
    result, doc = plan(f"{zk_server.connect}{zk_chroot}")
    assert result.returncode == 0, result.stderr
    source = doc["source"]
    assert source["kafka"] == "2.8 or later, before 3.4"
    assert (source["ibp_at_least"], source["ibp_below"]) == ("2.8", "3.3")
    assert "/controller version 1: the controller runs Kafka < 3.4" in source["evidence"]
    assert "upgrade every broker to Kafka 3.6 or later" in source["paths"][1]
    assert "prepare-broker writes the partition.metadata" in source["paths"][0]
    warned = [w for w in doc["warnings"] if w["code"] == "BROKER_LOGS_MAY_LACK_TOPIC_IDS"]
    assert len(warned) == 1 and warned[0]["path"] == "/feature"
    assert "Prepare each broker's log dirs" in warned[0]["message"]
    assert "source: Kafka 2.8 or later, before 3.4" in result.stderr  # tables go to stderr


def test_a_kafka_3_9_tree_is_named_without_the_warning(zk_server: Any, zk_chroot: str,
                                                       zk_chroot_client: KazooClient) -> None:
    _tree(zk_chroot_client,
          feature={"version": 2, "status": 1, "features": {}},
          controller={"version": 2, "brokerid": 1, "timestamp": "1700000000000",
                      "kraftControllerEpoch": -1})
    result, doc = plan(f"{zk_server.connect}{zk_chroot}")
    assert result.returncode == 0, result.stderr
    source = doc["source"]
    assert source["kafka"] == "3.4 or later"
    assert source["ibp_at_least"] == "3.3" and source["ibp_below"] is None
    assert not [w for w in doc["warnings"] if w["code"] == "BROKER_LOGS_MAY_LACK_TOPIC_IDS"]
    assert "prepare-broker" not in source["paths"][0]
