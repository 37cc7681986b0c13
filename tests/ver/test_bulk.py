"""MN-VER: the bulk path of Commit (``Session.commit_bulk`` of a ``memnet.Bulk``)
is Commit without the text. For the same batch, a session written through
``commit_bulk(b)`` and one written through ``commit(b.text())`` end in the same
store (columns, adjacency order, index postings, counts), return the same
results (handles, version, counts) or the same error (code, message, line and
column), and keep the same history records."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memnet
from memnet.errors import MemNetError
from tests.ver.strategies import (
    EDGE_TYPES,
    EXTRA_LABELS,
    KINDS,
    NICKS,
    SET_KEYS,
    VER,
    graph_data,
    prop_maps,
    values,
)

REQ = "MN-REQ-03"


def _store_state(s: memnet.Session) -> tuple[Any, ...]:
    st_ = s.store
    v = st_.view()
    postings = sorted((t, list(p)) for t, p in st_.index.postings())
    return (
        list(v.kinds),
        list(v.extra_labels),
        [v.prop_maps[i] for i in range(len(v.kinds))],
        list(v.keys),
        [list(a) for a in v.adjacency],
        bytes(v.node_recycled),
        dict(v.nicks),
        dict(v.nick_owners),
        list(v.edge_types),
        list(v.sources),
        list(v.targets),
        dict(v.edge_props),
        bytes(v.edge_recycled),
        postings,
        st_.live_nodes,
        st_.live_edges,
        st_.live_bytes,
        st_.live_kinds(),
        dict(v.hidden_edges),
    )


def _outcome(fn: Any) -> tuple[Any, ...]:
    try:
        r = fn()
    except MemNetError as e:
        return ("error", e.code, e.message, e.details.get("line"), e.details.get("column"))
    return ("ok", r.ids, r.version, r.changed, r.created, r.updated, r.recycled, r.advice)


@st.composite
def _bulk(draw: Any, live: list[str]) -> memnet.Bulk:
    """A batch of mostly valid lines over this batch's variables and the live
    handles (now and then one that is refused: an unknown handle, a SETTLE of
    a non-task, a nick taken twice)."""
    b = memnet.Bulk()
    mine: list[str] = []
    for i in range(draw(st.integers(1, 12))):
        refs = mine + live
        what = draw(st.integers(0, 9))
        if what <= 3 or not refs:
            kind = draw(st.sampled_from(KINDS))
            labels = tuple(draw(st.lists(st.sampled_from(EXTRA_LABELS), unique=True, max_size=2)))
            nick = draw(st.none() | st.sampled_from(NICKS))
            var = draw(st.none() | st.just(f"v{i}"))
            mine.append(b.node(kind, dict(draw(prop_maps())), labels=labels, nick=nick, var=var))
        elif what <= 6:
            src = draw(st.sampled_from(refs + ["nzz"]))
            dst = draw(st.sampled_from(refs))
            props = dict(draw(prop_maps(simple=True, keys=("note", "prio", "w"))))
            b.edge(
                src,
                draw(st.sampled_from(EDGE_TYPES)),
                dst,
                props,
                var=draw(st.none() | st.just(f"e{i}")),
            )
        else:
            ref = draw(st.sampled_from(refs))
            op = draw(
                st.sampled_from(("set", "remove", "label", "unlabel", "nick", "delete", "settle"))
            )
            if op == "set":
                b.set(ref, draw(st.sampled_from(SET_KEYS)), draw(values()))
            elif op == "remove":
                b.remove(ref, draw(st.sampled_from(SET_KEYS)))
            elif op in ("label", "unlabel"):
                getattr(b, op)(ref, draw(st.sampled_from(EXTRA_LABELS)))
            elif op == "nick":
                b.nick(ref, draw(st.sampled_from(NICKS)))
            else:
                getattr(b, op)(ref)
    return b


@pytest.mark.req(REQ)
@VER
@given(st.data())
def test_bulk_and_text_commits_give_the_same_session(data: st.DataObject) -> None:
    by_bulk = memnet.Session("bulk", history_limit=None)
    by_text = memnet.Session("text", history_limit=None)
    for _ in range(data.draw(st.integers(1, 4))):
        live = sorted(by_bulk.handles())
        b = data.draw(_bulk(live))
        text = b.text()
        assert _outcome(lambda b=b: by_bulk.commit_bulk(b)) == _outcome(
            lambda text=text: by_text.commit(text)
        )
        assert _store_state(by_bulk) == _store_state(by_text)
    assert graph_data(by_bulk.to_networkx()) == graph_data(by_text.to_networkx())
    assert [(r.version, r.changes, r.summary) for r in by_bulk.history()] == [
        (r.version, r.changes, r.summary) for r in by_text.history()
    ]


@pytest.mark.req(REQ)
def test_bulk_text_parses_to_the_same_delta_with_positions() -> None:
    b = memnet.Bulk()
    t = b.node(
        "TSK", {"title": "it's done", "tags": ["a", "b"]}, labels=("URGENT",), nick="alpha", var="t"
    )
    u = b.node("LAW", {"text": "never on fridays"})
    b.edge(t, "TOUCHES", u, {"w": 2}, var="e")
    b.edge(u, "IMPORTS", "na1")
    b.set(t, "prio", 2)
    b.label(t, "CORE")
    b.remove(t, "tags")
    b.unlabel(t, "URGENT")
    b.nick(u, "beta")
    b.unnick(t, "alpha")
    b.settle(t)
    b.delete(u)
    b.node("DEC", {"title": "second insert"})
    text = b.text()
    parsed = memnet.parse_delta(text)
    assert repr(b.to_delta()) == repr(parsed)  # positions are in the repr
    assert len(b) == len(text.splitlines()) - 2  # the edges take two lines each


@pytest.mark.req(REQ)
def test_bulk_errors_name_the_line_of_the_text_form() -> None:
    s = memnet.Session("bulk-errors")
    b = memnet.Bulk()
    a = b.node("TSK", {"title": "a"})
    b.edge(a, "TOUCHES", "nzz")
    with pytest.raises(memnet.CommitRejected) as bulk_err:
        s.commit_bulk(b)
    with pytest.raises(memnet.CommitRejected) as text_err:
        s.commit(b.text())
    assert (
        (bulk_err.value.line, bulk_err.value.column)
        == (4, 1)
        == (text_err.value.line, text_err.value.column)
    )
    assert s.version == 0


@pytest.mark.req(REQ)
def test_a_committed_bulk_is_closed_and_bad_input_is_refused() -> None:
    b = memnet.Bulk()
    b.node("TSK", {"title": "x"}, var="x")
    s = memnet.Session("bulk-closed")
    assert s.commit_bulk(b).created == 1
    with pytest.raises(memnet.InvalidArgument):  # also a ValueError
        b.node("TSK")
    assert memnet.Session("other").commit_bulk(b).ids == {"x": "na1"}
    with pytest.raises(memnet.InvalidArgument):
        memnet.Bulk().node("TSK", var="two words")
    with pytest.raises(memnet.InvalidArgument):
        memnet.Bulk().node("TSK", var="_anon3")
    with pytest.raises(memnet.CommitRejected) as e:
        s.commit_bulk("INSERT (t:TSK)")  # type: ignore[arg-type]
    assert e.value.code == "not_a_delta"
    twice = memnet.Bulk()
    twice.node("TSK", var="x")
    twice.node("TSK", var="x")
    with pytest.raises(memnet.GQLSyntaxError):
        twice.to_delta()


@pytest.mark.req(REQ)
def test_a_bad_name_is_refused_by_both_paths() -> None:
    s = memnet.Session("bulk-names")
    for build in (
        lambda b: b.node("bad"),
        lambda b: b.node("TSK", {"bad key": 1}),
        lambda b: b.set(b.node("TSK"), "x", 1) or b.edge("_1", "lower", "_1"),
    ):
        b = memnet.Bulk()
        build(b)
        with pytest.raises(memnet.CommitRejected):
            s.commit_bulk(b)
        with pytest.raises(ValueError):
            b.text()
    # a statement's key, label or nick is checked by the call, as text() checks it
    b = memnet.Bulk()
    with pytest.raises(memnet.InvalidArgument):
        b.label(b.node("TSK"), "lower")
    assert b.text() == "INSERT\n(_1:TSK)"
    assert s.version == 0


@st.composite
def _elements(draw: Any) -> tuple[list[Any], list[Any], int]:
    nodes = [
        (
            draw(st.sampled_from(KINDS)),
            tuple(draw(st.lists(st.sampled_from(EXTRA_LABELS), max_size=2))),
            dict(draw(prop_maps())) or None,
            None,
        )
        for _ in range(draw(st.integers(1, 12)))
    ]
    ids = st.integers(1, len(nodes))
    edges = [
        (
            draw(st.sampled_from(EDGE_TYPES)),
            draw(ids),
            draw(ids),
            dict(draw(prop_maps(simple=True, keys=("note", "w")))) or None,
        )
        for _ in range(draw(st.integers(0, 20)))
    ]
    return nodes, edges, draw(st.integers(1, 4))


@pytest.mark.req(REQ)
@VER
@given(_elements())
def test_batched_store_writes_equal_one_by_one_writes(case: Any) -> None:
    """Store.add_nodes/add_edges (what a commit uses) leave the store exactly
    as add_node/add_edge one element at a time would, in any split."""
    from memnet.graph.store import Store
    from memnet.values import node_key

    nodes, edges, parts = case
    one, many = memnet.Session("one"), memnet.Session("many")
    one.store, many.store = Store(), Store()
    for n in nodes:
        one.store.add_node(*n)
    for e in edges:
        one.store.add_edge(*e)
    step_n, step_e = -(-len(nodes) // parts), max(1, -(-len(edges) // parts))
    for i, lo in enumerate(range(0, len(nodes), step_n)):
        chunk = nodes[lo : lo + step_n]
        known = [
            node_key(k, tuple(sorted(set(labels) - {k})), props)
            for k, labels, props, _nick in chunk
        ]  # as a commit passes them
        many.store.add_nodes(chunk, known if i % 2 else None)
    for lo in range(0, len(edges), step_e):
        many.store.add_edges(edges[lo : lo + step_e])
    assert _store_state(one) == _store_state(many)
