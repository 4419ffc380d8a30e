"""The records that frame a migration (feature level, transaction markers, migration state),
the single `ProducerIdsRecord`, and what a log is written for: `TranslationOptions` and the
checks of `--metadata-version` against `--target-kafka`.

The options live here, at the bottom of `migrate.translate`, because the framing is what most of
them choose (the metadata.version of the header, whether and how the trailer closes the
migration) and because `translation`, `entities` and `delta` all take them: the per-entity
mapping can take the options without importing the translator that calls it.

Order (invariant I2): `FeatureLevelRecord(metadata.version)` is the first record, because every
reader (Kafka's `MetadataLoader`, our replay) needs the metadata.version before it can interpret
the rest. At metadata.version >= 3.6-IV1 the migrated records sit inside a KIP-868 metadata
transaction, `BeginTransactionRecord("ZK Migration")` ... `EndTransactionRecord`, exactly as
Kafka's `QuorumController.MigrationRecordConsumer` writes it, so a controller that finds the log
cut short inside it aborts the partial migration instead of serving it.

`ZkMigrationStateRecord(MIGRATION=1)` closes the migration at every supported metadata.version:
Kafka 3.5-3.9 write it in `completeMigration` with or without transactions (below 3.6-IV1 just
without the End marker). Kafka 3.4 never wrote MIGRATION (its only state record meant
PRE_MIGRATION and used value 1, which 3.5 renumbered); the logs written here are for 3.5+
controllers, which read a non-empty log at >= 3.4-IV0 and need this record to know the data is in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.errors import BadFlagError, TranslationError
from writers import (
    KAFKA_4_0_LATEST_PRODUCTION,
    KAFKA_4_1_LATEST_PRODUCTION,
    KAFKA_4_2_LATEST_PRODUCTION,
    KAFKA_4_3_LATEST_PRODUCTION,
    KAFKA_4_4_LATEST_PRODUCTION,
    LATEST_PRODUCTION,
    MetadataRecord,
    MetadataVersion,
    WriterError,
    parse_metadata_version,
)
from zkreader import ProducerIdBlock

__all__ = [
    "DEFAULT_METADATA_VERSION",
    "KAFKA_4_TARGETS",
    "MIGRATION_TRANSACTION_NAME",
    "SCRAM_RESTATEMENT_TRANSACTION_NAME",
    "TARGETS",
    "TARGET_39",
    "TARGET_40",
    "TARGET_41",
    "TARGET_4X",
    "ZK_MIGRATION_STATE_MIGRATION",
    "ZK_MIGRATION_STATE_POST_MIGRATION",
    "TranslationOptions",
    "closing_records",
    "header_records",
    "opening_records",
    "parse_target_version",
    "producer_id_records",
    "require_migration",
    "require_target",
    "scram_restatement_records",
    "trailer_records",
]

MIGRATION_TRANSACTION_NAME = "ZK Migration"
SCRAM_RESTATEMENT_TRANSACTION_NAME = "SCRAM credentials restated after ZK Migration"
"""The transaction that states the live SCRAM credentials again after the migration's, so
Kafka's loader applies them as a delta of their own (`migrate.online.mirror_delta` says why)."""
ZK_MIGRATION_STATE_MIGRATION = 1
"""`ZkMigrationState.MIGRATION`: data copied, ZooKeeper still mirrored (online migration)."""
ZK_MIGRATION_STATE_POST_MIGRATION = 3
"""`ZkMigrationState.POST_MIGRATION`: the migration is finalised; the cluster never goes back.

What an offline migration writes: a Kafka 3.9 controller with migration disabled that loads
MIGRATION appends POST_MIGRATION itself at activation ("Completing the ZK migration since this
controller was configured with 'zookeeper.metadata.migration.enable' set to 'false'"), and loads
POST_MIGRATION as it is; Kafka 4.x has no migration code and checks neither (its
`ActivationRecordsGenerator.recordsForNonEmptyLog` only aborts an open transaction)."""
_PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"


def header_records(mv: MetadataVersion) -> list[MetadataRecord]:
    """Return the records that open the log: the feature level, then the transaction start.

    Args:
        mv: the metadata.version being written.

    Returns:
        `[FeatureLevelRecord]`, plus `BeginTransactionRecord("ZK Migration")` at >= 3.6-IV1.
    """
    records = [
        MetadataRecord(
            "FEATURE_LEVEL_RECORD",
            0,
            {"name": "metadata.version", "featureLevel": mv.feature_level},
        )
    ]
    if mv.supports_transactions:  # KIP-868 metadata transactions
        records.append(
            MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": MIGRATION_TRANSACTION_NAME})
        )
    return records


