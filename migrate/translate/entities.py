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

The diff against the log's image (`delta_records`) is `migrate.translate.delta`. Both name no
kind: each kind's code is its registry entry (`migrate.translate.kinds`), which they iterate.
"""

from __future__ import annotations

from collections.abc import Iterator

from migrate.translate.framing import TranslationOptions
from migrate.translate.kind import (
    EntityContext,
    EntityDelta,
    context_for,
    entity_context,
    replica_dir_cluster,
)
from migrate.translate.kinds import BY_NAME, KINDS
from verify import MetadataImage
from zkreader import ClusterSnapshot, EntityKey, entity_key_for_path

__all__ = [
    "EntityContext",
    "EntityDelta",
    "EntityKey",
    "bulk_entity_keys",
    "context_for",
    "entity_context",
    "entity_key_for_path",
    "entity_records",
    "records_from_nothing",
    "replica_dir_cluster",
    "resync_keys",
]


# ------------------------------------------------------------------------- keys of a snapshot


def bulk_entity_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    """Every entity of a snapshot, in the bulk log's order (`migrate.translate.translation`'s
    docstring): each kind's keys (`EntityKind.snapshot_keys`), kinds in log order.

    Topics that do not migrate (queued for deletion, or without id) are left out.
    """
    for kind in KINDS:
        yield from kind.snapshot_keys(snapshot)


def resync_keys(image: MetadataImage, snapshot: ClusterSnapshot) -> list[EntityKey]:
    """Every entity of the log's image or of ZooKeeper: what a full re-sync must diff.

    After a session expiry (watches lost with the session) or a resume, the mirror re-reads the
    whole tree and writes `delta_records(image, snapshot, resync_keys(image, snapshot), ...)`:
    the entities ZooKeeper has, plus those only the log still holds (so they get removed).
    Names in the image are KRaft's (desanitized, "" for the default broker); the keys give them
    back as ZooKeeper stores them (`writers.sanitize`, `<default>`).

    Returns:
        The snapshot's keys in bulk order, then the image-only ones (`EntityKind.image_keys`,
        kinds in log order).
    """
    keys = dict.fromkeys(bulk_entity_keys(snapshot))
    for kind in KINDS:
        for key in list(kind.image_keys(image, keys)):
            keys.setdefault(key, None)
    return list(keys)


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
    """`entity_records` with the context already made: the kind's `from_nothing` (a part of
    another kind, a partition or a topic's configs, writes nothing: its topic key does)."""
    kind = BY_NAME.get(key.kind)
    if kind is None:
        raise ValueError(f"unknown entity kind {key.kind!r}")
    return kind.from_nothing(key, snapshot, ctx)
