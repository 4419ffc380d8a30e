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

Where Kafka refuses instead, the exact log line is printed as the finding (and the test fails
with it: whether to pin a refusal is decided per line once it is known).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.support.kafka import (
    KafkaController,
    KafkaZkBroker,
    dump_log_payloads,
    in_parallel,
    wait_until_serving,
)
from tests.support.kraft import KafkaDist, kafka_dist, run_tool
from tests.support.migration_cluster import (
    kraft_controller_took_over,
    produce_and_consume,
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


@contextlib.contextmanager
def _older_cluster(root: Path, connect: str, dist: KafkaDist, line: str, voters: str,
                   brokers: int = 2) -> Iterator[list[KafkaZkBroker]]:
    """`migration_cluster`'s brokers, of release `dist`, IBP = `line`; all stopped on exit."""
    nodes = []
    for i in range(brokers):
        props = {
            "zookeeper.metadata.migration.enable": "true",
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.protocol.version": line,
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "default.replication.factor": str(min(2, brokers)),
            "controlled.shutdown.retry.backoff.ms": "1000",
        }
        nodes.append(KafkaZkBroker(root / f"broker{i}", connect, broker_id=i, heap=_HEAP,
                                   start_timeout=240, extra=props, dist=dist))
    try:
        for n in nodes:
            n.launch()
        for n in nodes:
            n.wait_started()
        wait_until_serving(nodes)
        yield nodes
    finally:
        in_parallel([n.stop for n in nodes])


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
    found = re.findall(r"Loaded new metadata Features\(metadataVersion=([^,]+),",
                       controller.log_text())
    assert found, "the controller never loaded a metadata.version"
    return found[-1]


def _finalized(bootstrap: str) -> dict[str, str]:
    """Every finalized feature level, as Kafka 3.9.1's `kafka-features.sh --bootstrap-server
    describe` reports it (from KRaft brokers)."""
    out = run_tool(kafka_dist("3.9"), "org.apache.kafka.tools.FeatureCommand",
                   "--bootstrap-server", bootstrap, "describe").stdout
    return dict(re.findall(r"Feature: (\S+)\s.*?FinalizedVersionLevel: (\S+)", out))


def _wait_for_full_isr(admin: AdminClient, timeout_s: float = 240) -> None:
    """Every partition has a leader and its whole replica set in the ISR (what brokers say)."""
    deadline = time.monotonic() + timeout_s
    while True:
        short: dict[str, Any] = {}
        try:
            for name, topic in admin.list_topics(timeout=30).topics.items():
                for p in topic.partitions.values():
                    if p.leader < 0 or sorted(p.isrs) != sorted(p.replicas):
                        short[f"{name}-{p.id}"] = (p.leader, p.isrs)
        except Exception as exc:  # noqa: BLE001 - a restarting broker; asked again
            short["metadata"] = str(exc)
        if not short:
            return
        assert time.monotonic() < deadline, f"ISRs not full: {dict(list(short.items())[:5])}"
        time.sleep(1)


def _create(admin: AdminClient, topic: str, partitions: int) -> None:
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=2)],
                        request_timeout=120)[topic].result(180)


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
    with _older_cluster(root, connect, dist, line, voters) as brokers:
        bootstrap = ",".join(b.bootstrap_servers for b in brokers)
        running = re.findall(r"Kafka version: (\S+)", brokers[0].log_text())
        assert running and running[0].startswith(line + "."), running
        admin = AdminClient({"bootstrap.servers": bootstrap})
        _create(admin, "load-000", PARTITIONS)
        produce_and_consume(bootstrap, "load-000")
        timeline["brokers"] = time.monotonic() - started
        cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
        with migration_mode_controllers(root, connect, cluster_id, _CONTROLLER_PROPS,
                                        ports=ports, heap=_HEAP) as (_, nodes):
            done = migrate_through_standin(
                connect, ports, root, "--metadata-version", level,
                "--bootstrap-server", bootstrap, "--handoff-timeout", "240",
                *[f"--controller-log={n.server_log}" for n in nodes])
            (root / "migrate.out").write_text(done.stdout + done.stderr)
            timeline["migrate"] = time.monotonic() - started
            everyone = [*brokers, *nodes]
            assert done.returncode == 0, (
                f"zk2kraft migrate exited {done.returncode}\n{done.stdout[-4000:]}"
                f"{done.stderr[-4000:]}\n--- Kafka's refusal-like lines ---\n"
                f"{_findings(everyone)}")
            taker = kraft_controller_took_over(zk, nodes)
            timeline["dual_write"] = time.monotonic() - started
            assert _controller_metadata_version(taker) == level
            regs = _registrations(_records(taker))
            assert sorted(regs) == [0, 1], regs
            mv_ranges = {}
            for bid, reg in regs.items():
                assert reg["isMigratingZkBroker"] is True, reg
                (mv,) = [f for f in reg["features"] if f["name"] == "metadata.version"]
                mv_ranges[bid] = (mv["minSupportedVersion"], mv["maxSupportedVersion"])
            assert len(set(mv_ranges.values())) == 1, mv_ranges
            low, high = next(iter(mv_ranges.values()))
            assert low == high, mv_ranges  # remapped to the broker's IBP, its level only
            # the brokers follow the KRaft controller: dual-write, and served
            topic = "created-after-cutover"
            _create(admin, topic, 3)
            znode = json.loads(wait_for_znode(zk, f"/brokers/topics/{topic}", 120))
            assert sorted(znode["partitions"]) == ["0", "1", "2"], znode
            produce_and_consume(bootstrap, topic)
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
                _wait_for_full_isr(admin)
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
          f"works; finalized {features}; broker metadata.version range {mv_ranges}; window "
          f"tool {window['tool']} ms, total {window['total']} ms, observed "
          f"{window.get('observed')} ms; records {report['canary']['records']}; timeline (s) "
          + ", ".join(f"{k} {v:.0f}" for k, v in timeline.items()))
    refusal_like = _findings([*brokers, *nodes])
    if refusal_like:
        print("refusal-like log lines seen on the way (not fatal):\n" + refusal_like)
