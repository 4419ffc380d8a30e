"""The one declarative table of every KRaft metadata and control record zk2kraft reads or writes.

Transcribed from Kafka 3.9.0's message schemas (`metadata/src/main/resources/common/metadata/*.json`
for apiKeys 0-27, `clients/src/main/resources/common/message/{LeaderChangeMessage,
SnapshotHeaderRecord,SnapshotFooterRecord,KRaftVersionRecord,VotersRecord}.json` for the control
records). Everything that encodes, decodes, sizes
or prints a record walks this table (`writers.codec.serde`); no record layout is written anywhere
else.

Field entries keep the schema's own spelling: Kafka field names (`PartitionId`), Kafka type text
(`int32`, `[]int32`, `[]BrokerEndpoint`), version ranges (`"0+"`, `"1-2"`) and defaults as the
JSON text (`"-1"`, `"null"`, `"true"`). `FieldSpec.json_name` derives the JSON converter's key
(`partitionId`) and `RecordSpec.type_name` the `MetadataRecordType` name (`PARTITION_RECORD`)
exactly as Kafka's generators do, so the names cannot drift from the schema names.

apiKeys 6 (AccessControlRecord, removed in 3.5), 13 and 16 are unused in 3.9 and absent here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from writers.codec.records import FieldValue

__all__ = [
    "CONTROL_RECORDS",
    "FieldSpec",
    "METADATA_RECORDS",
    "PRIMITIVE_TYPES",
    "RecordSpec",
    "Versions",
    "record_spec",
    "spec_for_type",
]

PRIMITIVE_TYPES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "int64", "float64", "uuid", "string", "bytes",
     "records"}
)
_MAX_VERSION = 0x7FFF


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range, as Kafka's `Versions` ("0+", "1-2", "3", "none")."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        """Parse Kafka's range syntax; None or "none" is the empty range."""
        if text is None or text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        if "-" in text:
            low, high = text.split("-", 1)
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        """True for the empty range (a field that is never nullable / never tagged)."""
        return self.low > self.high

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high == _MAX_VERSION:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


