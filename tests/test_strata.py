"""Strata: a full session mints S_{i+1}, recorded in a catalog session (SPEC §2, §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

import memnet
from memnet import strata
from memnet.graph.store import parse_handle

pytestmark = pytest.mark.req("MN-REQ-09", "MN-REQ-17")

CAPS = memnet.Caps(rows=30, bytes=10**6)


def _task(i: int) -> str:
    return f"INSERT (t:TSK {{title: 'task {i}', status: 'open'}})"


def _ses(cat: memnet.Session) -> dict[str, dict]:
    """sid → props (plus handle) of every live SES node of a catalog."""
    st = cat.store
    out = {}
    for nid in st.live_node_ids():
        if st.node_kind(nid) == "SES":
            props = dict(st.node_props(nid))
            assert props["sid"] not in out, f"{props['sid']} registered twice"
            out[props["sid"]] = {**props, "nid": nid}
    return out


def _next_links(cat: memnet.Session) -> set[tuple[str, str]]:
    st = cat.store
    sid = {nid: st.node_props(nid)["sid"] for nid in st.live_node_ids()}
    ends = (st.edge_ends(e) for e in st.live_edge_ids() if st.edge_type(e) == "NEXT")
    return {(sid[a], sid[b]) for a, b in ends}


def _fill(cab: memnet.Cabinet, s: memnet.Session) -> list[memnet.CommitResult]:
    results = []
    for i in range(CAPS.rows):
        s2, r = strata.commit_or_advance(cab, s, _task(i))
        assert s2 is s
        results.append(r)
    return results


@pytest.fixture
def cab(tmp_path: Path):
    c = memnet.Cabinet.open(tmp_path / "cab")
    yield c
    c.close()


def _check_two_strata(cab: memnet.Cabinet) -> None:
    old = cab.open("work")
    assert old.version == CAPS.rows and old.stats()["rows"] == CAPS.rows
    assert old.recall("TSK title:'task 99'").receipt.seed_mode != "match"
    new = cab.open("work-1")
    assert new.caps == CAPS
    assert new.version == 1
    assert new.recall("TSK title:'task 99'").receipt.seed_mode == "match"

    cat = cab.open(strata.catalog_id("work"))
    ses = _ses(cat)
    assert set(ses) == {"work", "work-1"}
    assert ses["work"]["status"] == "full"
    assert ses["work"]["rows"] == CAPS.rows and ses["work"]["version"] == CAPS.rows
    assert ses["work-1"]["status"] == "open"
    assert ses["work-1"]["rows"] == 1 and ses["work-1"]["version"] == 1
    assert _next_links(cat) == {("work", "work-1")}
    shape = cat.recall("SES status:open")
    assert shape.receipt.seed_mode == "match"
    assert [cat.store.node_props(parse_handle(h)[1])["sid"] for h in shape.receipt.seeds] == [
        "work-1"
    ]


def test_full_session_advances_to_next_stratum(cab: memnet.Cabinet, tmp_path: Path) -> None:
    s = cab.create("work", caps=CAPS)
    results = _fill(cab, s)
    # advice appears once the session passes 90% of its row cap, not before
    assert all(r.advice is None for r in results[:26])
    assert all(r.advice and "S_i+1" in r.advice for r in results[26:])
    # a plain Commit past the cap is refused, the session unchanged
    with pytest.raises(memnet.CapExceeded) as ei:
        s.commit(_task(99))
    assert ei.value.code == "cap_exceeded"
    assert s.version == CAPS.rows

    new, r = strata.commit_or_advance(cab, s, _task(99))
    assert new.name == "work-1" and new is not s
    assert r.version == 1 and set(r.ids) == {"t"}
    assert s.version == CAPS.rows and not s.dirty
    _check_two_strata(cab)

    # everything survives reopening the cabinet
    cab.close()
    with memnet.Cabinet.open(tmp_path / "cab") as again:
        _check_two_strata(again)


def test_commit_or_advance_keeps_fitting_commits(cab: memnet.Cabinet) -> None:
    s = cab.create("keep", caps=CAPS)
    s2, r = strata.commit_or_advance(cab, s, _task(0))
    assert s2 is s and r.version == 1
    assert cab.session_info("keep").version == 1  # flushed
    assert not cab.exists(strata.catalog_id("keep"))  # nothing minted, no catalog


def test_tidy_delta_on_full_session_stays(cab: memnet.Cabinet) -> None:
    s = cab.create("tidy", caps=CAPS)
    results = _fill(cab, s)
    s2, r = strata.commit_or_advance(cab, s, f"SETTLE {results[0].ids['t']}")
    assert s2 is s and r.version == CAPS.rows + 1
    assert not cab.exists("tidy-1")


def test_delta_with_old_handles_is_refused_not_moved(cab: memnet.Cabinet) -> None:
    s = cab.create("refs", caps=CAPS)
    results = _fill(cab, s)
    h = results[3].ids["t"]
    for delta in (
        f"INSERT (x:TSK {{title: 'follow-up'}})-[:AFTER]->({h})",
        f"INSERT (x:TSK {{title: 'follow-up'}}) SET {h}.status = 'done', x.n = 1",
    ):
        with pytest.raises(memnet.CapExceeded) as ei:
            strata.commit_or_advance(cab, s, delta)
        assert ei.value.code == "cap_exceeded"
        assert ei.value.details["handles"] == [h]
        assert ei.value.details["advice"] == "next_session"
        assert h in str(ei.value)
    assert s.version == CAPS.rows
    assert not cab.exists("refs-1")
    assert not cab.exists(strata.catalog_id("refs"))


def test_delta_too_big_for_any_stratum_is_refused(cab: memnet.Cabinet) -> None:
    s = cab.create("big", caps=memnet.Caps(rows=2, bytes=10**6))
    strata.commit_or_advance(cab, s, _task(0))
    delta = "INSERT (a:TSK {title: 'a'}), (b:TSK {title: 'b'}), (c:TSK {title: 'c'})"
    with pytest.raises(memnet.CapExceeded):
        strata.commit_or_advance(cab, s, delta)
    assert not cab.exists("big-1")


def test_register_twice_does_not_duplicate(cab: memnet.Cabinet) -> None:
    s = cab.create("reg")
    h1 = strata.register(cab, "reg", "reg", note="first")
    s.commit(_task(1))
    cab.flush(s)
    h2 = strata.register(cab, "reg", "reg")
    assert h1 == h2
    cat = strata.ensure_catalog(cab, "reg")
    ses = _ses(cat)
    assert list(ses) == ["reg"]
    assert ses["reg"]["rows"] == 1 and ses["reg"]["version"] == 1
    assert ses["reg"]["status"] == "open" and ses["reg"]["note"] == "first"
    h3 = strata.register(cab, "reg", "reg", status="full", note="done")
    assert h3 == h1
    ses = _ses(strata.ensure_catalog(cab, "reg"))
    assert ses["reg"]["status"] == "full" and ses["reg"]["note"] == "done"
    version = cab.session_info(strata.catalog_id("reg")).version
    strata.register(cab, "reg", "reg")  # nothing changed: no new catalog version
    assert cab.session_info(strata.catalog_id("reg")).version == version


def test_register_unknown_session(cab: memnet.Cabinet) -> None:
    with pytest.raises(memnet.SessionNotFound):
        strata.register(cab, "nope", "nope")
    with pytest.raises(memnet.MemNetError) as e:
        strata.register(cab, "x", "x", status="closed")
    assert e.value.code == "invalid_argument" and isinstance(e.value, ValueError)
    cab.create("notes")
    for note in (5, ["a"], "bad \ud800"):
        with pytest.raises(memnet.MemNetError) as e:
            strata.register(cab, "notes", "notes", note=note)  # type: ignore[arg-type]
        assert e.value.code == "invalid_argument"
    with pytest.raises(memnet.MemNetError) as e:
        strata.link(cab, "zzz", "a", "b")
    assert e.value.code == "session_not_found" and not cab.exists(strata.catalog_id("zzz"))
    strata.register(cab, "notes", "notes")
    with pytest.raises(memnet.MemNetError) as e:
        strata.link(cab, "notes", "notes", "ghost")
    assert e.value.code == "session_not_found"


def test_next_session_chain_and_free_number(cab: memnet.Cabinet) -> None:
    cab.create("chain", caps=CAPS, delete_on_settle=True)
    cab.create("chain-2")  # taken by hand: the next free number is used
    s1 = strata.next_session(cab, "chain")
    assert s1.name == "chain-1" and s1.caps == CAPS and s1.delete_on_settle
    s3 = strata.next_session(cab, "chain-1")
    assert s3.name == "chain-3" and s3.caps == CAPS
    cat = cab.open("chain-cat")
    ses = _ses(cat)
    assert set(ses) == {"chain", "chain-1", "chain-3"}
    assert [ses[k]["status"] for k in ("chain", "chain-1", "chain-3")] == ["full", "full", "open"]
    assert _next_links(cat) == {("chain", "chain-1"), ("chain-1", "chain-3")}
    # strata can be walked in the catalog with an ordinary recall
    shape = cat.recall("SES sid:chain", k=2)
    assert shape.receipt.rows >= 3


def test_ids(cab: memnet.Cabinet) -> None:
    assert strata.catalog_id("notes") == "notes-cat"
    with pytest.raises(memnet.InvalidSessionId):
        strata.catalog_id("Bad Id")
    with pytest.raises(memnet.InvalidSessionId):
        strata.catalog_id("x" * 64)
    assert strata.split_stratum(cab, "notes") == ("notes", 0)
    assert strata.split_stratum(cab, "notes-12") == ("notes", 12)
    assert strata.split_stratum(cab, "a-b-3") == ("a-b", 3)
    # a base that ends in digits and owns a catalog is stratum 0 of itself
    cab.create("build-2026")
    strata.register(cab, "build-2026", "build-2026")
    assert strata.split_stratum(cab, "build-2026") == ("build-2026", 0)
    assert strata.next_session(cab, "build-2026").name == "build-2026-1"
    # a 64-character id: strata and catalog stay valid ids
    long = "a" * 64
    cab.create(long)
    s = strata.next_session(cab, long)
    assert len(s.name) <= 64 and s.name == "a" * strata.MAX_BASE + "-1"
    assert cab.exists(strata.catalog_id("a" * strata.MAX_BASE))
    assert strata.next_session(cab, s.name).name == "a" * strata.MAX_BASE + "-2"


def test_outside_refs() -> None:
    assert strata.outside_refs("INSERT (a:TSK), (b:TSK), (a)-[:X]->(b)") == []
    assert strata.outside_refs("INSERT (a:TSK)-[r:X]->(n1a) SET r.w = 1, a.x = 2") == ["n1a"]
    assert strata.outside_refs("SETTLE n1b DELETE n1c") == ["n1b", "n1c"]
    assert strata.outside_refs("INSERT (a:TSK) SET a.x = 1 INSERT (b:TSK)-[:X]->(a)") == []
