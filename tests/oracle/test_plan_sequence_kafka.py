"""Kafka 3.9.1 accepts the properties `plan --standin` prints, node by node.

A real ZooKeeper-mode broker registers itself (so `/brokers/ids` is Kafka's own), `plan` prints
the sequence for stand-in 3000 and controller 3001, then:

* the broker restarts with its printed migration-mode properties and starts (Kafka validates a
  migrating ZooKeeper broker's config at start: explicit broker.id, controller listener mapped,
  voters, IBP);
* controller 3001, formatted as step 3 says (`kafka-storage format --cluster-id <the printed
  id> --release-version 3.9-IV0`), starts with its printed properties (its directory filled in
  where the printed placeholder stands: the one value the operator supplies), and its
  migration driver runs (connects to ZooKeeper, "transitioning from UNINITIALIZED to
  INACTIVE"), without standing for election (the stand-in is absent; the printed long
  election timeout holds it).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.kafka import (
    KafkaController,
    KafkaZkBroker,
    free_port,
    run_kafka_class,
    storage_format,
)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def test_printed_properties_start_a_migrating_broker_and_a_controller(
    tmp_path: Path, zk_server: Any, zk_chroot: str
) -> None:
    connect = f"{zk_server.connect}{zk_chroot}"
    standin_port, controller_port = free_port(), free_port()
    with KafkaZkBroker(tmp_path / "broker", connect, broker_id=0, heap="384m",
                       start_timeout=240):
        proc = subprocess.run(
            [sys.executable, "-m", "migrate.cli", "plan", "--zookeeper", connect, "--json", "-",
             "--standin", f"3000@127.0.0.1:{standin_port}={tmp_path / 'standin'}",
             "--controller", f"3001@127.0.0.1:{controller_port}",
             "--metadata-version", "3.9-IV0"],
            capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    seq = json.loads(proc.stdout)["operator_sequence"]
    (broker,) = seq["brokers"]
    (controller,) = seq["controllers"]
    assert broker["broker_id"] == 0 and controller["node_id"] == 3001
    # step 2: the broker in migration mode, with exactly the printed properties
    migrating = KafkaZkBroker(tmp_path / "broker", connect, broker_id=0, heap="384m",
                              start_timeout=240, extra=broker["properties"])
    # step 3: the controller, formatted with the printed cluster id and release; the only
    # value the operator supplies is its directory, where the printed placeholder stands
    meta = tmp_path / "c3001" / "meta"
    placeholder = "<controller 3001's metadata directory>"
    props = controller["properties"]
    assert props["metadata.log.dir"] == props["log.dirs"] == placeholder
    filled = {k: str(meta) if v == placeholder else v for k, v in props.items()}
    node = KafkaController(tmp_path / "c3001", meta, node_id=3001,
                           heap="384m", start_timeout=240,
                           quorum={3000: standin_port, 3001: controller_port},
                           extra=filled)
    storage_format(node.config_path, seq["cluster_id"], release_version="3.9-IV0")
    with migrating:
        node.launch()
        try:
            node.wait_for_log(r"3001 transitioning from UNINITIALIZED to INACTIVE state", 240)
            log = node.log_text()
            assert "ConfigException" not in log
            assert "BECOME_CONTROLLER" not in log  # nobody leads without the stand-in
        finally:
            node.stop()
        assert "zookeeper.metadata.migration.enable = true" in migrating.log_text()


def test_printed_quorum_commands_run_against_a_kraft_controller(
    tmp_path: Path, sample_cluster: Callable[..., Any]
) -> None:
    """The catch-up check finalising prints (and the offline start check) is a command Kafka
    3.9.1's own tool takes, and it shows a controller's Lag: run literally, with only the
    controller's address filled in where the printed placeholder stands."""
    from samples import SampleSpec

    cluster = sample_cluster(SampleSpec.clean(topics=1, partitions_per_topic=1,
                                              replication_factor=1, brokers=1))
    proc = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "plan", "--zookeeper", cluster.connect,
         "--json", "-", "--voter", f"3000={tmp_path / 'c3000'}"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    steps = json.loads(proc.stdout)["operator_sequence"]["steps"]
    assert steps[-1]["title"] == "Finalise"
    (printed,) = [m for a in steps[-1]["actions"]
                  for m in re.findall(r"kafka-metadata-quorum\.sh (.*? describe --replication)",
                                      a)]
    port = free_port()
    args = printed.replace("<controller 3000's host:port>", f"127.0.0.1:{port}").split()
    assert args == ["--bootstrap-controller", f"127.0.0.1:{port}", "describe", "--replication"]
    node = KafkaController(tmp_path / "node", tmp_path / "c3000", node_id=3000, heap="320m",
                           start_timeout=240, quorum={3000: port})
    storage_format(node.config_path, "5Fq3yP0nQ1-nAbq4xK2rWg")
    started_ms = int(time.time() * 1000)
    with node:
        deadline = time.monotonic() + 120
        while True:
            out = run_kafka_class("org.apache.kafka.tools.MetadataQuorumCommand", *args,
                                  check=False)
            # Kafka's table: NodeId DirectoryId LogEndOffset Lag LastFetchTimestamp
            # LastCaughtUpTimestamp Status; the sole voter leads with lag 0
            rows = [line.split() for line in out.stdout.splitlines()]
            if rows and "Lag" in rows[0]:
                lag, fetched = rows[0].index("Lag"), rows[0].index("LastFetchTimestamp")
                mine = [r for r in rows[1:] if r and r[0] == "3000"]
                if mine and mine[0][lag] == "0" and mine[0][-1] == "Leader":
                    # the printed check compares LastFetchTimestamp with `date +%s%3N`: Kafka
                    # prints it in milliseconds since the epoch (issue 30, finding 4)
                    assert started_ms <= int(mine[0][fetched]) <= time.time() * 1000 + 1, rows
                    break
            assert time.monotonic() < deadline, out.stdout + out.stderr
            time.sleep(2)


