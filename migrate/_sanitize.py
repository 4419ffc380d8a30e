"""Kafka's URL-style sanitizing of entity names stored as znode names.

ZK-mode Kafka stores user principals, client ids and delegation-token principals as znode names
(or JSON strings) after `org.apache.kafka.common.utils.Sanitizer.sanitize`: Java's
`URLEncoder.encode(name, UTF-8)` (letters, digits and `.-*_` kept, space as `+`, every other byte
as upper-case `%XX`) followed by `*` -> `%2A` and `+` -> `%20`. `desanitize` is Java's
`URLDecoder.decode(name, UTF-8)`: `%XX` sequences are decoded as UTF-8 and `+` becomes a space.

Kafka's own migration copied the sanitized form into KRaft until KAFKA-16222 (3.6.2/3.7.1/3.8.0),
so a user `alice@example.com` had quotas under the name `alice%40example.com`; we follow the fix.
Java's decoder rejects a malformed escape rather than passing it through, and so does this one:
silently keeping `%zz` would migrate a name no client can ever match.
"""

from __future__ import annotations

__all__ = ["desanitize", "sanitize"]

_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
_HEX = frozenset("0123456789abcdefABCDEF")


def sanitize(name: str) -> str:
    """Return `name` as ZK-mode Kafka stores it (`Sanitizer.sanitize`).

    Args:
        name: an entity name such as `alice@example.com` or `User:alice`.

    Returns:
        The sanitized form, e.g. `alice%40example.com`, `User%3Aalice`.
    """
    out: list[str] = []
    for byte in name.encode("utf-8"):
        out.append(chr(byte) if byte in _KEPT else f"%{byte:02X}")
    return "".join(out)


def desanitize(name: str) -> str:
    """Return the entity name a sanitized znode name stands for (`Sanitizer.desanitize`).

    Args:
        name: the stored form, e.g. `alice%40example.com`.

    Returns:
        The decoded name, e.g. `alice@example.com`.

    Raises:
        ValueError: a `%` not followed by two hex digits, or escapes that are not UTF-8 (the
            caller names the znode).
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
