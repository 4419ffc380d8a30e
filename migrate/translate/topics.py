"""One topic's records: `TopicRecord`, its topic `ConfigRecord`s, its `PartitionRecord`s.

This is the order and grouping of Kafka 3.9's `ZkMigrationClient.migrateTopics` (one list per
topic, never split), and it satisfies invariant I2: the topic before its configs and partitions.

Partition fields follow Kafka's mapping (`ZkMigrationClient.migrateTopics`): replicas from the topic
znode, ISR, leader, leader epoch and recovery state from the state znode, the partition epoch is the
state znode's *version* (ZK-mode Kafka never stores it in the JSON), and reassignments in flight
(`adding_replicas` / `removing_replicas`) are carried so the KRaft controller completes them. A
missing state znode gets Kafka's default: ISR = replicas, leader = first replica, epochs 0.
`PartitionRecord` is written at version 0, as Kafka's migration does at every metadata.version:
KRaft then assigns every replica the MIGRATING directory until the broker reports its own.
Offline (`dir_cluster` given, metadata.version >= 3.7-IV2) it is written at the level's version
with `directories` naming each replica's broker's first log dir by the `directory.id` that
`zk2kraft prepare-broker` gives it (`writers.broker_directory_id`): the broker then has nothing
to report at its first start, when it would report it with broker epoch -1 and get
`STALE_BROKER_EPOCH` (writers/log/broker_dirs.py says why, from Kafka's source).
Offline (`offline`), every partition's leader is -1, ISR and epochs as ZooKeeper has them: every
broker is stopped, so no partition has a live leader. It is what a KRaft controller records for a
partition whose ISR brokers are all fenced, and the controller then elects each leader from its
ISR when the first ISR member is unfenced, with a `PartitionChangeRecord` that every follower
replays after the leader's registration. Naming ZooKeeper's leader instead left followers of a
broker that registered late without a fetcher on Kafka 3.9.1: a follower starts fetching only
from a leader its image knows, and only when the leader epoch moves (docs/design/offline.md,
"Offline migration").

The module ends with the registry entries (`migrate.translate.kinds`) of the `topic` kind and of
its two parts, `partition` (one state znode) and `topic_config` (`/config/topics/<t>` alone).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from migrate.errors import TranslationError
from migrate.translate.configs import config_diff, config_records
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind, no_keys
from verify import MetadataImage, PartitionImage, TopicImage
from writers import (
    NO_LEADER_CHANGE,
    TOPIC_RESOURCE,
    FieldValue,
    MetadataRecord,
    MetadataVersion,
    broker_directory_id,
    record_version,
)
from zkreader import (
    ZK_KINDS,
    ClusterSnapshot,
    ConfigZnode,
    EntityKey,
    PartitionState,
    Topic,
    migrating_topic,
)

__all__ = [
    "PARTITION_KIND",
    "TOPIC_CONFIG_KIND",
    "TOPIC_KIND",
    "PartitionRow",
    "StateFields",
    "TopicFields",
    "partition_record",
    "partition_record_of",
    "partition_row",
    "topic_fields",
    "topic_records",
    "topic_records_of",
]

_PARTITION_RECORD_VERSION = 0
_NO_LEADER = -1


StateFields = tuple[Sequence[int], int, int, int, int]
"""A state znode as the translator reads it: `(isr, leader, leader_epoch, partition_epoch,
leader_recovery_state)`."""

PartitionRow = tuple[int, Sequence[int], StateFields | None, Sequence[int], Sequence[int]]
"""One partition as the translator reads it: `(partition, replicas, state, removing_replicas,
adding_replicas)`, `state` None when the state znode is missing. The Spark workers build these
from Arrow columns (`migrate.bulk.topic_columns`) without rebuilding the reader's model objects."""


def partition_row(topic: Topic, partition: int, state: PartitionState | None) -> PartitionRow:
    """The fields of one partition's znodes that its `PartitionRecord` is made from."""
    return (partition, topic.assignment[partition],
            None if state is None else (state.isr, state.leader, state.leader_epoch,
                                        state.partition_epoch, state.leader_recovery_state),
            topic.removing_replicas.get(partition, ()), topic.adding_replicas.get(partition, ()))


