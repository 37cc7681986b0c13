"""Peak_L: the last-resort seed on a codebook miss, and the outline census.

``rho*(v)`` counts the live edges at ``v`` that are not ``CONTAINS`` and whose
other end is live. A peak is a node whose rho* is positive and no smaller than
any neighbour's (over those same edges). The top ``L`` peaks, by rho* then by
observables, seed the walk. Nodes are never assigned to peaks: there is no
clustering here, only a cue for where the session is busiest.

:func:`peaks` and :func:`exemplars` read the whole session. A session keeps
:class:`PeakState` and :class:`ExemplarState` instead: built by one such pass
the first time they are asked, then brought up to date by each commit's
change record, at a cost that follows the change (the nodes whose rho*
moved and their neighbours), so the first Peak_L after a small commit is as
cheap as any other. A property test holds them equal to a full pass.
"""

from __future__ import annotations

import bisect
import heapq
from array import array
from collections.abc import Iterable
from typing import Any

from ..graph.store import OUT, Store, StoreView

HIERARCHY = "CONTAINS"


def peaks(store: Store, limit: int) -> tuple[int, ...]:
    """The top ``limit`` local maxima of rho*, ranked by rho* then observables."""
    n = store.next_node
    rho = array("I", bytes(4 * n))
    cols = store.view()
    esrc, edst, erec, nrec = cols.sources, cols.targets, cols.edge_recycled, cols.node_recycled
    etype, hierarchy = cols.edge_types.codes, cols.edge_types.code_of(HIERARCHY)
    live: list[int] = []
    for e in range(1, store.next_edge):
        if erec[e] or etype[e] == hierarchy:
            continue
        a, b = esrc[e], edst[e]
        if nrec[a] or nrec[b] or a == b:
            continue
        rho[a] += 1
        rho[b] += 1
        live.append(e)
    beaten = bytearray(n)
    for e in live:
        a, b = esrc[e], edst[e]
        ra, rb = rho[a], rho[b]
        if ra < rb:
            beaten[a] = 1
        elif rb < ra:
            beaten[b] = 1
    key = cols.keys
    cands = (v for v in range(1, n) if rho[v] and not beaten[v])
    return tuple(heapq.nsmallest(limit, cands, key=lambda v: (-rho[v], key[v], v)))


def census(store: Store) -> list[tuple[str, int]]:
    """Each kind with its live count, largest first, then by name."""
    return sorted(store.live_kinds().items(), key=lambda kc: (-kc[1], kc[0]))


def exemplars(store: Store, limit: int) -> tuple[int, ...]:
    """Up to ``limit`` exemplars: one per kind, largest kinds first; within a kind
    a live task first, then the first in observable order."""
    out: list[int] = []
    cols = store.view()
    key, nrec = cols.keys, cols.node_recycled
    for kind, _count in census(store):
        if len(out) >= limit:
            break
        if kind == "LAW":  # laws ride along on their own
            continue
        best: tuple[bool, str, int] | None = None
        for nid in store.index.kind(kind):
            if nrec[nid]:
                continue
            cand = (kind == "TSK" and store.node_props(nid).get("settled") is True, key[nid], nid)
            if best is None or cand < best:
                best = cand
        if best is not None:
            out.append(best[2])
    return tuple(out)


def _counts(cols: StoreView, e: int) -> bool:
    """Whether edge ``e`` counts towards rho* (live, not CONTAINS, not a loop,
    both ends live)."""
    if cols.edge_recycled[e] or cols.edge_types[e] == HIERARCHY:
        return False
    a, b = cols.sources[e], cols.targets[e]
    nrec = cols.node_recycled
    return a != b and not nrec[a] and not nrec[b]


