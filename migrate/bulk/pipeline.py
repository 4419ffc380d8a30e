"""The bulk pipeline: snapshot -> translated, encoded records in log order -> record batches.

Two engines, one output. `encode_log(snapshot, options, spark=runtime)` runs the topic table
(topics with their partition states and configs, >99% of the records of a real cluster) through
one Spark job, chunked by partition count, a chunk of topics shipped as one Arrow batch of columns
and its encoded records returned as a binary column (`migrate.bulk.topic_columns`; each batch
travels as an Arrow IPC stream, `SparkRuntime.map_batches`); `spark=None` runs the
very same translate+encode loop in this process (the cutover delta, the benchmark baseline, and
the oracle the Spark output is tested against). Both call the translator's pure per-entity
functions and the codec's `encode_record`, so "Spark output == in-process output ==
`translate()` encoded" holds by construction and is asserted by tests.

Where the topic records go: `translate` (migrate/translate/translation.py) orders the log as
header, brokers, topics by name, then configs, quotas, SCRAM, producer ids, ACLs, tokens,
trailer. The small tables (everything but topics) are translated in-process by `translate`
itself, on the snapshot with the topics taken out, and the topic records are spliced in right
after the broker registrations. No second copy of the ordering or blocker rules exists here.

Batches: `plan_batches` frames the values with the codec's `pack_batches` into batches of
`records_per_batch` records (never fewer than 200 except a lone short log, never over 8 MiB),
because KRaft pays per batch (Kafka's one-batch-per-topic migration cost ~30 ms per topic).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from migrate.bulk.spark import SparkRuntime
from migrate.bulk.topic_work import encode_topics
from migrate.preflight.findings import Finding
from migrate.translate.configs import config_records
from migrate.translate.entities import replica_dir_cluster
from migrate.translate.framing import TranslationOptions
from migrate.translate.topics import TopicFields, topic_fields
from migrate.translate.translation import TranslationResult, translate
from verify import (
    KINDS,
    Difference,
    MetadataImage,
    diff_rows,
    image_rows,
    natural_key,
)
from writers import (
    LATEST_PRODUCTION,
    MAX_BATCH_BYTES,
    TOPIC_RESOURCE,
    EncodedBatch,
    MetadataRecord,
    MetadataVersion,
    encode_record,
    pack_batches,
)
from zkreader import (
    ClusterSnapshot,
    migrating_topic,
    paused_gc,
)

__all__ = [
    "DEFAULT_RECORDS_PER_BATCH",
    "MIN_RECORDS_PER_BATCH",
    "EncodedLog",
    "StageTimes",
    "chunk_topics",
    "compare_spark",
    "encode_log",
    "plan_batches",
    "rest_counts",
    "translate_rest",
    "snapshot_timestamp_ms",
    "topic_table",
    "warm_up",
]

log = logging.getLogger(__name__)

MIN_RECORDS_PER_BATCH = 200
"""Kafka's `migration.metadata.min.batch.size`: fewer records per batch only costs time."""

DEFAULT_RECORDS_PER_BATCH = 2000
"""Records per batch we aim for (the 8 MiB limit may cut a batch shorter)."""

