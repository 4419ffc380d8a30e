"""The pre-flight: what in a ZooKeeper snapshot blocks or endangers a migration.

Pure functions over a `ClusterSnapshot` (no I/O), so `plan` and `migrate` judge the same tree the
same way and unit tests need no ZooKeeper. Blockers are the states where Kafka's own migration
aborts, or worse, silently loses data (an earlier `/migration` znode that is reused, a controller
that is already a KRaft one); warnings are states that migrate but that an operator should know
about (Kafka 3.9's rules: `ZkMigrationClient.readAllMetadata` and `KRaftMigrationDriver`).

The blockers are here, the warnings in `warning_rules`. Every finding names the znode it is
about, relative to the chroot (the path Kafka itself uses). Topics queued for deletion are not
migrated (Kafka 3.9 skips them), so the topic and partition rules ignore them apart from the
warning that says they are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from migrate.preflight.broker_release import BrokerRelease
from migrate.preflight.findings import Finding
from migrate.preflight.source_version import (
    SourceVersion,
    brokers_below_metadata_version,
    source_version,
    source_version_warnings,
)
from migrate.preflight.warning_rules import NO_SHARED_LISTENER
from migrate.preflight.warning_rules import warnings as warning_findings
from migrate.preflight.znodes import (
    id_list,
    migrated_topics,
    topic_path,
)
from writers import MetadataVersion
from zkreader import ClusterSnapshot, MigrationZnode, Topic

__all__ = [
    "PlanSummary",
    "PreflightReport",
    "migrated_partition_count",
    "preflight",
    "standin_migration_finding",
    "standin_summary",
    "summarize",
]


_STANDIN_LISTENER = (
    "With --standin this blocks: the brokers are in migration mode with these listeners, and "
    "the cutover would hand the fenced ZooKeeper to a controller that cannot reach every broker "
    "(no cluster controller until the brokers are changed).")


@dataclass(frozen=True, slots=True)
class PreflightReport:
    """The findings of one pre-flight, each list in a stable order (rule, then path).

    Attributes:
        blockers: findings that stop `migrate` (exit 1 from `plan`).
        warnings: findings that are reported and carried on.
    """

    blockers: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing blocks the migration."""
        return not self.blockers

    def with_blockers(self, extra: Iterable[Finding]) -> PreflightReport:
        """Return a report with `extra` blockers appended (e.g. the translator's).

        A finding already present (same code and path) is not repeated, so a rule that both the
        pre-flight and the translator check is reported once.
        """
        return PreflightReport(_merge(self.blockers, extra), self.warnings)

    def with_warnings(self, extra: Iterable[Finding]) -> PreflightReport:
        """Return a report with `extra` warnings appended, without repeats (see `with_blockers`)."""
        return PreflightReport(self.blockers, _merge(self.warnings, extra))


def _merge(base: tuple[Finding, ...], extra: Iterable[Finding]) -> tuple[Finding, ...]:
    seen = {(f.code, f.path) for f in base}
    added = []
    for finding in extra:
        if (finding.code, finding.path) not in seen:
            seen.add((finding.code, finding.path))
            added.append(finding)
    return base + tuple(added)


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """What `plan --json` writes (and what `migrate --json` starts from): the design's document.

    Attributes:
        report: blockers and warnings.
        records: records `migrate` would write, by Kafka record type name.
        brokers: registered brokers under /brokers/ids.
        topics: topics that will be migrated (pending deletions excluded).
        partitions: partitions that will be migrated (pending deletions excluded).
        source: what ZooKeeper says of the source's Kafka version, and the paths that fit.
    """

    report: PreflightReport
    records: Mapping[str, int] = field(default_factory=dict)
    brokers: int = 0
    topics: int = 0
    partitions: int = 0
    source: SourceVersion | None = None

    def to_json(self) -> dict[str, object]:
        """Return `{"blockers","warnings","records","brokers","topics","partitions"}`, and
        "source" when known."""
        doc: dict[str, object] = {
            "blockers": [f.to_json() for f in self.report.blockers],
            "warnings": [f.to_json() for f in self.report.warnings],
            "records": dict(sorted(self.records.items())),
            "brokers": self.brokers,
            "topics": self.topics,
            "partitions": self.partitions,
        }
        if self.source is not None:
            doc["source"] = self.source.to_json()
        return doc


