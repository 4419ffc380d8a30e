"""The online mirror's diff: what makes the log's image equal what ZooKeeper now holds.

The per-entity mapping is `migrate.translate.entities`; this module diffs its records against
`verify.MetadataImage` (what the log holds).

API for the online mirror (all public, exported from `migrate`)::

    from migrate import EntityKey, delta_records, entity_key_for_path, closing_records
    from verify import MetadataImage, apply_records, load_log
    from zkreader import changed_entities, read_entities

    image = ...                                   # what the log holds (replay, or the pre-copy)
    events = session.changes.drain()              # notifications, oldest first
    keys = changed_entities(session, [e.path for e in events])   # re-lists notified lists
    part = read_entities(session, keys)           # re-read, watches re-armed
    delta = delta_records(image, part, keys, options)
    append(delta.records)                         # durable on a majority
    image = apply_records(image, delta.records)   # now the log holds that
    ...
    append(closing_records(mv))                   # the cutover: MIGRATION + EndTransaction

After a session expiry (every watch lost) or on resume, re-read the whole tree with
`zkreader.read_cluster(session)` (watches armed again) and write
`delta_records(image, snapshot, resync_keys(image, snapshot), options)`: the keys of both sides,
so what only the log still holds is removed.

`delta.blockers` lists what could not be written (an undecodable broker password, SCRAM below
3.5-IV2, ...); the records leave those parts out, as the bulk copy does.

What each kind's diff writes (hand-written expected records in tests/unit/migrate/test_entities.py;
Kafka 3.9.1's own replay of them in tests/oracle/test_oracle_entity_delta.py):

    broker          RegisterBrokerRecord when new or different (a re-registration has a new
                    czxid: new epoch and incarnation); UnregisterBrokerRecord when gone. A
                    registration the broker made itself (with the stand-in) is kept while
                    ZooKeeper's listeners and rack match it.
    topic           TopicRecord + ConfigRecords + PartitionRecords when new; RemoveTopicRecord
                    when gone, queued for deletion or without id; a new topic id or a lost
                    partition: RemoveTopicRecord then the topic anew. Otherwise its configs'
                    diff and each partition's: new -> PartitionRecord; changed -> see below.
    partition       PartitionChangeRecord when it replays to exactly ZooKeeper's state: the
                    state znode's version is the image's partitionEpoch + 1 (a change record
                    raises it by one) and the leader epoch is unchanged (no `leader` field) or
                    one more (`leader` set, even to the same broker, which bumps it). Watches
                    fire once, so several updates can fold into one re-read and the version jumps
                    by more: then a full PartitionRecord replaces the partition, carrying the
                    znode's version as partitionEpoch, so parity holds again.
    configs         ConfigRecord per new or changed key; ConfigRecord with a null value per
                    deleted key (topic configs: `topic_config` or within `topic`).
    client_quota    ClientQuotaRecord per new or changed key; remove=true per deleted key; for
                    `users/<u>` also UserScramCredentialRecord per new or changed credential and
                    RemoveUserScramCredentialRecord per deleted one.
    producer_ids    ProducerIdsRecord when the next producer id differs (a block is never
                    removed).
    acl             AccessControlEntryRecord per new binding (content-derived id);
                    RemoveAccessControlEntryRecord per binding gone (by the id the log holds).
    delegation_token  DelegationTokenRecord when new or different; RemoveDelegationTokenRecord
                    when gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from migrate.errors import BlockersFoundError, TranslationError
from migrate.translate.acls import acl_records
from migrate.translate.configs import (
    DEFAULT_ENTITY,
    broker_config_records,
    broker_resource_name,
)
from migrate.translate.entities import (
    EntityContext,
    EntityDelta,
    acl_resource,
    config_znode,
    context_for,
    quota_entity_key,
    records_from_nothing,
    scram_from_nothing,
)
from migrate.translate.framing import TranslationOptions, producer_id_records
from migrate.translate.quotas import (
    quota_entity,
    quota_records,
)
from migrate.translate.topics import partition_record
from verify import (
    ClusterImage,
    MetadataImage,
    PartitionImage,
    ScramCredential,
    StandardAcl,
    TopicImage,
)
from verify.delta import ClusterDelta
from writers import (
    ACL_PATTERN_TYPES,
    ACL_RESOURCE_TYPES,
    BROKER_RESOURCE,
    NO_LEADER_CHANGE,
    SCRAM_MECHANISMS,
    TOPIC_RESOURCE,
    FieldValue,
    MetadataRecord,
    desanitize,
    kafka_code,
)
from zkreader import (
    ENTITY_KINDS,
    ClusterSnapshot,
    ConfigZnode,
    EntityKey,
    Topic,
    migrating_topic,
)

__all__ = ["delta_records", "diff_entities", "refuse_reused_topic_ids"]

_KIND_ORDER = {kind: i for i, kind in enumerate(ENTITY_KINDS)}


def delta_records(
    image: MetadataImage,
    snapshot_part: ClusterSnapshot,
    keys: Iterable[EntityKey],
    options: TranslationOptions,
) -> EntityDelta:
    """The records that make `image` equal ZooKeeper's current state for `keys`.

    Args:
        image: what the log holds (replayed, or kept current with `verify.apply_records`).
        snapshot_part: ZooKeeper's current state of (at least) those entities, as
            `zkreader.read_entities(session, keys)` returns it; an entity absent from it is
            deleted in ZooKeeper.
        keys: the entities to bring in step; an entity not named is not looked at.
        options: a `TranslationOptions` (metadata.version, password secret).

    Returns:
        Records in log order of the keys (empty when the log already agrees) and blockers.
        `delta_records(MetadataImage.EMPTY, snapshot, bulk_entity_keys(snapshot), options)`
        is the bulk copy's body.

    Raises:
        BadFlagError: the metadata.version is unknown or predates ZK migration.
        TranslationError: a znode holds data that cannot be expressed (names the path).
        BlockersFoundError: the records would give a topic an id another topic holds
            (`refuse_reused_topic_ids`).
    """
    delta = diff_entities(image, snapshot_part, keys, context_for(snapshot_part, options))
    refuse_reused_topic_ids(image, delta.records)
    return delta


def refuse_reused_topic_ids(image: MetadataImage, records: Iterable[MetadataRecord]) -> None:
    """Refuse a delta that would give a topic an id another topic holds.

    Kafka keys topics by id: replayed, the second `TopicRecord` with an id takes the first
    topic's place and that topic is lost, with no error anywhere (a copied topic znode does
    this). The records are followed in log order, so a topic removed earlier in the same delta
    frees its id. The bulk copy never gets here: pre-flight's `DUPLICATE_TOPIC_ID` blocks it.

    Raises:
        BlockersFoundError: naming both topics' znodes and the id (exit 1); nothing of the
            delta was written.
    """
    owners: dict[str, str | None] = {}  # this delta's changes over `image.topics.by_id`
    for record in records:
        if record.type == "REMOVE_TOPIC_RECORD":
            owners[str(record.data["topicId"])] = None
        elif record.type == "TOPIC_RECORD":
            topic_id, name = str(record.data["topicId"]), str(record.data["name"])
            if topic_id in owners:
                owner = owners[topic_id]
            else:
                held = image.topics.by_id.get(topic_id)
                owner = held.name if held is not None else None
            if owner is not None and owner != name:
                raise BlockersFoundError(
                    f"DUPLICATE_TOPIC_ID /brokers/topics/{name}: it has topic_id {topic_id}, the "
                    f"id of /brokers/topics/{owner}: Kafka keys topics by id, so writing it "
                    "would silently lose one of the two topics. Nothing of this change was "
                    "written. Delete the copied znode (or recreate that topic so it gets its "
                    "own id), then run the same command again: it resumes from its journal.")
            owners[topic_id] = name


def diff_entities(image: MetadataImage, snapshot_part: ClusterSnapshot,
                  keys: Iterable[EntityKey], ctx: EntityContext) -> EntityDelta:
    """`delta_records` with the context already made (`translate` calls it on `EMPTY`)."""
    wanted = list(dict.fromkeys(keys))
    topics = {k.name for k in wanted if k.kind == "topic"}
    out = EntityDelta()
    added_acls: set[object] = set()
    for key in sorted(wanted, key=lambda k: _KIND_ORDER[k.kind]):  # stable: keeps given order
        if key.kind in ("partition", "topic_config") and key.name in topics:
            continue  # the topic key covers it
        got = _diff(key, image, snapshot_part, ctx)
        if key.kind == "acl":  # one binding, one id: never added twice in one append
            kept = []
            for record in got.records:
                if record.type == "ACCESS_CONTROL_ENTRY_RECORD":
                    if record.data["id"] in added_acls:
                        continue
                    added_acls.add(record.data["id"])
                kept.append(record)
            got.records = kept
        out.extend(got)
    return out


def _diff(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
          ctx: EntityContext) -> EntityDelta:
    kind = key.kind
    if kind == "broker":
        return _diff_broker(key, image.cluster, snap, ctx)
    if kind == "topic":
        return _diff_topic(key.name, image, snap, ctx)
    if kind == "partition":
        return EntityDelta(_diff_partition_key(key, image, snap))
    if kind == "topic_config":
        topic = image.topics.by_name.get(key.name)
        if topic is None:
            return EntityDelta()  # not in the log: its topic key writes the configs
        znode = snap.topic_configs.get(key.name)
        return EntityDelta(_config_diff(TOPIC_RESOURCE, key.name,
                                        znode.config if znode else {}, image))
    if kind == "broker_config":
        return _diff_broker_config(key, image, snap, ctx)
    if kind == "client_quota":
        return _diff_client_quota(key, image, snap, ctx)
    if kind == "producer_ids":
        block = snap.producer_id_block
        if block is None:
            return EntityDelta()  # Kafka never removes the block; nothing can express it
        record = producer_id_records(block)[0]
        held = image.producer_ids
        if (held.next_producer_id, held.broker_id, held.broker_epoch) == (
                record.data["nextProducerId"], record.data["brokerId"],
                record.data["brokerEpoch"]):
            return EntityDelta()
        return EntityDelta([record])
    if kind == "acl":
        return EntityDelta(_diff_acl(key, image, snap, ctx))
    if kind == "delegation_token":
        return _diff_token(key, image, snap, ctx)
    raise ValueError(f"unknown entity kind {kind!r}")


# -- brokers


def _diff_broker(key: EntityKey, held: ClusterImage, snap: ClusterSnapshot,
                 ctx: EntityContext) -> EntityDelta:
    broker_id = int(key.name)
    registered = held.brokers.get(broker_id)
    wanted = records_from_nothing(key, snap, ctx)
    if not wanted.records:
        if registered is None:
            return EntityDelta()
        return EntityDelta([MetadataRecord(
            "UNREGISTER_BROKER_RECORD", 0,
            {"brokerId": broker_id, "brokerEpoch": registered.epoch})])
    delta = ClusterDelta(ClusterImage.EMPTY)
    delta.replay_register(wanted.records[0].data)
    copied = delta.apply().brokers[broker_id]
    if copied == registered:
        return EntityDelta()
    if registered is not None and registered.registered_by_broker:
        # The broker registered itself with the stand-in (its own incarnation, epoch = offset
        # of its record). That registration supersedes ours, as it supersedes the ZooKeeper
        # copy in Kafka's controller; overwriting it would make its heartbeats stale. A broker
        # that re-registers in ZooKeeper re-registers with the quorum too, so only listeners
        # or rack that differ from ZooKeeper's are written over.
        if (copied.endpoints, copied.rack) == (registered.endpoints, registered.rack):
            return EntityDelta()
    return wanted


# -- topics and partitions


def _diff_topic(name: str, image: MetadataImage, snap: ClusterSnapshot,
                ctx: EntityContext) -> EntityDelta:
    held = image.topics.by_name.get(name)
    key = EntityKey.topic(name)
    if not migrating_topic(snap, name):
        if held is None:
            return EntityDelta()
        return EntityDelta([_remove_topic(held)])
    topic = snap.topics[name]
    if held is None:
        return records_from_nothing(key, snap, ctx)
    if held.topic_id != topic.topic_id or not set(held.partitions) <= set(topic.assignment):
        # a new topic under the old name, or partitions KRaft cannot remove: write it anew
        out = EntityDelta([_remove_topic(held)])
        out.extend(records_from_nothing(key, snap, ctx))
        return out
    znode = snap.topic_configs.get(name)
    records = _config_diff(TOPIC_RESOURCE, name, znode.config if znode else {}, image)
    for p in sorted(topic.assignment):
        state = snap.partition_states.get((name, p))
        target = partition_record(topic, p, state)
        current = held.partitions.get(p)
        if current is None:
            records.append(target)
        else:
            records += _partition_change(current, target)
    return EntityDelta(records)


def _remove_topic(held: TopicImage) -> MetadataRecord:
    return MetadataRecord("REMOVE_TOPIC_RECORD", 0, {"topicId": held.topic_id})


def _diff_partition_key(key: EntityKey, image: MetadataImage,
                        snap: ClusterSnapshot) -> list[MetadataRecord]:
    held = image.topics.by_name.get(key.name)
    current = held.partitions.get(key.partition) if held is not None else None
    state = snap.partition_states.get((key.name, key.partition))
    if held is None or current is None or state is None:
        # a new topic or partition is written by its topic key (its znode was notified too);
        # a state znode only disappears with its topic, which its topic key removes
        return []
    topic = snap.topics.get(key.name)
    if topic is None or topic.topic_id != held.topic_id or key.partition not in topic.assignment:
        topic = Topic(
            name=key.name, json_version=3, topic_id=held.topic_id,
            assignment={key.partition: current.replicas},
            adding_replicas={key.partition: current.adding_replicas}
            if current.adding_replicas else {},
            removing_replicas={key.partition: current.removing_replicas}
            if current.removing_replicas else {},
            stat=state.stat,
        )
    return _partition_change(current, partition_record(topic, key.partition, state))


def _partition_change(current: PartitionImage, target: MetadataRecord) -> list[MetadataRecord]:
    """The record that turns `current` into the partition `target` (a PartitionRecord) describes.

    A PartitionChangeRecord when replaying it gives exactly the target, else the full
    PartitionRecord (see the module docstring: folded notifications).
    """
    t: Mapping[str, Any] = target.data
    want = (tuple(t["replicas"]), tuple(t["isr"]), tuple(t["removingReplicas"]),
            tuple(t["addingReplicas"]), t["leader"], t["leaderEpoch"], t["partitionEpoch"],
            t["leaderRecoveryState"])
    have = (current.replicas, current.isr, current.removing_replicas, current.adding_replicas,
            current.leader, current.leader_epoch, current.partition_epoch,
            current.leader_recovery_state)
    if want == have:
        return []
    if t["partitionEpoch"] != current.partition_epoch + 1:
        return [target]
    if t["leaderEpoch"] == current.leader_epoch and t["leader"] == current.leader:
        leader = NO_LEADER_CHANGE
    elif t["leaderEpoch"] == current.leader_epoch + 1:
        leader = t["leader"]  # set even when unchanged: the field is what bumps the epoch
    else:
        return [target]
    data: dict[str, FieldValue] = {"partitionId": t["partitionId"], "topicId": t["topicId"]}
    if want[1] != current.isr:
        data["isr"] = list(want[1])
    if leader != NO_LEADER_CHANGE:
        data["leader"] = leader
    if want[0] != current.replicas:
        data["replicas"] = list(want[0])
    if want[2] != current.removing_replicas:
        data["removingReplicas"] = list(want[2])
    if want[3] != current.adding_replicas:
        data["addingReplicas"] = list(want[3])
    if want[7] != current.leader_recovery_state:
        data["leaderRecoveryState"] = want[7]
    return [MetadataRecord("PARTITION_CHANGE_RECORD", 0, data)]


# -- configs


def _config_diff(resource_type: int, resource_name: str, wanted: Mapping[str, str],
                 image: MetadataImage, *, keep: Iterable[str] = ()) -> list[MetadataRecord]:
    """ConfigRecords turning the image's keys of one resource into `wanted`, sorted by key.

    Keys in `keep` are left as the log holds them (a value that could not be decoded).
    """
    held: Mapping[str, str] = image.configs.resources.get((resource_type, resource_name), {})
    kept = set(keep)
    out = []
    for key in sorted(set(wanted) | set(held)):
        if key in kept:
            continue
        value = wanted.get(key)
        if value == held.get(key):
            continue
        out.append(MetadataRecord("CONFIG_RECORD", 0, {
            "resourceType": resource_type, "resourceName": resource_name, "name": key,
            "value": value,
        }))
    return out


def _diff_broker_config(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                        ctx: EntityContext) -> EntityDelta:
    znode = snap.broker_configs.get(key.name)
    resource = broker_resource_name(f"brokers/{key.name}")
    if znode is None:
        return EntityDelta(_config_diff(BROKER_RESOURCE, resource, {}, image))
    records, blockers = broker_config_records(znode, ctx.secret)
    wanted = {str(r.data["name"]): str(r.data["value"]) for r in records}
    undecoded = set(znode.config) - set(wanted)
    return EntityDelta(_config_diff(BROKER_RESOURCE, resource, wanted, image, keep=undecoded),
                       blockers)


# -- client quotas and SCRAM


def _diff_client_quota(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                       ctx: EntityContext) -> EntityDelta:
    znode = config_znode(snap, key.name)
    out = EntityDelta()
    parts = key.name.split("/")
    if parts[0] == "users" and len(parts) == 2 and parts[1] != DEFAULT_ENTITY:
        out.extend(_diff_scram(parts[1], znode, image, ctx))
    entity = quota_entity(key.name)
    held: Mapping[str, float] = image.client_quotas.entities.get(quota_entity_key(entity), {})
    wanted = {str(r.data["key"]): r for r in quota_records(znode)} if znode else {}
    for name in sorted(set(wanted) | set(held)):
        record = wanted.get(name)
        if record is None:
            out.records.append(MetadataRecord("CLIENT_QUOTA_RECORD", 0, {
                "entity": [dict(e) for e in entity], "key": name, "value": 0.0,
                "remove": True,
            }))
        elif record.data["value"] != held.get(name):
            out.records.append(record)
    return out


def _diff_scram(stored_user: str, znode: ConfigZnode | None, image: MetadataImage,
                ctx: EntityContext) -> EntityDelta:
    if znode is not None:
        wanted = scram_from_nothing(znode, ctx)
        if wanted.blockers:
            return wanted
    else:
        wanted = EntityDelta()
    try:
        user = desanitize(stored_user)
    except ValueError as exc:
        raise TranslationError(
            f"/config/users/{stored_user}: entity name is not validly sanitized: {exc}") from None
    by_mechanism = {int(str(r.data["mechanism"])): r for r in wanted.records}
    out = EntityDelta()
    for mechanism in sorted(SCRAM_MECHANISMS.values()):
        held = image.scram.credentials.get((user, mechanism))
        record = by_mechanism.get(mechanism)
        if record is None:
            if held is not None:
                out.records.append(MetadataRecord(
                    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0,
                    {"name": user, "mechanism": mechanism}))
            continue
        d: Mapping[str, Any] = record.data
        cred = ScramCredential(bytes(d["salt"]), bytes(d["storedKey"]), bytes(d["serverKey"]),
                               int(d["iterations"]))
        if cred != held:
            out.records.append(record)
    return out


# -- ACLs


def _diff_acl(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot, ctx: EntityContext
              ) -> list[MetadataRecord]:
    pattern, resource_type, name = key.name.split("/", 2)
    rtype = kafka_code(ACL_RESOURCE_TYPES, resource_type)
    ptype = kafka_code(ACL_PATTERN_TYPES, pattern)
    held = {acl: acl_id for acl_id, acl in image.acls.acls.items()
            if (acl.resource_type, acl.pattern_type, acl.resource_name) == (rtype, ptype, name)}
    resource = acl_resource(snap, key, ctx)
    wanted: dict[StandardAcl, MetadataRecord] = {}
    for record in acl_records(resource) if resource is not None else []:
        d: Mapping[str, Any] = record.data
        wanted.setdefault(StandardAcl(d["resourceType"], d["resourceName"], d["patternType"],
                                      d["principal"], d["host"], d["operation"],
                                      d["permissionType"]), record)
    out = [MetadataRecord("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 0, {"id": acl_id})
           for acl, acl_id in sorted(held.items(), key=lambda kv: kv[1]) if acl not in wanted]
    out += [record for acl, record in wanted.items() if acl not in held]
    return out


# -- delegation tokens


def _diff_token(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                ctx: EntityContext) -> EntityDelta:
    held = image.delegation_tokens.tokens.get(key.name)
    wanted = records_from_nothing(key, snap, ctx)
    if wanted.blockers:
        return wanted
    if not wanted.records:
        if held is None:
            return EntityDelta()
        return EntityDelta([MetadataRecord("REMOVE_DELEGATION_TOKEN_RECORD", 0,
                                           {"tokenId": key.name})])
    d: Mapping[str, Any] = wanted.records[0].data
    same = held is not None and (
        held.owner, held.requester, tuple(held.renewers), held.issue_timestamp,
        held.max_timestamp, held.expiration_timestamp,
    ) == (d["owner"], d["requester"], tuple(d["renewers"]), d["issueTimestamp"],
          d["maxTimestamp"], d["expirationTimestamp"])
    return EntityDelta() if same else wanted
