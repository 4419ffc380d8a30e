"""`zk2kraft migrate --cutover none` end to end: real ZooKeeper trees, the real CLI, real dirs.

Each test runs the installed console script in a subprocess, as an operator would. Most use
`--spark-master in-process` (same functions, no JVM start); one runs on Spark local[2] and must
write the very same bytes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.golden.golden import (
    GOLDEN_SPECS,
    golden_payloads,
    migrate_golden,
)
from tests.support.zk import ZkServer, tree_state
from writers import open_log_source, read_meta_properties, read_quorum_state

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
# controller ids differ from the sample's broker ids (1..n), as Kafka requires
VOTERS = (3002, 3000, 3001)


def migrate(connect: str, root: Path, *extra: str, voters: tuple[int, ...] = VOTERS,
            spark: str = "in-process") -> subprocess.CompletedProcess[str]:
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in voters],
           "--spark-master", spark, "--json", str(root / "migrate.json"), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200"})


def log_bytes(voter_dir: Path) -> bytes:
    part = voter_dir / "__cluster_metadata-0"
    return b"".join(p.read_bytes() for p in sorted(part.glob("*.log")))


def inspect_records(voter_dir: Path) -> list[dict[str, Any]]:
    """The voter's records as `zk2kraft inspect --json --unredacted` prints them."""
    proc = subprocess.run([*ZK2KRAFT, "inspect", "--json", "--unredacted", str(voter_dir)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


# Kafka's MetadataVersion feature levels (server-common MetadataVersion.java)
FEATURE_LEVEL = {"3.5-IV2": 11, "3.6-IV2": 14, "3.9-IV0": 21}


SHAPES = {
    "clean": (SampleSpec.clean(topics=25, partitions_per_topic=12), "3.9-IV0"),
    "warnings-3.6": (
        SampleSpec.clean(topics=10, partitions_per_topic=4, brokers=4, pending_deletion=True,
                         in_flight_reassignment=True, missing_partition_state=True,
                         recovering_partition=True, leader_not_in_isr=True),
        "3.6-IV2",
    ),
    "one-broker-rf1": (SampleSpec.clean(topics=8, partitions_per_topic=2, brokers=1,
                                        replication_factor=1, acls=False,
                                        delegation_token=False), "3.5-IV2"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_migrate_writes_identical_complete_logs_and_leaves_zookeeper_alone(
    sample_cluster: Callable[..., Any], tmp_path: Path, shape: str
) -> None:
    spec, mv = SHAPES[shape]
    cluster = sample_cluster(spec)
    before = tree_state(cluster.client)
    result = migrate(cluster.connect, tmp_path, "--metadata-version", mv)
    assert result.returncode == 0, result.stderr
    assert tree_state(cluster.client) == before  # nothing written to ZooKeeper

    logs = {v: log_bytes(tmp_path / f"c{v}") for v in VOTERS}
    assert len(set(logs.values())) == 1 and logs[VOTERS[0]]
    records = inspect_records(tmp_path / f"c{VOTERS[0]}")
    types = [r["type"] for r in records]
    assert [r["offset"] for r in records] == list(range(len(records)))
    assert records[0]["data"] == {"name": "metadata.version", "featureLevel": FEATURE_LEVEL[mv]}
    # the migration is one KIP-868 transaction from 3.6-IV1 on, closed by ZkMigrationState
    tail = ["ZK_MIGRATION_STATE_RECORD"] + (["END_TRANSACTION_RECORD"] if mv >= "3.6" else [])
    assert types[-len(tail):] == tail
    assert (types[1] == "BEGIN_TRANSACTION_RECORD") == (mv >= "3.6")
    assert types.count("REGISTER_BROKER_RECORD") == spec.brokers
    assert types.count("PARTITION_RECORD") == cluster.manifest.partitions_to_migrate
    for entry in open_log_source(tmp_path / f"c{VOTERS[0]}").entries():
        assert entry.batch.leader_epoch == 1
    for v in VOTERS:
        meta = read_meta_properties(tmp_path / f"c{v}")
        assert meta is not None
        assert (meta.node_id, meta.cluster_id) == (v, cluster.manifest.cluster_id)
        qs = read_quorum_state(tmp_path / f"c{v}" / "__cluster_metadata-0")
        assert qs is not None
        # no leader named: Kafka starts every voter unattached in epoch 1 and elects one
        assert (qs["leaderId"], qs["votedId"], qs["leaderEpoch"]) == (-1, -1, 1)
        assert sorted(x["voterId"] for x in qs["currentVoters"]) == sorted(VOTERS)  # type: ignore
        assert not list(tmp_path.glob(".c*"))  # no staging dir left behind

    doc_path = tmp_path / "migrate.json"
    assert stat.S_IMODE(doc_path.stat().st_mode) == 0o600
    doc = json.loads(doc_path.read_text())
    n = len(records)
    assert doc["last_offset"] == n - 1
    assert doc["window_ms"] == {"tool": None, "total": None}
    assert doc["delta_records"] == 0 and doc["blockers"] == [] and doc["no_op"] is False
    assert sum(doc["records"].values()) == n
    assert doc["partitions"] == cluster.manifest.partitions_to_migrate
    for secret in cluster.manifest.secrets:
        assert secret not in result.stdout + result.stderr + doc_path.read_text()


def test_second_run_is_a_byte_identical_no_op(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=12, partitions_per_topic=5))
    first = migrate(cluster.connect, tmp_path)
    assert first.returncode == 0, first.stderr
    snapshot = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()
                and p.name != "migrate.json"}
    second = migrate(cluster.connect, tmp_path)
    assert second.returncode == 0, second.stderr
    assert "no-op" in second.stdout and "already hold this exact migration" in second.stdout
    assert json.loads((tmp_path / "migrate.json").read_text())["no_op"] is True
    after = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()
             and p.name != "migrate.json"}
    assert after == snapshot

    # a fresh set of dirs from the same ZooKeeper state: the same bytes (I6)
    (tmp_path / "again").mkdir()
    again = migrate(cluster.connect, tmp_path / "again")
    assert again.returncode == 0, again.stderr
    for v in VOTERS:
        assert log_bytes(tmp_path / "again" / f"c{v}") == log_bytes(tmp_path / f"c{v}")


def test_voters_holding_something_else_are_refused_untouched(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    assert migrate(cluster.connect, tmp_path).returncode == 0
    held = {v: log_bytes(tmp_path / f"c{v}") for v in VOTERS}

    cluster.client.create("/brokers/topics/late-topic", json.dumps(
        {"version": 3, "partitions": {"0": [1]}, "adding_replicas": {}, "removing_replicas": {},
         "topic_id": "AAAAAAAAAAAAAAAAAAAAAw"}).encode())
    changed = migrate(cluster.connect, tmp_path)
    assert changed.returncode == 1
    assert "already holds a different metadata log" in changed.stderr
    assert {v: log_bytes(tmp_path / f"c{v}") for v in VOTERS} == held

    other = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=1, seed=7))
    assert other.manifest.cluster_id != cluster.manifest.cluster_id
    foreign = migrate(other.connect, tmp_path)
    assert foreign.returncode == 1
    assert "belongs to cluster" in foreign.stderr
    assert {v: log_bytes(tmp_path / f"c{v}") for v in VOTERS} == held


