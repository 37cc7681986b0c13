"""Peak_L: the last-resort seed on a codebook miss, and the outline census.

``rho*(v)`` counts the live edges at ``v`` that are not ``CONTAINS`` and whose
other end is live. A peak is a node whose rho* is positive and no smaller than
any neighbour's (over those same edges). The top ``L`` peaks, by rho* then by
observables, seed the walk. Nodes are never assigned to peaks: there is no
clustering here, only a cue for where the session is busiest.

Both computations read the whole session once, so the session caches their
result per version; repeated misses on the same version cost a lookup.
"""

from __future__ import annotations

import heapq
from array import array

from ..graph.store import Store

HIERARCHY = "CONTAINS"


def peaks(store: Store, limit: int) -> tuple[int, ...]:
    """The top ``limit`` local maxima of rho*, ranked by rho* then observables."""
    n = store.next_node
    rho = array("I", bytes(4 * n))
    esrc, edst, erec, nrec, etype = store.esrc, store.edst, store.erec, store.nrec, store.etype
    live: list[int] = []
    for e in range(1, store.next_edge):
        if erec[e] or etype[e] == HIERARCHY:
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
    key = store.key
    cands = (v for v in range(1, n) if rho[v] and not beaten[v])
    return tuple(heapq.nsmallest(limit, cands, key=lambda v: (-rho[v], key[v], v)))


def census(store: Store) -> list[tuple[str, int]]:
    """Each kind with its live count, largest first, then by name."""
    return sorted(((k, c) for k, c in store.kind_live.items() if c > 0),
                  key=lambda kc: (-kc[1], kc[0]))


def exemplars(store: Store, limit: int) -> tuple[int, ...]:
    """Up to ``limit`` exemplars: one per kind, largest kinds first; within a kind
    a live task first, then the first in observable order."""
    out: list[int] = []
    key = store.key
    for kind, _count in census(store):
        if len(out) >= limit:
            break
        if kind == "LAW":  # laws ride along on their own
            continue
        best: tuple[bool, str, int] | None = None
        for nid in store.index.kind(kind):
            if store.nrec[nid]:
                continue
            cand = (kind == "TSK" and store.node_props(nid).get("settled") is True, key[nid], nid)
            if best is None or cand < best:
                best = cand
        if best is not None:
            out.append(best[2])
    return tuple(out)


__all__ = ["HIERARCHY", "census", "exemplars", "peaks"]
