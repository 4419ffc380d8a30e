"""Which sources can the online path take (issue 29)? Real ZooKeeper-mode brokers of an older 3.x
line in migration mode, real Kafka 3.9.1 controllers 3001 and 3002 following zk2kraft as stand-in
voter 3000, `zk2kraft migrate --cutover now --metadata-version <the line's own level>`.

An opt-in matrix cell, never run in CI (each cell is several minutes of JVMs on a 2-core host):
`ZK2KRAFT_ONLINE_SOURCES="3.6 3.8"` runs one case per line named; unset, the test is skipped at
collection, saying so.

Each broker runs its own release's binaries with `inter.broker.protocol.version` = its line (so
it registers with the KRaft controller with metadata.version [its level, its level], Kafka's
`KafkaServer` remaps the feature to its IBP), `zookeeper.metadata.migration.enable=true`,
`controller.quorum.voters` (3000, 3001, 3002) and `controller.listener.names`. Facts checked
against Kafka, not against zk2kraft's output:

* the migration exits 0 and the controller that claims `/controller` above our epoch reaches
  DUAL_WRITE without WAIT_FOR_BROKERS or ZK_MIGRATION (`kraft_controller_took_over`);
* the metadata.version the new controller loaded (its log) is the line's own level, and so is
  the finalized one Kafka 3.9.1's `kafka-features.sh --bootstrap-server describe` reports once
  the brokers run in KRaft mode;
* both brokers are registered as migrating ZooKeeper brokers in the new controller's own log
  (DumpLogSegments), each supporting metadata.version exactly [that level, that level];
* the brokers serve: a topic created through a broker after the cutover is written to ZooKeeper
  by the KRaft controller (dual-write) and an acks=all record produced to it is consumed back;
* the brokers then roll to KRaft mode on Kafka 3.9.1's binaries, one at a time (the binary
  upgrade combined with "Migrating brokers to KRaft"): each registers again, not migrating, every
  partition is back in full ISR, a topic created then is dual-written and served, and the
  records produced before the roll are still read back.

A line whose own level is below 3.6-IV1 (3.4, 3.5) cannot take the online path: the cutover
keeps the copy in a metadata transaction (3.6-IV1). Its cell rehearses that refusal instead:
exit 2 before anything connects, ZooKeeper's controller still a broker, `/migration` without a
KRaft controller, and the brokers still serving.

Found 2026-11-29 (3.6.2 and 3.8.1): the stand-in advertised Fetch v17 only, and these brokers'
Raft observers fetch with v15 (3.6) or v16 (3.8): they register but never catch up ("The broker
does not support FETCH with version in range [0,15]. The supported range is [17,17]."), stay
fenced, and the cutover stops after --broker-wait (exit 3). The failure message leads with
that line when it is the cause.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.support.kafka import (
    KafkaController,
    KafkaZkBroker,
    dump_log_payloads,
)
from tests.support.kraft import kafka_dist, run_tool
from tests.support.migration_cluster import (
    broker_rpcs,
    kraft_controller_took_over,
    migration_cluster,
    produce_and_consume,
    wait_for_full_isr,
    wait_for_zk_controller,
    wait_for_znode,
)
from tests.support.ports import free_port
from tests.support.standin import (
    STANDIN,
    STANDIN_FOLLOWERS,
    follower_segments,
    migrate_through_standin,
    migration_mode_controllers,
)

_ENV = "ZK2KRAFT_ONLINE_SOURCES"
SOURCES = os.environ.get(_ENV, "").split()
# each line's own metadata.version: the level its IBP maps to (MetadataVersion.latest of it)
_OWN_LEVEL = {"3.4": "3.4-IV0", "3.5": "3.5-IV2", "3.6": "3.6-IV2", "3.7": "3.7-IV4",
              "3.8": "3.8-IV0", "3.9": "3.9-IV0"}
# Kafka's MetadataVersion feature levels (server-common's MetadataVersion enum)
_FEATURE_LEVEL = {"3.4-IV0": 8, "3.5-IV2": 11, "3.6-IV1": 13, "3.6-IV2": 14, "3.7-IV4": 19,
                  "3.8-IV0": 20, "3.9-IV0": 21}
# the broker's own client refusing the stand-in's ApiVersions (3.6: "The broker does not
# support FETCH with version in range [0,15]. The supported range is [17,17].")
_FETCH_REFUSED = re.compile(r"UnsupportedVersionException: (The \w+ does not support FETCH "
                            r"with version in range \[\d+,\d+\]\. The supported range is "
                            r"\[\d+,\d+\]\.)")

pytestmark = [
    pytest.mark.oracle, pytest.mark.slow, pytest.mark.timeout(1800),
    pytest.mark.skipif(not SOURCES, reason=(
        f"opt-in matrix cell (issue 29, older brokers on the online path): set {_ENV}, e.g. "
        f'{_ENV}="3.6 3.8", to run it; not run in CI')),
]

PARTITIONS = 20
_CONTROLLER_PROPS = {
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    # the stand-in must win the first election even on a loaded machine
    "controller.quorum.election.timeout.ms": "60000",
}
_HEAP = "320m"
# what a broker's log says when Kafka refuses something this cell is about
_REFUSALS = re.compile(
    r"^\[[^\]]*\] (?:ERROR|WARN|FATAL)[^\n]*(?:UnsupportedVersion|UNSUPPORTED_VERSION|"
    r"unsupported|does not support|not supported|Unable to register|Fatal error|"
    r"Exiting Kafka|incompatible|Incompatible)[^\n]*$", re.MULTILINE)


def _findings(nodes: list[Any], limit: int = 12) -> str:
    """The distinct refusal-like lines of every node's logs, timestamps stripped."""
    seen: dict[str, str] = {}
    for n in nodes:
        for line in _REFUSALS.findall(n.all_logs_text()):
            key = re.sub(r"^\[[^\]]*\] ", "", line)
            key = re.sub(r"\d+", "N", key)[:300]
            seen.setdefault(key, f"{n._label}: {line[:600]}")
    return "\n".join(list(seen.values())[:limit])


