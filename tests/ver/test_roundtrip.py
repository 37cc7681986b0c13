"""MN-VER: an emitted Shape parses back to the same graph, and that graph is the
session's own (labels, nicks, properties as committed)."""

from __future__ import annotations

import pytest
from hypothesis import given

import memnet
from memnet.gql.ast import Insert
from tests.ver.strategies import (
    VER,
    build,
    scenarios,
    strict_eq,
    strict_props_eq,
)

SHELL_KEYS = ("title", "name", "path", "status", "sid")
SHELL_EDGE_KEYS = ("rank",)
EXCERPT_FREE = 160  # strings this short are never excerpted, in either view


def _short(v: object) -> bool:
    if isinstance(v, str):
        return len(v) < EXCERPT_FREE
    if isinstance(v, tuple):
        return len(v) <= 8 and all(_short(x) for x in v)
    return True


@pytest.mark.req("MN-REQ-07")
@VER
@given(scenarios())
def test_shape_text_parses_back_to_the_shape_graph(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        parsed = memnet.parse_delta(sh.text)
        if sh.receipt.rows == 0:
            assert parsed.statements == ()
            assert sh.nodes == () and sh.edges == ()
            continue
        assert len(parsed.statements) == 1, sh.text
        ins = parsed.statements[0]
        assert isinstance(ins, Insert)
        assert ins == sh.insert, sh.text
        # parse() (the generic entry) agrees: a Shape is a Δ, not a query
        assert memnet.parse(sh.text) == parsed


@pytest.mark.req("MN-REQ-07")
@VER
@given(scenarios())
def test_emitted_nodes_carry_the_session_observables(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    model = b.model.by_handle()
    medges = b.model.edges_by_handle()
    g = b.session.to_networkx()
    # the session holds exactly what the commits said (independent model)
    for h, a in g.nodes(data=True):
        m = model[h]
        assert m.live
        assert a["kind"] == m.kind
        assert set(a["labels"]) == m.labels
        assert a["nick"] == m.nick
        assert strict_props_eq(a["props"], m.props), (h, a["props"], m.props)
    assert set(g.nodes) == {n.handle for n in b.model.nodes if n.live}
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        for n in memnet.parse_delta(sh.text).statements[0].nodes if sh.receipt.rows else ():
            m = model[n.var]
            assert n.labels == (m.kind, *sorted(m.labels)), (n, m)
            assert n.nick == m.nick
            got = dict(n.props)
            assert len(got) == len(n.props), "a key is emitted twice"
            if kn.view == "interior":
                want = m.props
            else:
                want = {k: v for k, v in m.props.items() if k in SHELL_KEYS}
                if not want and "text" in m.props:  # a shell may name a bare rule by its text
                    want = {k: v for k, v in m.props.items() if k == "text"}
            assert set(got) == set(want), (n.var, got, want, kn.view)
            for k, v in want.items():
                if _short(v):
                    assert strict_eq(got[k], v), (n.var, k, got[k], v)
        for e in sh.edges:
            me = medges[e.var]
            assert me.live
            assert (e.src, e.dst, e.type) == (
                b.model.nodes[me.src].handle,
                b.model.nodes[me.dst].handle,
                me.type,
            )
            if kn.view == "interior":
                assert strict_props_eq(dict(e.props), me.props)
            else:  # an edge's rank only
                want_e = {k: v for k, v in me.props.items() if k in SHELL_EDGE_KEYS}
                assert set(dict(e.props)) == set(want_e), (e.var, e.props, want_e)
                assert strict_props_eq(dict(e.props), want_e)
