"""The loader: batches, offsets, transactions (abort discards, open is reported), snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from verify import MetadataLoader, ReplayError, load_log
from writers import ControlRecord, MetadataRecord, RecordBatch

TID = "AAAAAAAAAAAAAAAAAAAAAQ"


def R(kind: str, **data: object) -> MetadataRecord:  # noqa: N802
    return MetadataRecord(kind, 0, data)  # type: ignore[arg-type]


def topic(name: str, tid: str = TID) -> MetadataRecord:
    return R("TOPIC_RECORD", name=name, topicId=tid)


MV = R("FEATURE_LEVEL_RECORD", name="metadata.version", featureLevel=21)
BEGIN = R("BEGIN_TRANSACTION_RECORD", name="ZK Migration")
END = R("END_TRANSACTION_RECORD")
ABORT = R("ABORT_TRANSACTION_RECORD", reason="Controller failover")


def batches(*groups: tuple[MetadataRecord, ...], epoch: int = 1) -> list[RecordBatch]:
    out, offset = [], 0
    for g in groups:
        out.append(RecordBatch(offset, epoch, 1_700_000_000_000 + offset, g))
        offset += len(g)
    return out


def load(*groups: tuple[MetadataRecord, ...]):  # type: ignore[no-untyped-def]
    loader = MetadataLoader()
    for b in batches(*groups):
        loader.load_batch(b)
    return loader.finish()


def test_committed_transaction_is_visible_with_provenance() -> None:
    got = load((MV, BEGIN), (topic("a"),), (R("ZK_MIGRATION_STATE_RECORD", zkMigrationState=1),
                                            END))
    assert "a" in got.image.topics.by_name and got.image.zk_migration_state == 1
    assert got.open_transaction is None and got.aborted_transactions == 0
    p = got.provenance
    assert (p.last_offset, p.last_epoch, p.batches, p.records) == (4, 1, 3, 5)
    assert p.last_timestamp_ms == 1_700_000_000_003


def test_aborted_transaction_records_are_discarded() -> None:
    got = load((MV, topic("kept", "AAAAAAAAAAAAAAAAAAAAAg")), (BEGIN, topic("lost")), (ABORT,),
               (BEGIN, topic("b", "AAAAAAAAAAAAAAAAAAAAAw"), END))
    assert set(got.image.topics.by_name) == {"kept", "b"}
    assert got.aborted_transactions == 1
    assert got.image.features.metadata_version == 21


def test_open_transaction_at_the_end_is_reported_and_not_applied() -> None:
    got = load((MV,), (BEGIN, topic("a")), (R("NO_OP_RECORD"),))
    assert got.open_transaction is not None
    assert (got.open_transaction.name, got.open_transaction.begin_offset,
            got.open_transaction.pending_records) == ("ZK Migration", 1, 2)
    assert not got.image.topics.by_name and got.image.features.metadata_version == 21
    assert got.provenance.last_offset == 3


def test_transaction_markers_out_of_place_name_the_offset() -> None:
    with pytest.raises(ReplayError, match="END_TRANSACTION_RECORD at offset 1: no transaction"):
        load((MV, END))
    with pytest.raises(ReplayError, match="BEGIN_TRANSACTION_RECORD at offset 2: .* still open"):
        load((MV, BEGIN), (BEGIN,))


def test_replay_failure_names_offset() -> None:
    with pytest.raises(ReplayError) as info:
        load((MV, topic("a")), (R("PARTITION_RECORD", partitionId=0, topicId="zzz",
                                  replicas=[1]),))
    assert info.value.offset == 2 and "offset 2" in str(info.value)
    assert "unknown topic id zzz" in str(info.value)


def test_control_batches_are_skipped_but_advance_provenance() -> None:
    loader = MetadataLoader()
    leader = ControlRecord("LEADER_CHANGE", {"version": 0, "leaderId": 1, "voters": [],
                                             "grantingVoters": []})
    loader.load_batch(RecordBatch(0, 3, 5, (leader,)))
    loader.load_batch(RecordBatch(1, 3, 6, (MV,)))
    got = loader.finish()
    assert (got.provenance.last_offset, got.provenance.last_epoch, got.provenance.records) == (
        1, 3, 1)


def test_batches_must_move_forward() -> None:
    loader = MetadataLoader()
    loader.load_batch(RecordBatch(0, 1, 0, (MV, topic("a"))))
    with pytest.raises(ReplayError, match="offset 1 does not follow offset 1"):
        loader.load_batch(RecordBatch(1, 1, 0, (R("NO_OP_RECORD"),)))


class Entry:
    def __init__(self, file: str, batch: RecordBatch) -> None:
        self.file = Path(file)
        self.batch = batch


def test_load_log_snapshot_then_segments() -> None:
    header = ControlRecord("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 0})
    snap = "d/__cluster_metadata-0/00000000000000000003-0000000001.checkpoint"
    seg = "d/__cluster_metadata-0/00000000000000000000.log"
    entries = [
        Entry(snap, RecordBatch(0, 1, 0, (header,))),
        Entry(snap, RecordBatch(1, 1, 0, (MV, topic("from-snapshot")))),
        # the log still holds offsets 0-2 (covered by the snapshot) and then 3-4
        Entry(seg, RecordBatch(0, 1, 0, (MV, topic("old", "AAAAAAAAAAAAAAAAAAAAAg")))),
        Entry(seg, RecordBatch(2, 1, 0, (R("NO_OP_RECORD"), topic("new",
                                                                 "AAAAAAAAAAAAAAAAAAAAAw")))),
    ]
    got = load_log(entries)
    assert set(got.image.topics.by_name) == {"from-snapshot", "new"}
    assert got.provenance.last_offset == 3
