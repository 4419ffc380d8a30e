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
from tests.support.ports import free_port

# Starts with `-` on purpose: Kafka's argument parser reads `--cluster-id -1Sh…` as a missing
# value, so the printed step must use `--cluster-id=ID` (one random id in 64 starts so).
CLUSTER_ID = "-1Sh-9_ISia_zwGINzRvyQ"
ROOT = Path(__file__).resolve().parents[2]


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode()


def _tree(c: KazooClient, *, brokers: dict[int, dict[str, str]], tokens: bool = False,
          empty_migration: bool = False, running: bool = True) -> None:
    """A healthy ZK-mode tree; `brokers` maps each id to its listeners {name: protocol}.
    `running=False`: every broker stopped (no registrations, no /controller), as offline."""
    for path in ("/brokers/ids", "/brokers/topics", "/config/topics", "/config/changes",
                 "/admin/delete_topics", "/isr_change_notification",
                 "/log_dir_event_notification"):
        c.ensure_path(path)
    c.create("/cluster/id", _j({"version": "1", "id": CLUSTER_ID}), makepath=True)
    c.create("/controller_epoch", b"1")
    c.create("/feature", _j({"version": 2, "status": 1, "features": {}}))
    for broker_id, listeners in brokers.items() if running else ():
        port = 9092 + broker_id
        c.create(f"/brokers/ids/{broker_id}", _j({
            "version": 5, "host": "localhost", "port": port, "jmx_port": -1,
            "timestamp": "1700000000000",
            "endpoints": [f"{name}://b{broker_id}.example:{port + i * 100}"
                          for i, name in enumerate(listeners)],
            "listener_security_protocol_map": listeners, "features": {}}), ephemeral=True)
    if running:
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
            # zk2kraft does not know the controllers' directories: the operator fills them in
            "metadata.log.dir": "<controller 3001's metadata directory>",
            "log.dirs": "<controller 3001's metadata directory>",
            "controller.quorum.election.timeout.ms": "30000",
            # Kafka's 2000 ms default was missed following the stand-in on a loaded host
            "controller.quorum.fetch.timeout.ms": "30000",
            "zookeeper.metadata.migration.enable": "true", "zookeeper.connect": connect,
            "inter.broker.listener.name": "PLAINTEXT",
            "delegation.token.secret.key":
                "<the same secret as the brokers' delegation.token.secret.key>"}},
        {"node_id": 3002, "properties": {
            "process.roles": "controller", "node.id": "3002",
            "controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER",
            "listeners": "CONTROLLER://c2.example:9093",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            # zk2kraft does not know the controllers' directories: the operator fills them in
            "metadata.log.dir": "<controller 3002's metadata directory>",
            "log.dirs": "<controller 3002's metadata directory>",
            "controller.quorum.election.timeout.ms": "30000",
            # Kafka's 2000 ms default was missed following the stand-in on a loaded host
            "controller.quorum.fetch.timeout.ms": "30000",
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
    # finalising waits for each restarted controller to catch up, with Kafka 3.9's own tool
    assert ("kafka-metadata-quorum.sh --bootstrap-controller "
            "10.0.0.5:9093,c1.example:9093,c2.example:9093 describe --replication lists it with "
            "Lag 0 and a LastFetchTimestamp (milliseconds since the epoch) later than that "
            "time") in steps[-1]["actions"][1]
    # a KRaft broker's first start logs STALE_BROKER_EPOCH on this path too, and it says so
    assert "STALE_BROKER_EPOCH" in " ".join(
        steps[titles.index("Move the brokers to KRaft")]["actions"])
    assert seq["path"] == "online-standin" and seq["broker_removals"] == []
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
    # a controller that became active with nothing migrated led without the stand-in: the run
    # says so and prints the start-over, brokers' copies included (issue 30)
    led = ("/migration records a KRaft controller that became active at epoch 2 with nothing "
           "migrated (metadata offset -1)")
    roll = "its __cluster_metadata-0 directory deleted"
    stderr = " ".join(migrated.stderr.split())
    if left["kraft_metadata_offset"] == -1:
        assert led in stderr and roll in stderr, migrated.stderr
    else:
        assert "/migration records a KRaft controller" not in stderr, migrated.stderr
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


def test_offline_plan_with_voters_prints_plain_kraft_nodes_and_the_stopped_cluster_steps(
    zk_chroot_client: KazooClient, plan: Plan, connect: str, tmp_path: Path
) -> None:
    # Every broker stopped: ZooKeeper names them only in the assignment (1 and 2). Expected
    # values from Kafka's KRaft configuration (a controller: process.roles, node.id, the
    # voters, its listener and its mapping, metadata.log.dir; a broker: process.roles, node.id,
    # the voters, the controller listener mapped) and the offline runbook's order.
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"},
                                     2: {"PLAINTEXT": "PLAINTEXT"}}, running=False)
    c0, c1 = tmp_path / "c0", tmp_path / "c1"
    code, out, err = plan("--json", "-", "--offline", "--target-kafka", "4.x",
                          "--voter", f"3000={c0}", "--voter", f"3001={c1}")
    assert code == 0, err
    seq = json.loads(out)["operator_sequence"]
    assert (seq["path"], seq["target_kafka"], seq["metadata_version"], seq["cluster_id"]) == (
        "offline", "4.x", "4.0-IV3", CLUSTER_ID)
    assert seq["standin"] is None and "offline rehearsal" in seq["source"]
    voters = "3000@<controller 3000's host:port>,3001@<controller 3001's host:port>"
    assert seq["controllers"] == [
        {"node_id": n, "properties": {
            "process.roles": "controller", "node.id": str(n),
            "controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://<controller {n}'s host:port>",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "metadata.log.dir": str(d), "log.dirs": str(d),
            # 4.x only: Kafka's EventPerformanceMonitor threshold, 2000 ms by default
            "controller.performance.always.log.threshold.ms": "30000"}}
        for n, d in ((3000, c0), (3001, c1))]
    assert seq["brokers"] == [
        {"broker_id": b, "properties": {
            "process.roles": "broker", "node.id": str(b), "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map":
                f"<broker {b}'s listener.security.protocol.map>,CONTROLLER:PLAINTEXT"}}
        for b in (1, 2)]
    assert seq["broker_removals"] == [
        "broker.id", "zookeeper.connect", "every other zookeeper.* setting",
        "zookeeper.metadata.migration.enable", "inter.broker.protocol.version",
        "control.plane.listener.name"]
    steps = seq["steps"]
    assert [s["title"] for s in steps] == [
        "Stop every broker", "Plan", "Migrate", "Verify", "Prepare each broker's log dirs",
        "Configure the controllers", "Configure the brokers", "Start", "Check"]
    text = {s["title"]: " ".join(s["actions"]) for s in steps}
    assert ("Proceeding to do an unclean shutdown as all the controlled shutdown attempts "
            "failed") in text["Stop every broker"]
    voter_flags = f"--voter 3000={c0} --voter 3001={c1}"
    assert (f"zk2kraft migrate --zookeeper {connect} --offline --target-kafka 4.x "
            f"--metadata-version 4.0-IV3 {voter_flags}") in text["Migrate"]
    assert f"zk2kraft verify --zookeeper {connect} --offline {voter_flags}" in text["Verify"]
    prepare = text["Prepare each broker's log dirs"]
    assert (f"zk2kraft prepare-broker --log-dirs <broker 1's log.dirs> --zookeeper {connect}"
            in prepare)
    assert (f"zk2kraft prepare-broker --log-dirs <broker 2's log.dirs> --zookeeper {connect}"
            in prepare)
    assert "partition.metadata" in prepare
    assert "--dry-run" in prepare
    assert "do not run kafka-storage format" in text["Configure the controllers"]
    start = text["Start"]
    assert start.index("start every controller") < start.index("start every broker at once")
    assert "--voter is optional" in text["Plan"]
    assert any("Exceptionally slow controller event" in n for n in seq["notes"])
    # the terminal gets the same text
    assert "every broker: remove from server.properties" in err
    assert "    zookeeper.connect" in err and "8. Start" in err
    # to Kafka 3.9: 3.9-IV0 and no 4.x-only property; --offline without --voter: no sequence
    code, out, err = plan("--json", "-", "--offline", "--voter", f"3000={c0}")
    seq = json.loads(out)["operator_sequence"]
    assert code == 0 and seq["metadata_version"] == "3.9-IV0", err
    assert "controller.performance.always.log.threshold.ms" not in \
        seq["controllers"][0]["properties"]
    code, out, err = plan("--json", "-", "--offline")
    assert code == 0 and "operator_sequence" not in json.loads(out), err
    assert "add the --voter ID=DIR flags `migrate --offline` will get" in " ".join(err.split())


