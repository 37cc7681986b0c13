"""A query node's hits in a Shape: listed best rank first, in both views, with
their rank (issue 34). A retriever of one's own, so no search library is needed."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet.gql.parse import parse_delta
from memnet.host import Hit, snap
from memnet.session import Session

pytestmark = pytest.mark.req("MN-REQ-22")

# ranks that agree neither with the order of the nodes' keys (locators) nor
# with how well the titles answer the q's words
HITS = [
    Hit("doc:m/pear", "pear rounding note", 1.0),
    Hit("doc:b/apple", "price rounding rounding rounding price", 0.9),
    Hit("doc:z/plum", "rounding", 0.8),
    Hit("doc:a/fig", "price", 0.7),
    Hit("doc:k/kiwi", "unrelated words here", 0.6),
    Hit("doc:c/lime", "price rounding half even price rounding", 0.5),
]


class Fixed:
    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits

    def search(self, q: str, top: int = 10) -> list[Hit]:
        return self.hits[:top]


def hit_ranks(text: str) -> list[int]:
    """The ranks of the HIT edges of a Shape, in the order it lists them."""
    edges = parse_delta(text.split("\n", 1)[1]).statements[0].edges
    return [dict(e.props).get("rank", -1) for e in edges if e.type == "HIT"]


def hit_order(s: Session, text: str, rank_of: dict[str, int]) -> list[int]:
    """The ranks of the hit nodes in the order the Shape lists them (by locator)."""
    ins = parse_delta(text.split("\n", 1)[1]).statements[0]
    got = []
    for n in ins.nodes:
        nid = s.store.resolve(n.var)
        assert nid is not None
        locator = s.store.node_props(nid[1]).get("locator")
        if locator in rank_of:
            got.append(rank_of[locator])
    return got


@pytest.mark.parametrize("q", ["QRY price rounding", "QRY title:'price rounding'"])
@pytest.mark.parametrize("view", ["interior", "shell"])
def test_hits_are_listed_best_rank_first_with_their_rank(q: str, view: str) -> None:
    s = Session("work")
    s.commit(
        "INSERT (t:TSK {title: 'fix price rounding', status: 'open'}), "
        "(d:DOC {locator: 'doc:z/plum', title: 'rounding'}), (t)-[:TOUCHES]->(d)"
    )
    snap(s, "price rounding", hook=Fixed(HITS), top=6)
    rank_of = {h.locator: i for i, h in enumerate(HITS, 1)}
    text = s.recall(q, view=view).text
    assert hit_ranks(text) == [1, 2, 3, 4, 5, 6], text  # rank shown, rank order
    assert hit_order(s, text, rank_of) == [1, 2, 3, 4, 5, 6], text
    # the clamp keeps the best ranks
    few = s.recall(q, view=view, fanout=3).text
    assert hit_ranks(few) == [1, 2, 3], few


def test_a_new_snap_reorders_and_a_hydrated_session_keeps_the_order(tmp_path) -> None:
    cab = memnet.Cabinet.open(tmp_path / "cab")
    s = cab.create("work")
    snap(s, "price rounding", hook=Fixed(HITS), top=6)
    cab.flush(s)
    again = cab.open("work")  # ranks read back from the cabinet
    rank_of = {h.locator: i for i, h in enumerate(HITS, 1)}
    assert hit_order(again, again.recall("QRY price").text, rank_of) == [1, 2, 3, 4, 5, 6]
    snap(again, "price rounding", hook=Fixed(HITS[::-1]), top=6)  # ranks set again
    rank_of = {h.locator: i for i, h in enumerate(HITS[::-1], 1)}
    text = again.recall("QRY price", view="shell").text
    assert hit_order(again, text, rank_of) == [1, 2, 3, 4, 5, 6], text
    assert hit_ranks(text) == [1, 2, 3, 4, 5, 6]
    assert re.search(r"-\[e\w+:HIT \{rank: 1\}\]->", text)


def test_ranks_order_any_edge_and_nothing_else_moves() -> None:
    # the rule is the walk's, for any edge type with an integer rank; edges
    # without one keep the stored order; ranked edges added to a node the
    # walk has already been through count at once
    s = Session("g")
    s.commit(
        "INSERT (l:LST {title: 'reading list'})-[:SEE]->(x:BOOK {title: 'book z'}), "
        "(l)-[:SEE]->(y:BOOK {title: 'book y'})"
    )
    assert s.recall("LST reading").receipt.rows == 5
    s.commit(
        "INSERT "
        + ", ".join(f"(b{i}:BOOK {{title: 'book {c}'}})" for i, c in enumerate("dbca"))
        + ", "
        + ", ".join(f"(na1)-[:HAS {{rank: {r}}}]->(b{i})" for i, r in enumerate((2, 4, 1, 3)))
    )
    text = s.recall("LST reading", view="shell").text
    lines = [ln for ln in text.splitlines() if "HAS" in ln or "SEE" in ln]
    assert [re.search(r"book (\w)", ln).group(1) for ln in lines] == [
        "c",
        "d",
        "a",
        "b",
        "y",
        "z",
    ], text


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(st.booleans(), min_size=2, max_size=40),
    fanout=st.integers(1, 4),
    others=st.integers(0, 4),
    seed=st.integers(0, 10**6),
    plain_q=st.booleans(),
)
def test_any_ranked_star_is_taken_best_rank_first(
    words,
    fanout,
    others,
    seed,  # type: ignore[no-untyped-def]
    plain_q,
) -> None:
    """A node with ranked out-edges to leaves (some of which hold q's word,
    some not), next to unranked ones: the ranked leaves the clamp keeps are
    the best ranks, and they are listed in rank order."""
    rng = random.Random(seed)
    ranks = list(range(1, len(words) + 1))
    rng.shuffle(ranks)
    s = Session("star")
    parts = ["(h:QRY {title: 'hub'})"]
    for i, (w, r) in enumerate(zip(words, ranks, strict=True)):
        parts.append(f"(l{i}:DOC {{title: '{'zebra' if w else 'plain'} leaf {rng.random()}'}})")
        parts.append(f"(h)-[:HIT {{rank: {r}}}]->(l{i})")
    for j in range(others):
        parts.append(f"(o{j}:DOC {{title: 'zebra other {j}'}}), (h)-[:HAS]->(o{j})")
    s.commit("INSERT " + ", ".join(parts))
    q = "QRY title:hub" if plain_q else "QRY hub zebra"
    sh = s.recall(q, k=1, fanout=fanout, limit=1, max_rows=500)
    got = hit_ranks(sh.text)
    assert got == sorted(got), sh.text  # rank order
    assert got == list(range(1, len(got) + 1)), sh.text  # the best ranks
    assert len(got) + sum(1 for e in sh.edges if e.type == "HAS") == min(
        fanout, len(words) + others
    )
