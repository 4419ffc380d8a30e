"""The cluster's images: finalized features and broker and controller registrations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from verify._frozen_map import FrozenMap
from writers import MetadataRecord, uuid_to_bytes

MIGRATING_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA"
"""`DirectoryId.MIGRATING` (Uuid 0/0): the directory of every replica of a v0 PartitionRecord."""


def _name_based_uuid(text: str) -> bool:
    """True when a Kafka Uuid text is a version-5 (name-based, RFC 4122 variant) UUID, the kind
    zk2kraft derives; False for anything else, malformed text included."""
    try:
        raw = uuid_to_bytes(text)
    except ValueError:
        return False
    return raw[6] >> 4 == 5 and raw[8] >> 6 == 0b10


# ----------------------------------------------------------------------------------- features


@dataclass(frozen=True, slots=True)
class FeaturesImage:
    """Finalized feature levels by name (`FeatureLevelRecord`); `metadata.version` among them."""

    levels: FrozenMap[str, int]

    EMPTY: ClassVar[FeaturesImage]

    @property
    def metadata_version(self) -> int | None:
        """The metadata.version level, None when the log never set it."""
        return self.levels.get("metadata.version")

    def records(self) -> list[MetadataRecord]:
        """FeatureLevelRecords, metadata.version first (Kafka writes it first, I2)."""
        names = sorted(self.levels, key=lambda n: (n != "metadata.version", n))
        return [
            MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": n, "featureLevel": self.levels[n]})
            for n in names
        ]


# ----------------------------------------------------------------------------- brokers (cluster)


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """One listener of a registered broker or controller (`EndPoints` element)."""

    name: str
    host: str
    port: int
    security_protocol: int  # PLAINTEXT 0, SSL 1, SASL_PLAINTEXT 2, SASL_SSL 3

    def to_data(self) -> dict[str, int | str]:
        """The record JSON form of this endpoint."""
        return {
            "name": self.name,
            "host": self.host,
            "port": self.port,
            "securityProtocol": self.security_protocol,
        }


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """A broker as `RegisterBrokerRecord` and its later changes describe it."""

    broker_id: int
    epoch: int
    incarnation_id: str
    endpoints: tuple[BrokerEndpoint, ...]
    features: FrozenMap[str, tuple[int, int]]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    log_dirs: tuple[str, ...] = ()

    @property
    def registered_by_broker(self) -> bool:
        """Registered by the broker itself (with the stand-in or any KRaft controller), not
        copied from ZooKeeper's `/brokers/ids` by zk2kraft. The one rule the mirror
        (`migrate.translate.delta`, keeps such a registration) and parity (`verify`, leaves its
        epoch
        out) both use.

        Decided by the incarnation id, the only mark a registration carries on its own: a
        broker draws its incarnation with Kafka's `Uuid.randomUuid()` (a random, version-4
        UUID), while every id zk2kraft writes comes from `derived_uuid`, a name-based version-5
        UUID. That holds wherever the image comes from: a log replayed from disk, from a
        snapshot, or the image the online mirror keeps with `apply_records` (none of which
        knows a record's offset), and for a broker that registered again with the same
        incarnation, whose epoch stays its first record's offset. The epoch cannot decide it:
        a self-registration's epoch is the offset of a RegisterBrokerRecord, a copy's is the
        znode's czxid, and telling them apart needs offsets the mirror never has.
        """
        return not _name_based_uuid(self.incarnation_id)

    def record(self, version: int = 2) -> MetadataRecord:
        """The `RegisterBrokerRecord` that recreates this registration."""
        data: dict[str, Any] = {
            "brokerId": self.broker_id,
            "incarnationId": self.incarnation_id,
            "brokerEpoch": self.epoch,
            "endPoints": [e.to_data() for e in self.endpoints],
            "features": [
                {"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi}
                for n, (lo, hi) in sorted(self.features.items())
            ],
            "rack": self.rack,
            "fenced": self.fenced,
        }
        if version >= 1:
            data["inControlledShutdown"] = self.in_controlled_shutdown
        if version >= 2:
            data["isMigratingZkBroker"] = self.is_migrating_zk_broker
        if version >= 3:
            data["logDirs"] = list(self.log_dirs)
        return MetadataRecord("REGISTER_BROKER_RECORD", version, data)


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """A KRaft controller as `RegisterControllerRecord` describes it (KIP-919)."""

    controller_id: int
    incarnation_id: str
    zk_migration_ready: bool
    endpoints: tuple[BrokerEndpoint, ...]
    features: FrozenMap[str, tuple[int, int]]

    def record(self) -> MetadataRecord:
        """The `RegisterControllerRecord` that recreates this registration."""
        data: dict[str, Any] = {
            "controllerId": self.controller_id,
            "incarnationId": self.incarnation_id,
            "zkMigrationReady": self.zk_migration_ready,
            "endPoints": [e.to_data() for e in self.endpoints],
            "features": [
                {"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi}
                for n, (lo, hi) in sorted(self.features.items())
            ],
        }
        return MetadataRecord("REGISTER_CONTROLLER_RECORD", 0, data)


@dataclass(frozen=True, slots=True)
class ClusterImage:
    """Registered brokers and controllers by id (Kafka's `ClusterImage`)."""

    brokers: FrozenMap[int, BrokerRegistration]
    controllers: FrozenMap[int, ControllerRegistration]

    EMPTY: ClassVar[ClusterImage]

    def records(self, broker_version: int = 2) -> list[MetadataRecord]:
        """Registrations in id order (brokers, then controllers)."""
        out = [self.brokers[i].record(broker_version) for i in sorted(self.brokers)]
        out += [self.controllers[i].record() for i in sorted(self.controllers)]
        return out


FeaturesImage.EMPTY = FeaturesImage(FrozenMap())
ClusterImage.EMPTY = ClusterImage(FrozenMap(), FrozenMap())
