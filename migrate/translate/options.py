"""How to translate: `TranslationOptions`, and the checks of `--metadata-version` against
`--target-kafka`.

Below both `migrate.translate.translation` (which re-exports every name here) and
`migrate.translate.entities`, so
the per-entity mapping can take the options without importing the translator that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.errors import BadFlagError
from writers import (
    KAFKA_4_0_LATEST_PRODUCTION,
    KAFKA_4_1_LATEST_PRODUCTION,
    LATEST_PRODUCTION,
    MetadataVersion,
    WriterError,
    parse_metadata_version,
)

__all__ = [
    "DEFAULT_METADATA_VERSION",
    "KAFKA_4_TARGETS",
    "TARGETS",
    "TARGET_39",
    "TARGET_40",
    "TARGET_41",
    "TARGET_4X",
    "TranslationOptions",
    "parse_target_version",
    "require_migration",
    "require_target",
]

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
            dir (`migrate.translate.topics`).
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
