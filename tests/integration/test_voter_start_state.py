"""What a controller reads before the log, judged the same way by verify, plan and migrate
(issue 7, defects 4, 5 and 6), through the CLI on real ZooKeeper and real voter directories.

A voter can hold a log that matches ZooKeeper and still not start: `meta.properties` naming
another cluster or node (swapped `--voter` ids), a `quorum-state` from another quorum, a
`partition.metadata` with another topic id. verify must report it (exit 1), plan must block on
it (exit 1) because migrate refuses it (exit 1), and a migrate re-run must not call it a no-op.
A damaged file is bad input (exit 2) in all three. A voter whose `quorum-state` shows it took
part in a quorum (epoch 5, voted for 3002) is not reset to epoch 1.

Expected values are written by hand: ids, files and fields as an operator would check them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
IDS = (3000, 3001, 3002)
OTHER_CLUSTER = "OtherClusterIdAAAAAAAA"
QUORUM_STATE = "__cluster_metadata-0/quorum-state"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "250"})


def voter_flags(root: Path, pairs: tuple[tuple[int, str], ...] | None = None) -> list[str]:
    pairs = pairs or tuple((i, f"c{i}") for i in IDS)
    return [f"--voter={i}={root / d}" for i, d in pairs]


@pytest.fixture
def migrated(sample_cluster: Any, tmp_path: Path) -> tuple[Any, Path]:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    r = run("migrate", "--zookeeper", cluster.connect, *voter_flags(tmp_path),
            "--spark-master", "in-process", "--quiet")
    assert r.returncode == 0, r.stderr
    r = run("verify", "--zookeeper", cluster.connect, *voter_flags(tmp_path), "--quiet")
    assert r.returncode == 0, r.stderr
    return cluster, tmp_path


def verify_doc(cluster: Any, root: Path, *flags: str) -> tuple[int, dict[str, Any], str]:
    out = root / "verify.json"
    r = run("verify", "--zookeeper", cluster.connect, *flags, "--json", str(out), "--quiet")
    doc = json.loads(out.read_text()) if out.exists() and r.returncode in (0, 1) else {}
    return r.returncode, doc, r.stderr


def voter_files(doc: dict[str, Any]) -> list[tuple[str, str, Any, Any]]:
    return sorted((d["key"], d["field"], d["zookeeper"], d["quorum"])
                  for d in doc["differences"] if d["kind"] == "voter_files")


def plan_blockers(cluster: Any, root: Path, *flags: str) -> tuple[int, list[tuple[str, str]]]:
    out = root / "plan.json"
    r = run("plan", "--zookeeper", cluster.connect, *flags, "--json", str(out), "--quiet")
    if r.returncode not in (0, 1):
        return r.returncode, []
    return r.returncode, [(b["code"], b["path"]) for b in json.loads(out.read_text())["blockers"]]


def plan_voter_files(root: Path) -> dict[int, list[tuple[str, str, Any, Any]]]:
    """Each voter's `voter_files` differences in the last `plan --json` (`plan_blockers`)."""
    voters = json.loads((root / "plan.json").read_text())["voters"]
    return {v["node_id"]: sorted((d["key"], d["field"], d["zookeeper"], d["quorum"])
                                 for d in v["differences"] if d["kind"] == "voter_files")
            for v in voters}


