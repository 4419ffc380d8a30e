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
import hashlib
import logging
import os
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from migrate._findings import Finding
from migrate._preflight import PlanSummary, summarize
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
from migrate.bulk.spark import SparkRuntime, SparkStarter
from migrate.flags.voters import check_voter_flags
from migrate.flags.zookeeper import read_snapshot
from migrate.translate.translation import TranslationOptions, TranslationResult, require_target
from verify import quorum_state_differences, quorum_state_facts, voter_file_differences
from writers import (
    LATEST_PRODUCTION,
    METADATA_PARTITION_DIR,
    ExpectedLog,
    MetadataVersion,
    StagedVoter,
    VoterDir,
    VoterFileFormatError,
    VoterStateError,
    VoterUnavailableError,
    fault_point,
    hold_voter_locks,
    interrupted_staging,
    open_log_source,
    read_back,
    read_meta_properties,
    recover_interrupted,
    stage_and_promote,
)
from zkreader import ClusterSnapshot, ConnectOptions

__all__ = [
    "IN_PROCESS",
    "LEADER_EPOCH",
    "BulkOptions",
    "BulkOutcome",
    "VoterTarget",
    "blockers_message",
    "check_voters",
    "expected_log",
    "judge",
    "overrides_given",
    "staging_findings",
    "voter_state_findings",
    "run_bulk",
]

log = logging.getLogger(__name__)

LEADER_EPOCH = 1
"""The single leader epoch of a freshly migrated log (and of quorum-state)."""


# Blocker code -> the flag that overrides it (the blocker's own override, nothing broader).
OVERRIDES: dict[str, str] = {"LOG_DIR_EVENT_PENDING": "allow_pending_log_dir_events"}


_LISTED_BLOCKERS = 20  # in the error message; the --json document and the table hold them all


def overrides_given(flags: object) -> frozenset[str]:
    """The override flags (`OVERRIDES`' attribute names) set on the parsed `flags`."""
    return frozenset(f for f in OVERRIDES.values() if getattr(flags, f, False))


# ----------------------------------------------------------------------------- flags


VoterTarget = StagedVoter
"""One `--voter ID=DIR`, in command-line order: the voter exactly as `writers` stages, promotes
and reads it back (its staging copy inside its own directory)."""


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_voters(voters: Sequence[tuple[int, Path]] | None) -> list[VoterTarget]:
    """Validate the `--voter` flags before anything connects.

    The rules every command shares are `flags.voters.check_voter_flags`; this adds migrate's
    own: each directory must be creatable and writable.

    Raises:
        BadFlagError: `check_voter_flags` refused the set (exit 2, names the flag).
        VoterUnavailableError: a directory cannot be created or written (exit 3, names it).
    """
    targets: list[VoterTarget] = []
    for node_id, path in check_voter_flags(voters, required=True):
        if path.exists():
            if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
                raise VoterUnavailableError(
                    f"--voter {node_id}={path}: the directory exists but is not readable and "
                    "writable"
                )
        else:
            base = _nearest_existing(path.parent)
            if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
                raise VoterUnavailableError(
                    f"--voter {node_id}={path}: cannot create the directory: {base} is not "
                    "a writable directory"
                )
        targets.append(VoterTarget(node_id, path))
    return targets


# ----------------------------------------------------------------------------- voter states


def expected_log(values: Sequence[bytes], snapshot: ClusterSnapshot, *,
                 records_per_batch: int = DEFAULT_RECORDS_PER_BATCH) -> ExpectedLog:
    """What `migrate` would write for these encoded records (size, digest, last offset).

    `plan --voter` judges voters against this, so plan and migrate agree on every voter.
    """
    return ExpectedLog.of(plan_batches(values, base_offset=0, leader_epoch=LEADER_EPOCH,
                                       timestamp_ms=snapshot_timestamp_ms(snapshot),
                                       records_per_batch=records_per_batch))


def voter_state_findings(targets: Sequence[VoterTarget], cluster_id: str,
                         expected: ExpectedLog) -> list[Finding]:
    """Every voter `migrate` would refuse, as a `VOTER_STATE` blocker naming its directory.

    Raises:
        VoterFileFormatError: a voter's file is damaged (exit 2).
        VoterUnavailableError: a voter cannot be read (exit 3).
    """
    out: list[Finding] = []
    all_ids = [t.node_id for t in targets]
    for t in targets:
        try:
            _voter_holds(t, cluster_id, expected, all_ids)
        except VoterFileFormatError:
            raise
        except VoterStateError as exc:
            out.append(Finding("VOTER_STATE", str(exc), str(t.path)))
    return out