def _records(controller: KafkaController) -> list[dict[str, Any]]:
    """The controller's own metadata log as Kafka's DumpLogSegments decodes it."""
    out: list[dict[str, Any]] = []
    for segment in follower_segments(controller.metadata_log_dir):
        out += dump_log_payloads(segment)
    return out


def _registrations(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each broker's last RegisterBrokerRecord."""
    return {r["data"]["brokerId"]: r["data"] for r in records
            if r["type"] == "REGISTER_BROKER_RECORD"}


def _controller_metadata_version(controller: KafkaController) -> str:
    """The metadata.version the controller last loaded, from its own log ("Loaded new metadata
    Features(metadataVersion=...)"): `kafka-features --bootstrap-controller` needs 3.7-IV0
    (KIP-919; below it Kafka answers "Direct-to-controller communication is not supported with
    the current MetadataVersion")."""
    found: list[str] = re.findall(r"Loaded new metadata Features\(metadataVersion=([^,]+),",
                                  controller.log_text())
    assert found, "the controller never loaded a metadata.version"
    return found[-1]


def _finalized(bootstrap: str) -> dict[str, str]:
    """Every finalized feature level, as Kafka 3.9.1's `kafka-features.sh --bootstrap-server
    describe` reports it (from KRaft brokers)."""
    out = run_tool(kafka_dist("3.9"), "org.apache.kafka.tools.FeatureCommand",
                   "--bootstrap-server", bootstrap, "describe").stdout
    return dict(re.findall(r"Feature: (\S+)\s.*?FinalizedVersionLevel: (\S+)", out))


def _create(admin: AdminClient, topic: str, partitions: int) -> None:
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=2)],
                        request_timeout=120)[topic].result(180)


def _wait_for_migrating_registrations(controller: KafkaController, timeout_s: float = 60
                                     ) -> dict[int, dict[str, Any]]:
    """Both brokers' RegisterBrokerRecords in the controller's own log, once there."""
    deadline = time.monotonic() + timeout_s
    while sorted(regs := _registrations(_records(controller))) != [0, 1]:
        assert time.monotonic() < deadline, regs
        time.sleep(2)
    return regs


