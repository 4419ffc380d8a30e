"""Every malformed znode of the corpus, through `zk2kraft migrate` as an operator runs it
(issue 7): exit 2, the znode path named on stderr, and nothing written to any voter, neither to
a voter directory that already exists (empty but for Kafka's `.lock`) nor by creating one that
does not.

The corpus (tests/integration/malformed/corpus.json) also runs through the reader and `snapshot`
(test_zkreader_read.py) and the decoders (tests/unit/zkreader/test_znodes.py); here it meets the
command that writes. It holds range overflows (ids, epochs, feature levels, producer ids), a
partition-key collision ("5" and "05"), topic names Kafka forbids and oversized values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.malformed import CORPUS, write_malformed

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]


@pytest.mark.parametrize("entry", CORPUS, ids=[e["name"] for e in CORPUS])
def test_migrate_refuses_every_malformed_znode_and_writes_nothing(
    entry: dict[str, str], zk_server: Any, zk_chroot: str, zk_chroot_client: Any,
    tmp_path: Path,
) -> None:
    write_malformed(zk_chroot_client, entry)
    existing = tmp_path / "c3000"
    existing.mkdir()
    missing = tmp_path / "c3001"
    r = subprocess.run(
        [*ZK2KRAFT, "migrate", "--zookeeper", f"{zk_server.connect}{zk_chroot}",
         "--voter", f"3000={existing}", "--voter", f"3001={missing}",
         "--spark-master", "in-process", "--json", str(tmp_path / "migrate.json")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 2, r.stderr
    assert entry["path"] in r.stderr, r.stderr
    assert entry["problem"] in r.stderr, r.stderr
    # only Kafka's own (empty) lock file, which migrate holds for the whole run as a controller
    # would; the directory it had to create for the lock is gone again
    assert [(p.name, p.stat().st_size) for p in existing.iterdir()] in ([], [(".lock", 0)])
    assert not missing.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c3000"]  # no report, no staging


CLUSTER_ID_ENTRIES = [e for e in CORPUS if e["path"] == "/cluster/id"]


@pytest.mark.parametrize("entry", CLUSTER_ID_ENTRIES, ids=[e["name"] for e in CLUSTER_ID_ENTRIES])
def test_online_migrate_refuses_a_malformed_cluster_id_before_writing(
    entry: dict[str, str], zk_server: Any, zk_chroot: str, zk_chroot_client: Any,
    tmp_path: Path,
) -> None:
    # the online run reads /cluster/id first (the journal and the voters' meta.properties carry
    # it): a malformed one is the reader's exit 2, before a journal or a voter file is written
    write_malformed(zk_chroot_client, entry)
    existing = tmp_path / "c3000"
    existing.mkdir()
    r = subprocess.run(
        [*ZK2KRAFT, "migrate", "--zookeeper", f"{zk_server.connect}{zk_chroot}",
         "--voter", f"3000={existing}", "--cutover", "now",
         "--json", str(tmp_path / "migrate.json")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 2, r.stderr
    assert entry["path"] in r.stderr, r.stderr
    assert entry["problem"] in r.stderr, r.stderr
    assert [(p.name, p.stat().st_size) for p in existing.iterdir()] in ([], [(".lock", 0)])
    # no journal; the report asked for is written on every exit path (issue 16), saying why
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c3000", "migrate.json"]
    doc = json.loads((tmp_path / "migrate.json").read_text())
    assert doc["status"] == "failed" and doc["error"]["exit_code"] == 2, doc
    assert entry["path"] in doc["error"]["message"], doc["error"]
