"""`AccessControlEntryRecord`s from both ACL stores (`/kafka-acl`, `/kafka-acl-extended`).

The stores spell enums in PascalCase (`Topic`, `IdempotentWrite`, `Allow`); records carry
Kafka's byte codes (`clients/.../common/{resource,acl}`). Resources and their entries are
emitted in a sorted order and each entry's `id` is derived from its content (resource type,
pattern type, resource name, principal, host, operation, permission), where Kafka's migration
draws `Uuid.randomUuid()`: the same ACLs give the same bytes (I6), and the same ACL can never
be written twice under two ids.

The module ends with the `acl` kind's registry entry (`migrate.translate.kinds`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

from migrate.errors import TranslationError
from migrate.translate.ids import derived_uuid
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind
from verify import MetadataImage, StandardAcl
from writers import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    FieldValue,
    MetadataRecord,
    kafka_code,
    kafka_name,
)
from zkreader import ZK_KINDS, AclEntry, AclResource, ClusterSnapshot, EntityKey

__all__ = ["ACL_KIND", "acl_path", "acl_records", "acl_resource_sort_key"]


def _code(table: Mapping[str, int], name: str, what: str, path: str) -> int:
    code = kafka_code(table, name)
    if code is None:
        raise TranslationError(f"{path}: unknown ACL {what} {name!r}")
    return code


def acl_path(resource: AclResource) -> str:
    """Return the znode path a resource's ACLs were read from."""
    if kafka_code(ACL_PATTERN_TYPES, resource.pattern_type) == ACL_PATTERN_TYPES["LITERAL"]:
        return f"/kafka-acl/{resource.resource_type}/{resource.name}"
    return (
        f"/kafka-acl-extended/{resource.pattern_type.lower()}/"
        f"{resource.resource_type}/{resource.name}"
    )


def acl_resource_sort_key(resource: AclResource) -> tuple[int, int, str]:
    """Deterministic resource order: resource type code, pattern type code, name.

    Unknown names sort last here; `acl_records` rejects them with the path.
    """
    return (
        kafka_code(ACL_RESOURCE_TYPES, resource.resource_type) or 255,
        kafka_code(ACL_PATTERN_TYPES, resource.pattern_type) or 255,
        resource.name,
    )


def _entry_codes(entry: AclEntry, path: str) -> tuple[str, str, int, int]:
    return (
        entry.principal,
        entry.host,
        _code(ACL_OPERATIONS, entry.operation, "operation", path),
        _code(ACL_PERMISSIONS, entry.permission_type, "permission type", path),
    )


def acl_records(resource: AclResource) -> list[MetadataRecord]:
    """Return one `AccessControlEntryRecord` per distinct ACL of one resource znode.

    Entries are sorted by (principal, host, operation, permission); exact duplicates collapse.

    Args:
        resource: a decoded `/kafka-acl...` resource znode.

    Raises:
        TranslationError: a resource type, pattern type, operation or permission name is not
            one of Kafka's (names the znode path).
    """
    path = acl_path(resource)
    resource_type = _code(ACL_RESOURCE_TYPES, resource.resource_type, "resource type", path)
    pattern_type = _code(ACL_PATTERN_TYPES, resource.pattern_type, "pattern type", path)
    entries = sorted({_entry_codes(e, path) for e in resource.acls})
    records = []
    for principal, host, operation, permission in entries:
        data: dict[str, FieldValue] = {
            "id": derived_uuid(
                "acl",
                resource_type,
                pattern_type,
                resource.name,
                principal,
                host,
                operation,
                permission,
            ),
            "resourceType": resource_type,
            "resourceName": resource.name,
            "patternType": pattern_type,
            "principal": principal,
            "host": host,
            "operation": operation,
            "permissionType": permission,
        }
        records.append(MetadataRecord("ACCESS_CONTROL_ENTRY_RECORD", 0, data))
    return records


# ---------------------------------------------------------------------------- the acl kind


def _acl_resource(snapshot: ClusterSnapshot, key: EntityKey,
                  ctx: EntityContext) -> AclResource | None:
    if ctx.acls is None:
        ctx.acls = {(r.pattern_type, r.resource_type, r.name): r for r in snapshot.acls}
    pattern, resource_type, name = key.name.split("/", 2)
    return ctx.acls.get((pattern, resource_type, name))


def _acl_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                      ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    resource = _acl_resource(snapshot, key, ctx)
    if resource is not None:
        out.records = acl_records(resource)
    return out


def _diff_acl(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
              ctx: EntityContext) -> EntityDelta:
    pattern, resource_type, name = key.name.split("/", 2)
    rtype = kafka_code(ACL_RESOURCE_TYPES, resource_type)
    ptype = kafka_code(ACL_PATTERN_TYPES, pattern)
    held = {acl: acl_id for acl_id, acl in image.acls.acls.items()
            if (acl.resource_type, acl.pattern_type, acl.resource_name) == (rtype, ptype, name)}
    resource = _acl_resource(snap, key, ctx)
    wanted: dict[StandardAcl, MetadataRecord] = {}
    for record in acl_records(resource) if resource is not None else []:
        d: Mapping[str, Any] = record.data
        wanted.setdefault(StandardAcl(d["resourceType"], d["resourceName"], d["patternType"],
                                      d["principal"], d["host"], d["operation"],
                                      d["permissionType"]), record)
    out = [MetadataRecord("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 0, {"id": acl_id})
           for acl, acl_id in sorted(held.items(), key=lambda kv: kv[1]) if acl not in wanted]
    out += [record for acl, record in wanted.items() if acl not in held]
    return EntityDelta(out)


def _once_per_binding(records: list[MetadataRecord], added: set[object]) -> list[MetadataRecord]:
    """One binding, one id: an entry another key of the same call added is not added twice."""
    kept = []
    for record in records:
        if record.type == "ACCESS_CONTROL_ENTRY_RECORD":
            if record.data["id"] in added:
                continue
            added.add(record.data["id"])
        kept.append(record)
    return kept


def _acl_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    for resource in sorted(snapshot.acls, key=lambda r: (acl_resource_sort_key(r), acl_path(r))):
        yield EntityKey.acl(resource.pattern_type, resource.resource_type, resource.name)


def _acl_image_keys(image: MetadataImage, named: Collection[EntityKey]) -> Iterator[EntityKey]:
    for acl in sorted(image.acls.acls.values()):
        pattern = kafka_name(ACL_PATTERN_TYPES, acl.pattern_type)
        rtype_name = kafka_name(ACL_RESOURCE_TYPES, acl.resource_type)
        if pattern is None or rtype_name is None:
            continue  # not a resource ZooKeeper's stores can name
        stored_type = "".join(part.capitalize() for part in rtype_name.split("_"))
        yield EntityKey.acl(pattern, stored_type, acl.resource_name)


ACL_KIND = EntityKind(
    name="acl",
    zk=ZK_KINDS["acl"],
    from_nothing=_acl_from_nothing,
    diff=_diff_acl,
    snapshot_keys=_acl_keys,
    image_keys=_acl_image_keys,
    records=frozenset({"ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"}),
    expected=("acls",),
    parity=("acl",),
    snapshot_lines=("acl",),
    dedupe=_once_per_binding,
)