_TARGET_CHUNK_PARTITIONS = 20_000  # upper bound of partitions per Spark task
_CHUNKS_PER_CORE = 2  # enough tasks to balance uneven topics, few enough to keep overhead low
_Row = Mapping[str, Any]  # verify's row: field -> plain JSON value
_HEAD_TYPES = frozenset(
    {"FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "REGISTER_BROKER_RECORD"}
)


# ----------------------------------------------------------------------------- the topic table


def warm_up(spark: SparkRuntime) -> None:
    """Run a one-topic translate+encode job right after Spark starts (`SparkStarter(warmup=)`).

    It forks the Python workers, imports the translator, codec and pyarrow in them and takes
    the JVM's path once, then moves a few MiB a slot through it (`SparkRuntime.warm_transport`),
    so the first real job pays none of it. Each task slot gets a task (a worker per slot).
    """
    from migrate.bulk.topic_columns import ENCODED_SCHEMA, encode_topic_batch, topic_batch
    one_topic: TopicFields = ("warm-up", "AAAAAAAAAAAAAAAAAAAAAQ", None, [(0, (1,), None, (), ())])
    batches = [topic_batch([one_topic])] * max(1, spark.default_parallelism)  # n tasks
    spark.map_batches(batches, partial(encode_topic_batch, LATEST_PRODUCTION, None, False),
                      ENCODED_SCHEMA)
    spark.warm_transport()


def topic_table(snapshot: ClusterSnapshot) -> Iterator[TopicFields]:
    """The topic table in log order: each migrated topic as the translator reads it."""
    for name in _migrated_topic_names(snapshot):
        topic = snapshot.topics[name]
        yield topic_fields(topic, {p: snapshot.partition_states.get((name, p))
                                   for p in topic.assignment},
                           snapshot.topic_configs.get(name))


def _migrated_topic_names(snapshot: ClusterSnapshot) -> list[str]:
    """Topics whose records the topic table produces, by name (`zkreader.migrating_topic`)."""
    return [name for name in sorted(snapshot.topics) if migrating_topic(snapshot, name)]


def chunk_topics(
    snapshot: ClusterSnapshot,
    *,
    parallelism: int = 1,
    max_chunk_partitions: int = _TARGET_CHUNK_PARTITIONS,
) -> list[tuple[TopicFields, ...]]:
    """Cut the topic table into consecutive chunks of roughly equal partition counts.

    Args:
        snapshot: the tree read from ZooKeeper.
        parallelism: tasks Spark runs at once; about `2 x parallelism` chunks are made so a big
            topic does not leave a core idle, and none holds more than `max_chunk_partitions`.
        max_chunk_partitions: upper bound of partitions per chunk (a larger topic is one chunk).

    Returns:
        Chunks whose concatenation is every migrated topic in log (name) order.
    """
    names = _migrated_topic_names(snapshot)
    total = sum(len(snapshot.topics[n].assignment) for n in names)
    wanted = max(1, parallelism * _CHUNKS_PER_CORE)
    target = max(1, min(max_chunk_partitions, -(-total // wanted)))
    chunks: list[tuple[TopicFields, ...]] = []
    current: list[TopicFields] = []
    weight = 0
    for fields in topic_table(snapshot):
        current.append(fields)
        weight += max(1, len(fields[3]))  # its partitions
        if weight >= target:
            chunks.append(tuple(current))
            current, weight = [], 0
    if current:
        chunks.append(tuple(current))
    return chunks


# ----------------------------------------------------------------------------- the whole log


@dataclass
class StageTimes:
    """Wall-clock seconds per stage, for the summary and the benchmark."""

    translate_s: float = 0.0


@dataclass(frozen=True, slots=True)
class EncodedLog:
    """The migration's records, encoded, in log order, with what the plan summary needs.

    Attributes:
        values: every record value (`encode_record` output) in log order.
        counts: records by Kafka type name.
        blockers: the translator's blockers (records for those entities are left out).
        warnings: the translator's warnings.
        metadata_version: the target metadata.version.
        engine: "spark" or "in-process".
        times: stage timings.
    """

    values: list[bytes]
    counts: dict[str, int]
    blockers: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    metadata_version: MetadataVersion
    engine: str
    times: StageTimes = field(default_factory=StageTimes)


def translate_rest(snapshot: ClusterSnapshot, options: TranslationOptions) -> TranslationResult:
    """Translate everything but the topic table: cheap, and it yields every translator blocker.

    The topic table (>99% of the records) cannot block a migration except for topics without an
    id, which stay in this part. So `migrate` judges blockers from this result before any engine
    starts, and hands it to `encode_log` so nothing is translated twice.

    Raises:
        BadFlagError: the metadata.version is unknown or too old.
        TranslationError: a znode cannot be expressed (names the path).
    """
    return translate(_rest_snapshot(snapshot), options)


def rest_counts(snapshot: ClusterSnapshot, rest: TranslationResult) -> dict[str, int]:
    """The record counts of the whole log, from `translate_rest`'s result and the topic table's
    shape (a TopicRecord per topic, a ConfigRecord per override, a PartitionRecord per partition),
    without translating a single partition: what a refused `migrate` reports."""
    counts: Counter[str] = Counter(rest.counts)
    for name in _migrated_topic_names(snapshot):
        topic = snapshot.topics[name]
        counts["TOPIC_RECORD"] += 1
        counts["PARTITION_RECORD"] += len(topic.assignment)
        config = snapshot.topic_configs.get(name)
        if config is not None:
            counts["CONFIG_RECORD"] += len(config_records(TOPIC_RESOURCE, name, config.config))
    return dict(sorted(counts.items()))


def _rest_snapshot(snapshot: ClusterSnapshot) -> ClusterSnapshot:
    """The snapshot minus its topics: the topic table handles every topic that migrates."""
    return dataclasses.replace(snapshot, topics={}, partition_states={}, topic_configs={})


def _splice_index(records: Sequence[MetadataRecord]) -> int:
    """Where the topic records go: right after the header and the broker registrations."""
    i = 0
    while i < len(records) and records[i].type in _HEAD_TYPES:
        i += 1
    return i


def encode_log(
    snapshot: ClusterSnapshot,
    options: TranslationOptions,
    *,
    spark: SparkRuntime | None = None,
    progress: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    rest: TranslationResult | None = None,
) -> EncodedLog:
    """Translate and encode the whole migration, in `translate`'s order.

    Args:
        snapshot: the tree read from ZooKeeper.
        options: target metadata.version and password secret.
        spark: run the topic table on this Spark session; None = in this process.
        progress: `progress(done, total)` in topic chunks.
        clock: seconds, monotonic (injected by tests/benchmarks).
        rest: `translate_rest(snapshot, options)` when the caller already has it (it judged
            blockers from it), so it is not translated twice.

    Returns:
        The encoded records; equal, value for value, to encoding `translate(...).records`.

    Raises:
        BadFlagError: the metadata.version is unknown or too old.
        TranslationError: a znode cannot be expressed (names the path).
        SparkError: the Spark job failed.
    """
    with paused_gc():
        return _encode_log(snapshot, options, spark=spark, progress=progress, clock=clock,
                           rest=rest)


def _encode_log(
    snapshot: ClusterSnapshot,
    options: TranslationOptions,
    *,
    spark: SparkRuntime | None,
    progress: Callable[[int, int], None] | None,
    clock: Callable[[], float],
    rest: TranslationResult | None,
) -> EncodedLog:
    started = clock()
    if rest is None:
        rest = translate_rest(snapshot, options)
    mv = rest.metadata_version
    dir_cluster = replica_dir_cluster(snapshot, options.offline)
    topic_counts: Mapping[str, int]
    if spark is not None:
        topic_values, topic_counts = _encode_on_spark(snapshot, mv, dir_cluster, options.offline,
                                                      spark, progress)
    else:  # the same loop over the same topics, in this process
        encoded = encode_topics(mv, topic_table(snapshot), dir_cluster, options.offline)
        topic_values, topic_counts = encoded.values, Counter(encoded.types)
        if progress is not None:
            progress(1, 1)
    cut = _splice_index(rest.records)
    values = [encode_record(r) for r in rest.records[:cut]]
    values.extend(topic_values)
    values.extend(encode_record(r) for r in rest.records[cut:])
    counts: Counter[str] = Counter(rest.counts)
    counts.update(topic_counts)
    times = StageTimes(translate_s=clock() - started)
    log.debug("encoded %d records (%s) in %.2f s", len(values),
              "spark" if spark else "in-process", times.translate_s)
    return EncodedLog(
        values=values,
        counts=dict(sorted(counts.items())),
        blockers=tuple(rest.blockers),
        warnings=tuple(rest.warnings),
        metadata_version=mv,
        engine="spark" if spark is not None else "in-process",
        times=times,
    )


def _encode_on_spark(
    snapshot: ClusterSnapshot,
    mv: MetadataVersion,
    dir_cluster: str | None,
    offline: bool,
    spark: SparkRuntime,
    progress: Callable[[int, int], None] | None,
) -> tuple[list[bytes], dict[str, int]]:
    """The topic table through one Spark job (`map_batches`): a chunk of topics per task, shipped
    as Arrow columns (`migrate.bulk.topic_columns`), the encoded records back as a binary column.

    Returns:
        The values in log order and the records by type.
    """
    import pyarrow.compute as pc

    from migrate.bulk.topic_columns import ENCODED_SCHEMA, encode_topic_batch, topic_batch

    chunks = chunk_topics(snapshot, parallelism=spark.default_parallelism)
    if progress is not None:
        progress(0, len(chunks))
    table = spark.map_batches([topic_batch(c) for c in chunks],
                              partial(encode_topic_batch, mv, dir_cluster, offline),
                              ENCODED_SCHEMA)
    if progress is not None:
        progress(len(chunks), len(chunks))
    counts = {str(c["values"]): int(c["counts"])
              for c in pc.value_counts(table.column("record_type")).to_pylist()}
    return table.column("value").to_pylist(), counts


# ----------------------------------------------------------------------------- batches


def plan_batches(
    values: Sequence[bytes],
    *,
    base_offset: int,
    leader_epoch: int,
    timestamp_ms: int,
    records_per_batch: int = DEFAULT_RECORDS_PER_BATCH,
    max_bytes: int = MAX_BATCH_BYTES,
) -> list[EncodedBatch]:
    """Frame encoded values into consecutive v2 batches.

    Every batch holds `records_per_batch` records unless 8 MiB cuts it shorter; a short last
    batch (under `MIN_RECORDS_PER_BATCH`) is folded into the one before when that still fits.

    Args:
        values: record values in log order.
        base_offset: offset of the first record.
        leader_epoch: partitionLeaderEpoch of every batch.
        timestamp_ms: the batches' timestamp (deterministic: see `snapshot_timestamp_ms`).
        records_per_batch: target records per batch (at least `MIN_RECORDS_PER_BATCH`).
        max_bytes: byte limit per batch (KRaft's 8 MiB).

    Returns:
        The batches with contiguous offsets from `base_offset`.

    Raises:
        ValueError: `records_per_batch` below the minimum.
        BatchTooLargeError: one record cannot fit in a batch.
    """
    if records_per_batch < MIN_RECORDS_PER_BATCH:
        raise ValueError(f"records_per_batch must be >= {MIN_RECORDS_PER_BATCH}")
    if not values:
        return []
    datas = pack_batches(
        base_offset, leader_epoch, timestamp_ms, values,
        max_records=records_per_batch, max_bytes=max_bytes,
    )
    counts = _batch_sizes(datas)
    if len(datas) >= 2 and counts[-1] < MIN_RECORDS_PER_BATCH:
        start = len(values) - counts[-1] - counts[-2]
        tail = pack_batches(
            base_offset + start, leader_epoch, timestamp_ms, values[start:],
            max_records=counts[-1] + counts[-2], max_bytes=max_bytes,
        )
        datas = datas[:-2] + tail  # one batch if it fits in max_bytes, else as before
        counts = counts[:-2] + _batch_sizes(tail)
    out: list[EncodedBatch] = []
    offset = base_offset
    for data, n in zip(datas, counts, strict=True):
        out.append(EncodedBatch(offset, offset + n - 1, leader_epoch, data))
        offset += n
    return out


def _batch_sizes(datas: Sequence[bytes]) -> list[int]:
    """Records per packed batch, read back from each batch's header (recordsCount at byte 57)."""
    return [int.from_bytes(d[57:61], "big", signed=True) for d in datas]


def snapshot_timestamp_ms(snapshot: ClusterSnapshot) -> int:
    """The batches' timestamp: the newest mtime among the znodes the migration copies.

    Determinism (I6): the same ZooKeeper state gives the same timestamp, so the same bytes; a
    wall clock would make every re-run differ.
    """
    stats: Iterable[int] = (
        *(b.stat.mtime_ms for b in snapshot.brokers.values()),
        *(t.stat.mtime_ms for t in snapshot.topics.values()),
        *(s.stat.mtime_ms for s in snapshot.partition_states.values()),
        *(c.stat.mtime_ms for c in snapshot.topic_configs.values()),
        *(c.stat.mtime_ms for c in snapshot.broker_configs.values()),
        *(c.stat.mtime_ms for c in snapshot.user_configs.values()),
        *(c.stat.mtime_ms for c in snapshot.client_configs.values()),
        *(c.stat.mtime_ms for c in snapshot.user_client_configs.values()),
        *(c.stat.mtime_ms for c in snapshot.ip_configs.values()),
        *(a.stat.mtime_ms for a in snapshot.acls),
        *(t.stat.mtime_ms for t in snapshot.delegation_tokens.values()),
    )
    newest = max(stats, default=0)
    for znode in (snapshot.cluster_id, snapshot.producer_id_block):
        if znode is not None:
            newest = max(newest, znode.stat.mtime_ms)
    return newest


# ----------------------------------------------------------------------------- parity on Spark


def _diff_keyed(
    key: tuple[str, str], zookeeper: _Row | None, quorum: _Row | None
) -> list[Difference]:
    """`verify.diff_rows` for a row keyed `(kind, key)` (top-level: Spark pickles it by name)."""
    return diff_rows(key[0], key[1], zookeeper, quorum)


def compare_spark(
    zk_image: MetadataImage, quorum_image: MetadataImage, spark: SparkRuntime
) -> list[Difference]:
    """`verify.compare` as a Spark job: one full outer join of both images' rows by (kind, key).

    Both images are flattened with `verify.image_rows` (the row shape `compare` diffs), joined
    in Spark, each pair diffed with `verify.diff_rows`, and the differences put in `compare`'s
    order (kind as in `KINDS`, key in natural order, fields sorted), so the two are equal.

    Raises:
        SparkError: the job failed.
    """
    left: list[tuple[tuple[str, str], _Row]] = []
    right: list[tuple[tuple[str, str], _Row]] = []
    for kind in KINDS:
        left += [((kind, k), row) for k, row in image_rows(zk_image, kind).items()]
        right += [((kind, k), row) for k, row in image_rows(quorum_image, kind).items()]
    diffs = spark.diff_join(left, right, _diff_keyed)
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(diffs, key=lambda d: (order.get(d.kind, len(order)), natural_key(d.key)))
