"""Typed model of the Kafka tree in ZooKeeper: what `read_cluster` returns.

Every entity keeps the `ZnodeStat` of the znode it was decoded from, because the migration needs
ZooKeeper's own numbers: a broker's epoch is its znode's czxid, a partition's epoch is its state
znode's version, and fencing compares versions. Models are frozen values; mappings inside them are
plain dicts that callers must treat as read-only (they are built once by the reader).

Names follow Kafka's ZooKeeper JSON (Kafka's `ZkData.scala`), in snake_case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "AclEntry",
    "AclResource",
    "Broker",
    "BrokerEndpoint",
    "ClusterIdZnode",
    "ClusterSnapshot",
    "ConfigZnode",
    "ControllerEpochZnode",
    "ControllerZnode",
    "DelegationToken",
    "FeatureZnode",
    "LogDirEvent",
    "MigrationZnode",
    "PartitionState",
    "ProducerIdBlock",
    "Topic",
    "ZnodeStat",
    "migrating_topic",
    "new_partition_state",
    "new_stat",
]


@dataclass(frozen=True, slots=True)
class ZnodeStat:
    """The parts of ZooKeeper's `Stat` the migration uses.

    Attributes:
        czxid: zxid of the create; a ZK-mode broker's epoch.
        mzxid: zxid of the last data change.
        version: data version; a partition state's partition epoch, and the fencing token.
        ctime_ms: creation time (ms since the epoch).
        mtime_ms: last modification time (ms); used as the deterministic record timestamp.
        ephemeral_owner: session id owning an ephemeral znode, 0 for persistent ones.
        num_children: number of children when read.
    """

    czxid: int
    mzxid: int
    version: int
    ctime_ms: int
    mtime_ms: int
    ephemeral_owner: int = 0
    num_children: int = 0


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Any, ...]:
    """The slot descriptors' setters of `cls`, checked to be exactly its fields, in order."""
    if tuple(f.name for f in fields(cls)) != names:
        raise AssertionError(f"{cls.__name__}: fast constructor out of date with its fields")
    return tuple(getattr(cls, name).__set__ for name in names)


_new = object.__new__
(_stat_czxid, _stat_mzxid, _stat_version, _stat_ctime, _stat_mtime, _stat_owner,
 _stat_children) = _slot_setters(ZnodeStat, ("czxid", "mzxid", "version", "ctime_ms", "mtime_ms",
                                             "ephemeral_owner", "num_children"))


def new_stat(czxid: int, mzxid: int, version: int, ctime_ms: int, mtime_ms: int,
             ephemeral_owner: int, num_children: int) -> ZnodeStat:
    """`ZnodeStat(...)` for the reader's hot path, all fields positional.

    The same value as the dataclass constructor, built about twice as fast: a frozen dataclass's
    generated `__init__` sets each field through `object.__setattr__`, and a 100,000-partition
    read builds one stat per znode. This sets the slots directly (no `__post_init__` exists to
    skip). A unit test checks it against the constructor.
    """
    stat = _new(ZnodeStat)
    _stat_czxid(stat, czxid)
    _stat_mzxid(stat, mzxid)
    _stat_version(stat, version)
    _stat_ctime(stat, ctime_ms)
    _stat_mtime(stat, mtime_ms)
    _stat_owner(stat, ephemeral_owner)
    _stat_children(stat, num_children)
    return stat


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """One advertised listener of a ZK-mode broker (`LISTENER://host:port`)."""

    listener: str
    host: str
    port: int
    security_protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL


@dataclass(frozen=True, slots=True)
class Broker:
    """`/brokers/ids/<id>` (JSON versions 1-5)."""

    broker_id: int
    json_version: int
    endpoints: tuple[BrokerEndpoint, ...]
    rack: str | None
    jmx_port: int
    timestamp_ms: int
    features: Mapping[str, tuple[int, int]]  # name -> (min_version, max_version), v5 only
    stat: ZnodeStat

    @property
    def epoch(self) -> int:
        """ZK-mode broker epoch: the czxid of the registration znode."""
        return self.stat.czxid


