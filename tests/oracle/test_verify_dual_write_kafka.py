"""`zk2kraft verify` during dual-write, against real Kafka 3.9.1 (issue 16, item 5).

ZooKeeper-mode brokers in migration mode; `zk2kraft migrate --cutover now` writes the log and a
KRaft controller in migration mode takes it over (DUAL_WRITE). Then, through Kafka only:
a topic is created (the controller writes it to its log and to ZooKeeper), an idempotent
producer makes a broker ask the controller for a producer-id block (Kafka writes a
ProducerIdsRecord and, in ZooKeeper, `{"broker":-1,"block_start":next,...}`), and a broker
stops (its znode goes, its own registration stays in the log). At each point `verify` on the
controller's metadata.log.dir exits 0, with the producer-id block and the stopped broker listed
as changed by Kafka, not as differences; a topic config changed in ZooKeeper behind Kafka's
back (a real divergence) exits 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.support.kafka import nodes_failure
from tests.support.migration_cluster import (
    CONTROLLER_ID,
    dual_write_at,
    migration_cluster,
    migration_controller,
    on_cutover_gate,
)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def _zk2kraft(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "migrate.cli", *args], capture_output=True,
                          text=True, timeout=900, cwd=ROOT, env=ENV)


def _verify(connect: str, voter: Path, out: Path) -> tuple[int, dict[str, Any], str]:
    r = _zk2kraft("verify", "--zookeeper", connect, "--voter", f"{CONTROLLER_ID}={voter}",
                  "--json", str(out))
    doc = json.loads(out.read_text()) if out.exists() else {}
    return r.returncode, doc, r.stdout + r.stderr


def _verify_settled(connect: str, voter: Path, out: Path,
                    timeout: float = 60.0) -> tuple[int, dict[str, Any], str]:
    """`_verify` until it exits 0 or `timeout` passes: Kafka writes ZooKeeper after the log's
    record committed, so a difference can be transient while it writes (the last result)."""
    deadline = time.monotonic() + timeout
    while True:
        code, doc, text = _verify(connect, voter, out)
        if code == 0 or time.monotonic() > deadline:
            return code, doc, text
        time.sleep(1)  # give Kafka's dual-write its moment


def _entries(doc: dict[str, Any], section: str) -> list[tuple[str, str, str]]:
    return sorted((d["kind"], d["key"], d["field"]) for d in doc.get(section, []))


def _until(what: str, check: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)  # polling ZooKeeper for Kafka's dual-write
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_verify_is_clean_in_dual_write_and_catches_divergence(
    tmp_path: Path, zk_server: Any, zk_chroot: str
) -> None:
    connect = f"{zk_server.connect}{zk_chroot}"
    zk = KazooClient(connect)
    zk.start()
    try:
        with migration_cluster(tmp_path, connect, brokers=2) as cluster:
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
            for f in admin.create_topics([NewTopic("before", 3, 2)],
                                         request_timeout=120).values():
                f.result(180)
            voter = tmp_path / f"voter{CONTROLLER_ID}"
            controller = migration_controller(tmp_path, cluster, voter)
            with on_cutover_gate(tmp_path, controller) as command:
                r = _zk2kraft("migrate", "--zookeeper", connect, "--voter",
                              f"{CONTROLLER_ID}={voter}", "--cutover", "now",
                              "--on-cutover", command, "--handoff-timeout", "240")
                assert r.returncode == 0, r.stdout + r.stderr
                dual_write_at(controller)

                # a topic created through KRaft, dual-written to ZooKeeper
                try:
                    for f in admin.create_topics([NewTopic("during", 2, 2)],
                                                 request_timeout=120).values():
                        f.result(180)
                except Exception as exc:
                    raise nodes_failure(f"creating 'during' failed: {exc}",
                                        [*cluster.brokers, controller]) from exc
                _until("/brokers/topics/during", lambda: zk.exists("/brokers/topics/during"))
                # a producer-id block allocated by the KRaft controller
                producer = Producer({"bootstrap.servers": cluster.bootstrap,
                                     "enable.idempotence": True})
                producer.produce("during", b"x")
                assert producer.flush(120) == 0
                block = _until("Kafka's producer-id block in ZooKeeper", lambda: (
                    b := json.loads(zk.get("/latest_producer_id_block")[0]))["broker"] == -1
                    and b)
                code, doc, text = _verify_settled(connect, voter, tmp_path / "v1.json")
                assert code == 0, text
                assert doc["parity"] is True and doc["differences"] == []
                assert ("producer_ids", "cluster", "nextProducerId") in _entries(
                    doc, "changed_by_kafka"), doc
                kafka = {d["kind"]: d for d in doc["changed_by_kafka"]}
                # ZooKeeper's block starts where the log's next id is (Kafka's convention)
                assert kafka["producer_ids"]["quorum"] == int(block["block_start"])
                assert kafka["producer_ids"]["zookeeper"] == int(block["block_end"]) + 1
                assert doc["checked"]["topic"] == 2 and doc["checked"]["partition"] == 5

                # a broker stops: its znode goes, its own registration stays in the log
                cluster.brokers[1].stop()
                _until("/brokers/ids/1 gone", lambda: not zk.exists("/brokers/ids/1"))
                code, doc, text = _verify_settled(connect, voter, tmp_path / "v2.json")
                assert code == 0, text
                assert ("broker", "1", "<exists>") in _entries(doc, "changed_by_kafka"), doc

                # divergence: ZooKeeper changed behind the controller's back
                zk.set("/config/topics/before",
                       b'{"version":1,"config":{"retention.ms":"1234"}}')
                code, doc, text = _verify(connect, voter, tmp_path / "v3.json")
                assert code == 1, text
                assert _entries(doc, "differences") == [
                    ("topic_config", "before", "retention.ms")]
    finally:
        zk.stop()
