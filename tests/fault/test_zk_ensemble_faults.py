"""ZooKeeper ensemble faults under the real CLI: frozen, killed and restarted members.

On the container backend the faults are container operations — `docker pause` (every process of
the member frozen, as a long GC pause or a hung VM looks: its sockets stay open, nothing answers),
`docker kill`, `docker restart`; on the process backend the same calls are SIGSTOP, SIGKILL and
stop+start. The ensemble is 3 members of Debian's ZooKeeper 3.8 (tickTime 500 ms, so no session
outlives 10 s: maxSessionTimeout is 20 ticks).

The rehearsal: a generated cluster is migrated while one member is frozen and the leader is
restarted, so the tool starts with no quorum at all and must ride it out; `verify` then reports
parity.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from samples import SampleSpec, generate_sample_cluster
from tests.support.zk import wait_until

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)
# What the generator writes for this spec (hand facts: brokers 1..3, 40 topics x 5 partitions).
SPEC = SampleSpec(topics=40, partitions_per_topic=5, brokers=3)
BROKER_IDS = ["1", "2", "3"]


def _client(hosts: str, timeout: float = 10.0) -> KazooClient:
    c = KazooClient(hosts=hosts, timeout=timeout)
    c.start(timeout=30)
    return c


def _close(c: KazooClient) -> None:
    c.stop()
    c.close()


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=timeout)


def _voters(root: Path) -> list[str]:
    return [f"--voter={v}={root / f'voter-{v}'}" for v in VOTERS]


def _roles(ens: Any) -> tuple[int, int, int]:
    """(leader, follower a, follower b) member indexes."""
    modes = {i: ens.mode(i) for i in range(3)}
    assert sorted(modes.values()) == ["follower", "follower", "leader"], modes
    leader = next(i for i, m in modes.items() if m == "leader")
    a, b = (i for i in range(3) if i != leader)
    return leader, a, b


@pytest.fixture
def chroot(zk_ensemble: Any) -> Iterator[str]:
    """A fresh chroot on the ensemble."""
    path = f"/t_{uuid.uuid4().hex[:12]}"
    admin = _client(zk_ensemble.connect)
    admin.create(path)
    _close(admin)
    yield path


def test_migrate_through_a_frozen_member_and_a_restarted_leader_then_verify_parity(
    zk_ensemble: Any, chroot: str, tmp_path: Path
) -> None:
    ens = zk_ensemble
    leader, frozen, steady = _roles(ens)
    # The generator's session (it owns the broker ephemerals) lives on the member no fault hits.
    gen = _client(ens.member_connect(steady) + chroot)
    try:
        generate_sample_cluster(gen, SPEC)
        connect = ens.connect + chroot

        ens.pause(frozen)
        cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, *_voters(tmp_path), "--cutover",
               "none", "--spark-master", "in-process", "--zk-timeout", "60",
               "--json", str(tmp_path / "migrate.json")]
        launched: list[subprocess.Popen[str]] = []

        def launch_once_the_leader_is_down() -> None:
            # The leader is down and the other follower is frozen: no quorum at all until the
            # restart ends, and that is when the tool starts.
            if wait_until(lambda: not ens.serving(leader), 30):
                launched.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT, text=True))

        launcher = threading.Thread(target=launch_once_the_leader_is_down)
        launcher.start()
        # The restart runs on this (long-lived) thread: a process-backend server started from a
        # short-lived thread would get SIGTERM when that thread ends (setpriv --pdeathsig).
        ens.restart(leader)
        launcher.join(60)
        assert launched, "the leader never went down"
        out, _ = launched[0].communicate(timeout=300)
        migrate = subprocess.CompletedProcess(cmd, launched[0].returncode, out, "")
        # the faults were real: the member is still frozen, the old leader serves again
        assert ens.mode(frozen) == ""
        assert ens.serving(leader)
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr

        verify = _cli("verify", "--zookeeper", connect, *_voters(tmp_path),
                      "--json", str(tmp_path / "verify.json"))
        assert verify.returncode == 0, verify.stdout + verify.stderr
        report = json.loads((tmp_path / "verify.json").read_text())
        assert report["parity"] is True and report["differences"] == [], report
        ens.unpause(frozen)
        # the generator's session survived the outage: its brokers are still registered
        assert sorted(gen.get_children("/brokers/ids")) == BROKER_IDS
    finally:
        _close(gen)


def test_session_expires_when_the_connected_member_is_frozen_past_its_timeout(
    zk_ensemble: Any, chroot: str, tmp_path: Path
) -> None:
    ens = zk_ensemble
    _, frozen, steady = _roles(ens)
    ready = tmp_path / "ready"
    # A sample cluster held by a generator connected to one follower only.
    holder = subprocess.Popen(
        [sys.executable, "-m", "samples", "--zookeeper",
         ens.member_connect(frozen) + chroot, "--topics", "5", "--partitions", "2", "--hold",
         "--ready-file", str(ready)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    others = ",".join(ens.member_connect(i) for i in range(3) if i != frozen) + chroot
    watcher = _client(ens.member_connect(steady) + chroot)
    try:
        assert wait_until(ready.exists, 60), "the generator did not finish"
        # another member may not have applied the generator's writes yet (ZooKeeper orders one
        # session's view, not two): sync brings the watcher's member up to the leader first
        # (one CI run at load 5-15 read /brokers/ids there before it existed: NoNodeError)
        watcher.sync("/")
        assert sorted(watcher.get_children("/brokers/ids")) == BROKER_IDS
        before = _cli("plan", "--zookeeper", others)
        assert before.returncode == 0, before.stdout + before.stderr

        ens.pause(frozen)  # the holder's member freezes: no pings reach the leader any more
        assert wait_until(lambda: watcher.get_children("/brokers/ids") == [], 60), (
            "the leader never expired the frozen member's session")
        ens.unpause(frozen)

        after = _cli("plan", "--zookeeper", others)
        assert after.returncode == 1, after.stdout + after.stderr
        assert "BROKER_NOT_REGISTERED" in after.stdout, after.stdout
    finally:
        holder.terminate()
        holder.communicate(timeout=30)
        _close(watcher)


def test_verify_through_a_killed_leader(zk_ensemble: Any, chroot: str, tmp_path: Path) -> None:
    ens = zk_ensemble
    leader, _, steady = _roles(ens)
    gen = _client(ens.member_connect(steady) + chroot)
    try:
        generate_sample_cluster(gen, SampleSpec(topics=5, partitions_per_topic=2, brokers=3))
        connect = ens.connect + chroot
        migrate = _cli("migrate", "--zookeeper", connect, *_voters(tmp_path), "--cutover", "none",
                       "--spark-master", "in-process")
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr

        ens.kill(leader)  # docker kill / SIGKILL: a crash; the two followers elect a new leader
        assert ens.mode(leader) == ""
        verify = _cli("verify", "--zookeeper", connect, *_voters(tmp_path), "--zk-timeout", "60")
        assert verify.returncode == 0, verify.stdout + verify.stderr
    finally:
        _close(gen)