def migrate_again(cluster: Any, root: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return run("migrate", "--zookeeper", cluster.connect, *flags, "--spark-master",
               "in-process")


def test_swapped_voter_ids_fail_verify_plan_and_migrate(migrated: tuple[Any, Path]) -> None:
    cluster, root = migrated
    swapped = voter_flags(root, ((3000, "c3001"), (3001, "c3000"), (3002, "c3002")))
    code, doc, err = verify_doc(cluster, root, *swapped)
    assert code == 1, err
    assert voter_files(doc) == [("3000", "meta.properties node.id", 3000, 3001),
                                ("3001", "meta.properties node.id", 3001, 3000)]
    code, blockers = plan_blockers(cluster, root, *swapped)
    assert code == 1
    assert blockers == [("VOTER_STATE", str(root / "c3001")), ("VOTER_STATE", str(root / "c3000"))]
    r = migrate_again(cluster, root, *swapped)
    assert r.returncode == 1 and "no-op" not in r.stdout + r.stderr


def test_foreign_cluster_id_fails_verify_plan_and_migrate(migrated: tuple[Any, Path]) -> None:
    cluster, root = migrated
    meta = root / "c3001" / "meta.properties"
    meta.write_text(meta.read_text().replace(f"cluster.id={cluster.manifest.cluster_id}",
                                             f"cluster.id={OTHER_CLUSTER}"))
    code, doc, err = verify_doc(cluster, root, *voter_flags(root))
    assert code == 1, err
    assert voter_files(doc) == [("3001", "meta.properties cluster.id",
                                 cluster.manifest.cluster_id, OTHER_CLUSTER)]
    assert plan_blockers(cluster, root, *voter_flags(root)) == (
        1, [("VOTER_STATE", str(root / "c3001"))])
    r = migrate_again(cluster, root, *voter_flags(root))
    assert r.returncode == 1 and OTHER_CLUSTER in r.stderr
    assert "no-op" not in r.stdout + r.stderr


def test_quorum_state_of_another_voter_set_is_reported_and_rewritten(
    migrated: tuple[Any, Path]
) -> None:
    cluster, root = migrated
    qs = root / "c3002" / QUORUM_STATE
    state = json.loads(qs.read_text())
    assert state["currentVoters"] == [{"voterId": 3000}, {"voterId": 3001}, {"voterId": 3002}]
    state["currentVoters"] = [{"voterId": 3000}, {"voterId": 3001}, {"voterId": 3005}]
    qs.write_text(json.dumps(state))
    code, doc, err = verify_doc(cluster, root, *voter_flags(root))
    assert code == 1, err
    assert voter_files(doc) == [("3002", "quorum-state currentVoters", [3000, 3001, 3002],
                                 [3000, 3001, 3005])]
    # epoch 1 and no vote: no controller acted on it, so migrate rewrites it; plan says READY
    # but reports the same difference in that voter's parity (it said "parity matches")
    assert plan_blockers(cluster, root, *voter_flags(root)) == (0, [])
    assert plan_voter_files(root) == {3000: [], 3001: [], 3002: [
        ("3002", "quorum-state currentVoters", [3000, 3001, 3002], [3000, 3001, 3005])]}
    r = migrate_again(cluster, root, *voter_flags(root))
    assert r.returncode == 0, r.stderr
    assert "no-op" not in r.stdout and "rewrote the quorum-state of voter(s) 3002" in r.stdout
    assert json.loads(qs.read_text())["currentVoters"] == [
        {"voterId": 3000}, {"voterId": 3001}, {"voterId": 3002}]
    assert verify_doc(cluster, root, *voter_flags(root))[0] == 0


def test_quorum_state_of_a_later_epoch_is_never_a_no_op(migrated: tuple[Any, Path]) -> None:
    cluster, root = migrated
    qs = root / "c3002" / QUORUM_STATE
    state = json.loads(qs.read_text())
    state.update(leaderEpoch=4, leaderId=3005,
                 currentVoters=[{"voterId": 3000}, {"voterId": 3001}, {"voterId": 3005}])
    qs.write_text(json.dumps(state))
    code, doc, err = verify_doc(cluster, root, *voter_flags(root))
    assert code == 1, err
    assert voter_files(doc) == [
        ("3002", "quorum-state currentVoters", [3000, 3001, 3002], [3000, 3001, 3005])]
    assert plan_blockers(cluster, root, *voter_flags(root)) == (
        1, [("VOTER_STATE", str(root / "c3002"))])
    r = migrate_again(cluster, root, *voter_flags(root))
    assert r.returncode == 1, r.stderr
    assert "no-op" not in r.stdout + r.stderr and "currentVoters" in r.stderr


def test_foreign_partition_metadata_fails_verify(migrated: tuple[Any, Path]) -> None:
    cluster, root = migrated
    pm = root / "c3000" / "__cluster_metadata-0" / "partition.metadata"
    assert pm.read_text() == "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    pm.write_text("version: 0\ntopic_id: Xpp3Z_egYWE0W-6cpvtoGg")
    code, doc, err = verify_doc(cluster, root, *voter_flags(root))
    assert code == 1, err
    assert voter_files(doc) == [("3000", "partition.metadata topic_id",
                                 "AAAAAAAAAAAAAAAAAAAAAQ", "Xpp3Z_egYWE0W-6cpvtoGg")]
    r = migrate_again(cluster, root, *voter_flags(root))
    assert r.returncode == 1 and "no-op" not in r.stdout + r.stderr


def test_damaged_quorum_state_is_bad_input_everywhere(migrated: tuple[Any, Path]) -> None:
    cluster, root = migrated
    qs = root / "c3001" / QUORUM_STATE
    qs.write_text('{"leaderEpoch": 1')
    for r in (run("verify", "--zookeeper", cluster.connect, *voter_flags(root)),
              run("plan", "--zookeeper", cluster.connect, *voter_flags(root)),
              migrate_again(cluster, root, *voter_flags(root))):
        assert r.returncode == 2, r.stderr
        assert str(qs) in r.stderr


def test_quorum_state_of_a_running_quorum_is_not_reset_to_epoch_1(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = tmp_path / "c3000"
    (voter / "__cluster_metadata-0").mkdir(parents=True)
    (voter / "meta.properties").write_text(
        f"version=1\ncluster.id={cluster.manifest.cluster_id}\nnode.id=3000\n")
    held = json.dumps({"clusterId": "", "leaderId": -1, "leaderEpoch": 5, "votedId": 3002,
                       "appliedOffset": 0, "currentVoters": [{"voterId": v} for v in IDS],
                       "data_version": 0})
    (voter / QUORUM_STATE).write_text(held)
    flags = voter_flags(tmp_path)
    code, blockers = plan_blockers(cluster, tmp_path, *flags)
    assert code == 1 and blockers == [("VOTER_STATE", str(voter))]
    r = migrate_again(cluster, tmp_path, *flags)
    assert r.returncode == 1, r.stderr
    assert "epoch 5" in r.stderr and "votedId 3002" in r.stderr
    assert (voter / QUORUM_STATE).read_text() == held  # untouched
    assert not list((voter / "__cluster_metadata-0").glob("*.log"))
    assert not (tmp_path / "c3001").exists() and not (tmp_path / "c3002").exists()


QUORUM = "3000@c0.example:9093,3001@c1.example:9093,3002@c2.example:9093"


def test_one_controllers_own_host_voter_set_not_checked_without_quorum_voters(
    migrated: tuple[Any, Path]
) -> None:
    """Issue 17, item 6: `verify --voter 3000=DIR` on one controller's host. Its quorum-state
    lists 3000, 3001 and 3002 (migrate wrote it); verify cannot know the controllers'
    controller.quorum.voters, so the voter set is 'not checked', not a difference."""
    cluster, root = migrated
    one = voter_flags(root, ((3000, "c3000"),))
    code, doc, err = verify_doc(cluster, root, *one)
    assert code == 0, err
    assert doc["parity"] is True and doc["differences"] == []
    assert [(d["key"], d["field"], d["zookeeper"], d["quorum"]) for d in doc["not_checked"]] == [
        ("3000", "quorum-state currentVoters", "not checked: pass --quorum-voters",
         [3000, 3001, 3002])]
    r = run("verify", "--zookeeper", cluster.connect, *one)
    assert r.returncode == 0 and "not checked" in r.stdout, r.stdout + r.stderr
    # told the voter set, verify checks it: the right one passes, a wrong one is a difference
    code, doc, err = verify_doc(cluster, root, *one, "--quorum-voters", QUORUM)
    assert code == 0, err
    assert doc["not_checked"] == [] and doc["differences"] == []
    code, doc, err = verify_doc(cluster, root, *one, "--quorum-voters",
                                QUORUM.replace("3002@", "3003@"))
    assert code == 1, err
    assert voter_files(doc) == [("3000", "quorum-state currentVoters", [3000, 3001, 3003],
                                 [3000, 3001, 3002])]


def test_a_quorum_state_that_lacks_a_given_voter_is_a_difference_without_quorum_voters(
    migrated: tuple[Any, Path]
) -> None:
    """Every --voter is a voter: a file that does not list one is wrong whatever the rest of
    the voter set is. verify (exit 1), plan's parity and migrate (which rewrites a file no
    controller acted on) judge it alike."""
    cluster, root = migrated
    qs = root / "c3000" / QUORUM_STATE
    state = json.loads(qs.read_text())
    state["currentVoters"] = [{"voterId": 3001}, {"voterId": 3002}, {"voterId": 3005}]
    qs.write_text(json.dumps(state))
    one = voter_flags(root, ((3000, "c3000"),))
    code, doc, err = verify_doc(cluster, root, *one)
    assert code == 1, err
    assert voter_files(doc) == [("3000", "quorum-state currentVoters", [3000],
                                 [3001, 3002, 3005])]
    assert doc["not_checked"] == []
    assert plan_blockers(cluster, root, *voter_flags(root)) == (0, [])
    assert plan_voter_files(root)[3000] == [
        ("3000", "quorum-state currentVoters", [3000, 3001, 3002], [3001, 3002, 3005])]
    r = migrate_again(cluster, root, *voter_flags(root))
    assert r.returncode == 0 and "rewrote the quorum-state of voter(s) 3000" in r.stdout, r.stderr
    for flags in (one, voter_flags(root)):
        code, doc, err = verify_doc(cluster, root, *flags, "--quorum-voters", QUORUM)
        assert (code, doc["differences"], doc["not_checked"]) == (0, [], []), err
