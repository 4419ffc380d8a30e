"""Kafka's protocol messages that a KRaft controller sends to, or expects from, a quorum leader.

Transcribed, like the record table in `writers.codec.schema` and with the same builders, from Kafka
3.9's `clients/src/main/resources/common/message/*.json`: the request and response headers,
ApiVersions (18), Fetch (1), Vote (52), BeginQuorumEpoch (53), EndQuorumEpoch (54),
DescribeQuorum (55), FetchSnapshot (59), ControllerRegistration (70), RemoveRaftVoter (81,
to give the stand-in's slot back under kraft.version 1), BrokerRegistration (62) and
BrokerHeartbeat (63) from the migrating ZooKeeper-mode brokers, and SaslHandshake (17) and
SaslAuthenticate (36) for a SASL controller listener. The same code
generator (`writers.codec.codegen`) turns each (message, version) into an encoder and a decoder; the
only additions the protocol needs over the record table are per-message `flexibleVersions`
(BeginQuorumEpoch and EndQuorumEpoch v0 and ApiVersions v0-2 are not flexible: int16 string
lengths, int32 array and bytes lengths, no tagged fields), `ignorable` fields, the `records`
type and the header's ClientId, which keeps its int16 length even in header v2.

Everything else about the wire (frame size, header versions) lives in `writers.codec.protocol`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Literal

from writers.codec.fields import FieldSpec, RecordSpec, Versions, _check_struct, _f

__all__ = ["HEADERS", "REQUESTS", "RESPONSES", "api_name", "message_spec"]


def _msg(
    kind: Literal["request", "response", "header"],
    api_key: int,
    name: str,
    valid: str,
    flexible: str,
    *fields: FieldSpec,
) -> RecordSpec:
    return RecordSpec(name, api_key, Versions.parse(valid), fields, kind, name,
                      Versions.parse(flexible))


def _topics(*partition_fields: FieldSpec, struct: str = "TopicData") -> FieldSpec:
    """The `Topics[TopicName, Partitions[...]]` shape every Raft RPC shares."""
    return _f("Topics", f"[]{struct}", fields=(
        _f("TopicName", "string"),
        _f("Partitions", "[]PartitionData", fields=partition_fields),
    ))


def _node_endpoints(versions: str) -> FieldSpec:
    return _f("NodeEndpoints", "[]NodeEndpoint", versions, tagged=versions, tag=0, fields=(
        _f("NodeId", "int32", versions),
        _f("Host", "string", versions),
        _f("Port", "uint16", versions),
    ))


_LEADER_ENDPOINTS = _f("LeaderEndpoints", "[]LeaderEndpoint", "1+", ignorable=True, fields=(
    _f("Name", "string", "1+"),
    _f("Host", "string", "1+"),
    _f("Port", "uint16", "1+"),
))
_CLUSTER_ID = _f("ClusterId", "string", nullable="0+", default="null")
# a registering node's listeners and supported features: the same fields in Kafka's
# ControllerRegistrationRequest and BrokerRegistrationRequest, at every version of both
_LISTENERS = _f("Listeners", "[]Listener", fields=(
    _f("Name", "string"),
    _f("Host", "string"),
    _f("Port", "uint16"),
    _f("SecurityProtocol", "int16"),
))
_FEATURES = _f("Features", "[]Feature", fields=(
    _f("Name", "string"),
    _f("MinSupportedVersion", "int16"),
    _f("MaxSupportedVersion", "int16"),
))
_RAFT_RESPONSE_PARTITION = (
    _f("PartitionIndex", "int32"),
    _f("ErrorCode", "int16"),
    _f("LeaderId", "int32"),
    _f("LeaderEpoch", "int32"),
)

_HEADERS = (
    _msg("header", -1, "RequestHeader", "0-2", "2+",
         _f("RequestApiKey", "int16"),
         _f("RequestApiVersion", "int16"),
         _f("CorrelationId", "int32"),
         _f("ClientId", "string", "1+", nullable="1+", ignorable=True, flexible="none")),
    _msg("header", -1, "ResponseHeader", "0-1", "1+",
         _f("CorrelationId", "int32")),
)

_REQUESTS = (
    _msg("request", 1, "FetchRequest", "0-17", "12+",
         _f("ClusterId", "string", "12+", nullable="12+", default="null", tagged="12+", tag=0,
            ignorable=True),
         _f("ReplicaId", "int32", "0-14", default="-1"),
         _f("ReplicaState", "ReplicaState", "15+", tagged="15+", tag=1, fields=(
             _f("ReplicaId", "int32", "15+", default="-1"),
             _f("ReplicaEpoch", "int64", "15+", default="-1"),
         )),
         _f("MaxWaitMs", "int32"),
         _f("MinBytes", "int32"),
         _f("MaxBytes", "int32", "3+", default="0x7fffffff", ignorable=True),
         _f("IsolationLevel", "int8", "4+", default="0", ignorable=True),
         _f("SessionId", "int32", "7+", default="0", ignorable=True),
         _f("SessionEpoch", "int32", "7+", default="-1", ignorable=True),
         _f("Topics", "[]FetchTopic", fields=(
             _f("Topic", "string", "0-12", ignorable=True),
             _f("TopicId", "uuid", "13+", ignorable=True),
             _f("Partitions", "[]FetchPartition", fields=(
                 _f("Partition", "int32"),
                 _f("CurrentLeaderEpoch", "int32", "9+", default="-1", ignorable=True),
                 _f("FetchOffset", "int64"),
                 _f("LastFetchedEpoch", "int32", "12+", default="-1"),
                 _f("LogStartOffset", "int64", "5+", default="-1", ignorable=True),
                 _f("PartitionMaxBytes", "int32"),
                 _f("ReplicaDirectoryId", "uuid", "17+", tagged="17+", tag=0, ignorable=True),
             )),
         )),
         _f("ForgottenTopicsData", "[]ForgottenTopic", "7+", fields=(
             _f("Topic", "string", "7-12", ignorable=True),
             _f("TopicId", "uuid", "13+", ignorable=True),
             _f("Partitions", "[]int32", "7+"),
         )),
         _f("RackId", "string", "11+", default="", ignorable=True)),
    _msg("request", 17, "SaslHandshakeRequest", "0-1", "none",
         _f("Mechanism", "string")),
    _msg("request", 36, "SaslAuthenticateRequest", "0-2", "2+",
         _f("AuthBytes", "bytes")),
    _msg("request", 18, "ApiVersionsRequest", "0-4", "3+",
         _f("ClientSoftwareName", "string", "3+", ignorable=True),
         _f("ClientSoftwareVersion", "string", "3+", ignorable=True)),
    _msg("request", 52, "VoteRequest", "0-1", "0+",
         _CLUSTER_ID,
         _f("VoterId", "int32", "1+", ignorable=True, default="-1"),
         _topics(
             _f("PartitionIndex", "int32"),
             _f("CandidateEpoch", "int32"),
             _f("CandidateId", "int32"),
             _f("CandidateDirectoryId", "uuid", "1+", ignorable=True),
             _f("VoterDirectoryId", "uuid", "1+", ignorable=True),
             _f("LastOffsetEpoch", "int32"),
             _f("LastOffset", "int64"),
         )),
    _msg("request", 53, "BeginQuorumEpochRequest", "0-1", "1+",
         _CLUSTER_ID,
         _f("VoterId", "int32", "1+", ignorable=True, default="-1"),
         _topics(
             _f("PartitionIndex", "int32"),
             _f("VoterDirectoryId", "uuid", "1+", ignorable=True),
             _f("LeaderId", "int32"),
             _f("LeaderEpoch", "int32"),
         ),
         _LEADER_ENDPOINTS),
    _msg("request", 54, "EndQuorumEpochRequest", "0-1", "1+",
         _CLUSTER_ID,
         _topics(
             _f("PartitionIndex", "int32"),
             _f("LeaderId", "int32"),
             _f("LeaderEpoch", "int32"),
             _f("PreferredSuccessors", "[]int32", "0", ignorable=True),
             _f("PreferredCandidates", "[]ReplicaInfo", "1+", ignorable=True, fields=(
                 _f("CandidateId", "int32", "1+"),
                 _f("CandidateDirectoryId", "uuid", "1+"),
             )),
         ),
         _LEADER_ENDPOINTS),
    _msg("request", 55, "DescribeQuorumRequest", "0-2", "0+",
         _topics(_f("PartitionIndex", "int32"))),
    _msg("request", 59, "FetchSnapshotRequest", "0-1", "0+",
         _f("ClusterId", "string", nullable="0+", default="null", tagged="0+", tag=0),
         _f("ReplicaId", "int32", default="-1"),
         _f("MaxBytes", "int32", default="0x7fffffff"),
         _f("Topics", "[]TopicSnapshot", fields=(
             _f("Name", "string"),
             _f("Partitions", "[]PartitionSnapshot", fields=(
                 _f("Partition", "int32"),
                 _f("CurrentLeaderEpoch", "int32"),
                 _f("SnapshotId", "SnapshotId", fields=(
                     _f("EndOffset", "int64"),
                     _f("Epoch", "int32"),
                 )),
                 _f("Position", "int64"),
                 _f("ReplicaDirectoryId", "uuid", "1+", tagged="1+", tag=0, ignorable=True),
             )),
         ))),
    _msg("request", 81, "RemoveRaftVoterRequest", "0", "0+",
         _f("ClusterId", "string", nullable="0+"),
         _f("VoterId", "int32"),
         _f("VoterDirectoryId", "uuid")),
    _msg("request", 70, "ControllerRegistrationRequest", "0", "0+",
         _f("ControllerId", "int32"),
         _f("IncarnationId", "uuid"),
         _f("ZkMigrationReady", "bool"),
         _LISTENERS,
         _FEATURES),
    _msg("request", 62, "BrokerRegistrationRequest", "0-4", "0+",
         _f("BrokerId", "int32"),
         _f("ClusterId", "string"),
         _f("IncarnationId", "uuid"),
         _LISTENERS,
         _FEATURES,
         _f("Rack", "string", nullable="0+"),
         _f("IsMigratingZkBroker", "bool", "1+", default="false"),
         _f("LogDirs", "[]uuid", "2+", ignorable=True),
         _f("PreviousBrokerEpoch", "int64", "3+", default="-1", ignorable=True)),
    _msg("request", 63, "BrokerHeartbeatRequest", "0-1", "0+",
         _f("BrokerId", "int32"),
         _f("BrokerEpoch", "int64", default="-1"),
         _f("CurrentMetadataOffset", "int64"),
         _f("WantFence", "bool"),
         _f("WantShutDown", "bool"),
         _f("OfflineLogDirs", "[]uuid", "1+", tagged="1+", tag=0)),
)

_REPLICA_STATE = (
    _f("ReplicaId", "int32"),
    _f("ReplicaDirectoryId", "uuid", "2+"),
    _f("LogEndOffset", "int64"),
    _f("LastFetchTimestamp", "int64", "1+", ignorable=True, default="-1"),
    _f("LastCaughtUpTimestamp", "int64", "1+", ignorable=True, default="-1"),
)

_RESPONSES = (
    _msg("response", 1, "FetchResponse", "0-17", "12+",
         _f("ThrottleTimeMs", "int32", "1+", ignorable=True),
         _f("ErrorCode", "int16", "7+", ignorable=True),
         _f("SessionId", "int32", "7+", default="0"),
         _f("Responses", "[]FetchableTopicResponse", fields=(
             _f("Topic", "string", "0-12", ignorable=True),
             _f("TopicId", "uuid", "13+", ignorable=True),
             _f("Partitions", "[]PartitionData", fields=(
                 _f("PartitionIndex", "int32"),
                 _f("ErrorCode", "int16"),
                 _f("HighWatermark", "int64"),
                 _f("LastStableOffset", "int64", "4+", default="-1", ignorable=True),
                 _f("LogStartOffset", "int64", "5+", default="-1", ignorable=True),
                 _f("DivergingEpoch", "EpochEndOffset", "12+", tagged="12+", tag=0, fields=(
                     _f("Epoch", "int32", "12+", default="-1"),
                     _f("EndOffset", "int64", "12+", default="-1"),
                 )),
                 _f("CurrentLeader", "LeaderIdAndEpoch", "12+", tagged="12+", tag=1, fields=(
                     _f("LeaderId", "int32", "12+", default="-1"),
                     _f("LeaderEpoch", "int32", "12+", default="-1"),
                 )),
                 _f("SnapshotId", "SnapshotId", "12+", tagged="12+", tag=2, fields=(
                     _f("EndOffset", "int64", default="-1"),
                     _f("Epoch", "int32", default="-1"),
                 )),
                 _f("AbortedTransactions", "[]AbortedTransaction", "4+", nullable="4+",
                    ignorable=True, fields=(
                        _f("ProducerId", "int64", "4+"),
                        _f("FirstOffset", "int64", "4+"),
                    )),
                 _f("PreferredReadReplica", "int32", "11+", default="-1"),
                 _f("Records", "records", nullable="0+"),
             )),
         )),
         _f("NodeEndpoints", "[]NodeEndpoint", "16+", tagged="16+", tag=0, fields=(
             _f("NodeId", "int32", "16+"),
             _f("Host", "string", "16+"),
             _f("Port", "int32", "16+"),
             _f("Rack", "string", "16+", nullable="16+", default="null"),
         ))),
    _msg("response", 17, "SaslHandshakeResponse", "0-1", "none",
         _f("ErrorCode", "int16"),
         _f("Mechanisms", "[]string")),
    _msg("response", 36, "SaslAuthenticateResponse", "0-2", "2+",
         _f("ErrorCode", "int16"),
         _f("ErrorMessage", "string", nullable="0+"),
         _f("AuthBytes", "bytes"),
         _f("SessionLifetimeMs", "int64", "1+", default="0", ignorable=True)),
    _msg("response", 18, "ApiVersionsResponse", "0-4", "3+",
         _f("ErrorCode", "int16"),
         _f("ApiKeys", "[]ApiVersion", fields=(
             _f("ApiKey", "int16"),
             _f("MinVersion", "int16"),
             _f("MaxVersion", "int16"),
         )),
         _f("ThrottleTimeMs", "int32", "1+", ignorable=True),
         _f("SupportedFeatures", "[]SupportedFeatureKey", "3+", ignorable=True, tag=0,
            tagged="3+", fields=(
                _f("Name", "string", "3+"),
                _f("MinVersion", "int16", "3+"),
                _f("MaxVersion", "int16", "3+"),
            )),
         _f("FinalizedFeaturesEpoch", "int64", "3+", tag=1, tagged="3+", default="-1",
            ignorable=True),
         _f("FinalizedFeatures", "[]FinalizedFeatureKey", "3+", ignorable=True, tag=2,
            tagged="3+", fields=(
                _f("Name", "string", "3+"),
                _f("MaxVersionLevel", "int16", "3+"),
                _f("MinVersionLevel", "int16", "3+"),
            )),
         _f("ZkMigrationReady", "bool", "3+", tagged="3+", tag=3, ignorable=True,
            default="false")),
    _msg("response", 52, "VoteResponse", "0-1", "0+",
         _f("ErrorCode", "int16"),
         _topics(*_RAFT_RESPONSE_PARTITION, _f("VoteGranted", "bool")),
         _node_endpoints("1+")),
    _msg("response", 53, "BeginQuorumEpochResponse", "0-1", "1+",
         _f("ErrorCode", "int16"),
         _topics(*_RAFT_RESPONSE_PARTITION),
         _node_endpoints("1+")),
    _msg("response", 54, "EndQuorumEpochResponse", "0-1", "1+",
         _f("ErrorCode", "int16"),
         _topics(*_RAFT_RESPONSE_PARTITION),
         _node_endpoints("1+")),
    _msg("response", 55, "DescribeQuorumResponse", "0-2", "0+",
         _f("ErrorCode", "int16"),
         _f("ErrorMessage", "string", "2+", nullable="2+", ignorable=True),
         _topics(
             _f("PartitionIndex", "int32"),
             _f("ErrorCode", "int16"),
             _f("ErrorMessage", "string", "2+", nullable="2+", ignorable=True),
             _f("LeaderId", "int32"),
             _f("LeaderEpoch", "int32"),
             _f("HighWatermark", "int64"),
             _f("CurrentVoters", "[]ReplicaState", fields=_REPLICA_STATE),
             _f("Observers", "[]ReplicaState", fields=_REPLICA_STATE),
         ),
         _f("Nodes", "[]Node", "2+", fields=(
             _f("NodeId", "int32", "2+"),
             _f("Listeners", "[]Listener", "2+", fields=(
                 _f("Name", "string", "2+"),
                 _f("Host", "string", "2+"),
                 _f("Port", "uint16", "2+"),
             )),
         ))),
    _msg("response", 59, "FetchSnapshotResponse", "0-1", "0+",
         _f("ThrottleTimeMs", "int32", ignorable=True),
         _f("ErrorCode", "int16"),
         _f("Topics", "[]TopicSnapshot", fields=(
             _f("Name", "string"),
             _f("Partitions", "[]PartitionSnapshot", fields=(
                 _f("Index", "int32"),
                 _f("ErrorCode", "int16"),
                 _f("SnapshotId", "SnapshotId", fields=(
                     _f("EndOffset", "int64"),
                     _f("Epoch", "int32"),
                 )),
                 _f("CurrentLeader", "LeaderIdAndEpoch", tagged="0+", tag=0, fields=(
                     _f("LeaderId", "int32"),
                     _f("LeaderEpoch", "int32"),
                 )),
                 _f("Size", "int64"),
                 _f("Position", "int64"),
                 _f("UnalignedRecords", "records"),
             )),
         )),
         _node_endpoints("1+")),
    _msg("response", 81, "RemoveRaftVoterResponse", "0", "0+",
         _f("ThrottleTimeMs", "int32"),
         _f("ErrorCode", "int16"),
         _f("ErrorMessage", "string", nullable="0+", ignorable=True)),
    _msg("response", 70, "ControllerRegistrationResponse", "0", "0+",
         _f("ThrottleTimeMs", "int32"),
         _f("ErrorCode", "int16"),
         _f("ErrorMessage", "string", nullable="0+")),
    _msg("response", 62, "BrokerRegistrationResponse", "0-4", "0+",
         _f("ThrottleTimeMs", "int32"),
         _f("ErrorCode", "int16"),
         _f("BrokerEpoch", "int64", default="-1")),
    _msg("response", 63, "BrokerHeartbeatResponse", "0-1", "0+",
         _f("ThrottleTimeMs", "int32"),
         _f("ErrorCode", "int16"),
         _f("IsCaughtUp", "bool", default="false"),
         _f("IsFenced", "bool", default="true"),
         _f("ShouldShutDown", "bool")),
)


def _by_key(specs: Iterable[RecordSpec]) -> Mapping[int, RecordSpec]:
    out: dict[int, RecordSpec] = {}
    for spec in specs:
        if spec.api_key in out:
            raise RuntimeError(f"api key {spec.api_key} claimed by both {out[spec.api_key].name} "
                               f"and {spec.name}")
        _check_struct(spec.name, spec.fields)
        out[spec.api_key] = spec
    return MappingProxyType(out)


REQUESTS: Mapping[int, RecordSpec] = _by_key(_REQUESTS)
"""api key -> request schema."""

RESPONSES: Mapping[int, RecordSpec] = _by_key(_RESPONSES)
"""api key -> response schema."""

HEADERS: Mapping[str, RecordSpec] = MappingProxyType({h.name: h for h in _HEADERS})
"""`RequestHeader` and `ResponseHeader`."""

if set(REQUESTS) != set(RESPONSES):
    raise RuntimeError("every request schema needs its response schema")
for _h in _HEADERS:
    _check_struct(_h.name, _h.fields)

_BY_NAME: Mapping[str, RecordSpec] = MappingProxyType(
    {s.name: s for s in (*_HEADERS, *_REQUESTS, *_RESPONSES)}
)


def message_spec(name: str) -> RecordSpec:
    """The schema named `name` (`VoteRequest`, `ResponseHeader`).

    Raises:
        KeyError: no such message (the message lists the known ones).
    """
    spec = _BY_NAME.get(name)
    if spec is None:
        raise KeyError(f"unknown message {name!r}; known: {', '.join(sorted(_BY_NAME))}")
    return spec


def api_name(api_key: int) -> str:
    """`Vote` for 52: the request schema's name without `Request` (or `api N` if unknown)."""
    spec = REQUESTS.get(api_key)
    return spec.name.removesuffix("Request") if spec else f"api {api_key}"