def partition_record(topic: Topic, partition: int, state: PartitionState | None, *,
                     mv: MetadataVersion | None = None,
                     dir_cluster: str | None = None, offline: bool = False) -> MetadataRecord:
    """Return the `PartitionRecord` of one partition (`partition_record_of` its znodes' fields).

    Args:
        topic: the topic znode (replicas and reassignment come from it); must have a topic id.
        partition: the partition id.
        state: its decoded state znode, or None when the znode is missing.
        mv, dir_cluster, offline: `partition_record_of`'s.
    """
    return partition_record_of(topic.topic_id, partition_row(topic, partition, state), mv=mv,
                               dir_cluster=dir_cluster, offline=offline)


def partition_record_of(topic_id: str | None, row: PartitionRow, *,
                        mv: MetadataVersion | None = None,
                        dir_cluster: str | None = None, offline: bool = False) -> MetadataRecord:
    """Return the `PartitionRecord` of one partition, from its znodes' fields.

    Args:
        topic_id: the topic's id.
        row: the partition's fields (`PartitionRow`).
        mv: the metadata.version written (needed with `dir_cluster` only).
        dir_cluster: offline only: the cluster id whose prepared broker log dirs the replicas'
            directories name (module docstring); None names no directory.
        offline: every broker is stopped: leader -1 (module docstring).

    Returns:
        A version-0 `PartitionRecord`, or with `dir_cluster` at >= 3.7-IV2 one of the level's
        version naming each replica's directory.
    """
    partition, replicas, state, removing, adding = row
    if state is None:
        isr: Sequence[int] = replicas
        leader = replicas[0] if replicas else _NO_LEADER
        leader_epoch = partition_epoch = recovery = 0
    else:
        isr, leader, leader_epoch, partition_epoch, recovery = state
    if offline:
        leader = _NO_LEADER
    data: dict[str, FieldValue] = {
        "partitionId": partition,
        "topicId": topic_id,
        "replicas": list(replicas),
        "isr": list(isr),
        "removingReplicas": list(removing),
        "addingReplicas": list(adding),
        "leader": leader,
        "leaderEpoch": leader_epoch,
        "partitionEpoch": partition_epoch,
        "leaderRecoveryState": recovery,
    }
    if dir_cluster is not None and mv is not None and mv.supports_directories:
        data["directories"] = [broker_directory_id(dir_cluster, b) for b in replicas]
        return MetadataRecord("PARTITION_RECORD", record_version("PARTITION_RECORD", mv), data)
    return MetadataRecord("PARTITION_RECORD", _PARTITION_RECORD_VERSION, data)


TopicFields = tuple[str, str | None, Mapping[str, Any] | None, list[PartitionRow]]
"""One topic as the translator reads it: `(name, topic_id, config, rows)`: the topic id None when
the znode has none, the overrides of `/config/topics/<name>` None when it has none, every
partition's `PartitionRow` in any order."""


def topic_fields(topic: Topic, states: Mapping[int, PartitionState | None],
                 config: ConfigZnode | None) -> TopicFields:
    """The fields of one topic's znodes that its records are made from.

    Args:
        topic: the topic znode.
        states: partition -> its state znode (None or absent = missing znode).
        config: `/config/topics/<name>`, or None when the topic has no overrides.
    """
    return (topic.name, topic.topic_id, None if config is None else config.config,
            [partition_row(topic, p, states.get(p)) for p in topic.assignment])


def topic_records(
    topic: Topic,
    states: Mapping[int, PartitionState | None],
    config: ConfigZnode | None,
    mv: MetadataVersion,
    dir_cluster: str | None = None,
    offline: bool = False,
) -> list[MetadataRecord]:
    """Return every record of one topic, in log order: `topic_records_of` its `topic_fields`.

    Raises:
        TranslationError: the topic znode has no topic id (see `topic_records_of`).
    """
    return topic_records_of(topic_fields(topic, states, config), mv, dir_cluster, offline)


