"""The metadata image: an immutable value holding everything a KRaft log says about a cluster.

Shaped like Kafka's `org.apache.kafka.image` package, with Kafka's names: `MetadataImage` bundles
one frozen image per entity kind (`ClusterImage` for broker and controller registrations,
`TopicsImage`, `ConfigsImage`, ...), each with an `EMPTY` constant. Images are values
(frozen, slotted, compared by value) so parity can compare an image replayed from a voter log
with one built straight from ZooKeeper. Deltas (`verify.delta`) produce new images; nothing here
mutates. The online mirror holds the image of what the log holds and diffs ZooKeeper against it
(`migrate.translate.delta`), so this is public API shared by `verify` and `migrate`.

Maps inside images are `FrozenMap`s: read-only, picklable (the Spark parity job ships images to
executors) and cheap to compare. `MetadataImage.records()` is the inverse of replay (Kafka's
`MetadataImage.write`), used to prove replay round-trips.

This module is the bundle and the public face: the per-kind images live in `verify._image_cluster`
(features, brokers, controllers), `verify._image_topics` and `verify._image_entities` (configs,
quotas, SCRAM, ACLs, producer ids, tokens), `FrozenMap` in `verify._frozen_map`; import them from
here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from verify._frozen_map import FrozenMap
from verify._image_cluster import (
    MIGRATING_DIRECTORY,
    BrokerEndpoint,
    BrokerRegistration,
    ClusterImage,
    ControllerRegistration,
    FeaturesImage,
)
from verify._image_entities import (
    AclsImage,
    ClientQuotasImage,
    ConfigResource,
    ConfigsImage,
    DelegationTokenData,
    DelegationTokensImage,
    ProducerIdsImage,
    QuotaEntity,
    ScramCredential,
    ScramImage,
    StandardAcl,
)
from verify._image_topics import PartitionImage, TopicImage, TopicsImage
from writers import MetadataRecord

__all__ = [
    "MIGRATING_DIRECTORY",
    "AclsImage",
    "BrokerEndpoint",
    "BrokerRegistration",
    "ClusterImage",
    "ClientQuotasImage",
    "MetadataImage",
    "ConfigResource",
    "ConfigsImage",
    "ControllerRegistration",
    "DelegationTokenData",
    "DelegationTokensImage",
    "FeaturesImage",
    "FrozenMap",
    "PartitionImage",
    "ProducerIdsImage",
    "QuotaEntity",
    "ScramCredential",
    "ScramImage",
    "StandardAcl",
    "TopicImage",
    "TopicsImage",
]


@dataclass(frozen=True, slots=True)
class MetadataImage:
    """Everything a metadata log says about the cluster (Kafka's `MetadataImage`).

    Attributes:
        zk_migration_state: `ZkMigrationStateRecord` value (0 NONE, 1 MIGRATION,
            2 PRE_MIGRATION, 3 POST_MIGRATION).
    """

    features: FeaturesImage
    cluster: ClusterImage
    topics: TopicsImage
    configs: ConfigsImage
    client_quotas: ClientQuotasImage
    scram: ScramImage
    acls: AclsImage
    producer_ids: ProducerIdsImage
    delegation_tokens: DelegationTokensImage
    zk_migration_state: int = 0

    EMPTY: ClassVar[MetadataImage]

    def records(self, *, broker_version: int = 2) -> list[MetadataRecord]:
        """Records that replayed onto `EMPTY` rebuild this image (Kafka's `MetadataImage.write`).

        Order follows invariant I2: features (metadata.version first), brokers, then each topic
        followed by its configs, then the rest.
        """
        out = self.features.records() + self.cluster.records(broker_version)
        topic_configs = {n: c for (t, n), c in self.configs.resources.items() if t == 2}
        for name in sorted(self.topics.by_name):
            out += self.topics.by_name[name].records()
            if name in topic_configs:
                out += ConfigsImage(FrozenMap({(2, name): topic_configs[name]})).records()
        others = {k: v for k, v in self.configs.resources.items()
                  if k[0] != 2 or k[1] not in self.topics.by_name}
        out += ConfigsImage(FrozenMap(others)).records()
        out += self.client_quotas.records() + self.scram.records()
        out += self.producer_ids.records() + self.acls.records()
        out += self.delegation_tokens.records()
        if self.zk_migration_state:
            out.append(MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0,
                                      {"zkMigrationState": self.zk_migration_state}))
        return out


MetadataImage.EMPTY = MetadataImage(
    FeaturesImage.EMPTY,
    ClusterImage.EMPTY,
    TopicsImage.EMPTY,
    ConfigsImage.EMPTY,
    ClientQuotasImage.EMPTY,
    ScramImage.EMPTY,
    AclsImage.EMPTY,
    ProducerIdsImage.EMPTY,
    DelegationTokensImage.EMPTY,
)
