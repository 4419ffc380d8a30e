"""`zk2kraft verify` against real ZooKeeper: a generated tree written into three voter logs
passes; each kind of drift made in ZooKeeper afterwards is reported with the right kind, key and
field; voters that disagree, an open transaction and unreadable voters are reported; no secret
appears in any output."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from migrate.cli import main
from samples import SampleSpec
from writers import (
    MetadataRecord,
    QuorumWriter,
    VoterDir,
    batch_records,
    open_log_source,
    read_meta_properties,
)
from zkreader import ClusterSnapshot, read_cluster, session_for_client

Voters = list[tuple[int, Path]]


def read(sample: Any) -> ClusterSnapshot:
    return read_cluster(session_for_client(sample.client), watch=False)


def write_voters(sample: Any, voters: Voters) -> None:
    """Migrate the sample into the voters as an operator does: `zk2kraft migrate` (a process)."""
    proc = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", sample.connect,
         "--cutover", "none", "--spark-master", "in-process", "--quiet",
         *[f"--voter={i}={d}" for i, d in voters]],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr


def records_of(voter: Path) -> list[MetadataRecord]:
    """The records a voter holds, in offset order."""
    return [r for e in open_log_source(voter).entries() for r in e.batch.records]  # type: ignore[misc]


def write_log(voter: tuple[int, Path], records: Sequence[MetadataRecord], cluster: str) -> None:
    """A voter holding exactly `records` (e.g. one that stopped before the migration's end)."""
    node_id, d = voter
    with QuorumWriter([VoterDir(d, node_id=node_id, cluster_id=cluster)]) as q:
        for batch, _ in batch_records(records, base_offset=0, leader_epoch=1,
                                      timestamp_ms=1_700_000_000_000, max_records=200):
            q.append_batch(batch)


def verify(sample: Any, voters: Voters, tmp_path: Path,
           capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "verify.json"
    argv = ["verify", "--zookeeper", sample.connect, "--json", str(out)]
    for node_id, d in voters:
        argv += ["--voter", f"{node_id}={d}"]
    code = main(argv)
    captured = capsys.readouterr()
    doc = json.loads(out.read_text()) if out.exists() else {}
    if out.exists():
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
    return code, doc, captured.out + captured.err + (out.read_text() if out.exists() else "")


def triples(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(d["kind"], d["key"], d["field"]) for d in doc["differences"]]


def assert_no_secret(text: str, sample: Any) -> None:
    for secret in sample.manifest.secrets:
        assert secret not in text


@pytest.fixture
def voters(tmp_path: Path) -> Voters:
    return [(i, tmp_path / f"voter-{i}") for i in (3000, 3001, 3002)]


def test_parity_then_every_kind_of_drift(
    sample_cluster: Callable[..., Any], voters: Voters, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    snapshot = read(sample)
    write_voters(sample, voters)

    code, doc, text = verify(sample, voters, tmp_path, capsys)
    assert code == 0, text
    assert doc["parity"] is True and doc["differences"] == []
    checked = doc["checked"]
    assert checked["topic"] == 6 and checked["partition"] == 18 and checked["broker"] == 3
    assert checked["scram"] == 3 and checked["acl"] >= 7 and checked["client_quota"] >= 7
    assert "matches ZooKeeper" in text
    assert_no_secret(text, sample)

    zk = sample.client
    t0, t1, t2 = sorted(snapshot.topics)[:3]
    # ISR shrink: the state znode's version moves too (partition epoch)
    path = f"/brokers/topics/{t0}/partitions/0/state"
    state = json.loads(zk.get(path)[0])
    state["isr"] = state["isr"][:1]
    zk.set(path, json.dumps(state).encode())
    # leader change
    path = f"/brokers/topics/{t1}/partitions/1/state"
    state = json.loads(zk.get(path)[0])
    state["leader"] = state["isr"][-1]
    state["leader_epoch"] += 1
    zk.set(path, json.dumps(state).encode())
    # topic config value
    cfg_topic = sorted(snapshot.topic_configs)[0]
    path = f"/config/topics/{cfg_topic}"
    cfg = json.loads(zk.get(path)[0])
    cfg["config"]["retention.ms"] = "123456789"
    zk.set(path, json.dumps(cfg).encode())
    # new topic
    zk.create("/brokers/topics/brand-new", json.dumps(
        {"version": 3, "partitions": {"0": [1, 2]}, "adding_replicas": {},
         "removing_replicas": {}, "topic_id": "ZZZZZZZZZZZZZZZZZZZZZQ"}).encode())
    # deleted topic (its config too, as Kafka's deletion does)
    zk.delete(f"/brokers/topics/{t2}", recursive=True)
    if zk.exists(f"/config/topics/{t2}"):
        zk.delete(f"/config/topics/{t2}")
    # quota value
    path = "/config/clients/reporting-app"
    cfg = json.loads(zk.get(path)[0])
    cfg["config"]["producer_byte_rate"] = "1"
    zk.set(path, json.dumps(cfg).encode())
    # ACL added
    path = "/kafka-acl/Group/billing"
    acls = json.loads(zk.get(path)[0])
    acls["acls"].append({"principal": "User:eve", "permissionType": "Allow",
                         "operation": "Describe", "host": "*"})
    zk.set(path, json.dumps(acls).encode())
    # SCRAM credential replaced (a password change)
    path = "/config/users/bob"
    cfg = json.loads(zk.get(path)[0])
    cfg["config"]["SCRAM-SHA-512"] = (
        "salt=bmV3LXNhbHQ=,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=8192")
    zk.set(path, json.dumps(cfg).encode())

    code, doc, text = verify(sample, voters, tmp_path, capsys)
    assert code == 1
    assert doc["parity"] is False
    got = set(triples(doc))
    expected = {
        ("partition", f"{t0}-0", "isr"),
        ("partition", f"{t0}-0", "partitionEpoch"),
        ("partition", f"{t1}-1", "leader"),
        ("partition", f"{t1}-1", "leaderEpoch"),
        ("partition", f"{t1}-1", "partitionEpoch"),
        ("topic_config", cfg_topic, "retention.ms"),
        ("topic", "brand-new", "<exists>"),
        ("partition", "brand-new-0", "<exists>"),
        ("topic", t2, "<exists>"),
        ("partition", f"{t2}-0", "<exists>"),
        ("partition", f"{t2}-1", "<exists>"),
        ("partition", f"{t2}-2", "<exists>"),
        ("client_quota", "client-id=reporting-app", "producer_byte_rate"),
        ("acl", "GROUP:LITERAL:billing User:eve host=* DESCRIBE ALLOW", "<exists>"),
        ("scram", "bob/SCRAM-SHA-512", "credential"),
    }
    if t2 in snapshot.topic_configs:
        expected |= {("topic_config", t2, k) for k in snapshot.topic_configs[t2].config}
    assert got == expected
    isr = next(d for d in doc["differences"] if d["key"] == f"{t0}-0" and d["field"] == "isr")
    assert isr["zookeeper"] == state_isr(zk, t0) and len(isr["quorum"]) > 1
    assert_no_secret(text, sample)
    assert "bmV3LXNhbHQ" not in text and "c3RvcmVk" not in text  # the new credential neither
    assert "<redacted>" in text


def state_isr(zk: Any, topic: str) -> list[int]:
    return list(json.loads(zk.get(f"/brokers/topics/{topic}/partitions/0/state")[0])["isr"])


def test_voter_disagreement_and_open_transaction(
    sample_cluster: Callable[..., Any], voters: Voters, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    snapshot = read(sample)
    write_voters(sample, voters[:2])
    records = records_of(voters[0][1])
    assert [r.type for r in records[-2:]] == ["ZK_MIGRATION_STATE_RECORD",
                                                "END_TRANSACTION_RECORD"]
    meta = read_meta_properties(voters[0][1])
    assert meta is not None
    write_log(voters[2], records[:-2], meta.cluster_id)  # voter 3002 lacks the trailer
    code, doc, text = verify(sample, voters, tmp_path, capsys)
    assert code == 1
    [voter] = [d for d in doc["differences"] if d["kind"] == "voter"]
    assert voter["key"] == "3002" and voter["field"].startswith("offset ")
    # replaying voter 3002 first: its transaction is still open, so nothing is committed
    code, doc, text = verify(sample, list(reversed(voters)), tmp_path, capsys)
    kinds = [d["kind"] for d in doc["differences"]]
    assert kinds[0] == "voter" and "transaction" in kinds
    [txn] = [d for d in doc["differences"] if d["kind"] == "transaction"]
    assert txn["key"] == "ZK Migration" and txn["field"] == "<open>"
    assert ("topic", sorted(snapshot.topics)[0], "<exists>") in triples(doc)


def test_unreadable_and_corrupt_voters(
    sample_cluster: Callable[..., Any], voters: Voters, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=1, partitions_per_topic=1))
    write_voters(sample, voters)
    missing = voters[:2] + [(3002, tmp_path / "nowhere")]
    code, _, text = verify(sample, missing, tmp_path, capsys)
    assert code == 3 and "nowhere" in text
    seg = sorted((voters[0][1] / "__cluster_metadata-0").glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    data[100] ^= 0xFF
    seg.write_bytes(bytes(data))
    code, _, text = verify(sample, voters, tmp_path, capsys)
    assert code == 2 and seg.name in text
    code, _, text = verify(sample, [(1, voters[1][1]), (1, voters[2][1])], tmp_path, capsys)
    assert code == 2 and "--voter 1" in text


def test_json_to_stdout_keeps_stdout_machine_readable(
    sample_cluster: Callable[..., Any], voters: Voters, capsys: pytest.CaptureFixture[str],
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=1, partitions_per_topic=1))
    write_voters(sample, voters)
    argv = ["verify", "--zookeeper", sample.connect, "--json", "-"]
    for node_id, d in voters:
        argv += ["--voter", f"{node_id}={d}"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["parity"] is True
    assert "matches ZooKeeper" in captured.err


@pytest.mark.slow
def test_spark_parity_equals_in_process(
    sample_cluster: Callable[..., Any], voters: Voters, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ZK2KRAFT_SPARK_DRIVER_MEMORY", "512m")
    sample = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    snapshot = read(sample)
    write_voters(sample, voters)
    topic = sorted(snapshot.topics)[0]
    sample.client.delete(f"/brokers/topics/{topic}", recursive=True)
    path = "/config/clients/reporting-app"
    cfg = json.loads(sample.client.get(path)[0])
    cfg["config"]["producer_byte_rate"] = "7"
    sample.client.set(path, json.dumps(cfg).encode())
    code, in_process, _ = verify(sample, voters, tmp_path, capsys)
    assert code == 1 and len(in_process["differences"]) >= 4
    out = tmp_path / "spark.json"
    argv = ["verify", "--zookeeper", sample.connect, "--json", str(out), "--quiet",
            "--spark-master", "local[1]"]
    for node_id, d in voters:
        argv += ["--voter", f"{node_id}={d}"]
    assert main(argv) == 1
    spark = json.loads(out.read_text())
    assert spark["differences"] == in_process["differences"]
    assert spark["checked"] == in_process["checked"]


def test_migrate_cli_then_verify_cli_end_to_end(
    sample_cluster: Callable[..., Any], voters: Voters, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The operator's sequence: `migrate --cutover none`, then `verify`, then drift, `verify`."""
    sample = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=3))
    argv = ["migrate", "--zookeeper", sample.connect, "--cutover", "none",
            "--spark-master", "in-process", "--quiet", "--json", str(tmp_path / "m.json")]
    for node_id, d in voters:
        argv += ["--voter", f"{node_id}={d}"]
    assert main(argv) == 0, capsys.readouterr().err
    migrate_out = capsys.readouterr()
    code, doc, text = verify(sample, voters, tmp_path, capsys)
    assert code == 0, text
    assert doc["provenance"]["last_offset"] == json.loads(
        (tmp_path / "m.json").read_text())["last_offset"]
    states = read(sample).partition_states
    (topic, p), moved = max(states.items(), key=lambda kv: (kv[1].stat.version, kv[0]))
    assert moved.stat.version > 0  # the generator updates some states more than once
    sample.client.delete(f"/brokers/topics/{topic}/partitions/{p}", recursive=True)
    code, doc, text = verify(sample, voters, tmp_path, capsys)
    assert code == 1
    # a missing state znode: Kafka's default rule (ISR = replicas, leader = first, epochs 0)
    [epoch] = [d for d in doc["differences"] if d["field"] == "partitionEpoch"]
    assert (epoch["key"], epoch["zookeeper"], epoch["quorum"]) == (
        f"{topic}-{p}", 0, moved.stat.version)
    assert_no_secret(text + migrate_out.out + migrate_out.err
                     + (tmp_path / "m.json").read_text(), sample)


def test_bad_flags_exit_2_before_anything_is_read(
    voters: Voters, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    closed = "127.0.0.1:1"  # nothing listens: a flag error must come first
    code = main(["verify", "--zookeeper", closed, "--voter", f"1={voters[0][1]}",
                 "--json", str(tmp_path / "no-such-dir" / "v.json")])
    assert code == 2 and "--json" in capsys.readouterr().err
    code = main(["verify", "--zookeeper", closed, "--voter", f"1={voters[0][1]}",
                 "--voter", f"2={voters[0][1]}"])
    assert code == 2 and "same or nested directory" in capsys.readouterr().err
    code = main(["verify", "--zookeeper", closed, "--voter", "x=/tmp"])  # argparse's refusal
    assert code == 2 and "--voter" in capsys.readouterr().err


def test_unreachable_zookeeper_exits_3(
    sample_cluster: Callable[..., Any], voters: Voters, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=1, partitions_per_topic=1))
    write_voters(sample, voters)
    argv = ["verify", "--zookeeper", "127.0.0.1:1", "--zk-timeout", "2"]
    for node_id, d in voters:
        argv += ["--voter", f"{node_id}={d}"]
    assert main(argv) == 3
    assert "127.0.0.1:1" in capsys.readouterr().err
