"""`AccessControlEntryRecord`s from both ACL stores (`/kafka-acl`, `/kafka-acl-extended`).

The stores spell enums in PascalCase (`Topic`, `IdempotentWrite`, `Allow`); records carry
Kafka's byte codes (`clients/.../common/{resource,acl}`). Resources and their entries are
emitted in a sorted order and each entry's `id` is derived from its content (resource type,
pattern type, resource name, principal, host, operation, permission), where Kafka's migration
draws `Uuid.randomUuid()`: the same ACLs give the same bytes (I6), and the same ACL can never
be written twice under two ids.
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate.errors import TranslationError
from migrate.translate.ids import derived_uuid
from writers import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    FieldValue,
    MetadataRecord,
    kafka_code,
)
from zkreader import AclEntry, AclResource

__all__ = ["acl_path", "acl_records", "acl_resource_sort_key"]


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