def topic_records_of(
    fields: TopicFields,
    mv: MetadataVersion,
    dir_cluster: str | None = None,
    offline: bool = False,
) -> list[MetadataRecord]:
    """Return every record of one topic, in log order, from its znodes' fields.

    Args:
        fields: the topic's `TopicFields`.
        mv: the metadata.version being written (every record here is version 0 at all of them,
            but the offline `PartitionRecord` with directories).
        dir_cluster: offline only, see `partition_record_of`.
        offline: every broker is stopped, see `partition_record_of`.

    Returns:
        `[TopicRecord, ConfigRecord..., PartitionRecord...]`, configs by key, partitions by id.

    Raises:
        TranslationError: the topic znode has no topic id (Kafka's migration aborts there too;
            `translate` reports it as the `TOPIC_WITHOUT_ID` blocker instead of calling this).
    """
    name, topic_id, config, rows = fields
    if topic_id is None:
        raise TranslationError(f"/brokers/topics/{name}: topic {name!r} has no topic_id")
    records = [MetadataRecord("TOPIC_RECORD", 0, {"name": name, "topicId": topic_id})]
    if config is not None:
        records += config_records(TOPIC_RESOURCE, name, config)
    for row in sorted(rows, key=_partition_id):
        records.append(partition_record_of(topic_id, row, mv=mv, dir_cluster=dir_cluster,
                                           offline=offline))
    return records


_partition_id = itemgetter(0)


# ---------------------------------------------------------------------------- the topic kind


def _states(snapshot: ClusterSnapshot, topic: Topic) -> dict[int, PartitionState | None]:
    return {p: snapshot.partition_states.get((topic.name, p)) for p in topic.assignment}


def _topic_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                        ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    if migrating_topic(snapshot, key.name):
        topic = snapshot.topics[key.name]
        out.records = topic_records(topic, _states(snapshot, topic),
                                    snapshot.topic_configs.get(key.name), ctx.mv,
                                    ctx.dir_cluster, ctx.offline)
    return out


def _diff_topic(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                ctx: EntityContext) -> EntityDelta:
    name = key.name
    held = image.topics.by_name.get(name)
    if not migrating_topic(snap, name):
        if held is None:
            return EntityDelta()
        return EntityDelta([_remove_topic(held)])
    topic = snap.topics[name]
    if held is None:
        return _topic_from_nothing(key, snap, ctx)
    if held.topic_id != topic.topic_id or not set(held.partitions) <= set(topic.assignment):
        # a new topic under the old name, or partitions KRaft cannot remove: write it anew
        out = EntityDelta([_remove_topic(held)])
        out.extend(_topic_from_nothing(key, snap, ctx))
        return out
    znode = snap.topic_configs.get(name)
    records = config_diff(TOPIC_RESOURCE, name, znode.config if znode else {}, image)
    for p in sorted(topic.assignment):
        state = snap.partition_states.get((name, p))
        target = partition_record(topic, p, state)
        current = held.partitions.get(p)
        if current is None:
            records.append(target)
        else:
            records += _partition_change(current, target)
    return EntityDelta(records)


def _remove_topic(held: TopicImage) -> MetadataRecord:
    return MetadataRecord("REMOVE_TOPIC_RECORD", 0, {"topicId": held.topic_id})


def _topic_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    """Topics that do not migrate (queued for deletion, or without id) are left out."""
    for name in sorted(snapshot.topics):
        if migrating_topic(snapshot, name):
            yield EntityKey.topic(name)


def _topic_image_keys(image: MetadataImage, named: Collection[EntityKey]) -> Iterator[EntityKey]:
    for name in sorted(image.topics.by_name):
        yield EntityKey.topic(name)


TOPIC_KIND = EntityKind(
    name="topic",
    zk=ZK_KINDS["topic"],
    from_nothing=_topic_from_nothing,
    diff=_diff_topic,
    snapshot_keys=_topic_keys,
    image_keys=_topic_image_keys,
    records=frozenset({"TOPIC_RECORD", "REMOVE_TOPIC_RECORD"}),
    expected=("topics",),
    parity=("topic",),
    snapshot_lines=("topic", "pending_deletion"),
)


# ------------------------------------------------------------------------ the partition kind


def _nothing(key: EntityKey, snapshot: ClusterSnapshot, ctx: EntityContext) -> EntityDelta:
    """A part of a topic, from nothing: the topic's key writes it."""
    return EntityDelta()


