"""Every way out of `migrate --cutover now|manual` writes the report that was asked for (issue 16).

An operator who asked for `--json`/`--html` gets them on a failure too: here ZooKeeper cannot be
reached (nothing listens on the port), which ends the run with exit 3 before anything is
written anywhere; the JSON says `status: failed`, the exit code and the message, and the HTML
page carries the same status.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.ports import free_port

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]


def test_an_unreachable_zookeeper_still_writes_the_json_and_html_reports(tmp_path: Path) -> None:
    connect = f"127.0.0.1:{free_port()}"
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--zk-timeout", "2",
           *[f"--voter={v}={tmp_path / f'c{v}'}" for v in (3000, 3001, 3002)],
           "--cutover", "now", "--json", str(tmp_path / "m.json"),
           "--html", str(tmp_path / "m.html")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["status"] == "failed"
    assert doc["error"]["exit_code"] == 3
    assert connect in doc["error"]["message"], doc["error"]
    assert doc["problems"] == []
    page = (tmp_path / "m.html").read_text()
    assert "failed" in page and "error (exit code 3)" in page
    assert (tmp_path / "m.json").stat().st_mode & 0o777 == 0o600
