"""MN-VER: LAW nodes ride along in every Shape and count against M (MN-REQ-11);
SETTLE ends a task and ``delete_on_settle`` recycles it (MN-REQ-12)."""

from __future__ import annotations

import pytest
from hypothesis import given

import memnet
from tests.ver.strategies import VER, build, scenarios


@pytest.mark.req("MN-REQ-11", "MN-REQ-01")
@VER
@given(scenarios(n_queries=4))
def test_laws_ride_along_after_the_seeds(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    g = b.session.to_networkx()
    laws_live = {h for h, a in g.nodes(data=True) if a["kind"] == "LAW"}
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        r = sh.receipt
        emitted = [n.var for n in sh.nodes]
        seeds_shown = [h for h in emitted if h in r.seeds]
        rules = [h for h in emitted if h in laws_live and h not in r.seeds]
        if kn.laws and r.seed_mode != "skip":
            # every live law is in the Shape, or counted as cut for want of rows
            assert len(laws_live & set(emitted)) + r.laws_cut == len(laws_live), (
                laws_live,
                emitted,
                r.laws_cut,
            )
            assert r.laws == len(rules)
            # rules come right after the seeds, before anything walked
            assert emitted[: len(seeds_shown)] == seeds_shown
            assert emitted[len(seeds_shown) : len(seeds_shown) + len(rules)] == rules
            if r.laws_cut:
                assert r.rows == kn.max_rows, "laws are cut only when M is spent"
                assert any("laws=False" in a or "rule" in a for a in r.advice)
        else:
            assert r.laws == 0 and r.laws_cut == 0
        assert r.rows <= kn.max_rows


def _rules_session() -> tuple[memnet.Session, dict[str, str]]:
    s = memnet.Session("laws")
    laws = ", ".join(
        f"(l{i}:LAW {{text: 'Rule number {i}: keep prices stable'}})" for i in range(10)
    )
    ids = s.commit(
        "INSERT (t:TSK {title: 'pricing task', status: 'open'}), "
        + ", ".join(f"(m{i}:MOD {{path: 'mod{i}.py'}}), (t)-[:TOUCHES]->(m{i})" for i in range(5))
        + ", "
        + laws
    ).ids
    return s, ids


@pytest.mark.req("MN-REQ-11", "MN-REQ-01")
def test_laws_count_against_m() -> None:
    s, ids = _rules_session()
    laws = {ids[f"l{i}"] for i in range(10)}
    sh = s.recall("TSK pricing", max_rows=6)
    r = sh.receipt
    assert r.rows == 6
    emitted = [n.var for n in sh.nodes]
    assert emitted[0] == ids["t"]
    assert set(emitted[1:]) <= laws and len(emitted) == 6
    assert r.laws == 5 and r.laws_cut == 5
    assert not sh.edges
    assert any("laws=false" in a for a in r.advice)
    # with room, every law rides along and the walk still runs
    sh = s.recall("TSK pricing", max_rows=50)
    assert laws <= {n.var for n in sh.nodes}
    assert sh.receipt.laws == 10 and sh.receipt.laws_cut == 0
    assert sh.receipt.rows == 1 + 10 + 5 + 5


@pytest.mark.req("MN-REQ-11")
def test_laws_false_leaves_the_rules_out() -> None:
    s, ids = _rules_session()
    laws = {ids[f"l{i}"] for i in range(10)}
    sh = s.recall("TSK pricing", max_rows=6, laws=False)
    emitted = {n.var for n in sh.nodes}
    assert not emitted & laws
    assert sh.receipt.laws == 0 and sh.receipt.laws_cut == 0
    assert sh.receipt.rows == 5 and len(sh.edges) == 2  # seed + 2 (node, edge) pairs
    # the outline carries the rules too, unless told not to
    assert laws <= {n.var for n in s.recall("").nodes}
    assert not laws & {n.var for n in s.recall("", laws=False).nodes}


@pytest.mark.req("MN-REQ-11", "MN-REQ-05")
def test_recycled_laws_do_not_ride_along() -> None:
    s, ids = _rules_session()
    s.commit(f"DELETE {ids['l0']}, {ids['l1']}")
    sh = s.recall("TSK pricing")
    emitted = {n.var for n in sh.nodes}
    assert ids["l0"] not in emitted and ids["l1"] not in emitted
    assert sh.receipt.laws == 8


# --------------------------------------------------------------------------- SETTLE


@pytest.mark.req("MN-REQ-12", "MN-REQ-13")
def test_settle_ends_a_task_and_keeps_it() -> None:
    s = memnet.Session("tasks")
    ids = s.commit(
        "INSERT (a:TSK {title: 'pricing a', status: 'open'}), "
        "(b:TSK {title: 'pricing b', status: 'open'}), (m:MOD {path: 'p'}), "
        "(a)-[:TOUCHES]->(m)"
    ).ids
    v = s.version
    r = s.commit(f"SETTLE {ids['a']}")
    assert r.changed and r.version == v + 1
    g = s.to_networkx()
    assert g.nodes[ids["a"]]["props"]["settled"] is True
    assert g.has_edge(ids["a"], ids["m"])
    # the settled task is still recalled, after the live one
    assert s.recall("TSK pricing", limit=2).receipt.seeds == (ids["b"], ids["a"])
    sh = s.recall("TSK pricing", limit=1)
    assert sh.receipt.seeds == (ids["b"],)
    # settling again changes nothing
    r = s.commit(f"SETTLE {ids['a']}")
    assert not r.changed and r.version == v + 1 and s.version == v + 1
    # a non-task cannot be settled; a node labelled TSK can
    with pytest.raises(memnet.CommitRejected) as info:
        s.commit(f"SETTLE {ids['m']}")
    assert info.value.code == "commit_rejected"
    s.commit(f"SET {ids['m']}:TSK")
    s.commit(f"SETTLE {ids['m']}")
    assert s.to_networkx().nodes[ids["m"]]["props"]["settled"] is True


@pytest.mark.req("MN-REQ-12", "MN-REQ-05")
def test_delete_on_settle_recycles_the_task() -> None:
    s = memnet.Session("tasks", delete_on_settle=True)
    ids = s.commit(
        "INSERT (a:TSK #cur {title: 'pricing a', status: 'open'}), "
        "(b:TSK {title: 'pricing b'}), (m:MOD {path: 'p'}), "
        "(a)-[e:TOUCHES]->(m)"
    ).ids
    r = s.commit(f"SETTLE {ids['a']}")
    assert r.changed and r.recycled >= 1
    g = s.to_networkx()
    assert ids["a"] not in g and not g.has_edge(ids["a"], ids["m"])
    assert ids["m"] in g
    for q in ("TSK pricing", "pricing a", "#cur", "", "MOD"):
        sh = s.recall(q)
        shown = {n.var for n in sh.nodes} | {e.var for e in sh.edges} | set(sh.receipt.seeds)
        assert ids["a"] not in shown and ids["e"] not in shown, (q, sh.text)
    assert s.recall("TSK").receipt.matched == 1
    # the handle stays in history and is never handed out again
    assert any(ch.op.startswith("N") for rec in s.history() for ch in rec.changes)
    with pytest.raises(memnet.CommitRejected):
        s.commit(f"SET {ids['a']}.status = 'reopened'")
    with pytest.raises(memnet.EchoRefused):
        s.commit(f"INSERT ({ids['a']}:TSK {{title: 'again'}})")
    new = s.commit("INSERT (c:TSK {title: 'next'})").ids["c"]
    assert new not in ids.values()
    # the nick is free again
    s.commit(f"SET {new} #cur")
    assert s.recall("#cur").receipt.seeds == (new,)


@pytest.mark.req("MN-REQ-12")
def test_settle_per_task_flag_and_same_delta_rules() -> None:
    s = memnet.Session("tasks")
    ids = s.commit(
        "INSERT (a:TSK {title: 'temp', delete_on_settle: true}), (b:TSK {title: 'kept'})"
    ).ids
    s.commit(f"SETTLE {ids['a']}, {ids['b']}")
    g = s.to_networkx()
    assert ids["a"] not in g
    assert g.nodes[ids["b"]]["props"]["settled"] is True
    # a task created and recycled in one Δ is refused
    s2 = memnet.Session("tasks", delete_on_settle=True)
    with pytest.raises(memnet.CommitRejected):
        s2.commit("INSERT (t:TSK {title: 'x'})\nSETTLE t")
    assert s2.version == 0 and s2.to_networkx().number_of_nodes() == 0
    # without recycling, settling a task in the Δ that creates it is fine
    r = s.commit("INSERT (t:TSK {title: 'born settled'})\nSETTLE t")
    assert s.to_networkx().nodes[r.ids["t"]]["props"]["settled"] is True
