"""MN-VER: a hub costs what a leaf costs.

One TSK seed touches a MOD hub with 5,000 neighbours of mixed kinds and
realistic titles. With default knobs the Shape stays within M rows and 4k
tokens, the fan-out clamp shows in the receipt, and the walk reads a bounded
number of the hub's adjacency entries (counted, not timed).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

import pytest

import memnet
from memnet.recall.walk import SCAN

HUB_DEGREE = 5000
KINDS = ("DEC", "REQ", "MOD", "PKG", "TSK")
TYPES = ("IMPORTS", "CONTAINS", "SATISFIES", "TOUCHES")
VERBS = ("Reconcile", "Refactor", "Document", "Migrate", "Audit", "Cache", "Split", "Harden")
THINGS = (
    "invoice ledger",
    "tax rounding",
    "login throttle",
    "report schema",
    "quota table",
    "billing export",
    "widget parser",
    "graph loader",
)


def _title(i: int) -> str:
    return (
        f"{VERBS[i % len(VERBS)]} the {THINGS[(i // 8) % len(THINGS)]} "
        f"for region {i % 97} before release {i % 13}"
    )


class _CountingArray(array):  # type: ignore[type-arg]
    """An adjacency list that counts how many entries are read from it."""

    reads = 0

    def __iter__(self) -> Iterator[int]:
        for x in array.__iter__(self):
            self.reads += 1
            yield x

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        got = array.__getitem__(self, i)
        self.reads += len(got) if isinstance(got, array) else 1
        return got


@pytest.fixture(scope="module")
def hub_session() -> tuple[memnet.Session, dict[str, str]]:
    s = memnet.Session("hub")
    ids = s.commit(
        "INSERT (t:TSK {title: 'Fix the pricing page rounding', status: 'open'}), "
        "(h:MOD {path: 'shop/core/pricing.py', title: 'pricing core'}), "
        "(l:LAW {text: 'Never change a price without a recorded decision'}), "
        "(t)-[:TOUCHES]->(h)"
    ).ids
    hub = ids["h"]
    batch = 1000
    for start in range(0, HUB_DEGREE, batch):
        parts = []
        for i in range(start, start + batch):
            kind, etype = KINDS[i % len(KINDS)], TYPES[(i // 5) % len(TYPES)]
            node = f"(x{i}:{kind} {{title: '{_title(i)}', status: 'open', rank: {i % 17}}})"
            parts.append(f"{node}-[:{etype}]->({hub})" if i % 2 else f"({hub})-[:{etype}]->{node}")
        s.commit("INSERT " + ",\n".join(parts))
    return s, ids


def _count_hub_reads(s: memnet.Session, hub: str, **recall) -> tuple[memnet.Shape, int]:  # type: ignore[no-untyped-def]
    nid = s.store.resolve(hub)[1]
    # white box: wrap the hub's adjacency list in the store's own column (the
    # view reads the same list, so a walk through either sees the wrapper)
    column = s.store._adj
    original = column[nid]
    counting = _CountingArray(original.typecode, original)
    column[nid] = counting
    try:
        sh = s.recall(**recall)
    finally:
        column[nid] = original
    return sh, counting.reads


@pytest.mark.req("MN-REQ-00", "MN-REQ-01")
def test_hub_next_to_the_seed_stays_bounded(hub_session) -> None:  # type: ignore[no-untyped-def]
    s, ids = hub_session
    g = s.to_networkx()
    assert g.degree(ids["h"]) == HUB_DEGREE + 1
    sh, reads = _count_hub_reads(s, ids["h"], q="TSK status:open pricing")
    r = sh.receipt
    assert r.seed_mode == "match" and r.seeds == (ids["t"],)
    assert r.rows <= 50 and r.rows == len(sh.nodes) + len(sh.edges)
    assert r.tokens <= 4000 and r.tokens == memnet.count_tokens(sh.text)
    assert r.alarm is False
    assert r.clamped >= 1
    assert r.periphery, "the clamp leaves nodes just past the cut to mention"
    emitted = {n.var for n in sh.nodes}
    assert ids["h"] in emitted
    hub_nbrs = [n for n in emitted if n not in (ids["h"], ids["t"], ids["l"])]
    assert 1 <= len(hub_nbrs) <= 8  # F = 8
    assert reads <= 8 + 1 + 64 + 16, reads  # F, the one past the cut, a small peek
    assert reads < HUB_DEGREE // 10


@pytest.mark.req("MN-REQ-00", "MN-REQ-01")
def test_hub_as_seed_and_as_peak_stays_bounded(hub_session) -> None:  # type: ignore[no-untyped-def]
    s, ids = hub_session
    for q in ("MOD pricing", "no-such-word-anywhere", ""):
        sh, reads = _count_hub_reads(s, ids["h"], q=q)
        r = sh.receipt
        assert r.rows <= 50
        assert r.tokens <= 4000
        # the clamp scores at most SCAN * F entries; then the periphery peek
        assert reads <= SCAN * 8 + 1 + 64 + 16, (q, reads)
        if q == "no-such-word-anywhere":
            assert r.seed_mode == "peak" and r.seeds[0] == ids["h"]
        if q == "MOD pricing":
            assert r.seeds[0] == ids["h"] and r.clamped >= 1
    # the hard ceilings hold too; past 8k tokens the receipt raises the alarm
    sh, reads = _count_hub_reads(s, ids["h"], q="MOD pricing", k=6, max_rows=500, fanout=64)
    assert sh.receipt.rows <= 500
    assert sh.receipt.alarm is (sh.receipt.tokens > 8000)
    assert reads <= SCAN * 64 + 1 + 64 + 16, reads


@pytest.mark.req("MN-REQ-01")
def test_leaf_and_hub_seeds_cost_the_same_rows(hub_session) -> None:  # type: ignore[no-untyped-def]
    """One M for the whole Shape, whatever the seeds' degrees."""
    s, _ids = hub_session
    for q in ("TSK status:open", "MATCH (n:DEC {status: 'open'}) LIMIT 8", "REQ ledger"):
        for kw in ({}, {"limit": 8, "fanout": 10, "k": 4}, {"max_rows": 7}):
            sh = s.recall(q, **kw)
            assert sh.receipt.rows <= kw.get("max_rows", 50)
            # L left open takes further seeds as rows allow, never past its ceiling
            assert len(sh.receipt.seeds) <= kw.get("limit", memnet.LIMITS.limit_max) or "LIMIT" in q
