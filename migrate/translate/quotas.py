"""Client quotas and SCRAM credentials from `/config/{users,clients,ips}` and
`/config/users/<user>/clients/<client>`.

Quotas: one `ClientQuotaRecord` per key, its entity the znode's kind(s) — a user+client znode is
the two-entity `[user, client-id]` — with the entity names *desanitized* (`alice%40example.com`
is user `alice@example.com`; Kafka copied the stored form until KAFKA-16222) and the default
entity `<default>` as a null name (KAFKA-16411; `""` would be a user literally named "").
Values are doubles; a value Java's `Double.valueOf` would reject stops the translation with the
znode path, as Kafka's migration does.

SCRAM: the `SCRAM-SHA-256` / `SCRAM-SHA-512` keys of a user znode are credentials, not quotas
(they are never written as `ClientQuotaRecord`s); they become `UserScramCredentialRecord`s,
which exist only at metadata.version >= 3.5-IV2 (`translate` gates that). Nothing here logs or
formats a credential's value.
"""

from __future__ import annotations

import base64
import binascii
import re

from migrate.errors import TranslationError
from migrate.translate.configs import DEFAULT_ENTITY
from writers import SCRAM_MECHANISMS, FieldValue, MetadataRecord, desanitize
from zkreader import ConfigZnode

__all__ = [
    "quota_entity",
    "quota_records",
    "scram_records",
    "scram_user",
]

_ENTITY_TYPES = {"users": "user", "clients": "client-id", "ips": "ip"}
# What Java's Double.valueOf accepts (after trimming): decimal or hex-free float forms,
# NaN/Infinity, an optional f/d suffix. Python's float() is laxer ("1_000", "inf").
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)"
)


def _entity_name(stored: str, path: str) -> str | None:
    if stored == DEFAULT_ENTITY:
        return None
    try:
        return desanitize(stored)
    except ValueError as exc:
        raise TranslationError(f"{path}: entity name is not validly sanitized: {exc}") from None


def quota_entity(entity_path: str) -> list[dict[str, str | None]]:
    """Return the `ClientQuotaRecord` entity list of a quota znode.

    Args:
        entity_path: below `/config`: `users/<u>`, `clients/<c>`, `users/<u>/clients/<c>` or
            `ips/<ip>` (names sanitized as stored).

    Returns:
        `[{"entityType": ..., "entityName": ...}, ...]`, user before client-id.

    Raises:
        TranslationError: the path is none of those shapes, or a name is badly sanitized.
    """
    path = f"/config/{entity_path}"
    parts = entity_path.split("/")
    if len(parts) == 2 and parts[0] in _ENTITY_TYPES:
        pairs = [(_ENTITY_TYPES[parts[0]], parts[1])]
    elif len(parts) == 4 and parts[0] == "users" and parts[2] == "clients":
        pairs = [("user", parts[1]), ("client-id", parts[3])]
    else:
        raise TranslationError(f"{path}: not a client-quota entity path")
    return [{"entityType": kind, "entityName": _entity_name(name, path)} for kind, name in pairs]


def _quota_value(key: str, value: str, path: str) -> float:
    text = value.strip()
    if not _JAVA_DOUBLE.fullmatch(text):
        raise TranslationError(
            f"{path}: client quota {key!r} has a value that is not a number"
        )
    return float(text.rstrip("fFdD"))


def quota_records(znode: ConfigZnode) -> list[MetadataRecord]:
    """Return the `ClientQuotaRecord`s of one quota znode (SCRAM keys excluded), by key.

    Args:
        znode: a `/config/users|clients|ips/...` config znode.

    Raises:
        TranslationError: a quota value is not a number, or the entity path is malformed.
    """
    path = f"/config/{znode.entity_path}"
    keys = [k for k in sorted(znode.config) if k not in SCRAM_MECHANISMS]
    if not keys:
        return []
    entity = quota_entity(znode.entity_path)
    records = []
    for key in keys:
        data: dict[str, FieldValue] = {
            "entity": [dict(e) for e in entity],
            "key": key,
            "value": _quota_value(key, znode.config[key], path),
            "remove": False,
        }
        records.append(MetadataRecord("CLIENT_QUOTA_RECORD", 0, data))
    return records


def scram_user(znode: ConfigZnode) -> str:
    """Return the desanitized user name of a `/config/users/<u>` znode.

    Raises:
        TranslationError: the name is badly sanitized or is the default entity.
    """
    path = f"/config/{znode.entity_path}"
    name = _entity_name(znode.entity_path.split("/", 1)[-1], path)
    if name is None:
        raise TranslationError(f"{path}: SCRAM credentials on the default user entity")
    return name


_INT32_MAX = 2**31 - 1


def _parse_credential(text: str, path: str, mechanism: str) -> tuple[bytes, bytes, bytes, int]:
    """Kafka's `ScramCredentialUtils.credentialFromString` (`k=v` pairs, base64 values)."""
    fields: dict[str, str] = {}
    for token in text.split(","):
        key, sep, value = token.partition("=")
        if sep:
            fields[key] = value
    where = f"{path}: {mechanism} credential"
    try:
        salt = base64.b64decode(fields["salt"], validate=True)
        stored = base64.b64decode(fields["stored_key"], validate=True)
        server = base64.b64decode(fields["server_key"], validate=True)
        iterations = int(fields["iterations"])
    except KeyError as exc:
        raise TranslationError(f"{where} has no {exc.args[0]!r}") from None
    except (binascii.Error, ValueError):
        raise TranslationError(f"{where} is malformed (bad base64 or iterations)") from None
    if not 1 <= iterations <= _INT32_MAX:  # UserScramCredentialRecord.iterations is an int32
        raise TranslationError(f"{where} has iterations={iterations}, outside 1..{_INT32_MAX}")
    return salt, stored, server, iterations


def scram_records(znode: ConfigZnode) -> list[MetadataRecord]:
    """Return the `UserScramCredentialRecord`s of one `/config/users/<u>` znode.

    SHA-256 before SHA-512 (Kafka's `ScramMechanism` order). The caller checks the
    metadata.version (>= 3.5-IV2) first.

    Args:
        znode: a `/config/users/<u>` config znode (other keys are ignored).

    Raises:
        TranslationError: a credential string is malformed (the message has no secret in it).
    """
    path = f"/config/{znode.entity_path}"
    records = []
    for mechanism, code in SCRAM_MECHANISMS.items():
        text = znode.config.get(mechanism)
        if text is None:
            continue
        salt, stored, server, iterations = _parse_credential(text, path, mechanism)
        data: dict[str, FieldValue] = {
            "name": scram_user(znode),
            "mechanism": code,
            "salt": salt,
            "storedKey": stored,
            "serverKey": server,
            "iterations": iterations,
        }
        records.append(MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, data))
    return records
