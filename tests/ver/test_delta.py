"""MN-VER: delta recall (``Session.recall(q, since=ETAG)``).

Applying a delta answer to the Shape it was taken against gives exactly the
new Shape, as graphs (checked with this module's own reading of the
statements, and with ``memnet.apply_delta``); a delta is never larger than the
Shape; nothing changed costs one short line; and the answer is the same bytes
whether the session remembers the old Shape or a fresh process rebuilds it
from the cabinet's log by walking a copy back (which must recall exactly as
the log's replay of that version does).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given

import memnet
from memnet.commit import rewind
from tests.ver.strategies import VER, build, commit_batch, scenarios, typed

MAX_UNCHANGED_TOKENS = 40


def graph(statements: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Shape's graph from its parsed INSERT: handle → observables, values typed."""
    nodes: dict[str, Any] = {}
    edges: dict[str, Any] = {}
    for st in statements:
        assert isinstance(st, memnet.gql.ast.Insert)
        for p in st.nodes:
            nodes[p.var] = _node(p.labels, p.props, p.nick)
        for e in st.edges:
            edges[e.var] = (e.type, e.src, e.dst, _props(e.props))
    return nodes, edges


def _props(props: Any) -> frozenset[tuple[str, Any]]:
    return frozenset((k, typed(v)) for k, v in props)


def _node(labels: Any, props: Any, nick: Any) -> tuple[Any, ...]:
    return (labels[0], frozenset(labels[1:]), _props(props), nick)