def staging_findings(targets: Sequence[VoterTarget]) -> list[Finding]:
    """Warnings for what a killed `migrate` left in these voters' staging dirs (for `plan`).

    `migrate` finishes or removes it first thing (`writers.recover_interrupted`), so nothing is
    blocked; but until then the voters may differ, and what `plan` diffs is not the whole story.
    Call only for voters whose `.lock` no one holds (a running `migrate` stages right now).
    """
    out: list[Finding] = []
    for left in interrupted_staging(targets):
        v = left.voter
        if left.committed:
            where = ("its staged log is not yet moved into place" if left.log_staged
                     else "its own log is in place, the staging dir is not yet removed")
            out.append(Finding(
                "PROMOTION_UNFINISHED",
                f"voter {v.node_id}: a `migrate` run was killed while promoting its log into "
                f"{', '.join(left.named) or v.path} ({v.staging} holds the commit marker; "
                f"{where}): the promotion is unfinished, and the voters may differ until it is. "
                "Running `migrate` again with the same --voter flags finishes it for every one "
                "of them before anything else.",
                str(v.path)))
        else:
            out.append(Finding(
                "STAGING_LEFT_OVER",
                f"voter {v.node_id}: {v.staging} is the incomplete staging copy of a `migrate` "
                "run killed before its promotion; no voter was changed by it, and `migrate` "
                "removes it when run again.",
                str(v.path)))
    return out


def _refuse_used_quorum_state(target: VoterTarget, partition: Path) -> None:
    """Refuse a voter whose `quorum-state` shows it took part in a quorum.

    Writing a fresh log with epoch 1 over a voter that was at epoch 5, or voted for 3002, would
    let it vote again in epochs it already voted in: Raft's one vote per epoch breaks.
    """
    state = quorum_state_facts(partition)
    if state is None:
        return
    if state.leader_epoch > LEADER_EPOCH or state.voted_id != -1:
        raise VoterStateError(
            f"voter {target.node_id} ({target.path}) holds {partition / 'quorum-state'} at "
            f"epoch {state.leader_epoch} (votedId {state.voted_id}, leaderId "
            f"{state.leader_id}): it has been part of a running quorum, and a migrated log "
            f"starts at epoch {LEADER_EPOCH}. Refusing to reset it: move the directory aside "
            "(or point --voter at an empty one)"
        )


def _own_quorum_state(partition: Path) -> bool:
    """True if `quorum-state` is absent or one a migration wrote (epoch 1, no vote cast).

    Such a file can be rewritten for a new voter set (a voter added to the --voter list): no
    controller has acted on it yet.
    """
    state = quorum_state_facts(partition)
    return state is None or (state.leader_epoch == LEADER_EPOCH and state.voted_id == -1)


def _refresh_quorum_state(target: VoterTarget, all_ids: Sequence[int], leader_id: int,
                          cluster_id: str) -> bool:
    """Make an unchanged voter's own `quorum-state` name the voter set of this run.

    Returns:
        True if the file was rewritten.
    """
    partition = target.path / METADATA_PARTITION_DIR
    state = quorum_state_facts(partition)
    if (state is not None and state.voters is not None and state.leader_id == leader_id
            and not quorum_state_differences(target.node_id, state, given=all_ids,
                                             quorum=all_ids)):
        return False
    voter = VoterDir(target.path, node_id=target.node_id, cluster_id=cluster_id)
    try:
        voter.write_quorum_state(leader_epoch=LEADER_EPOCH, voters=list(all_ids),
                                 leader_id=leader_id)
    finally:
        voter.close()
    return True


