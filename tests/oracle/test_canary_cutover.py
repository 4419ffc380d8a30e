"""The window as clients feel it, against real Kafka 3.9.1: `zk2kraft migrate --cutover now
--bootstrap-server` on ZooKeeper-mode brokers in migration mode, the KRaft controller started by
`--on-cutover` on the log zk2kraft wrote.

Facts checked (not derived from zk2kraft's code): the canary's controller-bound requests stop
being served between the fence and the KRaft controller's takeover, so the longest gap between
served requests is positive and at least the tool's own part (t1 - t0), during which no
controller exists; every record the acks=all producer had acknowledged is consumed, once; the
controller takes the log over without Kafka's own copy (no WAIT_FOR_BROKERS, no ZK_MIGRATION)
and reaches DUAL_WRITE (its log).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.kafka import nodes_failure
from tests.support.migration_cluster import (
    CONTROLLER_ID,
    MigrationCluster,
    dual_write_at,
    migration_cluster,
    migration_controller,
    on_cutover_gate,
    state_times,
)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _create_topics(cluster: MigrationCluster, topics: dict[str, int]) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic(t, num_partitions=n, replication_factor=2)
                                   for t, n in topics.items()], request_timeout=120)
    try:
        for f in futures.values():
            f.result(180)
    except Exception as exc:  # the brokers' logs say why; the client's error does not
        raise nodes_failure(f"creating {sorted(topics)} failed: {exc}", cluster.brokers) from exc


def test_canary_measures_the_window_and_loses_no_record(
    tmp_path: Path, zk_server: Any, zk_chroot: str
) -> None:
    connect = f"{zk_server.connect}{zk_chroot}"
    report_path = tmp_path / "report.json"
    with migration_cluster(tmp_path, connect, brokers=2) as cluster:
        _create_topics(cluster, {"orders": 8, "payments": 4})
        voter = tmp_path / f"voter{CONTROLLER_ID}"
        controller = migration_controller(tmp_path, cluster, voter)
        with on_cutover_gate(tmp_path, controller) as command:
            proc = subprocess.run(
                [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
                 "--voter", f"{CONTROLLER_ID}={voter}", "--cutover", "now",
                 "--on-cutover", command, "--bootstrap-server", cluster.bootstrap,
                 "--handoff-timeout", "240", "--controller-log", str(controller.server_log),
                 "--json", str(report_path)],
                capture_output=True, text=True, timeout=900, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
            assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
            dual_write_at(controller)
            states = state_times(controller)
            log = controller.log_text()
    report = json.loads(report_path.read_text())
    window = report["window_ms"]
    assert window["tool"] is not None and window["tool"] > 0
    assert window["observed"] is not None
    assert window["observed"] >= window["tool"], window
    assert window["clients_t2"] is not None and window["clients_t2"] > 0
    canary = report["canary"]
    records = canary["records"]
    assert records["acked"] > 0
    # idempotent, acks=all, 300 s delivery timeout: the window costs latency, not records
    assert (records["acked"], records["errors"]) == (records["produced"], {}), records
    assert (records["missing"], records["duplicates"]) == (0, 0), records
    assert canary["requests"]["ok"] > 0
    # Kafka took over the log zk2kraft wrote: no broker wait, no copy of its own
    assert "DUAL_WRITE" in states
    assert "WAIT_FOR_BROKERS" not in states and "ZK_MIGRATION" not in states, states
    assert "Loaded ZK migration state of MIGRATION" in log
    assert "window as clients felt it: observed" in proc.stdout + proc.stderr
    # the window's parts: ours add up to total; Kafka's are its own log's timestamps
    # (state_times reads the same log independently: the claim, then the first entry of each
    # state)
    parts = window["parts"]
    print("window_ms:", {k: v for k, v in window.items() if k != "parts"},
          {n: p["ms"] for n, p in parts.items()})
    ours = [parts[n]["ms"] for n in ("tool", "migration_znode", "kafka_claim")]
    assert None not in ours and abs(sum(ours) - window["total"]) < 0.01, parts
    assert parts["election"]["ms"] is None  # local voter dir: the election is Kafka's
    reconcile = (states["KRAFT_CONTROLLER_TO_BROKER_COMM"] - states["claim"]) * 1000
    rpcs = (states["DUAL_WRITE"] - states["KRAFT_CONTROLLER_TO_BROKER_COMM"]) * 1000
    assert abs(parts["reconcile"]["ms"] - reconcile) < 0.01, (parts, states)
    assert abs(parts["broker_rpcs"]["ms"] - rpcs) < 0.01, (parts, states)
