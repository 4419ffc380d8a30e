"""The fence writes `/migration` only at the version the run judged, through the CLI.

`migrate --cutover manual` pre-copies and mirrors; meanwhile another writer (a KRaft controller
in migration mode recording itself, another tool) creates `/migration`, which was absent when
the run read and judged the tree. On SIGUSR1 the fence must refuse: exit 3 (the README's code
for another controller in ZooKeeper), a message naming `/migration`, nothing applied (the
ZooKeeper controller's ephemeral `/controller` and `/controller_epoch` as they were,
`/migration` as the other writer left it) and the log left open. A re-run judges `/migration`
again: while it is the other writer's it is the MIGRATION_ZNODE_EXISTS blocker (exit 1); once
the operator removed it, the same run resumes and cuts over with parity.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.cli_run import communicate
from tests.support.migration_cluster import fence_znodes
from writers import open_log_source

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)
OTHER_WRITER = {"version": 0, "kraft_controller_id": 3002, "kraft_controller_epoch": 5,
                "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}


def _migrate(connect: str, root: Path, mode: str) -> subprocess.Popen[str]:
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS],
           "--cutover", mode, "--json", str(root / "migrate.json")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def _record_types(voter: Path) -> list[str]:
    return [r.type for e in open_log_source(voter).entries() for r in e.batch.records]


def test_migration_rewritten_between_precopy_and_fence_fails_the_fence_with_nothing_applied(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    assert zk.exists("/migration") is None  # what the run reads and judges: absent
    proc = _migrate(cluster.connect, tmp_path, "manual")
    journal = tmp_path / ".zk2kraft-journal" / "journal.json"
    deadline = time.monotonic() + 120
    while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the pre-copy did not finish"
        time.sleep(0.1)
    # the other writer, between the pre-copy and the fence
    zk.create("/migration", json.dumps(OTHER_WRITER).encode())
    left = fence_znodes(zk)
    proc.send_signal(signal.SIGUSR1)
    out, err = communicate(proc, 120)
    assert proc.returncode == 3, out + err
    said = " ".join(err.split())
    assert "/migration changed since this run read and judged it (it was absent, it is now at " \
           "version 0)" in said, err
    assert "The fence was not applied and is not retried" in said
    # nothing applied: ZooKeeper's controller still holds its ephemeral /controller and epoch
    now = fence_znodes(zk)
    assert now == left
    assert now["/controller"] is not None and now["/controller"][2] != 0
    assert json.loads(zk.get("/migration")[0]) == OTHER_WRITER
    # and the log was not closed: no ZkMigrationStateRecord, no EndTransactionRecord
    types = _record_types(tmp_path / "c3000")
    assert "BEGIN_TRANSACTION_RECORD" in types
    assert "END_TRANSACTION_RECORD" not in types and "ZK_MIGRATION_STATE_RECORD" not in types

    # a re-run judges /migration again: the other writer's is a blocker
    again = _migrate(cluster.connect, tmp_path, "now")
    out, err = communicate(again, 300)
    assert again.returncode == 1, out + err
    assert "MIGRATION_ZNODE_EXISTS /migration" in " ".join(err.split()), err
    assert fence_znodes(zk) == left

    # the operator found out and removed it: the same run resumes and cuts over
    zk.delete("/migration")
    done = _migrate(cluster.connect, tmp_path, "now")
    out, err = communicate(done, 300)
    assert done.returncode == 0, out + err
    doc = json.loads((tmp_path / "migrate.json").read_text())
    mig = json.loads(zk.get("/migration")[0])
    assert mig["kraft_controller_id"] == 3000
    assert mig["kraft_metadata_offset"] == doc["last_offset"]
    assert json.loads(zk.get("/controller")[0])["brokerid"] == 3000
    verify = subprocess.run(
        [*ZK2KRAFT, "verify", "--zookeeper", cluster.connect,
         *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS],
         "--json", str(tmp_path / "v.json")], capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr
