"""The real-ZooKeeper harness itself: both topologies start, answer, replicate, fail loudly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from tests.support.zk import (
    ZkEnsemble,
    ZkProcess,
    ZkServer,
    ZkStartError,
    drop_connection,
    expire_session,
    four_letter,
    wait_until,
    zk_backend,
)


def _client(hosts: str) -> KazooClient:
    c = KazooClient(hosts=hosts, timeout=15.0)
    c.start(timeout=15.0)
    return c


def test_backend_choice_is_explicit() -> None:
    assert zk_backend(env={}, probe=lambda: False) == "process"
    assert zk_backend(env={}, probe=lambda: True) == "docker"
    assert zk_backend(env={"ZK2KRAFT_ZK_BACKEND": "process"}, probe=lambda: True) == "process"
    assert zk_backend(env={"ZK2KRAFT_ZK_BACKEND": "docker"}, probe=lambda: False) == "docker"
    with pytest.raises(ValueError, match="ZK2KRAFT_ZK_BACKEND"):
        zk_backend(env={"ZK2KRAFT_ZK_BACKEND": "podman"}, probe=lambda: False)


def test_server_uses_the_backend_this_machine_selects(zk_server: ZkServer) -> None:
    assert zk_server.backend == zk_backend()


def test_single_server_answers_and_stores(zk_server: ZkServer, zk_client: KazooClient) -> None:
    assert zk_server.ruok() == "imok"
    assert "Mode: standalone" in four_letter("127.0.0.1", zk_server.port, "srvr")
    zk_client.create("/harness_single", b"hello", makepath=True)
    data, stat = zk_client.get("/harness_single")
    assert data == b"hello"
    assert stat.version == 0


def test_chroot_fixture_is_fresh_and_usable(
    zk_client: KazooClient, zk_chroot: str, zk_chroot_client: KazooClient
) -> None:
    assert zk_chroot.startswith("/t_")
    assert zk_client.get_children(zk_chroot) == []
    zk_chroot_client.create("/inside", b"x")
    assert zk_client.get(f"{zk_chroot}/inside")[0] == b"x"


def test_ensemble_write_is_visible_from_every_member(zk_ensemble: ZkEnsemble) -> None:
    modes = sorted(zk_ensemble.mode(i) for i in range(3))
    assert modes == ["follower", "follower", "leader"]
    writer = _client(zk_ensemble.connect)
    try:
        writer.create("/harness_ens", b"v1", makepath=True, ephemeral=False)
        writer.set("/harness_ens", b"v2")
    finally:
        writer.stop()
        writer.close()
    for i in range(3):
        reader = _client(zk_ensemble.member_connect(i))
        try:
            reader.sync("/harness_ens")
            data, stat = reader.get("/harness_ens")
        finally:
            reader.stop()
            reader.close()
        assert (data, stat.version) == (b"v2", 1), f"member {i}"
    c = _client(zk_ensemble.connect)
    c.delete("/harness_ens")
    c.stop()
    c.close()


def test_ensemble_member_kill_and_restart(zk_ensemble: ZkEnsemble) -> None:
    leader = next(i for i in range(3) if zk_ensemble.mode(i) == "leader")
    zk_ensemble.kill(leader)
    assert zk_ensemble.mode(leader) == ""
    others = [i for i in range(3) if i != leader]
    c = _client(",".join(zk_ensemble.member_connect(i) for i in others))
    try:
        c.create("/harness_failover", b"after-kill")  # a 2-of-3 quorum still commits
    finally:
        c.stop()
        c.close()
    zk_ensemble.start(leader)
    assert zk_ensemble.mode(leader) in ("leader", "follower")
    back = _client(zk_ensemble.member_connect(leader))
    try:
        back.sync("/harness_failover")
        assert back.get("/harness_failover")[0] == b"after-kill"
        back.delete("/harness_failover")
    finally:
        back.stop()
        back.close()


def test_ensemble_recovers_from_losing_its_quorum(zk_ensemble: ZkEnsemble) -> None:
    zk_ensemble.kill(1)
    zk_ensemble.stop(2)
    # 1 of 3 is no quorum: member 0 stops serving once it notices (within a few ticks)
    assert wait_until(lambda: not zk_ensemble.serving(0), 30)
    zk_ensemble.start()
    assert all(zk_ensemble.serving(i) for i in range(3))


def test_a_server_that_cannot_start_fails_with_its_log(tmp_path: Path) -> None:
    bad = ZkProcess(
        sid=0,
        client_port=1,  # clientPort below is garbage, so QuorumPeerMain exits at once
        workdir=tmp_path,
        config="dataDir=@DATADIR@\nclientPort=not-a-port\n",
        heap="64m",
    )
    bad.spawn()
    try:
        with pytest.raises(ZkStartError) as info:
            bad.wait_ruok(timeout_s=30)
    finally:
        bad.stop()
    msg = str(info.value)
    assert "exited" in msg
    assert "zookeeper.log (tail)" in msg
    assert "not-a-port" in msg or "Invalid config" in msg or "NumberFormatException" in msg


def test_expire_session_drops_ephemerals(zk_server: ZkServer, zk_chroot: str) -> None:
    owner = _client(f"{zk_server.connect}{zk_chroot}")
    watcher = _client(f"{zk_server.connect}{zk_chroot}")
    states: list[KazooState] = []
    owner.add_listener(states.append)
    try:
        owner.create("/eph", b"", ephemeral=True)
        assert watcher.exists("/eph") is not None
        expire_session(owner, f"{zk_server.connect}{zk_chroot}")
        gone = watcher.exists("/eph") is None
        if not gone:  # the server deletes ephemerals when it processes the close; sync to it
            watcher.sync("/")
            gone = watcher.exists("/eph") is None
        assert gone
    finally:
        for c in (owner, watcher):
            c.stop()
            c.close()


def test_missing_zookeeper_fails_the_tests_never_skips(tmp_path: Path) -> None:
    """A whole pytest run without a usable ZooKeeper: the fixture errors with the reason."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "ZK2KRAFT_ZK_JAR": str(tmp_path / "no-such-zookeeper.jar"),
           "ZK2KRAFT_ZK_BACKEND": "process"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs",
         "tests/integration/test_harness_zk.py::test_single_server_answers_and_stores"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "ZooKeeper could not start" in out and "no-such-zookeeper.jar" in out, out
    assert "1 error" in out and "skipped" not in out, out


def test_drop_connection_keeps_the_session(zk_server: ZkServer, zk_chroot: str) -> None:
    c = _client(f"{zk_server.connect}{zk_chroot}")
    try:
        c.create("/eph", b"", ephemeral=True)
        session = c.client_id[0]
        assert drop_connection(c)
        assert c.client_id[0] == session
        assert c.exists("/eph") is not None  # same session: its ephemeral is still there
    finally:
        c.stop()
        c.close()


def test_docker_backend_that_cannot_run_fails_the_tests_never_skips(tmp_path: Path) -> None:
    """ZK2KRAFT_ZK_BACKEND=docker with no engine to talk to: the fixture errors with why."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "ZK2KRAFT_ZK_BACKEND": "docker",
           "DOCKER_HOST": f"unix://{tmp_path / 'no-engine.sock'}"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs",
         "tests/integration/test_harness_zk.py::test_single_server_answers_and_stores"],
        cwd=root, env=env, capture_output=True, text=True, timeout=180,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "ZooKeeper (docker backend) cannot run: no Docker engine answers" in out, out
    assert "no-engine.sock" in out, out
    assert "1 error" in out and "skipped" not in out, out
