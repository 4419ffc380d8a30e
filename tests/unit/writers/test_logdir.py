"""Voter directory layout, fsync'd appends, segment roll and refusal of foreign directories.

Batches here are hand-built v2 frames with opaque record bytes (valid header and CRC-32C), so
these tests exercise the directory logic without depending on the record codec.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import crc32c
import pytest

from migrate.cli.exit_codes import exit_code_for
from writers import (
    EncodedBatch,
    LogCorruptionError,
    VoterDir,
    VoterStateError,
    VoterUnavailableError,
    directory_id_for,
    read_meta_properties,
    scan_frames,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"


def frame(base: int, count: int = 1, epoch: int = 1, body: bytes = b"\x00" * 8) -> EncodedBatch:
    """A valid v2 batch frame (header + CRC) around opaque record bytes."""
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, 1_700_000_000_000, 1_700_000_000_000,
                            -1, -1, -1, count) + body
    crc = crc32c.crc32c(after_crc)
    length = 4 + 1 + 4 + len(after_crc)
    data = struct.pack(">qiibI", base, length, epoch, 2, crc) + after_crc
    return EncodedBatch(base, base + count - 1, epoch, data)


def test_fresh_dir_has_kafka_layout(tmp_path: Path) -> None:
    d = tmp_path / "v1"
    with VoterDir(d, node_id=1, cluster_id=CLUSTER) as v:
        assert v.next_offset == 0
        v.append(frame(0, 3))
        v.append(frame(3, 2, epoch=2))
        v.write_quorum_state(leader_epoch=2, voters=[3, 1, 2])
    meta = read_meta_properties(d)
    assert meta is not None
    assert (meta.cluster_id, meta.node_id, meta.version) == (CLUSTER, 1, 1)
    assert meta.directory_id == directory_id_for(CLUSTER, 1)
    part = d / "__cluster_metadata-0"
    assert (part / "partition.metadata").read_text() == (
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    )
    assert (part / "leader-epoch-checkpoint").read_text() == "0\n2\n1 0\n2 3\n"
    qs = json.loads((part / "quorum-state").read_text())
    assert qs == {"clusterId": "", "leaderId": -1, "leaderEpoch": 2, "votedId": -1,
                  "appliedOffset": 0, "currentVoters": [{"voterId": 1}, {"voterId": 2},
                                                        {"voterId": 3}], "data_version": 0}
    seg = part / "00000000000000000000.log"
    assert seg.read_bytes() == frame(0, 3).data + frame(3, 2, epoch=2).data
    assert not list(part.glob("*.tmp"))


def test_directory_id_is_deterministic_unreserved_and_distinct() -> None:
    a = directory_id_for(CLUSTER, 1)
    assert a == directory_id_for(CLUSTER, 1)
    assert a != directory_id_for(CLUSTER, 2)
    assert a != directory_id_for("other", 1)
    assert len(a) == 22 and not a.startswith("-")
    import base64

    raw = base64.urlsafe_b64decode(a + "==")
    msb, lsb = int.from_bytes(raw[:8], "big"), int.from_bytes(raw[8:], "big")
    assert not (msb == 0 and lsb < 100)


def test_rerun_writes_identical_bytes(tmp_path: Path) -> None:
    for name in ("a", "b"):
        with VoterDir(tmp_path / name, node_id=2, cluster_id=CLUSTER) as v:
            v.append(frame(0, 2))
    for rel in ("meta.properties", "__cluster_metadata-0/00000000000000000000.log",
                "__cluster_metadata-0/leader-epoch-checkpoint"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_reopen_resumes_at_log_end_and_checks_order(tmp_path: Path) -> None:
    d = tmp_path / "v"
    with VoterDir(d, node_id=1, cluster_id=CLUSTER) as v:
        v.append(frame(0, 5))
    with VoterDir(d, node_id=1, cluster_id=CLUSTER) as v:
        assert v.next_offset == 5
        assert v.epochs == [(1, 0)]
        with pytest.raises(VoterStateError, match="offset 6 but the log's next offset is 5"):
            v.append(frame(6))
        with pytest.raises(VoterStateError, match="offset 4"):
            v.append(frame(4))
        v.append(frame(5))
    frames = list(scan_frames((d / "__cluster_metadata-0/00000000000000000000.log").read_bytes(),
                              file="x", expected_offset=0))
    assert [(f.base_offset, f.last_offset) for f in frames] == [(0, 4), (5, 5)]


def test_segments_roll_by_size(tmp_path: Path) -> None:
    one = len(frame(0).data)
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER, segment_bytes=2 * one + 1) as v:
        for off in range(5):
            v.append(frame(off))
        names = [p.name for p in v.segments()]
    assert names == ["00000000000000000000.log", "00000000000000000002.log",
                     "00000000000000000004.log"]
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER, segment_bytes=2 * one + 1) as v:
        assert v.next_offset == 5
        v.append(frame(5))  # fills the active segment (4, 5) before the next roll
        assert [p.name for p in v.segments()][-1] == "00000000000000000004.log"


def test_refuses_other_cluster_or_node(tmp_path: Path) -> None:
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER):
        pass
    with pytest.raises(VoterStateError, match="cluster.id 'hoZ1PKcBRjKUt1oizWckJQ', expected 'x'"):
        VoterDir(tmp_path, node_id=1, cluster_id="x")
    with pytest.raises(VoterStateError, match="node.id 1, expected 2"):
        VoterDir(tmp_path, node_id=2, cluster_id=CLUSTER)


def test_refuses_zk_broker_meta_properties(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=0\nbroker.id=1\ncluster.id=abc\n")
    with pytest.raises(VoterStateError, match="version=0 is not a KRaft"):
        VoterDir(tmp_path, node_id=1, cluster_id="abc")


def test_accepts_kafka_formatted_dir_and_keeps_its_directory_id(tmp_path: Path) -> None:
    text = ("#\n#Sun Nov 22 04:51:43 UTC 2026\nnode.id=1\ndirectory.id=F5WsdK3isSyAWm321ap4vQ\n"
            "version=1\ncluster.id=" + CLUSTER + "\n")
    (tmp_path / "meta.properties").write_text(text)
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        v.append(frame(0))
    assert (tmp_path / "meta.properties").read_text() == text


def test_second_writer_is_locked_out(tmp_path: Path) -> None:
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER):
        # fcntl locks are per process, so probe from a child process like a second tool would.
        import sys

        code = (
            "import sys; from writers import VoterDir, VoterUnavailableError\n"
            "try:\n"
            f"    VoterDir({str(tmp_path)!r}, node_id=1, cluster_id={CLUSTER!r})\n"
            "except VoterUnavailableError as e:\n"
            "    print(e); sys.exit(3)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=False)
        assert proc.returncode == 3, proc.stderr
        assert f"{tmp_path / '.lock'} is held by pid {os.getpid()}" in proc.stdout


def _make_unwritable(path: Path) -> None:
    """chmod for a normal user; `chattr +i` for root, whom permissions do not stop."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o500)