def _refused_below_transactions(zk: KazooClient, done: Any, brokers: list[KafkaZkBroker],
                                nodes: list[KafkaController], bootstrap: str,
                                admin: AdminClient) -> None:
    """A line whose own metadata.version is below 3.6-IV1 (3.4, 3.5): its brokers register with
    the KRaft controller at exactly that level, and an online cutover needs metadata
    transactions (3.6-IV1). The run must stop before touching ZooKeeper: ZooKeeper's own
    controller (a broker, ephemeral, no KRaft epoch) still leads, `/migration` holds no KRaft
    controller (Kafka 3.9.1's controllers create it empty, kraft_controller_epoch -1, as soon
    as they start in migration mode: KRaftMigrationDriver's recovery from ZooKeeper), and the
    brokers still serve a topic created afterwards. The controllers are stopped first: left
    running they would elect one of them (after their long election timeout) and start
    Kafka's own migration."""
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    for node in nodes:
        node.stop()
    claim = wait_for_zk_controller(zk, 30)
    assert claim["brokerid"] in {b.broker_id for b in brokers}, claim
    if zk.exists("/migration") is not None:
        state = json.loads(zk.get("/migration")[0])
        assert state["kraft_controller_epoch"] == -1, state
    _create(admin, "created-after-refusal", 3)
    produce_and_consume(bootstrap, "created-after-refusal")


