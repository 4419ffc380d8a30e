"""Kafka's facts that several parts of zk2kraft need, kept once, next to the record schema.

Translation (`migrate`) writes these codes into records; verify's expected image, parity and
reports read them back; the snapshot dump and the renderers redact by the same rule. Each table
is Kafka's own (sources named per table); a second copy anywhere is a bug waiting to disagree.

- ACL enums: `org.apache.kafka.common.resource.ResourceType`, `PatternType`,
  `org.apache.kafka.common.acl.AclOperation`, `AclPermissionType` (byte codes; 0 UNKNOWN and 1
  ANY/MATCH are never stored). ZooKeeper's ACL stores spell them in PascalCase (`IdempotentWrite`),
  records carry the codes; `kafka_code` accepts either spelling.
- Security protocols: `org.apache.kafka.common.security.auth.SecurityProtocol` ids.
- SCRAM mechanisms: `org.apache.kafka.clients.admin.ScramMechanism` types.
- Desanitizing: `org.apache.kafka.common.utils.Sanitizer`.
- Which config values are secrets: one rule, one marker (`is_sensitive_config`, `REDACTED`).
- `ConfigResource.Type` codes (`org.apache.kafka.common.config.ConfigResource`) that
  `ConfigRecord.ResourceType` carries, and `PartitionChangeRecord.Leader`'s "no change" (-2,
  the field's default: `LeaderConstants.NO_LEADER_CHANGE`).
- Which record fields are secrets, for the printers of records (`redact_record_data`): Kafka's
  `MetadataNodeRedactionCriteria` (SCRAM and token data always, configs by sensitivity).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

__all__ = [
    "ACL_OPERATIONS",
    "ACL_PATTERN_TYPES",
    "ACL_PERMISSIONS",
    "ACL_RESOURCE_TYPES",
    "BROKER_RESOURCE",
    "NO_LEADER_CHANGE",
    "RECORD_TYPES_WITH_SECRETS",
    "REDACTED",
    "SCRAM_MECHANISMS",
    "SECURITY_PROTOCOLS",
    "TOPIC_RESOURCE",
    "desanitize",
    "is_sensitive_config",
    "kafka_code",
    "kafka_name",
    "redact_record_data",
    "sanitize",
]

TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER
NO_LEADER_CHANGE = -2
"""`PartitionChangeRecord.Leader` when the leader stays (the field's default): a replay keeps the
leader and its epoch, a writer leaves the field out."""

_V = TypeVar("_V")

ACL_RESOURCE_TYPES: Mapping[str, int] = {
    "TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5, "DELEGATION_TOKEN": 6, "USER": 7,
}
"""`ResourceType` name -> code."""

ACL_PATTERN_TYPES: Mapping[str, int] = {"LITERAL": 3, "PREFIXED": 4}
"""`PatternType` name -> code (stored patterns only: MATCH 2 and ANY 1 are filters)."""

ACL_OPERATIONS: Mapping[str, int] = {
    "ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7, "DESCRIBE": 8,
    "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11, "IDEMPOTENT_WRITE": 12,
    "CREATE_TOKENS": 13, "DESCRIBE_TOKENS": 14,
}
"""`AclOperation` name -> code."""

ACL_PERMISSIONS: Mapping[str, int] = {"DENY": 2, "ALLOW": 3}
"""`AclPermissionType` name -> code."""

SECURITY_PROTOCOLS: Mapping[str, int] = {
    "PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3,
}
"""`SecurityProtocol` name -> id (the `securityProtocol` of a broker endpoint)."""

SCRAM_MECHANISMS: Mapping[str, int] = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
"""SCRAM mechanism name (the key under `/config/users/<u>`) -> `ScramMechanism` type."""


def _norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


_NORMALIZED: dict[int, dict[str, int]] = {}


def kafka_code(table: Mapping[str, int], name: str) -> int | None:
    """The code of `name` in one of the tables above, whatever its spelling.

    `IdempotentWrite`, `IDEMPOTENT_WRITE` and `idempotentwrite` are one name (ZooKeeper's stores
    use PascalCase, Kafka's enums upper snake case).

    Returns:
        The code, or None when the name is not Kafka's (the caller names the znode).
    """
    normalized = _NORMALIZED.get(id(table))
    if normalized is None:
        normalized = _NORMALIZED[id(table)] = {_norm(k): v for k, v in table.items()}
    return normalized.get(_norm(name))


def kafka_name(table: Mapping[str, int], code: int) -> str | None:
    """Kafka's enum name of `code` in one of the tables above (`IDEMPOTENT_WRITE`), or None."""
    for name, value in table.items():
        if value == code:
            return name
    return None


# ----------------------------------------------------------------------------- sanitizing

_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
_HEX = frozenset("0123456789abcdefABCDEF")


def sanitize(name: str) -> str:
    """Return `name` as ZK-mode Kafka stores it (`Sanitizer.sanitize`).

    Java's `URLEncoder.encode(name, UTF-8)` (letters, digits and `.-*_` kept, space as `+`, every
    other byte as upper-case `%XX`) followed by `*` -> `%2A` and `+` -> `%20`: so every byte but
    letters, digits and `.-_` becomes `%XX`.

    Args:
        name: an entity name such as `alice@example.com` or `User:alice`.

    Returns:
        The sanitized form, e.g. `alice%40example.com`, `User%3Aalice`.
    """
    return "".join(chr(b) if b in _KEPT else f"%{b:02X}" for b in name.encode("utf-8"))


def desanitize(name: str) -> str:
    """Return the entity name a sanitized znode name stands for (`Sanitizer.desanitize`).

    Kafka's `Sanitizer.desanitize` is Java's `URLDecoder.decode(name, UTF-8)`: `%XX` sequences
    decode as UTF-8 and `+` becomes a space; a `%` not followed by two hex digits throws
    `IllegalArgumentException` ("URLDecoder: Illegal hex characters in escape (%) pattern"). So
    does this: passing `%zz` through (what Python's `unquote_plus` does) would migrate a name no
    client can ever match, and would make translation and verify disagree about it.

    Args:
        name: the stored form, e.g. `alice%40example.com`.

    Returns:
        The decoded name, e.g. `alice@example.com`.

    Raises:
        ValueError: a malformed escape, or escapes that are not UTF-8 (the caller names the
            znode).
    """
    if "%" not in name and "+" not in name:
        return name
    out = bytearray()
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "%":
            pair = name[i + 1 : i + 3]
            if len(pair) != 2 or not set(pair) <= _HEX:
                raise ValueError(f"illegal escape {name[i:i + 3]!r} at position {i} in {name!r}")
            out.append(int(pair, 16))
            i += 3
        elif ch == "+":
            out.append(0x20)
            i += 1
        else:
            out += ch.encode("utf-8")
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"escapes in {name!r} are not UTF-8: {exc.reason}") from None


# ------------------------------------------------------------------------------ secrets

REDACTED = "<redacted>"
"""What every report, dump and log line shows instead of a secret value."""

# Kafka decides by a config's declared type (PASSWORD); zk2kraft has no registry of every
# plugin's configs, so it errs on the side of hiding: any key containing one of these.
_SENSITIVE_KEY_PARTS = (
    "password",
    "sasl.jaas.config",
    "secret",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "credential",
    "token",
)
# Kafka's PasswordEncoder output ("encryptedPassword:...,passwordLength:..."): never printed,
# whatever innocent-looking key holds it.
_ENCRYPTED_MARKERS = ("encryptedPassword", "passwordLength")


def is_sensitive_config(key: str, value: str | None = None) -> bool:
    """True when a config entry's value must never be printed.

    One rule for every printer (snapshot dumps, plan samples, inspect, parity reports): the key
    is a SCRAM mechanism, or contains `password`, `secret`, `credential`, `token`,
    `sasl.jaas.config` or a PEM-in-config key (case-insensitive, listener prefixes included), or
    the value is Kafka's encrypted-password form.

    Args:
        key: the config key.
        value: its value, when known (None: judge by the key alone).
    """
    lowered = key.lower()
    if lowered.startswith("scram-"):
        return True
    if any(part in lowered for part in _SENSITIVE_KEY_PARTS):
        return True
    return value is not None and any(marker in value for marker in _ENCRYPTED_MARKERS)


# SCRAM credential material: `UserScramCredentialRecord`'s salt and keys, and the salted password
# that Kafka's `kafka-storage format --add-scram` accepts in their place.
_SCRAM_SECRET_FIELDS = frozenset({"salt", "saltedPassword", "storedKey", "serverKey"})
# Of a delegation token only its id is shown: its owner, renewers, timestamps and any HMAC are
# token data, which Kafka's redaction hides whole.
_TOKEN_SHOWN_FIELDS = frozenset({"tokenId"})

RECORD_TYPES_WITH_SECRETS = frozenset({
    "USER_SCRAM_CREDENTIAL_RECORD", "DELEGATION_TOKEN_RECORD", "CONFIG_RECORD"})
"""The record types `redact_record_data` may change; a printer may pass any other type through."""


def redact_record_data(record_type: str, data: Mapping[str, _V]) -> dict[str, _V | str]:
    """Return a record's fields with every secret value replaced by `REDACTED`.

    The one rule for every printer of records (`plan`'s record samples, `inspect`), following
    Kafka's `MetadataNodeRedactionCriteria`: SCRAM salts and keys always, delegation-token data
    other than the token id always, a `ConfigRecord` value when `is_sensitive_config` says so.
    A null value stays null: it carries no secret, and hiding it would hide that a config was
    removed or a field is absent.

    Args:
        record_type: Kafka's `MetadataRecordType` name (`USER_SCRAM_CREDENTIAL_RECORD`).
        data: field name (Kafka JSON form, `storedKey`) -> value, as bytes or as their JSON
            text; a secret's value is only compared with None, never looked at further.
    """
    return {k: (REDACTED if v is not None and _is_secret_field(record_type, k, data) else v)
            for k, v in data.items()}


def _is_secret_field(record_type: str, field: str, data: Mapping[str, object]) -> bool:
    if record_type == "USER_SCRAM_CREDENTIAL_RECORD":
        return field in _SCRAM_SECRET_FIELDS
    if record_type == "DELEGATION_TOKEN_RECORD":
        return field not in _TOKEN_SHOWN_FIELDS
    if record_type == "CONFIG_RECORD" and field == "value":
        name, value = data.get("name"), data.get("value")
        return isinstance(name, str) and value is not None and is_sensitive_config(
            name, str(value))
    return False
