"""`zk2kraft inspect` as an operator runs it (a real process): readable view, --json, exit codes.

The log under inspection is the real thing: a sample Kafka tree generated in a real ZooKeeper,
read back, translated and written to three voter directories by the quorum writer.
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

from migrate import TranslationOptions, translate
from writers import QuorumWriter, VoterDir, batch_records, record_to_json
from zkreader import ConnectOptions, SampleSpec, open_session, read_cluster

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "inspectCliCluster00001"
TS = 1_700_000_000_000
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
          "--inh-caps=-dac_override,-dac_read_search", "--"]


def zk2kraft(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run([*(prefix or []), sys.executable, "-m", "migrate.cli", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, check=False)


@pytest.fixture
def migrated(sample_cluster: Callable[..., Any], tmp_path: Path) -> tuple[Path, list[Any]]:
    """Three voter dirs holding the translated sample cluster; returns (voter 1 dir, records)."""
    sample = sample_cluster(SampleSpec.everything())
    session = open_session(ConnectOptions(sample.connect, timeout_s=10))
    try:
        snap = read_cluster(session, watch=False)
    finally:
        session.close()
    records = translate(snap, TranslationOptions()).records
    dirs = [tmp_path / f"v{i}" for i in (1, 2, 3)]
    with QuorumWriter([VoterDir(d, node_id=i, cluster_id=CLUSTER, segment_bytes=4096)
                       for i, d in enumerate(dirs, 1)]) as q:
        for batch, _ in batch_records(records, base_offset=0, leader_epoch=1, timestamp_ms=TS,
                                      max_records=10):
            q.append_batch(batch)
        q.write_quorum_state(leader_epoch=1)
    return dirs[0], records


def test_json_lines_are_the_records_written(migrated: tuple[Path, list[Any]]) -> None:
    voter, records = migrated
    proc = zk2kraft("inspect", "--json", "--unredacted", str(voter))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["offset"] for o in lines] == list(range(len(records)))
    assert [{k: o[k] for k in ("type", "version", "data")} for o in lines] == [
        json.loads(json.dumps(record_to_json(r))) for r in records]
    assert len({p.name for p in (voter / "__cluster_metadata-0").glob("*.log")}) > 1


def test_default_output_redacts_secrets(migrated: tuple[Path, list[Any]]) -> None:
    voter, records = migrated
    scram = [r for r in records if r.type == "USER_SCRAM_CREDENTIAL_RECORD"]
    assert scram, "the everything sample holds SCRAM credentials"
    proc = zk2kraft("inspect", "--json", str(voter))
    assert proc.returncode == 0, proc.stderr
    import base64

    for r in scram:
        for field in ("salt", "storedKey", "serverKey"):
            assert base64.b64encode(r.data[field]).decode() not in proc.stdout
    assert '"storedKey":"<redacted>"' in proc.stdout
    view = zk2kraft("inspect", "--max-records", "100000", str(voter))
    assert view.returncode == 0, view.stderr
    for r in scram:
        assert base64.b64encode(r.data["storedKey"]).decode() not in view.stdout


def test_readable_view_shows_header_batches_counts_and_records(
    migrated: tuple[Path, list[Any]],
) -> None:
    voter, records = migrated
    proc = zk2kraft("inspect", "--max-records", "5", str(voter))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert CLUSTER in out and "voter-dir" in out and "leaderEpoch 1" in out
    assert "batches in 00000000000000000000.log" in out
    assert f"records (5 of {len(records)})" in out
    topic_records = sum(r.type == "TOPIC_RECORD" for r in records)
    counts = {cells[0]: cells[1] for line in out.splitlines()
              if len(cells := [c.strip() for c in line.split("│")[1:-1]]) == 2}
    assert counts["TOPIC_RECORD"] == str(topic_records)
    assert f"{len(records)} records" in out


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
    migrated: tuple[Path, list[Any]],
) -> None:
    # `zk2kraft inspect --json DIR | head -n 1`: the pipe closes after one line
    voter, records = migrated
    assert len(records) > 50  # enough output to outlast the pipe's first read
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
