"""Kafka 3.9.1 is the judge of the online cutover's handoff (`KRaftMigrationDriver`'s states,
`KafkaZkClient.tryRegisterKRaftControllerAsActiveController`).

`migrate --cutover now` pre-copies a sample cluster under a background writer, fences ZooKeeper,
drains and writes /migration; then three real 3.9.1 KRaft controllers in migration mode are
started on the voter directories. A controller that finds ZkMigrationState MIGRATION in the log
and a positive kraft_metadata_offset in /migration skips the copy and claims ZooKeeper's
controller role itself: /controller then carries a kraftControllerEpoch above ours (1), and
/migration names its own epoch. No controller may fail to replay our log. Needs
`tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.churn import Churn
from tests.support.kafka import assert_replayed_cleanly, kafka_quorum
from tests.support.migration_cluster import wait_for_kraft_claim, wait_for_migration_epoch

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

VOTERS = (3000, 3001, 3002)


def test_real_controllers_take_over_the_log_we_handed_over(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    zk = cluster.client
    with Churn(cluster.connect, rate=100) as churn:
        churn.wait_changes(50)
        cmd = [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", cluster.connect,
               "--cutover", "now", *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS],
               "--json", str(tmp_path / "m.json")]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        churn.stop()
    doc = json.loads((tmp_path / "m.json").read_text())
    assert json.loads(zk.get("/controller")[0])["kraftControllerEpoch"] == 1
    migration = {"zookeeper.metadata.migration.enable": "true",
                 "zookeeper.connect": cluster.connect,
                 # the sample holds a delegation token: the brokers' shared secret
                 "delegation.token.secret.key": "zk2kraft-oracle-token-secret"}
    dirs = {v: tmp_path / f"c{v}" for v in VOTERS}
    with kafka_quorum(tmp_path / "kafka", dirs, extra=migration) as nodes:
        claim = wait_for_kraft_claim(zk, 180)
        logs = "\n".join(n.log_text() for n in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-6000:]
        assert claim["brokerid"] in VOTERS
        for node in nodes:
            assert_replayed_cleanly(node)
        assert "KRaft controller indicates an active migration, but the ZK state does not" \
            not in logs
        mig = wait_for_migration_epoch(zk, claim["kraftControllerEpoch"], 60)
        assert mig["kraft_controller_epoch"] == claim["kraftControllerEpoch"]
        assert mig["kraft_metadata_offset"] >= doc["last_offset"]
