"""Host Snap: a retriever's hits committed into a session as locators.

:func:`snap` asks a :class:`~memnet.host.hook.RagHostHook` (by default the host
index) for the hits of ``q`` and writes, in one Commit:

* a ``QRY`` node for the query, ``{title: '<the query>'}``, found again by its
  exact text (so the same query always lands on the same node);
* for each hit, the live node whose ``locator`` is the hit's locator - a node
  ingest made for the same thing, or one an earlier snap made - or else a new
  node of the hit's kind with ``{locator, title}`` and nothing more: the corpus
  enters the session as locators with short titles, never as text;
* a ``(QRY)-[:HIT {rank}]->(hit)`` edge per hit, rank 1 the best.

The query node's ``HIT`` edges are made to match the latest hits: a hit that
drops out loses its edge (its node stays, as other edges may reach it). Snapping
the same hits again changes nothing and commits nothing (the version stays).
Nodes are found through the session's word index (a locator's words, then an
exact comparison), so a snap costs in proportion to the hits, not the session.
A refused Commit (the rate cap) leaves the session as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import BadHit
from ..gql import ast
from ..graph.store import OUT, edge_handle, node_handle
from ..graph.words import words_of
from ..ingest.sync import LOCATOR
from .hook import Hit, RagHostHook, check_hit, short
from .index import check_top, open_index, query_words

QUERY_KIND = "QRY"
QUERY_KEY = "title"
HIT_EDGE = "HIT"


@dataclass(frozen=True, slots=True)
class SnapResult:
    """What a snap did: the version, the query node's handle, and per hit its
    node's handle and whether the snap created that node."""

    version: int
    changed: bool
    q: str
    query: str
    hits: tuple[Hit, ...] = ()
    handles: tuple[str, ...] = ()
    created: tuple[bool, ...] = ()
    unlinked: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "changed": self.changed,
            "q": self.q,
            "query": self.query,
            "created": sum(self.created),
            "unlinked": self.unlinked,
            "hits": [
                {**h.to_dict(), "handle": hd, "created": c}
                for h, hd, c in zip(self.hits, self.handles, self.created, strict=True)
            ],
        }

    def summary(self) -> str:
        head = f"version {self.version}" + ("" if self.changed else " (unchanged)")
        return (
            f"{head}: query {self.query} with {len(self.hits)} hit(s), "
            f"{sum(self.created)} new node(s), {self.unlinked} hit(s) unlinked"
        )


def _find(store: Any, key: str, value: str, kind: str | None = None) -> int | None:
    """The oldest live node (of ``kind``) whose ``key`` property is ``value``."""
    idx = store.index
    posting = idx.prop(key, value)  # short values have a posting of their own
    if posting is None:
        lists = [idx.word_ids(w) for w in set(words_of(value))]
        if kind is not None:
            lists.append(idx.kind(kind))
        posting = min(lists, key=len) if lists else None
    candidates = posting if posting is not None else store.live_node_ids()
    best = None
    for nid in candidates:
        if (
            (best is None or nid < best)
            and store.node_live(nid)
            and (kind is None or store.node_kind(nid) == kind)
        ):
            props = store.node_props(nid)
            if props and props.get(key) == value:
                best = nid
    return best


def normalise_query(q: str) -> str:
    """The query text a ``QRY`` node keeps: blanks collapsed, ends trimmed."""
    return " ".join(q.split())


def snap(
    session: Any,
    q: str,
    *,
    hook: RagHostHook | None = None,
    index: str | os.PathLike[str] | None = None,
    top: int = 10,
) -> SnapResult:
    """Search ``q`` with ``hook`` (default: the host index at ``index``) and
    commit the hits into ``session`` (see the module doc). Errors -
    ``bad_query``, ``bad_hit``, ``index_not_found``, ``index_corrupt``, a
    Commit refusal - leave the session unchanged."""
    query_words(q)
    check_top(top)
    retriever: Any = hook if hook is not None else open_index(index)
    found = retriever.search(q, top)
    if not isinstance(found, (list, tuple)):
        raise BadHit(f"a retriever returned {type(found).__name__}, not a list of hits")
    hits: list[Hit] = []
    seen: set[str] = set()
    for h in found[:top]:
        h = check_hit(h)
        if h.locator not in seen:
            seen.add(h.locator)
            hits.append(h)
    with session.lock:
        return _commit(session, normalise_query(q), hits)


def _commit(session: Any, text: str, hits: list[Hit]) -> SnapResult:
    s = session.store
    qid = _find(s, QUERY_KEY, text, QUERY_KIND)
    new_nodes: list[ast.NodePattern] = []
    query = node_handle(qid) if qid is not None else "query"
    if qid is None:
        new_nodes.append(ast.NodePattern(query, (QUERY_KIND,), ((QUERY_KEY, text),)))
    refs: list[str] = []
    created: list[bool] = []
    for i, h in enumerate(hits, 1):
        nid = _find(s, LOCATOR, h.locator)
        if nid is None:
            var = f"hit{i}"
            props = tuple(sorted({LOCATOR: h.locator, "title": short(h.title)}.items()))
            new_nodes.append(ast.NodePattern(var, (h.kind,), props))
            refs.append(var)
        else:
            refs.append(node_handle(nid))
        created.append(nid is None)

    held: dict[str, tuple[str, Any]] = {}  # target handle -> (edge handle, rank)
    if qid is not None:
        for e, d, other in s.live_entries(qid):
            if d == OUT and s.edge_type(e) == HIT_EDGE and node_handle(other) not in held:
                held[node_handle(other)] = (edge_handle(e), s.edge_props(e).get("rank"))
    edges: list[ast.EdgePattern] = []
    edits: list[Any] = []
    for rank, ref in enumerate(refs, 1):
        have = held.pop(ref, None)
        if have is None:
            edges.append(ast.EdgePattern(None, HIT_EDGE, query, ref, (("rank", rank),)))
        elif have[1] != rank or type(have[1]) is not int:
            edits.append(ast.SetProp(have[0], "rank", rank))
    gone = [ast.Delete(eh) for eh, _rank in held.values()]
    statements: list[Any] = []
    if new_nodes or edges:
        statements.append(ast.Insert(tuple(new_nodes), tuple(edges)))
    statements += edits + gone
    if not statements:
        return SnapResult(
            session.version, False, text, query, tuple(hits), tuple(refs), tuple(created)
        )
    res = session.commit(ast.Delta(tuple(statements)))
    handles = tuple(res.ids.get(r, r) for r in refs)
    return SnapResult(
        res.version,
        res.changed,
        text,
        res.ids.get(query, query),
        tuple(hits),
        handles,
        tuple(created),
        len(gone),
    )


__all__ = ["HIT_EDGE", "QUERY_KIND", "SnapResult", "normalise_query", "snap"]
