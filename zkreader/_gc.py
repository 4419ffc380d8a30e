"""`paused_gc`: the one switch every bulk stage uses to keep the cyclic collector out of its way.

Reading 100,000+ partitions, translating them and replaying the log each allocate hundreds of
thousands of small acyclic objects (models, stats, records, image entries). Every allocation
burst triggers a collection that rescans everything allocated so far: that halved the read rate
at 100,000 partitions and cost more than the replay itself at 1M. None of these objects forms a
cycle, so pausing the collector loses nothing. It lives here, in the lowest package, so the
reader, the translator and verify's loader share one definition (imports flow zkreader ->
verify -> migrate).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; restore its previous state even on error.

    Nesting is safe: an inner block leaves the collector off if an outer one turned it off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
