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

The module ends with the `client_quota` kind's registry entry (`migrate.translate.kinds`): a
`users/<u>` entity is its quotas and that user's SCRAM credentials (one znode holds both).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from migrate.errors import TranslationError
from migrate.preflight.findings import Finding
from migrate.translate.configs import DEFAULT_ENTITY
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind
from verify import MetadataImage, ScramCredential
from writers import SCRAM_MECHANISMS, FieldValue, MetadataRecord, desanitize, sanitize
from zkreader import ZK_KINDS, ClusterSnapshot, ConfigZnode, EntityKey

__all__ = [
    "CLIENT_QUOTA_KIND",
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


# --------------------------------------------------------------------- the client_quota kind


def config_znode(snapshot: ClusterSnapshot, entity_path: str) -> ConfigZnode | None:
    """The config znode of an entity path below `/config` (`users/a/clients/b`), or None."""
    parts = entity_path.split("/")
    if len(parts) == 4:
        return snapshot.user_client_configs.get((parts[1], parts[3]))
    table: Mapping[str, ConfigZnode] = {
        "topics": snapshot.topic_configs,
        "brokers": snapshot.broker_configs,
        "users": snapshot.user_configs,
        "clients": snapshot.client_configs,
        "ips": snapshot.ip_configs,
    }.get(parts[0], {})
    return table.get(parts[1])


def quota_entity_key(entity: list[dict[str, str | None]]) -> tuple[tuple[str, str | None], ...]:
    """A client-quota record's `entity` list as the image keys it: sorted (type, name) pairs."""
    return tuple(sorted((str(e["entityType"]), e["entityName"]) for e in entity))


def scram_from_nothing(znode: ConfigZnode, ctx: EntityContext) -> EntityDelta:
    """A user znode's SCRAM credentials, or the blocker below 3.5-IV2."""
    out = EntityDelta()
    if not znode.entity_path.startswith("users/") or znode.entity_path.count("/") != 1:
        return out
    if not any(m in znode.config for m in SCRAM_MECHANISMS):
        return out
    if ctx.mv.supports_scram:
        out.records = scram_records(znode)
    else:
        out.blockers.append(Finding(
            "SCRAM_NEEDS_NEWER_METADATA_VERSION",
            f"SCRAM credentials cannot be written at metadata.version {ctx.mv.name} "
            "(they need 3.5-IV2 or later); the user could no longer authenticate.",
            f"/config/{znode.entity_path}",
        ))
    return out


def _client_quota_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                               ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    znode = config_znode(snapshot, key.name)
    if znode is not None:
        out.extend(scram_from_nothing(znode, ctx))
        out.records += quota_records(znode)
    return out


def _diff_client_quota(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                       ctx: EntityContext) -> EntityDelta:
    znode = config_znode(snap, key.name)
    out = EntityDelta()
    parts = key.name.split("/")
    if parts[0] == "users" and len(parts) == 2 and parts[1] != DEFAULT_ENTITY:
        out.extend(_diff_scram(parts[1], znode, image, ctx))
    entity = quota_entity(key.name)
    held: Mapping[str, float] = image.client_quotas.entities.get(quota_entity_key(entity), {})
    wanted = {str(r.data["key"]): r for r in quota_records(znode)} if znode else {}
    for name in sorted(set(wanted) | set(held)):
        record = wanted.get(name)
        if record is None:
            out.records.append(MetadataRecord("CLIENT_QUOTA_RECORD", 0, {
                "entity": [dict(e) for e in entity], "key": name, "value": 0.0,
                "remove": True,
            }))
        elif record.data["value"] != held.get(name):
            out.records.append(record)
    return out


def _diff_scram(stored_user: str, znode: ConfigZnode | None, image: MetadataImage,
                ctx: EntityContext) -> EntityDelta:
    if znode is not None:
        wanted = scram_from_nothing(znode, ctx)
        if wanted.blockers:
            return wanted
    else:
        wanted = EntityDelta()
    try:
        user = desanitize(stored_user)
    except ValueError as exc:
        raise TranslationError(
            f"/config/users/{stored_user}: entity name is not validly sanitized: {exc}") from None
    by_mechanism = {int(str(r.data["mechanism"])): r for r in wanted.records}
    out = EntityDelta()
    for mechanism in sorted(SCRAM_MECHANISMS.values()):
        held = image.scram.credentials.get((user, mechanism))
        record = by_mechanism.get(mechanism)
        if record is None:
            if held is not None:
                out.records.append(MetadataRecord(
                    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0,
                    {"name": user, "mechanism": mechanism}))
            continue
        d: Mapping[str, Any] = record.data
        cred = ScramCredential(bytes(d["salt"]), bytes(d["storedKey"]), bytes(d["serverKey"]),
                               int(d["iterations"]))
        if cred != held:
            out.records.append(record)
    return out


def _client_quota_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    for user in sorted(snapshot.user_configs):
        yield EntityKey("client_quota", f"users/{user}")
    for client in sorted(snapshot.client_configs):
        yield EntityKey("client_quota", f"clients/{client}")
    for user, client in sorted(snapshot.user_client_configs):
        yield EntityKey("client_quota", f"users/{user}/clients/{client}")
    for ip in sorted(snapshot.ip_configs):
        yield EntityKey("client_quota", f"ips/{ip}")


def _client_quota_image_keys(image: MetadataImage,
                             named: Collection[EntityKey]) -> Iterator[EntityKey]:
    quota_entities = set(image.client_quotas.entities)
    quota_entities |= {((("user", user),)) for user, _ in image.scram.credentials}
    covered = {quota_entity_key(quota_entity(k.name)) for k in named if k.kind == "client_quota"}
    for entity in sorted(quota_entities - covered, key=repr):
        yield EntityKey("client_quota", _quota_entity_path(entity))


_QUOTA_DIRS = {"user": "users", "client-id": "clients", "ip": "ips"}


def _quota_entity_path(entity: tuple[tuple[str, str | None], ...]) -> str:
    """`((user, a), (client-id, b))` -> `users/a/clients/b`, names as ZooKeeper stores them.

    User and client-id names are sanitized there (Kafka's `ConfigCommand`); IPs are not.
    """
    order = {"user": 0, "client-id": 1, "ip": 2}
    parts = []
    for kind, name in sorted(entity, key=lambda e: order.get(e[0], 9)):
        stored = DEFAULT_ENTITY if name is None else name if kind == "ip" else sanitize(name)
        parts += [_QUOTA_DIRS[kind], stored]
    return "/".join(parts)


CLIENT_QUOTA_KIND = EntityKind(
    name="client_quota",
    zk=ZK_KINDS["client_quota"],
    from_nothing=_client_quota_from_nothing,
    diff=_diff_client_quota,
    snapshot_keys=_client_quota_keys,
    image_keys=_client_quota_image_keys,
    records=frozenset({"CLIENT_QUOTA_RECORD", "USER_SCRAM_CREDENTIAL_RECORD",
                       "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"}),
    expected=("client_quotas", "scram"),
    parity=("client_quota", "scram"),
    snapshot_lines=("config:users", "config:clients", "config:users-clients", "config:ips"),
)
