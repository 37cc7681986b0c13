"""Path-B Absorb: bounded slices, the ImportGuard, id policies, separation from Commit."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet import AbsorbRejected, export_working_memory_slice, import_slice
from memnet.graph.store import parse_handle

# every test here verifies Absorb (bounded slices, provenance, ImportGuard, id policies)
pytestmark = pytest.mark.req("MN-REQ-16")

MEMBER = """
INSERT (a:TSK {title: 'Fix rounding', status: 'open', name: 'anchor'}),
       (m:MOD {path: 'shop/pricing.py', tags: ['money', 'core'], w: 1.0, n: 1, ok: true}),
       (d:DEC {title: 'Half to even'}),
       (far:DOC {title: 'Unrelated page'}),
       (a)-[:TOUCHES {why: 'rounding'}]->(m), (d)-[:GOVERNS]->(m)
"""


def _member() -> tuple[memnet.Session, dict[str, str]]:
    s = memnet.Session("member")
    return s, s.commit(MEMBER).ids


def _snapshot(s: memnet.Session) -> tuple[object, ...]:
    return s.version, s.stats(), s.recall("").text, s.recall("TSK").text


@pytest.mark.req("MN-REQ-03")
@pytest.mark.parametrize("policy", ["keep", "reject", "remint"])
def test_each_policy_on_a_fresh_lead(policy: str) -> None:
    member, ids = _member()
    sl = export_working_memory_slice(member, [ids["a"]])
    assert {n.handle for n in sl.nodes} == {ids["a"], ids["m"], ids["d"]}  # not the far DOC
    lead = memnet.Session("lead")
    r = import_slice(lead, sl, policy)
    assert r.version == 1 and lead.version == 1 and r.created == 5
    assert lead.stats()["nodes"] == 3 and lead.stats()["edges"] == 2
    got = lead.recall("TSK name:anchor")
    assert "Fix rounding" in got.text
    if policy == "keep":
        assert all(k == v for k, v in r.ids.items())
    else:
        origins = {
            n.props[0][1]
            for n in lead.recall("TSK name:anchor").nodes
            if n.props and n.props[0][0] == "name"
        } or None
        assert "origin: 'member/" + ids["a"] + "'" in got.text, origins
    # typed values survive the JSON trip
    assert "tags: ['money', 'core']" in got.text and "w: 1.0" in got.text and "ok: true" in got.text


@pytest.mark.req("MN-REQ-03", "MN-REQ-10")
def test_colliding_slices_are_refused_whole() -> None:
    member, ids = _member()
    sl = export_working_memory_slice(member, [ids["a"]])
    # keep: the lead already minted those handles
    lead = memnet.Session("lead")
    lead.commit(MEMBER)
    before = _snapshot(lead)
    with pytest.raises(AbsorbRejected, match="keep"):
        import_slice(lead, sl, "keep")
    assert _snapshot(lead) == before
    # reject: the same member nodes imported before (by origin), or the same locator
    lead2 = memnet.Session("lead2")
    import_slice(lead2, sl, "remint")
    before = _snapshot(lead2)
    with pytest.raises(AbsorbRejected, match="reject"):
        import_slice(lead2, sl, "reject")
    assert _snapshot(lead2) == before
    lead3 = memnet.Session("lead3")
    lead3.commit("INSERT (x:MOD {locator: 'src/a.py'})")
    m2 = memnet.Session("m2")
    h = m2.commit(
        "INSERT (x:MOD {locator: 'src/a.py'})-[:IMPORTS]->(y:MOD {path: 'b'}), (z:DOC {title: 'z'})"
    ).ids["x"]
    with pytest.raises(AbsorbRejected, match="locator"):
        import_slice(lead3, export_working_memory_slice(m2, [h]), "reject")
    # remint never collides: a second import adds a second copy
    r = import_slice(lead2, sl, "remint")
    assert lead2.stats()["nodes"] == 6 and r.version == 2


@pytest.mark.req("MN-REQ-01")
def test_slices_are_bounded_and_never_whole() -> None:
    member, ids = _member()
    with pytest.raises(AbsorbRejected, match="anchor"):
        export_working_memory_slice(member, [])
    with pytest.raises(AbsorbRejected, match="not a live node"):
        export_working_memory_slice(member, ["nzz9"])
    small = memnet.Session("small")
    h = small.commit("INSERT (a:TSK {title: 'a'})-[:TOUCHES]->(b:MOD {path: 'b'})").ids["a"]
    with pytest.raises(AbsorbRejected, match="whole"):
        export_working_memory_slice(small, [h])
    big = memnet.Session("big", caps=memnet.Caps(rows=10**6, bytes=10**8))
    big.commit("INSERT (h:MOD {path: 'hub'})")
    for b in range(3):
        big.commit(
            "INSERT "
            + ", ".join(
                f"(t{i}:TSK {{title: 'leaf {b} {i}'}})-[:TOUCHES]->(na1)" for i in range(300)
            )
        )
    sl = export_working_memory_slice(big, ["na1"], fanout=64)
    assert len(sl.nodes) + len(sl.edges) <= 50  # M x |anchors| with one anchor
    sl2 = export_working_memory_slice(big, ["na1", "na2"], fanout=64)
    assert 50 < len(sl2.nodes) + len(sl2.edges) <= 100


@pytest.mark.req("MN-REQ-03", "MN-REQ-08")
@pytest.mark.parametrize(
    "tamper",
    [
        "dangling",
        "oversized",
        "bad_type",
        "nested",
        "no_prov",
        "bad_anchor",
        "recycled",
        "nan",
        "bad_handle",
        "extra",
        "not_json",
        "bad_label",
    ],
)
def test_tampered_slice_files_are_refused_and_the_lead_is_unchanged(tamper: str) -> None:
    member, ids = _member()
    data = json.loads(export_working_memory_slice(member, [ids["a"]]).to_json())
    if tamper == "dangling":
        data["edges"][0]["dst"] = "nzz9"
    elif tamper == "oversized":
        data["nodes"][0]["props"]["blob"] = "x" * (5 * 1024 * 1024)
    elif tamper == "bad_type":
        data["nodes"][0]["props"]["n"] = {"x": 1}
    elif tamper == "nested":
        data["nodes"][0]["props"]["n"] = [[1]]
    elif tamper == "no_prov":
        del data["provenance"]
    elif tamper == "bad_anchor":
        data["provenance"]["anchors"] = ["nzz9"]
    elif tamper == "recycled":
        data["nodes"][1]["recycled"] = True
    elif tamper == "nan":
        data["nodes"][0]["props"]["n"] = float("nan")
    elif tamper == "bad_handle":
        data["nodes"][0]["handle"] = "task1"
    elif tamper == "extra":
        data["nodes"][0]["secret"] = 1
    elif tamper == "bad_label":
        data["nodes"][0]["kind"] = "tsk"
    text = "{not json" if tamper == "not_json" else json.dumps(data)
    lead = memnet.Session("lead")
    lead.commit("INSERT (own:TSK {title: 'lead own'})")
    before = _snapshot(lead)
    with pytest.raises(memnet.MemNetError) as ei:
        import_slice(lead, text, "remint")
    if tamper == "oversized":  # a size cap, as for a Δ (issue 36)
        assert ei.value.code == "input_too_large"
    else:
        assert ei.value.code in ("absorb_rejected", "commit_rejected")
    assert _snapshot(lead) == before


@pytest.mark.req("MN-REQ-04")
def test_commit_refuses_a_slice_and_absorb_refuses_a_delta() -> None:
    member, ids = _member()
    sl = export_working_memory_slice(member, [ids["a"]])
    lead = memnet.Session("lead")
    for bad in (sl, sl.to_json(), sl.model_dump()):
        with pytest.raises(memnet.MemNetError) as ei:
            lead.commit(bad)  # type: ignore[arg-type]
        assert ei.value.code == "not_a_delta"
    for delta in ("INSERT (t:TSK {title: 'x'})", memnet.parse_delta("SET na1.x = 1")):
        with pytest.raises(AbsorbRejected, match="goldfish"):
            import_slice(lead, delta, "remint")
    assert lead.version == 0


def _canon(text: str) -> str:
    """The Shape body with handles renamed by first appearance and origins dropped."""
    body = text.split("\n", 1)[1] if "\n" in text else ""
    body = re.sub(r"origin: '[^']*', ", "", body)
    body = re.sub(r", origin: '[^']*'", "", body)
    body = re.sub(r"\{origin: '[^']*'\}", "", body).replace(" )", ")")
    names: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        if parse_handle(m.group(0)) is None:
            return m.group(0)
        return names.setdefault(m.group(0), f"{m.group(0)[0]}#{len(names)}")

    return re.sub(r"\b[ne][a-i][0-9a-z]+\b", sub, body)


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(3, 25))
    kinds = ["TSK", "MOD", "DEC"]
    nodes = [
        f"(v{i}:{draw(st.sampled_from(kinds))} {{name: 'node {i}', p: {draw(st.integers(0, 3))}}})"
        for i in range(n)
    ]
    edges = [
        f"(v{a})-[:{t}]->(v{b})"
        for a, b, t in draw(
            st.lists(
                st.tuples(
                    st.integers(0, n - 1),
                    st.integers(0, n - 1),
                    st.sampled_from(["TOUCHES", "IMPORTS"]),
                ),
                max_size=3 * n,
            )
        )
    ]
    anchors = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
    return "INSERT " + ", ".join(nodes + edges), anchors


@pytest.mark.req("MN-REQ-02", "MN-REQ-07")
@settings(max_examples=40, deadline=None)
@given(graphs(), st.integers(1, 2))
def test_remint_then_recall_gives_the_members_subgraph(g, hops) -> None:  # type: ignore[no-untyped-def]
    text, anchors = g
    member = memnet.Session("member")
    ids = member.commit(text).ids
    # an island keeps the slice from being the whole session
    member.commit("INSERT (island:DOC {name: 'island'})")
    handles = [ids[f"v{i}"] for i in anchors]
    budget = 50 * len(handles)
    sl = export_working_memory_slice(member, handles, hops=hops, budget=budget)
    lead = memnet.Session("lead")
    import_slice(lead, sl, "remint")
    q = "MATCH (n {name: 'node %d'})"
    for i in anchors:
        want = member.recall(q % i, k=hops, max_rows=budget, laws=False)
        got = lead.recall(q % i, k=hops, max_rows=budget, laws=False)
        assert want.receipt.seed_mode == got.receipt.seed_mode == "match"
        if want.receipt.clamped:
            # the fan-out clamp counted edges the slice left out (a self-loop
            # of a node past the anchors, say), so the lead's walk may take an
            # edge the member's clamp cut: what it shows is still the member's
            name = {n.var: dict(n.props)["name"] for n in got.nodes}
            pairs = [(name[e.src], e.type, name[e.dst]) for e in got.edges]
            st = member.store
            member_edges = {
                (st.node_props(a)["name"], st.edge_type(e), st.node_props(b)["name"])
                for e in st.live_edge_ids()
                for a, b in [st.edge_ends(e)]
            }
            assert set(pairs) <= member_edges and got.receipt.rows <= budget
            continue
        assert _canon(got.text) == _canon(want.text)
