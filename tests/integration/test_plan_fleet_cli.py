"""`zk2kraft plan --fleet` against real parts: ZooKeeper processes holding Kafka-shaped trees
(`samples`), the command run as an operator runs it, on a Spark standalone master and worker the
test starts (`tests/support/spark_standalone.py`; the default `local[*]` runs in test_demo).

What must hold: each cluster's object in the fleet's `--json` carries exactly the findings and
counts `zk2kraft plan --json` gives for that cluster alone; a cluster that is unreachable,
refuses the login (a digest-protected tree, the wrong password) or holds a malformed znode is a
row with its error while the others complete, and the password is printed nowhere; the
statuses, the blocker kinds across the fleet and the exit code (3 wins over 1) are as written
here by hand; the HTML page names what the report says; the application really ran on the
standalone cluster. Spark starts once in this module (its cold start is 30+ s): the other cases
either fail before anything starts or run `--spark-master in-process`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from samples import SampleSpec
from tests.support.ports import free_port
from tests.support.spark_standalone import SparkStandalone, SparkStandaloneError
from tests.support.toxiproxy import Toxiproxy
from tests.support.zk import ZkServer, client_in_new_chroot

pytestmark = pytest.mark.slow

PLAN_KEYS = ("blockers", "warnings", "records", "brokers", "topics", "partitions")
DIGEST_PASSWORD = "fleet-pw-Zr81"  # noqa: S105 - a test's own ZooKeeper; must never be printed
DIGEST_ENV = {"FLEET_DIGEST_OK": f"fleet:{DIGEST_PASSWORD}", "FLEET_DIGEST_BAD": "fleet:wrong-pw"}


def _zk2kraft(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "migrate.cli", *args], capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "migrate.cli", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def second_zookeeper() -> Iterator[ZkServer]:
    """A second ZooKeeper process: the fleet spans more than one server."""
    server = ZkServer(heap="128m").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fleet(sample_cluster: Callable[..., Any], second_zookeeper: ZkServer,
          tmp_path: Path) -> Iterator[dict[str, str]]:
    """name -> connect string of the fleet's clusters (the file is written by each test)."""
    from samples import generate_sample_cluster

    small = {"topics": 3, "partitions_per_topic": 2}
    clusters = {
        "ready": sample_cluster(SampleSpec.clean(**small)).connect,
        "warned": sample_cluster(SampleSpec.clean(**small, pending_deletion=True)).connect,
        "no-id": sample_cluster(SampleSpec.clean(**small, topic_without_id=True)).connect,
    }
    malformed = sample_cluster(SampleSpec.clean(**small))
    topic = sorted(malformed.client.get_children("/brokers/topics"))[0]
    malformed.client.set(f"/brokers/topics/{topic}", b"{not json")
    clusters["malformed"] = malformed.connect
    # on the second server: a cluster that blocks twice (two kinds, one shared with "no-id")
    connect, client = client_in_new_chroot(second_zookeeper.connect, "fleet")
    generate_sample_cluster(client, SampleSpec.clean(**small, topic_without_id=True,
                                                     log_dir_event=True))
    clusters["two-kinds"] = connect
    # also there: a tree only digest `fleet:<DIGEST_PASSWORD>` may read, every znode of it
    locked_connect, opener = client_in_new_chroot(second_zookeeper.connect, "locked")
    opener.stop()
    opener.close()
    acl = [make_digest_acl("fleet", DIGEST_PASSWORD, all=True)]
    locked = KazooClient(hosts=locked_connect, auth_data=[("digest", f"fleet:{DIGEST_PASSWORD}")],
                         default_acl=acl)
    locked.start(timeout=30)
    generate_sample_cluster(locked, SampleSpec.clean(**small))
    locked.set_acls("/", acl)
    clusters["protected"] = clusters["refused"] = locked_connect
    clusters["gone"] = f"127.0.0.1:{free_port()}/kafka"  # nothing listens there
    try:
        yield clusters
    finally:
        for kazoo in (client, locked):
            kazoo.stop()
            kazoo.close()


