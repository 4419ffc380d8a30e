"""Strict decoders, one small frozen type per znode kind of ZK-mode Kafka's tree.

Shaped like kazoo's protocol types: each znode kind is a frozen value naming one znode (its
`path`) with a `decode(data, stat)` that returns the model from `zkreader._model`. Decoding is
strict on purpose (design I8): a migration that guesses at a malformed znode writes wrong
metadata into the quorum, so anything Kafka would not have written there — bad JSON, non-UTF-8,
wrong types, missing required keys, unknown versions, negative ids — raises `ZnodeFormatError`
naming the path and the problem, and the reader aborts before anything is written.

Formats: Kafka's `ZkData.scala` (`kafka.zk`), the JSON Kafka writes through `kafka.utils.Json`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from zkreader import _paths
from zkreader._model import (
    AclEntry,
    AclResource,
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ConfigZnode,
    ControllerEpochZnode,
    ControllerZnode,
    DelegationToken,
    FeatureZnode,
    LogDirEvent,
    MigrationZnode,
    PartitionState,
    ProducerIdBlock,
    Topic,
    ZnodeStat,
    new_partition_state,
)
from zkreader.errors import ZnodeFormatError

__all__ = [
    "AclZnode",
    "BrokerZnode",
    "ClusterIdZnodeKind",
    "ConfigZnodeKind",
    "ControllerEpochZnodeKind",
    "ControllerZnodeKind",
    "FeatureZnodeKind",
    "LogDirEventZnode",
    "MigrationZnodeKind",
    "PartitionStateZnode",
    "ProducerIdBlockZnode",
    "TokenZnode",
    "TopicZnode",
    "decode_uuid",
    "kind_for_path",
]

SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
ACL_OPERATIONS = frozenset(
    {
        "All", "Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction",
        "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "CreateTokens", "DescribeTokens",
    }
)
ACL_PERMISSIONS = frozenset({"Allow", "Deny"})
ACL_PATTERNS = {"prefixed": "PREFIXED"}

# Kafka's EndPoint.createEndPoint: `LISTENER://host:port`, host possibly empty or [ipv6].
_ENDPOINT = re.compile(r"^([A-Za-z0-9_.\-]+)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")
_DECIMAL = re.compile(r"^-?[0-9]+$")

# Ranges of the KRaft record fields znode values land in (broker/partition ids, epochs: int32;
# timestamps, offsets, producer ids: int64; feature levels: int16). A value past its field's
# range is refused here, where the znode path is known, not later by the encoder, which only
# knows the record field.
INT16_MAX = 2**15 - 1
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_STRING_BYTES = 32767
"""Longest string a metadata record field can carry (Kafka's generated code refuses longer)."""

# Kafka's topic name rule (org.apache.kafka.common.internals.Topic.validate): 1..249 characters
# of ASCII alphanumerics, '.', '_' and '-', and neither "." nor "..". 249 (not 255 as before
# Kafka 0.10) leaves room for "-<partition>" in a 255-byte log directory name.
TOPIC_NAME_MAX_LENGTH = 249
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")


def topic_name_problem(name: str) -> str | None:
    """Why Kafka would refuse `name` as a topic name, or None when it is legal."""
    if not name:
        return "topic name is empty"
    if name in (".", ".."):
        return f"topic name {name!r} is not allowed (Kafka forbids '.' and '..')"
    if len(name) > TOPIC_NAME_MAX_LENGTH:
        return (f"topic name is {len(name)} characters long; Kafka allows at most "
                f"{TOPIC_NAME_MAX_LENGTH}")
    if not _TOPIC_NAME.match(name):
        bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "._-"))})
        return (f"topic name {name!r} has characters Kafka does not allow ({''.join(bad)!r}); "
                "legal: ASCII letters, digits, '.', '_' and '-'")
    return None
_UUID_TEXT = re.compile(r"^[A-Za-z0-9_\-]{22}$")
_ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


