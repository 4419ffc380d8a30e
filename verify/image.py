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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from writers import MetadataRecord, uuid_to_bytes

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

K = TypeVar("K")
V = TypeVar("V")

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


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """A read-only mapping over a private dict.

    Unlike `types.MappingProxyType` it pickles (Spark ships images) and compares two FrozenMaps
    by their dicts directly, without the item-by-item copy `Mapping.__eq__` makes.
    """

    __slots__ = ("_d",)

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        self._d: dict[K, V] = dict(items) if items else {}

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._d == other._d
        if isinstance(other, Mapping):
            return self._d == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._d.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def __reduce__(self) -> tuple[type[FrozenMap[K, V]], tuple[dict[K, V]]]:
        return (FrozenMap, (self._d,))

    def thaw(self) -> dict[K, V]:
        """A mutable copy, the starting point of `apply()`."""
        return dict(self._d)


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


# ---------------------------------------------------------------------------------- topics


@dataclass(frozen=True, slots=True)
class PartitionImage:
    """One partition's registration (Kafka's `PartitionRegistration`)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = -1
    leader_recovery_state: int = 0
    leader_epoch: int = 0
    partition_epoch: int = 0
    directories: tuple[str, ...] = ()
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None

    def record(self, topic_id: str, partition_id: int) -> MetadataRecord:
        """The version-0 `PartitionRecord` (no directories, as Kafka's migration writes)."""
        data: dict[str, Any] = {
            "partitionId": partition_id,
            "topicId": topic_id,
            "replicas": list(self.replicas),
            "isr": list(self.isr),
            "removingReplicas": list(self.removing_replicas),
            "addingReplicas": list(self.adding_replicas),
            "leader": self.leader,
            "leaderEpoch": self.leader_epoch,
            "partitionEpoch": self.partition_epoch,
            "leaderRecoveryState": self.leader_recovery_state,
        }
        return MetadataRecord("PARTITION_RECORD", 0, data)


@dataclass(frozen=True, slots=True)
class TopicImage:
    """A topic: name, Uuid text and partitions by id."""

    name: str
    topic_id: str
    partitions: FrozenMap[int, PartitionImage]

    def records(self) -> list[MetadataRecord]:
        """`TopicRecord` then its `PartitionRecord`s in partition order (Kafka's `write`)."""
        out = [MetadataRecord("TOPIC_RECORD", 0, {"name": self.name, "topicId": self.topic_id})]
        out += [self.partitions[p].record(self.topic_id, p) for p in sorted(self.partitions)]
        return out


@dataclass(frozen=True, slots=True)
class TopicsImage:
    """Topics by id and by name; the two maps always hold the same topics."""

    by_id: FrozenMap[str, TopicImage]
    by_name: FrozenMap[str, TopicImage]

    EMPTY: ClassVar[TopicsImage]

    def records(self) -> list[MetadataRecord]:
        """Every topic's records, topics in name order."""
        out: list[MetadataRecord] = []
        for name in sorted(self.by_name):
            out += self.by_name[name].records()
        return out


# --------------------------------------------------------------------------------- configs

ConfigResource = tuple[int, str]
"""(resourceType, resourceName): TOPIC 2, BROKER 4 (`""` = cluster default), BROKER_LOGGER 8."""


@dataclass(frozen=True, slots=True)
class ConfigsImage:
    """Dynamic configs per resource; a resource with no keys is absent."""

    resources: FrozenMap[ConfigResource, FrozenMap[str, str]]

    EMPTY: ClassVar[ConfigsImage]

    def records(self) -> list[MetadataRecord]:
        """One `ConfigRecord` per key, resources and keys sorted."""
        out: list[MetadataRecord] = []
        for rtype, rname in sorted(self.resources):
            conf = self.resources[(rtype, rname)]
            for key in sorted(conf):
                data: dict[str, Any] = {"resourceType": rtype, "resourceName": rname, "name": key,
                        "value": conf[key]}
                out.append(MetadataRecord("CONFIG_RECORD", 0, data))
        return out


# --------------------------------------------------------------------------- client quotas

QuotaEntity = tuple[tuple[str, str | None], ...]
"""((entityType, entityName-or-None-for-default), ...) sorted by entity type."""


@dataclass(frozen=True, slots=True)
class ClientQuotasImage:
    """Client quotas by entity: quota key → value (a double, as in `ClientQuotaRecord`)."""

    entities: FrozenMap[QuotaEntity, FrozenMap[str, float]]

    EMPTY: ClassVar[ClientQuotasImage]

    def records(self) -> list[MetadataRecord]:
        """One `ClientQuotaRecord` per key."""
        out: list[MetadataRecord] = []
        for entity in sorted(self.entities, key=_quota_sort_key):
            quotas = self.entities[entity]
            for key in sorted(quotas):
                data: dict[str, Any] = {
                    "entity": [{"entityType": t, "entityName": n} for t, n in entity],
                    "key": key,
                    "value": quotas[key],
                    "remove": False,
                }
                out.append(MetadataRecord("CLIENT_QUOTA_RECORD", 0, data))
        return out


def _quota_sort_key(entity: QuotaEntity) -> tuple[tuple[str, bool, str], ...]:
    return tuple((t, n is not None, n or "") for t, n in entity)


# ------------------------------------------------------------------------------------ SCRAM


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """One SCRAM credential. Secret: its fields never appear in a repr, a log or a report."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:
        return "ScramCredential(<redacted>)"

    def digest(self) -> str:
        """SHA-256 over (salt, storedKey, serverKey, iterations): what parity compares.

        One-way, so a difference can say *that* two credentials differ without holding them.
        """
        import hashlib

        h = hashlib.sha256()
        for part in (self.salt, self.stored_key, self.server_key):
            h.update(len(part).to_bytes(4, "big"))
            h.update(part)
        h.update(self.iterations.to_bytes(8, "big", signed=True))
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class ScramImage:
    """SCRAM credentials by (user name, mechanism code 1 = SHA-256, 2 = SHA-512)."""

    credentials: FrozenMap[tuple[str, int], ScramCredential]

    EMPTY: ClassVar[ScramImage]

    def records(self) -> list[MetadataRecord]:
        """One `UserScramCredentialRecord` per credential."""
        out: list[MetadataRecord] = []
        for name, mech in sorted(self.credentials):
            c = self.credentials[(name, mech)]
            data: dict[str, Any] = {
                "name": name, "mechanism": mech, "salt": c.salt, "storedKey": c.stored_key,
                "serverKey": c.server_key, "iterations": c.iterations,
            }
            out.append(MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, data))
        return out


# -------------------------------------------------------------------------------------- ACLs


@dataclass(frozen=True, slots=True, order=True)
class StandardAcl:
    """One ACL binding with Kafka's byte codes (`AccessControlEntryRecord` minus its id)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class AclsImage:
    """ACLs by their Uuid text id."""

    acls: FrozenMap[str, StandardAcl]

    EMPTY: ClassVar[AclsImage]

    def records(self) -> list[MetadataRecord]:
        """One `AccessControlEntryRecord` per ACL, by id."""
        out: list[MetadataRecord] = []
        for acl_id in sorted(self.acls):
            a = self.acls[acl_id]
            data: dict[str, Any] = {"id": acl_id, "resourceType": a.resource_type,
                    "resourceName": a.resource_name, "patternType": a.pattern_type,
                    "principal": a.principal, "host": a.host, "operation": a.operation,
                    "permissionType": a.permission_type}
            out.append(MetadataRecord("ACCESS_CONTROL_ENTRY_RECORD", 0, data))
        return out


# ------------------------------------------------------------------------------ producer ids


@dataclass(frozen=True, slots=True)
class ProducerIdsImage:
    """The next producer id the controller will hand out (-1: never set)."""

    next_producer_id: int = -1
    broker_id: int = -1
    broker_epoch: int = -1

    EMPTY: ClassVar[ProducerIdsImage]

    def records(self) -> list[MetadataRecord]:
        """The single `ProducerIdsRecord`, if one was ever written."""
        if self.next_producer_id < 0:
            return []
        data = {"brokerId": self.broker_id, "brokerEpoch": self.broker_epoch,
                "nextProducerId": self.next_producer_id}
        return [MetadataRecord("PRODUCER_IDS_RECORD", 0, data)]


# ------------------------------------------------------------------------- delegation tokens


@dataclass(frozen=True, slots=True)
class DelegationTokenData:
    """A delegation token's metadata (the HMAC is never in the log, nor here)."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int


@dataclass(frozen=True, slots=True)
class DelegationTokensImage:
    """Delegation tokens by token id."""

    tokens: FrozenMap[str, DelegationTokenData]

    EMPTY: ClassVar[DelegationTokensImage]

    def records(self) -> list[MetadataRecord]:
        """One `DelegationTokenRecord` per token."""
        out: list[MetadataRecord] = []
        for token_id in sorted(self.tokens):
            t = self.tokens[token_id]
            data: dict[str, Any] = {
                "owner": t.owner, "requester": t.requester, "renewers": list(t.renewers),
                "issueTimestamp": t.issue_timestamp, "maxTimestamp": t.max_timestamp,
                "expirationTimestamp": t.expiration_timestamp, "tokenId": t.token_id,
            }
            out.append(MetadataRecord("DELEGATION_TOKEN_RECORD", 0, data))
        return out


# ------------------------------------------------------------------------------ the bundle


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


FeaturesImage.EMPTY = FeaturesImage(FrozenMap())
ClusterImage.EMPTY = ClusterImage(FrozenMap(), FrozenMap())
TopicsImage.EMPTY = TopicsImage(FrozenMap(), FrozenMap())
ConfigsImage.EMPTY = ConfigsImage(FrozenMap())
ClientQuotasImage.EMPTY = ClientQuotasImage(FrozenMap())
ScramImage.EMPTY = ScramImage(FrozenMap())
AclsImage.EMPTY = AclsImage(FrozenMap())
ProducerIdsImage.EMPTY = ProducerIdsImage()
DelegationTokensImage.EMPTY = DelegationTokensImage(FrozenMap())
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
