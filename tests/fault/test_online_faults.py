"""Faults during an online migration: voters failing mid-mirror, ZooKeeper members lost, the
session expired. The tool runs as the real CLI (`migrate --cutover manual`, cut over with
SIGUSR1 once the fault has happened); a background writer keeps changing the tree.

"Unwritable" voters are real: `chattr +i` on the voter's files and directories
(tests/support/immutable.py). The session expiry is a pause longer than the session timeout
(SIGSTOP), which is what a long GC pause or a frozen VM does to a ZooKeeper client.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from samples import SampleSpec, generate_sample_cluster
from tests.support.churn import Churn
from tests.support.cli_run import communicate
from tests.support.immutable import Immutable, voter_paths
from tests.support.tool_hooks import start_paused_after_fence

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)


def start(connect: str, root: Path, *extra: str) -> subprocess.Popen[str]:
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--cutover", "manual",
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS], "--json",
           str(root / "m.json"), *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_phase(root: Path, proc: subprocess.Popen[str], phase: str = "mirror") -> None:
    journal = root / ".zk2kraft-journal" / "journal.json"
    deadline = time.monotonic() + 120
    while not (journal.exists() and json.loads(journal.read_text())["phase"] == phase):
        if proc.poll() is not None:
            pytest.fail(f"migrate ended early: {proc.communicate()}")
        assert time.monotonic() < deadline, "the mirror never started"
        time.sleep(0.05)


def cut_over(proc: subprocess.Popen[str]) -> tuple[int, str]:
    if proc.poll() is None:
        proc.send_signal(signal.SIGUSR1)
    out, err = communicate(proc, 300)
    return proc.returncode, out + err


def lose_each_member_then_expire(zk_ensemble: Any, proc: subprocess.Popen[str]) -> None:
    """Every member goes down once (the one the tool is connected to, and the leader, among
    them), one at a time so the ensemble keeps a quorum; then the tool is paused longer than
    its session timeout (--zk-timeout 4): the session expires, its watches are gone."""
    for i in range(3):
        zk_ensemble.stop(i)
        time.sleep(2.0)
        zk_ensemble.start(i)
        time.sleep(1.0)
    os.kill(proc.pid, signal.SIGSTOP)
    time.sleep(14.0)
    os.kill(proc.pid, signal.SIGCONT)


def verify(connect: str, root: Path, voters: tuple[int, ...] = VOTERS) -> None:
    cmd = [*ZK2KRAFT, "verify", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in voters]]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_one_voter_of_three_fails_mid_mirror_the_run_goes_on_and_reports_it(
    sample_cluster: Callable[..., Any], tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    with Churn(cluster.connect, rate=100) as churn:
        proc = start(cluster.connect, tmp_path)
        wait_phase(tmp_path, proc)
        immutable.freeze(voter_paths(tmp_path / "c3002"))
        time.sleep(1.5)  # the mirror appends the churn's changes: voter 3002 refuses them
        code, out = cut_over(proc)
        assert code == 0, out
        assert "3002 failed" in out
        doc = json.loads((tmp_path / "m.json").read_text())
        states = {v["node_id"]: v["state"] for v in doc["voters"]}
        assert states == {3000: "ok", 3001: "ok", 3002: "failed"}
        churn.stop()
        immutable.release()
        # verify replays voter 3000's log (parity with ZooKeeper) and compares the voters: the
        # dropped voter holds a prefix, its only difference (it catches up from the leader when
        # the controllers start)
        cmd = [*ZK2KRAFT, "verify", "--zookeeper", cluster.connect,
               *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS],
               "--json", str(tmp_path / "v.json")]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        report = json.loads((tmp_path / "v.json").read_text())
        diffs = report["differences"]
        assert result.returncode == 1 and diffs, result.stdout[-2000:]
        assert all(d["kind"] == "voter" and str(d["key"]) == "3002" for d in diffs), diffs


def test_two_voters_of_three_fail_mid_mirror_it_stops_before_the_fence(
    sample_cluster: Callable[..., Any], tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    with Churn(cluster.connect, rate=100):
        proc = start(cluster.connect, tmp_path)
        wait_phase(tmp_path, proc)
        immutable.freeze(voter_paths(tmp_path / "c3001") + voter_paths(tmp_path / "c3002"))
        out, err = communicate(proc, 120)  # the next append loses the majority
    assert proc.returncode == 3, out + err
    assert "majority" in err
    zk = cluster.client
    assert zk.get("/controller_epoch")[0] == b"3"  # never fenced: ZooKeeper's controller leads
    assert zk.exists("/migration") is None
    assert zk.get("/controller")[1].ephemeralOwner != 0


@pytest.fixture
def ensemble_cluster(zk_ensemble: Any) -> Iterator[tuple[str, KazooClient]]:
    chroot = f"/online{int(time.time() * 1000)}"
    admin = KazooClient(hosts=zk_ensemble.connect, timeout=15)
    admin.start(timeout=30)
    admin.ensure_path(chroot)
    admin.stop()
    admin.close()
    connect = f"{zk_ensemble.connect}{chroot}"
    owner = KazooClient(hosts=connect, timeout=15)
    owner.start(timeout=30)
    generate_sample_cluster(owner, SampleSpec.clean(topics=4, partitions_per_topic=2))
    yield connect, owner
    owner.stop()
    owner.close()


def test_members_lost_and_session_expired_during_the_mirror_miss_no_change(
    zk_ensemble: Any, ensemble_cluster: tuple[str, KazooClient], tmp_path: Path
) -> None:
    connect, _ = ensemble_cluster
    with Churn(connect, rate=50) as churn:
        proc = start(connect, tmp_path, "--zk-timeout", "4")
        wait_phase(tmp_path, proc)
        lose_each_member_then_expire(zk_ensemble, proc)
        time.sleep(4.0)
        code, out = cut_over(proc)
        assert code == 0, out
        assert "session expired" in out
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["session_expiries"] >= 1
        churn.stop()
        verify(connect, tmp_path)


def test_members_lost_and_session_expired_during_the_drain_miss_no_change(
    zk_ensemble: Any, ensemble_cluster: tuple[str, KazooClient], tmp_path: Path
) -> None:
    """The tool stops right after the fence (test hook); every member goes down in turn and the
    session expires before the drain runs. The changes made before the fence must all be in
    the log, /migration must be written under the fence's epoch check, and parity must hold."""
    connect, _ = ensemble_cluster
    gate = tmp_path / "gate"
    with Churn(connect, rate=50) as churn:
        cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--cutover", "now",
               "--zk-timeout", "4", *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS],
               "--json", str(tmp_path / "m.json")]
        proc = start_paused_after_fence(cmd, gate)
        lose_each_member_then_expire(zk_ensemble, proc)
        Path(str(gate) + ".go").write_text("go")
        out, err = communicate(proc, 300)
        assert proc.returncode == 0, out + err
        assert "session expired" in out + err  # the drain compared the whole tree
        assert churn.fenced.is_set()
        churn.stop()
        client = churn.client
        assert json.loads(client.get("/migration")[0])["kraft_metadata_offset"] == \
            json.loads((tmp_path / "m.json").read_text())["last_offset"]
        verify(connect, tmp_path)


def test_two_voters_fail_after_the_fence_exit_explains_and_a_rerun_finishes(
    sample_cluster: Callable[..., Any], tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    gate = tmp_path / "gate"
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect, "--cutover", "now",
           *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS],
           "--json", str(tmp_path / "m.json")]
    proc = start_paused_after_fence(cmd, gate)
    immutable.freeze(voter_paths(tmp_path / "c3001") + voter_paths(tmp_path / "c3002"))
    Path(str(gate) + ".go").write_text("go")
    out, err = communicate(proc, 120)
    assert proc.returncode == 3, out + err
    assert "ZooKeeper IS fenced" in err and "rollback" in err and "re-run" in err
    zk = cluster.client
    assert zk.get("/controller_epoch")[0] == b"4"
    assert json.loads(zk.get("/migration")[0])["kraft_metadata_offset"] == -1  # not handed over
    immutable.release()
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert zk.get("/controller_epoch")[0] == b"4"  # not fenced twice
    assert json.loads(zk.get("/migration")[0])["kraft_metadata_offset"] == \
        json.loads((tmp_path / "m.json").read_text())["last_offset"]
    verify(cluster.connect, tmp_path)