class _Obj:
    """A decoded JSON object bound to its znode path, with typed, strict field getters.

    Every getter raises `ZnodeFormatError(path, ...)` naming the key, so each decoder reads
    like a field list and all problems are reported the same way.
    """

    __slots__ = ("path", "raw")

    def __init__(self, path: str, raw: Any, what: str = "znode data") -> None:
        if not isinstance(raw, dict):
            raise ZnodeFormatError(path, f"{what} is {_kind(raw)}, expected a JSON object")
        self.path = path
        self.raw: dict[str, Any] = raw

    def fail(self, problem: str) -> ZnodeFormatError:
        return ZnodeFormatError(self.path, problem)

    def has(self, key: str) -> bool:
        return key in self.raw

    def _get(self, key: str) -> Any:
        try:
            return self.raw[key]
        except KeyError:
            raise self.fail(f"missing required field {key!r}") from None

    def integer(self, key: str, *, minimum: int | None = None, maximum: int = INT32_MAX) -> int:
        """An integer field; `maximum` is the range of the record field it lands in (int32)."""
        value = self._get(key)
        if type(value) is not int:
            raise self.fail(f"field {key!r} is {_kind(value)}, expected an integer")
        if minimum is not None and value < minimum:
            raise self.fail(f"field {key!r} is {value}, expected >= {minimum}")
        if value > maximum:
            raise self.fail(f"field {key!r} is {value}, past the largest value {maximum}")
        return value

    def opt_int(self, key: str, default: int, *, minimum: int | None = None) -> int:
        return self.integer(key, minimum=minimum) if key in self.raw else default

    def string(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str):
            raise self.fail(f"field {key!r} is {_kind(value)}, expected a string")
        if len(value) > MAX_STRING_BYTES // 3 and len(value.encode()) > MAX_STRING_BYTES:
            raise self.fail(f"field {key!r} is {len(value.encode())} bytes long; a metadata "
                            f"record field holds at most {MAX_STRING_BYTES}")
        return value

    def opt_str(self, key: str) -> str | None:
        """A string, or None when the key is absent or JSON null."""
        if self.raw.get(key) is None:
            return None
        return self.string(key)

    def long_text(self, key: str, *, minimum: int | None = None) -> int:
        """A number Kafka writes as a decimal string (timestamps, producer id blocks)."""
        text = self.string(key)
        if not _DECIMAL.match(text):
            raise self.fail(f"field {key!r} is {text!r}, expected a decimal number as a string")
        value = int(text)
        if minimum is not None and value < minimum:
            raise self.fail(f"field {key!r} is {value}, expected >= {minimum}")
        if value > INT64_MAX:
            raise self.fail(f"field {key!r} is {value}, past the largest value {INT64_MAX}")
        return value

    def int_list(self, key: str, *, minimum: int = 0, raw: Any = None) -> tuple[int, ...]:
        value = self._get(key) if raw is None else raw
        return _int_list(self, key, value, minimum)

    def obj(self, key: str) -> _Obj:
        return _Obj(self.path, self._get(key), f"field {key!r}")

    def version(self, supported: tuple[int, ...]) -> int:
        version = self.integer("version")
        if version not in supported:
            raise self.fail(f"unknown version {version} (supported: {_versions(supported)})")
        return version


def _int_list(o: _Obj, key: str, value: Any, minimum: int) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise o.fail(f"field {key!r} is {_kind(value)}, expected a list of integers")
    for item in value:
        if type(item) is not int:
            raise o.fail(f"field {key!r} holds {_kind(item)}, expected integers")
        if item < minimum:
            raise o.fail(f"field {key!r} holds {item}, expected integers >= {minimum}")
        if item > INT32_MAX:
            raise o.fail(f"field {key!r} holds {item}, past the largest broker id {INT32_MAX}")
    if len(set(value)) != len(value):
        raise o.fail(f"field {key!r} lists a broker id twice: {value}")
    return tuple(value)


def _ids_ok(values: list[Any]) -> bool:
    """Fast check: a list of distinct integers >= 0 (broker ids)."""
    for x in values:
        if type(x) is not int or x < 0 or x > INT32_MAX:
            return False
    return len(set(values)) == len(values)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _versions(supported: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in supported)


