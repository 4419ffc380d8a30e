"""What every znode decoder reads with: Kafka's name sets and field ranges, the topic name rule,
and `_Obj`, a decoded JSON object whose strict getters raise `ZnodeFormatError` naming the
path and the key."""

from __future__ import annotations

import base64
import re
from typing import Any

import orjson

from zkreader.errors import ZnodeFormatError

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


def number_named_twice(seen: dict[int, str], number: int, text: str) -> str | None:
    """Record that `text` names `number`; return the earlier text naming the same number.

    Kafka reads ids from text with `toInt`, so "5" and "05" (a partition key, a
    `/brokers/ids` child) are one id, and one of the two silently wins. Every reader of such
    names refuses the pair through here, naming both (issue 31: broker ids as partition keys).
    """
    earlier = seen.setdefault(number, text)
    return None if earlier is text else earlier


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
        if (earlier := number_named_twice(keys, partition, pkey)) is not None:
            # "5" and "05": one replica set would silently win
            raise o.fail(f"field {key!r} has partition keys {earlier!r} and {pkey!r}, "
                         f"which both name partition {partition}")
        if type(replicas) is list and replicas and _ids_ok(replicas):
            result[partition] = tuple(replicas)  # the common case, checked inline
            continue
        ids = _int_list(o, f"{key}.{pkey}", replicas, 0)
        if not ids and not allow_empty_lists:
            raise o.fail(f"field {key!r} assigns partition {pkey} to no replica")
        result[partition] = ids
    return result