@pytest.mark.parametrize("line", SOURCES or ["3.6"])
def test_older_zk_brokers_follow_the_standin_and_roll_to_kraft_on_391(
    line: str, tmp_path: Path, zk_server: Any, zk_chroot_client: KazooClient, zk_chroot: str
) -> None:
    root, connect, zk = tmp_path, f"{zk_server.connect}{zk_chroot}", zk_chroot_client
    level = _OWN_LEVEL[line]
    dist = kafka_dist(line)
    started = time.monotonic()
    timeline: dict[str, float] = {}
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    with migration_cluster(root, connect, heap=_HEAP, voters=voters, dist=dist,
                           extra={"inter.broker.protocol.version": line}) as cluster:
        brokers = cluster.brokers
        bootstrap = ",".join(b.bootstrap_servers for b in brokers)
        running = re.findall(r"Kafka version: (\S+)", brokers[0].log_text())
        assert running and running[0].startswith(line + "."), running
        admin = AdminClient({"bootstrap.servers": bootstrap})
        _create(admin, "load-000", PARTITIONS)
        produce_and_consume(bootstrap, "load-000")
        timeline["brokers"] = time.monotonic() - started
        # plan, asked with --bootstrap-server, hears each broker's line from its ApiVersions:
        # at 3.9-IV0 (the default) every one blocks, naming its line's level; at that level
        # none does (below 3.6 the way out is an upgrade or the offline path)
        online_ok = _FEATURE_LEVEL[level] >= _FEATURE_LEVEL["3.6-IV1"]
        for mv, blocked in (("3.9-IV0", [0, 1]), *([(level, [])] if online_ok else [])):
            planned = subprocess.run(
                [sys.executable, "-m", "migrate.cli", "plan", "--zookeeper", connect,
                 "--bootstrap-server", bootstrap, "--metadata-version", mv, "--json", "-"],
                capture_output=True, text=True, timeout=300)
            assert planned.returncode in (0, 1), planned.stdout + planned.stderr
            found = [b for b in json.loads(planned.stdout)["blockers"]
                     if b["code"] == "BROKER_OLDER_THAN_METADATA_VERSION"]
            assert [b["path"] for b in found] == [f"/brokers/ids/{n}" for n in blocked], found
            way = (f"give --metadata-version {level}" if online_ok
                   else "upgrade every broker to Kafka 3.6 or later")
            assert all(way in b["message"] for b in found), found
        cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
        with migration_mode_controllers(root, connect, cluster_id, _CONTROLLER_PROPS,
                                        ports=ports, heap=_HEAP) as (_, nodes):
            done = migrate_through_standin(
                connect, ports, root, "--metadata-version", level,
                "--bootstrap-server", bootstrap, "--handoff-timeout", "240",
                *[f"--controller-log={n.server_log}" for n in nodes])
            (root / "migrate.out").write_text(done.stdout + done.stderr)
            timeline["migrate"] = time.monotonic() - started
            if _FEATURE_LEVEL[level] < _FEATURE_LEVEL["3.6-IV1"]:
                _refused_below_transactions(zk, done, brokers, nodes, bootstrap, admin)
                print(f"\nonline from Kafka {running[0]} brokers (IBP {line}) at "
                      f"metadata.version {level}: refused before the fence (exit 2), ZooKeeper's "
                      f"controller still leads and the brokers serve: "
                      f"{done.stderr.strip().splitlines()[-1]}")
                return
            everyone = [*brokers, *nodes]
            fetch = sorted({m for n in brokers for m in _FETCH_REFUSED.findall(n.all_logs_text())})
            assert done.returncode == 0, (
                f"zk2kraft migrate exited {done.returncode}\n"
                + (f"the brokers' metadata fetches were refused: {fetch}\n" if fetch else "")
                + f"{done.stdout[-3000:]}{done.stderr[-3000:]}\n"
                f"--- Kafka's refusal-like lines ---\n{_findings(everyone)}")
            taker = kraft_controller_took_over(zk, nodes)
            timeline["dual_write"] = time.monotonic() - started
            assert _controller_metadata_version(taker) == level
            regs = _wait_for_migrating_registrations(taker)
            mv_ranges = {}
            for bid, reg in regs.items():
                assert reg["isMigratingZkBroker"] is True, reg
                (mv,) = [f for f in reg["features"] if f["name"] == "metadata.version"]
                mv_ranges[bid] = (mv["minSupportedVersion"], mv["maxSupportedVersion"])
            # Kafka's KafkaServer remaps metadata.version to its IBP: that level only
            want = _FEATURE_LEVEL[level]
            assert mv_ranges == {0: (want, want), 1: (want, want)}, mv_ranges
            # the brokers follow the KRaft controller: dual-write, and served
            topic = "created-after-cutover"
            _create(admin, topic, 3)
            znode = json.loads(wait_for_znode(zk, f"/brokers/topics/{topic}", 120))
            assert sorted(znode["partitions"]) == ["0", "1", "2"], znode
            produce_and_consume(bootstrap, topic)
            # kept their registrations across the handover: no re-registration, nothing
            # skipped as offline (the roll below registers them anew, on purpose)
            rpcs = broker_rpcs(taker.log_text())
            assert rpcs.registered == () and rpcs.offline == 0, rpcs
            timeline["served"] = time.monotonic() - started
            # the brokers to KRaft mode on Kafka 3.9.1's binaries, one at a time
            for broker in brokers:
                broker.dist = None  # 3.9.1
                broker.restart(
                    remove=("broker.id", "zookeeper.connect", "zookeeper.session.timeout.ms",
                            "zookeeper.metadata.migration.enable",
                            "inter.broker.protocol.version"),
                    update={"process.roles": "broker", "node.id": str(broker.broker_id),
                            "controller.quorum.voters": voters})
                wait_for_full_isr(admin)
            timeline["kraft_brokers"] = time.monotonic() - started
            assert all("Kafka version: 3.9.1" in b.log_text() for b in brokers)
            regs = _registrations(_records(taker))
            assert {b: r["isMigratingZkBroker"] for b, r in regs.items()} == {
                0: False, 1: False}, regs
            features = _finalized(bootstrap)
            assert features.get("metadata.version") == level, features
            after = "created-after-kraft-brokers"
            _create(admin, after, 3)
            wait_for_znode(zk, f"/brokers/topics/{after}", 120)  # still dual-writing
            produce_and_consume(bootstrap, after)
            produce_and_consume(bootstrap, topic)
            assert "Encountered fatal fault" not in "\n".join(n.all_logs_text() for n in nodes)
            timeline["total"] = time.monotonic() - started
            report = json.loads((root / "m.json").read_text())
    window = report["window_ms"]
    print(f"\nonline from Kafka {running[0]} brokers (IBP {line}) at metadata.version {level}: "
          f"works; finalized {features}; broker metadata.version range {mv_ranges}; handover "
          f"broker RPCs {rpcs}; window tool {window['tool']} ms, total {window['total']} ms, "
          f"observed {window.get('observed')} ms; canary records "
          f"{report['canary']['records']}; timeline (s) "
          + ", ".join(f"{k} {v:.0f}" for k, v in timeline.items()))
    refusal_like = _findings([*brokers, *nodes])
    if refusal_like:
        print("refusal-like log lines seen on the way (not fatal):\n" + refusal_like)
