"""`AccessControlEntryRecord`s from both ACL stores (`/kafka-acl`, `/kafka-acl-extended`).

The stores spell enums in PascalCase (`Topic`, `IdempotentWrite`, `Allow`); records carry
Kafka's byte codes (`clients/.../common/{resource,acl}`). Resources and their entries are
emitted in a sorted order and each entry's `id` is derived from its content (resource type,
pattern type, resource name, principal, host, operation, permission), where Kafka's migration
draws `Uuid.randomUuid()`: the same ACLs give the same bytes (I6), and the same ACL can never
be written twice under two ids.
"""

from __future__ import annotations

from migrate._translate_ids import derived_uuid
from migrate.errors import TranslationError
from writers import FieldValue, MetadataRecord
from zkreader import AclEntry, AclResource

__all__ = ["acl_path", "acl_records", "acl_resource_sort_key"]

_RESOURCE_TYPES = {
    "topic": 2,
    "group": 3,
    "cluster": 4,
    "transactionalid": 5,
    "delegationtoken": 6,
    "user": 7,
}
_PATTERN_TYPES = {"literal": 3, "prefixed": 4}
_OPERATIONS = {
    "all": 2,
    "read": 3,
    "write": 4,
    "create": 5,
    "delete": 6,
    "alter": 7,
    "describe": 8,
    "clusteraction": 9,
    "describeconfigs": 10,
    "alterconfigs": 11,
    "idempotentwrite": 12,
    "createtokens": 13,
    "describetokens": 14,
}
_PERMISSIONS = {"deny": 2, "allow": 3}


def _norm(name: str) -> str:
    """`IdempotentWrite`, `IDEMPOTENT_WRITE` and `idempotentwrite` are one name."""
    return name.replace("_", "").lower()


def _code(table: dict[str, int], name: str, what: str, path: str) -> int:
    code = table.get(_norm(name))
    if code is None:
        raise TranslationError(f"{path}: unknown ACL {what} {name!r}")
    return code


def acl_path(resource: AclResource) -> str:
    """Return the znode path a resource's ACLs were read from."""
    if _norm(resource.pattern_type) == "literal":
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
        _RESOURCE_TYPES.get(_norm(resource.resource_type), 255),
        _PATTERN_TYPES.get(_norm(resource.pattern_type), 255),
        resource.name,
    )


def _entry_codes(entry: AclEntry, path: str) -> tuple[str, str, int, int]:
    return (
        entry.principal,
        entry.host,
        _code(_OPERATIONS, entry.operation, "operation", path),
        _code(_PERMISSIONS, entry.permission_type, "permission type", path),
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
    resource_type = _code(_RESOURCE_TYPES, resource.resource_type, "resource type", path)
    pattern_type = _code(_PATTERN_TYPES, resource.pattern_type, "pattern type", path)
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
