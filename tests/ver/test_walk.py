"""MN-VER: the walk follows q (docs/math/walk.md).

The clamp takes the neighbours q scores before the others; a token budget
gives a prefix of the same ranked Shape; every node the receipt names past
the cut comes with a q that seeds it; a capital word that names no kind is
read as a keyword.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet.recall.walk import SCAN
from tests.ver.strategies import VER, build, canonical_text, scenarios, typed


def graph_data_props(props: dict[str, object]) -> tuple[object, ...]:
    return tuple(sorted((k, typed(v)) for k, v in props.items()))


WALK = "MN-REQ-01"


def _star(words: list[bool], order: list[int], fanout: int) -> tuple[memnet.Session, list[str]]:
    """A hub with one leaf per entry of ``words`` (True: the leaf's title holds
    'zebra'), inserted in ``order``; the hub is named 'hub'."""
    s = memnet.Session("star")
    hub = s.commit("INSERT (h:MOD {name: 'hub'})").ids["h"]
    handles = [""] * len(words)
    for i in order:
        title = f"leaf {i} zebra" if words[i] else f"leaf {i} plain"
        handles[i] = s.commit(
            f"INSERT (x:SYM {{title: '{title}', n: {i}}}), (x)-[:IN]->({hub})"
        ).ids["x"]
    return s, handles


@pytest.mark.req(WALK)
@VER
@given(
    words=st.lists(st.booleans(), min_size=2, max_size=40),
    fanout=st.integers(1, 6),
    seed=st.integers(0, 10**6),
)
def test_the_clamp_takes_what_q_scores_before_the_rest(words, fanout, seed) -> None:  # type: ignore[no-untyped-def]
    """At a node with at most SCAN·F neighbours, a neighbour q scores is never
    left out by the clamp while one q does not score is taken; and the Shape
    is the same whatever order the graph was written in."""
    order = list(range(len(words)))
    random.Random(seed).shuffle(order)
    s, leaves = _star(words, order, fanout)
    sh = s.recall("hub zebra", k=1, fanout=fanout, limit=1, max_rows=500)
    assert sh.receipt.seeds[0] == s.recall("MOD name:hub").receipt.seeds[0]
    got = {n.var for n in sh.nodes}
    scored = [h for h, w in zip(leaves, words, strict=True) if w]
    plain = [h for h, w in zip(leaves, words, strict=True) if not w]
    taken_plain = [h for h in plain if h in got]
    taken_scored = [h for h in scored if h in got]
    if len(words) <= SCAN * fanout:
        assert len(taken_scored) + len(taken_plain) == min(fanout, len(words))
        if taken_plain:
            assert taken_scored == scored, "a scored neighbour was cut while a plain one was taken"
    # the same graph written in another order prints the same text, up to
    # the handles' spelling
    s2, _ = _star(words, sorted(order), fanout)
    other = s2.recall("hub zebra", k=1, fanout=fanout, limit=1, max_rows=500)
    known = set(s.handles()) | set(s2.handles()) | {e.var for e in (*sh.edges, *other.edges)}
    assert canonical_text(other.text, known) == canonical_text(sh.text, known)


@pytest.mark.req(WALK, "MN-REQ-00")
@settings(VER, max_examples=40)
@given(scenarios(n_queries=3), st.lists(st.integers(64, 3000), min_size=1, max_size=3))
def test_a_token_budget_stops_a_prefix_of_the_same_shape(sc, budgets) -> None:  # type: ignore[no-untyped-def]
    """With max_tokens=N the Shape's exact tokens never pass N, and its rows
    are the first rows of the Shape without a budget (rows up to the ceiling):
    the budget cuts the ranked order, it never reorders it."""
    spec, qs = sc
    b = build(spec)
    for q, kn in qs:
        kw = kn.kwargs() | {"max_rows": memnet.LIMITS.max_rows_max}
        whole = b.session.recall(q.text, **kw)
        for n in budgets:
            sh = b.session.recall(q.text, **(kw | {"max_tokens": n}))
            r = sh.receipt
            assert r.tokens == memnet.count_tokens(sh.text) <= n, (n, sh.text)
            assert r.max_tokens == n
            nodes = [p.var for p in sh.nodes]
            edges = [e.var for e in sh.edges]
            assert nodes == [p.var for p in whole.nodes][: len(nodes)]
            assert edges == [e.var for e in whole.edges][: len(edges)]
            if len(nodes) < len(whole.nodes):
                assert r.periphery, "a node the budget cut is named past the cut"


@pytest.mark.req(WALK, "MN-REQ-06")
@settings(VER, max_examples=40)
@given(scenarios(n_queries=3))
def test_every_node_named_past_the_cut_comes_with_a_q_that_seeds_it(sc) -> None:  # type: ignore[no-untyped-def]
    """A periphery entry is a handle and a q in codebook tokens (a handle is
    never a q); recalling that q seeds the node, or (when more than L nodes
    print exactly the same) one that no observable tells apart from it."""
    spec, qs = sc
    b = build(spec)
    g = b.session.to_networkx()

    def seen(h: str) -> tuple[object, ...]:
        a = g.nodes[h]
        return (a["kind"], tuple(sorted(a["labels"])), graph_data_props(a["props"]), a["nick"])

    for q, kn in qs:
        r = b.session.recall(q.text, **kn.kwargs()).receipt
        assert len(r.periphery_q) == len(r.periphery)
        for handle, hint in zip(r.periphery, r.periphery_q, strict=True):
            assert handle not in hint.split()
            seeds = b.session.recall(hint).receipt
            assert seeds.seed_mode in ("match", "nick"), (hint, seeds)
            assert handle in seeds.seeds or any(seen(x) == seen(handle) for x in seeds.seeds), (
                handle,
                hint,
                seeds.seeds,
            )


@pytest.mark.req(WALK)
def test_the_receipt_line_names_a_q_for_the_first_node_past_the_cut() -> None:
    s = memnet.Session("more")
    s.commit(
        "INSERT (h:MOD {path: 'shop/pricing.py'}), "
        + ", ".join(f"(f{i}:SYM {{name: 'fn_{i}'}}), (h)-[:CONTAINS]->(f{i})" for i in range(20))
    )
    sh = s.recall("MOD pricing", k=1)
    r = sh.receipt
    assert r.clamped == 1 and r.periphery
    head = sh.text.split("\n", 1)[0]
    assert f' more="{r.periphery_q[0]}"' in head
    assert r.periphery_q[0].startswith("SYM name:fn_")
    assert r.periphery[0] in s.recall(r.periphery_q[0]).receipt.seeds


@pytest.mark.req(WALK, "MN-REQ-06")
def test_a_node_q_describes_whole_is_seeded_before_those_it_describes_in_part() -> None:
    """Found by the property above in CI: the hint of a node with nothing but
    its kind and a label (``PKG X2``) also matched six nodes that carry more,
    and the canonical order put the bare node sixth, past L (D172)."""
    s = memnet.Session("whole")
    more = ", ".join(f"(p{i}:PKG:CORE:X2 {{n: {i}}})" for i in range(6))
    ids = s.commit(f"INSERT {more}, (bare:PKG:X2), (other:PKG)").ids
    r = s.recall("PKG X2").receipt
    assert r.matched == 7 and r.seeds[0] == ids["bare"]
    assert len(r.seeds) == 5 and ids["other"] not in r.seeds
    # the others keep the canonical order behind it
    assert list(r.seeds[1:]) == [ids[f"p{i}"] for i in range(4)]
    # a q with a property names it too: the node holding exactly that comes first
    ids2 = s.commit("INSERT (a:PKG:CORE:X2 {n: 0, extra: 'x'}), (b:PKG:X2 {n: 0})").ids
    assert s.recall("PKG X2 n:0").receipt.seeds[0] == ids2["b"]


@pytest.mark.req(WALK, "MN-REQ-06")
def test_a_capital_word_that_names_no_kind_is_a_keyword() -> None:
    s = memnet.Session("caps")
    s.commit(
        "INSERT (a:SYM {name: 'read_gml', doc: 'Read a graph in GML format'}), "
        "(b:SYM {name: 'write_dot', doc: 'Write a graph in DOT format'}), "
        "(c:TSK {title: 'I fix the parser', status: 'open'})"
    )
    sh = s.recall("read a graph from a GML file")
    r = sh.receipt
    assert r.seed_mode == "match" and r.seeds[0] == "na1"
    assert r.note == "GML read as a keyword: no node has that kind"
    assert 'note="GML read as a keyword' in sh.text.split("\n", 1)[0]
    # a kind that exists is still a kind; the MATCH form is taken as written
    assert s.recall("SYM graph").receipt.note == ""
    as_written = s.recall("MATCH (n:GML)").receipt
    assert as_written.seed_mode == "skip" and as_written.note == ""
    # `I` in a question is a word of the sentence, left out with `what` and
    # `did` (D173); the printed q says what was looked for
    mine = s.recall("what did I fix").receipt
    assert mine.seeds == ("na3",) and mine.q == "fix" and mine.note == ""
    # alone, a function word is still looked for; in capitals it is meant
    assert s.recall("what").receipt.q == "what"
    assert s.recall("IT fix").receipt.q == "'IT' fix"


@pytest.mark.req(WALK, "MN-REQ-06")
def test_the_function_words_of_a_question_cannot_seed_a_short_text() -> None:
    """`where has melanie camped` seeded `Where did you find it?` before the
    turns about camping: a short text holding `where` scores high (D173)."""
    s = memnet.Session("quiet")
    ids = s.commit(
        "INSERT (a:TURN {speaker: 'Caroline', text: 'Where did you find it?'}), "
        "(b:TURN {speaker: 'Melanie', text: 'We went camping in the forest last summer, "
        "the kids loved roasting marshmallows by the fire and we hiked a lot too'}), "
        "(c:TURN {speaker: 'Caroline', text: 'Where was that?'}), "
        "(w:WORD {lemma: 'out of use'}), (x:WORD {lemma: 'use'})"
    ).ids
    r = s.recall("where has melanie camped").receipt
    assert r.q == "melanie camped" and r.seeds[0] == ids["b"]
    assert ids["a"] not in r.seeds and ids["c"] not in r.seeds
    # a phrase that is a node's name keeps its every word
    named = s.recall("out of use").receipt
    assert named.q == "out of use" and named.seeds[0] == ids["w"]


@pytest.mark.req(WALK)
def test_l_left_open_takes_further_matches_and_a_set_limit_is_hard() -> None:
    s = memnet.Session("open")
    s.commit(
        "INSERT "
        + ", ".join(f"(t{i}:TSK {{title: 'pricing task {i}', status: 'open'}})" for i in range(12))
    )
    open_l = s.recall("pricing").receipt
    assert 5 < len(open_l.seeds) <= memnet.LIMITS.limit_max
    assert len(s.recall("pricing", limit=5).receipt.seeds) == 5
    assert len(s.recall("pricing", limit=3).receipt.seeds) == 3
    # a filter-only q has no score to rank further seeds by: L stays L
    assert len(s.recall("TSK status:open").receipt.seeds) == memnet.LIMITS.limit
