"""The bulk pipeline's pure parts: chunking, splicing, batching, timestamps, flags, overrides."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from migrate.bulk.pipeline import (
    MIN_RECORDS_PER_BATCH,
    EncodedLog,
    chunk_topics,
    encode_log,
    plan_batches,
    snapshot_timestamp_ms,
)
from migrate.bulk.voters import VoterTarget, check_voters
from migrate.cli.exit_codes import exit_code_for
from migrate.errors import BadFlagError
from migrate.judge import _blocking
from migrate.preflight.checks import PlanSummary, PreflightReport, preflight
from migrate.preflight.findings import Finding
from migrate.translate.framing import TranslationOptions
from migrate.translate.translation import translate
from writers import MAX_BATCH_BYTES, VoterUnavailableError, encode_record, parse_metadata_version
from writers.codec.batch_decode import decode_batch
from zkreader import (
    AclEntry,
    AclResource,
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ClusterSnapshot,
    ConfigZnode,
    PartitionState,
    ProducerIdBlock,
    Topic,
    ZnodeStat,
)

CLUSTER_ID = "q1Sh-9_ISia_zwGINzRvyQ"


def st(czxid: int = 100, version: int = 0, mtime: int = 1_700_000_000_000) -> ZnodeStat:
    return ZnodeStat(czxid=czxid, mzxid=czxid, version=version, ctime_ms=1, mtime_ms=mtime)


def topic_id(i: int) -> str:
    import base64

    return base64.urlsafe_b64encode(i.to_bytes(16, "big")).decode().rstrip("=")


def make_snapshot(
    *,
    topics: int = 5,
    partitions: int = 3,
    brokers: int = 3,
    no_id: tuple[int, ...] = (),
    pending: tuple[int, ...] = (),
    missing_state: tuple[tuple[int, int], ...] = (),
    uneven: bool = False,
) -> ClusterSnapshot:
    """A small healthy-ish cluster with every entity kind the translator copies."""
    bro = {
        b: Broker(b, 5, (BrokerEndpoint("PLAINTEXT", f"h{b}", 9092, "PLAINTEXT"),), None, -1,
                  1, {}, st(1000 + b))
        for b in range(1, brokers + 1)
    }
    tops: dict[str, Topic] = {}
    states: dict[tuple[str, int], PartitionState] = {}
    configs: dict[str, ConfigZnode] = {}
    for t in range(topics):
        name = f"t-{t:03d}"
        n = partitions + (t % 7) * 5 if uneven else partitions
        assignment = {p: tuple(((p + k) % brokers) + 1 for k in range(min(3, brokers)))
                      for p in range(n)}
        tops[name] = Topic(name, 3, None if t in no_id else topic_id(t + 1), assignment, {}, {},
                           st(2000 + t, mtime=1_700_000_000_000 + t))
        for p, replicas in assignment.items():
            if (t, p) in missing_state:
                continue
            states[(name, p)] = PartitionState(name, p, replicas[0], 2, 1, replicas, 0,
                                               st(3000 + p, version=p % 3))
        if t % 2 == 0:
            configs[name] = ConfigZnode(f"topics/{name}", {"retention.ms": str(1000 * t)}, st())
    return ClusterSnapshot(
        cluster_id=ClusterIdZnode(CLUSTER_ID, st(5)),
        brokers=bro,
        topics=tops,
        partition_states=states,
        pending_deletions=frozenset(f"t-{t:03d}" for t in pending),
        topic_configs=configs,
        broker_configs={"<default>": ConfigZnode("brokers/<default>",
                                                 {"log.retention.ms": "5"}, st())},
        client_configs={"app": ConfigZnode("clients/app", {"producer_byte_rate": "1024"}, st())},
        acls=(AclResource("LITERAL", "Topic", "t-000",
                          (AclEntry("User:alice", "Allow", "Read", "*"),), st()),),
        producer_id_block=ProducerIdBlock(1, 1, 5000, 5999, st(mtime=1_800_000_000_000)),
    )


def expected_values(snapshot: ClusterSnapshot, options: TranslationOptions) -> list[bytes]:
    return [encode_record(r) for r in translate(snapshot, options).records]


SHAPES = {
    "small": {},
    "empty": {"topics": 0},
    "one-broker": {"brokers": 1, "topics": 3},
    "uneven": {"topics": 40, "partitions": 2, "uneven": True},
    "blocked-and-skipped": {"no_id": (1, 3), "pending": (2,), "missing_state": ((0, 1),)},
}


@pytest.mark.parametrize("close", [True, False])
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("mv", ["3.4-IV0", "3.6-IV2", "3.9-IV0"])
def test_in_process_log_equals_translate_encoded(shape: str, mv: str, close: bool) -> None:
    # close=False: the online pre-copy's framing (transaction left open) through the same engine
    snapshot = make_snapshot(**SHAPES[shape])  # type: ignore[arg-type]
    options = TranslationOptions(metadata_version=parse_metadata_version(mv),
                                 close_migration=close)
    result = translate(snapshot, options)
    out = encode_log(snapshot, options)
    assert out.values == [encode_record(r) for r in result.records]
    assert out.counts == result.counts
    assert list(out.blockers) == result.blockers
    assert list(out.warnings) == result.warnings
    assert out.engine == "in-process"
    last = result.records[-1].type if result.records else None
    assert (last in ("ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD")) is close


def test_topics_without_id_are_left_out_and_reported_by_preflight_only() -> None:
    snapshot = make_snapshot(no_id=(0, 4))
    out = encode_log(snapshot, TranslationOptions())
    assert out.blockers == ()  # the translator does not report it: pre-flight does, once
    assert [b.code for b in preflight(snapshot).blockers].count("TOPIC_WITHOUT_ID") == 2
    assert out.counts["TOPIC_RECORD"] == 3


@pytest.mark.parametrize("parallelism", [1, 2, 7])
def test_chunks_cover_every_migrated_topic_in_name_order(parallelism: int) -> None:
    snapshot = make_snapshot(topics=30, uneven=True, no_id=(5,), pending=(6,))
    chunks = chunk_topics(snapshot, parallelism=parallelism)
    names = [name for c in chunks for name, *_ in c]
    expected = sorted(n for n in snapshot.topics if n not in ("t-005", "t-006"))
    assert names == expected
    assert len(chunks) <= 2 * parallelism + 1
    assert all(chunks)


def test_chunk_size_is_bounded() -> None:
    snapshot = make_snapshot(topics=20, partitions=10)
    chunks = chunk_topics(snapshot, parallelism=1, max_chunk_partitions=30)
    assert [sum(len(rows) for *_, rows in c) for c in chunks] == [30] * 6 + [20]


def _decoded_counts(batches: list) -> list[int]:  # type: ignore[type-arg]
    return [b.last_offset - b.base_offset + 1 for b in batches]


def test_batches_hold_the_target_count_and_fold_a_short_tail() -> None:
    values = [encode_record(r) for r in translate(make_snapshot(topics=120, partitions=20),
                                                  TranslationOptions()).records]
    n = len(values)
    batches = plan_batches(values, base_offset=0, leader_epoch=1, timestamp_ms=7,
                           records_per_batch=1000)
    counts = _decoded_counts(batches)
    assert sum(counts) == n
    assert all(c >= MIN_RECORDS_PER_BATCH for c in counts)
    assert counts[:-1] == [1000] * (len(counts) - 1)
    assert n % 1000 < MIN_RECORDS_PER_BATCH or counts[-1] == n % 1000
    offset = 0
    for b in batches:
        assert b.base_offset == offset and b.leader_epoch == 1
        decoded, end = decode_batch(b.data, 0)
        assert end == len(b.data)
        assert decoded.timestamp_ms == 7
        assert [encode_record(r) for r in decoded.records] == values[offset:b.last_offset + 1]
        offset = b.last_offset + 1


def test_short_tail_is_folded_into_the_previous_batch() -> None:
    values = [encode_record(r) for r in translate(make_snapshot(topics=41, partitions=10),
                                                  TranslationOptions()).records]
    n = len(values)
    assert 0 < n % 200 < MIN_RECORDS_PER_BATCH and n > 400
    batches = plan_batches(values, base_offset=5, leader_epoch=1, timestamp_ms=0,
                           records_per_batch=200)
    counts = _decoded_counts(batches)
    assert counts == [200] * (n // 200 - 1) + [200 + n % 200]
    assert batches[0].base_offset == 5 and batches[-1].last_offset == 5 + len(values) - 1


def test_batches_never_exceed_8_mib() -> None:
    big = [b"\x01\x04\x00" + bytes(300_000) for _ in range(60)]
    batches = plan_batches(big, base_offset=0, leader_epoch=1, timestamp_ms=0)
    assert len(batches) >= 3
    assert all(len(b.data) <= MAX_BATCH_BYTES for b in batches)
    assert sum(_decoded_counts(batches)) == 60


def test_records_per_batch_below_kafkas_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="200"):
        plan_batches([b"x"], base_offset=0, leader_epoch=1, timestamp_ms=0, records_per_batch=50)


def test_timestamp_comes_from_zookeeper_mtimes() -> None:
    snapshot = make_snapshot()
    assert snapshot_timestamp_ms(snapshot) == 1_800_000_000_000  # the producer-id block
    later = dataclasses.replace(
        snapshot, cluster_id=ClusterIdZnode(CLUSTER_ID, st(mtime=1_900_000_000_000))
    )
    assert snapshot_timestamp_ms(later) == 1_900_000_000_000
    assert snapshot_timestamp_ms(ClusterSnapshot()) == 0


def test_same_snapshot_gives_identical_batches() -> None:
    def build() -> list[bytes]:
        snap = make_snapshot(topics=50)
        out: EncodedLog = encode_log(snap, TranslationOptions())
        return [b.data for b in plan_batches(out.values, base_offset=0, leader_epoch=1,
                                             timestamp_ms=snapshot_timestamp_ms(snap))]

    assert build() == build()


# ----------------------------------------------------------------------------- flags


def test_voters_checked_before_anything_connects(tmp_path: Path) -> None:
    ok = check_voters([(1, tmp_path / "a"), (2, tmp_path / "b")])
    assert [t.node_id for t in ok] == [1, 2]
    with pytest.raises(BadFlagError, match="given twice"):
        check_voters([(1, tmp_path / "a"), (1, tmp_path / "b")])
    with pytest.raises(BadFlagError, match="nested"):
        check_voters([(1, tmp_path / "a"), (2, tmp_path / "a")])
    with pytest.raises(BadFlagError, match="nested"):
        check_voters([(1, tmp_path / "a"), (2, tmp_path / "a" / "b")])
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadFlagError, match="not a directory"):
        check_voters([(1, tmp_path / "file")])
    with pytest.raises(BadFlagError, match="at least one"):
        check_voters([])


def test_voter_under_a_file_is_exit_3(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(VoterUnavailableError, match="not a writable directory") as info:
        check_voters([(1, tmp_path / "f" / "c1")])
    assert exit_code_for(info.value) == 3


def test_staging_dir_is_inside_the_voter_dir(tmp_path: Path) -> None:
    # a voter dir may be a mount point: its copy is built on its own filesystem
    t = VoterTarget(1, tmp_path / "c1")
    assert t.staging.parent == tmp_path / "c1"
    assert t.staging.name.startswith(".")


def test_only_the_blockers_own_override_lets_it_through() -> None:
    log_dir = Finding("LOG_DIR_EVENT_PENDING", "event", "/log_dir_event_notification/x")
    no_id = Finding("TOPIC_WITHOUT_ID", "no id", "/brokers/topics/t")
    summary = PlanSummary(PreflightReport((log_dir, no_id), ()))
    assert _blocking(summary, frozenset()).report.blockers == (log_dir, no_id)
    relaxed = _blocking(summary, frozenset({"allow_pending_log_dir_events"}))
    assert relaxed.report.blockers == (no_id,)
    assert relaxed.report.warnings[-1].code == "LOG_DIR_EVENT_PENDING"
    assert "--allow-pending-log-dir-events" in relaxed.report.warnings[-1].message
