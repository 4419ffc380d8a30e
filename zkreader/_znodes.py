"""Strict decoders, one small frozen type per znode kind of ZK-mode Kafka's tree.

Shaped like kazoo's protocol types: each znode kind is a frozen value naming one znode (its
`path`) with a `decode(data, stat)` that returns the model from `zkreader._model`. Decoding is
strict on purpose (design I8): a migration that guesses at a malformed znode writes wrong
metadata into the quorum, so anything Kafka would not have written there — bad JSON, non-UTF-8,
wrong types, missing required keys, unknown versions, negative ids — raises `ZnodeFormatError`
naming the path and the problem, and the reader aborts before anything is written.

Formats: Kafka's `ZkData.scala` (`kafka.zk`), the JSON Kafka writes through `kafka.utils.Json`.

This module maps a path to its kind (`kind_for_path`) and is the door to the decoders: the
cluster-wide kinds live in `zkreader._znode_cluster`, the entity kinds (topics, partitions,
configs, ACLs, tokens) in `zkreader._znode_entities`, and what they read with (Kafka's name sets,
field ranges, the strict JSON getters) in `zkreader._znode_fields`.
"""

from __future__ import annotations

from zkreader import _paths
from zkreader._znode_cluster import (
    BrokerZnode,
    ClusterIdZnodeKind,
    ControllerEpochZnodeKind,
    ControllerZnodeKind,
    FeatureZnodeKind,
    LogDirEventZnode,
    MigrationZnodeKind,
    ProducerIdBlockZnode,
)
from zkreader._znode_entities import (
    AclZnode,
    ConfigZnodeKind,
    PartitionStateZnode,
    TokenZnode,
    TopicZnode,
)
from zkreader._znode_fields import (
    ACL_OPERATIONS,
    ACL_PATTERNS,
    ACL_PERMISSIONS,
    INT32_MAX,
    SECURITY_PROTOCOLS,
    decode_uuid,
    topic_name_problem,
)
from zkreader.errors import ZnodeFormatError

__all__ = [
    "ACL_OPERATIONS",
    "ACL_PATTERNS",
    "ACL_PERMISSIONS",
    "INT32_MAX",
    "SECURITY_PROTOCOLS",
    "AclZnode",
    "BrokerZnode",
    "ClusterIdZnodeKind",
    "ConfigZnodeKind",
    "ControllerEpochZnodeKind",
    "ControllerZnodeKind",
    "FeatureZnodeKind",
    "LogDirEventZnode",
    "MigrationZnodeKind",
    "PartitionStateZnode",
    "ProducerIdBlockZnode",
    "TokenZnode",
    "TopicZnode",
    "decode_uuid",
    "kind_for_path",
    "topic_name_problem",
]


ZnodeKind = (BrokerZnode | TopicZnode | PartitionStateZnode | ControllerZnodeKind
             | ControllerEpochZnodeKind | ClusterIdZnodeKind | FeatureZnodeKind | ConfigZnodeKind
             | AclZnode | TokenZnode | ProducerIdBlockZnode | LogDirEventZnode | MigrationZnodeKind)

_SINGLETONS: dict[str, ZnodeKind] = {
    _paths.CONTROLLER: ControllerZnodeKind(),
    _paths.CONTROLLER_EPOCH: ControllerEpochZnodeKind(),
    _paths.CLUSTER_ID: ClusterIdZnodeKind(),
    _paths.FEATURE: FeatureZnodeKind(),
    _paths.PRODUCER_ID_BLOCK: ProducerIdBlockZnode(),
    _paths.MIGRATION: MigrationZnodeKind(),
}


def kind_for_path(path: str) -> ZnodeKind | None:
    """The decoder for a metadata znode path (chroot-relative), or None if it holds no metadata.

    Used by the reader's tests and by change-feed consumers that re-read a notified path.

    Raises:
        ZnodeFormatError: the path is a broker registration or partition whose name is not an id.
    """
    if path in _SINGLETONS:
        return _SINGLETONS[path]
    parts = path.split("/")[1:]
    n = len(parts)
    if n == 3 and parts[:2] == ["brokers", "ids"]:
        if not parts[2].isascii() or not parts[2].isdigit() or int(parts[2]) > INT32_MAX:
            raise ZnodeFormatError(path, f"broker registration name is not a broker id in "
                                   f"0..{INT32_MAX}")
        return BrokerZnode(int(parts[2]))
    if n == 3 and parts[:2] == ["brokers", "topics"]:
        return TopicZnode(parts[2])
    if n == 6 and parts[:2] == ["brokers", "topics"] and parts[3] == "partitions" \
            and parts[5] == "state":
        if not parts[4].isascii() or not parts[4].isdigit() or int(parts[4]) > INT32_MAX:
            raise ZnodeFormatError(path, f"partition name is not a partition id in 0..{INT32_MAX}")
        return PartitionStateZnode(parts[2], int(parts[4]))
    if parts[0] == "config" and ((n == 3 and parts[1] in _paths.CONFIG_ENTITY_TYPES)
                                 or (n == 5 and parts[1] == "users" and parts[3] == "clients")):
        return ConfigZnodeKind("/".join(parts[1:]))
    if n == 3 and parts[0] == "kafka-acl":
        return AclZnode("LITERAL", parts[1], parts[2])
    if n == 4 and parts[0] == "kafka-acl-extended" and parts[1] in ACL_PATTERNS:
        return AclZnode(ACL_PATTERNS[parts[1]], parts[2], parts[3])
    if n == 3 and parts[:2] == ["delegation_token", "tokens"]:
        return TokenZnode(parts[2])
    if n == 2 and parts[0] == "log_dir_event_notification" and parts[1].startswith(
            "log_dir_event_"):
        return LogDirEventZnode(parts[1])
    return None
