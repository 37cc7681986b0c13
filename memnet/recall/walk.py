"""ShapeWalk: a bounded breadth-first walk from the seed set.

From the seeds ``Q`` (at most ``L``) the walk follows edges in both directions
for at most ``k`` hops, expands at most ``F`` live neighbours per node (the
first ``F`` of its pre-ordered adjacency, so a hub costs what a leaf costs),
skips recycled elements, and stops when the Shape holds ``M`` rows. One ``M``
for the whole Shape. A row is one emitted node or edge; an edge is only
emitted with both of its ends.

Standing rules (live ``LAW`` nodes) ride along after the seeds and count
against ``M`` unless the caller leaves them out.
"""

from __future__ import annotations

from collections import deque

from ..graph.store import OUT, Store
from ..record import field, record

PERIPHERY = 5
PEEK_BUDGET = 64  # adjacency entries read past the cut to name the periphery


@record(frozen=False)
class WalkResult:
    nodes: list[int] = field(default_factory=list)       # emission order
    edges: list[int] = field(default_factory=list)
    depth: dict[int, int] = field(default_factory=dict)  # node -> hop from Q
    laws: list[int] = field(default_factory=list)        # law nodes added as rules
    hops: int = 0
    clamped: int = 0          # nodes whose fan-out was clamped
    hidden: int = 0           # recycled edges at the nodes the walk expanded
    truncated: bool = False   # stopped by M
    laws_cut: int = 0         # live laws that did not fit
    periphery: list[int] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.nodes) + len(self.edges)


def _note(periphery: dict[int, None], emitted: dict[int, int], v: int) -> None:
    """Name ``v`` past the cut. A node noted may still be reached later by
    another path, so a few spares are kept (the emitted ones are dropped at
    the end)."""
    if len(periphery) < 4 * PERIPHERY and v not in emitted:
        periphery[v] = None


def live_laws(store: Store) -> list[int]:
    if not store.live_count("LAW"):
        return []
    cols = store.view()
    key, nrec = cols.keys, cols.node_recycled
    return sorted((n for n in store.index.kind("LAW") if not nrec[n]),
                  key=lambda n: (key[n], n))


def shape_walk(store: Store, seeds: tuple[int, ...], *, k: int, max_rows: int, fanout: int,
               laws: bool = True) -> WalkResult:
    # The counters and lists live in locals while the walk runs (it is on
    # every Recall's path) and go into the result at the end.
    r = WalkResult()
    emitted = r.depth
    nodes, edges = r.nodes, r.edges
    edges_seen: set[int] = set()
    periphery: dict[int, None] = {}   # nodes noted past the cut (_note), in order
    truncated = False
    for s in seeds:
        if len(nodes) + len(edges) >= max_rows:
            truncated = True
            _note(periphery, emitted, s)
            continue
        if s not in emitted:
            emitted[s] = 0
            nodes.append(s)
    laws_set: set[int] = set()
    if laws:
        for law in live_laws(store):
            if law in emitted:
                continue
            if len(nodes) + len(edges) >= max_rows:
                r.laws_cut += 1
                continue
            emitted[law] = 0
            nodes.append(law)
            r.laws.append(law)
        laws_set.update(r.laws)

    cols = store.view()
    esrc, edst, erec, nrec = cols.sources, cols.targets, cols.edge_recycled, cols.node_recycled
    adj, hidden = cols.adjacency, cols.hidden_edges
    queue = deque(s for s in seeds if emitted.get(s) == 0)
    boundary: list[int] = []   # nodes at depth k, for the periphery peek
    full = False
    add_node, add_edge, seen_edge = nodes.append, edges.append, edges_seen.add
    rows = len(nodes) + len(edges)
    hops = clamped = hid = 0
    while queue and not full:
        u = queue.popleft()
        du = emitted[u]
        if laws_set and u in laws_set and u not in seeds:
            continue  # rules ride along; they are not walk roots
        if du >= k:
            boundary.append(u)
            continue
        taken = 0
        if hidden:
            hid += hidden.get(u, 0)
        dv = du + 1
        for entry in adj[u]:
            e = entry >> 1
            if e in edges_seen:
                continue  # the edge that led here: not a neighbour to expand
            v = edst[e] if entry & 1 == OUT else esrc[e]
            if erec[e] or nrec[v]:  # pragma: no cover - recycled entries leave adj
                continue
            if taken >= fanout:
                clamped += 1
                _note(periphery, emitted, v)
                break
            taken += 1
            if v in emitted:
                if rows + 1 > max_rows:
                    truncated = full = True
                    break
                seen_edge(e)
                add_edge(e)
                rows += 1
                continue
            if rows + 2 > max_rows:
                truncated = full = True
                _note(periphery, emitted, v)
                break
            emitted[v] = dv
            add_node(v)
            seen_edge(e)
            add_edge(e)
            rows += 2
            if dv > hops:
                hops = dv
            queue.append(v)
    r.hops, r.clamped, r.hidden, r.truncated = hops, clamped, hid, truncated
    # the walk is over: drop noted nodes it reached later, then name a few
    # more handles just past the cut without sending them (once PERIPHERY
    # are named, more would only come after them and be cut)
    for v in [v for v in periphery if v in emitted]:
        del periphery[v]
    budget = PEEK_BUDGET
    if len(periphery) < PERIPHERY:
        for u in list(queue) + boundary:
            for entry in adj[u]:
                budget -= 1
                if budget <= 0:
                    break
                e = entry >> 1
                v = edst[e] if entry & 1 == OUT else esrc[e]
                if erec[e] or nrec[v] or v in emitted:
                    continue
                periphery[v] = None
                if len(periphery) >= PERIPHERY:
                    break
            if len(periphery) >= PERIPHERY or budget <= 0:
                break
    r.periphery = list(periphery)[:PERIPHERY]
    return r


__all__ = ["PERIPHERY", "WalkResult", "live_laws", "shape_walk"]
