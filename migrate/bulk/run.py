"""`migrate --cutover none`: copy the whole ZooKeeper state into every voter's metadata log.

The flow, and why each step is where it is:

1. Flags first (`check_voters`, metadata.version): a typo is an exit 2 naming the flag, an
   unusable directory an exit 3 naming it, before anything connects or starts.
2. Read ZooKeeper once (no watches: nothing is mirrored).
3. Judge: the pre-flight plus the translator's blockers, from everything but the topic table
   (`translate_rest`, cheap), so a refused migration costs what `plan` costs, starts no JVM and
   lists its blockers in the error (exit 1), before a byte is written. Nothing is ever written
   to ZooKeeper.
4. Choose the engine (`engine.choose_engine`: `--spark-master auto` takes Spark `local[*]` only
   for big clusters), translate + encode the topic table on it (`pipeline.encode_log`), frame
   batches of >= 200 records.
5. Voters: every voter's `.lock` (Kafka's) is held from before the read to the end, so a
   running controller or a second run is refused up front (exit 3, naming the holder). What a
   killed run left is finished or undone first (`writers.recover_interrupted`). One holding
   exactly these bytes is left alone (a re-run is a no-op and says so); one holding anything
   else is refused (exit 1) with what it holds. The rest are staged inside their own directory
   and promoted all together or not at all (`writers.stage_and_promote`), with `quorum-state`
   in the log's epoch 1 naming no leader; then each promoted voter is read back (every batch's
   CRC and offsets, the bytes' digest, meta.properties, quorum-state) and compared with what was
   meant to be there (`writers.read_back`) before success is reported.
6. Determinism (I6): batch timestamps come from ZooKeeper mtimes, ids from content, so the same
   ZooKeeper state always gives byte-identical logs; that is what makes step 5's no-op check a
   plain byte comparison.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from migrate._progress import ProgressBars
from migrate.bulk.engine import IN_PROCESS, EngineChoice, choose_engine
from migrate.bulk.pipeline import (
    DEFAULT_RECORDS_PER_BATCH,
    EncodedLog,
    encode_log,
    plan_batches,
    rest_counts,
    snapshot_timestamp_ms,
    translate_rest,
    warm_up,
)
from migrate.bulk.spark import SparkRuntime, own_peak_rss_bytes
from migrate.bulk.spark_start import SparkStarter
from migrate.bulk.voters import LEADER_EPOCH, VoterTarget, refresh_quorum_state, voter_holds
from migrate.flags.zookeeper import read_snapshot
from migrate.judge import judge
from migrate.preflight.checks import PlanSummary
from migrate.translate.framing import TranslationOptions, require_target
from writers import (
    LATEST_PRODUCTION,
    ExpectedLog,
    MetadataVersion,
    fault_point,
    hold_voter_locks,
    read_back,
    recover_interrupted,
    stage_and_promote,
)
from zkreader import ConnectOptions

__all__ = [
    "IN_PROCESS",
    "BulkOptions",
    "BulkOutcome",
    "run_bulk",
    "spark_start_timeout_s",
]

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- orchestration


@dataclass(frozen=True, slots=True)
class BulkOptions:
    """Everything `run_bulk` needs, already parsed (see `migrate.cli.migrate`).

    Attributes:
        connect: ZooKeeper connection options.
        voters: the `--voter` targets, in command-line order.
        metadata_version: `--metadata-version`, parsed by the CLI.
        password_encoder_secret: `--password-encoder-secret` (never logged).
        spark_master: `--spark-master`: `auto`, `in-process` or a Spark master URL.
        overrides: attribute names of the blocker override flags that were given.
        records_per_batch: records per batch (>= 200).
        offline: `--offline`: every broker stopped, the cluster never goes back to ZooKeeper.
        target_kafka: `--target-kafka`, `3.9` or `4.x`.
    """

    connect: ConnectOptions
    voters: tuple[VoterTarget, ...]
    metadata_version: MetadataVersion = LATEST_PRODUCTION
    password_encoder_secret: str | None = field(default=None, repr=False)
    spark_master: str = "auto"
    overrides: frozenset[str] = frozenset()
    records_per_batch: int = DEFAULT_RECORDS_PER_BATCH
    offline: bool = False
    target_kafka: str = "3.9"


@dataclass
class BulkOutcome:
    """What happened: the plan summary, where the log ends, which voters were written.

    Attributes:
        summary: the plan summary (blockers, warnings, counts).
        last_offset: offset of the log's last record (-1 if nothing was produced).
        batches: number of batches in the log.
        written: node ids whose directories were written now.
        unchanged: node ids that already held exactly this log (no-op).
        requorumed: of those, the ones whose own `quorum-state` was rewritten for this run's
            voter set (a voter was added): not a no-op.
        engine: "spark" or "in-process".
        engine_choice: the engine and why it was chosen (None when refused before choosing).
        times_s: wall seconds per stage: read, translate_encode, write, total.
        peak_rss_bytes: peak memory of this process and of the Spark driver JVM.
    """

    summary: PlanSummary
    last_offset: int = -1
    batches: int = 0
    written: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    requorumed: list[int] = field(default_factory=list)
    engine: str = ""
    engine_choice: EngineChoice | None = None
    times_s: dict[str, float] = field(default_factory=dict)
    peak_rss_bytes: dict[str, int | None] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        """True when pre-flight blockers stopped the run: nothing was written anywhere."""
        return bool(self.summary.report.blockers)

    @property
    def no_op(self) -> bool:
        """True when every voter already held this exact migration."""
        return not self.written and not self.requorumed and bool(self.unchanged)

    def to_json(self) -> dict[str, object]:
        """The `migrate --json` document: the plan summary plus the window and log facts."""
        doc = self.summary.to_json()
        doc.update(
            {
                "window_ms": {"tool": None, "total": None},
                "delta_records": 0,
                "last_offset": self.last_offset,
                "no_op": self.no_op,
            }
        )
        return doc


def run_bulk(
    options: BulkOptions,
    *,
    bars: ProgressBars,
    clock: Callable[[], float] = time.perf_counter,
) -> BulkOutcome:
    """Run the copy-only migration (module docstring for the flow).

    Returns:
        The outcome. Blockers travel in it, as they do in `plan`: when
        `outcome.summary.report.blockers` is not empty the run stopped before writing anything
        (`outcome.refused`), and the command turns that into exit 1.

    Raises:
        VoterLockedError: a voter's `.lock` is held (a Kafka controller, another run) (exit 3,
            names the directory and the holder); nothing was read or written.
        ZkUnreachableError / VoterUnavailableError / SparkError: exit 3.
        ZnodeFormatError / TranslationError: malformed input (exit 2, names the znode).
        VoterStateError: a voter holds something else (exit 1); nothing was written.
    """
    t0 = clock()
    require_target(options.metadata_version, options.target_kafka)
    # Every voter's `.lock` (Kafka's own) is held from before the first read until the promoted
    # logs have been checked: a running controller or a second run is refused (exit 3) up front.
    with hold_voter_locks([t.path for t in options.voters]):
        return _run_locked(options, bars=bars, clock=clock, t0=t0)


def _run_locked(
    options: BulkOptions, *, bars: ProgressBars, clock: Callable[[], float], t0: float
) -> BulkOutcome:
    targets = list(options.voters)
    fault_point("locked")
    # A run killed while staging or promoting left a staging copy: finish its promotion (all
    # voters) or remove it (none), before anything looks at what the voters hold.
    for line in recover_interrupted(targets):
        log.warning("%s", line)
    translation = TranslationOptions(
        metadata_version=options.metadata_version,
        password_encoder_secret=options.password_encoder_secret,
        offline=options.offline,
        target_kafka=options.target_kafka,
    )
    snapshot = read_snapshot(options.connect, bars)  # --cutover none: no watches to arm
    t_read = clock()
    # Judge first: everything but the topic table is translated here (it carries every
    # translator blocker), so a refused migration costs what `plan` costs and starts no JVM.
    rest = translate_rest(snapshot, translation)
    judged = judge(snapshot, rest, rest_counts(snapshot, rest),
                   voter_ids=[t.node_id for t in targets], overrides=options.overrides,
                   offline=options.offline)
    if judged.report.blockers:
        outcome = BulkOutcome(judged)
        outcome.times_s = {"read": t_read - t0, "judge": clock() - t_read}
        return outcome
    engine = choose_engine(options.spark_master, judged.partitions)
    t_judged = clock()
    runtime: SparkRuntime | None = None
    starter = (
        SparkStarter(engine.spark_master, warmup=warm_up)
        if engine.spark_master is not None
        else None
    )
    try:
        if starter is not None:
            starter.start()
            runtime = starter.get(timeout=spark_start_timeout_s())
        t_spark = clock()
        encoded: EncodedLog = encode_log(
            snapshot,
            translation,
            spark=runtime,
            progress=bars.task("translating + encoding"),
            rest=rest,
        )
        t_encoded = clock()
        jvm_peak = runtime.jvm_peak_rss_bytes() if runtime is not None else None
        workers_peak = (runtime.python_workers_peak_rss_bytes() if runtime is not None
                        else None)
    finally:
        if starter is not None:
            starter.stop()
    # The judgement above stands (it depends on the snapshot and `rest` only); the counts are
    # now the records actually encoded.
    summary = dataclasses.replace(judged, records=dict(encoded.counts))
    outcome = BulkOutcome(summary, engine=encoded.engine, engine_choice=engine)
    outcome.peak_rss_bytes = {"cli": None, "spark_driver": jvm_peak,
                              "spark_python_workers": workers_peak}
    assert snapshot.cluster_id is not None  # CLUSTER_ID_MISSING is a blocker
    cluster_id = snapshot.cluster_id.cluster_id
    batches = plan_batches(
        encoded.values,
        base_offset=0,
        leader_epoch=LEADER_EPOCH,
        timestamp_ms=snapshot_timestamp_ms(snapshot),
        records_per_batch=options.records_per_batch,
    )
    del encoded  # the batches hold the bytes now
    expected = ExpectedLog.of(batches)
    outcome.last_offset = expected.last_offset
    outcome.batches = len(batches)
    pending = []
    # No leader named in quorum-state: every controller starts unattached in the log's epoch and
    # the first election (epoch 2) picks one. Naming voter X leader of epoch 1 made X start
    # "resigned" while the others fetched from it (NotControllerException, seen with real 3.9.1).
    ids, leader = [t.node_id for t in targets], -1
    for t in targets:
        if voter_holds(t, cluster_id, expected, ids):
            if refresh_quorum_state(t, ids, leader, cluster_id):
                outcome.requorumed.append(t.node_id)
            outcome.unchanged.append(t.node_id)
        else:
            pending.append(t)
    if pending:
        stage_and_promote(pending, cluster_id=cluster_id, batches=batches,
                          quorum_voters=ids, leader_id=leader, leader_epoch=LEADER_EPOCH,
                          progress=bars.task("writing voters"))
        del batches
        t_promoted = clock()
        # success is reported from what reads back, never from what was written
        for t in pending:
            read_back(t, expected, cluster_id=cluster_id, quorum_voters=ids,
                      leader_id=leader, leader_epoch=LEADER_EPOCH)
            outcome.written.append(t.node_id)
    t_end = clock()
    if not pending:
        t_promoted = t_end
    outcome.times_s = {
        "read": t_read - t0,
        "judge": t_judged - t_read,
        "spark_wait": t_spark - t_judged,
        "translate_encode": t_encoded - t_spark,
        "write": t_promoted - t_encoded,
        "read_back": t_end - t_promoted,
        "total": t_end - t0,
    }
    outcome.peak_rss_bytes["cli"] = own_peak_rss_bytes()
    log.info("migrate: %s", {k: round(v, 3) for k, v in outcome.times_s.items()})
    _write_stats(outcome)
    return outcome


def spark_start_timeout_s() -> float:
    """How long `migrate` and `plan --fleet` wait for Spark to start
    (`ZK2KRAFT_SPARK_START_TIMEOUT`, 300 s), read when the wait starts."""
    return float(os.environ.get("ZK2KRAFT_SPARK_START_TIMEOUT", "300"))


def _write_stats(outcome: BulkOutcome) -> None:
    """Benchmark hook: `ZK2KRAFT_STATS_FILE=path` receives the stage times and peak memory."""
    target = os.environ.get("ZK2KRAFT_STATS_FILE")
    if not target:
        return
    doc = {
        "times_s": outcome.times_s,
        "peak_rss_bytes": outcome.peak_rss_bytes,
        "batches": outcome.batches,
        "last_offset": outcome.last_offset,
        "engine": outcome.engine,
    }
    Path(target).write_bytes(orjson.dumps(doc))