def _voter_holds(target: VoterTarget, cluster_id: str, expected: ExpectedLog,
                 all_ids: Sequence[int] = ()) -> bool:
    """True if the voter already holds exactly this log; False if it holds none.

    Raises:
        VoterStateError: it holds another cluster's or node's metadata, a different log, a
            quorum-state from a running quorum, or this log with files a controller would
            refuse (exit 1, says what it holds).
        VoterFileFormatError: one of its files is damaged (exit 2).
        VoterUnavailableError: it cannot be read.
    """
    path = target.path
    if not path.exists():
        return False
    meta = read_meta_properties(path)
    if meta is not None and meta.cluster_id != cluster_id:
        raise VoterStateError(
            f"voter {target.node_id} ({path}) belongs to cluster {meta.cluster_id!r}, not "
            f"{cluster_id!r} (ZooKeeper's /cluster/id); refusing to touch it"
        )
    if meta is not None and meta.node_id != target.node_id:
        raise VoterStateError(
            f"voter {target.node_id} ({path}): meta.properties says node.id={meta.node_id}; "
            "check the --voter ID=DIR pairs"
        )
    partition = path / METADATA_PARTITION_DIR
    if not partition.exists():
        return False
    source = open_log_source(partition)
    if not source.segments and not source.snapshots:
        _refuse_used_quorum_state(target, partition)
        return False
    if source.snapshots:
        raise VoterStateError(
            f"voter {target.node_id} ({path}) holds snapshot(s) "
            f"{', '.join(p.name for p in source.snapshots)}: a log this tool did not write "
            "(a formatted or running quorum); refusing to overwrite it"
        )
    h = hashlib.sha256()
    size = 0
    for seg in source.segments:
        try:
            data = seg.read_bytes()
        except OSError as exc:
            raise VoterUnavailableError(f"{seg}: cannot read: {exc.strerror or exc}") from exc
        h.update(data)
        size += len(data)
    if size == expected.size and h.hexdigest() == expected.digest:
        # the same log, but would a controller start on this directory? (never a false no-op)
        broken = voter_file_differences([(target.node_id, path)], cluster_id=cluster_id,
                                        voter_ids=list(all_ids) or [target.node_id])
        if _own_quorum_state(partition):  # ours, at epoch 1 with no vote: rewritten, not judged
            broken = tuple(d for d in broken if not d.field.startswith("quorum-state"))
        if broken:
            what = "; ".join(f"{d.field}: expected {d.zookeeper}, found {d.quorum}"
                             for d in broken)
            raise VoterStateError(
                f"voter {target.node_id} ({path}) holds this migration's log, but a controller "
                f"would not start on it: {what}. Refusing it as it stands: fix the file(s) "
                "or move the directory aside and migrate again"
            )
        return True
    last = -1
    for entry in source.entries():
        last = entry.batch.last_offset
    raise VoterStateError(
        f"voter {target.node_id} ({path}) already holds a different metadata log ({size} bytes, "
        f"last offset {last}); this migration is {expected.size} bytes ending at offset "
        f"{expected.last_offset}. Refusing to overwrite it: move it aside (or point --voter at "
        "an empty directory) if it is an old attempt"
    )


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


def _blocking(summary: PlanSummary, overrides: frozenset[str]) -> PlanSummary:
    """Move blockers whose own override flag was given into the warnings, saying so."""
    kept: list[Finding] = []
    moved: list[Finding] = []
    for f in summary.report.blockers:
        flag = OVERRIDES.get(f.code)
        if flag is not None and flag in overrides:
            option = "--" + flag.replace("_", "-")
            moved.append(Finding(f.code, f"{f.message} (overridden by {option})", f.path))
        else:
            kept.append(f)
    if not moved:
        return summary
    report = type(summary.report)(tuple(kept), summary.report.warnings + tuple(moved))
    return PlanSummary(report, summary.records, summary.brokers, summary.topics,
                       summary.partitions)


def judge(snapshot: ClusterSnapshot, rest: TranslationResult, counts: Mapping[str, int], *,
          voter_ids: Sequence[int], overrides: frozenset[str], offline: bool = False
          ) -> PlanSummary:
    """The plan summary: pre-flight + the translator's findings, overrides applied.

    `rest` is `translate_rest`'s result (it carries every translator finding) and `counts` the
    whole log's (`rest_counts` before encoding): judging never needs the topic table translated.
    The bulk copy and the online pre-copy judge through this one function.
    """
    return _blocking(
        summarize(
            snapshot,
            records=counts,
            extra_blockers=rest.blockers,
            extra_warnings=rest.warnings,
            voter_ids=voter_ids,
            offline=offline,
        ),
        overrides,
    )


def blockers_message(blockers: Sequence[Finding]) -> str:
    """The error `migrate` exits 1 with: how many blockers, the first few, nothing written."""
    lines = [f"  {f.code} {f.path}: {f.message}" for f in blockers[:_LISTED_BLOCKERS]]
    if len(blockers) > _LISTED_BLOCKERS:
        lines.append(f"  ... and {len(blockers) - _LISTED_BLOCKERS} more (all in `plan --json`)")
    return f"{len(blockers)} pre-flight blocker(s); nothing was written:\n" + "\n".join(lines)


def _peak_self() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


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
            runtime = starter.get(timeout=_spark_start_timeout_s())
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
        if _voter_holds(t, cluster_id, expected, ids):
            if _refresh_quorum_state(t, ids, leader, cluster_id):
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
    outcome.peak_rss_bytes["cli"] = _peak_self()
    log.info("migrate: %s", {k: round(v, 3) for k, v in outcome.times_s.items()})
    _write_stats(outcome)
    return outcome


def _spark_start_timeout_s() -> float:
    """How long `migrate` waits for Spark to start (`ZK2KRAFT_SPARK_START_TIMEOUT`, 300 s),
    read when the wait starts."""
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
