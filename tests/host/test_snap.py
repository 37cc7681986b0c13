"""Host Snap into a session: hits become nodes keyed by locator, linked to a
node for the query, in one Commit, idempotently; Recall then shows them."""

from __future__ import annotations

import pytest

from memnet.commit import Caps
from memnet.errors import MemNetError
from memnet.host import Hit, RagHostHook, index_tree, open_index, snap
from memnet.ingest import ingest_path
from memnet.session import Session

from .conftest import needs_tantivy

needs_tantivy()

Q = "round a price half to even"


@pytest.fixture
def ix(tree, tmp_path):
    index_tree(tree, tmp_path / "ix")
    return open_index(tmp_path / "ix")


def live(s: Session, kind: str | None = None) -> list[int]:
    return [n for n in s.store.live_node_ids() if kind is None or s.store.node_kind(n) == kind]


def by_locator(s: Session, loc: str) -> list[int]:
    return [n for n in live(s) if s.store.node_props(n).get("locator") == loc]


@pytest.mark.req("MN-REQ-22", "MN-REQ-03")
def test_a_snap_commits_the_hits_once(ix):
    s = Session("work")
    res = snap(s, Q, hook=ix, top=3)
    assert (res.version, res.changed, s.version) == (1, True, 1)  # one Commit
    assert res.query.startswith("n") and len(res.hits) == len(res.handles) == 3
    assert all(res.created)
    (q,) = live(s, "QRY")
    assert dict(s.store.node_props(q)) == {"title": Q}
    for rank, (h, handle) in enumerate(zip(res.hits, res.handles, strict=True), 1):
        (nid,) = by_locator(s, h.locator)
        assert s.store.node_kind(nid) == h.kind
        assert dict(s.store.node_props(nid)) == {"locator": h.locator, "title": h.title}
        assert s.store.resolve(handle) == ("n", nid)
        edges = [(e, o) for e, d, o in s.store.live_entries(q) if o == nid]
        assert len(edges) == 1 and s.store.edge_type(edges[0][0]) == "HIT"
        assert dict(s.store.edge_props(edges[0][0])) == {"rank": rank}
    assert res.hits[0].locator == "py:lib/shop/pricing.py::round_price"
    # the same hits again: nothing committed
    again = snap(s, "  round a price   half to even ", hook=ix, top=3)
    assert (again.changed, again.version, s.version) == (False, 1, 1)
    assert again.handles == res.handles and not any(again.created) and again.query == res.query
    # Recall shows the query and its hits as locators with short titles
    text = s.recall("QRY round price").text
    assert "py:lib/shop/pricing.py::round_price" in text and "HIT" in text
    assert "Every amount shown to a customer" not in text  # never the corpus itself
    d = res.to_dict()
    assert d["created"] == 3 and d["hits"][0]["handle"] == res.handles[0]
    assert set(d["hits"][0]) >= {"locator", "title", "score", "kind", "handle", "created"}


@pytest.mark.req("MN-REQ-22", "MN-REQ-18")
def test_a_snap_reuses_what_ingest_made_and_ingest_adopts_what_a_snap_made(tree, ix):
    s = Session("code")
    ingest_path(s, tree)
    v = s.version
    nodes = len(live(s))
    res = snap(s, Q, hook=ix, top=3)
    assert res.version == v + 1 and not any(res.created)
    assert len(live(s)) == nodes + 1  # only the query node is new
    assert all(len(by_locator(s, h.locator)) == 1 for h in res.hits)

    fresh = Session("fresh")
    res = snap(fresh, Q, hook=ix, top=3)
    before = {h.locator: by_locator(fresh, h.locator)[0] for h in res.hits}
    ingest_path(fresh, tree)  # ingest finds the snapped nodes by their locators
    for loc, nid in before.items():
        assert by_locator(fresh, loc) == [nid]
        assert "title" not in fresh.store.node_props(nid) or fresh.store.node_kind(nid) != "SYM"
    (q,) = live(fresh, "QRY")
    st = fresh.store
    assert sum(1 for e, d, o in st.live_entries(q) if st.edge_type(e) == "HIT") == 3


