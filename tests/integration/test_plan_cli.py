"""`zk2kraft plan` against a real ZooKeeper: every blocker and warning found by path, exit codes,
the JSON document, output routing and file modes.

Trees are written here with kazoo in the exact formats ZK-mode Kafka 3.x uses
(Kafka's `ZkData.scala`), each under its own chroot, so every test also
exercises the chroot part of the connect string. The CLI runs in-process through `cli.main` for
most tests and as a subprocess where stdout bytes and timing matter.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from migrate.cli import main
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = (
    "/brokers/ids", "/brokers/topics", "/brokers/seqid", "/config/changes", "/config/topics",
    "/config/clients", "/config/users", "/config/brokers", "/config/ips", "/admin/delete_topics",
    "/isr_change_notification", "/log_dir_event_notification", "/consumers",
)
TOPIC_IDS = {
    "orders": "tGCUt6tCR3a2R1NDlMdp3Q", "moving": "hnzKIHTdRVCQ1p0bd4nRZw",
    "states": "Zq2sL6pXQ6uYk3e7oWJm0g", "ghost": "b3JkZXJzLXRvcGljLWlkMQ",
    "doomed": "ZG9vbWVkLXRvcGljLWlkMQ",
}


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode()


class Tree:
    """Writes a ZK-mode Kafka tree through a chrooted kazoo client (its session holds the
    ephemeral broker and controller znodes)."""

    def __init__(self, client: KazooClient) -> None:
        self.c = client
        for path in TOP_LEVEL:
            client.ensure_path(path)
        client.create("/cluster/id", _j({"version": "1", "id": "q1Sh-9_ISia_zwGINzRvyQ"}),
                      makepath=True)
        client.create("/controller_epoch", b"1")
        client.create("/feature", _j({"version": 2, "status": 1, "features": {}}))
        client.create("/latest_producer_id_block", _j(
            {"version": 1, "broker": 1, "block_start": "0", "block_end": "999"}))

    def broker(self, broker_id: int) -> None:
        self.c.create(f"/brokers/ids/{broker_id}", _j({
            "version": 5, "host": "localhost", "port": 9092 + broker_id, "jmx_port": -1,
            "timestamp": "1700000000000",
            "endpoints": [f"PLAINTEXT://localhost:{9092 + broker_id}"],
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
            "features": {},
        }), ephemeral=True)

    def controller(self, broker_id: int = 1, *, kraft_epoch: int = -1, ephemeral: bool = True
                   ) -> None:
        self.c.create("/controller", _j({
            "version": 2, "brokerid": broker_id, "timestamp": "1700000000000",
            "kraftControllerEpoch": kraft_epoch}), ephemeral=ephemeral)

    def topic(self, name: str, assignment: dict[int, list[int]], *, topic_id: str | None = "",
              adding: dict[int, list[int]] | None = None,
              removing: dict[int, list[int]] | None = None) -> None:
        data: dict[str, Any] = {
            "version": 3,
            "partitions": {str(p): r for p, r in assignment.items()},
            "adding_replicas": {str(p): r for p, r in (adding or {}).items()},
            "removing_replicas": {str(p): r for p, r in (removing or {}).items()},
        }
        if topic_id is not None:
            data["topic_id"] = topic_id or TOPIC_IDS[name]
        self.c.create(f"/brokers/topics/{name}", _j(data))
        self.c.create(f"/brokers/topics/{name}/partitions")

    def state(self, topic: str, partition: int, leader: int, isr: list[int],
              recovering: bool = False) -> None:
        data: dict[str, Any] = {"version": 1, "leader": leader, "leader_epoch": 3,
                                "controller_epoch": 1, "isr": isr}
        if recovering:
            data["leader_recovery_state"] = 1
        path = f"/brokers/topics/{topic}/partitions/{partition}"
        self.c.create(path)
        self.c.create(f"{path}/state", _j(data))

    def healthy(self) -> None:
        """Three brokers, a ZK controller and one healthy topic with two partitions."""
        for b in (1, 2, 3):
            self.broker(b)
        self.controller()
        self.topic("orders", {0: [1, 2, 3], 1: [2, 3, 1]})
        self.state("orders", 0, 1, [1, 2, 3])
        self.state("orders", 1, 2, [2, 3, 1])


@pytest.fixture
def tree(zk_chroot_client: KazooClient) -> Tree:
    return Tree(zk_chroot_client)


@pytest.fixture
def connect(zk_server: Any, zk_chroot: str) -> str:
    return f"{zk_server.connect}{zk_chroot}"


RunPlan = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run_plan(capsys: pytest.CaptureFixture[str], connect: str) -> RunPlan:
    def run(*extra: str, zookeeper: str | None = None) -> tuple[int, str, str]:
        code = main(["plan", "--zookeeper", zookeeper or connect, "--zk-timeout", "10", *extra])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _doc(run_plan: RunPlan, *extra: str, zookeeper: str | None = None
         ) -> tuple[int, dict[str, Any]]:
    code, out, err = run_plan("--json", "-", *extra, zookeeper=zookeeper)
    return code, json.loads(out)


def _found(findings: list[dict[str, str]]) -> set[tuple[str, str]]:
    return {(f["code"], f["path"]) for f in findings}


def test_clean_tree_passes_with_exit_0_and_the_designs_document(
    tree: Tree, run_plan: RunPlan
) -> None:
    tree.healthy()
    code, doc = _doc(run_plan)
    assert code == 0
    assert list(doc) == ["blockers", "warnings", "records", "brokers", "topics", "partitions",
                         "source"]
    assert doc["blockers"] == [] and doc["warnings"] == []
    assert (doc["brokers"], doc["topics"], doc["partitions"]) == (3, 1, 2)
    assert doc["records"]["TOPIC_RECORD"] == 1
    assert doc["records"]["PARTITION_RECORD"] == 2
    assert all(isinstance(n, int) and n > 0 for n in doc["records"].values())


def test_clean_tree_prints_tables_on_stdout(tree: Tree, run_plan: RunPlan) -> None:
    tree.healthy()
    code, out, err = run_plan()
    assert code == 0
    assert "READY" in out and "TOPIC_RECORD" in out and "partitions" in out
    assert err == ""


def test_every_blocker_is_found_by_path(tree: Tree, run_plan: RunPlan) -> None:
    tree.healthy()
    tree.topic("legacy", {0: [1]}, topic_id=None)
    tree.state("legacy", 0, 1, [1])
    tree.topic("ghost", {0: [1, 9]})
    tree.state("ghost", 0, 1, [1])
    tree.c.create("/log_dir_event_notification/log_dir_event_0000000000",
                  _j({"version": 1, "broker": 2, "event": 1}))
    tree.c.create("/migration", _j({"version": 0, "kraft_controller_id": 3000,
                                    "kraft_controller_epoch": 1, "kraft_metadata_offset": -1,
                                    "kraft_metadata_epoch": -1}))
    code, doc = _doc(run_plan)
    assert code == 1
    found = _found(doc["blockers"])
    assert ("TOPIC_WITHOUT_ID", "/brokers/topics/legacy") in found
    assert ("BROKER_NOT_REGISTERED", "/brokers/topics/ghost") in found
    assert ("LOG_DIR_EVENT_PENDING",
            "/log_dir_event_notification/log_dir_event_0000000000") in found
    assert ("MIGRATION_ZNODE_EXISTS", "/migration") in found
    by_code = {f["code"]: f for f in doc["blockers"]}
    assert "broker 2" in by_code["LOG_DIR_EVENT_PENDING"]["message"]
    assert "9" in by_code["BROKER_NOT_REGISTERED"]["message"]


@pytest.mark.parametrize(("kraft_epoch", "ephemeral"), [(5, False), (-1, False), (2, True)])
def test_kraft_controller_is_a_blocker(
    tree: Tree, run_plan: RunPlan, kraft_epoch: int, ephemeral: bool
) -> None:
    for b in (1, 2, 3):
        tree.broker(b)
    tree.controller(3000, kraft_epoch=kraft_epoch, ephemeral=ephemeral)
    code, doc = _doc(run_plan)
    assert code == 1
    assert _found(doc["blockers"]) == {("CONTROLLER_IS_KRAFT", "/controller")}


def test_every_warning_is_found_by_path_and_pending_deletions_are_not_counted(
    tree: Tree, run_plan: RunPlan
) -> None:
    tree.healthy()
    tree.topic("doomed", {0: [1], 1: [2], 2: [3]})
    tree.c.create("/admin/delete_topics/doomed")
    tree.topic("moving", {0: [1, 2, 3]}, adding={0: [3]}, removing={0: [1]})
    tree.state("moving", 0, 1, [1, 2])
    tree.topic("states", {p: [1, 2] for p in range(5)})
    tree.c.create("/brokers/topics/states/partitions/0")  # partition znode, no state
    tree.state("states", 1, -1, [1])  # offline
    tree.state("states", 2, 2, [1])  # leader not in ISR
    tree.state("states", 3, 1, [1, 3])  # ISR not within replicas
    tree.state("states", 4, 1, [1], recovering=True)
    code, doc = _doc(run_plan)
    assert code == 0, doc["blockers"]
    st = "/brokers/topics/states/partitions/{}/state"
    assert _found(doc["warnings"]) == {
        ("TOPIC_PENDING_DELETION", "/admin/delete_topics/doomed"),
        ("REASSIGNMENT_IN_FLIGHT", "/brokers/topics/moving"),
        ("PARTITION_STATE_MISSING", st.format(0)),
        ("PARTITION_OFFLINE", st.format(1)),
        ("LEADER_NOT_IN_ISR", st.format(2)),
        ("ISR_NOT_IN_REPLICAS", st.format(3)),
        ("LEADER_RECOVERING", st.format(4)),
    }
    # orders (2) + moving (1) + states (5); doomed's 3 partitions are not migrated
    assert (doc["topics"], doc["partitions"]) == (3, 8)
    assert doc["records"]["TOPIC_RECORD"] == 3
    assert doc["records"]["PARTITION_RECORD"] == 8


def test_encrypted_broker_password_without_secret_is_a_translation_blocker(
    tree: Tree, run_plan: RunPlan
) -> None:
    from migrate.translate.password import encode_password

    tree.healthy()
    secret_value = "s3cr3t-keystore-pw"
    encoded = encode_password(secret_value, "encoder-secret")
    tree.c.create("/config/brokers/1", _j({"version": 1, "config": {
        "listener.name.internal.ssl.keystore.password": encoded}}))
    code, out, err = run_plan("--json", "-")
    doc = json.loads(out)
    assert code == 1
    assert any(f["path"] == "/config/brokers/1" for f in doc["blockers"]), doc["blockers"]
    for text in (out, err):
        assert secret_value not in text and encoded not in text
    code, doc = _doc(run_plan, "--password-encoder-secret", "encoder-secret")
    assert code == 0, doc["blockers"]


def test_json_dash_keeps_stdout_machine_readable_and_tables_on_stderr(
    tree: Tree, run_plan: RunPlan
) -> None:
    tree.healthy()
    tree.topic("legacy", {0: [1]}, topic_id=None)
    code, out, err = run_plan("--json", "-")
    assert code == 1
    assert json.loads(out)["blockers"][0]["code"] == "TOPIC_WITHOUT_ID"
    assert "BLOCKED" in err and "TOPIC_WITHOUT_ID" in err


def test_quiet_prints_nothing_but_keeps_the_exit_code(tree: Tree, run_plan: RunPlan) -> None:
    tree.healthy()
    tree.topic("legacy", {0: [1]}, topic_id=None)
    assert run_plan("--quiet") == (1, "", "")


def test_json_file_is_0600_and_replaces_an_existing_file(
    tree: Tree, run_plan: RunPlan, tmp_path: Path
) -> None:
    tree.healthy()
    target = tmp_path / "plan.json"
    target.write_text("old")
    target.chmod(0o644)
    code, out, _ = run_plan("--json", str(target))
    assert code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text())["partitions"] == 2
    assert "READY" in out  # human tables still on the terminal
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]  # no temp file left


def test_malformed_znode_exits_2_naming_the_path(
    tree: Tree, run_plan: RunPlan, tmp_path: Path
) -> None:
    tree.healthy()
    tree.c.set("/brokers/topics/orders/partitions/1/state", b'{"version":1,"leader":')
    target = tmp_path / "plan.json"
    code, out, err = run_plan("--json", str(target))
    assert code == 2
    assert "/brokers/topics/orders/partitions/1/state" in err
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_unreachable_zookeeper_exits_3_within_the_timeout() -> None:
    # how long this takes is measured by benchmarks/timings.py (no timing asserts in tests)
    port = free_port()
    proc = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "plan", "--zookeeper", f"127.0.0.1:{port}/kafka",
         "--zk-timeout", "3", "--json", "-"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == ""
    assert f"127.0.0.1:{port}" in proc.stderr


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--metadata-version", "9.9-IV9"], "--metadata-version"),
        (["--metadata-version", "3.3-IV3"], "--metadata-version"),
        (["--voter", "x"], "--voter"),
        (["--voter", "1=/tmp", "--voter", "1=/var"], "--voter"),
        (["--zk-timeout", "-1"], "--zk-timeout"),
        (["--zk-digest", "nocolon"], "--zk-digest"),
        (["--zk-tls-ca", "/nonexistent.pem"], "--zk-tls-ca"),
        (["--zk-tls", "--zk-tls-ca", "/nonexistent.pem"], "--zk-tls-ca"),
        (["--json", "/nonexistent-dir/plan.json"], "--json"),
        (["--json", "-", "--html", "-"], "--json"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag_before_connecting(
    capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    # a closed port: had anything tried to connect, the exit would be 3 after the timeout
    argv = ["plan", "--zookeeper", f"127.0.0.1:{free_port()}", "--zk-timeout", "20", *flags]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse-level errors
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert named in err
    assert "127.0.0.1" not in err  # no connection was attempted (that would name the server)


@pytest.mark.parametrize("connect", ["127.0.0.1:notaport", "127.0.0.1:99999", ":2181",
                                     "127.0.0.1:2181/a//b", ""])
def test_bad_connect_string_exits_2_naming_zookeeper(
    capsys: pytest.CaptureFixture[str], connect: str
) -> None:
    assert main(["plan", "--zookeeper", connect]) == 2
    assert "--zookeeper" in capsys.readouterr().err


def test_chroot_isolates_clusters(tree: Tree, run_plan: RunPlan, zk_server: Any,
                                  _zk_admin: KazooClient) -> None:
    tree.healthy()
    other = f"/other_{os.getpid()}_{time.monotonic_ns()}"
    _zk_admin.create(f"{other}/brokers/topics/legacy", _j({"version": 3, "partitions": {}}),
                     makepath=True)
    try:
        code, doc = _doc(run_plan)  # our chroot: healthy, the other chroot's topic unseen
        assert code == 0 and doc["topics"] == 1
    finally:
        _zk_admin.delete(other, recursive=True)


# --- on trees written by the sample generator (samples) ---------------------------------

CASE_CODES = {
    "topic_without_id": "TOPIC_WITHOUT_ID",
    "log_dir_event": "LOG_DIR_EVENT_PENDING",
    "unregistered_broker": "BROKER_NOT_REGISTERED",
    "migration_znode": "MIGRATION_ZNODE_EXISTS",
    "kraft_controller": "CONTROLLER_IS_KRAFT",
    "pending_deletion": "TOPIC_PENDING_DELETION",
    "in_flight_reassignment": "REASSIGNMENT_IN_FLIGHT",
    "missing_partition_state": "PARTITION_STATE_MISSING",
    "leader_not_in_isr": "LEADER_NOT_IN_ISR",
    "isr_outside_replicas": "ISR_NOT_IN_REPLICAS",
    "offline_partition": "PARTITION_OFFLINE",
    "recovering_partition": "LEADER_RECOVERING",
}


def test_generated_clean_tree_passes(sample_cluster: Any, run_plan: RunPlan) -> None:
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.clean())
    code, doc = _doc(run_plan, zookeeper=cluster.connect)
    assert code == 0, doc["blockers"]
    assert doc["blockers"] == [] and doc["warnings"] == []
    m = cluster.manifest
    assert (doc["brokers"], doc["topics"], doc["partitions"]) == (
        m.brokers, m.topics, m.partitions_to_migrate)
    assert doc["records"]["PARTITION_RECORD"] == m.partitions_to_migrate


def test_generated_tree_every_blocker_and_warning_by_path(
    sample_cluster: Any, run_plan: RunPlan
) -> None:
    from samples import SampleCase, SampleSpec

    cluster = sample_cluster(SampleSpec.everything())
    m = cluster.manifest
    code, out, err = run_plan("--json", "-", zookeeper=cluster.connect)
    doc = json.loads(out)
    assert code == 1
    blockers, warnings = _found(doc["blockers"]), _found(doc["warnings"])
    for case in SampleCase.BLOCKERS:
        for path in m.paths[case]:
            assert (CASE_CODES[case], path) in blockers, (case, path, blockers)
    for case in SampleCase.WARNINGS:
        for path in m.paths[case]:
            assert (CASE_CODES[case], path) in warnings, (case, path, warnings)
    # counted as written: the id-less topic's partitions are out (one rule, migrating_topic)
    assert doc["partitions"] == doc["records"]["PARTITION_RECORD"] < m.partitions_to_migrate
    assert m.partitions_to_migrate < m.partitions_written
    for secret in m.secrets:  # SCRAM salts and keys never reach any output
        assert secret not in out and secret not in err


# --- dry-run reports (issue 4 item 5) --------------------------------------------------------


def test_html_report_is_0600_self_contained_and_secret_free(
    sample_cluster: Any, run_plan: RunPlan, tmp_path: Path
) -> None:
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.everything())
    page = tmp_path / "plan.html"
    code, out, _ = run_plan("--html", str(page), "--quiet", zookeeper=cluster.connect)
    assert code == 1 and out == ""
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
    assert "TOPIC_WITHOUT_ID" in html and "PARTITION_RECORD" in html
    assert "<script src" not in html and "<link" not in html
    for secret in cluster.manifest.secrets:
        assert secret not in html


def test_voter_without_a_log_shows_samples_and_nothing_to_diff(
    sample_cluster: Any, run_plan: RunPlan, tmp_path: Path
) -> None:
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.clean())
    empty, missing = tmp_path / "v1", tmp_path / "v2"
    empty.mkdir()
    code, out, err = run_plan("--voter", f"3000={empty}", "--voter", f"3001={missing}",
                              zookeeper=cluster.connect)
    assert code == 0, err
    assert "sample records" in out and "TOPIC_RECORD" in out
    assert out.count("holds no metadata log yet") == 2
    assert "SCRAM" in out  # the credential records are sampled ...
    for secret in cluster.manifest.secrets:  # ... but their salts and keys never shown
        assert secret not in out
    assert list(empty.iterdir()) == [] and not missing.exists()  # plan wrote nothing


@pytest.mark.slow  # `migrate` starts Spark
def test_voter_diff_after_migrate_then_drift(
    sample_cluster: Any, run_plan: RunPlan, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.clean(topics=3))
    voter = tmp_path / "voter1"
    code = main(["migrate", "--zookeeper", cluster.connect, "--voter", f"3000={voter}",
                 "--cutover", "none", "--quiet"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    before = sorted(p.name for p in (voter / "__cluster_metadata-0").iterdir())

    code, out, err = run_plan("--voter", f"3000={voter}", zookeeper=cluster.connect)
    assert code == 0, err
    assert "matches ZooKeeper" in out or "parity: the voters' log matches ZooKeeper" in out

    state = "/brokers/topics/topic-00000/partitions/0/state"
    data = json.loads(cluster.client.get(state)[0])
    data["isr"] = data["isr"][:1]
    cluster.client.set(state, _j(data))
    page = tmp_path / "plan.html"
    doc_path = tmp_path / "plan.json"
    code, out, err = run_plan("--voter", f"3000={voter}", "--html", str(page),
                              "--json", str(doc_path), zookeeper=cluster.connect)
    # migrate would refuse this voter (it holds a different log now), so plan blocks: the two
    # agree (issue 7, defect 6)
    assert code == 1, err
    assert "VOTER_STATE" in out and str(voter) in out
    # the ISR changed, and so did the state znode's version (the partition epoch)
    assert "2 differences" in out, out
    assert "topic-00000-0" in out and "isr" in out and "partitionEpoch" in out
    doc = json.loads(doc_path.read_text())
    assert [(b["code"], b["path"]) for b in doc["blockers"]] == [("VOTER_STATE", str(voter))]
    assert [(v["node_id"], v["holds_log"], v["parity"]) for v in doc["voters"]] == [
        (3000, True, False)]
    assert sorted((d["kind"], d["key"], d["field"]) for d in doc["voters"][0]["differences"]) \
        == [("partition", "topic-00000-0", "isr"),
            ("partition", "topic-00000-0", "partitionEpoch")]
    html = page.read_text()
    assert "topic-00000" in html and "isr" in html
    # plan wrote nothing into the voter
    assert sorted(p.name for p in (voter / "__cluster_metadata-0").iterdir()) == before
    # ... and migrate refuses it, as plan said
    code = main(["migrate", "--zookeeper", cluster.connect, "--voter", f"3000={voter}",
                 "--cutover", "none", "--quiet"])
    assert code == 1
    assert sorted(p.name for p in (voter / "__cluster_metadata-0").iterdir()) == before


def test_digest_auth_reads_a_protected_tree_and_never_prints_the_password(
    zk_server: Any, zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from kazoo.security import make_digest_acl

    password = "digest-pw-Kq42"
    acl = [make_digest_acl("kafka", password, all=True)]
    client = KazooClient(hosts=f"{zk_server.connect}{zk_chroot}",
                         auth_data=[("digest", f"kafka:{password}")], default_acl=acl)
    client.start(timeout=15)
    try:
        Tree(client).healthy()
        client.set_acls("/", acl)
        connect = f"{zk_server.connect}{zk_chroot}"
        code = main(["plan", "--zookeeper", connect, "--zk-digest", f"kafka:{password}",
                     "--json", "-"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(out)["partitions"] == 2
        assert password not in out and password not in err
        code = main(["plan", "--zookeeper", connect, "--zk-timeout", "5", "--quiet"])
        out, err = capsys.readouterr()
        assert code == 3 and "not authorized" in err, (code, err)
        assert password not in err
    finally:
        client.stop()
        client.close()


def test_voter_id_that_is_a_broker_id_blocks_the_plan(
    sample_cluster: Any, run_plan: RunPlan, tmp_path: Path
) -> None:
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.clean(topics=2))
    code, out, err = run_plan("--voter", f"1={tmp_path / 'v'}", zookeeper=cluster.connect)
    assert code == 1, out + err
    assert "VOTER_ID_IS_BROKER_ID" in out and "/brokers/ids/1" in out


_LOCK_HOLDER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what Kafka's FileLock.tryLock() takes
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_voter_locked_by_another_process_blocks_the_plan_naming_the_holder_as_migrate_does(
    tree: Tree, connect: str, tmp_path: Path
) -> None:
    tree.healthy()
    voter = tmp_path / "c3000"
    voter.mkdir()
    cli = [sys.executable, "-m", "migrate.cli"]
    flags = ["--zookeeper", connect, "--zk-timeout", "10", "--voter", f"3000={voter}"]
    holder = subprocess.Popen([sys.executable, "-c", _LOCK_HOLDER, str(voter / ".lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        planned = subprocess.run([*cli, "plan", *flags, "--json", "-"], capture_output=True,
                                 text=True, timeout=120, cwd=ROOT)
        migrated = subprocess.run([*cli, "migrate", *flags, "--cutover", "none", "--quiet"],
                                  capture_output=True, text=True, timeout=120, cwd=ROOT)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    names_holder = f"{voter / '.lock'} is held by pid {holder.pid} ("
    assert migrated.returncode == 3 and names_holder in migrated.stderr, migrated.stderr
    assert planned.returncode == 1, planned.stderr
    doc = json.loads(planned.stdout)
    assert [(b["code"], b["path"]) for b in doc["blockers"]] == [("VOTER_LOCKED", str(voter))]
    assert names_holder in doc["blockers"][0]["message"]
    assert "exit 3" in doc["blockers"][0]["message"]
    # plan only asked: the lock file is as the holder left it, and nothing else appeared
    assert sorted(p.name for p in voter.iterdir()) == [".lock"]
    # once the holder is gone, the same plan has nothing to say about the voter
    again = subprocess.run([*cli, "plan", *flags, "--json", "-"], capture_output=True,
                           text=True, timeout=120, cwd=ROOT)
    assert again.returncode == 0 and json.loads(again.stdout)["blockers"] == [], again.stderr


# --- issue 17: a topic id used twice, brokers sharing no listener ------------------------------


def test_a_topic_znode_copied_under_another_name_blocks_naming_both_paths_and_the_id(
    sample_cluster: Any, run_plan: RunPlan
) -> None:
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    data, _ = cluster.client.get("/brokers/topics/topic-00001")
    topic_id = json.loads(data)["topic_id"]
    cluster.client.create("/brokers/topics/topic.with_dot", data)  # the audit's copy
    code, out, err = run_plan("--json", "-", zookeeper=cluster.connect)
    assert code == 1, err
    doc = json.loads(out)
    dup = [b for b in doc["blockers"] if b["code"] == "DUPLICATE_TOPIC_ID"]
    assert [b["path"] for b in dup] == ["/brokers/topics/topic.with_dot"]
    assert "/brokers/topics/topic-00001" in dup[0]["message"]
    assert topic_id in dup[0]["message"]
    assert "BLOCKED" in err and "DUPLICATE_TOPIC_ID" in err


def _listeners_broker(tree: Tree, broker_id: int, listeners: dict[str, str]) -> None:
    tree.c.create(f"/brokers/ids/{broker_id}", _j({
        "version": 5, "host": "localhost", "port": 9092 + broker_id, "jmx_port": -1,
        "timestamp": "1700000000000",
        "endpoints": [f"{name}://b{broker_id}:{9092 + i * 100 + broker_id}"
                      for i, name in enumerate(listeners)],
        "listener_security_protocol_map": listeners, "features": {}}), ephemeral=True)


def test_brokers_sharing_no_listener_name_warn_naming_each_broker_and_block_the_standin(
    tree: Tree, run_plan: RunPlan, tmp_path: Path
) -> None:
    # the audit's tree: broker 3 advertises only INTERNAL/EXTERNAL, the others PLAINTEXT
    _listeners_broker(tree, 1, {"PLAINTEXT": "PLAINTEXT"})
    _listeners_broker(tree, 2, {"PLAINTEXT": "PLAINTEXT"})
    _listeners_broker(tree, 3, {"INTERNAL": "SASL_SSL", "EXTERNAL": "SSL"})
    tree.controller()
    tree.topic("orders", {0: [1, 2, 3]})
    tree.state("orders", 0, 1, [1, 2, 3])
    code, doc = _doc(run_plan)
    assert code == 0, doc["blockers"]
    assert _found(doc["warnings"]) == {("NO_SHARED_LISTENER", "/brokers/ids")}
    message = doc["warnings"][0]["message"]
    assert "brokers 1, 2 advertise PLAINTEXT; broker 3 advertises EXTERNAL, INTERNAL" in message
    assert "inter.broker.listener.name" in message
    # with the stand-in the run itself would cut over into a controller that cannot reach
    # broker 3: the same finding blocks
    code, doc = _doc(run_plan, "--standin", f"3000@127.0.0.1:19093={tmp_path / 's'}",
                     "--controller", "3001@127.0.0.1:19094")
    assert code == 1
    assert _found(doc["blockers"]) == {("NO_SHARED_LISTENER", "/brokers/ids")}
    assert "NO_SHARED_LISTENER" not in {w["code"] for w in doc["warnings"]}
