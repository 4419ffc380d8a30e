"""One ZooKeeper -> KRaft mapping, per entity, and the diff of two states of one entity.

The bulk copy and the online mirror share this module, so the mapping exists once (Kafka's
`KRaftMigrationZkWriter.handleSnapshot` / `handleDelta` share one per-entity comparison the same
way):

- `entity_records(key, snapshot, options)`: the records of one entity as ZooKeeper holds it, i.e.
  the diff of *nothing* against it. `translate` (the bulk copy) is these records for every key of
  `bulk_entity_keys(snapshot)`, in that order, between the framing records: diff(nothing,
  everything), byte for byte the log it always wrote.
- `delta_records(image, snapshot_part, keys, options)`: the records that make the log's image
  (`verify.MetadataImage`, what the log holds) equal what ZooKeeper now holds for those entities.
  Deleted entities get their removal records. This is the mirror: diff(log, ZooKeeper) for the
  notified entities.

Keys (`zkreader.EntityKey`, one per entity kind; see its docstring) name entities as ZooKeeper
stores them. Within one call the records come grouped by kind in `zkreader.ENTITY_KINDS` order
(brokers, topics, partitions, topic configs, broker configs, quotas, producer ids, ACLs, tokens:
a broker before a partition naming it, a topic before its partitions, I2), and within a kind in
the order the keys were given (notification order; `bulk_entity_keys` gives the bulk order).
Overlapping keys collapse: a `topic` key covers its `partition` and `topic_config` keys.

The diff against the log's image (`delta_records`) is `migrate.translate.delta`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from migrate.preflight.findings import Finding
from migrate.translate.acls import acl_path, acl_records, acl_resource_sort_key
from migrate.translate.brokers import broker_records
from migrate.translate.configs import DEFAULT_ENTITY, broker_config_records
from migrate.translate.framing import TranslationOptions, producer_id_records, require_migration
from migrate.translate.quotas import (
    quota_entity,
    quota_records,
    scram_records,
)
from migrate.translate.tokens import token_path, token_records
from migrate.translate.topics import topic_records
from verify import (
    MetadataImage,
)
from writers import (
    ACL_PATTERN_TYPES,
    ACL_RESOURCE_TYPES,
    BROKER_RESOURCE,
    SCRAM_MECHANISMS,
    MetadataRecord,
    MetadataVersion,
    kafka_name,
    sanitize,
)
from zkreader import (
    AclResource,
    ClusterSnapshot,
    ConfigZnode,
    EntityKey,
    PartitionState,
    Topic,
    entity_key_for_path,
    migrating_topic,
)

__all__ = [
    "EntityDelta",
    "EntityKey",
    "bulk_entity_keys",
    "entity_key_for_path",
    "entity_records",
    "resync_keys",
]



@dataclass(slots=True)
class EntityDelta:
    """Records of one or more entities, and what kept parts of them out.

    Attributes:
        records: metadata records in log order (no framing records).
        blockers: findings for parts ZooKeeper holds that the records leave out.
    """

    records: list[MetadataRecord] = field(default_factory=list)
    blockers: list[Finding] = field(default_factory=list)

    def extend(self, other: EntityDelta) -> None:
        """Append another entity's records and blockers."""
        self.records += other.records
        self.blockers += other.blockers


@dataclass(slots=True)
class EntityContext:
    """What every entity's mapping needs besides the entity: parsed once per call."""

    mv: MetadataVersion
    secret: str | None = field(repr=False)
    cluster_id: str
    acls: dict[tuple[str, str, str], AclResource] | None = None  # index, built on first use
    dir_cluster: str | None = None  # offline: PartitionRecords name prepared broker dirs
    offline: bool = False  # every broker stopped: PartitionRecords name no leader


def entity_context(snapshot: ClusterSnapshot, mv: MetadataVersion,
                   options: TranslationOptions) -> EntityContext:
    """What the mapping needs besides the entity (for `translate`, which parsed `mv` already)."""
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else ""
    return EntityContext(mv, options.password_encoder_secret, cluster_id,
                dir_cluster=replica_dir_cluster(snapshot, options.offline),
                offline=options.offline)


def replica_dir_cluster(snapshot: ClusterSnapshot, offline: bool) -> str | None:
    """The cluster id whose prepared broker log dirs the offline `PartitionRecord`s name
    (`prepare-broker` derives the same ids from each dir's own meta.properties), or None:
    online, the brokers run with their own dirs, and without `/cluster/id` there is no id."""
    if not offline or snapshot.cluster_id is None:
        return None
    return snapshot.cluster_id.cluster_id


def context_for(snapshot: ClusterSnapshot, options: TranslationOptions) -> EntityContext:
    require_migration(options.metadata_version)
    return entity_context(snapshot, options.metadata_version, options)


# ------------------------------------------------------------------------- keys of a snapshot


