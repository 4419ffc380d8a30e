"""Znode paths of ZK-mode Kafka's tree, relative to the cluster's chroot.

One place names every path the reader touches, so the reader, the fenced writer and the tests
agree on them. Names are used exactly as stored (still sanitized); nothing here decodes Kafka's
URL-style sanitization. Source: `kafka.zk.ZkData` (`ZkData.scala`).
"""

from __future__ import annotations

__all__ = [
    "ACL_EXTENDED_ROOT",
    "ACL_LITERAL_ROOT",
    "ACL_RESOURCE_TYPES",
    "BROKER_IDS",
    "CLUSTER_ID",
    "CONFIG_ENTITY_TYPES",
    "CONFIG_ROOT",
    "CONTROLLER",
    "CONTROLLER_EPOCH",
    "DELETE_TOPICS",
    "FEATURE",
    "LOG_DIR_EVENTS",
    "MIGRATION",
    "PRODUCER_ID_BLOCK",
    "TOKENS",
    "TOPICS",
    "acl_extended_resource",
    "acl_extended_type",
    "acl_literal_resource",
    "acl_literal_type",
    "broker",
    "child",
    "config",
    "config_entities",
    "delete_topic",
    "log_dir_event",
    "partition_state",
    "partitions",
    "token",
    "topic",
    "user_clients",
]

BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CLUSTER_ID = "/cluster/id"
FEATURE = "/feature"
DELETE_TOPICS = "/admin/delete_topics"
CONFIG_ROOT = "/config"
ACL_LITERAL_ROOT = "/kafka-acl"
ACL_EXTENDED_ROOT = "/kafka-acl-extended"
TOKENS = "/delegation_token/tokens"
PRODUCER_ID_BLOCK = "/latest_producer_id_block"
LOG_DIR_EVENTS = "/log_dir_event_notification"
MIGRATION = "/migration"

CONFIG_ENTITY_TYPES: tuple[str, ...] = ("topics", "brokers", "users", "clients", "ips")
"""Kafka's `ConfigType.ALL` on ZooKeeper (client-metrics is KRaft-only)."""

ACL_RESOURCE_TYPES: frozenset[str] = frozenset(
    {"Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"}
)
"""Resource type names as the ACL stores spell their children (PascalCase)."""


def child(parent: str, name: str) -> str:
    """Join a parent path and one child name (the name must not contain '/')."""
    return f"{parent}/{name}" if parent != "/" else f"/{name}"


def broker(broker_id: int) -> str:
    """`/brokers/ids/<id>`: a broker's ephemeral registration."""
    return f"{BROKER_IDS}/{broker_id}"


def topic(name: str) -> str:
    """`/brokers/topics/<name>`: assignment, reassignment and topic id."""
    return f"{TOPICS}/{name}"


def partitions(topic_name: str) -> str:
    """`/brokers/topics/<name>/partitions`: parent of the partition znodes (no data)."""
    return f"{TOPICS}/{topic_name}/partitions"


def partition_state(topic_name: str, partition: int) -> str:
    """`/brokers/topics/<t>/partitions/<p>/state`: leader, ISR; its version is the epoch."""
    return f"{TOPICS}/{topic_name}/partitions/{partition}/state"


def delete_topic(name: str) -> str:
    """`/admin/delete_topics/<name>`: a topic queued for deletion."""
    return f"{DELETE_TOPICS}/{name}"


def config_entities(entity_type: str) -> str:
    """`/config/<type>`: parent of one kind of dynamic config (topics, brokers, ...)."""
    return f"{CONFIG_ROOT}/{entity_type}"


def config(entity_path: str) -> str:
    """`/config/<entity_path>`, e.g. `config("users/alice%40x/clients/app")`."""
    return f"{CONFIG_ROOT}/{entity_path}"


def user_clients(user: str) -> str:
    """`/config/users/<user>/clients`: parent of a user's per-client quotas."""
    return f"{CONFIG_ROOT}/users/{user}/clients"


def acl_literal_type(resource_type: str) -> str:
    """`/kafka-acl/<ResourceType>`."""
    return f"{ACL_LITERAL_ROOT}/{resource_type}"


def acl_literal_resource(resource_type: str, name: str) -> str:
    """`/kafka-acl/<ResourceType>/<name>`: LITERAL ACLs of one resource."""
    return f"{ACL_LITERAL_ROOT}/{resource_type}/{name}"


def acl_extended_type(pattern: str, resource_type: str) -> str:
    """`/kafka-acl-extended/<pattern lowercase>/<ResourceType>`."""
    return f"{ACL_EXTENDED_ROOT}/{pattern}/{resource_type}"


def acl_extended_resource(pattern: str, resource_type: str, name: str) -> str:
    """`/kafka-acl-extended/<pattern lowercase>/<ResourceType>/<name>`."""
    return f"{ACL_EXTENDED_ROOT}/{pattern}/{resource_type}/{name}"


def token(token_id: str) -> str:
    """`/delegation_token/tokens/<tokenId>`."""
    return f"{TOKENS}/{token_id}"


def log_dir_event(name: str) -> str:
    """`/log_dir_event_notification/<log_dir_event_NNNNNNNNNN>`."""
    return f"{LOG_DIR_EVENTS}/{name}"
