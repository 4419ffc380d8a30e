"""`zk2kraft inspect` as an operator runs it (a real process): readable view, --json, exit codes.

The log under inspection is the real thing: the golden sample tree (tests/golden) generated in a
real ZooKeeper and migrated by `zk2kraft migrate`, then spread over 1 KiB segments by the quorum
writer. What `inspect --json` must print comes from the golden file, i.e. from Kafka's own
DumpLogSegments, never from our codec.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.golden.golden import GOLDEN_SPECS, golden_payloads, migrate_golden
from tests.support.zk import ZkServer
from writers import QuorumWriter, VoterDir, batch_records, open_log_source

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "inspectCliCluster00001"
TS = 1_700_000_000_000
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
          "--inh-caps=-dac_override,-dac_read_search", "--"]


def zk2kraft(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run([*(prefix or []), sys.executable, "-m", "migrate.cli", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, check=False)


GOLDEN = GOLDEN_SPECS["clean-3.9-IV0"]


def masked(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mask what ZooKeeper assigned (broker epoch, incarnation id) as the golden file does."""
    for r in lines:
        if r["type"] == "REGISTER_BROKER_RECORD":
            r["data"]["brokerEpoch"] = "<czxid>"
            r["data"]["incarnationId"] = "<incarnation>"
    return lines


@pytest.fixture
def migrated(zk_server: ZkServer, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """Voter 1 of three dirs holding the migrated golden tree over many 1 KiB segments, and
    the golden records (Kafka's decoding of that log)."""
    dirs, _ = migrate_golden(zk_server.connect, GOLDEN, tmp_path / "migrated")
    records = [r for e in open_log_source(dirs[min(dirs)]).entries() for r in e.batch.records]
    voters = [tmp_path / f"v{i}" for i in (1, 2, 3)]
    with QuorumWriter([VoterDir(d, node_id=i, cluster_id=CLUSTER, segment_bytes=1024)
                       for i, d in enumerate(voters, 1)]) as q:
        for batch, _ in batch_records(records, base_offset=0, leader_epoch=1,  # type: ignore[arg-type]
                                      timestamp_ms=TS, max_records=10):
            q.append_batch(batch)
        q.write_quorum_state(leader_epoch=1)
    return voters[0], golden_payloads(GOLDEN)


def test_json_lines_are_what_kafka_decoded(migrated: tuple[Path, list[Any]]) -> None:
    voter, golden = migrated
    proc = zk2kraft("inspect", "--json", "--unredacted", str(voter))
    assert proc.returncode == 0, proc.stderr
    lines = masked([json.loads(line) for line in proc.stdout.splitlines()])
    assert lines == golden
    assert len({p.name for p in (voter / "__cluster_metadata-0").glob("*.log")}) > 1


def test_default_output_redacts_secrets(migrated: tuple[Path, list[Any]]) -> None:
    voter, golden = migrated
    scram = [r["data"] for r in golden if r["type"] == "USER_SCRAM_CREDENTIAL_RECORD"]
    assert scram, "the golden sample holds SCRAM credentials"
    proc = zk2kraft("inspect", "--json", str(voter))
    assert proc.returncode == 0, proc.stderr
    for data in scram:
        for field in ("salt", "storedKey", "serverKey"):
            assert data[field] not in proc.stdout
    assert '"storedKey":"<redacted>"' in proc.stdout
    view = zk2kraft("inspect", "--max-records", "100000", str(voter))
    assert view.returncode == 0, view.stderr
    for data in scram:
        assert data["storedKey"] not in view.stdout and data["salt"] not in view.stdout


def test_readable_view_shows_header_batches_counts_and_records(
    migrated: tuple[Path, list[Any]],
) -> None:
    voter, golden = migrated
    proc = zk2kraft("inspect", "--max-records", "5", str(voter))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert CLUSTER in out and "voter-dir" in out and "leaderEpoch 1" in out
    assert "batches in 00000000000000000000.log" in out
    assert f"records (5 of {len(golden)})" in out
    topic_records = sum(r["type"] == "TOPIC_RECORD" for r in golden)
    counts = {cells[0]: cells[1] for line in out.splitlines()
              if len(cells := [c.strip() for c in line.split("│")[1:-1]]) == 2}
    assert counts["TOPIC_RECORD"] == str(topic_records)
    assert f"{len(golden)} records" in out


def test_corruption_exits_2_naming_file_position_offset_and_checksum(
    migrated: tuple[Path, list[Any]],
) -> None:
    voter, _ = migrated
    seg = sorted((voter / "__cluster_metadata-0").glob("*.log"))[1]
    data = bytearray(seg.read_bytes())
    data[100] ^= 0x01  # inside the first batch's CRC-covered bytes
    seg.write_bytes(bytes(data))
    base = int(seg.name[:20])
    proc = zk2kraft("inspect", "--json", str(voter))
    assert proc.returncode == 2
    assert f"{seg} at byte 0 (offset {base}): CRC-32C mismatch" in proc.stderr
    assert [json.loads(x)["offset"] for x in proc.stdout.splitlines()] == list(range(base))
    view = zk2kraft("inspect", str(voter))
    assert view.returncode == 2 and "CRC-32C mismatch" in view.stderr
    assert "batches in 00000000000000000000.log" in view.stdout  # what came before is shown


def test_missing_path_exits_2_and_unreadable_exits_3(tmp_path: Path) -> None:
    proc = zk2kraft("inspect", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "no such file or directory" in proc.stderr
    (tmp_path / "notes.txt").write_text("x")
    proc = zk2kraft("inspect", str(tmp_path / "notes.txt"))
    assert proc.returncode == 2 and "not a .log segment" in proc.stderr
    locked = tmp_path / "locked"
    VoterDir(locked, node_id=1, cluster_id=CLUSTER).close()
    locked.chmod(0)
    try:
        # root reads anything: drop the capabilities that let it ignore file modes
        proc = zk2kraft("inspect", str(locked), prefix=NO_DAC if os.geteuid() == 0 else None)
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 3, proc.stderr
    assert f"{locked}: cannot list: Permission denied" in proc.stderr


def test_a_reader_that_stops_early_is_not_an_internal_error(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    # `zk2kraft inspect --json DIR | head -n 1`: the pipe closes after one line; 1,000
    # partitions print far more than a pipe buffers (64 KiB), so the writer outlasts the reader
    sample = sample_cluster(SampleSpec.clean(topics=50, partitions_per_topic=20))
    voter = tmp_path / "c3000"
    done = zk2kraft("migrate", "--zookeeper", sample.connect, "--voter", f"3000={voter}",
                    "--spark-master", "in-process", "--quiet")
    assert done.returncode == 0, done.stderr
    proc = subprocess.Popen([sys.executable, "-m", "migrate.cli", "inspect", "--json", str(voter)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert json.loads(first)["offset"] == 0
    assert code == 141, err
    assert "internal error" not in err and "Traceback" not in err