def bulk_entity_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    """Every entity of a snapshot, in the bulk log's order (`migrate.translate.translation`'s
    docstring).

    Topics that do not migrate (queued for deletion, or without id) are left out.
    """
    for broker_id in sorted(snapshot.brokers):
        yield EntityKey.broker(broker_id)
    for name in sorted(snapshot.topics):
        if migrating_topic(snapshot, name):
            yield EntityKey.topic(name)
    for entity in sorted(snapshot.broker_configs, key=_broker_entity_key):
        yield EntityKey("broker_config", entity)
    for user in sorted(snapshot.user_configs):
        yield EntityKey("client_quota", f"users/{user}")
    for client in sorted(snapshot.client_configs):
        yield EntityKey("client_quota", f"clients/{client}")
    for user, client in sorted(snapshot.user_client_configs):
        yield EntityKey("client_quota", f"users/{user}/clients/{client}")
    for ip in sorted(snapshot.ip_configs):
        yield EntityKey("client_quota", f"ips/{ip}")
    if snapshot.producer_id_block is not None:
        yield EntityKey("producer_ids", "")
    for resource in sorted(snapshot.acls, key=lambda r: (acl_resource_sort_key(r), acl_path(r))):
        yield EntityKey.acl(resource.pattern_type, resource.resource_type, resource.name)
    for token_id in sorted(snapshot.delegation_tokens):
        yield EntityKey("delegation_token", token_id)


def quota_entity_key(entity: list[dict[str, str | None]]) -> tuple[tuple[str, str | None], ...]:
    """A client-quota record's `entity` list as the image keys it: sorted (type, name) pairs."""
    return tuple(sorted((str(e["entityType"]), e["entityName"]) for e in entity))


def resync_keys(image: MetadataImage, snapshot: ClusterSnapshot) -> list[EntityKey]:
    """Every entity of the log's image or of ZooKeeper: what a full re-sync must diff.

    After a session expiry (watches lost with the session) or a resume, the mirror re-reads the
    whole tree and writes `delta_records(image, snapshot, resync_keys(image, snapshot), ...)`:
    the entities ZooKeeper has, plus those only the log still holds (so they get removed).
    Names in the image are KRaft's (desanitized, "" for the default broker); the keys give them
    back as ZooKeeper stores them (`writers.sanitize`, `<default>`).

    Returns:
        The snapshot's keys in bulk order, then the image-only ones.
    """
    keys = dict.fromkeys(bulk_entity_keys(snapshot))
    for broker_id in sorted(image.cluster.brokers):
        keys.setdefault(EntityKey.broker(broker_id), None)
    for name in sorted(image.topics.by_name):
        keys.setdefault(EntityKey.topic(name), None)
    for rtype, rname in sorted(image.configs.resources):
        if rtype == BROKER_RESOURCE:
            keys.setdefault(EntityKey("broker_config", rname or DEFAULT_ENTITY), None)
    quota_entities = set(image.client_quotas.entities)
    quota_entities |= {((("user", user),)) for user, _ in image.scram.credentials}
    covered = {quota_entity_key(quota_entity(k.name)) for k in keys if k.kind == "client_quota"}
    for entity in sorted(quota_entities - covered, key=repr):
        keys.setdefault(EntityKey("client_quota", _quota_entity_path(entity)), None)
    if image.producer_ids.next_producer_id >= 0:
        keys.setdefault(EntityKey("producer_ids", ""), None)
    for acl in sorted(image.acls.acls.values()):
        pattern = kafka_name(ACL_PATTERN_TYPES, acl.pattern_type)
        rtype_name = kafka_name(ACL_RESOURCE_TYPES, acl.resource_type)
        if pattern is None or rtype_name is None:
            continue  # not a resource ZooKeeper's stores can name
        stored_type = "".join(part.capitalize() for part in rtype_name.split("_"))
        keys.setdefault(EntityKey.acl(pattern, stored_type, acl.resource_name), None)
    for token_id in sorted(image.delegation_tokens.tokens):
        keys.setdefault(EntityKey("delegation_token", token_id), None)
    return list(keys)


_QUOTA_DIRS = {"user": "users", "client-id": "clients", "ip": "ips"}


def _quota_entity_path(entity: tuple[tuple[str, str | None], ...]) -> str:
    """`((user, a), (client-id, b))` -> `users/a/clients/b`, names as ZooKeeper stores them.

    User and client-id names are sanitized there (Kafka's `ConfigCommand`); IPs are not.
    """
    order = {"user": 0, "client-id": 1, "ip": 2}
    parts = []
    for kind, name in sorted(entity, key=lambda e: order.get(e[0], 9)):
        stored = DEFAULT_ENTITY if name is None else name if kind == "ip" else sanitize(name)
        parts += [_QUOTA_DIRS[kind], stored]
    return "/".join(parts)