def preflight(
    snapshot: ClusterSnapshot, *, voter_ids: Iterable[int] = (), offline: bool = False,
    source: SourceVersion | None = None,
) -> PreflightReport:
    """Judge a snapshot: every blocker and warning, each naming its znode.

    Args:
        snapshot: the tree as read by `zkreader.read_cluster`.
        voter_ids: node ids of the KRaft controllers (`--voter`), when known.
        offline: `--offline`: every broker must be stopped (a registered broker or a held
            `/controller` blocks); replicas on unregistered brokers are then expected, and a
            partition whose last ISR member stopped is reported as coming back with it.
        source: the source's bounds when already found (`summarize`), else found from the
            snapshot.

    Returns:
        The report; `report.ok` is False when the migration must not start.
    """
    blockers = [
        *_migration_znode(snapshot),
        *_kraft_controller(snapshot),
        *_cluster_id_missing(snapshot),
        *_topics_without_id(snapshot),
        *_duplicate_topic_ids(snapshot),
        *(_brokers_still_running(snapshot) if offline else _unregistered_brokers(snapshot)),
        *_log_dir_events(snapshot),
        *_voter_ids_taken(snapshot, voter_ids),
    ]
    return PreflightReport(tuple(blockers), (*warning_findings(snapshot, offline=offline),
                                             *source_version_warnings(snapshot, source)))


def summarize(
    snapshot: ClusterSnapshot,
    *,
    records: Mapping[str, int],
    extra_blockers: Iterable[Finding] = (),
    extra_warnings: Iterable[Finding] = (),
    voter_ids: Iterable[int] = (),
    offline: bool = False,
    brokers: Sequence[BrokerRelease] = (),
    metadata_version: MetadataVersion | None = None,
) -> PlanSummary:
    """Judge a snapshot and count what will be migrated: the `plan --json` document's data.

    Args:
        snapshot: the tree as read.
        records: records the translator would write, by type name (`TranslationResult.counts`).
        extra_blockers: blockers found elsewhere (the translator's), appended after ours.
        extra_warnings: warnings found elsewhere (the translator's), appended after ours.
        voter_ids: node ids of the KRaft controllers (`--voter`), when known.
        offline: judge for `--offline` (see `preflight`).
        brokers: the brokers' ApiVersions answers (`plan --bootstrap-server`), if asked.
        metadata_version: the level the migration writes; online, a broker answering an
            older release blocks (`BROKER_OLDER_THAN_METADATA_VERSION`).
    """
    source = source_version(snapshot, brokers)
    report = (
        preflight(snapshot, voter_ids=voter_ids, offline=offline, source=source)
        .with_blockers(extra_blockers)
        .with_warnings(extra_warnings)
    )
    if not offline and metadata_version is not None:
        report = report.with_blockers(brokers_below_metadata_version(brokers, metadata_version))
    return PlanSummary(
        report=report,
        records=dict(records),
        brokers=len(snapshot.brokers),
        topics=sum(1 for _ in migrated_topics(snapshot)),
        partitions=migrated_partition_count(snapshot),
        source=source,
    )


def migrated_partition_count(snapshot: ClusterSnapshot) -> int:
    """Count the partitions `migrate` writes: every assigned one, pending deletions excluded."""
    return sum(len(t.assignment) for t in migrated_topics(snapshot))


# --- blockers -------------------------------------------------------------------------------


