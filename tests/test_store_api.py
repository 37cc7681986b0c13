"""The store's named API: what code outside graph/ reads and writes through.

The records a storage keeps (``stored_node``, ``stored_edges``) load back
into an equal store; the read-only view sees the columns as they grow; the
named reads agree with the element states history records."""

from __future__ import annotations

from memnet import Bulk, Session
from memnet.graph.index import Index, le_bytes, shard_of
from memnet.graph.store import Store, node_handle


def _session() -> Session:
    s = Session("store-api")
    b = Bulk()
    t = b.node(
        "TSK", {"title": "write the api", "status": "open"}, labels=("URGENT",), nick="api", var="t"
    )
    law = b.node("LAW", {"text": "no raw columns"})
    m = b.node("MOD", {"name": "store", "path": "memnet/graph/store.py"})
    b.edge(t, "FOLLOWS", law, {"why": "house rules"}, var="f")
    b.edge(t, "TOUCHES", m)
    b.edge(m, "TOUCHES", m)
    r = s.commit_bulk(b)
    s.commit(f"DELETE {r.ids['f']}\nSET {r.ids['t']}.status = 'review'")
    s.commit(f"INSERT (d:DEC {{text: 'gone soon'}})-[:ABOUT]->({r.ids['t']})")
    s.commit("INSERT (x:DOC {name: 'recycled'})")
    s.commit(f"DELETE {node_handle(s.store.next_node - 1)}")
    return s


def test_stored_records_load_back_into_an_equal_store() -> None:
    st = _session().store
    copy = Store()
    # one run of columns (kinds, labels, props, nicks, recycled, keys, adjs, ltoks)
    nodes = [tuple(zip(*(st.stored_node(n) for n in range(1, st.next_node)), strict=True))]
    # the postings as a cabinet hands them over: one map per shard
    by_shard: dict[int, dict[bytes, bytes]] = {}
    for t, p in st.index.raw_postings():
        by_shard.setdefault(shard_of(t), {})[t] = p if isinstance(p, bytes) else le_bytes(p)
    postings = sorted(by_shard.items())
    copy.load(
        nodes,
        *st.stored_edges(1, st.next_edge),
        postings,
        kinds=st.live_kinds(),
        live_bytes=st.live_bytes,
        decode_props=lambda raw: None,
        damaged=lambda msg: AssertionError(msg),
    )
    assert [copy.node_state(n) for n in range(1, st.next_node)] == [
        st.node_state(n) for n in range(1, st.next_node)
    ]
    assert [copy.edge_state(e) for e in range(1, st.next_edge)] == [
        st.edge_state(e) for e in range(1, st.next_edge)
    ]
    assert copy.view().hidden_edges == st.view().hidden_edges
    assert (copy.live_nodes, copy.live_edges) == (st.live_nodes, st.live_edges)
    for n in range(1, st.next_node):
        assert copy.node_terms(n) == st.node_terms(n)
        assert list(copy.live_entries(n)) == list(st.live_entries(n))
    for t, p in st.index.postings():
        assert copy.index.has(t) and list(copy.index.posting(t) or ()) == list(p)
    assert copy.index.term_count() == st.index.term_count() > 0


def test_named_reads_agree_with_the_recorded_states() -> None:
    st = _session().store
    for n in range(1, st.next_node):
        kind, labels, props, nick, recycled = st.node_state(n)
        assert (st.node_kind(n), st.extra_labels(n), st.node_nick(n), st.node_recycled(n)) == (
            kind,
            labels,
            nick,
            recycled,
        )
        assert dict(st.node_props(n)) == (props or {})
        assert st.node_terms(n) == (set() if recycled else Index.terms(kind, labels, props))
        if nick is not None:
            assert st.nick_owner(nick) == (None if recycled else n)
    for e in range(1, st.next_edge):
        etype, src, dst, props, recycled = st.edge_state(e)
        assert (st.edge_type(e), st.edge_ends(e), st.edge_recycled(e)) == (
            etype,
            (src, dst),
            recycled,
        )
        assert dict(st.edge_props(e)) == (props or {})
    live = [n for n in range(1, st.next_node) if not st.node_recycled(n)]
    counts: dict[str, int] = {}
    for n in live:
        counts[st.node_kind(n)] = counts.get(st.node_kind(n), 0) + 1
    assert st.live_kinds() == dict(sorted(counts.items()))
    assert "DOC" not in st.live_kinds()  # its one node is recycled
    assert st.adjacency_top() == max(
        max(st.view().adjacency[n], default=0) for n in range(1, st.next_node)
    )


