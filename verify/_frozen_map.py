"""`FrozenMap`: the read-only, picklable mapping every image holds its maps in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """A read-only mapping over a private dict.

    Unlike `types.MappingProxyType` it pickles (Spark ships images) and compares two FrozenMaps
    by their dicts directly, without the item-by-item copy `Mapping.__eq__` makes.
    """

    __slots__ = ("_d",)

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        self._d: dict[K, V] = dict(items) if items else {}

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._d == other._d
        if isinstance(other, Mapping):
            return self._d == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._d.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def __reduce__(self) -> tuple[type[FrozenMap[K, V]], tuple[dict[K, V]]]:
        return (FrozenMap, (self._d,))

    def thaw(self) -> dict[K, V]:
        """A mutable copy, the starting point of `apply()`."""
        return dict(self._d)