def test_a_new_empty_voter_is_filled_next_to_ones_already_holding_the_log(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=2))
    assert migrate(cluster.connect, tmp_path, voters=(3000, 3001)).returncode == 0
    result = migrate(cluster.connect, tmp_path, voters=(3000, 3001, 3002))
    assert result.returncode == 0, result.stderr
    assert "already held it (unchanged)" in result.stdout
    assert log_bytes(tmp_path / "c3002") == log_bytes(tmp_path / "c3000")
    # the voters that kept their log now name the new voter set, as the new one does
    for v in (3000, 3001, 3002):
        state = json.loads((tmp_path / f"c{v}" / "__cluster_metadata-0" / "quorum-state")
                           .read_text())
        assert state["currentVoters"] == [{"voterId": 3000}, {"voterId": 3001},
                                          {"voterId": 3002}]
        assert (state["leaderEpoch"], state["leaderId"], state["votedId"]) == (1, -1, -1)


def test_blockers_refuse_with_exit_1_and_write_nothing(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2,
                                              log_dir_event=True, topic_without_id=True))
    before = tree_state(cluster.client)
    result = migrate(cluster.connect, tmp_path)
    assert result.returncode == 1
    assert "LOG_DIR_EVENT_PENDING" in result.stdout and "TOPIC_WITHOUT_ID" in result.stdout
    assert not any((tmp_path / f"c{v}").exists() for v in VOTERS)
    assert not list(tmp_path.glob(".c*"))
    doc = json.loads((tmp_path / "migrate.json").read_text())
    assert {b["code"] for b in doc["blockers"]} >= {"LOG_DIR_EVENT_PENDING", "TOPIC_WITHOUT_ID"}
    # the log-dir override does not lift the other blocker
    again = migrate(cluster.connect, tmp_path, "--allow-pending-log-dir-events")
    assert again.returncode == 1
    assert not any((tmp_path / f"c{v}").exists() for v in VOTERS)
    assert tree_state(cluster.client) == before