def _broker_entity_key(entity: str) -> tuple[int, int, str]:
    """`<default>` first, then numeric broker ids in numeric order, then anything else."""
    if entity == DEFAULT_ENTITY:
        return (0, 0, "")
    if entity.isdigit():
        return (1, int(entity), "")
    return (2, 0, entity)


# ------------------------------------------------------------------ lookups in a snapshot part


def config_znode(snapshot: ClusterSnapshot, entity_path: str) -> ConfigZnode | None:
    parts = entity_path.split("/")
    if len(parts) == 4:
        return snapshot.user_client_configs.get((parts[1], parts[3]))
    table: Mapping[str, ConfigZnode] = {
        "topics": snapshot.topic_configs,
        "brokers": snapshot.broker_configs,
        "users": snapshot.user_configs,
        "clients": snapshot.client_configs,
        "ips": snapshot.ip_configs,
    }.get(parts[0], {})
    return table.get(parts[1])


def acl_resource(snapshot: ClusterSnapshot, key: EntityKey,
                 ctx: EntityContext) -> AclResource | None:
    if ctx.acls is None:
        ctx.acls = {(r.pattern_type, r.resource_type, r.name): r for r in snapshot.acls}
    pattern, resource_type, name = key.name.split("/", 2)
    return ctx.acls.get((pattern, resource_type, name))


def _states(snapshot: ClusterSnapshot, topic: Topic) -> dict[int, PartitionState | None]:
    return {p: snapshot.partition_states.get((topic.name, p)) for p in topic.assignment}


# ------------------------------------------------------------- one entity, from nothing


def entity_records(
    key: EntityKey, snapshot: ClusterSnapshot, options: TranslationOptions
) -> EntityDelta:
    """The records of one entity as `snapshot` holds it (the diff of nothing against it).

    Args:
        key: the entity.
        snapshot: a snapshot (whole or partial) holding it; absent means no records.
        options: a `TranslationOptions` (metadata.version, password secret).

    Returns:
        The entity's records, exactly as the bulk copy writes them, and its blockers.

    Raises:
        BadFlagError: the metadata.version is unknown or predates ZK migration.
        TranslationError: a znode holds data that cannot be expressed (names the path).
    """
    return records_from_nothing(key, snapshot, context_for(snapshot, options))


def records_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                         ctx: EntityContext) -> EntityDelta:
    """`entity_records` with the context already made (the bulk loop calls this per entity)."""
    out = EntityDelta()
    kind = key.kind
    if kind == "broker":
        broker = snapshot.brokers.get(int(key.name))
        if broker is not None:
            out.records = broker_records(broker, ctx.mv, ctx.cluster_id)
    elif kind == "topic":
        if migrating_topic(snapshot, key.name):
            topic = snapshot.topics[key.name]
            out.records = topic_records(topic, _states(snapshot, topic),
                                        snapshot.topic_configs.get(key.name), ctx.mv,
                                        ctx.dir_cluster, ctx.offline)
    elif kind == "broker_config":
        znode = snapshot.broker_configs.get(key.name)
        if znode is not None:
            out.records, out.blockers = broker_config_records(znode, ctx.secret)
    elif kind == "client_quota":
        znode = config_znode(snapshot, key.name)
        if znode is not None:
            out.extend(scram_from_nothing(znode, ctx))
            out.records += quota_records(znode)
    elif kind == "producer_ids":
        if snapshot.producer_id_block is not None:
            out.records = producer_id_records(snapshot.producer_id_block)
    elif kind == "acl":
        resource = acl_resource(snapshot, key, ctx)
        if resource is not None:
            out.records = acl_records(resource)
    elif kind == "delegation_token":
        token = snapshot.delegation_tokens.get(key.name)
        if token is not None:
            if ctx.mv.supports_delegation_tokens:
                out.records = token_records(token)
            else:
                out.blockers.append(Finding(
                    "TOKENS_NEED_NEWER_METADATA_VERSION",
                    f"delegation tokens cannot be written at metadata.version {ctx.mv.name} "
                    "(they need 3.6-IV2 or later); clients using this token would be refused.",
                    token_path(token),
                ))
    elif kind in ("partition", "topic_config"):
        pass  # parts of a topic: from nothing, the topic key writes them
    else:
        raise ValueError(f"unknown entity kind {kind!r}")
    return out


def scram_from_nothing(znode: ConfigZnode, ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    if not znode.entity_path.startswith("users/") or znode.entity_path.count("/") != 1:
        return out
    if not any(m in znode.config for m in SCRAM_MECHANISMS):
        return out
    if ctx.mv.supports_scram:
        out.records = scram_records(znode)
    else:
        out.blockers.append(Finding(
            "SCRAM_NEEDS_NEWER_METADATA_VERSION",
            f"SCRAM credentials cannot be written at metadata.version {ctx.mv.name} "
            "(they need 3.5-IV2 or later); the user could no longer authenticate.",
            f"/config/{znode.entity_path}",
        ))
    return out
