"""ShapeWalk: a bounded, best-first walk from the seed set.

From the seeds ``Q`` (at most ``L``) the walk follows edges in both directions
for at most ``k`` hops, expands at most ``F`` live neighbours per node, skips
recycled elements, and stops when the Shape holds ``M`` rows. One ``M`` for
the whole Shape. A row is one emitted node or edge; an edge is only emitted
with both of its ends.

What it takes first follows q (``docs/math/walk.md``):

* at a node, the ``F`` neighbours kept by the clamp are those that answer q
  best (their :class:`~memnet.recall.relevance.Relevance` score), then the
  rest in the stored order of the adjacency (a function of observables);
* across the frontier, the node with the highest *activation* is taken
  next: a node's own score plus half its parent's activation, so the
  neighbours of the best seeds and the nodes that answer q come before
  the far and the unrelated;
* further candidates of MATCH_L (``extra``, only when the caller left
  ``L`` open) join the frontier as roots with their own score, so a strong
  next match is taken before the faint context of an earlier one.

With no q words to score (a filter-only q, a nickname, Peak_L, the outline)
every activation is 0 and the walk is breadth-first in stored order.

Edges that carry an integer ``rank`` (Host Snap's ``HIT {rank}``) order the
neighbours they lead to from their source: the best ranks take the scores q
gives any of them, best score to rank 1, and the places of the rest, so a
query node's hits are taken (and clamped) best rank first (:func:`_by_rank`).
Only nodes the store knows as sources of ranked edges are looked at
(``Store.ranked_sources``).

Standing rules (live ``LAW`` nodes) ride along after the seeds and count
against ``M`` unless the caller leaves them out.

Hot module: every Recall walks (a fresh WordNet Recall expands ~7 nodes and
takes ~9 further seeds, measured), so the loop keeps its state in locals.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from heapq import heappop, heappush
from itertools import islice
from operator import itemgetter
from typing import Any

from ..graph.store import OUT, RANK_SCAN, Store
from .relevance import Relevance

PERIPHERY = 5
PEEK_BUDGET = 64  # adjacency entries read past the cut to name the periphery
GAMMA = 0.6  # the share of its parent's activation a neighbour inherits
SCAN = 4  # the clamp scores at most SCAN * F adjacency entries of a node


@dataclass(slots=True)
class WalkResult:
    nodes: list[int] = field(default_factory=list)  # emission order
    edges: list[int] = field(default_factory=list)
    # emission order of rows: (node, 0, 0) a root (seed, rule, further seed),
    # (node, edge, parent) a node reached by edge from parent, (0, edge, 0)
    # an edge between two nodes already emitted
    items: list[tuple[int, int, int]] = field(default_factory=list)
    depth: dict[int, int] = field(default_factory=dict)  # node -> hop from Q
    roots: list[int] = field(default_factory=list)  # the seeds taken, in order
    laws: list[int] = field(default_factory=list)  # law nodes added as rules
    hops: int = 0
    clamped: int = 0  # nodes whose fan-out was clamped
    hidden: int = 0  # recycled edges at the nodes the walk expanded
    truncated: bool = False  # stopped by M
    laws_cut: int = 0  # live laws that did not fit
    periphery: list[int] = field(default_factory=list)
    # what the periphery is read from: the nodes the walk stopped at, those
    # the clamp left out, and the nodes at hop k (whose neighbours are past it)
    cut: list[int] = field(default_factory=list)
    clamped_off: list[int] = field(default_factory=list)
    boundary: list[int] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.nodes) + len(self.edges)

    def keep(self, n: int) -> None:
        """Keep the first ``n`` of :attr:`items` (a token budget stopped the
        Shape there): the nodes of the rows left out go first on the
        periphery."""
        dropped = self.items[n:]
        if not dropped:
            return
        del self.items[n:]
        nodes = {v for v, _e, _u in self.items if v}
        edges = {e for _v, e, _u in self.items if e}
        self.laws_cut += sum(1 for v in self.laws if v not in nodes)
        self.nodes[:] = [v for v in self.nodes if v in nodes]
        self.edges[:] = [e for e in self.edges if e in edges]
        self.roots[:] = [v for v in self.roots if v in nodes]
        self.laws[:] = [v for v in self.laws if v in nodes]
        for v in [v for v in self.depth if v not in nodes]:
            del self.depth[v]
        self.hops = max(self.depth.values(), default=0)
        self.truncated = True
        cut = list(dict.fromkeys(v for v, _e, _u in dropped if v))
        self.periphery = list(dict.fromkeys([*cut, *self.periphery]))[:PERIPHERY]


def live_laws(store: Store) -> list[int]:
    if not store.live_count("LAW"):
        return []
    cols = store.view()
    key, nrec = cols.keys, cols.node_recycled
    return sorted((n for n in store.index.kind("LAW") if not nrec[n]), key=lambda n: (key[n], n))


def shape_walk(
    store: Store,
    seeds: tuple[int, ...],
    *,
    k: int,
    max_rows: int,
    fanout: int,
    laws: bool = True,
    rel: Relevance | None = None,
    extra: tuple[int, ...] = (),
) -> WalkResult:
    """Walk from ``seeds``: best first by activation when ``rel`` scores q's
    words (``extra`` may then join as seeds), else breadth-first in stored
    order (see the module docstring)."""
    r = WalkResult()
    emitted = r.depth
    nodes, edges, items, roots = r.nodes, r.edges, r.items, r.roots
    for s in seeds:
        if len(nodes) + len(edges) >= max_rows:
            r.truncated = True
            r.cut.append(s)
            continue
        if s not in emitted:
            emitted[s] = 0
            nodes.append(s)
            roots.append(s)
            items.append((s, 0, 0))
    if laws:
        for law in live_laws(store):
            if law in emitted:
                continue
            if len(nodes) + len(edges) >= max_rows:
                r.laws_cut += 1
                continue
            emitted[law] = 0
            nodes.append(law)
            items.append((law, 0, 0))
            r.laws.append(law)
    if rel:
        frontier = _best_first(
            store, r, k=k, max_rows=max_rows, fanout=fanout, scores=rel.scores, extra=extra
        )
    else:
        frontier = _stored_order(store, r, k=k, max_rows=max_rows, fanout=fanout)
    r.periphery = _periphery(store, r, frontier)
    return r


def _stored_order(store: Store, r: WalkResult, *, k: int, max_rows: int, fanout: int) -> list[int]:
    """The breadth-first walk in stored order, for a q with nothing to score:
    a node's first ``fanout`` live neighbours, nearest hop first. Returns the
    nodes left on the frontier."""
    emitted, nodes, edges, items = r.depth, r.nodes, r.edges, r.items
    laws_set = set(r.laws)
    cols = store.view()
    esrc, edst = cols.sources, cols.targets
    adj, hidden = cols.adjacency, cols.hidden_edges
    eprops, ranked = cols.edge_props, store.ranked_sources()
    edges_seen: set[int] = set()
    queue = deque(r.roots)
    rows = len(nodes) + len(edges)
    hops = clamped = hid = 0
    full = False
    while queue and not full:
        u = queue.popleft()
        du = emitted[u]
        if du >= k:
            r.boundary.append(u)
            continue
        if hidden:
            hid += hidden.get(u, 0)
        taken = 0
        dv = du + 1
        entries: Sequence[int] = adj[u]
        if ranked and u in ranked:
            entries = _ranked_entries(entries, eprops)
        for entry in entries:
            e = entry >> 1
            if e in edges_seen:
                continue  # the edge that led here: not a neighbour to expand
            v = edst[e] if entry & 1 == OUT else esrc[e]
            if taken >= fanout:
                clamped += 1
                r.clamped_off.append(v)
                break
            taken += 1
            if v in emitted:
                if rows + 1 > max_rows:
                    full = True
                    break
                edges_seen.add(e)
                edges.append(e)
                items.append((0, e, 0))
                rows += 1
                continue
            if rows + 2 > max_rows:
                full = True
                r.cut.append(v)
                break
            emitted[v] = dv
            nodes.append(v)
            edges_seen.add(e)
            edges.append(e)
            items.append((v, e, u))
            rows += 2
            if dv > hops:
                hops = dv
            if v not in laws_set:  # rules ride along; they are not walk roots
                queue.append(v)
    r.hops, r.clamped, r.hidden = hops, clamped, hid
    r.truncated = r.truncated or full
    return list(queue)


def _best_first(
    store: Store,
    r: WalkResult,
    *,
    k: int,
    max_rows: int,
    fanout: int,
    scores: dict[int, float],
    extra: tuple[int, ...],
) -> list[int]:
    """The walk by activation (see the module docstring). Returns the nodes
    left on the frontier, best first."""
    edges_seen: set[int] = set()
    expand = _reader(store, r, scores, fanout, edges_seen)
    heap, seq = _frontier(r, scores, k, extra)
    later_edges: list[int] = []
    full = _take(store, r, heap, seq, expand, edges_seen, later_edges, k, max_rows)
    # an edge between two nodes of the Shape: shown once every node the walk
    # takes is in, as rows allow (it names nothing new)
    rows = len(r.nodes) + len(r.edges)
    for e in later_edges:
        if rows + 1 > max_rows:
            full = True
            break
        r.edges.append(e)
        r.items.append((0, e, 0))
        rows += 1
    r.hops = max(r.depth.values(), default=0)
    r.truncated = r.truncated or full
    return _left(store, heap, r.depth)


#: a node's adjacency read for the frontier: the neighbours q scores, as
#: (-score, entry, node), best first when the node's fan-out was clamped
Hits = list[tuple[float, int, int]]


def _frontier(
    r: WalkResult, scores: dict[int, float], k: int, extra: tuple[int, ...]
) -> tuple[list[tuple[float, int, list[int]]], int]:
    """The frontier the walk starts from, and the last order pushed.

    The frontier, best first: (-activation, order pushed, group). A group
    is a list [position, parent, hop, candidate, candidate, ...] taken in
    order, all of one activation: the adjacency entries of the neighbours
    of ``parent`` that q does not score (in stored order), or the one entry
    of a scored neighbour, or (parent 0) the id of a further seed. A group
    at position -1 is a node whose neighbours are not read yet: they are
    read when its turn comes (most nodes of a Shape never get one, M being
    reached first). Ties go by the order pushed."""
    get = scores.get
    heap: list[tuple[float, int, list[int]]] = []
    seq = 0
    for s in r.roots:
        if k:
            seq += 1
            heappush(heap, (-get(s, 0.0) * GAMMA, seq, [-1, s, 1]))
        else:
            r.boundary.append(s)
    for x in extra:
        if x not in r.depth:
            seq += 1
            heappush(heap, (-get(x, 0.0), seq, [3, 0, 0, x]))
    return heap, seq


def _reader(
    store: Store, r: WalkResult, scores: dict[int, float], fanout: int, edges_seen: set[int]
) -> Callable[[list[int]], Hits]:
    """The function that reads the neighbours of a group's parent (a group
    at position -1, see :func:`_frontier`): those q scores are returned, for
    the frontier; the others, in stored order, become the group; ``fanout``
    of them in all. It counts the recycled edges it passes and the nodes it
    clamps on ``r``."""
    cols = store.view()
    esrc, edst = cols.sources, cols.targets
    adj, hidden = cols.adjacency, cols.hidden_edges
    eprops, ranked = cols.edge_props, store.ranked_sources()
    scan = SCAN * fanout
    clamped_off = r.clamped_off

    def expand(group: list[int]) -> Hits:
        u = group[1]
        if hidden:
            r.hidden += hidden.get(u, 0)
        entries = adj[u]
        ranks = ranked and u in ranked
        lim = RANK_SCAN if ranks else scan
        over = len(entries) > lim
        group[0] = 3
        hits: Hits = []  # stored order
        for entry in entries[:lim] if over else entries:
            e = entry >> 1
            if e in edges_seen:
                continue  # the edge that led here: not a neighbour to expand
            v = edst[e] if entry & 1 == OUT else esrc[e]
            if v in scores:
                hits.append((-scores[v], entry, v))
            else:
                group.append(entry)
        if ranks:
            _by_rank(hits, group, edst, esrc, eprops)
        if len(hits) + len(group) - 3 > fanout or over:
            r.clamped += 1
            hits.sort(key=itemgetter(0))  # stable: ties keep the stored order
            kept = min(len(hits), fanout)
            cut_at = 3 + fanout - kept
            off = [x[2] for x in hits[kept : kept + PERIPHERY]]
            off += (_end(x, edst, esrc) for x in group[cut_at : cut_at + PERIPHERY])
            clamped_off.extend(off[:PERIPHERY])
            del hits[kept:]
            del group[cut_at:]
        return hits

    return expand


def _take(
    store: Store,
    r: WalkResult,
    heap: list[tuple[float, int, list[int]]],
    seq: int,
    expand: Callable[[list[int]], Hits],
    edges_seen: set[int],
    later_edges: list[int],
    k: int,
    max_rows: int,
) -> bool:
    """Take from the frontier, best first, until it is empty or the Shape
    holds ``max_rows`` rows (then True). The edges between two nodes taken
    go on ``later_edges``."""
    emitted, nodes, edges, items = r.depth, r.nodes, r.edges, r.items
    laws_set, boundary = set(r.laws), r.boundary
    cols = store.view()
    esrc, edst = cols.sources, cols.targets
    rows = len(nodes) + len(edges)
    full = False
    while heap and not full:
        item = heappop(heap)
        neg, _seq, group = item
        u = group[1]
        if group[0] < 0:  # read the node's neighbours now
            base, dv = -(-neg / GAMMA) * GAMMA, group[2]
            for hit, entry, _v in expand(group):
                seq += 1
                heappush(heap, (base + hit, seq, [3, u, dv, entry]))
            if heap and heap[0] < item:
                heappush(heap, item)
                continue
        i, dv = group[0], group[2]
        end = len(group)
        # take the group's candidates in order: nothing put on the frontier
        # meanwhile can beat them (a node taken passes on only half of the
        # group's activation, and whatever else waits came after the group)
        if not u:  # a further seed: a group of one
            rows, seq, full = _further_seed(r, group[3], neg, rows, seq, heap, k, max_rows)
            i = end
        while i < end:
            entry = group[i]
            i += 1
            e = entry >> 1
            if e in edges_seen:
                continue
            v = edst[e] if entry & 1 == OUT else esrc[e]
            if v in emitted:  # an edge between two nodes of the Shape: shown last
                edges_seen.add(e)
                later_edges.append(e)
                continue
            if rows + 2 > max_rows:
                full = True
                r.cut.append(v)
                break
            emitted[v] = dv
            nodes.append(v)
            edges_seen.add(e)
            edges.append(e)
            items.append((v, e, u))
            rows += 2
            if v in laws_set:
                pass  # rules ride along; they are not walk roots
            elif dv < k:
                seq += 1
                heappush(heap, (neg * GAMMA, seq, [-1, v, dv + 1]))
            else:
                boundary.append(v)  # its neighbours are past k hops
        if full:
            group[0] = i - 1  # the candidate that did not fit stays first
            heappush(heap, item)
    return full


def _further_seed(
    r: WalkResult,
    v: int,
    neg: float,
    rows: int,
    seq: int,
    heap: list[tuple[float, int, list[int]]],
    k: int,
    max_rows: int,
) -> tuple[int, int, bool]:
    """Take ``v``, a further seed of activation ``-neg``, as a root (its
    neighbours on the frontier) unless the Shape holds it: the rows and the
    last order pushed after, and whether the Shape was full."""
    if v in r.depth:
        return rows, seq, False
    if rows + 1 > max_rows:
        r.cut.append(v)
        return rows, seq, True
    r.depth[v] = 0
    r.nodes.append(v)
    r.roots.append(v)
    r.items.append((v, 0, 0))
    if k:
        seq += 1
        heappush(heap, (neg * GAMMA, seq, [-1, v, 1]))
    else:
        r.boundary.append(v)
    return rows + 1, seq, False


def _left(
    store: Store, heap: list[tuple[float, int, list[int]]], emitted: dict[int, int]
) -> list[int]:
    """The first nodes left on the frontier, best first (at most PERIPHERY)."""
    cols = store.view()
    esrc, edst = cols.sources, cols.targets
    left: list[int] = []
    for _neg, _seq, group in sorted(heap)[: 2 * PERIPHERY]:
        if group[0] < 0:  # not read: the first of its neighbours is as near
            left.extend(_first_neighbours(store, group[1], emitted, 1))
        elif group[0] < len(group):
            nxt = group[group[0]]
            left.append(nxt if not group[1] else _end(nxt, edst, esrc))
        if len(left) >= PERIPHERY:
            break
    return left


def _end(entry: int, edst: Sequence[int], esrc: Sequence[int]) -> int:
    """The neighbour an adjacency entry leads to."""
    return edst[entry >> 1] if entry & 1 == OUT else esrc[entry >> 1]


def _rank(eprops: Mapping[int, Mapping[str, Any]], e: int) -> int | None:
    """The integer ``rank`` of edge ``e``, or None."""
    p = eprops.get(e)
    if p:
        x = p.get("rank")
        if type(x) is int:
            return x
    return None


def _by_rank(
    hits: list[tuple[float, int, int]],
    group: list[int],
    edst: Sequence[int],
    esrc: Sequence[int],
    eprops: Mapping[int, Mapping[str, Any]],
) -> None:
    """Put the neighbours reached by ranked out-edges in rank order, in the
    places they hold: of the ``k`` of them q scores (``hits``), the ``k``
    best ranks take those places and scores, best score to best rank; the
    other ranks take, in order, the places of the unscored ones (the
    entries of ``group`` after its header). The rest stay."""
    rh = [
        (x, i)
        for i, h in enumerate(hits)
        if h[1] & 1 == OUT and (x := _rank(eprops, h[1] >> 1)) is not None
    ]
    rg = [
        (x, i)
        for i in range(3, len(group))
        if group[i] & 1 == OUT and (x := _rank(eprops, group[i] >> 1)) is not None
    ]
    if len(rh) + len(rg) < 2:
        return
    order = sorted([(x, 0, i) for x, i in rh] + [(x, 1, i) for x, i in rg])
    ents = [hits[i][1] if side == 0 else group[i] for _x, side, i in order]
    at = sorted(i for _x, i in rh)
    scores = sorted(hits[i][0] for i in at)  # -score: best first
    for j, i in enumerate(at):
        hits[i] = (scores[j], ents[j], _end(ents[j], edst, esrc))
    for entry, i in zip(ents[len(at) :], sorted(i for _x, i in rg), strict=True):
        group[i] = entry


def _ranked_entries(
    entries: Sequence[int], eprops: Mapping[int, Mapping[str, Any]]
) -> Sequence[int]:
    """``entries`` (the adjacency of a node) with the out-edges that carry a
    rank, among the first ``RANK_SCAN``, in rank order in the slots they hold."""
    scan = RANK_SCAN
    head = entries[:scan]
    ranked = sorted(
        (x, i)
        for i, entry in enumerate(head)
        if entry & 1 == OUT and (x := _rank(eprops, entry >> 1)) is not None
    )
    if len(ranked) < 2:
        return entries
    out = list(head)
    for (_x, i), slot in zip(ranked, sorted(i for _x, i in ranked), strict=True):
        out[slot] = head[i]
    return out + list(entries[scan:]) if len(entries) > scan else out


def _first_neighbours(store: Store, u: int, emitted: dict[int, int], n: int) -> list[int]:
    """The first ``n`` neighbours of ``u`` in stored order not emitted."""
    cols = store.view()
    esrc, edst = cols.sources, cols.targets
    out: list[int] = []
    for entry in islice(cols.adjacency[u], PEEK_BUDGET):
        e = entry >> 1
        v = edst[e] if entry & 1 == OUT else esrc[e]
        if v not in emitted:
            out.append(v)
            if len(out) >= n:
                break
    return out


def _periphery(store: Store, r: WalkResult, frontier: list[int]) -> list[int]:
    """A few nodes just past the cut, named without being sent: the ones the
    walk stopped at, then the frontier left (best first), then what the
    clamp left out, then (read from the adjacency, a bounded peek) the
    neighbours of the nodes at hop k."""
    emitted = r.depth
    out: dict[int, None] = {}
    for v in (*r.cut, *frontier, *r.clamped_off):
        if v not in emitted:
            out[v] = None
            if len(out) >= PERIPHERY:
                return list(out)
    cols = store.view()
    esrc, edst, adj = cols.sources, cols.targets, cols.adjacency
    budget = PEEK_BUDGET
    for u in r.boundary:
        for entry in adj[u]:
            budget -= 1
            if budget <= 0:
                break
            e = entry >> 1
            v = edst[e] if entry & 1 == OUT else esrc[e]
            if v not in emitted:
                out[v] = None
                if len(out) >= PERIPHERY:
                    return list(out)
        if budget <= 0:
            break
    return list(out)


__all__ = ["GAMMA", "PERIPHERY", "SCAN", "WalkResult", "live_laws", "shape_walk"]
