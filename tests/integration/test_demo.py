"""The README's main job, `scripts/demo.sh`, run as a newcomer runs it (small sizes).

It must show the product's core: a writer changing the cluster, `migrate --cutover now` with
the window's parts, the writer fenced, `verify` at parity, the HTML report where it says, then a
fleet's pre-flight on Spark (ready, blocked, unreachable: exit 3, fleet.html), and nothing left
running. Expected texts are the demo's contract, written by hand.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_an_online_migration_to_parity(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "DEMO_TOPICS": "5", "DEMO_PARTITIONS": "3",
           "DEMO_WRITER_RATE": "50"}
    proc = subprocess.run([str(ROOT / "scripts" / "demo.sh")], capture_output=True, text=True,
                          timeout=600, env=env, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    for step in ("plan", "migrate", "verify"):
        assert re.search(rf"zk2kraft {step} exit code: 0 \(\d+\.\d s\)", out), step
    assert "running --on-cutover:" in out and "handoff complete" in out
    assert "window parts, stacked" in out and re.search(r"kafka_claim\s+\d+\.\d", out)
    assert re.search(r"writer: \d+ changes at \d+/s .*then fenced: its next write failed the "
                     r"/controller_epoch check", out)
    assert "parity: the voters' log matches ZooKeeper" in out
    # the report stays where the demo says; everything else of the run is gone
    report = Path(re.findall(r"^\s+(\S+/migrate\.html)\s", out, re.M)[0])
    assert report.parent.parent == tmp_path
    assert report.stat().st_mode & 0o777 == 0o600
    assert 'data-part="tool"' in report.read_text()
    # the fleet's pre-flight: one cluster ready, one blocked, one unreachable (3 wins)
    assert re.search(r"zk2kraft plan --fleet exit code: 3 \(\d+\.\d s;", out)
    assert "readiness: 1 ready, 0 warnings, 1 blocked, 1 unreachable" in out
    fleet = report.parent / "fleet.html"
    assert fleet.stat().st_mode & 0o777 == 0o600
    page = fleet.read_text()
    assert "planned on spark local[" in page and "ZkUnreachableError" in page
    assert "TOPIC_WITHOUT_ID" in page and "LOG_DIR_EVENT_PENDING" in page  # "everything"
    assert sorted(p.name for p in tmp_path.iterdir()) == [report.parent.name]
    port = int(re.findall(r"starting ZooKeeper on 127\.0\.0\.1:(\d+)", out)[0])
    with pytest.raises(OSError):  # ZooKeeper was stopped
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