@pytest.mark.parametrize("target", ["3.9", "4.x"])
def test_offline_sequence_run_literally_starts_a_kraft_controller(
    tmp_path: Path, sample_cluster: Callable[..., Any], target: str
) -> None:
    """The offline sequence's `migrate` command, run as printed, and a controller of the target
    release started with exactly its printed properties (only its address filled in): it leads
    the migrated log, and at first start logs no ERROR but Kafka's own registration race
    (docs/design/offline.md); on 4.x no "Exceptionally slow controller event"."""
    from samples import SampleSpec
    from tests.support.kraft import KAFKA_39, KAFKA_41, KraftNode
    from tests.support.runbooks import stop_every_broker

    # configs=False: the sample's default broker config holds a non-dynamic key, which Kafka
    # logs at ERROR ("Non-dynamic configs will be ignored"); Kafka's tools never write one
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2,
                                              replication_factor=1, brokers=1, configs=False))
    stop_every_broker(cluster.client)
    meta = tmp_path / "c3000"
    cli = [sys.executable, "-m", "migrate.cli"]
    proc = subprocess.run(
        [*cli, "plan", "--zookeeper", cluster.connect, "--json", "-", "--offline",
         "--target-kafka", target, "--voter", f"3000={meta}"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    seq = json.loads(proc.stdout)["operator_sequence"]
    steps = {s["title"]: s["actions"] for s in seq["steps"]}
    (command,) = re.findall(r"^zk2kraft (migrate .*?) \(add", steps["Migrate"][0])
    migrated = subprocess.run([*cli, *command.split(), "--quiet"], capture_output=True,
                              text=True, timeout=300)
    assert migrated.returncode == 0, migrated.stderr
    port = free_port()
    address = "<controller 3000's host:port>"
    (controller,) = seq["controllers"]
    props = {k: v.replace(address, f"127.0.0.1:{port}")
             for k, v in controller["properties"].items()}
    # the sample holds ACLs: the operator names the super users (brokers on PLAINTEXT)
    assert props["super.users"].startswith("<")
    props["super.users"] = "User:ANONYMOUS"
    # the sample holds a delegation token: the operator gives the brokers' secret
    assert props["delegation.token.secret.key"].startswith("<")
    props["delegation.token.secret.key"] = "operator-supplied-token-secret"
    assert not any("<" in v for v in props.values()), props
    node = KraftNode(tmp_path / "node", KAFKA_41 if target == "4.x" else KAFKA_39,
                     node_id=3000, role="controller", quorum={3000: port}, log_dirs=meta,
                     extra=props, start_timeout=240)
    assert {k: node.properties[k] for k in props} == props
    with node:
        node.wait_for_log(r"Becoming the active controller", 180)
        errors = [e for e in node.errors()
                  if not ("CONTROLLER_REGISTRATION" in e and "NotControllerException" in e)]
        assert not errors, errors[:3]
        assert "Exceptionally slow controller event" not in node.log_text()
