"""`zk2kraft migrate --cutover now --standin ...` leads real Kafka 3.9.1 controllers (issue 9).

Two real controllers (3001, 3002) in migration mode, with a long election timeout, wait for
voter 3000. The CLI takes voter 3000 on its own address, wins the election, commits the
bootstrap (PRE_MIGRATION), pre-copies a generated sample cluster out of real ZooKeeper, fences,
drains and writes /migration, then resigns. Facts checked against Kafka, not against our code:
* a real controller leads after the resignation and activates on the migrated log: Kafka logs
  "Loaded ZK migration state of MIGRATION", claims /controller with a kraftControllerEpoch above
  ours (1) and never hits a fatal fault;
* both controllers' own metadata.log.dirs (written by Kafka from what it fetched) and the
  stand-in's hold the migration: `zk2kraft verify` against each (with the quorum's voter set)
  reports parity with ZooKeeper (exit 0).
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.migration_cluster import wait_for_kraft_claim
from tests.support.standin import (
    migrate_through_standin,
    migration_mode_controllers,
    verify_voter_dir,
)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

STANDIN, REAL = 3000, (3001, 3002)


def test_migrate_through_the_standin_hands_over_to_a_real_controller(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=3))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    with migration_mode_controllers(tmp_path, cluster.connect, cluster_id) as (ports, nodes):
        # The sample's brokers 1-3 exist only in ZooKeeper and never register: the gate waits
        # --broker-wait 7, longer than the 3 s (1.5 x Kafka's default fetch timeout, which
        # zk2kraft assumes without --controller-config) after which a silent follower no longer
        # counts (an idle follower long-polls and must count: a gate that waited once stopped
        # with "a majority of voters is no longer writable"), then cuts over with the warning.
        done = migrate_through_standin(cluster.connect, ports, tmp_path, broker_wait=7)
        logs = "\n".join(n.log_text() for n in nodes)
        # they never register, so the run cannot confirm a serving cluster: exit 4 (issue 16)
        assert done.returncode == 4, done.stdout + done.stderr + logs[-5000:]
        said = " ".join((done.stdout + done.stderr).split())
        assert ("WARNING: after --broker-wait 7s still broker 1 (not registered with the "
                "stand-in, not fetching); broker 2 (not registered with the stand-in, not "
                "fetching); broker 3 (not registered with the stand-in, not fetching)"
                ) in said, said
        assert "Kafka does NOT confirm a serving cluster (exit 4)" in said, said
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["brokers_unregistered_at_fence"] == [1, 2, 3]
        assert doc["status"] == "unconfirmed"
        assert [p["code"] for p in doc["problems"]] == ["BROKERS_UNREGISTERED_AT_FENCE"]
        assert doc["transport"]["kind"] == "standin"
        assert doc["transport"]["node_id"] == STANDIN
        assert doc["handover"]["new_leader"] in REAL
        claim = wait_for_kraft_claim(zk, 120)
        logs = "\n".join(n.log_text() for n in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-5000:]
        assert claim["brokerid"] in REAL
        leader = next(n for n in nodes if n.node_id == claim["brokerid"])
        assert "Loaded ZK migration state of MIGRATION" in leader.log_text()
        assert "Encountered fatal fault" not in logs
        # the bootstrap Kafka would have written came first (PRE_MIGRATION), then ours
        assert "The metadata log appears to be empty" not in logs
    dirs = {STANDIN: tmp_path / "standin", **{n: tmp_path / f"meta{n}" for n in REAL}}
    for n, directory in dirs.items():
        verify_voter_dir(cluster.connect, ports, n, directory)


def test_standin_on_a_sasl_plain_controller_listener_from_controller_config(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """The controller listener is SASL_PLAINTEXT with PLAIN; `--controller-config` gives the
    stand-in the listener's JAAS line in Kafka's property names, and the handoff completes."""
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    cluster_id = json.loads(cluster.client.get("/cluster/id")[0])["id"]
    jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="controller" password="ctl-secret-1" user_controller="ctl-secret-1";')
    sasl = {"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": jaas}
    conf = tmp_path / "controller.properties"
    conf.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                    f"sasl.jaas.config={jaas}\n")
    with migration_mode_controllers(tmp_path, cluster.connect, cluster_id, sasl) as (ports, nodes):
        done = migrate_through_standin(cluster.connect, ports, tmp_path,
                                       "--controller-config", str(conf), broker_wait=0)
        logs = "\n".join(n.log_text() for n in nodes)
        assert done.returncode == 4, done.stdout + done.stderr + logs[-5000:]  # brokers 1-3
        assert "ctl-secret-1" not in done.stdout + done.stderr
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["transport"]["security_protocol"] == "SASL_PLAINTEXT"
        assert "ctl-secret-1" not in (tmp_path / "m.json").read_text()
        assert doc["handover"]["new_leader"] in REAL
        claim = wait_for_kraft_claim(cluster.client, 120)
        logs = "\n".join(n.log_text() for n in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-5000:]
        leader = next(n for n in nodes if n.node_id == claim["brokerid"])
        assert "Loaded ZK migration state of MIGRATION" in leader.log_text()
        assert "Encountered fatal fault" not in logs
