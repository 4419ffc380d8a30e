"""What one entity kind is (`EntityKind`), and what every kind's code shares.

An entity kind (a broker, a topic, an ACL resource, ...) is one entry of the registry,
`migrate.translate.kinds.KINDS`. Its entry is the one place that names everything the migration
does with that kind: the ZooKeeper side (`zkreader.ZK_KINDS`: its znode paths, the key of a
notified path, the znode decoders, where a format that differs by Kafka version is told apart),
its translation (the records of the entity as ZooKeeper holds it), its delta (what makes the
log's image equal ZooKeeper for it), which entities a snapshot and an image hold, the record types
it writes, and its parts of `verify`'s expected image, parity rows and the `snapshot` command's
JSON lines. The generic code (`entities.py`, `delta.py`, `translation.py`) iterates the
registry and names no kind; `tests/unit/migrate/test_kinds.py` checks every entry is complete.

Each kind's code lives in its own module (`brokers`, `topics`, `configs`, `quotas`,
`producer_ids`, `acls`, `tokens`), which ends with its entry. This module sits below them: the
entry's type, the per-call context (`EntityContext`) and the result (`EntityDelta`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from migrate.preflight.findings import Finding
from migrate.translate.framing import TranslationOptions, require_migration
from verify import MetadataImage
from writers import MetadataRecord, MetadataVersion
from zkreader import AclResource, ClusterSnapshot, EntityKey, ZkKind

__all__ = [
    "EntityContext",
    "EntityDelta",
    "EntityKind",
    "context_for",
    "entity_context",
    "replica_dir_cluster",
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


FromNothing = Callable[[EntityKey, ClusterSnapshot, EntityContext], EntityDelta]
"""The records of one entity as a snapshot holds it (none when absent), and its blockers."""

Diff = Callable[[EntityKey, MetadataImage, ClusterSnapshot, EntityContext], EntityDelta]
"""The records that make the image equal the snapshot for one entity (removals when absent)."""

SnapshotKeys = Callable[[ClusterSnapshot], Iterable[EntityKey]]
"""The kind's entities in a whole snapshot, in bulk-log order."""

ImageKeys = Callable[[MetadataImage, Collection[EntityKey]], Iterable[EntityKey]]
"""The kind's entities the log's image holds, given the keys already named (a re-sync diffs
both sides), named as ZooKeeper would store them."""


@dataclass(frozen=True, slots=True)
class EntityKind:
    """One entity kind: every role the migration gives it (see the module docstring).

    Attributes:
        name: the kind's name, as `zkreader.EntityKey.kind` holds it.
        zk: the ZooKeeper side: paths, key of a path, decoders and their formats
            (`zkreader.ZK_KINDS[name]`).
        from_nothing: translation, the entity's records on an empty log.
        diff: the delta against the log's image (the online mirror's, and the bulk copy's on an
            empty image).
        snapshot_keys: its entities in a whole snapshot, in the bulk log's order.
        image_keys: its entities only the log's image may still hold (a re-sync removes them).
        records: the record types it owns (writes on its own behalf); a `CONFIG_RECORD` is
            qualified by its resource (`CONFIG_RECORD:TOPIC`, `CONFIG_RECORD:BROKER`). Each
            type is owned by exactly one kind.
        part_of: the kind that covers this one within a call (a `topic` key writes its
            partitions and configs): its keys are skipped when that kind's key for the same
            name is given. Empty for a whole entity.
        expected: the `verify.MetadataImage` parts its expected image fills
            (`verify`'s `expected_image`).
        parity: the parity row kinds it owns (`verify.PARITY_KINDS`).
        snapshot_lines: the `"kind"` values of the `snapshot` command's JSON lines it owns
            (a `config` line qualified by its `entity_type`: `config:topics`).
        dedupe: within one call, drops what an earlier key of the kind already wrote, given
            the set the call keeps for the kind (ACLs: one binding, one id); None keeps all.
    """

    name: str
    zk: ZkKind
    from_nothing: FromNothing
    diff: Diff
    snapshot_keys: SnapshotKeys
    image_keys: ImageKeys
    records: frozenset[str]
    expected: tuple[str, ...]
    parity: tuple[str, ...]
    snapshot_lines: tuple[str, ...]
    part_of: str = ""
    dedupe: Callable[[list[MetadataRecord], set[object]], list[MetadataRecord]] | None = None


def no_keys(*_: object) -> tuple[EntityKey, ...]:
    """The keys of a kind that is part of another one: that kind names the entity."""
    return ()
