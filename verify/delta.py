"""Deltas: mutable accumulators that replay metadata records on top of an image.

Shaped like Kafka's `MetadataDelta`: `MetadataDelta.replay(record)` looks the record's type up in
ONE router table (`_ROUTES`) and hands the record to the sub-delta that owns it, created on first
use; an unknown type raises `UnknownRecordTypeError` (nothing is skipped), `NO_OP_RECORD` is an
explicit no-op, and `REMOVE_TOPIC_RECORD`, which touches two entities, is split by the router
(topics, then that topic's configs) so sub-deltas stay independent. `apply()` returns the next
image and reuses every untouched sub-image; `finish_snapshot()` deletes whatever a snapshot did
not mention.

Transaction markers (Begin/End/AbortTransactionRecord) belong to the loader (`verify._loader`),
which knows batches and offsets; given to a delta they raise.

Records are `writers.MetadataRecord`s: Kafka's camelCase JSON field names, Uuids as 22-char text.
A field left out takes the schema default, as the codec would decode it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from verify.errors import ReplayError, UnknownRecordTypeError
from verify.image import (
    MIGRATING_DIRECTORY,
    AclsImage,
    BrokerEndpoint,
    BrokerRegistration,
    ClientQuotasImage,
    ClusterImage,
    ConfigResource,
    ConfigsImage,
    ControllerRegistration,
    DelegationTokenData,
    DelegationTokensImage,
    FeaturesImage,
    FrozenMap,
    MetadataImage,
    PartitionImage,
    ProducerIdsImage,
    QuotaEntity,
    ScramCredential,
    ScramImage,
    StandardAcl,
    TopicImage,
    TopicsImage,
)
from writers import MetadataRecord

__all__ = [
    "RECORD_TYPES",
    "TRANSACTION_RECORD_TYPES",
    "AclsDelta",
    "ClientQuotasDelta",
    "ClusterDelta",
    "ConfigsDelta",
    "DelegationTokensDelta",
    "FeaturesDelta",
    "MetadataDelta",
    "ScramDelta",
    "TopicDelta",
    "TopicsDelta",
    "apply_records",
]

Data = Mapping[str, Any]

NO_LEADER_CHANGE = -2
TOPIC_RESOURCE = 2


def _ints(value: Any) -> tuple[int, ...]:
    # The codec yields lists of ints already; tuple() keeps replay at ~1M partitions cheap.
    return tuple(value) if value else ()


_MIGRATING: dict[int, tuple[str, ...]] = {}


def _migrating(n: int) -> tuple[str, ...]:
    """`n` replicas in `DirectoryId.MIGRATING`, one shared tuple per length (1M partitions)."""
    dirs = _MIGRATING.get(n)
    if dirs is None:
        dirs = _MIGRATING[n] = (MIGRATING_DIRECTORY,) * n
    return dirs


def _endpoints(data: Data) -> tuple[BrokerEndpoint, ...]:
    return tuple(
        BrokerEndpoint(e["name"], e["host"], int(e["port"]), int(e.get("securityProtocol", 0)))
        for e in data.get("endPoints") or ()
    )


def _features(data: Data) -> FrozenMap[str, tuple[int, int]]:
    return FrozenMap(
        {
            f["name"]: (int(f.get("minSupportedVersion", 0)), int(f.get("maxSupportedVersion", 0)))
            for f in data.get("features") or ()
        }
    )


# ------------------------------------------------------------------------------ sub-deltas


class FeaturesDelta:
    """Feature level changes; level 0 removes a feature (never metadata.version)."""

    def __init__(self, base: FeaturesImage) -> None:
        self._base = base
        self._changes: dict[str, int | None] = {}

    def replay(self, data: Data) -> None:
        """Apply a `FeatureLevelRecord`."""
        name, level = data["name"], int(data["featureLevel"])
        self._changes[name] = None if level == 0 and name != "metadata.version" else level

    def changed_features(self) -> frozenset[str]:
        """Names of the features this delta sets or removes."""
        return frozenset(self._changes)

    def finish_snapshot(self) -> None:
        """Drop every feature the snapshot did not mention."""
        for name in self._base.levels:
            self._changes.setdefault(name, None)

    def apply(self) -> FeaturesImage:
        """The next features image."""
        levels = self._base.levels.thaw()
        for name, level in self._changes.items():
            if level is None:
                levels.pop(name, None)
            else:
                levels[name] = level
        return FeaturesImage(FrozenMap(levels))


class ClusterDelta:
    """Broker and controller registrations (Kafka's `ClusterDelta`)."""

    def __init__(self, base: ClusterImage) -> None:
        self._base = base
        self._brokers: dict[int, BrokerRegistration | None] = {}
        self._controllers: dict[int, ControllerRegistration | None] = {}

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        """The broker's registration as of this delta, None if unregistered."""
        if broker_id in self._brokers:
            return self._brokers[broker_id]
        return self._base.brokers.get(broker_id)

    def replay_register(self, data: Data) -> None:
        """Apply a `RegisterBrokerRecord` (v0-3): a new registration replaces any older one."""
        broker_id = int(data["brokerId"])
        self._brokers[broker_id] = BrokerRegistration(
            broker_id=broker_id,
            epoch=int(data.get("brokerEpoch", 0)),
            incarnation_id=data.get("incarnationId", MIGRATING_DIRECTORY),
            endpoints=_endpoints(data),
            features=_features(data),
            rack=data.get("rack"),
            fenced=bool(data.get("fenced", True)),
            in_controlled_shutdown=bool(data.get("inControlledShutdown", False)),
            is_migrating_zk_broker=bool(data.get("isMigratingZkBroker", False)),
            log_dirs=tuple(data.get("logDirs") or ()),
        )

    def replay_unregister(self, data: Data) -> None:
        """Apply an `UnregisterBrokerRecord`."""
        self._brokers[int(data["brokerId"])] = None

    def replay_change(
        self,
        broker_id: int,
        epoch: int,
        *,
        fenced: int = 0,
        controlled_shutdown: int = 0,
        log_dirs: Sequence[str] = (),
    ) -> None:
        """Apply a fence/unfence/registration change; the broker and epoch must match.

        Args:
            fenced: 1 fence, -1 unfence, 0 unchanged (`BrokerRegistrationFencingChange`).
            controlled_shutdown: 1 enters controlled shutdown, 0 unchanged.
            log_dirs: new log directories, empty for unchanged.

        Raises:
            ReplayError: no registration for the broker, or a different epoch.
        """
        cur = self.broker(broker_id)
        if cur is None:
            raise ReplayError(f"no broker registration found for broker {broker_id}")
        if cur.epoch != epoch:
            raise ReplayError(
                f"broker {broker_id} is registered with epoch {cur.epoch}, not {epoch}"
            )
        new_fenced = cur.fenced if fenced == 0 else fenced > 0
        shutdown = cur.in_controlled_shutdown or controlled_shutdown == 1
        self._brokers[broker_id] = BrokerRegistration(
            broker_id, cur.epoch, cur.incarnation_id, cur.endpoints, cur.features, cur.rack,
            new_fenced, shutdown, cur.is_migrating_zk_broker,
            tuple(log_dirs) if log_dirs else cur.log_dirs,
        )

    def replay_register_controller(self, data: Data) -> None:
        """Apply a `RegisterControllerRecord`."""
        controller_id = int(data["controllerId"])
        self._controllers[controller_id] = ControllerRegistration(
            controller_id,
            data.get("incarnationId", MIGRATING_DIRECTORY),
            bool(data.get("zkMigrationReady", False)),
            _endpoints(data),
            _features(data),
        )

    def changed_broker_ids(self) -> frozenset[int]:
        """Brokers this delta registers, changes or unregisters."""
        return frozenset(self._brokers)

    def changed_controller_ids(self) -> frozenset[int]:
        """Controllers this delta registers."""
        return frozenset(self._controllers)

    def finish_snapshot(self) -> None:
        """Drop every registration the snapshot did not mention."""
        for broker_id in self._base.brokers:
            self._brokers.setdefault(broker_id, None)
        for controller_id in self._base.controllers:
            self._controllers.setdefault(controller_id, None)

    def apply(self) -> ClusterImage:
        """The next brokers image."""
        return ClusterImage(
            _merged(self._base.brokers, self._brokers),
            _merged(self._base.controllers, self._controllers),
        )


class TopicDelta:
    """Partition changes of one topic on top of its image (Kafka's `TopicDelta`).

    Attributes:
        base: the topic as it was (a created topic starts from an empty `TopicImage`).
        partitions: partition id -> its new registration, for the partitions this delta
            created or changed. Read-only for callers.
    """

    __slots__ = ("base", "partitions")

    def __init__(self, base: TopicImage) -> None:
        self.base = base
        self.partitions: dict[int, PartitionImage] = {}

    @property
    def topic_id(self) -> str:
        """The topic's id."""
        return self.base.topic_id

    @property
    def name(self) -> str:
        """The topic's name."""
        return self.base.name

    def changed_partitions(self) -> frozenset[int]:
        """Ids of the partitions this delta created or changed."""
        return frozenset(self.partitions)

    def partition(self, partition_id: int) -> PartitionImage | None:
        """The partition as of this delta, None if the topic has no such partition."""
        got = self.partitions.get(partition_id)
        return got if got is not None else self.base.partitions.get(partition_id)

    def apply(self) -> TopicImage:
        """The topic after this delta (the base itself when nothing changed)."""
        if not self.partitions:
            return self.base
        parts = self.base.partitions.thaw()
        parts.update(self.partitions)
        return TopicImage(self.base.name, self.base.topic_id, FrozenMap(parts))


class TopicsDelta:
    """Created, changed and deleted topics (Kafka's `TopicsDelta`)."""

    def __init__(self, base: TopicsImage) -> None:
        self._base = base
        self._changed: dict[str, TopicDelta] = {}
        self._created: set[str] = set()
        self._created_names: dict[str, str] = {}
        self._deleted: set[str] = set()

    def changed_topics(self) -> Mapping[str, TopicDelta]:
        """Topic id -> its `TopicDelta`, for topics created or changed (not deleted) here.

        A topic created and deleted within the same delta appears nowhere.
        """
        return dict(self._changed)

    def created_topic_ids(self) -> frozenset[str]:
        """Ids of the topics this delta created (still present at its end)."""
        return frozenset(self._created)

    def deleted_topic_ids(self) -> frozenset[str]:
        """Ids of base topics this delta deleted."""
        return frozenset(self._deleted)

    def _live(self, topic_id: str) -> TopicDelta:
        delta = self._changed.get(topic_id)
        if delta is not None:
            return delta
        base = self._base.by_id.get(topic_id)
        if base is None or topic_id in self._deleted:
            raise ReplayError(f"unknown topic id {topic_id}")
        delta = self._changed[topic_id] = TopicDelta(base)
        return delta

    def replay_topic(self, data: Data) -> None:
        """Apply a `TopicRecord`: a new topic with no partitions yet."""
        name, topic_id = data["name"], data["topicId"]
        other_id = self._created_names.get(name)
        if other_id is not None and other_id != topic_id and other_id in self._created:
            raise ReplayError(f"topic {name!r} already exists with id {other_id}")
        self._changed[topic_id] = TopicDelta(TopicImage(name, topic_id, FrozenMap()))
        self._created.add(topic_id)
        self._created_names[name] = topic_id

    def replay_partition(self, data: Data, version: int) -> None:
        """Apply a `PartitionRecord` (v0-2); v0 replicas live in `DirectoryId.MIGRATING`."""
        topic = self._live(data["topicId"])
        partition_id = int(data.get("partitionId", -1))
        if partition_id < 0:
            raise ReplayError(f"invalid partition id {partition_id}")
        replicas = _ints(data.get("replicas"))
        directories = tuple(data.get("directories") or ()) if version >= 1 else ()
        elr = data.get("eligibleLeaderReplicas")
        lke = data.get("lastKnownElr")
        topic.partitions[partition_id] = PartitionImage(
            replicas=replicas,
            isr=_ints(data.get("isr")),
            removing_replicas=_ints(data.get("removingReplicas")),
            adding_replicas=_ints(data.get("addingReplicas")),
            leader=int(data.get("leader", -1)),
            leader_recovery_state=int(data.get("leaderRecoveryState", 0)),
            leader_epoch=int(data.get("leaderEpoch", -1)),
            partition_epoch=int(data.get("partitionEpoch", -1)),
            directories=directories or _migrating(len(replicas)),
            elr=None if elr is None else _ints(elr),
            last_known_elr=None if lke is None else _ints(lke),
        )

    def replay_partition_change(self, data: Data) -> None:
        """Apply a `PartitionChangeRecord` (Kafka's `PartitionRegistration.merge`).

        A leader change bumps the leader epoch; every change bumps the partition epoch.
        """
        topic_id = data["topicId"]
        partition_id = int(data.get("partitionId", -1))
        topic = self._live(topic_id)
        cur = topic.partition(partition_id)
        if cur is None:
            raise ReplayError(f"unknown partition {partition_id} of topic id {topic_id}")
        replicas = cur.replicas if data.get("replicas") is None else _ints(data["replicas"])
        if data.get("directories") is not None:
            directories = tuple(data["directories"])
        elif len(replicas) != len(cur.directories):
            directories = _migrating(len(replicas))
        else:
            directories = cur.directories
        leader = int(data.get("leader", NO_LEADER_CHANGE))
        lrs = int(data.get("leaderRecoveryState", -1))
        elr, lke = data.get("eligibleLeaderReplicas"), data.get("lastKnownElr")
        topic.partitions[partition_id] = PartitionImage(
            replicas=replicas,
            isr=cur.isr if data.get("isr") is None else _ints(data["isr"]),
            removing_replicas=cur.removing_replicas
            if data.get("removingReplicas") is None
            else _ints(data["removingReplicas"]),
            adding_replicas=cur.adding_replicas
            if data.get("addingReplicas") is None
            else _ints(data["addingReplicas"]),
            leader=cur.leader if leader == NO_LEADER_CHANGE else leader,
            leader_recovery_state=cur.leader_recovery_state if lrs == -1 else lrs,
            leader_epoch=cur.leader_epoch if leader == NO_LEADER_CHANGE else cur.leader_epoch + 1,
            partition_epoch=cur.partition_epoch + 1,
            directories=directories,
            elr=cur.elr if elr is None else _ints(elr),
            last_known_elr=cur.last_known_elr if lke is None else _ints(lke),
        )

    def replay_remove(self, data: Data) -> str:
        """Apply a `RemoveTopicRecord`; returns the topic's name (its configs go too).

        Raises:
            ReplayError: the topic id is unknown.
        """
        topic_id = data["topicId"]
        if topic_id in self._created:
            name = self._changed.pop(topic_id).base.name
            self._created.discard(topic_id)
            if topic_id in self._base.by_id:
                self._deleted.add(topic_id)
            return name
        name = self._live(topic_id).base.name
        self._changed.pop(topic_id)
        self._deleted.add(topic_id)
        return name

    def finish_snapshot(self) -> None:
        """Delete every topic the snapshot did not mention."""
        for topic_id in self._base.by_id:
            if topic_id not in self._changed:
                self._deleted.add(topic_id)

    def apply(self) -> TopicsImage:
        """The next topics image; untouched topics are reused as they are."""
        if not self._changed and not self._deleted:
            return self._base
        by_id = self._base.by_id.thaw()
        by_name = self._base.by_name.thaw()
        for topic_id in self._deleted | set(self._changed):
            old = by_id.pop(topic_id, None)
            if old is not None and by_name.get(old.name) is old:
                del by_name[old.name]
        for topic_id, delta in self._changed.items():
            topic = delta.apply()
            by_id[topic_id] = topic
            by_name[topic.name] = topic
        return TopicsImage(FrozenMap(by_id), FrozenMap(by_name))


class ConfigsDelta:
    """Config key changes per resource; a null value deletes the key."""

    def __init__(self, base: ConfigsImage) -> None:
        self._base = base
        self._changes: dict[ConfigResource, dict[str, str | None]] = {}

    def replay(self, data: Data) -> None:
        """Apply a `ConfigRecord`."""
        resource = (int(data["resourceType"]), data["resourceName"])
        self._changes.setdefault(resource, {})[data["name"]] = data.get("value")

    def changed_resources(self) -> frozenset[ConfigResource]:
        """(resourceType, resourceName) of every resource with a key set or deleted here."""
        return frozenset(self._changes)

    def delete_resource(self, resource: ConfigResource) -> None:
        """Delete every key of a resource (the config half of `RemoveTopicRecord`)."""
        base = self._base.resources.get(resource, FrozenMap())
        self._changes[resource] = dict.fromkeys(base)

    def finish_snapshot(self) -> None:
        """Delete every key the snapshot did not mention."""
        for resource, conf in self._base.resources.items():
            changes = self._changes.setdefault(resource, {})
            for key in conf:
                changes.setdefault(key, None)

    def apply(self) -> ConfigsImage:
        """The next configs image; resources left with no keys disappear."""
        if not self._changes:
            return self._base
        resources = self._base.resources.thaw()
        for resource, changes in self._changes.items():
            conf = resources[resource].thaw() if resource in resources else {}
            for key, value in changes.items():
                if value is None:
                    conf.pop(key, None)
                else:
                    conf[key] = value
            if conf:
                resources[resource] = FrozenMap(conf)
            else:
                resources.pop(resource, None)
        return ConfigsImage(FrozenMap(resources))


class ClientQuotasDelta:
    """Quota key changes per entity (`ClientQuotaRecord`; `remove` deletes the key)."""

    def __init__(self, base: ClientQuotasImage) -> None:
        self._base = base
        self._changes: dict[QuotaEntity, dict[str, float | None]] = {}

    def replay(self, data: Data) -> None:
        """Apply a `ClientQuotaRecord`."""
        entity: QuotaEntity = tuple(
            sorted((e["entityType"], e.get("entityName")) for e in data["entity"])
        )
        if not entity:
            raise ReplayError("client quota record names no entity")
        value = None if data.get("remove", False) else float(data["value"])
        self._changes.setdefault(entity, {})[data["key"]] = value

    def changed_entities(self) -> frozenset[QuotaEntity]:
        """Entities with a quota key set or removed here."""
        return frozenset(self._changes)

    def finish_snapshot(self) -> None:
        """Delete every quota the snapshot did not mention."""
        for entity, quotas in self._base.entities.items():
            changes = self._changes.setdefault(entity, {})
            for key in quotas:
                changes.setdefault(key, None)

    def apply(self) -> ClientQuotasImage:
        """The next quotas image; entities left with no quotas disappear."""
        entities = self._base.entities.thaw()
        for entity, changes in self._changes.items():
            quotas = entities[entity].thaw() if entity in entities else {}
            for key, value in changes.items():
                if value is None:
                    quotas.pop(key, None)
                else:
                    quotas[key] = value
            if quotas:
                entities[entity] = FrozenMap(quotas)
            else:
                entities.pop(entity, None)
        return ClientQuotasImage(FrozenMap(entities))


class _KeyedDelta:
    """Upserts and removals over one keyed map of an image (SCRAM, ACLs, tokens)."""

    def __init__(self, base: Mapping[Any, Any]) -> None:
        self._base = base
        self._changes: dict[Any, Any] = {}

    def changed_keys(self) -> frozenset[Any]:
        """Keys upserted or removed here: (user, mechanism), ACL ids, token ids."""
        return frozenset(self._changes)

    def get(self, key: Any) -> Any:
        """The value as of this delta (None: absent)."""
        if key in self._changes:
            return self._changes[key]
        return self._base.get(key)

    def finish_snapshot(self) -> None:
        for key in self._base:
            self._changes.setdefault(key, None)

    def merged(self) -> FrozenMap[Any, Any]:
        return _merged(self._base, self._changes)


class ScramDelta(_KeyedDelta):
    """SCRAM credentials by (user, mechanism); removals of unknown ones are allowed (as Kafka)."""

    def __init__(self, base: ScramImage) -> None:
        super().__init__(base.credentials)

    def replay(self, data: Data) -> None:
        """Apply a `UserScramCredentialRecord`."""
        self._changes[(data["name"], int(data["mechanism"]))] = ScramCredential(
            bytes(data["salt"]), bytes(data["storedKey"]), bytes(data["serverKey"]),
            int(data["iterations"]),
        )

    def replay_remove(self, data: Data) -> None:
        """Apply a `RemoveUserScramCredentialRecord`."""
        self._changes[(data["name"], int(data["mechanism"]))] = None

    def apply(self) -> ScramImage:
        """The next SCRAM image."""
        return ScramImage(self.merged())


class AclsDelta(_KeyedDelta):
    """ACLs by id; removing an id found neither in the image nor the delta raises."""

    def __init__(self, base: AclsImage) -> None:
        super().__init__(base.acls)

    def replay(self, data: Data) -> None:
        """Apply an `AccessControlEntryRecord`."""
        self._changes[data["id"]] = StandardAcl(
            int(data["resourceType"]), data["resourceName"], int(data["patternType"]),
            data["principal"], data["host"], int(data["operation"]), int(data["permissionType"]),
        )

    def replay_remove(self, data: Data) -> None:
        """Apply a `RemoveAccessControlEntryRecord`.

        Raises:
            ReplayError: no ACL with that id.
        """
        acl_id = data["id"]
        if acl_id in self._base:
            self._changes[acl_id] = None
        elif self._changes.get(acl_id) is not None:
            del self._changes[acl_id]
        else:
            raise ReplayError(f"no ACL with id {acl_id}")

    def apply(self) -> AclsImage:
        """The next ACLs image."""
        return AclsImage(self.merged())


class DelegationTokensDelta(_KeyedDelta):
    """Delegation tokens by token id."""

    def __init__(self, base: DelegationTokensImage) -> None:
        super().__init__(base.tokens)

    def replay(self, data: Data) -> None:
        """Apply a `DelegationTokenRecord`."""
        self._changes[data["tokenId"]] = DelegationTokenData(
            token_id=data["tokenId"],
            owner=data["owner"],
            requester=data.get("requester") or data["owner"],
            renewers=tuple(data.get("renewers") or ()),
            issue_timestamp=int(data["issueTimestamp"]),
            max_timestamp=int(data["maxTimestamp"]),
            expiration_timestamp=int(data["expirationTimestamp"]),
        )

    def replay_remove(self, data: Data) -> None:
        """Apply a `RemoveDelegationTokenRecord`."""
        self._changes[data["tokenId"]] = None

    def apply(self) -> DelegationTokensImage:
        """The next tokens image."""
        return DelegationTokensImage(self.merged())


def _merged(base: Mapping[Any, Any], changes: Mapping[Any, Any]) -> FrozenMap[Any, Any]:
    """`base` with `changes` applied (None deletes); `base` itself when nothing changed."""
    if not changes and isinstance(base, FrozenMap):
        return base
    out = dict(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return FrozenMap(out)


# ------------------------------------------------------------------------------ the router


class MetadataDelta:
    """Replays metadata records on top of a `MetadataImage`; `apply()` gives the next image.

    Asking is not creating (Kafka's `MetadataDelta`): `topics_delta()` and the other
    `*_delta()` getters return None when no record touched that kind, so a caller can ask "was
    this touched?"; replay goes through `get_or_create_*_delta()`.

    Args:
        base: the image the records apply to (`MetadataImage.EMPTY` for a fresh log).
    """

    def __init__(self, base: MetadataImage | None = None) -> None:
        self.base = base if base is not None else MetadataImage.EMPTY
        self._features: FeaturesDelta | None = None
        self._cluster: ClusterDelta | None = None
        self._topics: TopicsDelta | None = None
        self._configs: ConfigsDelta | None = None
        self._quotas: ClientQuotasDelta | None = None
        self._scram: ScramDelta | None = None
        self._acls: AclsDelta | None = None
        self._producer_ids: ProducerIdsImage | None = None
        self._tokens: DelegationTokensDelta | None = None
        self._zk_migration_state: int | None = None
        self.records_replayed = 0

    # -- asking (never creates) -----------------------------------------------------------
    def features_delta(self) -> FeaturesDelta | None:
        """The features sub-delta, None if no record touched features."""
        return self._features

    def cluster_delta(self) -> ClusterDelta | None:
        """The broker/controller registrations sub-delta, None if untouched."""
        return self._cluster

    def topics_delta(self) -> TopicsDelta | None:
        """The topics sub-delta, None if untouched."""
        return self._topics

    def configs_delta(self) -> ConfigsDelta | None:
        """The configs sub-delta, None if untouched."""
        return self._configs

    def client_quotas_delta(self) -> ClientQuotasDelta | None:
        """The client quotas sub-delta, None if untouched."""
        return self._quotas

    def scram_delta(self) -> ScramDelta | None:
        """The SCRAM sub-delta, None if untouched."""
        return self._scram

    def acls_delta(self) -> AclsDelta | None:
        """The ACLs sub-delta, None if untouched."""
        return self._acls

    def delegation_tokens_delta(self) -> DelegationTokensDelta | None:
        """The delegation tokens sub-delta, None if untouched."""
        return self._tokens

    def producer_ids(self) -> ProducerIdsImage | None:
        """The producer-ids image a `ProducerIdsRecord` here set, None if none did."""
        return self._producer_ids

    def zk_migration_state(self) -> int | None:
        """The `ZkMigrationStateRecord` value replayed here, None if none was."""
        return self._zk_migration_state

    # -- creating (replay) ----------------------------------------------------------------
    def get_or_create_features_delta(self) -> FeaturesDelta:
        """The features sub-delta, created on first use."""
        if self._features is None:
            self._features = FeaturesDelta(self.base.features)
        return self._features

    def get_or_create_cluster_delta(self) -> ClusterDelta:
        """The registrations sub-delta, created on first use."""
        if self._cluster is None:
            self._cluster = ClusterDelta(self.base.cluster)
        return self._cluster

    def get_or_create_topics_delta(self) -> TopicsDelta:
        """The topics sub-delta, created on first use."""
        if self._topics is None:
            self._topics = TopicsDelta(self.base.topics)
        return self._topics

    def get_or_create_configs_delta(self) -> ConfigsDelta:
        """The configs sub-delta, created on first use."""
        if self._configs is None:
            self._configs = ConfigsDelta(self.base.configs)
        return self._configs

    def get_or_create_client_quotas_delta(self) -> ClientQuotasDelta:
        """The client quotas sub-delta, created on first use."""
        if self._quotas is None:
            self._quotas = ClientQuotasDelta(self.base.client_quotas)
        return self._quotas

    def get_or_create_scram_delta(self) -> ScramDelta:
        """The SCRAM sub-delta, created on first use."""
        if self._scram is None:
            self._scram = ScramDelta(self.base.scram)
        return self._scram

    def get_or_create_acls_delta(self) -> AclsDelta:
        """The ACLs sub-delta, created on first use."""
        if self._acls is None:
            self._acls = AclsDelta(self.base.acls)
        return self._acls

    def get_or_create_delegation_tokens_delta(self) -> DelegationTokensDelta:
        """The delegation tokens sub-delta, created on first use."""
        if self._tokens is None:
            self._tokens = DelegationTokensDelta(self.base.delegation_tokens)
        return self._tokens

    def replay(self, record: MetadataRecord) -> None:
        """Replay one metadata record.

        Raises:
            UnknownRecordTypeError: no handler for the record's type.
            ReplayError: the record does not apply (unknown topic id, missing field, ...), naming
                the record type; the loader adds the offset.
        """
        handler = _ROUTES.get(record.type)
        if handler is None:
            raise UnknownRecordTypeError("unknown metadata record type", record_type=record.type)
        try:
            handler(self, record)
        except ReplayError as exc:
            raise type(exc)(exc.problem, record_type=record.type, offset=exc.offset) from None
        except KeyError as exc:
            raise ReplayError(f"missing field {exc}", record_type=record.type) from None
        except (TypeError, ValueError) as exc:
            raise ReplayError(f"malformed field: {exc}", record_type=record.type) from None
        self.records_replayed += 1

    def finish_snapshot(self) -> None:
        """Mark everything a snapshot did not mention as deleted (call after replaying it)."""
        self.get_or_create_features_delta().finish_snapshot()
        self.get_or_create_cluster_delta().finish_snapshot()
        self.get_or_create_topics_delta().finish_snapshot()
        self.get_or_create_configs_delta().finish_snapshot()
        self.get_or_create_client_quotas_delta().finish_snapshot()
        self.get_or_create_scram_delta().finish_snapshot()
        self.get_or_create_acls_delta().finish_snapshot()
        self.get_or_create_delegation_tokens_delta().finish_snapshot()
        if self._producer_ids is None:
            self._producer_ids = ProducerIdsImage.EMPTY
        if self._zk_migration_state is None:
            self._zk_migration_state = 0

    def apply(self) -> MetadataImage:
        """The image after every replayed record; untouched sub-images are reused."""
        b = self.base
        return MetadataImage(
            features=self._features.apply() if self._features else b.features,
            cluster=self._cluster.apply() if self._cluster else b.cluster,
            topics=self._topics.apply() if self._topics else b.topics,
            configs=self._configs.apply() if self._configs else b.configs,
            client_quotas=self._quotas.apply() if self._quotas else b.client_quotas,
            scram=self._scram.apply() if self._scram else b.scram,
            acls=self._acls.apply() if self._acls else b.acls,
            producer_ids=self._producer_ids if self._producer_ids else b.producer_ids,
            delegation_tokens=self._tokens.apply() if self._tokens else b.delegation_tokens,
            zk_migration_state=b.zk_migration_state
            if self._zk_migration_state is None
            else self._zk_migration_state,
        )

    # handlers (one per record type; see _ROUTES)
    def _fence(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self.get_or_create_cluster_delta().replay_change(int(d["id"]), int(d["epoch"]), fenced=1)

    def _unfence(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self.get_or_create_cluster_delta().replay_change(int(d["id"]), int(d["epoch"]),
                                                         fenced=-1)

    def _registration_change(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self.get_or_create_cluster_delta().replay_change(
            int(d["brokerId"]), int(d["brokerEpoch"]), fenced=int(d.get("fenced", 0)),
            controlled_shutdown=int(d.get("inControlledShutdown", 0)),
            log_dirs=list(d.get("logDirs") or ()),
        )

    def _remove_topic(self, r: MetadataRecord) -> None:
        name = self.get_or_create_topics_delta().replay_remove(r.data)
        self.get_or_create_configs_delta().delete_resource((TOPIC_RESOURCE, name))

    def _producer_ids_record(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self._producer_ids = ProducerIdsImage(
            int(d["nextProducerId"]), int(d.get("brokerId", -1)), int(d.get("brokerEpoch", -1))
        )

    def _zk_migration(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self._zk_migration_state = int(d["zkMigrationState"])

    def _no_op(self, r: MetadataRecord) -> None:
        """`NoOpRecord`: nothing to apply, by design (it only advances the offset)."""

    def _transaction_marker(self, r: MetadataRecord) -> None:
        raise ReplayError("transaction markers are handled by the loader, not replayed")


def apply_records(image: MetadataImage, records: Iterable[MetadataRecord]) -> MetadataImage:
    """Replay a batch of metadata records onto `image` and return the next image.

    What the online mirror uses to keep "what the log holds" current after each append.
    Transaction markers are not metadata (the loader handles them) and raise here; pass only
    the metadata records of what was appended.

    Raises:
        UnknownRecordTypeError, ReplayError: as `MetadataDelta.replay`.
    """
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta.apply()


_Handler = Callable[[MetadataDelta, MetadataRecord], None]

def _cluster(d: MetadataDelta) -> ClusterDelta:
    return d.get_or_create_cluster_delta()


def _topics(d: MetadataDelta) -> TopicsDelta:
    return d.get_or_create_topics_delta()


def _scram(d: MetadataDelta) -> ScramDelta:
    return d.get_or_create_scram_delta()


def _acls(d: MetadataDelta) -> AclsDelta:
    return d.get_or_create_acls_delta()


def _tokens(d: MetadataDelta) -> DelegationTokensDelta:
    return d.get_or_create_delegation_tokens_delta()


_ROUTES: dict[str, _Handler] = {
    "REGISTER_BROKER_RECORD": lambda d, r: _cluster(d).replay_register(r.data),
    "UNREGISTER_BROKER_RECORD": lambda d, r: _cluster(d).replay_unregister(r.data),
    "TOPIC_RECORD": lambda d, r: _topics(d).replay_topic(r.data),
    "PARTITION_RECORD": lambda d, r: _topics(d).replay_partition(r.data, r.version),
    "CONFIG_RECORD": lambda d, r: d.get_or_create_configs_delta().replay(r.data),
    "PARTITION_CHANGE_RECORD": lambda d, r: _topics(d).replay_partition_change(r.data),
    "FENCE_BROKER_RECORD": MetadataDelta._fence,
    "UNFENCE_BROKER_RECORD": MetadataDelta._unfence,
    "REMOVE_TOPIC_RECORD": MetadataDelta._remove_topic,
    "DELEGATION_TOKEN_RECORD": lambda d, r: _tokens(d).replay(r.data),
    "USER_SCRAM_CREDENTIAL_RECORD": lambda d, r: _scram(d).replay(r.data),
    "FEATURE_LEVEL_RECORD": lambda d, r: d.get_or_create_features_delta().replay(r.data),
    "CLIENT_QUOTA_RECORD": lambda d, r: d.get_or_create_client_quotas_delta().replay(r.data),
    "PRODUCER_IDS_RECORD": MetadataDelta._producer_ids_record,
    "BROKER_REGISTRATION_CHANGE_RECORD": MetadataDelta._registration_change,
    "ACCESS_CONTROL_ENTRY_RECORD": lambda d, r: _acls(d).replay(r.data),
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD": lambda d, r: _acls(d).replay_remove(r.data),
    "NO_OP_RECORD": MetadataDelta._no_op,
    "ZK_MIGRATION_STATE_RECORD": MetadataDelta._zk_migration,
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": lambda d, r: _scram(d).replay_remove(r.data),
    "BEGIN_TRANSACTION_RECORD": MetadataDelta._transaction_marker,
    "END_TRANSACTION_RECORD": MetadataDelta._transaction_marker,
    "ABORT_TRANSACTION_RECORD": MetadataDelta._transaction_marker,
    "REMOVE_DELEGATION_TOKEN_RECORD": lambda d, r: _tokens(d).replay_remove(r.data),
    "REGISTER_CONTROLLER_RECORD": lambda d, r: _cluster(d).replay_register_controller(r.data),
}

RECORD_TYPES: frozenset[str] = frozenset(_ROUTES)
"""Every metadata record type replay understands."""

TRANSACTION_RECORD_TYPES: frozenset[str] = frozenset(
    {"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"}
)
"""Markers the loader consumes itself."""
