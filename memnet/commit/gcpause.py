"""The one pause of the cyclic garbage collector that writes share."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_GC_LOCK = threading.Lock()
_GC_HELD = 0  # writes under way that paused the collector


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector while a batch is parsed and written.

    A commit allocates many small objects (syntax tree, property maps, index
    entries) that form no cycles; the collections their count would trigger
    walk every object the session holds, which made a bulk load spend about
    a quarter of its time in the collector. Collection resumes when the last
    write under way ends (only when it was enabled before the first began);
    the young objects of the write are collected by the collector's own
    schedule after that (collecting them at the end of each write was tried
    and cost a WordNet bulk load a third of its speed).
    """
    global _GC_HELD
    with _GC_LOCK:
        first: bool | None = _GC_HELD == 0
        if first and not gc.isenabled():
            first = None  # somebody else turned it off: leave it so
        else:
            _GC_HELD += 1
            if first:
                gc.disable()
    if first is None:
        yield
        return
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_HELD -= 1
            if _GC_HELD == 0:
                gc.enable()
