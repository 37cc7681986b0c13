"""Sync: artefacts into a session as one Commit, by locator."""

from __future__ import annotations

import pytest

import memnet
from memnet.ingest import Artefacts, Element, snapshot, sync
from memnet.ingest.sync import LOCATOR

# every test here checks the sync by locator: same artefacts, same result, no stray writes
pytestmark = pytest.mark.req("MN-REQ-18")


def art(
    *elements: Element, links: tuple[tuple[str, str, str], ...] = (), root: str = "t"
) -> Artefacts:
    a = Artefacts(root=root, schemes=("py", "md"), managed_types=("CONTAINS", "IMPORTS"))
    for el in elements:
        a.add(el)
    for t, s, d in links:
        a.link(t, s, d)
    return a


def base() -> Artefacts:
    return art(
        Element("py:t", "PKG", {"path": "t", "name": "t"}),
        Element("py:t/a.py", "MOD", {"path": "t/a.py", "lines": 3}),
        Element("py:t/b.py", "MOD", {"path": "t/b.py", "lines": 5}, labels=("HOT",)),
        Element("py:t/a.py::f", "SYM", {"name": "f", "line": 1, "sym": "def"}),
        links=(
            ("CONTAINS", "py:t", "py:t/a.py"),
            ("CONTAINS", "py:t", "py:t/b.py"),
            ("CONTAINS", "py:t/a.py", "py:t/a.py::f"),
            ("IMPORTS", "py:t/a.py", "py:t/b.py"),
        ),
    )


def live(s: memnet.Session) -> tuple[int, int]:
    return s.store.live_nodes, s.store.live_edges


def test_first_sync_inserts_everything_with_locators():
    s = memnet.Session("s")
    r = sync(s, base())
    assert r.changed and r.version == 1 == s.version
    assert (r.created, r.updated, r.recycled, r.links_added, r.links_removed) == (4, 0, 0, 4, 0)
    assert live(s) == (4, 4)
    el, ln = snapshot(s, base())
    assert set(el) == set(base().elements)
    handle, kind, labels, props = el["py:t/b.py"]
    assert kind == "MOD" and labels == ("HOT",) and props == {"path": "t/b.py", "lines": 5}
    assert s.store.node_props(s.store.resolve(handle)[1])[LOCATOR] == "py:t/b.py"
    assert set(ln) == set(base().links)
    assert set(r.ids) == set(base().elements) and r.ids["py:t/b.py"] == handle


def test_a_second_sync_of_the_same_artefacts_commits_nothing():
    s = memnet.Session("s")
    sync(s, base())
    history = len(s.history())
    again = sync(s, base())
    assert not again.changed and again.version == 1 == s.version
    assert (again.created, again.updated, again.recycled, again.links_added) == (0, 0, 0, 0)
    assert len(s.history()) == history


def test_same_state_and_artefacts_mint_the_same_handles():
    a1, a2 = Artefacts("t", ("py",)), Artefacts("t", ("py",))
    els = list(base().elements.values())
    for el in els:
        a1.add(el)
    for el in reversed(els):  # another insertion order, same content
        a2.add(el)
    for lk in base().links.values():
        a1.link(lk.type, lk.src, lk.dst)
    for lk in reversed(list(base().links.values())):
        a2.link(lk.type, lk.src, lk.dst)
    a1.managed_types = a2.managed_types = ("CONTAINS", "IMPORTS")
    s1, s2 = memnet.Session("one"), memnet.Session("two")
    s1.commit("INSERT (x:TSK {title: 'first'})")
    s2.commit("INSERT (x:TSK {title: 'first'})")
    assert sync(s1, a1).ids == sync(s2, a2).ids
    assert snapshot(s1, a1) == snapshot(s2, a2)