def test_a_topic_id_used_twice_is_refused_naming_both_paths_with_nothing_written(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    # the audit's case: topic-00001's znode copied to topic.with_dot, one id for two topics
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=4))
    data, _ = cluster.client.get("/brokers/topics/topic-00001")
    topic_id = json.loads(data)["topic_id"]
    cluster.client.create("/brokers/topics/topic.with_dot", data)
    before = tree_state(cluster.client)
    result = migrate(cluster.connect, tmp_path, "--cutover", "none")
    assert result.returncode == 1, result.stderr
    assert "DUPLICATE_TOPIC_ID /brokers/topics/topic.with_dot" in result.stderr
    assert "/brokers/topics/topic-00001" in result.stderr and topic_id in result.stderr
    assert "nothing was written" in result.stderr
    assert not any((tmp_path / f"c{v}").exists() for v in VOTERS)
    assert tree_state(cluster.client) == before
    doc = json.loads((tmp_path / "migrate.json").read_text())
    assert [(b["code"], b["path"]) for b in doc["blockers"]] == [
        ("DUPLICATE_TOPIC_ID", "/brokers/topics/topic.with_dot")]


def test_refused_before_spark_starts_and_quiet_error_lists_the_blockers(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    # Spark asked for explicitly: a refusal must still come before any JVM starts. Spark's work
    # dir (zk2kraft-spark-*) is created in TMPDIR the moment a session starts, so none may exist.
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2,
                                              log_dir_event=True, topic_without_id=True))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect, "--quiet",
           *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS], "--spark-master", "local[2]"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "TMPDIR": str(tmp)})
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert "2 pre-flight blocker(s); nothing was written" in result.stderr
    assert "LOG_DIR_EVENT_PENDING /log_dir_event_notification/" in result.stderr
    assert "TOPIC_WITHOUT_ID /brokers/topics/" in result.stderr
    assert "table above" not in result.stderr
    assert not list(tmp.glob("zk2kraft-spark-*"))
    assert not any((tmp_path / f"c{v}").exists() for v in VOTERS)


def test_auto_engine_runs_a_small_cluster_in_process_and_says_why(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=4))
    result = migrate(cluster.connect, tmp_path, spark="auto")
    assert result.returncode == 0, result.stderr
    assert "engine in-process (auto: 12 partitions" in result.stdout
    # why: below this machine's crossover, or no crossover on its cores (migrate/bulk/engine.py)
    assert ("one process finishes before Spark's JVM would have started" in result.stdout
            or "Spark never catches up with one process" in result.stdout)


def test_the_blockers_own_override_lets_it_through(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2,
                                              log_dir_event=True))
    assert migrate(cluster.connect, tmp_path).returncode == 1
    result = migrate(cluster.connect, tmp_path, "--allow-pending-log-dir-events")
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "migrate.json").read_text())
    assert any(w["code"] == "LOG_DIR_EVENT_PENDING" for w in doc["warnings"])
    assert log_bytes(tmp_path / "c3000")


