"""Translation: a `ClusterSnapshot` in, the ordered KRaft metadata records of the migration out.

Pure functions, no I/O, no clock, no randomness: the same snapshot and options always give the
same record list (invariant I6), so the log bytes are reproducible and a re-run is recognisable.
`translate` runs in-process; the Spark pipeline runs the same per-entity emit functions (all
top-level and picklable) in one `mapInArrow` job over chunks of the topic table and splices the
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
Each entity's records come from `migrate.entities.entity_records`, the one ZooKeeper->KRaft
mapping, which the online mirror also diffs against the log's image (`delta_records`).

This is Kafka 3.9's order (`ZkMigrationClient.readAllMetadata`), with the broker registrations
Kafka's migration leaves to the brokers placed before every partition that names them (I2).

Things the target cannot hold faithfully are *blockers* rather than exceptions, so `plan` can list
them all: an encrypted broker password without a usable `password.encoder.secret`, SCRAM
credentials below 3.5-IV2, delegation tokens below 3.6-IV2. Which topics migrate is one rule
(`zkreader.migrating_topic`); a topic without an id is pre-flight's `TOPIC_WITHOUT_ID` blocker
(`migrate._preflight`), reported there once.
Malformed data (a quota that is not a number, an unknown ACL operation) raises
`TranslationError` naming the znode.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from migrate._findings import Finding
from migrate._translate_acls import acl_records
from migrate._translate_brokers import broker_records
from migrate._translate_configs import broker_config_records, config_records
from migrate._translate_framing import (
    ZK_MIGRATION_STATE_MIGRATION,
    ZK_MIGRATION_STATE_POST_MIGRATION,
    closing_records,
    header_records,
    opening_records,
    producer_id_records,
    trailer_records,
)
from migrate._translate_quotas import quota_records, scram_records
from migrate._translate_tokens import token_records
from migrate._translate_topics import partition_record, topic_records
from migrate.entities import bulk_entity_keys, diff_entities, entity_context
from migrate.errors import BadFlagError
from verify import MetadataImage
from writers import (
    KAFKA_4_0_LATEST_PRODUCTION,
    KAFKA_4_1_LATEST_PRODUCTION,
    LATEST_PRODUCTION,
    MetadataRecord,
    MetadataVersion,
    WriterError,
    parse_metadata_version,
)
from zkreader import ClusterSnapshot, paused_gc

__all__ = [
    "DEFAULT_METADATA_VERSION",
    "KAFKA_4_TARGETS",
    "TARGETS",
    "TARGET_39",
    "TARGET_40",
    "TARGET_41",
    "TARGET_4X",
    "TranslationOptions",
    "TranslationResult",
    "acl_records",
    "broker_config_records",
    "broker_records",
    "closing_records",
    "config_records",
    "header_records",
    "opening_records",
    "parse_target_version",
    "partition_record",
    "require_target",
    "producer_id_records",
    "quota_records",
    "scram_records",
    "token_records",
    "topic_records",
    "trailer_records",
    "translate",
]

logger = logging.getLogger(__name__)

# First metadata.version of each capability (Kafka's MetadataVersion.is*Supported).
TARGET_39 = "3.9"
TARGET_40 = "4.0"
TARGET_41 = "4.1"
TARGET_4X = "4.x"
TARGETS = (TARGET_39, TARGET_40, TARGET_41, TARGET_4X)
KAFKA_4_TARGETS = frozenset({TARGET_40, TARGET_41, TARGET_4X})
"""`--target-kafka` values naming ZooKeeper-free Kafka 4 (4.x: any of 4.0 and 4.1)."""
DEFAULT_METADATA_VERSION = {TARGET_39: "3.9-IV0", TARGET_40: "4.0-IV3", TARGET_41: "4.0-IV3",
                            TARGET_4X: "4.0-IV3"}
"""`--metadata-version` by `--target-kafka`: 3.9's highest stable level; for every 4 target
4.0-IV3, Kafka 4.0's highest, which 4.1 runs too (so the log also starts on 4.0;
`kafka-features upgrade` raises it later)."""
_HIGHEST_LEVEL = {TARGET_40: KAFKA_4_0_LATEST_PRODUCTION, TARGET_41: KAFKA_4_1_LATEST_PRODUCTION,
                  TARGET_4X: KAFKA_4_1_LATEST_PRODUCTION}
"""The highest metadata.version each Kafka 4 target runs (its release's LATEST_PRODUCTION)."""


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
            starts in KRaft mode; docs/design.md says why.) From 3.7-IV2 its `PartitionRecord`s
            name each replica's directory: the id `prepare-broker` gives the broker's first log
            dir (`migrate._translate_topics`).
        target_kafka: `3.9`, `4.0`, `4.1` or `4.x` (either 4), the Kafka release the
            controllers run (a 4 target also runs the metadata.versions that release has).
    """

    metadata_version: MetadataVersion = LATEST_PRODUCTION
    password_encoder_secret: str | None = field(default=None, repr=False)
    close_migration: bool = True
    offline: bool = False
    target_kafka: str = "3.9"


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


def parse_target_version(name: str) -> MetadataVersion:
    """Parse `--metadata-version` and check that it can carry a ZK migration.

    Kafka 4.0/4.1's levels parse too: whether the target runs them depends on
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
            "4.x levels need --target-kafka 4.x (or 4.0, 4.1)"
        )
    highest = _HIGHEST_LEVEL.get(target_kafka)
    if highest is not None and mv.feature_level > highest.feature_level:
        raise BadFlagError(
            f"--metadata-version {mv.name!r}: Kafka {target_kafka} cannot run it (its highest "
            f"is {highest.name}); a log at that level needs --target-kafka 4.1"
        )


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
    # snapshot found nothing and cost 7.3 s vs 2.9 s CPU at 1,000,000 partitions.
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
