"""Host Snap: search a library outside the engine, commit what it finds as locators.

The corpus an agent works on (docs, source, models) is a second haystack next
to its session. MemNet never searches it from inside a Recall and never embeds
anything; a retriever outside the engine does (SPEC §6), and what it returns -
locators with short titles - is committed into one session like any other
write, after which a Recall shows the hits in a Shape::

    import memnet, memnet.host

    memnet.host.index_tree("path/to/library", ".memnet/host-index")   # BM25, tantivy
    hits = memnet.host.search("parse a config file", ".memnet/host-index", top=5)
    s = memnet.Session("work")
    r = memnet.host.snap(s, "parse a config file", index=".memnet/host-index")
    s.recall("QRY config")        # the query node and its hits, by locator

* :class:`RagHostHook` is the protocol a retriever follows
  (``search(q, top) -> list[Hit]``); plug in your own with
  ``snap(session, q, hook=mine)``.
* :class:`HostIndex` is the default one: BM25 over the units ingest knows,
  with ingest's locators (:mod:`memnet.host.units`), refreshed in proportion to
  what changed (:mod:`memnet.host.index`).
* :func:`snap` writes hits into a session in one Commit, idempotently
  (:mod:`memnet.host.snap`).

The search library, tantivy, is an extra: ``pip install 'memnet[host]'``.
Without it the index functions raise ``dependency_missing``; a retriever of
your own needs nothing extra. Nothing in the engine imports this package.
"""

from .hook import Hit, RagHostHook
from .index import (
    HostIndex,
    IndexResult,
    default_index_dir,
    index_tree,
    open_index,
    search,
)
from .snap import SnapResult, snap

__all__ = [
    "Hit",
    "HostIndex",
    "IndexResult",
    "RagHostHook",
    "SnapResult",
    "default_index_dir",
    "index_tree",
    "open_index",
    "search",
    "snap",
]