@dataclass(frozen=True, slots=True)
class ControllerZnode:
    """`/controller`: ephemeral for a ZK controller, persistent for a KRaft one."""

    broker_id: int
    json_version: int
    timestamp_ms: int
    kraft_controller_epoch: int  # -1 for a ZK controller (3.4+), absent (-1) before
    stat: ZnodeStat

    @property
    def is_kraft(self) -> bool:
        """True when a KRaft controller already claimed ZooKeeper (an earlier migration)."""
        return self.kraft_controller_epoch >= 0 or self.stat.ephemeral_owner == 0


@dataclass(frozen=True, slots=True)
class ControllerEpochZnode:
    """`/controller_epoch`: decimal text; its znode version is the fencing token."""

    epoch: int
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class ClusterIdZnode:
    """`/cluster/id`: `{"version":"1","id":"<22-char base64>"}`."""

    cluster_id: str
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class FeatureZnode:
    """`/feature`: finalized features; version 1 has min+max, version 2 only max."""

    json_version: int
    status: int
    features: Mapping[str, tuple[int | None, int]]  # name -> (min_version_level, max_version_level)
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class Topic:
    """`/brokers/topics/<name>`: the assignment, reassignment and topic id.

    Attributes:
        topic_id: Kafka's 22-character URL-safe base64 Uuid text, or None when the znode has none
            (a blocker: Kafka's migration aborts on it).
        assignment: partition -> replicas in order.
        adding_replicas / removing_replicas: only partitions under reassignment appear.
    """

    name: str
    json_version: int
    topic_id: str | None
    assignment: Mapping[int, tuple[int, ...]]
    adding_replicas: Mapping[int, tuple[int, ...]]
    removing_replicas: Mapping[int, tuple[int, ...]]
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class PartitionState:
    """`/brokers/topics/<t>/partitions/<p>/state`.

    The partition epoch is not in the JSON: it is `stat.version`.
    """

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    controller_epoch: int
    isr: tuple[int, ...]
    leader_recovery_state: int  # 0 RECOVERED, 1 RECOVERING
    stat: ZnodeStat

    @property
    def partition_epoch(self) -> int:
        """The partition epoch, which ZK-mode Kafka keeps as the state znode's version."""
        return self.stat.version


(_ps_topic, _ps_partition, _ps_leader, _ps_leader_epoch, _ps_controller_epoch, _ps_isr,
 _ps_recovery, _ps_stat) = _slot_setters(
    PartitionState, ("topic", "partition", "leader", "leader_epoch", "controller_epoch", "isr",
                     "leader_recovery_state", "stat"))


def new_partition_state(topic: str, partition: int, leader: int, leader_epoch: int,
                        controller_epoch: int, isr: tuple[int, ...], leader_recovery_state: int,
                        stat: ZnodeStat) -> PartitionState:
    """`PartitionState(...)` for the reader's hot path (one per partition): see `new_stat`."""
    state = _new(PartitionState)
    _ps_topic(state, topic)
    _ps_partition(state, partition)
    _ps_leader(state, leader)
    _ps_leader_epoch(state, leader_epoch)
    _ps_controller_epoch(state, controller_epoch)
    _ps_isr(state, isr)
    _ps_recovery(state, leader_recovery_state)
    _ps_stat(state, stat)
    return state


@dataclass(frozen=True, slots=True)
class ConfigZnode:
    """`/config/<entity_path>`: `{"version":1,"config":{...}}`.

    Attributes:
        entity_path: path below `/config`, still sanitized as stored, e.g. `topics/foo`,
            `brokers/<default>`, `users/alice%40example.com/clients/app`, `ips/10.0.0.1`.
        config: keys to string values. May hold secrets (SCRAM, encrypted passwords): never print.
    """

    entity_path: str
    config: Mapping[str, str]
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class AclEntry:
    """One ACL of a resource znode, names as stored (PascalCase enums)."""

    principal: str
    permission_type: str  # Allow, Deny
    operation: str  # Read, Write, ...
    host: str