def test_changed_props_and_labels_become_set_and_remove():
    s = memnet.Session("s")
    sync(s, base())
    before = snapshot(s, base())[0]
    a = base()
    a.elements["py:t/b.py"] = Element(
        "py:t/b.py", "MOD", {"path": "t/b.py", "lines": 6, "doc": "Bee."}, labels=("COLD",)
    )
    a.elements["py:t/a.py"] = Element("py:t/a.py", "MOD", {"path": "t/a.py"})
    r = sync(s, a)
    assert (r.created, r.updated, r.recycled) == (0, 2, 0)
    after = snapshot(s, a)[0]
    assert after["py:t/b.py"][0] == before["py:t/b.py"][0]  # same handle
    assert after["py:t/b.py"][2:] == (("COLD",), {"path": "t/b.py", "lines": 6, "doc": "Bee."})
    assert after["py:t/a.py"][3] == {"path": "t/a.py"}
    changes = s.history()[-1].changes
    assert {c.op for c in changes} == {"N~"} and len(changes) == 2
    assert sync(s, a).changed is False


def test_one_and_one_point_oh_and_true_are_different_values():
    s = memnet.Session("s")
    a = art(Element("py:t", "PKG", {"x": 1}))
    sync(s, a)
    for v in (1.0, True, "1", (1,)):
        r = sync(s, art(Element("py:t", "PKG", {"x": v})))
        assert r.updated == 1, v
        assert snapshot(s, a)[0]["py:t"][3]["x"] == v


def test_lists_are_stored_as_tuples():
    s = memnet.Session("s")
    sync(s, art(Element("py:t", "PKG", {"imports": ["a", "b"]})))
    assert snapshot(s, base())[0]["py:t"][3] == {"imports": ("a", "b")}
    assert not sync(s, art(Element("py:t", "PKG", {"imports": ("a", "b")}))).changed


def test_gone_elements_are_recycled_with_their_edges():
    s = memnet.Session("s")
    sync(s, base())
    old = snapshot(s, base())[0]
    a = base()
    del a.elements["py:t/a.py"], a.elements["py:t/a.py::f"]
    a.links = {k: v for k, v in a.links.items() if "py:t/a.py" not in (k[1], k[2])}
    r = sync(s, a)
    assert (r.created, r.updated, r.recycled) == (0, 0, 2)
    assert (r.links_added, r.links_removed) == (0, 3)
    assert live(s) == (2, 1)
    for loc in ("py:t/a.py", "py:t/a.py::f"):
        assert s.store.node_recycled(s.store.resolve(old[loc][0])[1])
    assert set(snapshot(s, a)[0]) == {"py:t", "py:t/b.py"}


def test_a_kind_change_recycles_and_inserts_again_keeping_links():
    s = memnet.Session("s")
    sync(s, base())
    old = snapshot(s, base())[0]["py:t/b.py"][0]
    a = base()
    a.elements["py:t/b.py"] = Element("py:t/b.py", "DOC", {"path": "t/b.py"})
    r = sync(s, a)
    assert (r.created, r.updated, r.recycled) == (1, 0, 1)
    el, ln = snapshot(s, a)
    assert el["py:t/b.py"][1] == "DOC" and el["py:t/b.py"][0] != old
    assert s.store.node_recycled(s.store.resolve(old)[1])
    assert set(ln) == set(a.links)  # both links to b.py are there again, to the new node
    assert live(s) == (4, 4)
    assert not sync(s, a).changed


def test_links_are_added_removed_and_their_props_set():
    s = memnet.Session("s")
    sync(s, base())
    a = base()
    del a.links[("IMPORTS", "py:t/a.py", "py:t/b.py")]
    a.link("IMPORTS", "py:t/b.py", "py:t/a.py", weight=2)
    r = sync(s, a)
    assert (r.links_added, r.links_removed, r.links_updated, r.updated) == (1, 1, 0, 0)
    a.links[("IMPORTS", "py:t/b.py", "py:t/a.py")].props["weight"] = 3
    r = sync(s, a)
    assert (r.links_added, r.links_removed, r.links_updated) == (0, 0, 1)
    assert snapshot(s, a)[1][("IMPORTS", "py:t/b.py", "py:t/a.py")][1] == {"weight": 3}
    a.links[("IMPORTS", "py:t/b.py", "py:t/a.py")].props.clear()
    assert sync(s, a).links_updated == 1
    assert snapshot(s, a)[1][("IMPORTS", "py:t/b.py", "py:t/a.py")][1] == {}


