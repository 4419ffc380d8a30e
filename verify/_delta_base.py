"""What the sub-deltas share: a record's data, and changes merged over a keyed map of an image."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify.image import FrozenMap

Data = Mapping[str, Any]


def _merged(base: Mapping[Any, Any], changes: Mapping[Any, Any]) -> FrozenMap[Any, Any]:
    """`base` with `changes` applied (None deletes); `base` itself when nothing changed."""
    if not changes and isinstance(base, FrozenMap):
        return base
    out = dict(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return FrozenMap(out)


class _KeyedDelta:
    """Upserts and removals over one keyed map of an image (SCRAM, ACLs, tokens)."""

    def __init__(self, base: Mapping[Any, Any]) -> None:
        self._base = base
        self._changes: dict[Any, Any] = {}

    def changed_keys(self) -> frozenset[Any]:
        """Keys upserted or removed here: (user, mechanism), ACL ids, token ids."""
        return frozenset(self._changes)

    def get(self, key: Any) -> Any:
        """The value as of this delta (None: absent)."""
        if key in self._changes:
            return self._changes[key]
        return self._base.get(key)

    def finish_snapshot(self) -> None:
        for key in self._base:
            self._changes.setdefault(key, None)

    def merged(self) -> FrozenMap[Any, Any]:
        return _merged(self._base, self._changes)
