"""Keep znode payloads out of kazoo's log records, at every verbosity.

kazoo logs every request and response at DEBUG (`Sending request(xid=5): SetData(path=...,
data=b'...')`, `Received response(xid=5): (b'{"SCRAM-SHA-256":"salt=..."}', ZnodeStat(...))`),
so `-vv` would print SCRAM salts and keys, encrypted broker passwords and token data exactly as
ZooKeeper holds them (design I7). Silencing kazoo's DEBUG would also hide what an operator needs
when a connection misbehaves (which request, which xid, which path, which error), so instead this
filter rewrites the record's arguments: numbers, `None`, plain strings (hosts, states) and
exceptions stay; a request or response object becomes its type name plus its znode path, if it
has one; bytes and containers become their type and size. The message text itself is kazoo's
constant format string, which holds no data.

The filter is attached to kazoo's own loggers when zkreader is imported (so every kazoo client,
ours or a caller's, is covered) and the CLI puts it on its log handler as well (so a logger
kazoo creates later, e.g. a recipe's, is covered too). py4j's DEBUG records (the commands sent
to Spark's JVM) are dropped by the same filter: they can carry any string we hand to Spark.
"""

from __future__ import annotations

import logging

__all__ = ["KAZOO_LOGGERS", "PayloadRedactingFilter", "install_kazoo_redaction"]

KAZOO_LOGGERS = (
    "kazoo",
    "kazoo.client",
    "kazoo.protocol.connection",
    "kazoo.handlers.threading",
    "kazoo.recipe.watchers",
    "kazoo.recipe.cache",
)
"""kazoo's module loggers (a filter on a logger applies only to records logged through it)."""

_REDACTED_PREFIXES = ("kazoo",)
_DROPPED_DEBUG_PREFIXES = ("py4j",)


def _from(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _describe(value: object) -> object:
    """A log argument with any payload removed (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, BaseException):
        return type(value).__name__
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes redacted>"
    path = getattr(value, "path", None)
    name = type(value).__name__
    if isinstance(path, str):
        return f"{name}(path={path!r}, ...redacted)"
    if isinstance(value, (tuple, list, set, frozenset, dict)):
        return f"<{name} of {len(value)} item(s) redacted>"
    return f"<{name} redacted>"


class PayloadRedactingFilter(logging.Filter):
    """Rewrites kazoo's records so no znode data survives; drops py4j's DEBUG records."""

    def filter(self, record: logging.LogRecord) -> bool:  # noqa: A003 - logging's name
        if _from(record.name, _DROPPED_DEBUG_PREFIXES) and record.levelno < logging.INFO:
            return False
        if not _from(record.name, _REDACTED_PREFIXES):
            return True
        if not isinstance(record.msg, str):
            record.msg = _describe(record.msg)
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(_describe(a) for a in args)
        elif isinstance(args, dict):
            record.args = {k: _describe(v) for k, v in args.items()}
        return True


_FILTER = PayloadRedactingFilter()


def install_kazoo_redaction() -> PayloadRedactingFilter:
    """Attach the filter to kazoo's loggers (idempotent) and return it for handlers."""
    for name in KAZOO_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    return _FILTER