def test_online_voter_plan_prints_migration_mode_nodes_on_the_voter_directories(
    zk_chroot_client: KazooClient, plan: Plan, connect: str, tmp_path: Path
) -> None:
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"}})
    c0 = tmp_path / "c0"
    code, out, err = plan("--json", "-", "--voter", f"3000={c0}")
    assert code == 0, err
    seq = json.loads(out)["operator_sequence"]
    assert seq["path"] == "online-voter" and seq["standin"] is None
    voters = "3000@<controller 3000's host:port>"
    # no long election timeout: nothing runs before the cutover, no stand-in to win it
    assert seq["controllers"] == [{"node_id": 3000, "properties": {
        "process.roles": "controller", "node.id": "3000", "controller.quorum.voters": voters,
        "controller.listener.names": "CONTROLLER",
        "listeners": "CONTROLLER://<controller 3000's host:port>",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "metadata.log.dir": str(c0), "log.dirs": str(c0),
        "zookeeper.metadata.migration.enable": "true", "zookeeper.connect": connect,
        "inter.broker.listener.name": "PLAINTEXT"}}]
    assert seq["brokers"] == [{"broker_id": 1, "properties": {
        "broker.id": "1", "zookeeper.metadata.migration.enable": "true",
        "controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.protocol.version": "3.9-IV0"}}]
    titles = [s["title"] for s in seq["steps"]]
    assert titles == ["Prepare", "Put the brokers in migration mode",
                      "Pre-copy and mirror into the voter directories", "Cut over",
                      "Move the brokers to KRaft", "Finalise"]
    migrate_step = " ".join(seq["steps"][2]["actions"])
    assert (f"zk2kraft migrate --zookeeper {connect} --voter 3000={c0} --metadata-version "
            "3.9-IV0 --cutover manual --on-cutover") in migrate_step
    assert "do not run kafka-storage format" in migrate_step


