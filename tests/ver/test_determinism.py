"""MN-VER: the same q on the same version gives byte-identical text, and the
text is a function of observables, not of creation order or handles."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memnet
from tests.ver.strategies import (
    VER,
    build,
    canonical_text,
    graph_data,
    graph_specs,
    knobs,
    queries,
    scenarios,
    typed,
)


def _texts(s: memnet.Session, qs) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.recall(q.text, **kn.kwargs()).text for q, kn in qs]


@pytest.mark.req("MN-REQ-02")
@VER
@given(scenarios(n_queries=4))
def test_same_recall_twice_is_byte_identical(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    s = b.session
    first = [s.recall(q.text, **kn.kwargs()) for q, kn in qs]
    # again, in reverse order (other recalls in between warm every cache)
    again = [s.recall(q.text, **kn.kwargs()) for q, kn in reversed(qs)][::-1]
    for a, c in zip(first, again, strict=True):
        assert a.text == c.text
        assert a.receipt == c.receipt
        assert a.insert == c.insert
    # a refused commit is not a new version: nothing may move
    with pytest.raises(memnet.MemNetError):
        s.commit("INSERT (x:DEC {title: 'never lands'})-[:TOUCHES]->(nzz9)")
    # and neither is a commit that changes nothing
    assert s.commit("// nothing to do\n").changed is False
    after = [s.recall(q.text, **kn.kwargs()) for q, kn in qs]
    for a, c in zip(first, after, strict=True):
        assert a.text == c.text
    # the etag is a function of the text: equal texts, equal etags; and two
    # different bodies on the same version carry different etags
    bodies = {}
    for sh in first:
        body = sh.text.partition("\n")[2]
        bodies.setdefault(body, set()).add(sh.receipt.etag)
    for tags in bodies.values():
        assert len(tags) == 1
    assert len({next(iter(t)) for t in bodies.values()}) == len(bodies)


@st.composite
def _reordered(draw):  # type: ignore[no-untyped-def]
    spec = draw(graph_specs(max_nodes=35, max_edges=35, simple=True, unique_names=True))
    qs = [(draw(queries(spec)), draw(knobs())) for _ in range(3)]
    order = draw(st.permutations(range(len(spec.nodes))))
    eorder = draw(st.permutations(range(len(spec.edges))))
    chunks = draw(st.integers(1, 4))
    tmp = draw(
        st.sets(st.integers(0, max(0, len(spec.nodes) - 1)), max_size=4)
        if spec.nodes
        else st.just(set())
    )
    return spec, qs, list(order), list(eorder), chunks, tmp


@pytest.mark.req("MN-REQ-02")
@VER
@given(_reordered())
def test_insertion_order_does_not_show(case) -> None:  # type: ignore[no-untyped-def]
    """The same graph built in another order, over another number of commits,
    with some nodes passing through an intermediate state, recalls to the same
    text once handles are renamed by first appearance.

    Every node carries a unique ``name`` so that its observables are unique
    (nodes that print the same may be told apart by insertion order), and no
    two edges share ends and type for the same reason. At most 35 nodes and
    edges keep every handle the same length, so the byte counts must agree too.
    """
    spec, qs, order, eorder, chunks, tmp = case
    a = build(spec)
    b = build(replace(spec, chunks=chunks), node_order=order, edge_order=eorder, tmp=tmp)
    known = set(a.node_handles) | set(a.edge_handles) | set(b.node_handles) | set(b.edge_handles)
    # the two sessions hold the same graph up to handles
    ga, gb = a.session.to_networkx(), b.session.to_networkx()
    rename = dict(zip(b.node_handles, a.node_handles, strict=True)) | dict(
        zip(b.edge_handles, a.edge_handles, strict=True)
    )
    gb_renamed = memnet.Session("x").to_networkx()
    for h, attrs in gb.nodes(data=True):
        gb_renamed.add_node(rename[h], **attrs)
    for u, v, k, attrs in gb.edges(keys=True, data=True):
        gb_renamed.add_edge(rename[u], rename[v], key=rename[k], **attrs)
    assert graph_data(ga) == graph_data(gb_renamed)
    for q, kn in qs:
        sa = a.session.recall(q.text, **kn.kwargs())
        sb = b.session.recall(q.text, **kn.kwargs())
        ta = canonical_text(sa.text, known)
        tb = canonical_text(sb.text, known)
        assert ta == tb, (q.text, kn, sa.text, sb.text)
        # handles all have the same length here, so the bodies have the same
        # byte count (the receipt line may not: its token count depends on
        # how the handles' letters tokenize, and can gain a digit)
        assert len({len(h) for h in known}) <= 1
        head_a, _, body_a = sa.text.partition("\n")
        head_b, _, body_b = sb.text.partition("\n")
        assert len(body_a.encode()) == len(body_b.encode())
        assert sa.receipt.bytes - len(head_a.encode()) == sb.receipt.bytes - len(head_b.encode())
        # the receipt fields that do not spell a handle agree as well
        for f in (
            "seed_mode",
            "matched",
            "rows",
            "max_rows",
            "hops",
            "k",
            "clamped",
            "hidden",
            "laws",
            "laws_cut",
            "view",
            "holds_answer",
            "alarm",
            "advice",
            "census",
        ):
            assert getattr(sa.receipt, f) == getattr(sb.receipt, f), f
        assert [rename.get(x, x) for x in sb.receipt.seeds] == list(sa.receipt.seeds)


def _norm(sq):  # type: ignore[no-untyped-def]
    return (
        sq.kind,
        sq.labels,
        tuple((k, typed(v)) for k, v in sq.props),
        sq.keywords,
        sq.contains,
        sq.nick,
        sq.limit,
    )


@pytest.mark.req("MN-REQ-02")
@VER
@given(scenarios(n_queries=4))
def test_receipt_q_is_the_normalised_query(sc) -> None:  # type: ignore[no-untyped-def]
    """The receipt names q in one normal form: it reads back as the same query
    (as the session read it: a capital word that names no kind of the session
    is a keyword, and the receipt's note says so), and recalling the normal
    form gives the very same text."""
    from memnet.recall.relevance import read_in

    spec, qs = sc
    b = build(spec)
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        r = sh.receipt
        read, note = read_in(b.session.store, memnet.parse_query(q.text))
        assert (note == "") == (r.note == "") and note in r.note
        again_read = read_in(b.session.store, memnet.parse_query(r.q))[0]
        assert _norm(again_read) == _norm(read), (q.text, r.q)
        again = b.session.recall(r.q, **kn.kwargs())
        if r.note:  # the normal form reads as written: no note, the same rows
            assert (
                again.receipt.note == ""
                and again.text.partition("\n")[2] == sh.text.partition("\n")[2]
            )
        else:
            assert again.text == sh.text
