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
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate.errors import TranslationError
from migrate.translate.configs import config_records
from writers import (
    TOPIC_RESOURCE,
    FieldValue,
    MetadataRecord,
    MetadataVersion,
    broker_directory_id,
    record_version,
)
from zkreader import ConfigZnode, PartitionState, Topic

__all__ = ["partition_record", "topic_records"]

_PARTITION_RECORD_VERSION = 0
_NO_LEADER = -1


def partition_record(topic: Topic, partition: int, state: PartitionState | None, *,
                     mv: MetadataVersion | None = None,
                     dir_cluster: str | None = None, offline: bool = False) -> MetadataRecord:
    """Return the `PartitionRecord` of one partition.

    Args:
        topic: the topic znode (replicas and reassignment come from it); must have a topic id.
        partition: the partition id.
        state: its decoded state znode, or None when the znode is missing.
        mv: the metadata.version written (needed with `dir_cluster` only).
        dir_cluster: offline only: the cluster id whose prepared broker log dirs the replicas'
            directories name (module docstring); None names no directory.
        offline: every broker is stopped: leader -1 (module docstring).

    Returns:
        A version-0 `PartitionRecord`, or with `dir_cluster` at >= 3.7-IV2 one of the level's
        version naming each replica's directory.
    """
    replicas = list(topic.assignment[partition])
    if state is None:
        isr = list(replicas)
        leader = replicas[0] if replicas else _NO_LEADER
        leader_epoch = 0
        partition_epoch = 0
        recovery = 0
    else:
        isr = list(state.isr)
        leader = state.leader
        leader_epoch = state.leader_epoch
        partition_epoch = state.partition_epoch
        recovery = state.leader_recovery_state
    if offline:
        leader = _NO_LEADER
    data: dict[str, FieldValue] = {
        "partitionId": partition,
        "topicId": topic.topic_id,
        "replicas": list(replicas),
        "isr": list(isr),
        "removingReplicas": list(topic.removing_replicas.get(partition, ())),
        "addingReplicas": list(topic.adding_replicas.get(partition, ())),
        "leader": leader,
        "leaderEpoch": leader_epoch,
        "partitionEpoch": partition_epoch,
        "leaderRecoveryState": recovery,
    }
    if dir_cluster is not None and mv is not None and mv.supports_directories:
        data["directories"] = [broker_directory_id(dir_cluster, b) for b in replicas]
        return MetadataRecord("PARTITION_RECORD", record_version("PARTITION_RECORD", mv), data)
    return MetadataRecord("PARTITION_RECORD", _PARTITION_RECORD_VERSION, data)


def topic_records(
    topic: Topic,
    states: Mapping[int, PartitionState | None],
    config: ConfigZnode | None,
    mv: MetadataVersion,
    dir_cluster: str | None = None,
    offline: bool = False,
) -> list[MetadataRecord]:
    """Return every record of one topic, in log order.

    Args:
        topic: the topic znode.
        states: partition -> its state znode (None or absent = missing znode).
        config: `/config/topics/<name>`, or None when the topic has no overrides.
        mv: the metadata.version being written (every record here is version 0 at all of them,
            but the offline `PartitionRecord` with directories).
        dir_cluster: offline only, see `partition_record`.
        offline: every broker is stopped, see `partition_record`.

    Returns:
        `[TopicRecord, ConfigRecord..., PartitionRecord...]`, configs by key, partitions by id.

    Raises:
        TranslationError: the topic znode has no topic id (Kafka's migration aborts there too;
            `translate` reports it as the `TOPIC_WITHOUT_ID` blocker instead of calling this).
    """
    if topic.topic_id is None:
        raise TranslationError(
            f"/brokers/topics/{topic.name}: topic {topic.name!r} has no topic_id"
        )
    records = [MetadataRecord("TOPIC_RECORD", 0, {"name": topic.name, "topicId": topic.topic_id})]
    if config is not None:
        records += config_records(TOPIC_RESOURCE, topic.name, config.config)
    for partition in sorted(topic.assignment):
        records.append(partition_record(topic, partition, states.get(partition), mv=mv,
                                        dir_cluster=dir_cluster, offline=offline))
    return records
