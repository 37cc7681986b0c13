"""MN-VER: a Shape is bounded by the ask (rows, seeds, hops) and never shows a
dangling edge or a recycled element.

Every test builds random sessions through Commit (see ``strategies.py``),
recalls them with random queries and knobs, and checks one property against
the Shape, its text, and an independent view of the live graph
(``Session.to_networkx``).
"""

from __future__ import annotations

import re

import networkx as nx
import pytest
from hypothesis import given

import memnet
from tests.ver.strategies import (
    VER,
    build,
    emitted_distances,
    rule_nodes,
    scenarios,
)

_EDGE_FIRST = re.compile(r"  \([a-z0-9]+\)(?:<-|-)\[")
_BARE_END = re.compile(r"[->]\([a-z0-9]+\),?$")


def _line_rows(text: str) -> int:
    """The rows a Shape's text prints: a node on a line of its own is one,
    an edge between two printed nodes on a line of its own is one, and a
    node printed after the edge that reached it is two."""
    rows = 0
    for ln in text.split("\n")[1:]:
        if not ln.startswith("  ("):
            continue
        if _EDGE_FIRST.match(ln):
            rows += 1 if _BARE_END.search(ln) else 2
        else:
            rows += 1
    return rows


def _effective_limit(q, kn) -> int:  # type: ignore[no-untyped-def]
    return q.limit if q.limit is not None else kn.limit


@pytest.mark.req("MN-REQ-01")
@VER
@given(scenarios())
def test_rows_never_exceed_max_rows(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        r = sh.receipt
        assert r.max_rows == kn.max_rows
        assert r.rows == len(sh.nodes) + len(sh.edges)
        assert r.rows <= kn.max_rows, (q.text, kn, r)
        # the text prints every row once
        assert _line_rows(sh.text) == r.rows
        assert f"rows={r.rows}/{kn.max_rows} " in sh.text.split("\n", 1)[0]


@pytest.mark.req("MN-REQ-01")
@VER
@given(scenarios())
def test_seeds_never_exceed_limit(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    g = b.session.to_networkx()
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        r = sh.receipt
        seeds = r.seeds
        assert len(seeds) <= _effective_limit(q, kn), (q.text, kn, seeds)
        assert len(set(seeds)) == len(seeds)
        assert all(s in g for s in seeds), "a seed must be a live node"
        emitted = [n.var for n in sh.nodes]
        # seeds come first; a seed is left out only when M is already spent
        if r.rows < kn.max_rows:
            assert emitted[: len(seeds)] == list(seeds)
        else:
            kept = [s for s in seeds if s in emitted]
            assert emitted[: len(kept)] == kept


@pytest.mark.req("MN-REQ-01")
@VER
@given(scenarios())
def test_every_node_is_within_k_hops_of_a_seed(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        r = sh.receipt
        rules = rule_nodes(sh) if kn.laws else set()
        if not kn.laws:
            assert r.laws == 0 and r.laws_cut == 0
        dist = emitted_distances(sh, r.seeds, rules)
        for n in sh.nodes:
            if n.var in rules:
                continue
            assert n.var in dist, (
                f"{n.var} is not joined to a seed by emitted edges",
                q.text,
                kn,
                sh.text,
            )
            assert dist[n.var] <= kn.k, (n.var, dist[n.var], kn.k, sh.text)
        assert r.k == kn.k or (r.seed_mode == "outline" and r.k == 0)
        assert 0 <= r.hops <= r.k
        reached = [d for v, d in dist.items() if v not in rules]
        assert max(reached, default=0) <= r.hops
        if r.seed_mode == "outline":
            # the outline does not walk: exemplars and laws only
            assert not sh.edges and r.hops == 0


@pytest.mark.req("MN-REQ-01")
@VER
@given(scenarios())
def test_no_dangling_edge(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    g = b.session.to_networkx()
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        nodes = [n.var for n in sh.nodes]
        edges = [e.var for e in sh.edges]
        assert len(set(nodes)) == len(nodes), "a node is emitted twice"
        assert len(set(edges)) == len(edges), "an edge is emitted twice"
        emitted = set(nodes)
        for e in sh.edges:
            assert e.src in emitted and e.dst in emitted, (e, sh.text)
            # the edge is a live edge of the session, with these ends and type
            assert g.has_edge(e.src, e.dst, key=e.var), (e, sh.text)
            assert g.edges[e.src, e.dst, e.var]["type"] == e.type


@pytest.mark.req("MN-REQ-05")
@VER
@given(scenarios(max_nodes=30, max_edges=50))
def test_no_recycled_element_is_emitted_or_walked(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    s = b.session
    g = s.to_networkx()
    recycled = b.model.recycled_handles()
    und = nx.Graph(g.to_undirected())
    # the export leaves recycled elements out
    assert not recycled & set(g.nodes)
    assert not recycled & {k for _u, _v, k in g.edges(keys=True)}
    for q, kn in qs:
        sh = s.recall(q.text, **kn.kwargs())
        r = sh.receipt
        shown = (
            {n.var for n in sh.nodes} | {e.var for e in sh.edges} | set(r.seeds) | set(r.periphery)
        )
        assert not shown & recycled, (shown & recycled, q.text, sh.text)
        # white box: the store's recycled flags agree
        for n in sh.nodes:
            assert not s.store.node_recycled(s.store.resolve(n.var)[1])
        for e in sh.edges:
            assert not s.store.edge_recycled(s.store.resolve(e.var)[1])
        assert all(p in g for p in r.periphery)
        if not recycled:
            assert r.hidden == 0, "nothing was recycled, so nothing can be hidden"
        # nothing is reached through a recycled node: every walked node is
        # within k hops of a seed in the live graph alone
        rules = rule_nodes(sh) if kn.laws else set()
        live_seeds = [x for x in r.seeds if x in und]
        if live_seeds:
            near = nx.multi_source_dijkstra_path_length(und, live_seeds, cutoff=kn.k)
        else:
            near = {}
        for n in sh.nodes:
            if n.var not in rules:
                assert n.var in near, (n.var, q.text, kn, sh.text)


@pytest.mark.req("MN-REQ-01")
@VER
@given(scenarios())
def test_periphery_names_live_nodes_past_the_cut(sc) -> None:  # type: ignore[no-untyped-def]
    """The periphery is a few handles just past the cut: live, not emitted."""
    spec, qs = sc
    b = build(spec)
    g = b.session.to_networkx()
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        per = sh.receipt.periphery
        assert len(set(per)) == len(per)
        assert all(p in g for p in per)
        assert not set(per) & {n.var for n in sh.nodes}, (per, q.text, kn, sh.text)


@pytest.mark.req("MN-REQ-01")
def test_periphery_excludes_a_node_emitted_after_the_clamp() -> None:
    """Minimal repro: the seed's fan-out clamp names b as periphery, then the
    walk reaches b through a and emits it; b must not stay in the periphery."""
    s = memnet.Session("p")
    ids = s.commit(
        "INSERT (s:TSK {title: 'seed'}), (a:MOD {path: 'a'}), (b:MOD {path: 'b'}), "
        "(s)-[:TOUCHES]->(a), (s)-[:TOUCHES]->(b), (a)-[:IMPORTS]->(b)"
    ).ids
    sh = s.recall("TSK seed", k=2, fanout=1)
    emitted = {n.var for n in sh.nodes}
    assert emitted == {ids["s"], ids["a"], ids["b"]}
    assert sh.receipt.clamped >= 1
    assert ids["b"] not in sh.receipt.periphery, sh.text