NO_VERSIONS = Versions(1, 0)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a record or struct, in the schema's terms.

    Attributes:
        name: Kafka field name (`PartitionId`).
        type: Kafka type text: a primitive, `[]<primitive>`, `[]<Struct>` or a struct name.
        versions: versions of the enclosing message the field exists in.
        nullable: versions in which it may be null.
        tag: tag number of a tagged field, else None.
        tagged: versions in which it is tagged (only tagged fields have any).
        default: the schema's `default` text; "" = the type's implicit default.
        fields: element fields of a struct or struct array.
        ignorable: the schema's `ignorable`: a non-default value in a version without the
            field is dropped when writing instead of raising (RPC fields such as Fetch's
            `MaxBytes`).
        flexible: the field's own `flexibleVersions` override, or None to follow the message
            (only RequestHeader's ClientId has one: "none", always an int16-length string).
    """

    name: str
    type: str
    versions: Versions
    nullable: Versions = NO_VERSIONS
    tag: int | None = None
    tagged: Versions = NO_VERSIONS
    default: str = ""
    fields: tuple[FieldSpec, ...] = ()
    ignorable: bool = False
    flexible: Versions | None = None

    @property
    def json_name(self) -> str:
        """Kafka's JSON key: the field name with its first letter lower-cased (`lowerCaseFirst`)."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        """True for `[]X` types."""
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        """The element type of an array (`int32`, `BrokerEndpoint`), or the type itself."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """True for a struct or an array of structs."""
        return self.element_type not in PRIMITIVE_TYPES

    @property
    def has_explicit_default(self) -> bool:
        """True when the schema names a default, so the field may be left out of `data`."""
        return self.default != ""

    def default_value(self) -> FieldValue:
        """The default as a Python value (Kafka's `FieldSpec.fieldDefault`): explicit or implicit.

        Implicit defaults: 0 for numbers, False, "" for strings, b"" for bytes, the zero Uuid,
        an empty list for arrays and a struct of defaults for a struct. `"null"` gives None.
        """
        text = self.default
        if text == "null":
            return None
        if self.is_array:
            return []
        kind = self.type
        if kind == "bool":
            return text.lower() == "true"
        if kind in ("int8", "int16", "uint16", "int32", "int64"):
            return int(text, 0) if text else 0
        if kind == "float64":
            return float(text) if text else 0.0
        if kind == "string":
            return text
        if kind == "bytes":
            return b""
        if kind == "records":
            return None
        if kind == "uuid":
            return "AAAAAAAAAAAAAAAAAAAAAA"
        return {f.json_name: f.default_value() for f in self.fields}

    def is_default(self, value: FieldValue) -> bool:
        """True if `value` equals this field's default (Kafka writes tagged fields only if not)."""
        default = self.default_value()
        if default is None:
            return value is None
        if value is None:
            return False
        if isinstance(default, list):
            return isinstance(value, (list, tuple)) and len(value) == 0
        if isinstance(default, float) and isinstance(value, (int, float)):
            # Kafka compares doubles with Double.compare, so -0.0 is not the default 0.0
            return value == default and math.copysign(1.0, value) == math.copysign(1.0, default)
        return bool(value == default)


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """One record schema.

    Attributes:
        name: the schema name (`PartitionRecord`, `SnapshotHeaderRecord`).
        api_key: the metadata apiKey, or the control record type id for control records.
        valid_versions: versions the schema defines.
        fields: top-level fields in declaration order.
        kind: "metadata" (framed, in data batches), "control" (keyed, in control batches),
            or, for Kafka's protocol messages (`writers.codec.rpc_schema`), "request", "response"
            or "header".
        type_name: `MetadataRecordType` / `ControlRecordType` name (`PARTITION_RECORD`); a
            protocol message's schema name (`FetchRequest`).
        flexible: versions using the flexible encoding (compact lengths, tagged fields);
            every KRaft record is flexible ("0+"), protocol messages say in `flexibleVersions`.
    """

    name: str
    api_key: int
    valid_versions: Versions
    fields: tuple[FieldSpec, ...]
    kind: Literal["metadata", "control", "request", "response", "header"] = "metadata"
    type_name: str = field(default="")
    flexible: Versions = Versions(0, _MAX_VERSION)

    def field_named(self, json_name: str) -> FieldSpec:
        """The top-level field whose JSON name is `json_name`.

        Raises:
            KeyError: there is none.
        """
        for f in self.fields:
            if f.json_name == json_name:
                return f
        raise KeyError(json_name)


def _snake_upper(name: str) -> str:
    """Kafka's `MessageGenerator.toSnakeCase(name).toUpperCase()`: `ZkMigrationStateRecord` ->
    `ZK_MIGRATION_STATE_RECORD`; a capital after a capital gets no underscore."""
    out: list[str] = []
    prev_upper = True
    for c in name:
        if c.isupper():
            if not prev_upper:
                out.append("_")
            out.append(c)
            prev_upper = True
        else:
            out.append(c.upper())
            prev_upper = False
    return "".join(out)


def _f(
    name: str,
    type_: str,
    versions: str = "0+",
    *,
    nullable: str | None = None,
    tag: int | None = None,
    tagged: str | None = None,
    default: str = "",
    fields: Iterable[FieldSpec] = (),
    ignorable: bool = False,
    flexible: str | None = None,
) -> FieldSpec:
    """Build a FieldSpec from the schema JSON's own spelling (kept short so the table reads like
    the JSON it was copied from)."""
    return FieldSpec(
        name=name,
        type=type_,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tag=tag,
        tagged=Versions.parse(tagged),
        default=default,
        fields=tuple(fields),
        ignorable=ignorable,
        flexible=None if flexible is None else Versions.parse(flexible),
    )


def _meta(api_key: int, name: str, valid: str, *fields: FieldSpec) -> RecordSpec:
    return RecordSpec(name, api_key, Versions.parse(valid), fields, "metadata", _snake_upper(name))


def _control(type_id: int, type_name: str, name: str, valid: str, *fields: FieldSpec) -> RecordSpec:
    return RecordSpec(name, type_id, Versions.parse(valid), fields, "control", type_name)


def _endpoints(*, with_protocol: bool = True) -> tuple[FieldSpec, ...]:
    out = [_f("Name", "string"), _f("Host", "string"), _f("Port", "uint16")]
    if with_protocol:
        out.append(_f("SecurityProtocol", "int16"))
    return tuple(out)


_FEATURE_RANGE = (
    _f("Name", "string"),
    _f("MinSupportedVersion", "int16"),
    _f("MaxSupportedVersion", "int16"),
)

_METADATA: tuple[RecordSpec, ...] = (
    _meta(
        0, "RegisterBrokerRecord", "0-3",
        _f("BrokerId", "int32"),
        _f("IsMigratingZkBroker", "bool", "2+", default="false"),
        _f("IncarnationId", "uuid"),
        _f("BrokerEpoch", "int64"),
        _f("EndPoints", "[]BrokerEndpoint", fields=_endpoints()),
        _f("Features", "[]BrokerFeature", fields=_FEATURE_RANGE),
        _f("Rack", "string", nullable="0+"),
        _f("Fenced", "bool", default="true"),
        _f("InControlledShutdown", "bool", "1+", default="false"),
        _f("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
    ),
    _meta(
        1, "UnregisterBrokerRecord", "0",
        _f("BrokerId", "int32"),
        _f("BrokerEpoch", "int64"),
    ),
    _meta(
        2, "TopicRecord", "0",
        _f("Name", "string"),
        _f("TopicId", "uuid"),
    ),
    _meta(
        3, "PartitionRecord", "0-2",
        _f("PartitionId", "int32", default="-1"),
        _f("TopicId", "uuid"),
        _f("Replicas", "[]int32"),
        _f("Isr", "[]int32"),
        _f("RemovingReplicas", "[]int32"),
        _f("AddingReplicas", "[]int32"),
        _f("Leader", "int32", default="-1"),
        _f("LeaderRecoveryState", "int8", default="0", tagged="0+", tag=0),
        _f("LeaderEpoch", "int32", default="-1"),
        _f("PartitionEpoch", "int32", default="-1"),
        _f("Directories", "[]uuid", "1+"),
        _f("EligibleLeaderReplicas", "[]int32", "2+", default="null", nullable="2+",
          tagged="2+", tag=1),
        _f("LastKnownElr", "[]int32", "2+", default="null", nullable="2+", tagged="2+", tag=2),
    ),
    _meta(
        4, "ConfigRecord", "0",
        _f("ResourceType", "int8"),
        _f("ResourceName", "string"),
        _f("Name", "string"),
        _f("Value", "string", nullable="0+"),
    ),
    _meta(
        5, "PartitionChangeRecord", "0-2",
        _f("PartitionId", "int32", default="-1"),
        _f("TopicId", "uuid"),
        _f("Isr", "[]int32", default="null", nullable="0+", tagged="0+", tag=0),
        _f("Leader", "int32", default="-2", tagged="0+", tag=1),
        _f("Replicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=2),
        _f("RemovingReplicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=3),
        _f("AddingReplicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=4),
        _f("LeaderRecoveryState", "int8", default="-1", tagged="0+", tag=5),
        _f("Directories", "[]uuid", "1+", default="null", nullable="1+", tagged="1+", tag=8),
        _f("EligibleLeaderReplicas", "[]int32", "2+", default="null", nullable="2+",
          tagged="2+", tag=6),
        _f("LastKnownElr", "[]int32", "2+", default="null", nullable="2+", tagged="2+", tag=7),
    ),
    _meta(
        7, "FenceBrokerRecord", "0",
        _f("Id", "int32"),
        _f("Epoch", "int64"),
    ),
    _meta(
        8, "UnfenceBrokerRecord", "0",
        _f("Id", "int32"),
        _f("Epoch", "int64"),
    ),
    _meta(
        9, "RemoveTopicRecord", "0",
        _f("TopicId", "uuid"),
    ),
    _meta(
        10, "DelegationTokenRecord", "0",
        _f("Owner", "string"),
        _f("Requester", "string"),
        _f("Renewers", "[]string"),
        _f("IssueTimestamp", "int64"),
        _f("MaxTimestamp", "int64"),
        _f("ExpirationTimestamp", "int64"),
        _f("TokenId", "string"),
    ),
    _meta(
        11, "UserScramCredentialRecord", "0",
        _f("Name", "string"),
        _f("Mechanism", "int8"),
        _f("Salt", "bytes"),
        _f("StoredKey", "bytes"),
        _f("ServerKey", "bytes"),
        _f("Iterations", "int32"),
    ),
    _meta(
        12, "FeatureLevelRecord", "0",
        _f("Name", "string"),
        _f("FeatureLevel", "int16"),
    ),
    _meta(
        14, "ClientQuotaRecord", "0",
        _f("Entity", "[]EntityData", fields=(
            _f("EntityType", "string"),
            _f("EntityName", "string", nullable="0+"),
        )),
        _f("Key", "string"),
        _f("Value", "float64"),
        _f("Remove", "bool"),
    ),
    _meta(
        15, "ProducerIdsRecord", "0",
        _f("BrokerId", "int32"),
        _f("BrokerEpoch", "int64", default="-1"),
        _f("NextProducerId", "int64"),
    ),
    _meta(
        17, "BrokerRegistrationChangeRecord", "0-2",
        _f("BrokerId", "int32"),
        _f("BrokerEpoch", "int64"),
        _f("Fenced", "int8", tagged="0+", tag=0),
        _f("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        _f("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
    ),
    _meta(
        18, "AccessControlEntryRecord", "0",
        _f("Id", "uuid"),
        _f("ResourceType", "int8"),
        _f("ResourceName", "string"),
        _f("PatternType", "int8"),
        _f("Principal", "string"),
        _f("Host", "string"),
        _f("Operation", "int8"),
        _f("PermissionType", "int8"),
    ),
    _meta(
        19, "RemoveAccessControlEntryRecord", "0",
        _f("Id", "uuid"),
    ),
    _meta(20, "NoOpRecord", "0"),
    _meta(
        21, "ZkMigrationStateRecord", "0",
        _f("ZkMigrationState", "int8"),
    ),
    _meta(
        22, "RemoveUserScramCredentialRecord", "0",
        _f("Name", "string"),
        _f("Mechanism", "int8"),
    ),
    _meta(
        23, "BeginTransactionRecord", "0",
        _f("Name", "string", default="null", nullable="0+", tagged="0+", tag=0),
    ),
    _meta(24, "EndTransactionRecord", "0"),
    _meta(
        25, "AbortTransactionRecord", "0",
        _f("Reason", "string", default="null", nullable="0+", tagged="0+", tag=0),
    ),
    _meta(
        26, "RemoveDelegationTokenRecord", "0",
        _f("TokenId", "string"),
    ),
    _meta(
        27, "RegisterControllerRecord", "0",
        _f("ControllerId", "int32"),
        _f("IncarnationId", "uuid"),
        _f("ZkMigrationReady", "bool"),
        _f("EndPoints", "[]ControllerEndpoint", fields=_endpoints()),
        _f("Features", "[]ControllerFeature", fields=_FEATURE_RANGE),
    ),
)

_VOTER = (_f("VoterId", "int32"), _f("VoterDirectoryId", "uuid", "1+"))

# Control records (`ControlRecordType` ids 2-6). Each schema carries its own `Version` field and is
# read and written at version 0 (`ControlRecordUtils.*_CURRENT_VERSION = 0`), key = int16 0 + type.
_CONTROL: tuple[RecordSpec, ...] = (
    _control(
        2, "LEADER_CHANGE", "LeaderChangeMessage", "0-1",
        _f("Version", "int16"),
        _f("LeaderId", "int32"),
        _f("Voters", "[]Voter", fields=_VOTER),
        _f("GrantingVoters", "[]Voter", fields=_VOTER),
    ),
    _control(
        3, "SNAPSHOT_HEADER", "SnapshotHeaderRecord", "0",
        _f("Version", "int16"),
        _f("LastContainedLogTimestamp", "int64"),
    ),
    _control(
        4, "SNAPSHOT_FOOTER", "SnapshotFooterRecord", "0",
        _f("Version", "int16"),
    ),
    _control(
        5, "KRAFT_VERSION", "KRaftVersionRecord", "0",
        _f("Version", "int16"),
        _f("KRaftVersion", "int16"),
    ),
    _control(
        6, "KRAFT_VOTERS", "VotersRecord", "0",
        _f("Version", "int16"),
        _f("Voters", "[]Voter", fields=(
            _f("VoterId", "int32"),
            _f("VoterDirectoryId", "uuid"),
            _f("Endpoints", "[]Endpoint", fields=_endpoints(with_protocol=False)),
            _f("KRaftVersionFeature", "KRaftVersionFeature", fields=(
                _f("MinSupportedVersion", "int16"),
                _f("MaxSupportedVersion", "int16"),
            )),
        )),
    ),
)


def _check_struct(owner: str, fields: tuple[FieldSpec, ...]) -> None:
    """Reject a table mistake at import: duplicate names or tags, a tag without tagged versions."""
    names: set[str] = set()
    tags: dict[int, str] = {}
    for fs in fields:
        if fs.json_name in names:
            raise RuntimeError(f"{owner}: duplicate field {fs.name}")
        names.add(fs.json_name)
        if (fs.tag is None) != fs.tagged.empty:
            raise RuntimeError(f"{owner}.{fs.name}: tag and taggedVersions must come together")
        if fs.tag is not None:
            if fs.tag in tags:
                raise RuntimeError(
                    f"{owner}: tag {fs.tag} claimed by both {tags[fs.tag]} and {fs.name}"
                )
            tags[fs.tag] = fs.name
        if fs.is_struct and not fs.fields:
            raise RuntimeError(f"{owner}.{fs.name}: struct type {fs.type} has no fields")
        if fs.fields:
            _check_struct(f"{owner}.{fs.name}", fs.fields)


def _index(specs: Iterable[RecordSpec], what: str) -> Mapping[int, RecordSpec]:
    """Index specs by id, rejecting a duplicate the way `MetadataRecordTypeGenerator` does."""
    out: dict[int, RecordSpec] = {}
    for spec in specs:
        previous = out.get(spec.api_key)
        if previous is not None:
            raise RuntimeError(
                f"Duplicate {what} entry for type {spec.api_key}. Original claimant: "
                f"{previous.name}. New claimant: {spec.name}"
            )
        _check_struct(spec.name, spec.fields)
        out[spec.api_key] = spec
    return MappingProxyType(out)


METADATA_RECORDS: Mapping[int, RecordSpec] = _index(_METADATA, "metadata record")
"""apiKey -> spec for every metadata record type Kafka 3.9 defines."""

CONTROL_RECORDS: Mapping[int, RecordSpec] = _index(_CONTROL, "control record")
"""Control record type id -> spec (LEADER_CHANGE 2 ... KRAFT_VOTERS 6)."""

_BY_TYPE: Mapping[str, RecordSpec] = MappingProxyType(
    {s.type_name: s for s in (*METADATA_RECORDS.values(), *CONTROL_RECORDS.values())}
)
if len(_BY_TYPE) != len(METADATA_RECORDS) + len(CONTROL_RECORDS):
    raise RuntimeError("two record specs share a type name")


def spec_for_type(type_name: str) -> RecordSpec | None:
    """The spec named `type_name` (`TOPIC_RECORD`, `SNAPSHOT_HEADER`), or None."""
    return _BY_TYPE.get(type_name)


def record_spec(type_name: str) -> RecordSpec:
    """The spec named `type_name`.

    Raises:
        KeyError: no record type has that name (the message lists the known ones).
    """
    spec = _BY_TYPE.get(type_name)
    if spec is None:
        raise KeyError(f"unknown record type {type_name!r}; known: {', '.join(sorted(_BY_TYPE))}")
    return spec
