"""The log reader: resolves PATH, validates every CRC/offset/record, and names where damage is."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.cli.exit_codes import exit_code_for
from writers import (
    ControlRecord,
    LogCorruptionError,
    MetadataRecord,
    QuorumWriter,
    VoterDir,
    VoterStateError,
    batch_records,
    encode_batch,
    open_log_source,
    snapshot_batches,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"
TS = 1_700_000_000_000


def records(n: int) -> list[MetadataRecord]:
    out = [MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                       "featureLevel": 21})]
    for i in range(n - 1):
        out.append(MetadataRecord("TOPIC_RECORD", 0, {"name": f"t{i}",
                                                      "topicId": "AAAAAAAAAAAAAAAAAAAAAg"}))
    return out


def write(d: Path, n: int = 20, *, per_batch: int = 4, segment_bytes: int = 1 << 30) -> VoterDir:
    v = VoterDir(d, node_id=1, cluster_id=CLUSTER, segment_bytes=segment_bytes)
    with QuorumWriter([v]) as q:
        for b, _ in batch_records(records(n), base_offset=0, leader_epoch=3, timestamp_ms=TS,
                                  max_records=per_batch):
            q.append_batch(b)
        q.write_quorum_state(leader_epoch=3)
    return v


def seg0(d: Path) -> Path:
    return d / "__cluster_metadata-0" / "00000000000000000000.log"


def test_voter_dir_reads_back_every_record_with_header(tmp_path: Path) -> None:
    write(tmp_path)
    src = open_log_source(tmp_path)
    assert src.kind == "voter-dir"
    assert src.meta is not None and (src.meta.cluster_id, src.meta.node_id) == (CLUSTER, 1)
    assert src.quorum_state is not None and src.quorum_state["leaderEpoch"] == 3
    entries = list(src.entries())
    got = [r for e in entries for r in e.batch.records]
    assert got == records(20)
    assert [e.batch.base_offset for e in entries] == [0, 4, 8, 12, 16]
    assert all(e.batch.leader_epoch == 3 and e.file == seg0(tmp_path) for e in entries)
    raw = seg0(tmp_path).read_bytes()
    assert all(encode_batch(e.batch) == raw[e.position:e.position + e.size] for e in entries)


def test_log_dir_segment_and_snapshot_paths(tmp_path: Path) -> None:
    write(tmp_path, segment_bytes=300)
    part = tmp_path / "__cluster_metadata-0"
    src = open_log_source(part)
    assert src.kind == "log-dir" and len(src.segments) > 1
    assert [r for e in src.entries() for r in e.batch.records] == records(20)
    second = src.segments[1]
    lone = open_log_source(second)
    assert lone.kind == "segment"
    first = next(lone.entries()).batch
    assert first.base_offset == int(second.name[:20])
    with VoterDir(tmp_path, node_id=1, cluster_id=CLUSTER) as v:
        snap = v.write_snapshot(20, 3, snapshot_batches(records(5), epoch=3, timestamp_ms=TS,
                                                        last_contained_timestamp_ms=TS))
    s = open_log_source(snap)
    assert s.kind == "snapshot"
    got = [r for e in s.entries() for r in e.batch.records]
    assert got[0] == ControlRecord("SNAPSHOT_HEADER", {"version": 0,
                                                        "lastContainedLogTimestamp": TS})
    assert got[1:-1] == records(5) and got[-1].type == "SNAPSHOT_FOOTER"


def test_flipped_byte_names_file_position_offset_and_checksum(tmp_path: Path) -> None:
    write(tmp_path)
    entries = list(open_log_source(tmp_path).entries())
    victim = entries[2]
    data = bytearray(seg0(tmp_path).read_bytes())
    data[victim.position + victim.size - 3] ^= 0x40
    seg0(tmp_path).write_bytes(bytes(data))
    seen = []
    with pytest.raises(LogCorruptionError) as err:
        for e in open_log_source(tmp_path).entries():
            seen.append(e.batch.base_offset)
    assert seen == [0, 4]  # everything before the damage was delivered
    e = err.value
    assert (e.file, e.position, e.offset) == (str(seg0(tmp_path)), victim.position, 8)
    assert "CRC-32C mismatch" in str(e) and exit_code_for(e) == 2


def test_truncated_tail_is_an_error_never_silently_dropped(tmp_path: Path) -> None:
    write(tmp_path)
    data = seg0(tmp_path).read_bytes()
    seg0(tmp_path).write_bytes(data[:-10])
    with pytest.raises(LogCorruptionError, match="truncated batch") as err:
        list(open_log_source(tmp_path).entries())
    assert err.value.offset == 16


def test_missing_segment_is_named(tmp_path: Path) -> None:
    write(tmp_path, segment_bytes=300)
    part = tmp_path / "__cluster_metadata-0"
    segs = sorted(part.glob("*.log"))
    assert len(segs) >= 3
    segs[1].unlink()
    with pytest.raises(LogCorruptionError, match="missing segment") as err:
        list(open_log_source(tmp_path).entries())
    assert err.value.file == str(segs[2])
    segs[0].unlink()
    with pytest.raises(LogCorruptionError, match="no segment or snapshot holds the offsets"):
        list(open_log_source(tmp_path).entries())


def test_gap_in_offsets_inside_a_segment_is_named(tmp_path: Path) -> None:
    pairs = batch_records(records(6), base_offset=0, leader_epoch=1, timestamp_ms=TS,
                          max_records=3)
    second = pairs[1][0]
    moved = type(second)(second.base_offset + 2, second.leader_epoch, second.timestamp_ms,
                         second.records)
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    seg = part / "00000000000000000000.log"
    seg.write_bytes(pairs[0][1] + encode_batch(moved))
    gap = "offset gap: batch starts at 5, expected 3"
    with pytest.raises(LogCorruptionError, match=gap) as e:
        list(open_log_source(part).entries())
    assert e.value.position == len(pairs[0][1])


def test_undecodable_record_names_the_record(tmp_path: Path) -> None:
    pairs = batch_records(records(2), base_offset=0, leader_epoch=1, timestamp_ms=TS)
    data = bytearray(pairs[0][1])
    # rewrite the first record's apiKey (after length, attrs, ts, offset, key, valueLen, frame)
    # to an unknown one, then fix the CRC so only the record is wrong
    import crc32c

    idx = data.index(bytes([0x01, 0x0C, 0x00]), 61)  # frame 1, apiKey 12, version 0
    data[idx + 1] = 0x7E
    data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(bytes(data))
    with pytest.raises(LogCorruptionError, match="record at byte") as err:
        list(open_log_source(f).entries())
    assert err.value.offset == 0


def test_snapshot_must_start_with_a_header(tmp_path: Path) -> None:
    f = tmp_path / "00000000000000000010-0000000001.checkpoint"
    f.write_bytes(b"".join(d for _, d in batch_records(records(2), base_offset=0,
                                                        leader_epoch=1, timestamp_ms=TS)))
    with pytest.raises(LogCorruptionError, match="SNAPSHOT_HEADER"):
        list(open_log_source(f).entries())


def test_paths_that_are_not_logs(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_log_source(tmp_path / "nope")
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(VoterStateError, match="not a .log segment or .checkpoint"):
        open_log_source(tmp_path / "x.txt")
    with pytest.raises(VoterStateError, match="holds no __cluster_metadata-0"):
        open_log_source(tmp_path)