@dataclass(frozen=True, slots=True)
class AclResource:
    """`/kafka-acl/<Type>/<name>` (LITERAL) or `/kafka-acl-extended/<pattern>/<Type>/<name>`."""

    pattern_type: str  # LITERAL, PREFIXED
    resource_type: str  # Topic, Group, Cluster, TransactionalId, DelegationToken, User
    name: str
    acls: tuple[AclEntry, ...]
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class DelegationToken:
    """`/delegation_token/tokens/<tokenId>` (the HMAC is not stored in ZooKeeper)."""

    token_id: str
    json_version: int
    owner: str  # sanitized principal as stored, e.g. User%3Aalice
    requester: str | None
    renewers: tuple[str, ...]
    issue_timestamp_ms: int
    max_timestamp_ms: int
    expiry_timestamp_ms: int
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    """`/latest_producer_id_block`: the last block handed out (block_start..block_end)."""

    json_version: int
    broker_id: int
    block_start: int
    block_end: int
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class LogDirEvent:
    """`/log_dir_event_notification/log_dir_event_<seq>`: an unprocessed log-dir failure."""

    name: str
    broker_id: int
    event: int  # 1 = LogDirFailure
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class MigrationZnode:
    """`/migration`: the KRaft migration state (only version 0 exists)."""

    kraft_controller_id: int
    kraft_controller_epoch: int
    kraft_metadata_offset: int
    kraft_metadata_epoch: int
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Everything the migration reads from one Kafka cluster's ZooKeeper tree.

    Attributes:
        chroot: the chroot the tree was read under ("" for none).
        partition_states: (topic, partition) -> state; a missing key means the state znode is
            missing (Kafka's default rule applies), not that the read failed.
        pending_deletions: children of `/admin/delete_topics`.
        *_configs: keyed by the (sanitized) entity name as stored; user-client quotas by
            (user, client).
        last_zxid: highest mzxid/czxid seen in the read, for change tracking.
    """

    chroot: str = ""
    cluster_id: ClusterIdZnode | None = None
    controller: ControllerZnode | None = None
    controller_epoch: ControllerEpochZnode | None = None
    feature: FeatureZnode | None = None
    brokers: Mapping[int, Broker] = field(default_factory=dict)
    topics: Mapping[str, Topic] = field(default_factory=dict)
    partition_states: Mapping[tuple[str, int], PartitionState] = field(default_factory=dict)
    pending_deletions: frozenset[str] = frozenset()
    topic_configs: Mapping[str, ConfigZnode] = field(default_factory=dict)
    broker_configs: Mapping[str, ConfigZnode] = field(default_factory=dict)
    user_configs: Mapping[str, ConfigZnode] = field(default_factory=dict)
    client_configs: Mapping[str, ConfigZnode] = field(default_factory=dict)
    user_client_configs: Mapping[tuple[str, str], ConfigZnode] = field(default_factory=dict)
    ip_configs: Mapping[str, ConfigZnode] = field(default_factory=dict)
    acls: tuple[AclResource, ...] = ()
    delegation_tokens: Mapping[str, DelegationToken] = field(default_factory=dict)
    producer_id_block: ProducerIdBlock | None = None
    log_dir_events: tuple[LogDirEvent, ...] = ()
    migration: MigrationZnode | None = None
    last_zxid: int = 0


def migrating_topic(snapshot: ClusterSnapshot, name: str) -> bool:
    """True when topic `name` is one the migration writes: the one rule, used everywhere.

    Kafka 3.9's migration skips topics queued under `/admin/delete_topics` (KAFKA-15605) and
    aborts on a topic znode without `topic_id` (`topicIdOpt.get`); zk2kraft leaves such a
    topic out and pre-flight reports it as the `TOPIC_WITHOUT_ID` blocker. Translation, the
    Spark pipeline, pre-flight's counts and verify's expected image all ask this function.

    Args:
        snapshot: a whole or partial snapshot.
        name: a topic name.
    """
    topic = snapshot.topics.get(name)
    return (topic is not None and topic.topic_id is not None
            and name not in snapshot.pending_deletions)
