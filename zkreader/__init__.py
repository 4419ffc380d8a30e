"""zkreader: everything zk2kraft knows about ZooKeeper and Kafka's tree in it.

Public API only; implementation modules are `_`-prefixed.
"""

from zkreader._entities import (
    ENTITY_KINDS,
    EntityKey,
    changed_entities,
    entity_key_for_path,
    read_entities,
)
from zkreader._fence import (
    MIGRATION_ABSENT,
    ControllerMovedError,
    FenceState,
    FenceToken,
    MigrationMovedError,
    MigrationState,
    claim_json,
    claim_kraft_epoch,
    fence_zk_controller,
    migration_json,
    read_fence_state,
    release_claim,
    write_migration_state,
)
from zkreader._gc import paused_gc
from zkreader._log_redaction import PayloadRedactingFilter, install_kazoo_redaction
from zkreader._model import (
    AclEntry,
    AclResource,
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ClusterSnapshot,
    ConfigZnode,
    ControllerEpochZnode,
    ControllerZnode,
    DelegationToken,
    FeatureZnode,
    LogDirEvent,
    MigrationZnode,
    PartitionState,
    ProducerIdBlock,
    Topic,
    ZnodeStat,
    migrating_topic,
)
from zkreader._options import ConnectOptions, ParsedConnect, parse_connect
from zkreader._pipeline import ReadPipeline, ReadRequest, ReadResult
from zkreader._reader import ProgressCallback, ReadStats, read_cluster
from zkreader._sample import SampleCase, SampleManifest, SampleSpec, generate_sample_cluster
from zkreader._session import ZkSession, open_session, session_for_client
from zkreader._watch import ChangeEvent, ChangeFeed
from zkreader._znodes import kind_for_path
from zkreader.errors import (
    BadConnectStringError,
    ZkReaderError,
    ZkSessionExpiredError,
    ZkUnreachableError,
    ZnodeFormatError,
)

__all__ = [
    "MIGRATION_ABSENT",
    "ControllerMovedError",
    "MigrationMovedError",
    "FenceState",
    "FenceToken",
    "MigrationState",
    "claim_json",
    "fence_zk_controller",
    "migration_json",
    "read_fence_state",
    "claim_kraft_epoch",
    "release_claim",
    "write_migration_state",
    "ENTITY_KINDS",
    "EntityKey",
    "changed_entities",
    "entity_key_for_path",
    "read_entities",
    "AclEntry",
    "AclResource",
    "BadConnectStringError",
    "Broker",
    "BrokerEndpoint",
    "ChangeEvent",
    "ChangeFeed",
    "ClusterIdZnode",
    "ClusterSnapshot",
    "ConfigZnode",
    "ConnectOptions",
    "ParsedConnect",
    "ControllerEpochZnode",
    "ControllerZnode",
    "DelegationToken",
    "FeatureZnode",
    "LogDirEvent",
    "MigrationZnode",
    "PartitionState",
    "PayloadRedactingFilter",
    "ProducerIdBlock",
    "ProgressCallback",
    "ReadPipeline",
    "ReadRequest",
    "ReadResult",
    "ReadStats",
    "SampleCase",
    "SampleManifest",
    "SampleSpec",
    "Topic",
    "ZkReaderError",
    "ZkSession",
    "ZkSessionExpiredError",
    "ZkUnreachableError",
    "ZnodeFormatError",
    "ZnodeStat",
    "generate_sample_cluster",
    "install_kazoo_redaction",
    "kind_for_path",
    "migrating_topic",
    "open_session",
    "paused_gc",
    "parse_connect",
    "read_cluster",
    "session_for_client",
]
