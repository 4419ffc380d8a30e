"""zkreader: everything zk2kraft knows about ZooKeeper and Kafka's tree in it.

Public API only; implementation modules are `_`-prefixed.
"""

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
)
from zkreader._options import ConnectOptions
from zkreader._sample import SampleCase, SampleManifest, SampleSpec, generate_sample_cluster
from zkreader.errors import (
    BadConnectStringError,
    ZkReaderError,
    ZkUnreachableError,
    ZnodeFormatError,
)

__all__ = [
    "AclEntry",
    "AclResource",
    "BadConnectStringError",
    "Broker",
    "BrokerEndpoint",
    "ClusterIdZnode",
    "ClusterSnapshot",
    "ConfigZnode",
    "ConnectOptions",
    "ControllerEpochZnode",
    "ControllerZnode",
    "DelegationToken",
    "FeatureZnode",
    "LogDirEvent",
    "MigrationZnode",
    "PartitionState",
    "ProducerIdBlock",
    "SampleCase",
    "SampleManifest",
    "SampleSpec",
    "Topic",
    "ZkReaderError",
    "ZkUnreachableError",
    "ZnodeFormatError",
    "ZnodeStat",
    "generate_sample_cluster",
]
