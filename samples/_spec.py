"""What a sample cluster is to hold and what it held: the fixed values, `SampleCase` (each
blocker and warning the pre-flight must find), `SampleSpec` (the recipe) and `SampleManifest`
(what was written, and where)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

BASE_TIME_MS = 1_700_000_000_000
"""Fixed clock for every timestamp written, so a seed always gives the same bytes."""
CONTROLLER_EPOCH = 3
"""`/controller_epoch` value (and zkVersion): three ZK controller elections happened."""
KRAFT_CONTROLLER_ID = 3000
UNREGISTERED_BROKER = 999
EDGE_TOPIC = "edge-cases"
NO_ID_TOPIC = "legacy-no-topic-id"
DELETING_TOPIC = "being-deleted"
SCRAM_ITERATIONS = 4096

TOP_LEVEL_PATHS: tuple[str, ...] = (
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/config/changes",
    "/admin/delete_topics",
    "/brokers/seqid",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
)
"""What `KafkaZkClient.createTopLevelPaths()` creates on every broker start (parents implied)."""

ACL_RESOURCE_TYPES = ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User")


class SampleCase:
    """Names of the special cases a manifest records paths for (keys of `SampleManifest.paths`)."""

    # blockers
    TOPIC_WITHOUT_ID = "topic_without_id"
    LOG_DIR_EVENT = "log_dir_event"
    UNREGISTERED_BROKER = "unregistered_broker"
    MIGRATION_ZNODE = "migration_znode"
    KRAFT_CONTROLLER = "kraft_controller"
    # warnings
    PENDING_DELETION = "pending_deletion"
    IN_FLIGHT_REASSIGNMENT = "in_flight_reassignment"
    MISSING_PARTITION_STATE = "missing_partition_state"
    LEADER_NOT_IN_ISR = "leader_not_in_isr"
    ISR_OUTSIDE_REPLICAS = "isr_outside_replicas"
    OFFLINE_PARTITION = "offline_partition"
    RECOVERING_PARTITION = "recovering_partition"
    # entities (not findings)
    BROKERS = "brokers"
    CONTROLLER = "controller"
    CONTROLLER_EPOCH = "controller_epoch"
    CLUSTER_ID = "cluster_id"
    FEATURE = "feature"
    TOPIC_CONFIG = "topic_config"
    BROKER_CONFIG = "broker_config"
    DEFAULT_BROKER_CONFIG = "default_broker_config"
    USER_QUOTA = "user_quota"
    CLIENT_QUOTA = "client_quota"
    USER_CLIENT_QUOTA = "user_client_quota"
    IP_QUOTA = "ip_quota"
    DEFAULT_QUOTA = "default_quota"
    SCRAM = "scram"
    ACL_LITERAL = "acl_literal"
    ACL_PREFIXED = "acl_prefixed"
    DELEGATION_TOKEN = "delegation_token"
    PRODUCER_ID_BLOCK = "producer_id_block"

    BLOCKERS: tuple[str, ...] = (
        TOPIC_WITHOUT_ID, LOG_DIR_EVENT, UNREGISTERED_BROKER, MIGRATION_ZNODE, KRAFT_CONTROLLER,
    )
    WARNINGS: tuple[str, ...] = (
        PENDING_DELETION, IN_FLIGHT_REASSIGNMENT, MISSING_PARTITION_STATE, LEADER_NOT_IN_ISR,
        ISR_OUTSIDE_REPLICAS, OFFLINE_PARTITION, RECOVERING_PARTITION,
    )


@dataclass(frozen=True, slots=True)
class SampleSpec:
    """What to generate. Defaults give a small, healthy cluster (`clean()`).

    Attributes:
        topics: number of ordinary topics (`topic-00000`, ...).
        partitions_per_topic: partitions of each ordinary topic.
        replication_factor: replicas per partition (<= brokers).
        brokers: registered brokers (ids 1..brokers; JSON versions cycle 5, 4, 2).
        seed: derives topic ids, the cluster id, SCRAM salts and which states were updated.
        configs / quotas / scram / acls / delegation_token / producer_id_block: entity kinds
            that are not findings (on in both presets).
        change_notifications: the sequential `config_change_`, `acl_changes_` and
            `token_change_` znodes the admin tools leave behind (not migrated by Kafka).
        topic_without_id ... kraft_controller: blockers the pre-flight must find.
        pending_deletion ... recovering_partition: warnings the pre-flight must report.
        window: multi-op batches in flight at once; batch_ops: operations per multi-op.
    """

    topics: int = 10
    partitions_per_topic: int = 3
    replication_factor: int = 3
    brokers: int = 3
    seed: int = 42
    configs: bool = True
    quotas: bool = True
    scram: bool = True
    acls: bool = True
    delegation_token: bool = True
    producer_id_block: bool = True
    change_notifications: bool = True
    topic_without_id: bool = False
    log_dir_event: bool = False
    unregistered_broker: bool = False
    migration_znode: bool = False
    kraft_controller: bool = False
    pending_deletion: bool = False
    in_flight_reassignment: bool = False
    missing_partition_state: bool = False
    leader_not_in_isr: bool = False
    isr_outside_replicas: bool = False
    offline_partition: bool = False
    recovering_partition: bool = False
    window: int = 64
    batch_ops: int = 250

    @classmethod
    def clean(cls, **overrides: Any) -> SampleSpec:
        """A healthy cluster with every entity kind and no blocker or warning."""
        return replace(cls(), **overrides)

    @classmethod
    def everything(cls, **overrides: Any) -> SampleSpec:
        """Every blocker and every warning case on, plus every entity kind.

        Four brokers by default, so the in-flight reassignment can both add and remove a
        replica (with brokers == replication factor it can only shrink the replica set).
        """
        on: dict[str, Any] = {name: True for name in SampleCase.BLOCKERS + SampleCase.WARNINGS}
        on["brokers"] = 4
        on.update(overrides)
        return replace(cls(), **on)

    def validate(self) -> None:
        """Refuse impossible shapes before anything is written.

        Raises:
            ValueError: a count is out of range (names the field).
        """
        if self.brokers < 1:
            raise ValueError(f"brokers={self.brokers}: need at least 1")
        if self.topics < 0:
            raise ValueError(f"topics={self.topics}: must be >= 0")
        if self.partitions_per_topic < 1:
            raise ValueError(f"partitions_per_topic={self.partitions_per_topic}: need >= 1")
        if not 1 <= self.replication_factor <= self.brokers:
            raise ValueError(
                f"replication_factor={self.replication_factor}: must be 1..brokers "
                f"({self.brokers})"
            )
        if self.window < 1 or self.batch_ops < 1:
            raise ValueError("window and batch_ops must be >= 1")

    @property
    def problems(self) -> tuple[str, ...]:
        """The blocker and warning cases switched on."""
        return tuple(c for c in SampleCase.BLOCKERS + SampleCase.WARNINGS if getattr(self, c))


@dataclass(frozen=True)
class SampleManifest:
    """What was written, so tests can assert "found at path X" and count what was migrated.

    Attributes:
        spec: the spec generated from.
        cluster_id: the 22-char id in `/cluster/id`.
        broker_versions: broker id -> JSON version of its `/brokers/ids/<id>` znode.
        topic_ids: topic name -> topic id (None for the topic written without one).
        paths: `SampleCase` name -> znode paths of that case (only cases that were written).
        state_versions: state znode path -> expected znode version, for states set more than
            once (version > 0); every other written state has version 0.
        ephemeral_paths: znodes owned by the generating session.
        notifications: the sequential change-notification znodes written.
        session_id: that session's id (the znodes' `ephemeralOwner`).
        secrets: SCRAM salts/keys written; they must never appear in any output or report.
        brokers / topics: registered brokers and topics written (pending deletion included).
        partitions_written: partitions listed in topic znodes.
        partitions_to_migrate: the same minus topics pending deletion.
        state_znodes: partition state znodes written.
        znodes: znodes created in total (chroot-relative); ops: ZooKeeper write operations.
        elapsed_s: wall time of the generation.
    """

    spec: SampleSpec
    cluster_id: str
    broker_versions: Mapping[int, int]
    topic_ids: Mapping[str, str | None]
    paths: Mapping[str, tuple[str, ...]]
    state_versions: Mapping[str, int]
    ephemeral_paths: tuple[str, ...]
    notifications: tuple[str, ...]
    session_id: int
    secrets: tuple[str, ...]
    brokers: int
    topics: int
    partitions_written: int
    partitions_to_migrate: int
    state_znodes: int
    znodes: int
    ops: int
    elapsed_s: float

    def path(self, case: str) -> str:
        """The (first) path recorded for `case`.

        Raises:
            KeyError: the case was not generated.
        """
        return self.paths[case][0]
