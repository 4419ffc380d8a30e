"""metadata.version (Kafka's `MetadataVersion`) and the record versions each level implies.

Facts from `server-common/.../server/common/MetadataVersion.java` at 3.9.0: the KRaft levels
1 (3.0-IV1) .. 21 (3.9-IV0, LATEST_PRODUCTION of 3.9).
Levels 28..33 (4.2-IV0 .. 4.4-IV2) as Kafka 4.4.0 released them (its `MetadataVersion` enum, read
from kafka-server-common-4.4.0.jar on 2026-11-29: LATEST_PRODUCTION 4.4-IV2, 4.5-IV0 unstable;
`fromVersionString` maps "4.2" to 4.2-IV1, "4.3" to 4.3-IV0, "4.4" to 4.4-IV2): of the records
a migration writes none changed (kafka-metadata-4.4.0.jar's schemas against 4.1.1's: only
RegisterBrokerRecord v4 and BrokerRegistrationChangeRecord v3 from 4.3-IV0, cordoned log dirs,
and the new UnregisterControllerRecord at 4.4-IV2, none of which an offline log holds).
Levels 22..27 (4.0-IV0 .. 4.1-IV1) as Kafka 4.1.1 released them (its `MetadataVersion` enum:
MINIMUM_VERSION 3.3-IV3, LATEST_PRODUCTION 4.1-IV1, `isElrSupported` from 4.0-IV1): 3.9 knew
22/23 only as unstable drafts (ELR at 4.0-IV0 then), and the release is what a 4.x controller
reads. Kafka 3.9 refuses them (`production=False` here means "not a 3.9 level"); a log for Kafka
4.x (`--target-kafka 4.x`) may use them. Released levels are immutable, so the table only grows.

`record_version(type, mv)` answers "which version of this record does a Kafka controller at `mv`
write", or raises if `mv` cannot carry the record at all (e.g. a ZkMigrationStateRecord below
3.4-IV0). Kafka's own ZK migration still writes PartitionRecord v0 at every level
(`ZkMigrationClient`); the translator decides which of the two to follow, this module only states
what each level allows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from writers.codec.schema import spec_for_type
from writers.errors import SchemaError

__all__ = [
    "KAFKA_4_0_LATEST_PRODUCTION",
    "KAFKA_4_1_LATEST_PRODUCTION",
    "KAFKA_4_2_LATEST_PRODUCTION",
    "KAFKA_4_3_LATEST_PRODUCTION",
    "KAFKA_4_4_LATEST_PRODUCTION",
    "LATEST_PRODUCTION",
    "METADATA_VERSIONS",
    "MINIMUM_BOOTSTRAP_VERSION",
    "MINIMUM_KRAFT_VERSION",
    "MetadataVersion",
    "metadata_version_for_level",
    "parse_metadata_version",
    "record_version",
]

FEATURE_NAME = "metadata.version"


@dataclass(frozen=True, slots=True, order=True)
class MetadataVersion:
    """One metadata.version level; ordered by feature level.

    Attributes:
        feature_level: the value of FeatureLevelRecord(metadata.version).
        name: Kafka's text form, e.g. "3.9-IV0".
        did_metadata_change: Kafka's flag: the level changed the metadata format.
        production: False for levels Kafka 3.9 cannot run (4.0-IV0 and later).
    """

    feature_level: int
    name: str = field(compare=False)
    did_metadata_change: bool = field(compare=False)
    production: bool = field(default=True, compare=False)

    @property
    def release(self) -> str:
        """The Kafka release, "3.9" for "3.9-IV0"."""
        return self.name.split("-", 1)[0]

    @property
    def level(self) -> int:
        """Short for `feature_level` (the FeatureLevelRecord value)."""
        return self.feature_level

    def at_least(self, name: str) -> bool:
        """True if this level is at or above the named one (Kafka's `isAtLeast`).

        Raises:
            KeyError: `name` is not a known metadata.version.
        """
        return self.feature_level >= _BY_NAME[name].feature_level

    @property
    def supports_migration(self) -> bool:
        """ZK migration (`isMigrationSupported`): 3.4-IV0 and later."""
        return self.at_least("3.4-IV0")

    @property
    def supports_scram(self) -> bool:
        """SCRAM credential records (`isScramSupported`): 3.5-IV2 and later."""
        return self.at_least("3.5-IV2")

    @property
    def supports_transactions(self) -> bool:
        """Begin/End/AbortTransactionRecord (`isMetadataTransactionSupported`): 3.6-IV1+."""
        return self.at_least("3.6-IV1")

    @property
    def supports_delegation_tokens(self) -> bool:
        """Delegation token records (`isDelegationTokenSupported`): 3.6-IV2 and later."""
        return self.at_least("3.6-IV2")

    @property
    def supports_directories(self) -> bool:
        """JBOD directory assignment (`isDirectoryAssignmentSupported`): 3.7-IV2 and later."""
        return self.at_least("3.7-IV2")

    @property
    def supports_elr(self) -> bool:
        """Eligible leader replicas (`isElrSupported`): 4.0-IV1 (Kafka 4.x)."""
        return self.at_least("4.0-IV1")

    def __str__(self) -> str:
        return self.name


def _mv(level: int, name: str, changed: bool, production: bool = True) -> MetadataVersion:
    return MetadataVersion(level, name, changed, production)


METADATA_VERSIONS: tuple[MetadataVersion, ...] = (
    _mv(1, "3.0-IV1", True),
    _mv(2, "3.1-IV0", False),
    _mv(3, "3.2-IV0", True),  # leader recovery (PartitionRecord LeaderRecoveryState)
    _mv(4, "3.3-IV0", False),  # metadata.version stored in the log
    _mv(5, "3.3-IV1", True),  # NoOpRecord
    _mv(6, "3.3-IV2", True),  # BrokerRegistrationChangeRecord replaces Fence/Unfence
    _mv(7, "3.3-IV3", True),  # InControlledShutdown: RegisterBroker v1, BRCR v1
    _mv(8, "3.4-IV0", True),  # ZK migration: ZkMigrationStateRecord, RegisterBroker v2
    _mv(9, "3.5-IV0", False),
    _mv(10, "3.5-IV1", False),
    _mv(11, "3.5-IV2", True),  # SCRAM records
    _mv(12, "3.6-IV0", False),
    _mv(13, "3.6-IV1", True),  # metadata transactions
    _mv(14, "3.6-IV2", True),  # delegation token records
    _mv(15, "3.7-IV0", True),  # RegisterControllerRecord
    _mv(16, "3.7-IV1", False),
    _mv(17, "3.7-IV2", True),  # JBOD: RegisterBroker v3, Partition(Change) v1, BRCR v2
    _mv(18, "3.7-IV3", False),
    _mv(19, "3.7-IV4", False),
    _mv(20, "3.8-IV0", False),
    _mv(21, "3.9-IV0", False),
    _mv(22, "4.0-IV0", False, production=False),
    _mv(23, "4.0-IV1", True, production=False),  # ELR: Partition(Change) v2
    _mv(24, "4.0-IV2", False, production=False),
    _mv(25, "4.0-IV3", False, production=False),  # Kafka 4.0's LATEST_PRODUCTION
    _mv(26, "4.1-IV0", False, production=False),
    _mv(27, "4.1-IV1", False, production=False),  # Kafka 4.1's LATEST_PRODUCTION
    _mv(28, "4.2-IV0", False, production=False),
    _mv(29, "4.2-IV1", False, production=False),  # Kafka 4.2's LATEST_PRODUCTION
    _mv(30, "4.3-IV0", True, production=False),  # cordoned log dirs: RegisterBroker v4, BRCR v3
    _mv(31, "4.4-IV0", False, production=False),
    _mv(32, "4.4-IV1", True, production=False),  # CIDR ACL hosts (no record version changes)
    _mv(33, "4.4-IV2", True, production=False),  # UnregisterControllerRecord; 4.4's LATEST
)

_BY_NAME = {mv.name: mv for mv in METADATA_VERSIONS}
_BY_LEVEL = {mv.feature_level: mv for mv in METADATA_VERSIONS}
# Kafka's `fromVersionString` maps a bare release ("3.7") to its last IV ("3.7-IV4").
_BY_RELEASE = {mv.release: mv for mv in METADATA_VERSIONS}

MINIMUM_KRAFT_VERSION = _BY_NAME["3.0-IV1"]
"""Assumed when a log has no metadata.version FeatureLevelRecord."""
MINIMUM_BOOTSTRAP_VERSION = _BY_NAME["3.3-IV0"]
"""The lowest level `kafka-storage format` accepts."""
LATEST_PRODUCTION = _BY_NAME["3.9-IV0"]
"""Kafka 3.9's default and highest stable level."""
KAFKA_4_0_LATEST_PRODUCTION = _BY_NAME["4.0-IV3"]
"""Kafka 4.0's highest stable level: every 4.x controller reads it."""
KAFKA_4_1_LATEST_PRODUCTION = _BY_NAME["4.1-IV1"]
"""Kafka 4.1's highest stable level."""
KAFKA_4_2_LATEST_PRODUCTION = _BY_NAME["4.2-IV1"]
"""Kafka 4.2's highest stable level."""
KAFKA_4_3_LATEST_PRODUCTION = _BY_NAME["4.3-IV0"]
"""Kafka 4.3's highest stable level."""
KAFKA_4_4_LATEST_PRODUCTION = _BY_NAME["4.4-IV2"]
"""Kafka 4.4's highest stable level."""


def parse_metadata_version(name: str, *, allow_unstable: bool = False) -> MetadataVersion:
    """Parse "3.9-IV0" (or a bare release "3.7", meaning its last IV, as Kafka does).

    Args:
        name: the text, as given to `--metadata-version`.
        allow_unstable: accept levels Kafka 3.9 cannot run (4.0-IV0 .. 4.4-IV2).

    Raises:
        SchemaError: unknown or unstable name; the message lists the valid names.
    """
    mv = _BY_NAME.get(name.strip()) or _BY_RELEASE.get(name.strip())
    valid = [m.name for m in METADATA_VERSIONS if m.production or allow_unstable]
    if mv is None or (not mv.production and not allow_unstable):
        what = "unknown" if mv is None else "unstable"
        raise SchemaError(f"{what} metadata.version {name!r}; valid: {', '.join(valid)}")
    return mv


def metadata_version_for_level(level: int) -> MetadataVersion:
    """The MetadataVersion with this feature level (e.g. from a FeatureLevelRecord).

    Raises:
        SchemaError: no such level.
    """
    mv = _BY_LEVEL.get(level)
    if mv is None:
        highest = METADATA_VERSIONS[-1].feature_level
        raise SchemaError(f"unknown metadata.version feature level {level}; known: 1..{highest}")
    return mv


# Lowest metadata.version that can carry each record type (absent = every KRaft level).
_INTRODUCED = {
    "NO_OP_RECORD": "3.3-IV1",
    "BROKER_REGISTRATION_CHANGE_RECORD": "3.3-IV2",
    "ZK_MIGRATION_STATE_RECORD": "3.4-IV0",
    "USER_SCRAM_CREDENTIAL_RECORD": "3.5-IV2",
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": "3.5-IV2",
    "BEGIN_TRANSACTION_RECORD": "3.6-IV1",
    "END_TRANSACTION_RECORD": "3.6-IV1",
    "ABORT_TRANSACTION_RECORD": "3.6-IV1",
    "DELEGATION_TOKEN_RECORD": "3.6-IV2",
    "REMOVE_DELEGATION_TOKEN_RECORD": "3.6-IV2",
    "REGISTER_CONTROLLER_RECORD": "3.7-IV0",
}


def record_version(type_name: str, mv: MetadataVersion) -> int:
    """The version of record `type_name` a Kafka 3.9 controller writes at metadata.version `mv`.

    RegisterBrokerRecord: 4 from 4.3-IV0, 3 from 3.7-IV2, 2 from 3.4-IV0, 1 from 3.3-IV3,
    else 0 (v4 is not in zk2kraft's schemas: no log it writes at 4.3+ registers a broker).
    PartitionRecord / PartitionChangeRecord: 2 with ELR (4.0-IV1), 1 from 3.7-IV2, else 0.
    BrokerRegistrationChangeRecord: the highest the level allows (3 from 4.3-IV0, 2 from
    3.7-IV2, 1 from 3.3-IV3, else 0); Kafka itself picks per purpose (fencing writes v0).
    Every other record: 0.

    Raises:
        SchemaError: unknown record type, or `mv` is below the level that introduced it.
    """
    if spec_for_type(type_name) is None:
        raise SchemaError(f"unknown record type {type_name!r}")
    introduced = _INTRODUCED.get(type_name)
    if introduced is not None and not mv.at_least(introduced):
        raise SchemaError(
            f"{type_name} needs metadata.version {introduced} or later, not {mv.name}"
        )
    cordoned = mv.at_least("4.3-IV0")  # `isCordonedLogDirsSupported`
    if type_name == "REGISTER_BROKER_RECORD":
        if cordoned:
            return 4
        if mv.supports_directories:
            return 3
        if mv.supports_migration:
            return 2
        return 1 if mv.at_least("3.3-IV3") else 0
    if type_name in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        if mv.supports_elr:
            return 2
        return 1 if mv.supports_directories else 0
    if type_name == "BROKER_REGISTRATION_CHANGE_RECORD":
        if cordoned:
            return 3
        if mv.supports_directories:
            return 2
        return 1 if mv.at_least("3.3-IV3") else 0
    return 0