def _make_writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o700)


def test_unwritable_dir_is_unavailable_and_named(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    _make_unwritable(d)
    try:
        with pytest.raises(VoterUnavailableError) as err:
            VoterDir(d, node_id=1, cluster_id=CLUSTER)
        assert exit_code_for(err.value) == 3
        assert str(d) in str(err.value)
        assert not (d / "meta.properties").exists()
    finally:
        _make_writable(d)


def test_existing_damaged_tail_is_an_error_not_truncated(tmp_path: Path) -> None:
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        v.append(frame(0))
        v.append(frame(1))
    seg = tmp_path / "__cluster_metadata-0/00000000000000000000.log"
    data = seg.read_bytes()
    seg.write_bytes(data[:-5])
    with pytest.raises(LogCorruptionError) as err:
        VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER)
    assert err.value.position == len(frame(0).data)
    assert err.value.offset == 1
    assert "truncated batch" in str(err.value)
    assert seg.read_bytes() == data[:-5]


def test_missing_middle_segment_is_named(tmp_path: Path) -> None:
    one = len(frame(0).data)
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER, segment_bytes=one) as v:
        for off in range(3):
            v.append(frame(off))
    (tmp_path / "__cluster_metadata-0/00000000000000000001.log").unlink()
    with pytest.raises(LogCorruptionError, match="00000000000000000002.log.*previous segment"):
        VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER)


def test_snapshot_is_written_complete_under_kafka_name(tmp_path: Path) -> None:
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        path = v.write_snapshot(1234, 7, [frame(0, 1, 7), frame(1, 3, 7), frame(4, 1, 7)])
        assert path.name == "00000000000000001234-0000000007.checkpoint"
        assert not list(path.parent.glob("*.part"))
        with pytest.raises(VoterStateError, match="expected 0"):
            v.write_snapshot(99, 1, [frame(1)])
        assert not list(path.parent.glob("00000000000000000099*"))
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        assert v.next_offset == 1234  # an empty log continues after the snapshot


def test_recover_tail_cuts_only_a_torn_last_batch_and_says_so(tmp_path: Path) -> None:
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        for off in range(3):
            v.append(frame(off))
    seg = tmp_path / "__cluster_metadata-0/00000000000000000000.log"
    one = len(frame(0).data)
    seg.write_bytes(seg.read_bytes()[: 2 * one + 30])  # a crash in the middle of batch 2
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER, recover_tail=True) as v:
        assert v.truncated_tail == (seg, 2 * one, 30)
        assert v.next_offset == 2
        v.append(frame(2))
    assert seg.stat().st_size == 3 * one


def test_recover_tail_never_cuts_damage_in_the_middle(tmp_path: Path) -> None:
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        for off in range(3):
            v.append(frame(off))
    seg = tmp_path / "__cluster_metadata-0/00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    one = len(frame(0).data)
    data[one + 40] ^= 0xFF  # inside batch 1's CRC-covered bytes; batch 2 follows intact
    seg.write_bytes(bytes(data))
    with pytest.raises(LogCorruptionError, match="CRC-32C mismatch") as err:
        VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER, recover_tail=True)
    assert (err.value.position, err.value.offset) == (one, 1)
    assert seg.read_bytes() == bytes(data)
