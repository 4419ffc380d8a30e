"""Kafka Uuids derived from content, for the ids Kafka itself draws at random.

Kafka's migration gives every ACL a `Uuid.randomUuid()` and every broker registration a fresh
incarnation id, so two runs over the same ZooKeeper tree write different bytes. zk2kraft derives
them from the entity's content instead (invariant I6: same tree, byte-identical log, so a re-run
is recognisably the same migration). The id is a name-based (version 5) UUID in a zk2kraft
namespace, avoiding the values `Uuid.randomUuid()` never returns either: the reserved
`Uuid(0,0)` and `Uuid(0,1)` and any id whose text starts with `-` (which Kafka's command-line
tools would take for a flag).

Version 5 is relied on: `verify.BrokerRegistration.registered_by_broker` tells a registration
zk2kraft copied from ZooKeeper from a broker's own (Kafka draws version-4 ids) by it.
"""

from __future__ import annotations

import base64
import uuid

__all__ = ["derived_uuid", "uuid_text"]

# A fixed namespace for every id zk2kraft derives (itself uuid5(NAMESPACE_URL, "zk2kraft")).
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://zk2kraft/ids")
_RESERVED = frozenset({bytes(16), bytes(15) + b"\x01"})


def uuid_text(raw: bytes) -> str:
    """Return Kafka's text form of a 16-byte Uuid (URL-safe base64, no padding, 22 chars)."""
    if len(raw) != 16:
        raise ValueError(f"a Uuid is 16 bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def derived_uuid(kind: str, *parts: str | int) -> str:
    """Return a Kafka Uuid text determined only by `kind` and `parts`.

    Args:
        kind: what the id is for (`acl`, `incarnation`), so equal parts of different kinds
            never share an id.
        parts: the content that identifies the entity; joined unambiguously (length-prefixed).

    Returns:
        A 22-character Uuid text that is never reserved and never starts with `-`.
    """
    name = kind + "".join(f"|{len(str(p))}:{p}" for p in parts)
    attempt = 0
    while True:
        salted = name if attempt == 0 else f"{name}#{attempt}"
        raw = uuid.uuid5(_NAMESPACE, salted).bytes
        text = uuid_text(raw)
        if raw not in _RESERVED and not text.startswith("-"):
            return text
        attempt += 1
