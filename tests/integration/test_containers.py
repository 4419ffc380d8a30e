"""The container path itself: the engine, the network it gives containers, and Kafka in containers.

These tests check facts about the Docker engine, so they run on the container backend only (on
the process backend they are deselected, and counted as such in the summary). What they assert
comes from how scripts/install-containers.sh is meant to start things — no bridge, host network,
loopback only — not from the code under test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.support.containers import ComposeProject, docker, engine_command_line
from tests.support.kafka import REPLAY_FAILURES, admin_tool
from tests.support.zk import wait_until

pytestmark = pytest.mark.docker

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|\[::ffff:127\.\d+\.\d+\.\d+\]|\[::1\]):\d+$")


def test_engine_was_started_without_a_bridge() -> None:
    argv = engine_command_line()
    assert "--bridge=none" in argv, argv
    assert "--iptables=false" in argv, argv
    drivers = docker("network", "ls", "--format", "{{.Name}} {{.Driver}}").split("\n")
    assert not [d for d in drivers if d.endswith(" bridge")], drivers
    assert not Path("/sys/class/net/docker0").exists()


def _listening(pid: int) -> list[str]:
    """Local addresses the process `pid` listens on (TCP), from `ss`."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


def test_containers_use_the_host_network_on_loopback_only(
    zk_server: Any, zk_ensemble: Any, compose_project: ComposeProject
) -> None:
    services = ["zk", "zk1", "zk2", "zk3"]
    for service in services:
        assert compose_project.inspect(service, "{{.HostConfig.NetworkMode}}") == "host"
        assert compose_project.addresses(service) == [], service  # no address of its own
        addrs = _listening(compose_project.pid(service))
        assert addrs, f"{service}: its server listens on nothing?"
        assert all(LOOPBACK.match(a) for a in addrs), (service, addrs)
    # and the ports are the ones chosen at run time, handed over as compose variables
    assert f"127.0.0.1:{zk_server.port}" in {
        a.replace("[::ffff:", "").replace("]", "") for a in _listening(compose_project.pid("zk"))}


def test_health_checks_follow_the_servers(zk_ensemble: Any, compose_project: ComposeProject
                                          ) -> None:
    assert [compose_project.health(s) for s in ("zk1", "zk2", "zk3")] == ["healthy"] * 3
    zk_ensemble.pause(0)
    try:
        # a frozen member's health check cannot run: docker marks it unhealthy after 3 tries
        assert wait_until(lambda: compose_project.health("zk1") == "unhealthy", 30)
    finally:
        zk_ensemble.unpause(0)
    assert wait_until(lambda: compose_project.health("zk1") == "healthy", 30)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=300)


def _server_log(project: ComposeProject, service: str) -> str:
    return docker("exec", project.container_id(service), "cat", "/var/log/kafka/server.log")


@pytest.mark.slow
@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:read_text is deprecated:DeprecationWarning")  # kafka-python
@pytest.mark.filterwarnings("ignore:open_text is deprecated:DeprecationWarning")
def test_rehearsal_zk_mode_broker_to_kraft_controllers_all_in_containers(
    zk_server: Any, zk_chroot: str, zk_chroot_client: KazooClient,
    compose_project: ComposeProject, compose_ports_env: dict[str, str], tmp_path: Path,
) -> None:
    """A ZooKeeper-mode Kafka 3.9.1 broker container writes its tree into the ZooKeeper
    container; zk2kraft migrates it into three voter dirs; three KRaft controller containers
    start on those dirs, replay the whole log and finish the migration."""
    connect = f"{zk_server.connect}{zk_chroot}"
    broker_port = compose_ports_env["KAFKA_BROKER_PORT"]
    voters = {3000: tmp_path / "v3000", 3001: tmp_path / "v3001", 3002: tmp_path / "v3002"}
    try:
        compose_project.up("kafka-zk", env={"KAFKA_ZK_CONNECT": connect})
        compose_project.wait_healthy("kafka-zk", 180)
        admin_tool("kafka.admin.ConfigCommand", "--bootstrap-server", f"127.0.0.1:{broker_port}",
                   "--alter", "--entity-type", "brokers", "--entity-default",
                   "--add-config", "log.retention.ms=3600000")
        from kafka.admin import KafkaAdminClient, NewTopic
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{broker_port}",
                                 request_timeout_ms=30000)
        try:
            admin.create_topics([NewTopic("orders", 3, 1)])
        finally:
            admin.close()
        assert sorted(zk_chroot_client.get_children("/brokers/topics/orders/partitions")) == [
            "0", "1", "2"]
        ids = zk_chroot_client.get_children("/brokers/ids")
        assert ids == ["1"]
        reg = json.loads(zk_chroot_client.get("/brokers/ids/1")[0])
        assert reg["endpoints"] == [f"PLAINTEXT://127.0.0.1:{broker_port}"]

        voter_args = [f"--voter={n}={d}" for n, d in voters.items()]
        plan = _cli("plan", "--zookeeper", connect)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        migrate = _cli("migrate", "--zookeeper", connect, *voter_args, "--cutover", "none",
                       "--spark-master", "in-process")
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr
        verify = _cli("verify", "--zookeeper", connect, *voter_args)
        assert verify.returncode == 0, verify.stdout + verify.stderr
    finally:
        compose_project.down("kafka-zk")

    controllers = ("kraft1", "kraft2", "kraft3")
    env = {f"KRAFT{i + 1}_DIR": str(d) for i, d in enumerate(voters.values())}
    env["KRAFT_EXTRA"] = "zookeeper.metadata.migration.enable=false"
    try:
        compose_project.up(*controllers, env=env)
        for c in controllers:
            compose_project.wait_healthy(c, 180)
        for c in controllers:
            assert wait_until(
                lambda c=c: "from MIGRATION to POST_MIGRATION" in _server_log(compose_project, c),
                120), f"{c}: no POST_MIGRATION\n{_server_log(compose_project, c)[-4000:]}"
            log = _server_log(compose_project, c)
            for bad in REPLAY_FAILURES:
                assert bad not in log, f"{c}: {bad!r}\n{log[-4000:]}"
    finally:
        compose_project.down(*controllers)