def test_what_is_out_of_scope_is_never_touched():
    s = memnet.Session("s")
    ids = s.commit(
        "INSERT (t:TSK {title: 'hand made'}), (o:MOD {locator: 'py:other/x.py'}), "
        "(w:MOD {locator: 'sysml:t/m.sysml'}), (p:MOD {locator: 'py:tt/x.py'}), "
        "(t)-[:TOUCHES]->(o)"
    ).ids
    sync(s, base())
    el = snapshot(s, base())[0]
    a_mod = el["py:t/a.py"][0]
    extra = s.commit(
        f"INSERT (t2:TSK {{title: 'x'}}), ({ids['t']})-[:TOUCHES]->({a_mod}), "
        f"({ids['t']})-[:CONTAINS]->({a_mod}), ({a_mod})-[:TOUCHES]->({ids['o']})"
    )
    assert extra.changed
    v = s.version
    assert not sync(s, base()).changed and s.version == v
    # emptying the scope recycles only the scope
    r = sync(s, art())
    assert r.recycled == 4
    for var in ("t", "o", "w", "p"):
        assert not s.store.node_recycled(s.store.resolve(ids[var])[1])
    assert s.store.live_nodes == 5  # t, o, w, p, t2


def test_hand_drawn_edges_to_ingested_nodes_survive_updates():
    s = memnet.Session("s")
    sync(s, base())
    mod = snapshot(s, base())[0]["py:t/a.py"][0]
    t = s.commit(f"INSERT (t:TSK {{title: 'fix a'}})-[:TOUCHES]->({mod})").ids["t"]
    a = base()
    a.elements["py:t/a.py"] = Element("py:t/a.py", "MOD", {"path": "t/a.py", "lines": 99})
    assert sync(s, a).updated == 1
    shape = s.recall("TSK fix")
    assert mod in shape.text and t in shape.text and "TOUCHES" in shape.text


def test_a_link_to_an_unknown_locator_is_refused_before_writing():
    s = memnet.Session("s")
    sync(s, base())
    v, rows = s.version, live(s)
    a = base()
    a.link("IMPORTS", "py:t/a.py", "py:t/nowhere.py")
    a.add(Element("py:t/c.py", "MOD", {"path": "t/c.py"}))
    with pytest.raises(ValueError, match="nowhere"):
        sync(s, a)
    assert (s.version, live(s)) == (v, rows)


@pytest.mark.parametrize(
    "bad",
    [
        Element("py:t/x.py", "mod", {}),  # kind must be upper case
        Element("py:t/x.py", "MOD", {}, labels=("hot",)),  # so must labels
        Element("py:t/x.py", "MOD", {"bad key": 1}),
        Element("py:t/x.py", "MOD", {LOCATOR: "py:t/x.py"}),  # the sync sets it
        Element("py:elsewhere/x.py", "MOD", {}),  # out of scope
    ],
)
def test_bad_elements_are_refused_before_writing(bad):
    s = memnet.Session("s")
    a = base()
    a.add(bad)
    with pytest.raises(ValueError):
        sync(s, a)
    assert s.version == 0 and live(s) == (0, 0)


def test_bad_values_and_unmanaged_link_types_are_refused():
    s = memnet.Session("s")
    with pytest.raises(TypeError):
        sync(s, art(Element("py:t", "PKG", {"x": None})))
    with pytest.raises(TypeError):
        sync(s, art(Element("py:t", "PKG", {"x": [1, [2]]})))
    a = art(Element("py:t", "PKG", {}), Element("py:t/a.py", "MOD", {}))
    a.link("TOUCHES", "py:t", "py:t/a.py")
    with pytest.raises(ValueError, match="managed"):
        sync(s, a)
    assert s.version == 0