def _migration_znode(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    m = snapshot.migration
    if m is None:
        return
    yield Finding(
        "MIGRATION_ZNODE_EXISTS",
        f"/migration already exists (KRaft controller {m.kraft_controller_id}, epoch "
        f"{m.kraft_controller_epoch}, metadata offset {m.kraft_metadata_offset}): an earlier "
        "migration attempt; reusing it silently has wiped clusters. Find out what wrote it and "
        "remove it deliberately before migrating.",
        "/migration",
    )


def standin_migration_finding(m: MigrationZnode | None) -> Finding | None:
    """The blocker an existing `/migration` is for `--standin`, or None when it may be reused.

    KRaft controllers in migration mode get-or-create `/migration` when they start, on every
    node (`KRaftMigrationDriver`'s recovery from ZooKeeper), with Kafka's
    `ZkMigrationLeadershipState.EMPTY`: controller id, controller epoch, metadata offset and
    metadata epoch all -1. The stand-in's controllers run before the cutover, so that znode is
    expected and is what the fence then takes over. Anything else was written by a controller
    that led a migration (an active one records its id and epoch before it migrates), or was
    left by an earlier attempt, and reusing it silently has wiped clusters: still a blocker.
    """
    if m is None:
        return None
    fields = (m.kraft_controller_id, m.kraft_controller_epoch, m.kraft_metadata_offset,
              m.kraft_metadata_epoch)
    if fields == (-1, -1, -1, -1):
        return None
    return Finding(
        "MIGRATION_ZNODE_EXISTS",
        f"/migration names KRaft controller {m.kraft_controller_id}, epoch "
        f"{m.kraft_controller_epoch}, metadata offset {m.kraft_metadata_offset}, metadata "
        f"epoch {m.kraft_metadata_epoch}: --standin accepts only the empty /migration that "
        "controllers in migration mode create when they start (all four -1). This one was "
        "written by a controller that led a migration, or is left from an earlier attempt; "
        "reusing it silently has wiped clusters. Find out what wrote it and remove it "
        "deliberately before migrating.",
        "/migration",
    )


def standin_summary(summary: PlanSummary, migration: MigrationZnode | None) -> PlanSummary:
    """Judge the tree as `--standin` does. `plan --standin` and `migrate --standin` both use this.

    `/migration` (`standin_migration_finding`): the controllers' empty one blocks nothing, any
    other keeps its `MIGRATION_ZNODE_EXISTS` blocker, saying why the stand-in cannot take it over.
    `NO_SHARED_LISTENER` becomes a blocker: with the stand-in the brokers are already in migration
    mode, with the listeners they will keep, and the run's own cutover hands the fenced ZooKeeper
    to a controller that can never reach every broker (docs/design/translation.md, "Findings that
    guard Kafka's keys").
    """
    blockers: list[Finding] = []
    for f in summary.report.blockers:
        if f.code == "MIGRATION_ZNODE_EXISTS":
            replaced = standin_migration_finding(migration)
            if replaced is not None:
                blockers.append(replaced)
        else:
            blockers.append(f)
    warnings: list[Finding] = []
    for f in summary.report.warnings:
        if f.code == NO_SHARED_LISTENER:
            blockers.append(Finding(f.code, f"{f.message} {_STANDIN_LISTENER}", f.path))
        else:
            warnings.append(f)
    if (tuple(blockers), tuple(warnings)) == (summary.report.blockers, summary.report.warnings):
        return summary
    return PlanSummary(type(summary.report)(tuple(blockers), tuple(warnings)), summary.records,
                       summary.brokers, summary.topics, summary.partitions, summary.source)


def _kraft_controller(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    c = snapshot.controller
    if c is None or not c.is_kraft:
        return
    why = (
        f"kraftControllerEpoch {c.kraft_controller_epoch}"
        if c.kraft_controller_epoch >= 0
        else "the znode is persistent, not a ZK controller's ephemeral one"
    )
    yield Finding(
        "CONTROLLER_IS_KRAFT",
        f"/controller is held by KRaft controller {c.broker_id} ({why}): ZooKeeper's controller "
        "is already fenced by a migration in progress or finished.",
        "/controller",
    )


def _cluster_id_missing(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if snapshot.cluster_id is None:
        yield Finding(
            "CLUSTER_ID_MISSING",
            "/cluster/id is missing: the voters must be formatted with the cluster's id, and "
            "there is none to copy (has a broker ever started on this chroot?).",
            "/cluster/id",
        )


def _topics_without_id(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    # The one place TOPIC_WITHOUT_ID is raised (translation just leaves the topic out). A topic
    # queued for deletion is not migrated, so it needs no id.
    for name in sorted(snapshot.topics):
        topic = snapshot.topics[name]
        if topic.topic_id is None and name not in snapshot.pending_deletions:
            yield Finding(
                "TOPIC_WITHOUT_ID",
                f"topic {topic.name!r} has no topic_id (created before IBP 2.8): Kafka's "
                "migration aborts on it. Let a controller with IBP >= 2.8 assign ids first "
                "(a controller failover does it).",
                topic_path(topic.name),
            )


def _duplicate_topic_ids(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    # Kafka keys a topic by its id (TopicsImage.topicsById, the brokers' partition.metadata):
    # two migrated topics with one id replay as one, and the other is lost without an error.
    # A copied topic znode does this. Reported on the later-created one (czxid), naming both.
    by_id: dict[str, list[Topic]] = {}
    for topic in migrated_topics(snapshot):
        assert topic.topic_id is not None  # migrating_topic: only topics with an id
        by_id.setdefault(topic.topic_id, []).append(topic)
    for topic_id, topics in sorted(by_id.items()):
        if len(topics) < 2:
            continue
        topics.sort(key=lambda t: (t.stat.czxid, t.name))
        paths = [topic_path(t.name) for t in topics]
        for later in topics[1:]:
            yield Finding(
                "DUPLICATE_TOPIC_ID",
                f"{topic_path(later.name)} has topic_id {topic_id}, the id of "
                f"{paths[0]} (created earlier): Kafka keys topics by id, so migrating both "
                "would silently lose one. Find out which znode was copied and delete it (or "
                "recreate that topic so it gets its own id) before migrating.",
                topic_path(later.name),
            )


def _unregistered_brokers(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    registered = set(snapshot.brokers)
    for topic in migrated_topics(snapshot):
        named: set[int] = set()
        for replicas in (
            *topic.assignment.values(),
            *topic.adding_replicas.values(),
            *topic.removing_replicas.values(),
        ):
            named.update(replicas)
        missing = named - registered
        if missing:
            yield Finding(
                "BROKER_NOT_REGISTERED",
                f"topic {topic.name!r} assigns replicas to broker(s) {id_list(missing)} "
                "that are not "
                "registered in /brokers/ids: the migration waits for every such broker to "
                "register with KRaft. Start them, or reassign their replicas away.",
                topic_path(topic.name),
            )


def _brokers_still_running(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    # Offline means nothing changes ZooKeeper or the brokers' data while we copy: a registered
    # broker (its ephemeral /brokers/ids/N) or a ZooKeeper controller (its ephemeral
    # /controller) is a running process that can still change both.
    for broker_id in sorted(snapshot.brokers):
        yield Finding(
            "BROKER_STILL_RUNNING",
            f"--offline: broker {broker_id} is still registered in /brokers/ids (it is running, "
            "or stopped less than a ZooKeeper session timeout ago). Stop every broker and wait "
            "for its registration to disappear, or migrate online without --offline.",
            f"/brokers/ids/{broker_id}",
        )
    c = snapshot.controller
    if c is not None and not c.is_kraft:
        yield Finding(
            "CONTROLLER_HELD",
            f"--offline: /controller is held by broker {c.broker_id}: a ZooKeeper controller is "
            "still running and may change partition states. Stop it first.",
            "/controller",
        )


def _voter_ids_taken(snapshot: ClusterSnapshot, voter_ids: Iterable[int]) -> Iterator[Finding]:
    # Kafka requires controller node ids distinct from every broker id: a controller whose id is
    # a ZK broker's takes that broker's dynamic configs and registration as its own.
    named: set[int] = set(snapshot.brokers)
    for topic in migrated_topics(snapshot):
        for replicas in topic.assignment.values():
            named.update(replicas)
    for node_id in sorted(set(voter_ids) & named):
        yield Finding(
            "VOTER_ID_IS_BROKER_ID",
            f"--voter node id {node_id} is also a ZooKeeper broker id: KRaft controller node ids "
            "must differ from every broker id. Choose another node.id for that controller.",
            f"/brokers/ids/{node_id}",
        )


def _log_dir_events(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    for event in sorted(snapshot.log_dir_events, key=lambda e: e.name):
        yield Finding(
            "LOG_DIR_EVENT_PENDING",
            f"unprocessed log-dir failure event {event.name} for broker {event.broker_id} "
            f"(event {event.event}): ZooKeeper's controller has not yet moved that broker's "
            "leaders; cutting over now would lose that work. Wait until it is processed.",
            f"/log_dir_event_notification/{event.name}",
        )