def _text(path: str, data: bytes | None) -> str:
    if not data:
        raise ZnodeFormatError(path, "znode has no data")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ZnodeFormatError(path, f"data is not valid UTF-8 ({exc.reason})") from None


def _json(path: str, data: bytes | None) -> _Obj:
    if not data:
        raise ZnodeFormatError(path, "znode has no data, expected JSON")
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "UTF-8" in exc.msg:
            raise ZnodeFormatError(path, "data is not valid UTF-8") from None
        raise ZnodeFormatError(path, f"not valid JSON ({exc.msg} at byte {exc.pos})") from None
    return _Obj(path, raw)


def decode_uuid(path: str, key: str, text: str) -> str:
    """Check Kafka's Uuid text (22-char URL-safe base64 of 16 bytes, not the zero Uuid).

    Raises:
        ZnodeFormatError: the text is not a valid, non-zero Kafka Uuid.
    """
    if not _UUID_TEXT.match(text):
        raise ZnodeFormatError(path, f"field {key!r} is {text!r}, not a 22-character Kafka Uuid")
    if len(base64.urlsafe_b64decode(text + "==")) != 16:  # pragma: no cover - regex ensures it
        raise ZnodeFormatError(path, f"field {key!r} does not decode to 16 bytes")
    if text == _ZERO_UUID:
        raise ZnodeFormatError(path, f"field {key!r} is the zero Uuid")
    return text


def _canonical_partition_map(raw: dict[str, Any]) -> dict[int, tuple[int, ...]] | None:
    """The common case of a partition map, in one pass; None sends it through the full checks.

    Accepted here: every key a canonical partition id (ASCII digits, no sign, no leading zero,
    at most 9 digits: within int32, and distinct keys are distinct ids) and every value a
    non-empty list of distinct broker ids. A 100,000-partition read decodes 100,000 of these
    entries; anything else (and every problem the full checks name) takes the full path.
    """
    result: dict[int, tuple[int, ...]] = {}
    for pkey, replicas in raw.items():
        if (not pkey.isdigit() or not pkey.isascii() or len(pkey) > 9
                or (pkey[0] == "0" and pkey != "0")):
            return None
        if type(replicas) is not list or not replicas or not _ids_ok(replicas):
            return None
        result[int(pkey)] = tuple(replicas)
    return result


def _partition_map(o: _Obj, key: str, *, allow_empty_lists: bool) -> dict[int, tuple[int, ...]]:
    raw = o.obj(key).raw
    fast = _canonical_partition_map(raw)
    if fast is not None:
        return fast
    result: dict[int, tuple[int, ...]] = {}
    keys: dict[int, str] = {}
    for pkey, replicas in raw.items():
        if not _DECIMAL.match(pkey) or pkey.startswith("-"):
            raise o.fail(f"field {key!r} has partition key {pkey!r}, expected a partition id >= 0")
        partition = int(pkey)
        if partition > INT32_MAX:
            raise o.fail(f"field {key!r} has partition key {pkey!r}, past the largest "
                         f"partition id {INT32_MAX}")
        if partition in keys:  # "5" and "05": one replica set would silently win
            raise o.fail(f"field {key!r} has partition keys {keys[partition]!r} and {pkey!r}, "
                         f"which both name partition {partition}")
        keys[partition] = pkey
        if type(replicas) is list and replicas and _ids_ok(replicas):
            result[partition] = tuple(replicas)  # the common case, checked inline
            continue
        ids = _int_list(o, f"{key}.{pkey}", replicas, 0)
        if not ids and not allow_empty_lists:
            raise o.fail(f"field {key!r} assigns partition {pkey} to no replica")
        result[partition] = ids
    return result