def test_the_rate_cap_refuses_the_whole_sync():
    s = memnet.Session("s", caps=memnet.Caps(rows=10))
    s.commit("INSERT (t:TSK {title: 'keep me'})")
    sync(s, base())  # 1 + 4 nodes + 4 edges = 9 rows
    v, rows, hist = s.version, live(s), len(s.history())
    a = base()
    for i in range(3):
        a.add(Element(f"py:t/n{i}.py", "MOD", {"path": f"t/n{i}.py"}))
        a.link("CONTAINS", "py:t", f"py:t/n{i}.py")
    a.elements["py:t/a.py"] = Element("py:t/a.py", "MOD", {"path": "t/a.py", "lines": 4})
    with pytest.raises(memnet.CapExceeded):
        sync(s, a)
    assert (s.version, live(s), len(s.history())) == (v, rows, hist)
    assert snapshot(s, base())[0]["py:t/a.py"][3]["lines"] == 3


def test_a_duplicate_locator_made_by_hand_is_recycled_with_a_warning():
    s = memnet.Session("s")
    sync(s, base())
    keep = snapshot(s, base())[0]["py:t/b.py"][0]
    dup = s.commit("INSERT (d:MOD {locator: 'py:t/b.py', path: 'copy'})").ids["d"]
    r = sync(s, base())
    assert r.changed and r.recycled == 1 and any(dup in w.path for w in r.warnings)
    assert s.store.node_recycled(s.store.resolve(dup)[1])
    assert snapshot(s, base())[0]["py:t/b.py"][0] == keep
    assert not sync(s, base()).changed


def test_the_delta_is_built_without_gql_text_so_big_syncs_pass_the_parser_cap():
    s = memnet.Session("s")
    a = art(Element("py:t", "PKG", {"path": "t"}))
    for i in range(3000):
        loc = f"py:t/m{i:04d}.py"
        a.add(Element(loc, "MOD", {"path": loc[3:], "doc": "word " * 20}))
        a.link("CONTAINS", "py:t", loc)
    r = sync(s, a)
    assert r.created == 3001 and r.links_added == 3000


def test_links_may_end_at_nodes_outside_the_scope_named_in_outside():
    s = memnet.Session("s")
    sync(s, base())  # the far nodes: another ingester's
    far = frozenset({"py:t/a.py", "py:t/b.py", "py:t/gone.py"})

    def tests(*pairs: tuple[str, str]) -> Artefacts:
        a = Artefacts(root="t", schemes=("test",), managed_types=("VERIFIES",), outside=far)
        a.add(Element("test:t/x.py", "TEST", {"path": "x.py"}))
        for src, dst in pairs:
            a.link("VERIFIES", src, dst)
        return a

    r = sync(s, tests(("test:t/x.py", "py:t/a.py"), ("test:t/x.py", "py:t/gone.py")))
    assert (r.created, r.links_added) == (1, 1)
    # a far node the session does not hold: no link, a warning
    assert [str(w) for w in r.warnings] == [
        "test:t/x.py:0: no VERIFIES link to 'py:t/gone.py': the session holds no node with "
        "that locator"
    ]
    el, _ = snapshot(s, base())
    a_handle = el["py:t/a.py"][0]
    nid = s.store.resolve(a_handle)[1]
    assert [s.store.edge_type(e) for e, _d, _o in s.store.live_entries(nid)].count("VERIFIES") == 1
    # the same again changes nothing; a changed target moves only that link
    assert not sync(s, tests(("test:t/x.py", "py:t/a.py"))).changed
    r = sync(s, tests(("test:t/x.py", "py:t/b.py")))
    assert (r.links_added, r.links_removed, r.created, r.recycled) == (1, 1, 0, 0)
    assert snapshot(s, base())[0] == el  # the far nodes are never changed
    # a link to a locator neither in the artefacts nor in outside is refused
    bad = Artefacts(root="t", schemes=("test",), managed_types=("VERIFIES",))
    bad.add(Element("test:t/x.py", "TEST", {}))
    bad.link("VERIFIES", "test:t/x.py", "py:t/a.py")
    with pytest.raises(memnet.errors.InvalidArgument, match="outside locators"):
        sync(s, bad)
