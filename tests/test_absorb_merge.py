"""Absorb's `merge` policy (issue 34): a node the lead holds - by locator, by
an earlier import of the same member handle, or by a unique name-like value -
is updated in place; absorbing the same slice again changes nothing."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet import AbsorbRejected, export_working_memory_slice, import_slice
from memnet.graph.store import edge_handle

pytestmark = pytest.mark.req("MN-REQ-16")

MEMBER = """
INSERT (a:TSK {title: 'Fix rounding', status: 'open'}),
       (m:MOD {path: 'shop/pricing.py', locator: 'py:shop/pricing.py', tags: ['money']}),
       (d:DEC {title: 'Round half to even'}),
       (far:DOC {title: 'Unrelated page'}),
       (a)-[:TOUCHES {why: 'rounding'}]->(m), (d)-[:GOVERNS]->(m), (a)-[:FOLLOWS]->(d)
"""


def _member() -> tuple[memnet.Session, dict[str, str]]:
    s = memnet.Session("member")
    return s, s.commit(MEMBER).ids


def _state(s: memnet.Session) -> tuple[object, ...]:
    g = s.to_networkx()
    nodes = sorted(
        (h, a["kind"], tuple(sorted(a["labels"])), tuple(sorted(a["props"].items())), a["nick"])
        for h, a in g.nodes(data=True)
    )
    edges = sorted(
        (k, a, b, d["type"], tuple(sorted(d["props"].items())))
        for a, b, k, d in g.edges(keys=True, data=True)
    )
    return s.version, nodes, edges


def test_merge_is_the_default_and_a_second_absorb_changes_nothing() -> None:
    member, ids = _member()
    sl = export_working_memory_slice(member, [ids["a"]])
    lead = memnet.Session("lead")
    first = import_slice(lead, sl)  # merge, the default
    assert (first.version, first.created, first.matched, first.changed) == (1, 6, 0, True)
    before = _state(lead)
    again = import_slice(lead, sl.to_json())  # the same slice, as its file's text
    assert (again.version, again.created, again.updated, again.changed) == (1, 0, 0, False)
    assert again.matched == 6 and again.ids == first.ids
    assert _state(lead) == before and len(lead.history()) == 1  # no new version
    # the CLI's and the MCP's old default, remint, adds a second copy every time
    import_slice(lead, sl, "remint")
    assert lead.stats()["nodes"] == 6


def test_a_changed_property_updates_the_node_and_nothing_is_removed() -> None:
    member, ids = _member()
    lead = memnet.Session("lead")
    import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    got = import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    a = got.ids[ids["a"]]
    lead.commit(f"SET {a}.mine = 'kept'")  # the lead's own property
    member.commit(f"SET {ids['a']}.status = 'done', {ids['a']}.prio = 1 REMOVE {ids['a']}.title")
    r = import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    assert (r.changed, r.created, r.updated) == (True, 0, 1)
    props = dict(lead.store.node_props(lead.store.resolve(a)[1]))
    # changed and new values land; a key the member dropped and the lead's own stay
    assert props == {
        "status": "done",
        "prio": 1,
        "title": "Fix rounding",
        "mine": "kept",
        "origin": f"member/{ids['a']}",
    }
    # an edge property changes the edge in place; no second edge
    touches_m = next(
        e for e in member.store.live_edge_ids() if member.store.edge_type(e) == "TOUCHES"
    )
    member.commit(f"SET {edge_handle(touches_m)}.why = 'even'")
    r = import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    touches = [e for e in lead.store.live_edge_ids() if lead.store.edge_type(e) == "TOUCHES"]
    assert len(touches) == 1 and dict(lead.store.edge_props(touches[0])) == {"why": "even"}
    assert (r.created, r.updated) == (0, 1)


def test_nodes_are_matched_by_locator_then_origin_then_a_unique_name() -> None:
    member, ids = _member()
    lead = memnet.Session("lead")
    held = lead.commit(
        "INSERT (x:MOD {locator: 'py:shop/pricing.py', owner: 'lead'}), "
        "(t:TSK {title: 'Fix rounding', status: 'blocked'}), "
        "(d1:DEC {title: 'Round half to even'}), "
        "(d2:DEC {title: 'Round half to even'})"
    ).ids
    r = import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    assert r.ids[ids["m"]] == held["x"]  # the locator
    assert r.ids[ids["a"]] == held["t"]  # the only TSK of that title
    assert r.ids[ids["d"]] not in (held["d1"], held["d2"])  # two DECs: neither is it
    x = dict(lead.store.node_props(lead.store.resolve(held["x"])[1]))
    assert x == {
        "locator": "py:shop/pricing.py",
        "owner": "lead",
        "path": "shop/pricing.py",
        "tags": ("money",),
    }  # no origin stamped on the lead's own node
    t = dict(lead.store.node_props(lead.store.resolve(held["t"])[1]))
    assert t["status"] == "open"  # the slice's value wins
    new_dec = dict(lead.store.node_props(lead.store.resolve(r.ids[ids["d"]])[1]))
    assert new_dec["origin"] == f"member/{ids['d']}"
    # and the next absorb finds the new DEC by its origin: still nothing twice
    again = import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    assert not again.changed and again.ids == r.ids


def test_a_locator_held_as_another_kind_is_refused_whole() -> None:
    member, ids = _member()
    lead = memnet.Session("lead")
    lead.commit("INSERT (x:DOC {locator: 'py:shop/pricing.py'})")
    before = _state(lead)
    with pytest.raises(AbsorbRejected, match="never changes a kind"):
        import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    assert _state(lead) == before


def test_parallel_edges_pair_up_and_labels_and_nicks_join() -> None:
    member = memnet.Session("member")
    ids = member.commit(
        "INSERT (a:TSK #fix {title: 'a'})-[:TOUCHES {n: 1}]->(b:MOD {path: 'b'}), "
        "(a)-[:TOUCHES {n: 2}]->(b), (a)-[:TOUCHES]->(b), "
        "(z:DOC {title: 'z'})"
    ).ids
    lead = memnet.Session("lead")
    lead.commit("INSERT (b:MOD:HOT {path: 'b'}), (a:TSK:URGENT {title: 'a'})")
    r = import_slice(lead, export_working_memory_slice(member, [ids["a"]]))
    assert r.created == 3 and r.matched == 2  # three edges new, both nodes held
    a = lead.store.resolve(r.ids[ids["a"]])[1]
    assert lead.store.node_nick(a) == "fix"  # the nick was free in the lead
    assert lead.store.extra_labels(a) == ("URGENT",)
    for _ in range(3):
        assert not import_slice(lead, export_working_memory_slice(member, [ids["a"]])).changed
    assert lead.stats()["edges"] == 3


def test_the_issue_trap_nineteen_rows_absorbed_three_times() -> None:
    # issue 34: each re-absorb under the default policy added the 19 rows again
    member = memnet.Session("member")
    parts = ["(t:TSK {title: 'ship the pricing page', status: 'open'})"]
    for i in range(9):
        parts.append(
            f"(m{i}:MOD {{path: 'shop/m{i}.py', locator: 'py:shop/m{i}.py'}}), "
            f"(t)-[:TOUCHES]->(m{i})"
        )
    ids = member.commit("INSERT " + ", ".join(parts) + ", (island:DOC {title: 'x'})").ids
    sl = export_working_memory_slice(member, [ids["t"]], budget=19, fanout=16)
    assert len(sl.nodes) + len(sl.edges) == 19
    lead = memnet.Session("lead")
    rows = []
    for _ in range(3):
        import_slice(lead, sl)
        rows.append(lead.stats()["rows"])
    assert rows == [19, 19, 19] and lead.version == 1


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(2, 14))
    kinds = ["TSK", "MOD"]
    nodes = []
    for i in range(n):
        props = [f"p: {draw(st.integers(0, 3))}"]
        how = draw(st.sampled_from(["locator", "title", "none"]))
        if how == "locator":
            props.append(f"locator: 'loc:{draw(st.integers(0, 2))}'")
        elif how == "title":
            props.append(f"title: 'node {draw(st.integers(0, 2))}'")
        nodes.append(f"(v{i}:{draw(st.sampled_from(kinds))} {{{', '.join(props)}}})")
    edges = [
        f"(v{a})-[:{t} {{w: {w}}}]->(v{b})"
        for a, b, t, w in draw(
            st.lists(
                st.tuples(
                    st.integers(0, n - 1),
                    st.integers(0, n - 1),
                    st.sampled_from(["TOUCHES", "IMPORTS"]),
                    st.integers(0, 1),
                ),
                max_size=3 * n,
            )
        )
    ]
    return "INSERT " + ", ".join(nodes + edges), draw(st.integers(0, n - 1))


@settings(max_examples=120, deadline=None)
@given(graphs(), graphs(), st.integers(0, 10**6))
def test_any_merge_lands_the_slice_and_a_second_one_changes_nothing(g, h, seed) -> None:  # type: ignore[no-untyped-def]
    """On any member and lead (locators and titles that may collide, kinds
    that may not agree): the merge is refused whole, or every slice node's
    properties hold on the lead node it maps to, every slice edge has an edge
    of its type between the mapped ends, and the same slice again changes
    nothing."""
    text, anchor = g
    member = memnet.Session("member")
    ids = member.commit(text).ids
    member.commit("INSERT (island:DOC {title: 'island'})")
    sl = export_working_memory_slice(member, [ids[f"v{anchor}"]])
    lead = memnet.Session("lead")
    lead.commit(h[0])
    before = _state(lead)
    try:
        r = import_slice(lead, sl)
    except AbsorbRejected as e:
        assert "never changes a kind" in e.message and _state(lead) == before
        return
    st_ = lead.store
    for n in sl.nodes:
        got = dict(st_.node_props(st_.resolve(r.ids[n.handle])[1]))
        assert st_.node_kind(st_.resolve(r.ids[n.handle])[1]) == n.kind
        for k, v in n.props.items():
            if k != "origin":
                assert got[k] == (tuple(v) if isinstance(v, list) else v), (k, got, n)
    for e in sl.edges:
        eid = st_.resolve(r.ids[e.handle])[1]
        assert st_.edge_type(eid) == e.type
        a, b = st_.edge_ends(eid)
        assert (a, b) == (st_.resolve(r.ids[e.src])[1], st_.resolve(r.ids[e.dst])[1])
        assert dict(st_.edge_props(eid)) == e.props
    after = _state(lead)
    order = list(sl.nodes)
    random.Random(seed).shuffle(order)  # the order of a slice's nodes does not matter
    again = import_slice(lead, sl.model_copy(update={"nodes": order}))
    assert not again.changed and _state(lead) == after