class PeakState:
    """rho* of every node, which nodes are peaks, and the peaks by rho*."""

    def __init__(self, store: Store) -> None:
        self.s = store
        n, m = store.next_node, store.next_edge
        self.rho = array("I", bytes(4 * n))
        self.counted = bytearray(m)
        rho, counted = self.rho, self.counted
        cols = store.view()
        esrc, edst = cols.sources, cols.targets
        for e in range(1, m):
            if _counts(cols, e):
                counted[e] = 1
                rho[esrc[e]] += 1
                rho[edst[e]] += 1
        beaten = bytearray(n)  # one pass over the edges, as peaks() does
        for e in range(1, m):
            if counted[e]:
                a, b = esrc[e], edst[e]
                if rho[a] < rho[b]:
                    beaten[a] = 1
                elif rho[b] < rho[a]:
                    beaten[b] = 1
        self.peak = bytearray(n)
        self.by_rho: dict[int, set[int]] = {}
        self.levels: list[int] = []  # the rho values with peaks, ascending
        for v in range(1, n):
            if rho[v] and not beaten[v]:
                self._mark(v, True)

    # -- one node ----------------------------------------------------------------
    def _neighbours(self, v: int) -> Iterable[int]:
        """The other ends of the counted edges at ``v``."""
        counted, cols = self.counted, self.s.view()
        esrc, edst = cols.sources, cols.targets
        for entry in cols.adjacency[v]:
            e = entry >> 1
            if counted[e]:
                yield edst[e] if entry & 1 == OUT else esrc[e]

    def _is_peak(self, v: int) -> bool:
        r = self.rho[v]
        if not r:
            return False
        rho = self.rho
        return all(rho[u] <= r for u in self._neighbours(v))

    def _mark(self, v: int, on: bool, old_rho: int | None = None) -> None:
        """Set the peak flag of ``v`` (filed under its rho, or unfiled from
        ``old_rho`` when its rho has just changed)."""
        was = self.peak[v]
        r_old = self.rho[v] if old_rho is None else old_rho
        if was:
            bucket = self.by_rho[r_old]
            bucket.discard(v)
            if not bucket:
                del self.by_rho[r_old]
                self.levels.pop(bisect.bisect_left(self.levels, r_old))
        self.peak[v] = on
        if on:
            r = self.rho[v]
            got = self.by_rho.get(r)
            if got is None:
                got = self.by_rho[r] = set()
                bisect.insort(self.levels, r)
            got.add(v)

    # -- a commit ----------------------------------------------------------------
    def apply(self, changes: Iterable[Any]) -> None:
        """Bring the state up to date with one commit's change records."""
        s = self.s
        grow = s.next_node - len(self.rho)
        if grow > 0:
            self.rho.frombytes(bytes(4 * grow))
            self.peak.extend(bytes(grow))
        if s.next_edge > len(self.counted):
            self.counted.extend(bytes(s.next_edge - len(self.counted)))
        moved: dict[int, int] = {}  # node -> rho before this commit
        rho, counted = self.rho, self.counted
        cols = s.view()
        for ch in changes:
            if ch.op[0] != "E":
                continue
            e = ch.id
            now = _counts(cols, e)
            if now == bool(counted[e]):
                continue
            counted[e] = now
            step = 1 if now else -1
            for v in s.edge_ends(e):
                moved.setdefault(v, rho[v])
                rho[v] += step
        for v, r_old in moved.items():
            r = rho[v]
            peak = r > 0
            for u in self._neighbours(v):
                ru = rho[u]
                if ru > r:
                    peak = False
                if u in moved:
                    continue  # settled in its own turn
                if self.peak[u]:
                    if ru < r:
                        self._mark(u, False)  # v rose above it
                elif r < r_old and r <= ru < r_old and self._is_peak(u):
                    self._mark(u, True)  # v was the one above it
            if peak != bool(self.peak[v]) or (peak and r != r_old):
                self._mark(v, peak, r_old)

    def top(self, limit: int) -> tuple[int, ...]:
        """The top ``limit`` peaks by rho*, then observables, then id."""
        out: list[int] = []
        key = self.s.view().keys
        for r in reversed(self.levels):
            bucket = self.by_rho[r]
            need = limit - len(out)
            out += heapq.nsmallest(need, bucket, key=lambda v: (key[v], v))
            if len(out) >= limit:
                break
        return tuple(out)


class ExemplarState:
    """The exemplar of each kind (see :func:`exemplars`), kept per commit."""

    def __init__(self, store: Store) -> None:
        self.s = store
        self.best: dict[str, int] = {}
        for kind in store.live_kinds():
            self._recompute(kind)

    def _rank(self, nid: int) -> tuple[bool, str, int]:
        s = self.s
        settled = s.node_kind(nid) == "TSK" and s.node_props(nid).get("settled") is True
        return (settled, s.node_key(nid), nid)

    def _recompute(self, kind: str) -> None:
        nrec = self.s.view().node_recycled
        cands = [n for n in self.s.index.kind(kind) if not nrec[n]]
        if cands:
            self.best[kind] = min(cands, key=self._rank)
        else:
            self.best.pop(kind, None)

    def apply(self, changes: Iterable[Any]) -> None:
        s = self.s
        before = dict(self.best)  # the exemplars this commit started from
        stale: set[str] = set()
        for ch in changes:
            if ch.op[0] != "N":
                continue
            nid = ch.id
            kind = s.node_kind(nid)
            if before.get(kind) == nid:
                # the exemplar itself changed (it may rank lower now than a
                # node this commit did not touch): the kind is ranked again,
                # even when an earlier change of the commit took its place
                stale.add(kind)
                continue
            cur = self.best.get(kind)
            if not s.node_recycled(nid) and (cur is None or self._rank(nid) < self._rank(cur)):
                self.best[kind] = nid
        for kind in stale:
            self._recompute(kind)

    def top(self, limit: int) -> tuple[int, ...]:
        out: list[int] = []
        for kind, _count in census(self.s):
            if len(out) >= limit:
                break
            if kind != "LAW" and kind in self.best:  # laws ride along on their own
                out.append(self.best[kind])
        return tuple(out)


__all__ = ["HIERARCHY", "ExemplarState", "PeakState", "census", "exemplars", "peaks"]