def test_spark_engine_writes_the_same_bytes(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=30, partitions_per_topic=20))
    (tmp_path / "spark").mkdir()
    (tmp_path / "local").mkdir()
    on_spark = migrate(cluster.connect, tmp_path / "spark", spark="local[2]")
    assert on_spark.returncode == 0, on_spark.stderr
    assert "engine spark" in on_spark.stdout
    assert "WARN" not in on_spark.stderr and "log4j" not in on_spark.stderr.lower()
    local = migrate(cluster.connect, tmp_path / "local")
    assert local.returncode == 0, local.stderr
    for v in VOTERS:
        assert log_bytes(tmp_path / "spark" / f"c{v}") == log_bytes(tmp_path / "local" / f"c{v}")


def test_flag_errors_before_anything_connects(tmp_path: Path) -> None:
    nowhere = "127.0.0.1:1"  # nothing listens: a flag error must come first
    now = migrate(nowhere, tmp_path, "--cutover", "now", "--metadata-version", "3.6-IV0")
    assert now.returncode == 2 and "3.6-IV1" in now.stderr and "transaction" in now.stderr
    hook = migrate(nowhere, tmp_path, "--on-cutover", "true")
    assert hook.returncode == 2 and "--on-cutover needs --cutover now or manual" in hook.stderr
    dup = migrate(nowhere, tmp_path, voters=(3000, 3000))
    assert dup.returncode == 2 and "given twice" in dup.stderr
    mv = migrate(nowhere, tmp_path, "--metadata-version", "3.3-IV3")
    assert mv.returncode == 2 and "--metadata-version" in mv.stderr
    (tmp_path / "afile").write_text("x")
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", nowhere, "--voter",
           f"1={tmp_path / 'afile' / 'c1'}", "--spark-master", "in-process"]
    unusable = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert unusable.returncode == 3 and "afile" in unusable.stderr
    assert not list(tmp_path.glob("c*"))


def test_unreachable_zookeeper_is_exit_3_and_writes_nothing(tmp_path: Path) -> None:
    result = migrate("127.0.0.1:1", tmp_path, "--zk-timeout", "2")
    assert result.returncode == 3
    assert not any((tmp_path / f"c{v}").exists() for v in VOTERS)


def test_empty_and_formatted_voter_dirs_are_filled_keeping_the_operators_files(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    (tmp_path / "c3002").mkdir()  # an empty directory made by the operator
    formatted = tmp_path / "c3000"  # as `kafka-storage format` leaves it (no log yet)
    (formatted / "__cluster_metadata-0").mkdir(parents=True)
    meta = (f"#\n#Tue Nov 18 10:00:00 UTC 2025\nnode.id=3000\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\n"
            f"version=1\ncluster.id={cluster.manifest.cluster_id}\n")
    (formatted / "meta.properties").write_text(meta)
    (formatted / "bootstrap.checkpoint").write_bytes(b"operator's file")
    result = migrate(cluster.connect, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (formatted / "meta.properties").read_text() == meta
    assert (formatted / "bootstrap.checkpoint").read_bytes() == b"operator's file"
    assert log_bytes(formatted) == log_bytes(tmp_path / "c3002") == log_bytes(tmp_path / "c3001")
    assert log_bytes(formatted)
    assert not list(tmp_path.glob(".c*"))
    again = migrate(cluster.connect, tmp_path)
    assert again.returncode == 0 and "no-op" in again.stdout


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_migrate_writes_the_records_kafka_decoded_in_the_golden_file(
    zk_server: ZkServer, tmp_path: Path, name: str
) -> None:
    """Expected records from tests/golden (Kafka's DumpLogSegments), not from the translator."""
    case = GOLDEN_SPECS[name]
    dirs, czxids = migrate_golden(zk_server.connect, case, tmp_path)
    got = inspect_records(dirs[VOTERS[0]])
    for r in got:  # what ZooKeeper assigned: checked here, masked as in the golden file
        if r["type"] == "REGISTER_BROKER_RECORD":
            assert r["data"]["brokerEpoch"] == czxids[r["data"]["brokerId"]]
            assert len(r["data"]["incarnationId"]) == 22
            r["data"]["brokerEpoch"] = "<czxid>"
            r["data"]["incarnationId"] = "<incarnation>"
    assert got == golden_payloads(case)
