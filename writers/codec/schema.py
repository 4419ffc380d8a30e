"""The one declarative table of every KRaft metadata and control record zk2kraft reads or writes.

Transcribed from Kafka 3.9.0's message schemas (`metadata/src/main/resources/common/metadata/*.json`
for apiKeys 0-27, `clients/src/main/resources/common/message/{LeaderChangeMessage,
SnapshotHeaderRecord,SnapshotFooterRecord,KRaftVersionRecord,VotersRecord}.json` for the control
records). Everything that encodes, decodes, sizes
or prints a record walks this table (`writers.codec.serde`); no record layout is written anywhere
else.

Field entries keep the schema's own spelling (`writers.codec.fields` says what a field is).

apiKeys 6 (AccessControlRecord, removed in 3.5), 13 and 16 are unused in 3.9 and absent here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from writers.codec.fields import FieldSpec, RecordSpec, Versions, _check_struct, _f, _snake_upper

__all__ = [
    "CONTROL_RECORDS",
    "METADATA_RECORDS",
    "record_spec",
    "spec_for_type",
]

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
