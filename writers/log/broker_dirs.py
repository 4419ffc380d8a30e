"""A stopped ZooKeeper-mode broker's log directory, and the `directory.id` it gets before KRaft.

Why this exists (Kafka 3.9.1 and 4.1.1 source, confirmed by the offline rehearsal's logs): a
KRaft broker compares, for each of its replicas, the directory the metadata log names
(`PartitionRecord.directories`) with the `directory.id` of the log dir that holds it
(`ReplicaManager.maybeUpdateTopicAssignment`). When they differ it reports the real one to the
controller (`AssignReplicasToDirs`), stamped with the broker epoch of its *own metadata image*
(`AssignmentsManager`: `image.cluster().brokerEpoch(nodeId)`, -1 while the image has no
registration of it). On a migrated log, every replica differs: a ZooKeeper-mode log dir has no
`directory.id` (`KafkaServer` only adds one when migration is enabled, and Kafka generates a
random one at the first KRaft start), so nothing could name it. And the first image a broker
publishes is the log up to the high watermark it first saw, without its own registration (that
record is committed a moment later and only published once the first, long publication of
every replica is done). So the controller answers `STALE_BROKER_EPOCH` and both log it at ERROR
until the broker's image catches up.

The fix is to know the directory id before the first start: `zk2kraft prepare-broker` writes a
`directory.id` derived from the cluster id and broker id (`broker_directory_id`) into the
broker's first log dir, and `migrate --offline` names the same id in every `PartitionRecord`.
The broker then finds nothing to report. Kafka keeps an existing `directory.id`
(`MetaProperties` reads it from a version-0 file too; `KafkaServer` writes exactly that in
migration mode), and the broker registers it as its directory.

The partition directories (issue 29: a 2.8 cluster lost a single-replica partition): at its
first KRaft start a broker calls a partition directory *stray* and renames it away
(`<dir>.<uuid>-stray`, later deleted) when its `partition.metadata` has no topic id ("The
topicId does not exist in Log(...), treat it as a stray log", Kafka 3.9-4.4
`LogManager.isStrayKraftReplica`), when that topic id names no partition of the metadata image
(another id: the topic was re-created, or the dir is foreign), or when the partition's replicas
do not include the broker. Kafka 2.8 wrote no `partition.metadata` for a partition until the
controller sent it a LeaderAndIsr with the topic id, so brokers that ran 2.8 (or an IBP below
2.8) keep such directories. `check_replica_dirs` judges every directory against the migrated
metadata before the first start; `write_partition_metadata` writes a missing file in Kafka's
format (`PartitionMetadataFile`: `version: 0`, newline, `topic_id: <id>`, no final newline).
Directories Kafka itself skips are skipped: files, names ending `-delete`, `-stray`, `-future`
(`UnifiedLog`'s suffixes), `remote-log-index-cache` and `__cluster_metadata-0`; any other
directory that is not `<topic>-<partition>` makes Kafka refuse the log dir at start.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from writers.errors import BrokerLogDirError, BrokerLogDirUnavailableError, VoterFileFormatError
from writers.log.fsutil import Ownership, atomic_write, replace_private
from writers.log.names import directory_id_for
from writers.log.reader import METADATA_PARTITION_DIR, parse_properties, read_partition_metadata

__all__ = [
    "BrokerLogDir",
    "MigratedTopic",
    "ReplicaCheck",
    "ReplicaOutcome",
    "broker_directory_id",
    "check_replica_dirs",
    "directory_id_action",
    "missing_replicas",
    "read_broker_log_dir",
    "write_directory_id",
    "write_partition_metadata",
]

_META = "meta.properties"


def broker_directory_id(cluster_id: str, broker_id: int) -> str:
    """The `directory.id` zk2kraft gives broker `broker_id`'s first log dir.

    Deterministic, so `prepare-broker` (on the broker host, reading the dir's own
    `meta.properties`) and `migrate --offline` (reading ZooKeeper's `/cluster/id`) agree without
    talking to each other; derived like the voters' ids, from another seed.
    """
    return directory_id_for(cluster_id, broker_id, label="broker directory.id")


@dataclass(frozen=True, slots=True)
class BrokerLogDir:
    """What a broker log dir's `meta.properties` says.

    Attributes:
        path: the log dir.
        broker_id: `broker.id` (version 0, ZooKeeper mode) or `node.id` (version 1).
        cluster_id: `cluster.id`.
        directory_id: `directory.id`, or None when the file has none (every ZooKeeper-mode
            broker that never ran with migration enabled).
        text: the file as it is (kept so an update changes one line only).
    """

    path: Path
    broker_id: int
    cluster_id: str
    directory_id: str | None
    text: str


def read_broker_log_dir(path: Path) -> BrokerLogDir:
    """Read a broker log dir's `meta.properties`.

    Raises:
        BrokerLogDirError: no such dir or file, or the file lacks broker.id/cluster.id (exit 2).
        BrokerLogDirUnavailableError: it cannot be read (exit 3).
    """
    meta = path / _META
    if not path.is_dir():
        raise BrokerLogDirError(f"{path}: not a directory")
    try:
        text = meta.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BrokerLogDirError(
            f"{meta}: missing (not a broker log dir, or the broker never started)") from None
    except UnicodeDecodeError:
        raise BrokerLogDirError(f"{meta}: not UTF-8 text") from None
    except OSError as exc:
        raise BrokerLogDirUnavailableError(f"{meta}: cannot read: {exc.strerror or exc}") from exc
    props = parse_properties(text)
    id_key = "node.id" if props.get("version", "0") == "1" else "broker.id"
    raw_id = props.get(id_key)
    cluster_id = props.get("cluster.id")
    if raw_id is None or not re.fullmatch(r"-?\d+", raw_id) or not cluster_id:
        raise BrokerLogDirError(f"{meta}: needs {id_key} and cluster.id (has "
                                f"{', '.join(sorted(props)) or 'nothing'})")
    return BrokerLogDir(path, int(raw_id), cluster_id, props.get("directory.id"), text)


def directory_id_action(found: BrokerLogDir, *, first: bool) -> str:
    """What giving this log dir the `directory.id` `migrate --offline` names would do.

    Only the broker's first log dir (`log.dirs`' first entry) gets the derived id: it is the one
    `migrate` names for every replica of the broker. The others are left alone (Kafka gives them
    a random id at start, and the replicas they hold are reported as before).

    Returns:
        "set" (it has none: `write_directory_id` adds it), "already set", "kept" (it has a
        different one: a broker that ran with migration enabled, or in KRaft mode; never
        changed, since a controller may know it) or "not first".
    """
    if not first:
        return "not first"
    wanted = broker_directory_id(found.cluster_id, found.broker_id)
    if found.directory_id == wanted:
        return "already set"
    if found.directory_id is not None:
        return "kept"
    return "set"


def write_directory_id(found: BrokerLogDir) -> None:
    """Add the derived `directory.id` line to the dir's `meta.properties`, nothing else changed.

    Raises:
        BrokerLogDirUnavailableError: the file cannot be replaced (exit 3).
    """
    wanted = broker_directory_id(found.cluster_id, found.broker_id)
    text = found.text if found.text.endswith("\n") or not found.text else found.text + "\n"
    meta = found.path / _META
    try:
        mode = os.stat(meta).st_mode & 0o777  # Kafka writes it 0644: keep what it was
        atomic_write(meta, f"{text}directory.id={wanted}\n".encode(), Ownership.of_dir(found.path))
        os.chmod(meta, mode)
    except OSError as exc:
        raise BrokerLogDirUnavailableError(f"{meta}: cannot write: {exc.strerror or exc}") from exc


# ----------------------------------------------------------------- the partition directories

_PARTITION_METADATA = "partition.metadata"
# `UnifiedLog`'s suffixes of directories a broker does not load as a replica of its own.
_SKIPPED_SUFFIXES = ("-delete", "-stray", "-future")
# `RemoteIndexCache.DIR_NAME` (3.6+) and the KRaft metadata partition: skipped by `LogManager`.
_SKIPPED_NAMES = frozenset({"remote-log-index-cache", METADATA_PARTITION_DIR})
_PARTITION_DIR_RE = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


@dataclass(frozen=True, slots=True)
class MigratedTopic:
    """One topic as the migrated metadata has it.

    Attributes:
        topic_id: Kafka's 22-character Uuid text.
        replicas: partition -> its replicas (the broker ids Kafka loads it on).
    """

    topic_id: str
    replicas: Mapping[int, tuple[int, ...]]


class ReplicaOutcome:
    """What `check_replica_dirs` says of one directory (the summary counts these)."""

    OK = "ok"
    WRITE = "partition.metadata written"
    ID_DIFFERS = "refused: topic id differs from the migrated one"
    NOT_ASSIGNED = "refused: partition not assigned to this broker"
    NO_TOPIC = "refused: topic not in the migrated metadata"
    NO_PARTITION = "refused: partition not in the migrated metadata"
    BAD_METADATA_FILE = "refused: partition.metadata is not Kafka's format"
    DUPLICATE = "refused: the same partition in two log dirs"
    NOT_PARTITION = "refused: not a <topic>-<partition> directory"

    REFUSED = (ID_DIFFERS, NOT_ASSIGNED, NO_TOPIC, NO_PARTITION, BAD_METADATA_FILE, DUPLICATE,
               NOT_PARTITION)


@dataclass(frozen=True, slots=True)
class ReplicaCheck:
    """One directory of a broker log dir, judged against the migrated metadata.

    Attributes:
        path: the directory.
        outcome: a `ReplicaOutcome` value.
        detail: what was found, for the operator (ids, replicas, why).
        topic_id: with `ReplicaOutcome.WRITE`, the id to write.
        first_dir: it is in the broker's first log dir (the one whose `directory.id` the
            migrated log names); elsewhere Kafka re-reports its directory at the first start.
    """

    path: Path
    outcome: str
    detail: str = ""
    topic_id: str | None = None
    first_dir: bool = True

    @property
    def refused(self) -> bool:
        """True when Kafka would rename this directory away (or refuse the log dir)."""
        return self.outcome in ReplicaOutcome.REFUSED


@dataclass(frozen=True, slots=True)
class _Named:
    path: Path
    topic: str
    partition: int
    first_dir: bool


def _list_dirs(log_dir: Path) -> list[Path]:
    try:
        return sorted(p for p in log_dir.iterdir() if p.is_dir())  # Kafka's `isDirectory`
    except OSError as exc:
        raise BrokerLogDirUnavailableError(
            f"{log_dir}: cannot list: {exc.strerror or exc}") from exc


def check_replica_dirs(log_dirs: Sequence[Path], broker_id: int,
                       migrated: Mapping[str, MigratedTopic],
                       left_out: Mapping[str, str] | None = None) -> list[ReplicaCheck]:
    """Judge every partition directory in a broker's log dirs as Kafka's first KRaft start
    would (module docstring), without changing anything.

    Args:
        log_dirs: the broker's `log.dirs`, first one first.
        broker_id: the broker's id (its `meta.properties`).
        migrated: topic name -> the migrated topic.
        left_out: topic name -> why the migration left it out (named in the refusal).

    Returns:
        One `ReplicaCheck` per directory that is not skipped, in log dir then name order.

    Raises:
        BrokerLogDirUnavailableError, VoterUnavailableError: a dir or file cannot be read (3).
    """
    checks: list[ReplicaCheck] = []
    seen: dict[tuple[str, int], Path] = {}
    for index, log_dir in enumerate(log_dirs):
        for path in _list_dirs(log_dir):
            name = path.name
            if name in _SKIPPED_NAMES or name.endswith(_SKIPPED_SUFFIXES):
                continue
            m = _PARTITION_DIR_RE.match(name)
            if m is None:
                checks.append(ReplicaCheck(path, ReplicaOutcome.NOT_PARTITION,
                                           "Kafka's log loading fails on a name that is not "
                                           "topic-partition (UnifiedLog.parseTopicPartitionName)",
                                           first_dir=index == 0))
                continue
            named = _Named(path, m.group("topic"), int(m.group("partition")), index == 0)
            key = (named.topic, named.partition)
            if key in seen:
                checks.append(ReplicaCheck(path, ReplicaOutcome.DUPLICATE,
                                           f"also in {seen[key]}", first_dir=index == 0))
                continue
            seen[key] = path
            checks.append(_check_one(named, broker_id, migrated, left_out or {}))
    return checks


def _check_one(named: _Named, broker_id: int, migrated: Mapping[str, MigratedTopic],
               left_out: Mapping[str, str]) -> ReplicaCheck:
    def check(outcome: str, detail: str = "", topic_id: str | None = None) -> ReplicaCheck:
        return ReplicaCheck(named.path, outcome, detail, topic_id, named.first_dir)

    try:
        found_id = read_partition_metadata(named.path)
    except VoterFileFormatError:
        return check(ReplicaOutcome.BAD_METADATA_FILE, "Kafka fails to load this replica")
    topic = migrated.get(named.topic)
    if topic is None:
        why = left_out.get(named.topic, "no such topic")
        return check(ReplicaOutcome.NO_TOPIC, f"topic {named.topic!r}: {why}")
    replicas = topic.replicas.get(named.partition)
    if replicas is None:
        return check(ReplicaOutcome.NO_PARTITION, f"topic {named.topic!r} has partitions "
                     f"0-{max(topic.replicas, default=-1)} only")
    if found_id is not None and found_id != topic.topic_id:
        return check(ReplicaOutcome.ID_DIFFERS,
                     f"partition.metadata has {found_id}, the migrated topic {topic.topic_id}")
    if broker_id not in replicas:
        return check(ReplicaOutcome.NOT_ASSIGNED,
                     f"replicas {list(replicas)} do not include broker {broker_id}")
    if found_id is None:
        return check(ReplicaOutcome.WRITE, f"topic id {topic.topic_id}", topic.topic_id)
    return check(ReplicaOutcome.OK)


def missing_replicas(checks: Sequence[ReplicaCheck], broker_id: int,
                     migrated: Mapping[str, MigratedTopic]) -> list[tuple[str, int]]:
    """Partitions the migrated metadata assigns to this broker that no log dir holds: Kafka
    creates them empty (a replicated one then copies from its leader; a single replica has
    lost its data, or the log dirs given are not the broker's)."""
    held = {c.path.name for c in checks}
    return sorted((name, p) for name, topic in migrated.items()
                  for p, replicas in topic.replicas.items()
                  if broker_id in replicas and f"{name}-{p}" not in held)


def write_partition_metadata(partition_dir: Path, topic_id: str) -> None:
    """Write `partition.metadata` as Kafka's `PartitionMetadataFile` does (module docstring):
    complete or absent after a crash, mode 0644 and owned like the partition directory.

    Raises:
        BrokerLogDirUnavailableError: it cannot be written (exit 3).
    """
    target = partition_dir / _PARTITION_METADATA
    try:
        with replace_private(target, Ownership.of_dir(partition_dir)) as out:
            os.fchmod(out.fileno(), 0o644)  # what Kafka's FileOutputStream leaves (umask 022)
            out.write(f"version: 0\ntopic_id: {topic_id}".encode())
    except OSError as exc:
        raise BrokerLogDirUnavailableError(
            f"{target}: cannot write: {exc.strerror or exc}") from exc