def test_online_plan_to_kafka_4_4_migrates_to_3_9_then_prints_kafkas_upgrade(
    zk_chroot_client: KazooClient, plan: Plan, connect: str, tmp_path: Path
) -> None:
    # issue 29: online to 4.x is the online path to 3.9, then Kafka's rolling upgrade and
    # `kafka-features.sh upgrade --release-version` (Kafka 4 has no ZooKeeper to migrate from)
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"}})
    c0 = tmp_path / "c0"
    code, out, err = plan("--json", "-", "--voter", f"3000={c0}", "--target-kafka", "4.4")
    assert code == 0, err
    seq = json.loads(out)["operator_sequence"]
    assert (seq["path"], seq["target_kafka"], seq["metadata_version"]) == (
        "online-voter", "4.4", "3.9-IV0")
    assert seq["brokers"][0]["properties"]["inter.broker.protocol.version"] == "3.9-IV0"
    steps = seq["steps"]
    assert [s["title"] for s in steps][-3:] == ["Move the brokers to KRaft", "Finalise",
                                                "Upgrade to Kafka 4.4"]
    migrate_step = " ".join(steps[2]["actions"])
    assert "--metadata-version 3.9-IV0 --cutover manual" in migrate_step
    assert "--target-kafka" not in migrate_step  # the migration itself goes to 3.9
    upgrade = " ".join(steps[-1]["actions"])
    assert ("kafka-features.sh --bootstrap-controller <controller 3000's host:port> upgrade "
            "--release-version 4.4") in upgrade
    assert "metadata.version 4.4-IV2" in upgrade and steps[-1]["rollback"] is None


def test_target_kafka_4_without_offline_elsewhere_says_how_online_gets_there(
    zk_chroot_client: KazooClient, plan: Plan, connect: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(zk_chroot_client, brokers={1: {"PLAINTEXT": "PLAINTEXT"}})
    code, _, err = plan("--voter", f"3000={tmp_path / 'c0'}", "--target-kafka", "4.x")
    assert code == 2 and "--target-kafka 4.x without --offline: name the 4.N line" in err, err
    code, _, err = plan("--voter", f"3000={tmp_path / 'c0'}", "--target-kafka", "4.4",
                        "--metadata-version", "4.4-IV2")
    assert code == 2 and "4.4-IV2" in err, err
    code = main(["migrate", "--zookeeper", connect, "--voter", f"3000={tmp_path / 'c1'}",
                 "--target-kafka", "4.4", "--cutover", "manual"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "run this without --target-kafka (plan --target-kafka 4.4 prints the whole " \
           "sequence, upgrade included)" in err
    assert not (tmp_path / "c1").exists()  # nothing written