def _diff_partition(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                    ctx: EntityContext) -> EntityDelta:
    held = image.topics.by_name.get(key.name)
    current = held.partitions.get(key.partition) if held is not None else None
    state = snap.partition_states.get((key.name, key.partition))
    if held is None or current is None or state is None:
        # a new topic or partition is written by its topic key (its znode was notified too);
        # a state znode only disappears with its topic, which its topic key removes
        return EntityDelta()
    topic = snap.topics.get(key.name)
    if topic is None or topic.topic_id != held.topic_id or key.partition not in topic.assignment:
        topic = Topic(
            name=key.name, json_version=3, topic_id=held.topic_id,
            assignment={key.partition: current.replicas},
            adding_replicas={key.partition: current.adding_replicas}
            if current.adding_replicas else {},
            removing_replicas={key.partition: current.removing_replicas}
            if current.removing_replicas else {},
            stat=state.stat,
        )
    return EntityDelta(_partition_change(current, partition_record(topic, key.partition, state)))


def _partition_change(current: PartitionImage, target: MetadataRecord) -> list[MetadataRecord]:
    """The record that turns `current` into the partition `target` (a PartitionRecord) describes.

    A PartitionChangeRecord when replaying it gives exactly the target, else the full
    PartitionRecord (`migrate.translate.delta`'s docstring: folded notifications).
    """
    t: Mapping[str, Any] = target.data
    want = (tuple(t["replicas"]), tuple(t["isr"]), tuple(t["removingReplicas"]),
            tuple(t["addingReplicas"]), t["leader"], t["leaderEpoch"], t["partitionEpoch"],
            t["leaderRecoveryState"])
    have = (current.replicas, current.isr, current.removing_replicas, current.adding_replicas,
            current.leader, current.leader_epoch, current.partition_epoch,
            current.leader_recovery_state)
    if want == have:
        return []
    if t["partitionEpoch"] != current.partition_epoch + 1:
        return [target]
    if t["leaderEpoch"] == current.leader_epoch and t["leader"] == current.leader:
        leader = NO_LEADER_CHANGE
    elif t["leaderEpoch"] == current.leader_epoch + 1:
        leader = t["leader"]  # set even when unchanged: the field is what bumps the epoch
    else:
        return [target]
    data: dict[str, FieldValue] = {"partitionId": t["partitionId"], "topicId": t["topicId"]}
    if want[1] != current.isr:
        data["isr"] = list(want[1])
    if leader != NO_LEADER_CHANGE:
        data["leader"] = leader
    if want[0] != current.replicas:
        data["replicas"] = list(want[0])
    if want[2] != current.removing_replicas:
        data["removingReplicas"] = list(want[2])
    if want[3] != current.adding_replicas:
        data["addingReplicas"] = list(want[3])
    if want[7] != current.leader_recovery_state:
        data["leaderRecoveryState"] = want[7]
    return [MetadataRecord("PARTITION_CHANGE_RECORD", 0, data)]


PARTITION_KIND = EntityKind(
    name="partition",
    zk=ZK_KINDS["partition"],
    from_nothing=_nothing,
    diff=_diff_partition,
    snapshot_keys=no_keys,
    image_keys=no_keys,
    records=frozenset({"PARTITION_RECORD", "PARTITION_CHANGE_RECORD"}),
    expected=("topics",),
    parity=("partition",),
    snapshot_lines=("partition_state",),
    part_of="topic",
)


# --------------------------------------------------------------------- the topic_config kind


def _diff_topic_config(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                       ctx: EntityContext) -> EntityDelta:
    if image.topics.by_name.get(key.name) is None:
        return EntityDelta()  # not in the log: its topic key writes the configs
    znode = snap.topic_configs.get(key.name)
    return EntityDelta(config_diff(TOPIC_RESOURCE, key.name, znode.config if znode else {}, image))


TOPIC_CONFIG_KIND = EntityKind(
    name="topic_config",
    zk=ZK_KINDS["topic_config"],
    from_nothing=_nothing,
    diff=_diff_topic_config,
    snapshot_keys=no_keys,
    image_keys=no_keys,
    records=frozenset({"CONFIG_RECORD:TOPIC"}),
    expected=("configs",),
    parity=("topic_config",),
    snapshot_lines=("config:topics",),
    part_of="topic",
)
