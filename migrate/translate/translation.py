"""Translation: a `ClusterSnapshot` in, the ordered KRaft metadata records of the migration out.

Pure functions, no I/O, no clock, no randomness: the same snapshot and options always give the
same record list (invariant I6), so the log bytes are reproducible and a re-run is recognisable.
`translate` runs in-process; the Spark pipeline runs the same per-entity emit functions (all
top-level and picklable) in one Spark job over chunks of the topic table and splices the
results in the order `translate` uses:

    FeatureLevelRecord(metadata.version)            header_records
    BeginTransactionRecord("ZK Migration")          (>= 3.6-IV1)
    RegisterBrokerRecord per broker, by id          broker_records
    per topic by name (`migrating_topic` only):      topic_records
        TopicRecord, ConfigRecord..., PartitionRecord...
    broker ConfigRecords, by broker entity           broker_config_records
    users: UserScramCredentialRecord..., ClientQuotaRecord...   scram_records, quota_records
    clients, users/clients, ips: ClientQuotaRecord...
    ProducerIdsRecord                                producer_id_records
    AccessControlEntryRecord..., by resource         acl_records
    DelegationTokenRecord..., by token id            token_records (>= 3.6-IV2)
    ZkMigrationStateRecord(MIGRATION)                trailer_records
    EndTransactionRecord                             (>= 3.6-IV1)

The last two only with `TranslationOptions.close_migration` (the default, the bulk copy). The
online pre-copy leaves the transaction open and its cutover appends them (`closing_records`).
Each entity's records come from `migrate.translate.entities.entity_records`, the one
ZooKeeper->KRaft
mapping, which the online mirror also diffs against the log's image (`delta_records`).

This is Kafka 3.9's order (`ZkMigrationClient.readAllMetadata`), with the broker registrations
Kafka's migration leaves to the brokers placed before every partition that names them (I2).

Things the target cannot hold faithfully are *blockers* rather than exceptions, so `plan` can list
them all: an encrypted broker password without a usable `password.encoder.secret`, SCRAM
credentials below 3.5-IV2, delegation tokens below 3.6-IV2. Which topics migrate is one rule
(`zkreader.migrating_topic`); a topic without an id is pre-flight's `TOPIC_WITHOUT_ID` blocker
(`migrate.preflight.checks`), reported there once.
Malformed data (a quota that is not a number, an unknown ACL operation) raises
`TranslationError` naming the znode.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from migrate.preflight.findings import Finding
from migrate.translate.delta import diff_entities
from migrate.translate.entities import bulk_entity_keys, entity_context
from migrate.translate.framing import (
    ZK_MIGRATION_STATE_MIGRATION,
    ZK_MIGRATION_STATE_POST_MIGRATION,
    TranslationOptions,
    header_records,
    require_migration,
    require_target,
    trailer_records,
)
from verify import MetadataImage
from writers import MetadataRecord, MetadataVersion
from zkreader import ClusterSnapshot, paused_gc

__all__ = ["TranslationResult", "translate"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class TranslationResult:
    """The records of a migration and what stood in its way.

    Attributes:
        records: the metadata records in log order.
        blockers: findings that must stop `migrate` (the records leave those entities out).
        warnings: findings worth reporting that do not stop it.
        counts: records by Kafka record type name (`TOPIC_RECORD` -> n).
        metadata_version: the parsed metadata.version the records were written for.
    """

    records: list[MetadataRecord]
    blockers: list[Finding]
    warnings: list[Finding]
    counts: dict[str, int]
    metadata_version: MetadataVersion


def translate(snapshot: ClusterSnapshot, options: TranslationOptions) -> TranslationResult:
    """Translate a ZooKeeper snapshot into the ordered records of the migration.

    Args:
        snapshot: what the reader took from ZooKeeper.
        options: target metadata.version and the password secret.

    Returns:
        The records (module docstring for the order), blockers, warnings and counts.

    Raises:
        BadFlagError: the metadata.version is unknown or predates ZK migration.
        TranslationError: a znode holds data that cannot be expressed (names the path).
    """
    # Translation builds one dict per record and no cycles: the collector's rescans of the
    # snapshot find nothing and cost CPU (docs/benchmarks.md, "Figures behind code choices").
    with paused_gc():
        return _translate(snapshot, options)


def _translate(snapshot: ClusterSnapshot, options: TranslationOptions) -> TranslationResult:
    mv = options.metadata_version
    require_migration(mv)
    require_target(mv, options.target_kafka)
    records: list[MetadataRecord] = header_records(mv)
    blockers: list[Finding] = []
    warnings: list[Finding] = []
    if not mv.supports_transactions:
        warnings.append(
            Finding(
                "NO_METADATA_TRANSACTIONS",
                f"metadata.version {mv.name} predates metadata transactions (3.6-IV1): the "
                "migrated records are not wrapped in a transaction, and Kafka 3.9 refuses to "
                "start a migration on an empty log below 3.6-IV1.",
                "/feature",
            )
        )

    # The bulk copy is diff(nothing, everything): the one per-entity mapping, on an empty log.
    body = diff_entities(MetadataImage.EMPTY, snapshot, bulk_entity_keys(snapshot),
                         entity_context(snapshot, mv, options))
    records += body.records
    blockers += body.blockers

    if options.close_migration:
        records += trailer_records(mv, ZK_MIGRATION_STATE_POST_MIGRATION if options.offline
                                   else ZK_MIGRATION_STATE_MIGRATION)
    counts = dict(sorted(Counter(r.type for r in records).items()))
    logger.debug("translated %d records at metadata.version %s", len(records), mv.name)
    return TranslationResult(records, blockers, warnings, counts, mv)
