"""`migrate --cutover now` reports the window's parts: JSON, terminal and HTML, through the CLI.

Real ZooKeeper, local voter directories. The "KRaft controller" of the handoff is the claim
helper (it claims /controller as Kafka's controller does); the same `--on-cutover` command then
writes a controller log in Kafka 3.9's layout whose migration-driver lines are 1,234 ms and
2,500 ms after its claim line, so Kafka's parts have hand-known values: reconcile (claim ->
KRAFT_CONTROLLER_TO_BROKER_COMM) 1234 ms, broker RPCs (-> DUAL_WRITE) 1266 ms.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from samples import SampleSpec
from tests.support.migration_cluster import claim_on_cutover

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]

# Writes Kafka-layout driver lines: the claim now (ms-aligned), then the states after it.
_WRITE_LOG = '''
import datetime, sys, time
base_ms = int(time.time() * 1000)
def stamp(ms):
    d = datetime.datetime.fromtimestamp(ms // 1000)
    return d.strftime("%Y-%m-%d %H:%M:%S") + f",{ms % 1000:03d}"
d = "[KRaftMigrationDriver id=3001]"
c = "(org.apache.kafka.metadata.migration.KRaftMigrationDriver)"
lines = [
    (0, f"INFO {d} Claimed ZK controller leadership in 1000 ns. Transitioned migration state "
        f"from A to B {c}"),
    (300, f"INFO {d} 3001 transitioning from BECOME_CONTROLLER to SYNC_KRAFT_TO_ZK state {c}"),
    (1234, f"INFO {d} 3001 transitioning from SYNC_KRAFT_TO_ZK to "
           f"KRAFT_CONTROLLER_TO_BROKER_COMM state {c}"),
    (2500, f"INFO {d} 3001 transitioning from KRAFT_CONTROLLER_TO_BROKER_COMM to DUAL_WRITE "
           f"state {c}"),
]
with open(sys.argv[1], "a") as f:
    for offset, text in lines:
        f.write(f"[{stamp(base_ms + offset)}] {text}\\n")
'''


def test_json_terminal_and_html_carry_the_stacked_parts(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    script = tmp_path / "write_log.py"
    script.write_text(_WRITE_LOG)
    log = tmp_path / "controller" / "server.log"
    log.parent.mkdir()
    on_cutover = f"{claim_on_cutover(cluster.connect)} && {sys.executable} {script} {log}"
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect,
           *[f"--voter={v}={tmp_path / f'c{v}'}" for v in (3000, 3001, 3002)],
           "--cutover", "now", "--on-cutover", on_cutover, "--controller-log", str(log),
           "--json", str(tmp_path / "migrate.json"), "--html", str(tmp_path / "migrate.html")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "160"})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    doc = json.loads((tmp_path / "migrate.json").read_text())
    window = doc["window_ms"]
    parts = window["parts"]
    print("window_ms:", json.dumps({k: v for k, v in window.items() if k != "parts"}),
          {n: p["ms"] for n, p in parts.items()})
    assert list(parts) == ["tool", "migration_znode", "election", "kafka_claim", "reconcile",
                           "broker_rpcs"]
    assert parts["tool"]["ms"] == window["tool"]
    for name in ("tool", "migration_znode", "kafka_claim"):
        assert parts[name]["ms"] is not None and parts[name]["ms"] >= 0, parts[name]
        assert parts[name]["source"] == "zk2kraft" and parts[name]["reason"] is None
    # local voter dirs: no election of ours to time, and the JSON says why (nor a split)
    assert parts["election"]["ms"] is None and "--on-cutover" in parts["election"]["reason"]
    assert "parts" not in parts["election"]
    # ours stack up to t2 - t0 (each figure rounded to the microsecond)
    ours = sum(parts[n]["ms"] for n in ("tool", "migration_znode", "kafka_claim"))
    assert abs(ours - window["total"]) < 0.01
    # the boundaries on both clocks, in the order the run takes them; the wall clock moved
    # as the monotonic one did between them (no step on this host within a second)
    stamps = doc["stamps"]
    assert list(stamps) == ["fence", "drained", "migration_written", "handoff", "claimed"]
    walls = [stamps[k]["wall_s"] for k in stamps]
    monos = [stamps[k]["mono_s"] for k in stamps]
    assert walls == sorted(walls) and monos == sorted(monos), stamps
    assert abs((walls[-1] - walls[0]) - (monos[-1] - monos[0])) < 0.005, stamps
    assert abs((monos[-1] - monos[0]) * 1000 - window["total"]) < 0.01
    # Kafka's, from the log lines' own timestamps
    assert parts["reconcile"] == {
        "ms": 1234.0, "source": "controller log", "reason": None,
        "what": "/controller claimed -> KRAFT_CONTROLLER_TO_BROKER_COMM (Kafka's /migration "
                "write and full sync of its image to ZooKeeper, SYNC_KRAFT_TO_ZK)"}
    assert parts["broker_rpcs"]["ms"] == 1266.0
    # the terminal: a stacked bar and a legend
    out = proc.stdout + proc.stderr
    assert "window parts, stacked" in out
    assert re.search(r"reconcile\s+1234\.0", out) and re.search(r"broker_rpcs\s+1266\.0", out)
    # the HTML page: one SVG segment per measured part, in stacking order; mode 0600
    page = (tmp_path / "migrate.html").read_text()
    assert re.findall(r'data-part="(\w+)"', page) == [
        "tool", "migration_znode", "kafka_claim", "reconcile", "broker_rpcs"]
    assert (tmp_path / "migrate.html").stat().st_mode & 0o777 == 0o600


def test_controller_log_and_html_need_an_online_cutover(tmp_path: Path) -> None:
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", "127.0.0.1:1", "--voter",
           f"3000={tmp_path / 'c'}", "--controller-log", str(tmp_path / "server.log")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--controller-log" in proc.stderr
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", "127.0.0.1:1", "--voter",
           f"3000={tmp_path / 'c'}", "--cutover", "now", "--controller-log", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is a directory" in proc.stderr