def trailer_records(
    mv: MetadataVersion, state: int = ZK_MIGRATION_STATE_MIGRATION
) -> list[MetadataRecord]:
    """Return the records that close the migration.

    Args:
        mv: the metadata.version being written.
        state: the `ZkMigrationState` to record: MIGRATION (online) or POST_MIGRATION (offline).

    Returns:
        `[ZkMigrationStateRecord(state)]`, plus `EndTransactionRecord` at >= 3.6-IV1.
    """
    records = [MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": state})]
    if mv.supports_transactions:  # KIP-868 metadata transactions
        records.append(MetadataRecord("END_TRANSACTION_RECORD", 0, {}))
    return records


def producer_id_records(block: ProducerIdBlock) -> list[MetadataRecord]:
    """Return the `ProducerIdsRecord` for `/latest_producer_id_block`.

    `nextProducerId` is the first id of the *next* block (`block_end + 1`, i.e. block_start +
    1000 for Kafka's 1000-wide blocks): the block in ZooKeeper has already been handed to a
    broker. Kafka 3.4.0-3.5.1 and 3.6.0 wrote `block_start`, so KRaft handed out the same ids
    again (duplicate producer ids, KAFKA-15552).

    Args:
        block: the decoded znode.

    Returns:
        One `ProducerIdsRecord` with `brokerEpoch` -1, as Kafka's migration writes it.

    Raises:
        TranslationError: the block ends before it starts.
    """
    if block.block_end < block.block_start or block.block_start < 0:
        raise TranslationError(
            f"{_PRODUCER_ID_BLOCK_PATH}: block_end {block.block_end} is before block_start "
            f"{block.block_start}"
        )
    return [
        MetadataRecord(
            "PRODUCER_IDS_RECORD",
            0,
            {
                "brokerId": block.broker_id,
                "brokerEpoch": -1,
                "nextProducerId": block.block_end + 1,
            },
        )
    ]


opening_records = header_records
"""The records that open a migration's log (public name for callers that frame it themselves)."""

closing_records = trailer_records
"""The records that close a migration: what the cutover appends after its last delta."""


def scram_restatement_records(credentials: list[MetadataRecord]) -> list[MetadataRecord]:
    """Wrap `UserScramCredentialRecord`s in a transaction of their own.

    Kafka's `MetadataBatchLoader` applies the delta it holds when a BeginTransactionRecord
    that is not the first record it loads since its last delta arrives, so the migration
    transaction becomes an image before these records are replayed on it, even when both reach
    a controller in one fetch (a bare batch after EndTransactionRecord would join that delta).

    Returns:
        `[]` when there is no credential to state; else Begin, the credentials, End.
    """
    if not credentials:
        return []
    return [MetadataRecord("BEGIN_TRANSACTION_RECORD", 0,
                           {"name": SCRAM_RESTATEMENT_TRANSACTION_NAME}),
            *credentials,
            MetadataRecord("END_TRANSACTION_RECORD", 0, {})]


# ------------------------------------------------------------------- what a log is written for

# First metadata.version of each capability (Kafka's MetadataVersion.is*Supported).
TARGET_39 = "3.9"
TARGET_40 = "4.0"
TARGET_41 = "4.1"
TARGET_42 = "4.2"
TARGET_43 = "4.3"
TARGET_44 = "4.4"
TARGET_4X = "4.x"
TARGETS = (TARGET_39, TARGET_40, TARGET_41, TARGET_42, TARGET_43, TARGET_44, TARGET_4X)
_HIGHEST_LEVEL = {TARGET_40: KAFKA_4_0_LATEST_PRODUCTION, TARGET_41: KAFKA_4_1_LATEST_PRODUCTION,
                  TARGET_42: KAFKA_4_2_LATEST_PRODUCTION, TARGET_43: KAFKA_4_3_LATEST_PRODUCTION,
                  TARGET_44: KAFKA_4_4_LATEST_PRODUCTION, TARGET_4X: KAFKA_4_4_LATEST_PRODUCTION}
"""The highest metadata.version each Kafka 4 target runs (its release's LATEST_PRODUCTION), the
lines oldest first."""
KAFKA_4_TARGETS = frozenset(_HIGHEST_LEVEL)
"""`--target-kafka` values naming ZooKeeper-free Kafka 4 (4.x: any line, 4.0 ... 4.4)."""
DEFAULT_METADATA_VERSION = {TARGET_39: "3.9-IV0",
                            **{t: mv.name for t, mv in _HIGHEST_LEVEL.items()},
                            TARGET_4X: KAFKA_4_0_LATEST_PRODUCTION.name}
"""`--metadata-version` by `--target-kafka`: each named release's own LATEST_PRODUCTION, the level
its `kafka-storage format` gives a new cluster, so the migrated cluster needs no `kafka-features
upgrade` afterwards (3.9-IV0; 4.0-IV3, 4.1-IV1, 4.2-IV1, 4.3-IV0, 4.4-IV2). `4.x` means "some
4.x line" and writes 4.0-IV3, which every 4.x runs (as it always has: a log written for 4.x must
not stop starting on 4.0 or 4.1 because a newer line was released); `kafka-features upgrade`
raises it afterwards, up to 4.4-IV2 (the highest `--metadata-version` 4.x accepts). The
records a migration writes are the same from 4.0-IV1 up (docs/design/offline.md, "Every 4.x
line")."""


@dataclass(frozen=True, slots=True)
class TranslationOptions:
    """How to translate.

    Attributes:
        metadata_version: the KRaft metadata.version to write, 3.4-IV0 ... 3.9-IV0, parsed once
            where the flag enters (`parse_target_version`, the CLI's argparse type).
        password_encoder_secret: the brokers' `password.encoder.secret`, to decode encrypted
            dynamic broker passwords. Kept out of `repr` so it never reaches a log line.
        close_migration: the caller decides the framing. True (the bulk copy, `--cutover
            none`): the records end with `ZkMigrationStateRecord(MIGRATION)` and, at >=
            3.6-IV1, `EndTransactionRecord`. False (the online pre-copy): they stop before
            them and the transaction stays open; the cutover appends `closing_records(mv)`
            after the last mirrored delta.
        offline: every broker is stopped and the cluster never goes back to ZooKeeper: the
            log closes with `ZkMigrationStateRecord(POST_MIGRATION)`. (It names no broker:
            the pre-flight refuses while any is registered, and each registers itself when it
            starts in KRaft mode; docs/design/offline.md says why.) From 3.7-IV2 its
            `PartitionRecord`s name each replica's directory: the id `prepare-broker` gives the
            broker's first log dir (`migrate.translate.topics`).
        target_kafka: `3.9`, `4.0`, `4.1` or `4.x` (either 4), the Kafka release the
            controllers run (a 4 target also runs the metadata.versions that release has).
    """

    metadata_version: MetadataVersion = LATEST_PRODUCTION
    password_encoder_secret: str | None = field(default=None, repr=False)
    close_migration: bool = True
    offline: bool = False
    target_kafka: str = "3.9"


def parse_target_version(name: str) -> MetadataVersion:
    """Parse `--metadata-version` and check that it can carry a ZK migration.

    Kafka 4.x levels parse too: whether the target runs them depends on
    `--target-kafka`, which `require_target` checks once both flags are known.

    Raises:
        BadFlagError: unknown name, or older than 3.4-IV0.
    """
    try:
        mv = parse_metadata_version(name, allow_unstable=True)
    except (ValueError, KeyError, WriterError) as exc:
        raise BadFlagError(f"--metadata-version {name!r}: {exc}") from None
    require_migration(mv)
    return mv


def require_migration(mv: MetadataVersion) -> None:
    """Raise `BadFlagError` unless `mv` can carry a ZooKeeper migration (>= 3.4-IV0)."""
    if not mv.supports_migration:
        raise BadFlagError(
            f"--metadata-version {mv.name!r}: ZooKeeper migration needs metadata.version "
            "3.4-IV0 or later"
        )


def require_target(mv: MetadataVersion, target_kafka: str) -> None:
    """Check that the `--target-kafka` release runs metadata.version `mv`.

    Raises:
        BadFlagError: a Kafka 4.x level for a 3.9 target, or an unknown target.
    """
    if target_kafka not in TARGETS:
        raise BadFlagError(f"--target-kafka {target_kafka!r}: expected one of {', '.join(TARGETS)}")
    if target_kafka == TARGET_39 and not mv.production:
        raise BadFlagError(
            f"--metadata-version {mv.name!r}: Kafka 3.9 cannot run it (3.4-IV0 ... 3.9-IV0); "
            "4.x levels need --target-kafka 4.x (or 4.0 ... 4.4)"
        )
    highest = _HIGHEST_LEVEL.get(target_kafka)
    if highest is not None and mv.feature_level > highest.feature_level:
        raise BadFlagError(
            f"--metadata-version {mv.name!r}: Kafka {target_kafka} cannot run it (its highest "
            f"is {highest.name}); a log at that level needs --target-kafka "
            f"{_lowest_target_running(mv)}"
        )


def _lowest_target_running(mv: MetadataVersion) -> str:
    """The oldest Kafka 4 line whose highest metadata.version is at least `mv`."""
    return next(t for t, highest in _HIGHEST_LEVEL.items()
                if t != TARGET_4X and highest.feature_level >= mv.feature_level)