def test_the_view_follows_the_store_and_line_tokens_are_written_through_methods() -> None:
    s = _session()
    st = s.store
    view = st.view()
    before = st.next_node
    s.commit("INSERT (n:NOTE {text: 'after the view was taken'})")
    assert len(view.kinds) == before + 1 and view.kinds[before] == "NOTE"
    assert view.keys[before] == st.node_key(before)
    st.set_line_tokens(1, 7)
    assert view.line_tokens[1] == 7
    st.forget_line_tokens()
    assert not any(view.line_tokens)
    assert st.view() is view


def test_a_coded_column_gives_back_what_was_put_and_widens_past_two_bytes() -> None:
    from memnet.graph.columns import CodedColumn

    col = CodedColumn("")
    col.append("CONTAINS")
    col.extend(["DEPENDS", "CONTAINS", "DEPENDS"])
    assert list(col) == ["", "CONTAINS", "DEPENDS", "CONTAINS", "DEPENDS"]
    assert col.take(1, 3) == ["CONTAINS", "DEPENDS"]
    assert col.code_of("CONTAINS") == col.codes[1] and col.code_of("NONE") == -1
    assert col.codes.itemsize == 2
    many = [f"T{i}" for i in range(70_000)]
    col.extend(many)
    col[2] = "T69999"
    assert col.codes.typecode == "I" and len(col) == 5 + 70_000
    assert col[2] == "T69999" and col[4] == "DEPENDS" and col[-1] == "T69999"
    assert col.take(5, 8) == ["T0", "T1", "T2"]
    # equal values share one object: a label tuple read back is the one kept
    labels = CodedColumn(())
    labels.extend([("A", "B"), ("A", "B")])
    assert labels[1] is labels[2] and labels[0] == ()


def test_a_key_change_keeps_every_adjacency_list_in_order_across_parallel_edges() -> None:
    """A node's key is part of the order of its neighbours' entries. When two
    nodes are joined by several edges, all of the neighbour's entries that
    point at the changed node move: each list must end up in observable
    order, as a fresh sort gives it (a Shape prints edges in this order, and a
    copy rebuilt from the log sorts afresh)."""
    import random

    import memnet

    rng = random.Random(3)
    s = memnet.Session("order")
    s.commit("INSERT (a:PKG {title: 'm'}), (b:PKG {title: 'n'}), (c:LAW {text: 'o'})")
    ids = [s.recall(q).receipt.seeds[0] for q in ("PKG m", "PKG n", "LAW o")]
    edges = []
    for _ in range(40):
        x, y = rng.choice(ids), rng.choice(ids)
        t = rng.choice(("IMPORTS", "TOUCHES"))
        p = rng.choice(("", " {w: 1}", " {w: 'z'}"))
        edges.append(f"({x})-[:{t}{p}]->({y})")
    s.commit("INSERT " + ", ".join(edges))
    st = s.store
    for step in range(30):
        h = rng.choice(ids)
        s.commit(f"SET {h}.title = '{rng.choice('abmnoyz')}{step}'")
        for n in range(1, st.next_node):
            a = list(st.view().adjacency[n])
            assert a == sorted(a, key=st.entry_key), (step, n)
