"""`zk2kraft plan --standin ... --controller ...` prints the operator's sequence, per node.

Real ZooKeeper; the tree is written here in ZK-mode Kafka's formats. Every expected property
value below is written by hand from Kafka 3.9's migration documentation (controllers:
process.roles, node.id, controller.quorum.voters with the stand-in's entry, the controller
listener, the migration flag, zookeeper.connect, the brokers' inter-broker listener and, with
tokens, delegation.token.secret.key; brokers: broker.id, the migration flag, the voters, the
controller listener mapped in listener.security.protocol.map, and an IBP equal to the
metadata.version), not from the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from migrate.cli import main
from tests.support.kafka import free_port

# Starts with `-` on purpose: Kafka's argument parser reads `--cluster-id -1Sh…` as a missing
# value, so the printed step must use `--cluster-id=ID` (one random id in 64 starts so).
CLUSTER_ID = "-1Sh-9_ISia_zwGINzRvyQ"
ROOT = Path(__file__).resolve().parents[2]


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode()


def _tree(c: KazooClient, *, brokers: dict[int, dict[str, str]], tokens: bool = False,
          empty_migration: bool = False) -> None:
    """A healthy ZK-mode tree; `brokers` maps each id to its listeners {name: protocol}."""
    for path in ("/brokers/ids", "/brokers/topics", "/config/topics", "/config/changes",
                 "/admin/delete_topics", "/isr_change_notification",
                 "/log_dir_event_notification"):
        c.ensure_path(path)
    c.create("/cluster/id", _j({"version": "1", "id": CLUSTER_ID}), makepath=True)
    c.create("/controller_epoch", b"1")
    c.create("/feature", _j({"version": 2, "status": 1, "features": {}}))
    for broker_id, listeners in brokers.items():
        port = 9092 + broker_id
        c.create(f"/brokers/ids/{broker_id}", _j({
            "version": 5, "host": "localhost", "port": port, "jmx_port": -1,
            "timestamp": "1700000000000",
            "endpoints": [f"{name}://b{broker_id}.example:{port + i * 100}"
                          for i, name in enumerate(listeners)],
            "listener_security_protocol_map": listeners, "features": {}}), ephemeral=True)
    c.create("/controller", _j({"version": 2, "brokerid": min(brokers), "timestamp": "1",
                                "kraftControllerEpoch": -1}), ephemeral=True)
    ids = sorted(brokers)
    c.create("/brokers/topics/orders", _j({
        "version": 3, "partitions": {"0": ids}, "adding_replicas": {}, "removing_replicas": {},
        "topic_id": "tGCUt6tCR3a2R1NDlMdp3Q"}))
    c.create("/brokers/topics/orders/partitions/0/state", _j({
        "version": 1, "leader": ids[0], "leader_epoch": 0, "controller_epoch": 1, "isr": ids}),
        makepath=True)
    if tokens:
        c.create("/delegation_token/tokens/tok-1", _j({
            "version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice",
            "renewers": [], "issueTimestamp": 1, "maxTimestamp": 3, "expiryTimestamp": 2,
            "tokenId": "tok-1"}), makepath=True)
    if empty_migration:  # what controllers in migration mode create when they start
        c.create("/migration", _j({"version": 0, "kraft_controller_id": -1,
                                   "kraft_controller_epoch": -1, "kraft_metadata_offset": -1,
                                   "kraft_metadata_epoch": -1}))


@pytest.fixture
def connect(zk_server: Any, zk_chroot: str) -> str:
    return f"{zk_server.connect}{zk_chroot}"


Plan = Callable[..., tuple[int, str, str]]


@pytest.fixture
def plan(capsys: pytest.CaptureFixture[str], connect: str) -> Plan:
    def run(*extra: str) -> tuple[int, str, str]:
        code = main(["plan", "--zookeeper", connect, "--zk-timeout", "10", *extra])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_standin_plan_prints_each_nodes_properties_and_the_steps(
    zk_chroot_client: KazooClient, plan: Plan, connect: str, tmp_path: Path
) -> None:
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"},
                                     2: {"PLAINTEXT": "PLAINTEXT"}},
          tokens=True, empty_migration=True)
    standin_dir = tmp_path / "standin"
    code, out, err = plan("--json", "-", "--standin", f"3000@10.0.0.5:9093={standin_dir}",
                          "--controller", "3001@c1.example:9093",
                          "--controller", "3002@c2.example:9093",
                          "--metadata-version", "3.9-IV0")
    assert code == 0, err  # the empty /migration the controllers create blocks nothing here
    doc = json.loads(out)
    seq = doc["operator_sequence"]
    voters = "3000@10.0.0.5:9093,3001@c1.example:9093,3002@c2.example:9093"
    assert seq["cluster_id"] == CLUSTER_ID and seq["metadata_version"] == "3.9-IV0"
    assert seq["controllers"] == [
        {"node_id": 3001, "properties": {
            "process.roles": "controller", "node.id": "3001",
            "controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER",
            "listeners": "CONTROLLER://c1.example:9093",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "controller.quorum.election.timeout.ms": "30000",
            "zookeeper.metadata.migration.enable": "true", "zookeeper.connect": connect,
            "inter.broker.listener.name": "PLAINTEXT",
            "delegation.token.secret.key":
                "<the same secret as the brokers' delegation.token.secret.key>"}},
        {"node_id": 3002, "properties": {
            "process.roles": "controller", "node.id": "3002",
            "controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER",
            "listeners": "CONTROLLER://c2.example:9093",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "controller.quorum.election.timeout.ms": "30000",
            "zookeeper.metadata.migration.enable": "true", "zookeeper.connect": connect,
            "inter.broker.listener.name": "PLAINTEXT",
            "delegation.token.secret.key":
                "<the same secret as the brokers' delegation.token.secret.key>"}},
    ]
    assert seq["brokers"] == [
        {"broker_id": b, "properties": {
            "broker.id": str(b), "zookeeper.metadata.migration.enable": "true",
            "controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.protocol.version": "3.9-IV0"}}
        for b in (1, 2)]
    steps = seq["steps"]
    assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
    titles = [s["title"] for s in steps]
    # Kafka's order: brokers in migration mode, (our cutover), brokers to KRaft, finalise
    assert titles.index("Put the brokers in migration mode") < titles.index("Cut over") \
        < titles.index("Move the brokers to KRaft") < titles.index("Finalise") == len(steps) - 1
    assert all(s["rollback"] for s in steps[:-1]) and steps[-1]["rollback"] is None
    assert "zookeeper.metadata.migration.enable" in steps[-1]["actions"][0]
    cutover = steps[titles.index("Cut over")]
    assert "zk2kraft rollback" in cutover["rollback"] and "/controller" in cutover["rollback"]
    assert f"--cluster-id={CLUSTER_ID}" in " ".join(steps[titles.index(
        "Provision the controllers and start zk2kraft's stand-in")]["actions"])
    # the terminal gets the same, one key=value line per property (stderr: stdout is the JSON)
    assert "controller 3001: controller.properties" in err
    assert f"    controller.quorum.voters={voters}" in err
    assert "    inter.broker.protocol.version=3.9-IV0" in err
    assert "broker 2: add to (or change in) server.properties" in err
    assert "7. Finalise" in err
    # --html: the same lines, escaped, in the page
    code, _, err = plan("--quiet", "--html", str(tmp_path / "plan.html"), "--standin",
                        f"3000@10.0.0.5:9093={standin_dir}", "--controller",
                        "3001@c1.example:9093", "--controller", "3002@c2.example:9093")
    page = (tmp_path / "plan.html").read_text()
    assert code == 0, err
    assert "<h2>Operator&#x27;s sequence</h2><pre>" in page
    assert f"    controller.quorum.voters={voters}" in page
    assert "&lt;the same secret as the brokers&#x27; delegation.token.secret.key&gt;" in page


def test_quorum_voters_form_and_a_broker_with_two_listeners(
    zk_chroot_client: KazooClient, plan: Plan, tmp_path: Path
) -> None:
    _tree(zk_chroot_client, brokers={5: {"INTERNAL": "SASL_SSL", "EXTERNAL": "SSL"}})
    voters = "3001@c1:19093,3000@zk2kraft:19093"
    code, out, err = plan("--json", "-", "--standin", f"3000@zk2kraft:19093={tmp_path / 's'}",
                          "--quorum-voters", voters, "--controller-listener-name", "KRAFT",
                          "--metadata-version", "3.7-IV4")
    assert code == 0, err
    seq = json.loads(out)["operator_sequence"]
    (controller,) = seq["controllers"]
    props = controller["properties"]
    assert controller["node_id"] == 3001
    assert props["controller.quorum.voters"] == voters
    assert props["listeners"] == "KRAFT://c1:19093"
    assert props["controller.listener.names"] == "KRAFT"
    assert props["listener.security.protocol.map"] == \
        "KRAFT:PLAINTEXT,INTERNAL:SASL_SSL,EXTERNAL:SSL"
    assert "delegation.token.secret.key" not in props  # no tokens in ZooKeeper
    # two listeners: ZooKeeper does not say which is inter-broker, so a placeholder says so
    assert props["inter.broker.listener.name"].startswith("<")
    assert "EXTERNAL" in props["inter.broker.listener.name"]
    (broker,) = seq["brokers"]
    assert broker == {"broker_id": 5, "properties": {
        "broker.id": "5", "zookeeper.metadata.migration.enable": "true",
        "controller.quorum.voters": voters, "controller.listener.names": "KRAFT",
        "listener.security.protocol.map": "INTERNAL:SASL_SSL,EXTERNAL:SSL,KRAFT:PLAINTEXT",
        "inter.broker.protocol.version": "3.7-IV4"}}


def test_plan_without_standin_has_no_sequence_and_stray_controller_flags_exit_2(
    zk_chroot_client: KazooClient, plan: Plan, tmp_path: Path
) -> None:
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"}})
    code, out, _ = plan("--json", "-")
    assert code == 0 and "operator_sequence" not in json.loads(out)
    code, _, err = plan("--controller", "3001@c1:9093")
    assert code == 2 and "--controller" in err and "--standin" in err
    code, _, err = plan("--standin", f"3000@h:9093={tmp_path / 's'}",
                        "--quorum-voters", "3000@other:9093,3001@c1:9093")
    assert code == 2 and "--quorum-voters must name the stand-in as 3000@h:9093" in err
    code, _, err = plan("--standin", f"3000@h:9093={tmp_path / 's'}",
                        "--controller", "3001@c1:9093", "--controller-listener-name", "A B")
    assert code == 2 and "--controller-listener-name" in err


@pytest.mark.parametrize("left", [
    # a controller that became active writes its id and epoch before migrating anything
    {"kraft_controller_id": 3001, "kraft_controller_epoch": 2, "kraft_metadata_offset": -1,
     "kraft_metadata_epoch": -1},
    # an earlier attempt that got as far as a migrated offset
    {"kraft_controller_id": 3000, "kraft_controller_epoch": 1, "kraft_metadata_offset": 41,
     "kraft_metadata_epoch": 1},
], ids=["claimed-before-migrating", "migrated"])
def test_migrate_standin_refuses_any_migration_znode_but_the_starting_controllers_empty_one(
    zk_chroot_client: KazooClient, connect: str, tmp_path: Path, left: dict[str, int]
) -> None:
    # Controllers in migration mode create /migration at start with every field -1 (Kafka's
    # ZkMigrationLeadershipState.EMPTY); that one the stand-in takes over (the plan test above
    # and the oracle tests). Anything else is refused before the stand-in asks for a vote, so
    # the controller named here, on a port nobody listens on, is never needed.
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"},
                                     2: {"PLAINTEXT": "PLAINTEXT"}})
    zk_chroot_client.create("/migration", _j({"version": 0, **left}))
    watched = ("/migration", "/controller", "/controller_epoch")
    before = {p: zk_chroot_client.get(p) for p in watched}
    work = tmp_path / "work"
    work.mkdir()
    flags = ["--zookeeper", connect, "--zk-timeout", "10",
             "--standin", f"3000@127.0.0.1:{free_port()}={work / 'standin'}",
             "--controller", f"3001@127.0.0.1:{free_port()}"]
    cli = [sys.executable, "-m", "migrate.cli"]
    migrated = subprocess.run([*cli, "migrate", *flags, "--cutover", "now", "--quiet"],
                              capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert migrated.returncode == 1, migrated.stderr
    said = (f"MIGRATION_ZNODE_EXISTS /migration: /migration names KRaft controller "
            f"{left['kraft_controller_id']}, epoch {left['kraft_controller_epoch']}, metadata "
            f"offset {left['kraft_metadata_offset']}, metadata epoch "
            f"{left['kraft_metadata_epoch']}: --standin accepts only the empty /migration that "
            "controllers in migration mode create when they start")
    assert said in " ".join(migrated.stderr.split()), migrated.stderr
    assert "nothing was written" in migrated.stderr
    # nothing was written: ZooKeeper as it was, no stand-in log, no journal
    assert {p: zk_chroot_client.get(p) for p in watched} == before
    assert os.listdir(work) == []
    # and plan --standin blocks on it the same way
    planned = subprocess.run([*cli, "plan", *flags, "--json", "-"], capture_output=True,
                             text=True, timeout=90, cwd=ROOT)
    assert planned.returncode == 1, planned.stderr
    blockers = json.loads(planned.stdout)["blockers"]
    assert [(b["code"], b["path"]) for b in blockers] == [("MIGRATION_ZNODE_EXISTS", "/migration")]
    assert "--standin accepts only the empty /migration" in blockers[0]["message"]
