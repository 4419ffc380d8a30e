"""What `zk2kraft migrate` leaves in voter directories: who may read it, and `inspect` on a log
cut inside its migration transaction. Real ZooKeeper, the real CLI, real directories.

Expected values are facts written out here, not derived from the code under test:
* the voter log holds broker passwords in clear (Kafka's does too), so files are 0600 and
  directories 0700; a controller runs as its own user, so everything takes the voter dir's
  owner and group (the test gives the dir to uid 4321 / gid 8765, which no process here has);
* a migration log at 3.6-IV1 or later is `FeatureLevelRecord` (offset 0), then
  `BeginTransactionRecord("ZK Migration")` (offset 1), ..., and ends with
  `EndTransactionRecord` in its last batch (Kafka's `KRaftMigrationDriver` framing); cut the
  last batch off, found by walking the v2 batch frames by hand (8-byte base offset, 4-byte
  length), and the log ends inside that open transaction.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec

pytestmark = pytest.mark.slow

VOTERS = (3000, 3001, 3002)
UID, GID = 4321, 8765


def zk2kraft(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "migrate.cli", *args], capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})


def migrate(connect: str, root: Path) -> subprocess.CompletedProcess[str]:
    return zk2kraft("migrate", "--zookeeper", connect, "--spark-master", "in-process",
                    "--quiet", *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS])


def test_voter_files_are_private_and_owned_like_the_voter_dir(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    if os.geteuid() != 0:
        pytest.fail("giving a directory to another user (as a controller's own) needs root")
    cluster = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=4))
    root = tmp_path / "kraft"
    root.mkdir()
    os.chown(root, UID, GID)  # c3002 does not exist yet: it is created like its parent
    for v in VOTERS[:2]:
        d = root / f"c{v}"
        d.mkdir(mode=0o750)
        os.chown(d, UID, GID)
    result = migrate(cluster.connect, root)
    assert result.returncode == 0, result.stderr
    created = root / "c3002"
    st = created.stat()
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o700, UID, GID)
    for v in VOTERS:
        voter = root / f"c{v}"
        inside = sorted(voter.rglob("*"))
        assert {p.name for p in inside} >= {".lock", "meta.properties", "__cluster_metadata-0",
                                            "quorum-state", "00000000000000000000.log"}
        for p in inside:
            pst = p.lstat()
            mode = stat.S_IMODE(pst.st_mode)
            assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))
            assert (pst.st_uid, pst.st_gid) == (UID, GID), p
    assert stat.S_IMODE((root / "c3000").stat().st_mode) == 0o750  # the operator's dir is kept


def _batch_starts(data: bytes) -> list[int]:
    """Byte positions of the v2 batches in a segment: baseOffset (8) + batchLength (4) + rest."""
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    assert pos == len(data)
    return starts


def test_inspect_flags_a_log_that_ends_inside_an_open_transaction(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    # three batches of 2,000 records: cutting the last one leaves two whole ones
    cluster = sample_cluster(SampleSpec.clean(topics=50, partitions_per_topic=100))
    result = migrate(cluster.connect, tmp_path)
    assert result.returncode == 0, result.stderr
    voter = tmp_path / "c3000"
    whole = zk2kraft("inspect", str(voter))
    assert whole.returncode == 0, whole.stderr
    assert "open metadata transaction" not in whole.stdout + whole.stderr

    segment = voter / "__cluster_metadata-0" / "00000000000000000000.log"
    data = segment.read_bytes()
    starts = _batch_starts(data)
    assert len(starts) >= 2
    segment.write_bytes(data[:starts[-1]])  # the batch holding EndTransactionRecord is gone

    for args in ((), ("--json",)):
        cut = zk2kraft("inspect", *args, str(voter))
        assert cut.returncode == 1, cut.stderr
        assert ("the log ends inside an open metadata transaction: BeginTransactionRecord "
                "'ZK Migration' at offset 1 has no EndTransactionRecord") in cut.stderr
        assert cut.stdout  # everything is still printed