@pytest.mark.req("MN-REQ-22")
def test_the_query_node_follows_the_latest_hits(ix):
    s = Session("work")
    first = snap(s, Q, hook=ix, top=4)
    fewer = snap(s, Q, hook=ix, top=2)
    assert fewer.changed and fewer.unlinked == 2 and fewer.version == 2
    (q,) = live(s, "QRY")
    hits = [o for e, d, o in s.store.live_entries(q) if s.store.edge_type(e) == "HIT"]
    assert sorted(hits) == sorted(s.store.resolve(h)[1] for h in first.handles[:2])
    assert all(by_locator(s, h.locator) for h in first.hits)  # the nodes stay
    back = snap(s, Q, hook=ix, top=4)
    assert back.changed and not any(back.created) and back.handles == first.handles
    other = snap(s, "warehouse parcels", hook=ix, top=2)
    assert other.query != first.query and len(live(s, "QRY")) == 2


class Listed:
    """A retriever of one's own: anything with search(q, top)."""

    def __init__(self, hits):
        self.hits = hits

    def search(self, q: str, top: int = 10):
        return self.hits[:top]


@pytest.mark.req("MN-REQ-22", "MN-REQ-15")
def test_a_retriever_of_ones_own_and_bad_hits(tmp_path):
    mine = Listed(
        [
            Hit("https://example.org/spec#s3", "Spec, section 3", 2.5),
            Hit("py:lib/a.py::f", "f: does things", 1.0, kind="SYM"),
            Hit("https://example.org/spec#s3", "the same again", 0.5),
        ]
    )
    assert isinstance(mine, RagHostHook)
    s = Session("work")
    res = snap(s, "spec section", hook=mine)
    assert [h.locator for h in res.hits] == ["https://example.org/spec#s3", "py:lib/a.py::f"]
    assert [s.store.node_kind(s.store.resolve(h)[1]) for h in res.handles] == ["DOC", "SYM"]
    long = Hit("x:1", "word " * 100, 1.0)
    snap(s, "long title", hook=Listed([long]))
    (nid,) = by_locator(s, "x:1")
    title = s.store.node_props(nid)["title"]
    assert len(title) <= 120 and title.endswith("…")

    version = s.version
    bad = [
        Hit("", "empty", 1.0),
        Hit(" x", "blanks", 1.0),
        Hit("x", "t", float("nan")),
        Hit("x", "t", 1.0, kind="doc"),
        Hit("x", None, 1.0),
        Hit("x" * 2000, "t", 1.0),
        ("x", "t", 1.0),
        Hit("x\ud800", "t", 1.0),
        Hit("x", "t\udcff", 1.0),
        Hit("x", "t", 10**400),
    ]
    for h in bad:
        with pytest.raises(MemNetError) as e:
            snap(s, "q", hook=Listed([Hit("ok:1", "fine", 1.0), h]))
        assert e.value.code == "bad_hit", h
    with pytest.raises(MemNetError) as e:
        snap(s, "q", hook=type("Odd", (), {"search": lambda self, q, top: "nope"})())
    assert e.value.code == "bad_hit"
    for q in ("", "  ", "!!", "round \ud800"):
        with pytest.raises(MemNetError) as e:
            snap(s, q, hook=mine)
        assert e.value.code == "bad_query"
    with pytest.raises(MemNetError) as e:
        snap(s, "spec", hook=mine, top=0)
    assert e.value.code == "bad_query"
    with pytest.raises(MemNetError) as e:
        snap(s, "spec", index=tmp_path / "none")
    assert e.value.code == "index_not_found"
    assert s.version == version and not by_locator(s, "ok:1")  # nothing written


@pytest.mark.req("MN-REQ-22", "MN-REQ-09")
def test_a_snap_past_the_rate_cap_is_refused_whole(ix):
    s = Session("small", caps=Caps(rows=4))
    with pytest.raises(MemNetError) as e:
        snap(s, Q, hook=ix, top=5)
    assert e.value.code == "cap_exceeded"
    assert s.version == 0 and live(s) == []
