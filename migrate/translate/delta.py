"""The online mirror's diff: what makes the log's image equal what ZooKeeper now holds.

The per-entity mapping is `migrate.translate.entities`; this module diffs its records against
`verify.MetadataImage` (what the log holds). Each kind's diff is its registry entry's `diff`
(`migrate.translate.kinds`); this module orders the keys and names no kind.

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

from collections.abc import Iterable

from migrate.errors import BlockersFoundError
from migrate.translate.framing import TranslationOptions
from migrate.translate.kind import EntityContext, EntityDelta, context_for
from migrate.translate.kinds import BY_NAME, ORDER
from verify import MetadataImage
from writers import MetadataRecord
from zkreader import ClusterSnapshot, EntityKey

__all__ = ["delta_records", "diff_entities", "refuse_reused_topic_ids"]


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
    """`delta_records` with the context already made (`translate` calls it on `EMPTY`).

    Keys go in log order of their kinds, and in the given order within a kind. A key of a part
    (`EntityKind.part_of`) is skipped when the key of the whole, same name, is given too.
    """
    wanted = list(dict.fromkeys(keys))
    given = {(k.kind, k.name) for k in wanted}
    out = EntityDelta()
    seen: dict[str, set[object]] = {}
    for key in sorted(wanted, key=lambda k: ORDER[k.kind]):  # stable: keeps given order
        kind = BY_NAME[key.kind]
        if kind.part_of and (kind.part_of, key.name) in given:
            continue  # the whole's key covers it
        got = kind.diff(key, image, snapshot_part, ctx)
        if kind.dedupe is not None:
            got.records = kind.dedupe(got.records, seen.setdefault(kind.name, set()))
        out.extend(got)
    return out
