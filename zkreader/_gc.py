"""`paused_gc`: the one switch every bulk stage uses to keep the cyclic collector out of its way.

Reading 100,000+ partitions, translating them and replaying the log each allocate hundreds of
thousands of small acyclic objects (models, stats, records, image entries). Every allocation
burst triggers a collection that rescans everything allocated so far, at a cost that grows with
the tree (docs/benchmarks.md, "Figures behind code choices"). None of these objects forms a
cycle, so pausing the collector loses nothing. It lives here, in the lowest package, so the
reader, the translator and verify's loader share one definition (imports flow zkreader ->
verify -> migrate).

Re-enabling alone only moved that cost: every object the block allocated still sat in the
youngest generation, so the first allocation after the block ran one collection over all of
them (measured: docs/benchmarks.md). What
survives a bulk stage is its result, which lives on (a snapshot, a log image), so on the way out
the survivors are promoted straight to the oldest generation (`gc.freeze()` then
`gc.unfreeze()`, two list splices): they are examined only by a later full collection, as any
long-lived object is.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; restore its previous state even on error.

    Nesting is safe: an inner block leaves the collector off if an outer one turned it off. The
    block's survivors go to the oldest generation when the collector comes back on, unless
    someone else froze objects (`gc.freeze`), whose frozen set is then left alone.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
