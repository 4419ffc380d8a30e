"""`zk2kraft migrate --cutover now --standin ...` leads real Kafka 3.9.1 controllers (issue 9).

Two real controllers (3001, 3002) in migration mode, with a long election timeout, wait for
voter 3000. The CLI takes voter 3000 on its own address, wins the election, commits the
bootstrap (PRE_MIGRATION), pre-copies a generated sample cluster out of real ZooKeeper, fences,
drains and writes /migration, then resigns. Facts checked against Kafka, not against our code:
* a real controller leads after the resignation and activates on the migrated log: Kafka logs
  "Loaded ZK migration state of MIGRATION", claims /controller with a kraftControllerEpoch above
  ours (1) and never hits a fatal fault;
* both controllers' own metadata.log.dirs (written by Kafka from what it fetched) and the
  stand-in's hold the migration: `zk2kraft verify` against each (with the quorum's voter set)
  reports parity with ZooKeeper (exit 0).
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.kafka import KafkaController, free_port, storage_format
from tests.support.standin import LONG_ELECTION
from zkreader import SampleSpec

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

STANDIN, REAL = 3000, (3001, 3002)


def test_migrate_through_the_standin_hands_over_to_a_real_controller(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=3))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    ports = {n: free_port() for n in (STANDIN, *REAL)}
    props = {**LONG_ELECTION,
             "zookeeper.metadata.migration.enable": "true",
             "zookeeper.connect": cluster.connect,
             # the sample holds a delegation token: the brokers' shared secret
             "delegation.token.secret.key": "zk2kraft-oracle-token-secret"}
    nodes = [KafkaController(tmp_path / f"node{n}", tmp_path / f"meta{n}", node_id=n,
                             quorum=ports, extra=props) for n in REAL]
    try:
        for node in nodes:
            storage_format(node.config_path, cluster_id)
            node.launch()
        for node in nodes:
            node.wait_started()
        cmd = [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", cluster.connect,
               "--cutover", "now",
               "--standin", f"{STANDIN}@127.0.0.1:{ports[STANDIN]}={tmp_path / 'standin'}",
               *[f"--controller={n}@127.0.0.1:{ports[n]}" for n in REAL],
               "--journal", str(tmp_path / "journal"), "--json", str(tmp_path / "m.json")]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
        logs = "\n".join(n.log_text() for n in nodes)
        assert done.returncode == 0, done.stdout + done.stderr + logs[-5000:]
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["transport"]["kind"] == "standin"
        assert doc["transport"]["node_id"] == STANDIN
        assert doc["handover"]["new_leader"] in REAL
        deadline = time.monotonic() + 120
        claim: dict[str, Any] = {}
        while time.monotonic() < deadline:
            claim = json.loads(zk.get("/controller")[0])
            if claim.get("kraftControllerEpoch", -1) > 1:
                break
            time.sleep(0.5)
        logs = "\n".join(n.log_text() for n in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-5000:]
        assert claim["brokerid"] in REAL
        leader = next(n for n in nodes if n.node_id == claim["brokerid"])
        assert "Loaded ZK migration state of MIGRATION" in leader.log_text()
        assert "Encountered fatal fault" not in logs
        # the bootstrap Kafka would have written came first (PRE_MIGRATION), then ours
        assert "The metadata log appears to be empty" not in logs
    finally:
        for node in nodes:
            node.stop()
    quorum = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    dirs = {STANDIN: tmp_path / "standin", **{n: tmp_path / f"meta{n}" for n in REAL}}
    for n, directory in dirs.items():
        verify = subprocess.run(
            [sys.executable, "-m", "migrate.cli", "verify", "--zookeeper", cluster.connect,
             "--voter", f"{n}={directory}", "--quorum-voters", quorum,
             "--json", str(tmp_path / f"v{n}.json")],
            capture_output=True, text=True, timeout=300)
        assert verify.returncode == 0, verify.stdout + verify.stderr