@dataclass(frozen=True, slots=True)
class BrokerZnode:
    """`/brokers/ids/<id>` (JSON versions 1-5; ephemeral; czxid is the broker epoch)."""

    broker_id: int
    VERSIONS = (1, 2, 3, 4, 5)

    @property
    def path(self) -> str:
        return _paths.broker(self.broker_id)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> Broker:
        """Decode a broker registration.

        Raises:
            ZnodeFormatError: malformed JSON, unknown version, bad endpoint or field.
        """
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        jmx_port = o.integer("jmx_port", minimum=-1)
        timestamp = o.long_text("timestamp", minimum=0) if o.has("timestamp") else 0
        if version == 1:
            port = o.integer("port", minimum=0)
            endpoints: tuple[BrokerEndpoint, ...] = (
                BrokerEndpoint("PLAINTEXT", o.string("host"), port, "PLAINTEXT"),
            )
        else:
            protocols: dict[str, str] | None = None
            if o.raw.get("listener_security_protocol_map") is not None:
                pmap = o.obj("listener_security_protocol_map").raw
                protocols = {}
                for name, proto in pmap.items():
                    if proto not in SECURITY_PROTOCOLS:
                        raise o.fail(f"listener {name!r} maps to unknown security protocol "
                                     f"{proto!r}")
                    protocols[name] = proto
            raw_endpoints = o._get("endpoints")
            if not isinstance(raw_endpoints, list) or not raw_endpoints:
                raise o.fail("field 'endpoints' must be a non-empty list of LISTENER://host:port")
            endpoints = tuple(_endpoint(o, e, protocols) for e in raw_endpoints)
        rack = o.opt_str("rack") if version >= 3 else None
        features: dict[str, tuple[int, int]] = {}
        if version >= 5 and o.raw.get("features") is not None:
            for name, rng in o.obj("features").raw.items():
                r = _Obj(self.path, rng, f"feature {name!r}")
                lo, hi = (r.integer("min_version", minimum=0, maximum=INT16_MAX),
                          r.integer("max_version", minimum=0, maximum=INT16_MAX))
                if lo > hi:
                    raise o.fail(f"feature {name!r} has min_version {lo} > max_version {hi}")
                features[name] = (lo, hi)
        return Broker(
            broker_id=self.broker_id,
            json_version=version,
            endpoints=endpoints,
            rack=rack,
            jmx_port=jmx_port,
            timestamp_ms=timestamp,
            features=features,
            stat=stat,
        )


def _endpoint(o: _Obj, text: Any, protocols: Mapping[str, str] | None) -> BrokerEndpoint:
    if not isinstance(text, str):
        raise o.fail(f"endpoint is {_kind(text)}, expected 'LISTENER://host:port'")
    if len(text.encode()) > MAX_STRING_BYTES:
        raise o.fail(f"endpoint is {len(text.encode())} bytes long; a metadata record field "
                     f"holds at most {MAX_STRING_BYTES}")
    match = _ENDPOINT.match(text)
    if not match:
        raise o.fail(f"endpoint {text!r} is not 'LISTENER://host:port'")
    listener, host, port_text = match.groups()
    port = int(port_text)
    if not 0 <= port <= 65535:
        raise o.fail(f"endpoint {text!r} has port {port} outside 0..65535")
    if protocols is None:
        protocol = listener.upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise o.fail(f"endpoint {text!r}: listener is not a security protocol and the "
                         "znode has no listener_security_protocol_map")
    else:
        try:
            protocol = protocols[listener]
        except KeyError:
            raise o.fail(f"endpoint {text!r}: listener {listener!r} is not in "
                         "listener_security_protocol_map") from None
    return BrokerEndpoint(listener=listener, host=host, port=port, security_protocol=protocol)


