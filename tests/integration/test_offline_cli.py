"""`--offline` end to end on real ZooKeeper trees, driven through the CLI as an operator would.

A stopped ZooKeeper-mode cluster is a sample tree whose ephemeral znodes are gone: the brokers'
`/brokers/ids/<id>` and the controller's `/controller` disappear with their sessions when the
processes stop. Expected values are Kafka's facts, written by hand: `ZkMigrationState`
POST_MIGRATION is 3 (Kafka's `ZkMigrationState` enum), metadata.version 4.0-IV3 is feature
level 25 and 3.9-IV0 is 21 (`MetadataVersion`), and a stopped cluster has no broker to register.
The real-Kafka rehearsal is tests/oracle/test_offline_rehearsal.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from samples import SampleSpec

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)
POST_MIGRATION = 3


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200"})


def voter_flags(root: Path) -> list[str]:
    return [f"--voter={v}={root / f'c{v}'}" for v in VOTERS]


def stop_brokers(client: KazooClient) -> None:
    """What stopping every broker leaves in ZooKeeper: the ephemerals are gone, and the partition
    whose only ISR member stopped while a controller still ran has no leader."""
    for broker in client.get_children("/brokers/ids"):
        client.delete(f"/brokers/ids/{broker}")
    client.delete("/controller")
    topic = sorted(client.get_children("/brokers/topics"))[0]
    path = f"/brokers/topics/{topic}/partitions/0/state"
    data, _ = client.get(path)
    state = json.loads(data)
    state.update(leader=-1, isr=state["isr"][:1])
    client.set(path, json.dumps(state).encode())


def tree(client: KazooClient, path: str = "/") -> dict[str, tuple[int, int]]:
    _, st = client.get(path)
    out = {path: (st.mzxid, st.pzxid)}
    for child in client.get_children(path):
        out.update(tree(client, path.rstrip("/") + "/" + child))
    return out


def records(voter_dir: Path) -> list[dict[str, Any]]:
    result = run("inspect", str(voter_dir), "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _meta(log_dir: Path) -> dict[str, str]:
    lines = (log_dir / "meta.properties").read_text().splitlines()
    return dict(ln.split("=", 1) for ln in lines if "=" in ln and not ln.startswith("#"))


def _broker_log_dir(path: Path, client: KazooClient, broker_id: int) -> Path:
    """A stopped ZooKeeper-mode broker's log dir as Kafka 3.9 leaves it: `meta.properties`
    version 0 with broker.id and the cluster's id, no directory.id (`KafkaServer` adds one
    only with migration enabled)."""
    cluster_id = json.loads(client.get("/cluster/id")[0])["id"]
    path.mkdir()
    (path / "meta.properties").write_text(
        f"#\n#Mon Nov 23 17:00:00 UTC 2026\nbroker.id={broker_id}\nversion=0\n"
        f"cluster.id={cluster_id}\n")
    return path


def test_a_running_cluster_is_refused_everywhere(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    plan = run("plan", "--zookeeper", cluster.connect, "--offline", "--json", "-", "--quiet")
    assert plan.returncode == 1, plan.stderr
    codes = {(b["code"], b["path"]) for b in json.loads(plan.stdout)["blockers"]}
    assert codes == {("BROKER_STILL_RUNNING", "/brokers/ids/1"),
                     ("BROKER_STILL_RUNNING", "/brokers/ids/2"),
                     ("BROKER_STILL_RUNNING", "/brokers/ids/3"),
                     ("CONTROLLER_HELD", "/controller")}
    migrate = run("migrate", "--zookeeper", cluster.connect, "--offline", "--quiet",
                  *voter_flags(tmp_path))
    assert migrate.returncode == 1
    assert "BROKER_STILL_RUNNING /brokers/ids/2" in migrate.stderr
    assert "CONTROLLER_HELD /controller" in migrate.stderr
    assert not any((tmp_path / f"c{v}").exists() for v in VOTERS)
    verify = run("verify", "--zookeeper", cluster.connect, "--offline", "--quiet",
                 *voter_flags(tmp_path))
    assert verify.returncode in (1, 3)  # refused, or no voter log to read yet


def test_a_stopped_cluster_plans_migrates_and_verifies_without_touching_zookeeper(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=4))
    stop_brokers(cluster.client)
    before = tree(cluster.client)

    online = run("plan", "--zookeeper", cluster.connect, "--json", "-", "--quiet")
    assert online.returncode == 1  # without --offline the stopped brokers block
    assert {b["code"] for b in json.loads(online.stdout)["blockers"]} == {"BROKER_NOT_REGISTERED"}

    plan = run("plan", "--zookeeper", cluster.connect, "--offline", "--json", "-", "--quiet")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    doc = json.loads(plan.stdout)
    assert doc["blockers"] == []
    offline = [w for w in doc["warnings"] if w["code"] == "PARTITION_OFFLINE"]
    assert len(offline) == 1 and "expected with the brokers stopped" in offline[0]["message"]
    assert "REGISTER_BROKER_RECORD" not in doc["records"]

    migrate = run("migrate", "--zookeeper", cluster.connect, "--offline", *voter_flags(tmp_path),
                  "--spark-master", "in-process")
    assert migrate.returncode == 0, migrate.stderr
    assert "ZooKeeper was not modified (--offline)" in migrate.stdout
    assert "zk2kraft prepare-broker --log-dirs" in " ".join(migrate.stdout.split())
    recs = records(tmp_path / "c3000")
    types = [r["type"] for r in recs]
    assert "REGISTER_BROKER_RECORD" not in types
    assert recs[0]["data"] == {"name": "metadata.version", "featureLevel": 21}
    states = [r["data"]["zkMigrationState"] for r in recs
              if r["type"] == "ZK_MIGRATION_STATE_RECORD"]
    assert states == [POST_MIGRATION]
    assert types.count("PARTITION_RECORD") == 12
    # 3.9-IV0 has directory assignment (KIP-858, 3.7-IV2): PartitionRecord version 1 with one
    # directory per replica, the one `prepare-broker` gives that broker's first log dir
    partitions = [r for r in recs if r["type"] == "PARTITION_RECORD"]
    assert {r["version"] for r in partitions} == {1}
    broker_dir = _broker_log_dir(tmp_path / "broker1", cluster.client, broker_id=1)
    prepared = run("prepare-broker", "--log-dirs", str(broker_dir), "--zookeeper", cluster.connect)
    assert prepared.returncode == 0, prepared.stderr
    directory_id = _meta(broker_dir)["directory.id"]
    for r in partitions:
        data = r["data"]
        assert len(data["directories"]) == len(data["replicas"]), data
        named = {d for b, d in zip(data["replicas"], data["directories"], strict=True) if b == 1}
        assert named <= {directory_id}, data
    # every broker is stopped: no partition names a leader (KRaft's controller elects one from
    # the ISR when its first member is unfenced), ISR and leader epoch are ZooKeeper's
    names = {r["data"]["topicId"]: r["data"]["name"] for r in recs if r["type"] == "TOPIC_RECORD"}
    for r in partitions:
        data = r["data"]
        raw, _ = cluster.client.get(f"/brokers/topics/{names[data['topicId']]}/partitions/"
                                    f"{data['partitionId']}/state")
        state = json.loads(raw)
        assert (data["leader"], data["isr"], data["leaderEpoch"]) == (
            -1, state["isr"], state["leader_epoch"]), data

    verify = run("verify", "--zookeeper", cluster.connect, "--offline", *voter_flags(tmp_path))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert tree(cluster.client) == before


def test_target_kafka_4x_writes_a_kafka_4_metadata_version(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    stop_brokers(cluster.client)
    migrate = run("migrate", "--zookeeper", cluster.connect, "--offline", "--target-kafka",
                  "4.x", *voter_flags(tmp_path), "--quiet")
    assert migrate.returncode == 0, migrate.stderr
    recs = records(tmp_path / "c3001")
    # 4.x is any 4.x line: 4.0-IV3, Kafka 4.0's highest stable level, feature level 25
    assert recs[0]["data"] == {"name": "metadata.version", "featureLevel": 25}
    # 4.0-IV3 has ELR (4.0-IV1): PartitionRecord version 2, still naming the directories
    partitions = [r for r in recs if r["type"] == "PARTITION_RECORD"]
    assert {r["version"] for r in partitions} == {2}
    assert all(len(r["data"]["directories"]) == len(r["data"]["replicas"]) for r in partitions)
    assert run("verify", "--zookeeper", cluster.connect, "--offline", "--quiet",
               *voter_flags(tmp_path)).returncode == 0


@pytest.mark.parametrize(("flags", "message"), [
    (["--target-kafka", "4.x"], "--target-kafka 4.x needs --offline"),
    (["--offline", "--metadata-version", "4.0-IV3"], "4.x levels need --target-kafka 4.x"),
    (["--offline", "--cutover", "now"], "--offline with --cutover now"),
])
def test_flag_combinations_are_refused_before_connecting(
    flags: list[str], message: str, tmp_path: Path
) -> None:
    result = run("migrate", "--zookeeper", "127.0.0.1:1", *voter_flags(tmp_path), *flags)
    assert result.returncode == 2
    assert message in result.stderr
