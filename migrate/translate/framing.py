"""The records that frame a migration (feature level, transaction markers, migration state),
and the single `ProducerIdsRecord`.

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

from migrate.errors import TranslationError
from writers import MetadataRecord, MetadataVersion
from zkreader import ProducerIdBlock

__all__ = [
    "MIGRATION_TRANSACTION_NAME",
    "SCRAM_RESTATEMENT_TRANSACTION_NAME",
    "ZK_MIGRATION_STATE_MIGRATION",
    "ZK_MIGRATION_STATE_POST_MIGRATION",
    "closing_records",
    "header_records",
    "opening_records",
    "producer_id_records",
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