def apply(
    old: tuple[dict[str, Any], dict[str, Any]], statements: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The oracle: a delta's statements read the way the wire profile says."""
    ast = memnet.gql.ast
    nodes, edges = dict(old[0]), dict(old[1])
    for st in statements:
        if isinstance(st, ast.Insert):
            for p in st.nodes:
                if p.bare:
                    assert p.var in nodes, f"an added edge names {p.var}, not in the Shape"
                else:
                    assert p.var not in nodes, f"{p.var} is added but was there"
                    nodes[p.var] = _node(p.labels, p.props, p.nick)
            for e in st.edges:
                assert e.var not in edges
                edges[e.var] = (e.type, e.src, e.dst, _props(e.props))
        elif isinstance(st, ast.Gone):
            assert (st.var in nodes) != (st.var in edges)
            (nodes if st.var in nodes else edges).pop(st.var)
        elif isinstance(st, (ast.SetProp, ast.RemoveProp)):
            table = nodes if st.var in nodes else edges
            row = list(table[st.var])
            i = 2 if table is nodes else 3
            props = {k: v for k, v in row[i] if k != st.key}
            if isinstance(st, ast.SetProp):
                props[st.key] = typed(st.value)
            row[i] = frozenset(props.items())
            table[st.var] = tuple(row)
        else:
            kind, labels, props, nick = nodes[st.var]
            if isinstance(st, ast.SetLabel):
                labels = labels | {st.label}
            elif isinstance(st, ast.RemoveLabel):
                labels = labels - {st.label}
            elif isinstance(st, ast.SetNick):
                nick = st.nick
            else:
                assert isinstance(st, ast.RemoveNick) and st.nick == nick
                nick = None
            nodes[st.var] = (kind, labels, props, nick)
    return nodes, edges


def check(s: memnet.Session, old: memnet.Shape, d: memnet.Shape, new: memnet.Shape) -> None:
    """``d`` (recalled with since=old's etag) answers ``new`` from ``old``."""
    r = d.receipt
    assert r.etag == new.receipt.etag and r.since == old.receipt.etag
    assert r.tokens == memnet.count_tokens(d.text), d.text
    assert r.bytes == len(d.text.encode())
    was, now = graph(memnet.parse(old.text).statements), graph(memnet.parse(new.text).statements)
    if r.answer == "unchanged":
        assert was == now
        assert "\n" not in d.text and d.text.startswith("// unchanged ")
        assert r.tokens <= MAX_UNCHANGED_TOKENS
    elif r.answer == "delta":
        if was == now:  # only the order of the rows moved: a new etag, nothing to apply
            assert (r.added, r.changed, r.gone) == (0, 0, 0) and "\n" not in d.text
        statements = memnet.parse(d.text).statements
        assert apply(was, statements) == now, (old.text, d.text, new.text)
        assert graph([memnet.apply_delta(old.text, d.text)]) == now
        assert r.tokens < new.receipt.tokens
        assert (r.added, r.gone) == (
            len(now[0].keys() - was[0].keys()) + len(now[1].keys() - was[1].keys()),
            len(was[0].keys() - now[0].keys()) + len(was[1].keys() - now[1].keys()),
        )
    else:
        # only the token guard sends the whole Shape for an etag in the window
        assert r.answer == "shape" and r.why.startswith("the delta would cost")
        assert d.text.partition("\n")[2] == new.text.partition("\n")[2]
        assert f" since={old.receipt.etag} why=" in d.text.partition("\n")[0]
    if r.answer != "shape":
        with pytest.raises(memnet.EchoRefused):  # a delta answer is never a Commit
            s.commit(d.text)


@pytest.mark.req("MN-REQ-00.1", "MN-REQ-07", "MN-REQ-00")
@VER
@given(scenarios(n_queries=2))
def test_a_delta_turns_the_old_shape_into_the_new_one(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(replace(spec, batches=()))
    s = b.session
    seen = [[s.recall(q.text, **kn.kwargs())] for q, kn in qs]
    for batch in spec.batches:
        commit_batch(b, batch)
        for (q, kn), olds in zip(qs, seen, strict=True):
            new = s.recall(q.text, **kn.kwargs())
            for old in olds[-3:]:
                d = s.recall(q.text, since=old.receipt.etag, **kn.kwargs())
                check(s, old, d, new)
                # the same ask again: the same bytes
                assert s.recall(q.text, since=old.receipt.etag, **kn.kwargs()).text == d.text
            olds.append(new)


def _in_cabinet(spec: Any) -> tuple[memnet.Cabinet, Any]:
    cab = memnet.Cabinet.open(backend="memory")
    s = cab.create("ver", delete_on_settle=spec.delete_on_settle)
    b = build(replace(spec, batches=()), session=s)
    cab.flush(s)
    return cab, b


@pytest.mark.req("MN-REQ-00.1", "MN-REQ-02", "MN-REQ-13")
@VER
@given(scenarios(n_queries=2))
def test_a_fresh_process_answers_the_same_bytes(sc) -> None:  # type: ignore[no-untyped-def]
    """The session that served the old Shapes answers from its memory; a copy
    opened afresh from the cabinet finds them by walking the log back."""
    spec, qs = sc
    cab, b = _in_cabinet(spec)
    s = b.session
    olds = [[s.recall(q.text, **kn.kwargs())] for q, kn in qs]
    for batch in spec.batches:
        commit_batch(b, batch)
        cab.flush(s)
        for (q, kn), mine in zip(qs, olds, strict=True):
            mine.append(s.recall(q.text, **kn.kwargs()))
    fresh = memnet.Cabinet(cab.kv).open("ver")
    for (q, kn), mine in zip(qs, olds, strict=True):
        for old in mine[:3]:  # the oldest: the longest walks back
            warm = s.recall(q.text, since=old.receipt.etag, **kn.kwargs())
            cold = fresh.recall(q.text, since=old.receipt.etag, **kn.kwargs())
            assert cold.text == warm.text, (q.text, old.text, warm.text, cold.text)
            assert cold.receipt == warm.receipt
            assert warm.receipt.answer != "shape" or warm.receipt.why.startswith("the delta")


@pytest.mark.req("MN-REQ-13", "MN-REQ-02", "MN-REQ-00.1")
@VER
@given(scenarios(n_queries=2))
def test_a_copy_walked_back_recalls_like_the_log_replayed(  # type: ignore[no-untyped-def]
    sc,
) -> None:
    spec, qs = sc
    cab, b = _in_cabinet(spec)
    s = b.session
    for batch in spec.batches:
        commit_batch(b, batch)
        cab.flush(s)
    past = s.archive.copy()  # type: ignore[union-attr]
    seen = []
    for v in rewind(
        past.store,
        past.version,
        s.archive.changes,
        0,  # type: ignore[union-attr]
        max_read=10**6,
        max_undo=10**6,
    ):
        past.version = v
        seen.append(v)
        ref = cab.open("ver", at=v)
        assert past.stats()["nodes"] == ref.stats()["nodes"]
        assert past.stats()["edges"] == ref.stats()["edges"]
        for q, kn in qs:
            for view in ("interior", "shell"):
                got = past.recall(q.text, **(kn.kwargs() | {"view": view}))
                want = ref.recall(q.text, **(kn.kwargs() | {"view": view}))
                assert got.text.partition("\n")[2] == want.text.partition("\n")[2], (v, q.text)
                assert got.receipt.seeds == want.receipt.seeds
    assert seen == list(range(s.version, -1, -1))