def _fleet_file(path: Path, clusters: dict[str, str], extra: dict[str, str]) -> Path:
    lines = ["# the fleet: NAME CONNECT [FLAG ...]", ""]
    lines += [f"{name}  {connect}  {extra.get(name, '')}  # {name}"
              for name, connect in clusters.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[SparkStandalone]:
    """A Spark standalone master with one registered worker (2 cores, 1g), as processes from
    pyspark's own distribution; both killed, with their executors, afterwards."""
    spark = SparkStandalone(tmp_path / "spark", cores=2, memory="1g")
    try:
        spark.start()
    except SparkStandaloneError as exc:
        pytest.fail(f"the Spark standalone cluster did not start: {exc}")
    try:
        yield spark
    finally:
        spark.stop()


def test_fleet_on_spark_matches_plan_on_each_cluster(fleet: dict[str, str],
                                                      standalone: SparkStandalone,
                                                      tmp_path: Path) -> None:
    # "ready-offline" is "ready" planned --offline: its registered brokers then block
    clusters = {**fleet, "ready-offline": fleet["ready"]}
    out_json, out_html = tmp_path / "fleet.json", tmp_path / "fleet.html"
    with Toxiproxy() as toxiproxy:
        # "warned" is remote: 10 ms each way (20 ms RTT) between the task and its ZooKeeper
        upstream, chroot = fleet["warned"].split("/", 1)
        remote = {**clusters,
                  "warned": toxiproxy.proxy("warned", upstream, latency_ms=10) + "/" + chroot}
        fleet_file = _fleet_file(tmp_path / "fleet.txt", remote,
                                 {"gone": "--zk-timeout 2", "ready-offline": "--offline",
                                  "protected": "--zk-digest-env FLEET_DIGEST_OK",
                                  "refused": "--zk-digest-env FLEET_DIGEST_BAD --zk-timeout 5"})
        proc = _zk2kraft("plan", "--fleet", str(fleet_file), "--json", str(out_json),
                         "--html", str(out_html), "--spark-master", standalone.master_url,
                         env={**standalone.env(), **DIGEST_ENV})
    assert proc.returncode == 3, proc.stdout + proc.stderr  # unreachable wins over blocked
    doc = json.loads(out_json.read_text())
    rows = {c["name"]: c for c in doc["clusters"]}
    assert list(rows) == list(clusters)  # the file's order
    assert {n: r["status"] for n, r in rows.items()} == {
        "ready": "ready", "warned": "warnings", "no-id": "blocked", "malformed": "blocked",
        "two-kinds": "blocked", "protected": "ready", "refused": "unreachable",
        "gone": "unreachable", "ready-offline": "blocked"}
    assert doc["engine"] == {"name": "spark", "master": standalone.master_url}
    assert all(r["engine"] == doc["engine"] for r in rows.values())
    # it ran on the standalone cluster: the master took the application, the worker ran it
    assert "Registering app zk2kraft" in standalone.master_log.read_text(errors="replace")
    assert "Asked to launch executor" in standalone.worker_log.read_text(errors="replace")
    assert standalone.app_dirs(), standalone.logs()
    assert doc["counts"] == {"ready": 2, "warnings": 1, "blocked": 4, "unreachable": 2}
    assert DIGEST_PASSWORD not in proc.stdout + proc.stderr + out_json.read_text()

    # every cluster planned alone, side by side (each its own `zk2kraft plan`)
    alone = {name: _start("plan", "--zookeeper", clusters[name], "--json", "-", "--quiet")
             for name in ("ready", "warned", "no-id", "two-kinds", "malformed")}
    alone["ready-offline"] = _start("plan", "--zookeeper", clusters["ready"], "--offline",
                                    "--json", "-", "--quiet")
    alone["protected"] = _start("plan", "--zookeeper", clusters["protected"], "--zk-digest",
                                DIGEST_ENV["FLEET_DIGEST_OK"], "--json", "-", "--quiet")
    alone["refused"] = _start("plan", "--zookeeper", clusters["refused"], "--zk-digest",
                              DIGEST_ENV["FLEET_DIGEST_BAD"], "--zk-timeout", "5", "--quiet")
    done = {name: (p.communicate(timeout=600), p.returncode) for name, p in alone.items()}
    # every judged cluster: exactly what `plan --json` says of it alone
    for name in ("ready", "warned", "no-id", "two-kinds", "ready-offline", "protected"):
        (stdout, stderr), code = done[name]
        assert code == (1 if rows[name]["status"] == "blocked" else 0), stderr
        expected = json.loads(stdout)
        assert {k: rows[name][k] for k in PLAN_KEYS} == {k: expected[k] for k in PLAN_KEYS}, name
    assert rows["ready-offline"]["path"]["offline"] is True
    assert rows["ready"]["partitions"] == 6 and rows["ready"]["topics"] == 3

    # the ones plan cannot judge: their error, as plan alone ends (2 malformed, 3 unreachable)
    assert done["malformed"][1] == 2
    assert rows["malformed"]["error"]["exit_code"] == 2
    assert rows["malformed"]["error"]["kind"] == "ZnodeFormatError"
    assert "/brokers/topics/" in rows["malformed"]["error"]["message"]
    assert rows["gone"]["error"]["exit_code"] == 3
    assert rows["gone"]["error"]["kind"] == "ZkUnreachableError"
    assert rows["gone"]["brokers"] is None and rows["gone"]["blockers"] == []
    # a refused login: the row says so, as plan alone does (3, "not authorized")
    assert done["refused"][1] == 3 and "not authorized" in done["refused"][0][1]
    assert rows["refused"]["error"]["exit_code"] == 3
    assert "not authorized" in rows["refused"]["error"]["message"]
    assert rows["protected"]["partitions"] == 6

    # blockers grouped by kind across the fleet, with the clusters each hits (hand-written)
    kinds = doc["blockers_by_kind"]
    assert kinds["TOPIC_WITHOUT_ID"] == ["no-id", "two-kinds"]
    assert kinds["LOG_DIR_EVENT_PENDING"] == ["two-kinds"]
    assert kinds["error:ZnodeFormatError"] == ["malformed"]
    assert kinds["error:ZkUnreachableError"] == ["refused", "gone"]
    assert kinds["BROKER_STILL_RUNNING"] == ["ready-offline"]
    assert all(r["task_peak_rss_bytes"] > 10_000_000 for r in rows.values())

    # the terminal table and the page say the same
    assert "readiness: 2 ready, 1 warnings, 4 blocked, 2 unreachable" in proc.stdout
    page = out_html.read_text()
    assert DIGEST_PASSWORD not in page
    assert out_html.stat().st_mode & 0o777 == 0o600
    assert "TOPIC_WITHOUT_ID" in page and "no-id, two-kinds" in page
    assert "ZkUnreachableError" in page and "<script" not in page and "http" not in page
    assert "offline to Kafka 3.9" in page


def test_fleet_exit_codes_without_unreachable(fleet: dict[str, str], tmp_path: Path) -> None:
    """1 when a cluster is blocked (and none unreachable), 0 with warnings only."""
    blocked = _fleet_file(tmp_path / "b.txt", {k: fleet[k] for k in ("ready", "no-id")}, {})
    proc = _zk2kraft("plan", "--fleet", str(blocked), "--spark-master", "in-process",
                     "--json", "-", "--quiet")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["engine"] == {"name": "in-process"}
    fine = _fleet_file(tmp_path / "f.txt", {k: fleet[k] for k in ("ready", "warned")}, {})
    proc = _zk2kraft("plan", "--fleet", str(fine), "--spark-master", "in-process", "--quiet")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(("line", "names"), [
    ("a 127.0.0.1:2181 --zk-digest user:hunter2", ["--zk-digest", "--zk-digest-env"]),
    ("a 127.0.0.1:2181 --zk-sasl --zk-sasl-password=hunter2", ["--zk-sasl-password-env"]),
    ("a 127.0.0.1:2181 --password-encoder-secret hunter2", ["--password-encoder-secret-env"]),
    ("a 127.0.0.1:2181 --zk-digest-env NO_SUCH_VAR_W32", ["NO_SUCH_VAR_W32", "not set"]),
    ("a", ["NAME CONNECT"]),
    ("a 127.0.0.1:2181 --no-such-flag", ["--no-such-flag"]),
    ("a host:notaport", ["host:notaport"]),
    ("a 127.0.0.1:2181 --voter 1=/tmp/x", ["--voter", "not a per-cluster flag"]),
    ("a 127.0.0.1:2181\na 127.0.0.1:2182", ["'a' repeats line 2"]),
])
def test_bad_fleet_file_is_exit_2_naming_the_line(tmp_path: Path, line: str,
                                                   names: list[str]) -> None:
    path = tmp_path / "fleet.txt"
    path.write_text("# header\n" + line + "\n", encoding="utf-8")
    proc = _zk2kraft("plan", "--fleet", str(path), "--json", str(tmp_path / "out.json"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{path}:{line.count(chr(10)) + 2}:" in proc.stderr
    for name in names:
        assert name in proc.stderr
    assert "hunter2" not in proc.stdout + proc.stderr  # a secret is never echoed
    assert not (tmp_path / "out.json").exists()  # nothing written, nothing started


@pytest.mark.parametrize(("args", "message"), [
    ((), "--zookeeper CONNECT is required (or --fleet FILE)"),
    (("--zookeeper", "127.0.0.1:1", "--spark-master", "local[2]"), "--spark-master needs --fleet"),
    (("--fleet", "f.txt", "--zookeeper", "127.0.0.1:1"), "--zookeeper with --fleet"),
    (("--fleet", "f.txt", "--offline"), "--offline with --fleet"),
    (("--fleet", "f.txt", "--json", "-", "--html", "-"),
     "--json - and --html -: only one document can go to stdout"),
    (("--fleet", "f.txt", "--json", "r", "--html", "./r"),
     "--json 'r' and --html './r': the same file; one report would overwrite the other"),
])
def test_plan_flags_with_and_without_fleet(tmp_path: Path, args: tuple[str, ...],
                                           message: str) -> None:
    (tmp_path / "f.txt").write_text("a 127.0.0.1:1\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "migrate.cli", "plan", *args],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
