"""LocalVoterQuorum: live appends through the quorum writer interface, crash reconciliation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from writers import (
    LocalVoterQuorum,
    MetadataRecord,
    QuorumLog,
    VoterDir,
    VoterStateError,
    VoterUnavailableError,
    open_log_source,
    parse_metadata_version,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"


def feature(level: int = 21) -> MetadataRecord:
    return MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                          {"name": "metadata.version", "featureLevel": level})


def begin() -> MetadataRecord:
    return MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": "ZK Migration"})


def quorum(root: Path, ids: tuple[int, ...] = (3000, 3001, 3002), epoch: int = 1
           ) -> LocalVoterQuorum:
    return LocalVoterQuorum([(i, root / f"c{i}") for i in ids], cluster_id=CLUSTER,
                            leader_epoch=epoch)


def offsets(d: Path) -> list[tuple[int, str]]:
    out = []
    for e in open_log_source(d).entries():
        for k, r in enumerate(e.batch.records):
            out.append((e.batch.base_offset + k, r.type))
    return out


def test_appends_go_to_every_live_log_and_report_durable_offsets(tmp_path: Path) -> None:
    q = quorum(tmp_path)
    assert isinstance(q, QuorumLog)
    assert (q.next_offset, q.last_offset, q.durable_offset) == (0, -1, -1)
    r = q.append_records([feature(), begin()], timestamp_ms=1000)
    assert (r.base_offset, r.last_offset) == (0, 1)
    r = q.append_records([feature(20)], timestamp_ms=1001)
    assert (r.base_offset, r.last_offset, q.durable_offset, q.leader_epoch) == (2, 2, 2, 1)
    assert [s.state for s in q.voter_status()] == ["ok", "ok", "ok"]
    q.close()
    for i in (3000, 3001, 3002):
        assert offsets(tmp_path / f"c{i}") == [
            (0, "FEATURE_LEVEL_RECORD"), (1, "BEGIN_TRANSACTION_RECORD"),
            (2, "FEATURE_LEVEL_RECORD")]
    # reopening continues where the log ends
    with quorum(tmp_path) as q2:
        assert q2.next_offset == 3
        assert not q2.repairs


def test_the_lock_is_held_while_open(tmp_path: Path) -> None:
    # fcntl locks are per process, so another process must be the one refused (as Kafka is)
    probe = ("import fcntl, os, sys\n"
             "fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n"
             "    sys.exit(9)\n")
    q = quorum(tmp_path)
    held = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "c3001" / ".lock")])
    q.close()
    free = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "c3001" / ".lock")])
    assert (held.returncode, free.returncode) == (9, 0)


def test_reopen_cuts_a_tail_only_a_minority_holds_and_catches_up_a_trailing_voter(
    tmp_path: Path,
) -> None:
    with quorum(tmp_path) as q:
        q.append_records([feature(), begin()], timestamp_ms=1)
    # voter 3000 got one more batch than the others (crash before the majority had it)
    with VoterDir(tmp_path / "c3000", node_id=3000, cluster_id=CLUSTER) as v:
        from writers import EncodedBatch, batch_records
        (b, data), = batch_records([feature(19)], base_offset=2, leader_epoch=1, timestamp_ms=2)
        v.append(EncodedBatch(b.base_offset, b.last_offset, 1, data))
    with quorum(tmp_path) as q:
        assert [r.describe() for r in q.repairs] == ["voter 3000: truncated offsets 2..2"]
        assert q.next_offset == 2
    assert offsets(tmp_path / "c3000") == [(0, "FEATURE_LEVEL_RECORD"),
                                           (1, "BEGIN_TRANSACTION_RECORD")]
    # now two voters hold offset 2, one does not: the majority's end wins, the third catches up
    for i in (3000, 3001):
        with VoterDir(tmp_path / f"c{i}", node_id=i, cluster_id=CLUSTER) as v:
            (b, data), = batch_records([feature(19)], base_offset=2, leader_epoch=1,
                                       timestamp_ms=2)
            v.append(EncodedBatch(b.base_offset, b.last_offset, 1, data))
    with quorum(tmp_path) as q:
        assert [r.describe() for r in q.repairs] == ["voter 3002: caught up offsets 2..2"]
        assert q.next_offset == 3
    assert offsets(tmp_path / "c3002")[-1] == (2, "FEATURE_LEVEL_RECORD")


def test_a_log_already_led_in_a_higher_epoch_is_refused(tmp_path: Path) -> None:
    with quorum(tmp_path, epoch=5) as q:
        q.append_records([feature()], timestamp_ms=1)
    with pytest.raises(VoterStateError, match="leader epoch 5"):
        quorum(tmp_path, epoch=1)


def test_local_voters_answer_the_led_quorum_calls_with_nothing(tmp_path: Path) -> None:
    """What only the stand-in does (docs/design/log-format.md, "The quorum writer interface"):
    local voters hold no records of their own, take no registrations, answer no DescribeQuorum, and
    resign by closing, after which their logs hold every append and nothing more."""
    q = quorum(tmp_path)
    q.append_records([feature(), begin()], timestamp_ms=1000)
    q.serve_brokers(parse_metadata_version("3.9-IV0"))
    assert q.take_own_records() == []
    assert q.broker_registrations() is None
    with pytest.raises(VoterUnavailableError, match="voter 3001 is a local directory"):
        q.describe_quorum(3001)
    assert q.resign(timeout_s=1.0) is None
    for i in (3000, 3001, 3002):
        assert offsets(tmp_path / f"c{i}") == [
            (0, "FEATURE_LEVEL_RECORD"), (1, "BEGIN_TRANSACTION_RECORD")]