@dataclass(frozen=True, slots=True)
class ControllerZnodeKind:
    """`/controller` (v1 before Kafka 3.4, v2 with `kraftControllerEpoch`)."""

    VERSIONS = (1, 2)

    @property
    def path(self) -> str:
        return _paths.CONTROLLER

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ControllerZnode:
        """Raises: ZnodeFormatError on malformed data or an unknown version."""
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        return ControllerZnode(
            broker_id=o.integer("brokerid", minimum=0),
            json_version=version,
            timestamp_ms=o.long_text("timestamp", minimum=0) if o.has("timestamp") else 0,
            kraft_controller_epoch=o.integer("kraftControllerEpoch", minimum=-1) if version >= 2
            else -1,
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class ControllerEpochZnodeKind:
    """`/controller_epoch`: plain decimal text (not JSON); its version is the fencing token."""

    @property
    def path(self) -> str:
        return _paths.CONTROLLER_EPOCH

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ControllerEpochZnode:
        """Raises: ZnodeFormatError unless the data is a non-negative decimal integer."""
        text = _text(self.path, data).strip()
        if not text.isascii() or not text.isdigit():
            raise ZnodeFormatError(self.path, f"data {text[:40]!r} is not a decimal epoch >= 0")
        if int(text) > INT32_MAX:
            raise ZnodeFormatError(self.path, f"epoch {text} is past the largest value {INT32_MAX}")
        return ControllerEpochZnode(epoch=int(text), stat=stat)


@dataclass(frozen=True, slots=True)
class ClusterIdZnodeKind:
    """`/cluster/id`: `{"version":"1","id":"<Uuid>"}` — the version is a string."""

    @property
    def path(self) -> str:
        return _paths.CLUSTER_ID

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ClusterIdZnode:
        """Raises: ZnodeFormatError on malformed data or a version other than "1"."""
        o = _json(self.path, data)
        version = o.string("version")
        if version != "1":
            raise o.fail(f"unknown version {version!r} (supported: \"1\")")
        cluster_id = o.string("id")
        if not _UUID_TEXT.match(cluster_id):
            raise o.fail(f"field 'id' is {cluster_id!r}, not a 22-character cluster id")
        return ClusterIdZnode(cluster_id=cluster_id, stat=stat)


@dataclass(frozen=True, slots=True)
class FeatureZnodeKind:
    """`/feature`: v1 has min and max version levels, v2 only max; status 0 or 1."""

    VERSIONS = (1, 2)

    @property
    def path(self) -> str:
        return _paths.FEATURE

    def decode(self, data: bytes | None, stat: ZnodeStat) -> FeatureZnode:
        """Raises: ZnodeFormatError on malformed data or an unknown version/status."""
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        status = o.integer("status")
        if status not in (0, 1):
            raise o.fail(f"unknown status {status} (0 = disabled, 1 = enabled)")
        features: dict[str, tuple[int | None, int]] = {}
        for name, levels in o.obj("features").raw.items():
            f = _Obj(self.path, levels, f"feature {name!r}")
            hi = f.integer("max_version_level", minimum=0, maximum=INT16_MAX)
            lo = (f.integer("min_version_level", minimum=0, maximum=INT16_MAX)
                  if version == 1 else None)
            if lo is not None and lo > hi:
                raise o.fail(f"feature {name!r} has min_version_level {lo} > max {hi}")
            features[name] = (lo, hi)
        return FeatureZnode(json_version=version, status=status, features=features, stat=stat)


@dataclass(frozen=True, slots=True)
class TopicZnode:
    """`/brokers/topics/<name>` (v1 assignment; v2 + reassignment; v3 + topic_id)."""

    name: str
    VERSIONS = (1, 2, 3)

    @property
    def path(self) -> str:
        return _paths.topic(self.name)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> Topic:
        """Raises: ZnodeFormatError on an illegal topic name, malformed data, an unknown
        version or a bad assignment."""
        problem = topic_name_problem(self.name)
        if problem is not None:
            raise ZnodeFormatError(self.path, problem)
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        assignment = _partition_map(o, "partitions", allow_empty_lists=False)
        adding = _partition_map(o, "adding_replicas", allow_empty_lists=True) if o.raw.get(
            "adding_replicas") is not None else {}
        removing = _partition_map(o, "removing_replicas", allow_empty_lists=True) if o.raw.get(
            "removing_replicas") is not None else {}
        for key, extra in (("adding_replicas", adding), ("removing_replicas", removing)):
            unknown = sorted(set(extra) - set(assignment))
            if unknown:
                raise o.fail(f"field {key!r} names partitions {unknown} not in 'partitions'")
        topic_id = o.opt_str("topic_id")
        if topic_id is not None:
            decode_uuid(self.path, "topic_id", topic_id)
        return Topic(
            name=self.name,
            json_version=version,
            topic_id=topic_id,
            assignment=assignment,
            adding_replicas={p: r for p, r in adding.items() if r},
            removing_replicas={p: r for p, r in removing.items() if r},
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class PartitionStateZnode:
    """`/brokers/topics/<t>/partitions/<p>/state` (v1; partition epoch = znode version)."""

    topic: str
    partition: int
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.partition_state(self.topic, self.partition)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> PartitionState:
        """Raises: ZnodeFormatError on malformed data or an unknown version.

        The common, well-formed case is checked inline (a 100,000-partition read decodes this
        100,000 times); anything it does not accept goes through the field-by-field check,
        which names the problem.
        """
        raw: Any = None
        if data:
            try:
                raw = orjson.loads(data)
            except orjson.JSONDecodeError:
                raw = None
        if type(raw) is dict:
            version = raw.get("version")
            leader = raw.get("leader")
            epoch = raw.get("leader_epoch")
            cepoch = raw.get("controller_epoch")
            isr = raw.get("isr")
            recovery = raw.get("leader_recovery_state", 0)
            if (version == 1 and type(version) is int and type(leader) is int
                    and -1 <= leader <= INT32_MAX and type(epoch) is int
                    and 0 <= epoch <= INT32_MAX and type(cepoch) is int
                    and 0 <= cepoch <= INT32_MAX
                    and type(isr) is list and _ids_ok(isr) and type(recovery) is int
                    and 0 <= recovery <= 1):
                return new_partition_state(self.topic, self.partition, leader, epoch, cepoch,
                                           tuple(isr), recovery, stat)
        return self._decode_strict(data, stat)

    def _decode_strict(self, data: bytes | None, stat: ZnodeStat) -> PartitionState:
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        recovery = o.opt_int("leader_recovery_state", 0)
        if recovery not in (0, 1):
            raise o.fail(f"unknown leader_recovery_state {recovery} (0 RECOVERED, 1 RECOVERING)")
        return PartitionState(
            topic=self.topic,
            partition=self.partition,
            leader=o.integer("leader", minimum=-1),
            leader_epoch=o.integer("leader_epoch", minimum=0),
            controller_epoch=o.integer("controller_epoch", minimum=0),
            isr=o.int_list("isr"),
            leader_recovery_state=recovery,
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class ConfigZnodeKind:
    """`/config/<entity_path>`: `{"version":1,"config":{"key":"string value"}}`."""

    entity_path: str
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.config(self.entity_path)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ConfigZnode:
        """Raises: ZnodeFormatError on malformed data, an unknown version or a non-string value.

        The error names the key only, never the value: values may be secrets. A znode without
        data is an empty config: Kafka creates `/config/users/<u>` empty when only user+client
        quotas exist, and reads it as no config.
        """
        if not data:
            return ConfigZnode(entity_path=self.entity_path, config={}, stat=stat)
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        config = o.obj("config").raw
        for key, value in config.items():
            if len(key.encode()) > MAX_STRING_BYTES:
                raise o.fail(f"a config key is {len(key.encode())} bytes long; a ConfigRecord "
                             f"name holds at most {MAX_STRING_BYTES}")
            if not isinstance(value, str):
                raise o.fail(f"config key {key!r} has {_kind(value)} value, expected a string")
            if len(value) > MAX_STRING_BYTES // 3 and len(value.encode()) > MAX_STRING_BYTES:
                raise o.fail(f"config key {key!r} has a value of {len(value.encode())} bytes; a "
                             f"ConfigRecord value holds at most {MAX_STRING_BYTES}")
        return ConfigZnode(entity_path=self.entity_path, config=config, stat=stat)


@dataclass(frozen=True, slots=True)
class AclZnode:
    """`/kafka-acl/<Type>/<name>` (pattern LITERAL) or `/kafka-acl-extended/<p>/<Type>/<name>`."""

    pattern_type: str  # LITERAL or PREFIXED
    resource_type: str
    name: str
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        if self.pattern_type == "LITERAL":
            return _paths.acl_literal_resource(self.resource_type, self.name)
        return _paths.acl_extended_resource(self.pattern_type.lower(), self.resource_type,
                                            self.name)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> AclResource:
        """Raises: ZnodeFormatError on malformed data, unknown version, operation or permission."""
        if self.resource_type not in _paths.ACL_RESOURCE_TYPES:
            raise ZnodeFormatError(self.path, f"unknown ACL resource type {self.resource_type!r}")
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        raw_acls = o._get("acls")
        if not isinstance(raw_acls, list):
            raise o.fail(f"field 'acls' is {_kind(raw_acls)}, expected a list")
        entries = []
        for raw in raw_acls:
            a = _Obj(self.path, raw, "an ACL entry")
            principal = a.string("principal")
            if ":" not in principal:
                raise o.fail(f"ACL principal {principal!r} is not 'Type:name'")
            permission = a.string("permissionType")
            if permission not in ACL_PERMISSIONS:
                raise o.fail(f"unknown ACL permissionType {permission!r}")
            operation = a.string("operation")
            if operation not in ACL_OPERATIONS:
                raise o.fail(f"unknown ACL operation {operation!r}")
            entries.append(AclEntry(principal, permission, operation, a.string("host")))
        return AclResource(
            pattern_type=self.pattern_type,
            resource_type=self.resource_type,
            name=self.name,
            acls=tuple(entries),
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class TokenZnode:
    """`/delegation_token/tokens/<tokenId>` (v1-3; v3 adds tokenRequester). No HMAC in ZK."""

    token_id: str
    VERSIONS = (1, 2, 3)

    @property
    def path(self) -> str:
        return _paths.token(self.token_id)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> DelegationToken:
        """Raises: ZnodeFormatError on malformed data, unknown version or mismatched tokenId."""
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        token_id = o.string("tokenId")
        if token_id != self.token_id:
            raise o.fail(f"field 'tokenId' is {token_id!r} but the znode is {self.token_id!r}")
        renewers = o._get("renewers")
        if not isinstance(renewers, list) or not all(isinstance(r, str) for r in renewers):
            raise o.fail("field 'renewers' must be a list of strings")
        return DelegationToken(
            token_id=token_id,
            json_version=version,
            owner=o.string("owner"),
            requester=o.string("tokenRequester") if version >= 3 else o.opt_str("tokenRequester"),
            renewers=tuple(renewers),
            issue_timestamp_ms=o.integer("issueTimestamp", minimum=0, maximum=INT64_MAX),
            max_timestamp_ms=o.integer("maxTimestamp", minimum=0, maximum=INT64_MAX),
            expiry_timestamp_ms=o.integer("expiryTimestamp", minimum=0, maximum=INT64_MAX),
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class ProducerIdBlockZnode:
    """`/latest_producer_id_block`: v1, block bounds as decimal strings; broker -1 from KRaft."""

    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.PRODUCER_ID_BLOCK

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ProducerIdBlock | None:
        """Decode the block; None when the znode is empty.

        Kafka pre-creates this path with no data (`KafkaZkClient.createTopLevelPaths`) and fills
        it only when a broker first asks for a block; its producer-id manager and its migration
        (`ZkMigrationClient.migrateProducerId`) both read "no data" as "no block handed out yet".
        A fresh ZK-mode cluster has exactly that, so it is not malformed.

        Raises: ZnodeFormatError on malformed data, unknown version or an inverted block.
        """
        if not data:
            return None
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        start = o.long_text("block_start", minimum=0)
        end = o.long_text("block_end", minimum=0)
        if end < start:
            raise o.fail(f"block_end {end} < block_start {start}")
        return ProducerIdBlock(
            json_version=version,
            broker_id=o.integer("broker", minimum=-1),
            block_start=start,
            block_end=end,
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class LogDirEventZnode:
    """`/log_dir_event_notification/log_dir_event_<seq>`: v1, event 1 = LogDirFailure."""

    name: str
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.log_dir_event(self.name)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> LogDirEvent:
        """Raises: ZnodeFormatError on malformed data, unknown version or event code."""
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        event = o.integer("event")
        if event != 1:
            raise o.fail(f"unknown event {event} (1 = LogDirFailure)")
        return LogDirEvent(name=self.name, broker_id=o.integer("broker", minimum=0), event=event,
                           stat=stat)


@dataclass(frozen=True, slots=True)
class MigrationZnodeKind:
    """`/migration`: only version 0 exists (Kafka's decoder rejects anything else)."""

    VERSIONS = (0,)

    @property
    def path(self) -> str:
        return _paths.MIGRATION

    def decode(self, data: bytes | None, stat: ZnodeStat) -> MigrationZnode:
        """Raises: ZnodeFormatError on malformed data or a version other than 0."""
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        return MigrationZnode(
            kraft_controller_id=o.integer("kraft_controller_id", minimum=-1),
            kraft_controller_epoch=o.integer("kraft_controller_epoch", minimum=-1),
            kraft_metadata_offset=o.integer("kraft_metadata_offset", minimum=-1, maximum=INT64_MAX),
            kraft_metadata_epoch=o.integer("kraft_metadata_epoch", minimum=-1),
            stat=stat,
        )


ZnodeKind = (BrokerZnode | TopicZnode | PartitionStateZnode | ControllerZnodeKind
             | ControllerEpochZnodeKind | ClusterIdZnodeKind | FeatureZnodeKind | ConfigZnodeKind
             | AclZnode | TokenZnode | ProducerIdBlockZnode | LogDirEventZnode | MigrationZnodeKind)

_SINGLETONS: dict[str, ZnodeKind] = {
    _paths.CONTROLLER: ControllerZnodeKind(),
    _paths.CONTROLLER_EPOCH: ControllerEpochZnodeKind(),
    _paths.CLUSTER_ID: ClusterIdZnodeKind(),
    _paths.FEATURE: FeatureZnodeKind(),
    _paths.PRODUCER_ID_BLOCK: ProducerIdBlockZnode(),
    _paths.MIGRATION: MigrationZnodeKind(),
}


def kind_for_path(path: str) -> ZnodeKind | None:
    """The decoder for a metadata znode path (chroot-relative), or None if it holds no metadata.

    Used by the reader's tests and by change-feed consumers that re-read a notified path.

    Raises:
        ZnodeFormatError: the path is a broker registration or partition whose name is not an id.
    """
    if path in _SINGLETONS:
        return _SINGLETONS[path]
    parts = path.split("/")[1:]
    n = len(parts)
    if n == 3 and parts[:2] == ["brokers", "ids"]:
        if not parts[2].isascii() or not parts[2].isdigit() or int(parts[2]) > INT32_MAX:
            raise ZnodeFormatError(path, f"broker registration name is not a broker id in "
                                   f"0..{INT32_MAX}")
        return BrokerZnode(int(parts[2]))
    if n == 3 and parts[:2] == ["brokers", "topics"]:
        return TopicZnode(parts[2])
    if n == 6 and parts[:2] == ["brokers", "topics"] and parts[3] == "partitions" \
            and parts[5] == "state":
        if not parts[4].isascii() or not parts[4].isdigit() or int(parts[4]) > INT32_MAX:
            raise ZnodeFormatError(path, f"partition name is not a partition id in 0..{INT32_MAX}")
        return PartitionStateZnode(parts[2], int(parts[4]))
    if parts[0] == "config" and ((n == 3 and parts[1] in _paths.CONFIG_ENTITY_TYPES)
                                 or (n == 5 and parts[1] == "users" and parts[3] == "clients")):
        return ConfigZnodeKind("/".join(parts[1:]))
    if n == 3 and parts[0] == "kafka-acl":
        return AclZnode("LITERAL", parts[1], parts[2])
    if n == 4 and parts[0] == "kafka-acl-extended" and parts[1] in ACL_PATTERNS:
        return AclZnode(ACL_PATTERNS[parts[1]], parts[2], parts[3])
    if n == 3 and parts[:2] == ["delegation_token", "tokens"]:
        return TokenZnode(parts[2])
    if n == 2 and parts[0] == "log_dir_event_notification" and parts[1].startswith(
            "log_dir_event_"):
        return LogDirEventZnode(parts[1])
    return None
