"""The cabinet contract, run against every backend in ``conftest.BACKENDS``.

Lifecycle (create/open/flush/sessions/drop/log), unknown and invalid session
ids, incremental flush, compare-and-swap, past versions, value round trips,
recycling and nicknames, isolation between sessions, and damaged records.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from memnet import (
    CabinetCorrupt,
    CabinetError,
    CabinetFormat,
    CommitRejected,
    ConflictError,
    InvalidSessionId,
    MemNetError,
    Session,
    SessionExists,
    SessionNotFound,
    VersionNotFound,
)
from memnet.cabinet.binding import binding_of

from ._support import (
    counting_storage_calls,
    counting_writes,
    dump,
    gql_props,
    gql_value,
    graph_of,
    session_records,
    typed,
    typed_props,
)

ATOMIC, ISOLATION, HISTORY, ERRORS = "MN-REQ-03", "MN-REQ-10", "MN-REQ-13", "MN-REQ-15"


def node_key(sid: str, n: int) -> bytes:
    """The stored key of element ``n`` of ``sid`` (the documented layout)."""
    return sid.encode("ascii") + b"\x00" + n.to_bytes(8, "big")


def handle_re(h: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![0-9a-z]){re.escape(h)}(?![0-9a-z])")


def _then_restarted(place: Any, cabinet: Any) -> Any:
    """Yield the cabinet, then the same storage opened again (a restart)."""
    yield cabinet
    yield place.reopen(cabinet)


# =========================================================================== lifecycle


@pytest.mark.req("MN-REQ-14", ATOMIC, HISTORY)
def test_create_commit_flush_open_round_trip(place: Any, cabinet: Any) -> None:
    s = cabinet.create("notes")
    assert s.version == 0 and binding_of(s).version == 0 and not s.dirty
    r = s.commit(
        "INSERT (t:TSK {title: 'Persist me', status: 'open'}), (m:MOD {path: 'a.py'}), "
        "(t)-[:TOUCHES]->(m)"
    )
    assert r.version == 1 and s.dirty and s.version == 1
    assert cabinet.flush(s) == 1
    assert not s.dirty and binding_of(s).version == 1
    live_text = s.recall("TSK").text
    live_graph = graph_of(s)

    h = cabinet.open("notes")
    assert h.version == 1 and binding_of(h).version == 1 and not h.dirty
    assert graph_of(h) == live_graph
    assert h.recall("TSK").text == live_text
    assert set(live_graph["nodes"]) == {r.ids["t"], r.ids["m"]}

    cab2 = place.reopen(cabinet)
    h2 = cab2.open("notes")
    assert graph_of(h2) == live_graph
    assert h2.recall("TSK").text == live_text
    assert cab2.verify() == {"sessions": 1, "nodes": 2, "edges": 1, "log": 1}


@pytest.mark.req(HISTORY)
def test_sessions_catalog_matches_the_sessions(cabinet: Any) -> None:
    assert cabinet.sessions() == []
    b = cabinet.create("beta")
    a = cabinet.create("alpha")
    a.commit("INSERT (t:TSK {title: 'one'}), (u:TSK {title: 'two'}), (t)-[:BLOCKS]->(u)")
    a.commit("INSERT (m:MOD {path: 'x'})")
    cabinet.flush(a)
    b.commit("INSERT (t:TSK {title: 'b'})")
    first = {i.id: i for i in cabinet.sessions()}
    assert first["beta"].version == 0, "an unflushed commit must not show in the catalog"
    cabinet.flush(b)
    infos = cabinet.sessions()
    assert [i.id for i in infos] == ["alpha", "beta"]
    for info, s in ((infos[0], a), (infos[1], b)):
        st = s.stats()
        assert (info.version, info.nodes, info.edges, info.rows, info.bytes) == (
            s.version,
            st["nodes"],
            st["edges"],
            st["rows"],
            st["bytes"],
        )
        assert info.created <= info.updated
    assert infos[0].version == 2 and (infos[0].nodes, infos[0].edges) == (3, 1)
    assert infos[1].updated > first["beta"].updated
    assert infos[1].created == first["beta"].created
    assert infos[0].to_dict()["id"] == "alpha"


@pytest.mark.req(HISTORY)
def test_log_lists_every_commit_with_what_changed(cabinet: Any) -> None:
    s = cabinet.create("log")
    r1 = s.commit("INSERT (t:TSK {title: 'a'}), (m:MOD {path: 'b'}), (t)-[e:TOUCHES]->(m)")
    cabinet.flush(s)
    r2 = s.commit(f"SET {r1.ids['t']}.title = 'a2'")
    r3 = s.commit(f"DELETE {r1.ids['m']}")
    cabinet.flush(s)
    log = cabinet.log("log")
    assert [e.version for e in log] == [1, 2, 3]
    assert (
        (log[0].created, log[0].updated, log[0].recycled)
        == (r1.created, r1.updated, r1.recycled)
        == (3, 0, 0)
    )
    assert set(log[0].changed) == {r1.ids["t"], r1.ids["m"], r1.ids["e"]}
    assert (
        (log[1].created, log[1].updated, log[1].recycled)
        == (0, 1, 0)
        == (r2.created, r2.updated, r2.recycled)
    )
    assert log[1].changed == (r1.ids["t"],)
    # DELETE m recycles m and its edge
    assert (log[2].recycled, r3.recycled) == (2, 2)
    assert set(log[2].changed) == {r1.ids["m"], r1.ids["e"]}
    assert all(a.time <= b.time for a, b in zip(log, log[1:], strict=False))
    assert [e.version for e in cabinet.log("log", since=2)] == [3]
    assert cabinet.log("log", since=3) == []


@pytest.mark.req(ERRORS, ISOLATION)
def test_unknown_session_is_session_not_found_and_creates_nothing(cabinet: Any) -> None:
    cabinet.create("here")
    before = dump(cabinet)
    for call in (
        lambda: cabinet.open("nope"),
        lambda: cabinet.open("nope", at=0),
        lambda: cabinet.drop("nope"),
        lambda: cabinet.log("nope"),
    ):
        with pytest.raises(SessionNotFound) as info:
            call()
        assert info.value.code == "session_not_found"
        assert "nope" in str(info.value)
    assert not cabinet.exists("nope")
    assert [i.id for i in cabinet.sessions()] == ["here"]
    assert dump(cabinet) == before


@pytest.mark.req(ERRORS, ATOMIC)
def test_flush_after_drop_is_session_not_found_and_writes_nothing(cabinet: Any) -> None:
    s = cabinet.create("gone")
    s.commit("INSERT (t:TSK {title: 'x'})")
    cabinet.flush(s)
    s.commit("INSERT (u:TSK {title: 'y'})")
    cabinet.drop("gone")
    before = dump(cabinet)
    with pytest.raises(SessionNotFound) as info:
        cabinet.flush(s)
    assert info.value.code == "session_not_found"
    assert dump(cabinet) == before
    assert not cabinet.exists("gone")
    assert s.dirty


@pytest.mark.req(ERRORS)
def test_create_existing_is_session_exists_and_changes_nothing(cabinet: Any) -> None:
    s = cabinet.create("dup")
    s.commit("INSERT (t:TSK {title: 'keep me'})")
    cabinet.flush(s)
    before = dump(cabinet)
    with pytest.raises(SessionExists) as info:
        cabinet.create("dup")
    assert info.value.code == "session_exists"
    assert dump(cabinet) == before
    assert cabinet.open("dup").recall("TSK").text == s.recall("TSK").text


BAD_IDS = [
    "../x",
    "A",
    "",
    "a" * 65,
    "a\x00b",
    "-a",
    "a_b",
    "a b",
    "a\n",
    "é",
    "\u0661",
    "a/b",
    None,
    b"ab",
    7,
]


@pytest.mark.req(ISOLATION, ERRORS)
@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda b: repr(b)[:12])
@pytest.mark.parametrize("op", ["create", "open", "open_at", "drop", "log", "flush"])
def test_invalid_ids_are_refused_before_touching_storage(cabinet: Any, op: str, bad: Any) -> None:
    good = cabinet.create("good")
    good.commit("INSERT (t:TSK {title: 'x'})")
    before = dump(cabinet)
    if op == "flush":
        good.name = bad  # a session whose name was tampered with after creation
    calls = {
        "create": lambda: cabinet.create(bad),
        "open": lambda: cabinet.open(bad),
        "open_at": lambda: cabinet.open(bad, at=0),
        "drop": lambda: cabinet.drop(bad),
        "log": lambda: cabinet.log(bad),
        "flush": lambda: cabinet.flush(good),
    }
    with counting_storage_calls(cabinet) as calls_made:
        with pytest.raises(InvalidSessionId) as info:
            calls[op]()
    assert info.value.code == "invalid_session_id"
    assert sum(calls_made.values()) == 0, (
        f"storage was touched before the id was checked: {dict(calls_made)}"
    )
    assert dump(cabinet) == before


@pytest.mark.req(ISOLATION, ERRORS)
def test_exists_checks_the_id_before_touching_storage(cabinet: Any) -> None:
    touched = []
    for bad in BAD_IDS:
        with counting_storage_calls(cabinet) as calls_made:
            with pytest.raises(InvalidSessionId):
                cabinet.exists(bad)
        if sum(calls_made.values()):
            touched.append(repr(bad))
    assert not touched, f"exists() opened a storage transaction before refusing {touched}"


@pytest.mark.req(ISOLATION)
def test_longest_valid_id_and_session_constructor() -> None:
    assert Session("a" * 64).name == "a" * 64
    with pytest.raises(InvalidSessionId):
        Session("a" * 65)
    with pytest.raises(InvalidSessionId):
        Session("../x")


@pytest.mark.req(ISOLATION)
def test_drop_removes_every_record_and_leaves_others_intact(cabinet: Any) -> None:
    for sid in ("keep-1", "drop", "keep-2"):
        s = cabinet.create(sid)
        r = s.commit(
            f"INSERT (t:TSK {{title: 'in {sid}'}}), (m:MOD {{path: '{sid}'}}), (t)-[:TOUCHES]->(m)"
        )
        s.commit(f"SET {r.ids['t']}.title = 'again {sid}'")
        cabinet.flush(s)
    others = {sid: session_records(cabinet, sid) for sid in ("keep-1", "keep-2")}
    texts = {sid: cabinet.open(sid).recall("TSK").text for sid in others}
    assert all(others[sid]["nodes"] and others[sid]["log"] for sid in others)

    cabinet.drop("drop")
    after = dump(cabinet)
    assert b"drop" not in after["catalog"]
    for table in ("nodes", "edges", "log", "postings"):
        assert not [k for k in after[table] if k.startswith(b"drop\x00")], table
    for sid in others:
        assert session_records(cabinet, sid) == others[sid]
        assert cabinet.open(sid).recall("TSK").text == texts[sid]
    assert [i.id for i in cabinet.sessions()] == ["keep-1", "keep-2"]
    with pytest.raises(SessionNotFound):
        cabinet.open("drop")
    # the id is free again, and the new session starts empty
    fresh = cabinet.create("drop")
    assert fresh.version == 0 and graph_of(cabinet.open("drop")) == {"nodes": {}, "edges": {}}
    assert cabinet.log("drop") == []
    cabinet.verify()


@pytest.mark.req("MN-REQ-14.1", ATOMIC, ISOLATION)
def test_stale_copy_from_before_drop_and_recreate_cannot_write_into_the_new_session(
    cabinet: Any,
) -> None:
    """ABA: the old session reached version 1, was dropped, and a new session of
    the same id also reached version 1. A copy loaded from the old session must
    not be able to flush into the new one."""
    old = cabinet.create("a")
    old.commit("INSERT (x:TSK {title: 'old one'}), (y:TSK {title: 'old two'})")
    cabinet.flush(old)
    stale = cabinet.open("a")
    cabinet.drop("a")
    new = cabinet.create("a")
    new.commit("INSERT (m:MOD {path: 'new'})")
    cabinet.flush(new)
    before = dump(cabinet)
    new_graph = graph_of(cabinet.open("a"))

    stale.commit("INSERT (z:TSK {title: 'stale three'})")
    with pytest.raises((ConflictError, SessionNotFound)):
        cabinet.flush(stale)
    assert dump(cabinet) == before
    assert graph_of(cabinet.open("a")) == new_graph
    cabinet.verify()


@pytest.mark.req(ERRORS)
def test_closed_cabinet_refuses_use(cabinet: Any) -> None:
    s = cabinet.create("x")
    s.commit("INSERT (t:TSK {title: 'x'})")
    cabinet.close()
    for call in (
        cabinet.sessions,
        lambda: cabinet.open("x"),
        lambda: cabinet.flush(s),
        lambda: cabinet.create("y"),
    ):
        with pytest.raises(CabinetError) as info:
            call()
        assert info.value.code == "cabinet_closed"


# =========================================================================== incremental flush


def _star(cabinet: Any, sid: str, leaves: int = 1999) -> tuple[Any, dict[str, str]]:
    """A session of ``leaves + 1`` nodes: one MOD hub and TSK leaves touching it."""
    s = cabinet.create(sid)
    ids = s.commit("INSERT (h:MOD {path: 'hub.py'})").ids
    for lo in range(0, leaves, 500):  # a Δ has a token cap: build it in a few commits
        parts = [
            f"(t{i}:TSK {{title: 'task {i}', n: {i}}})-[:TOUCHES]->({ids['h']})"
            for i in range(lo, min(leaves, lo + 500))
        ]
        ids.update(s.commit("INSERT " + ", ".join(parts)).ids)
    cabinet.flush(s)
    return s, ids


def _rewrites(
    before: dict[str, dict[bytes, bytes]],
    after: dict[str, dict[bytes, bytes]],
    written: list[tuple[str, bytes]],
) -> list[tuple[str, bytes]]:
    """Records written although their bytes did not change."""
    return [(t, k) for t, k in written if before[t].get(k) == after[t].get(k)]


@pytest.mark.req("MN-REQ-14.2", ATOMIC)
def test_flush_writes_only_the_changed_leaf_records(cabinet: Any) -> None:
    s, ids = _star(cabinet, "star")
    assert s.stats()["nodes"] == 2000
    before = dump(cabinet)
    s.commit(f"SET {ids['t5']}.title = 'changed'")
    with counting_writes(cabinet) as w:
        assert cabinet.flush(s) == s.version
    after = dump(cabinet)
    assert w.transactions == 1
    assert w.puts["nodes"] <= 2, f"one SET wrote {w.puts['nodes']} node records"
    changed = {k for k in after["nodes"] if before["nodes"].get(k) != after["nodes"][k]}
    assert 1 <= len(changed) <= 2 and changed <= set(w.keys_in("nodes"))
    assert (w.puts["edges"], w.puts["log"], w.puts["catalog"], w.puts["meta"]) == (0, 1, 1, 0)
    assert graph_of(cabinet.open("star")) == graph_of(s)

    # several commits between flushes: one log record each, each node at most once
    for i in (7, 8, 9):
        s.commit(f"SET {ids[f't{i}']}.title = 'changed {i}'")
    s.commit(f"SET {ids['t7']}.n = -7")
    with counting_writes(cabinet) as w:
        assert cabinet.flush(s) == s.version
    assert w.puts["log"] == 4 and w.puts["catalog"] == 1
    assert len(w.keys_in("nodes")) == len(set(w.keys_in("nodes"))) <= 4
    assert graph_of(cabinet.open("star")) == graph_of(s)


@pytest.mark.req("MN-REQ-14.2", ATOMIC)
def test_flush_of_a_set_on_a_hub_writes_o1_records(cabinet: Any) -> None:
    """A SET on the hub changes the hub's record only; its 1,999 neighbours'
    records (their adjacency holds one entry) stay byte-identical and must not
    be rewritten."""
    s, ids = _star(cabinet, "star")
    before = dump(cabinet)
    s.commit(f"SET {ids['h']}.path = 'hub2.py'")
    with counting_writes(cabinet) as w:
        cabinet.flush(s)
    after = dump(cabinet)
    changed = [k for k in after["nodes"] if before["nodes"].get(k) != after["nodes"][k]]
    assert changed == [node_key("star", 1)]
    assert w.puts["nodes"] <= 2, (
        f"one SET on a hub wrote {w.puts['nodes']} node records, "
        f"{len(_rewrites(before, after, w.keys))} of them byte-identical to what was stored"
    )
    assert graph_of(cabinet.open("star")) == graph_of(s)


@pytest.mark.req("MN-REQ-14.2", ATOMIC)
def test_flush_with_nothing_pending_writes_nothing(cabinet: Any) -> None:
    s = cabinet.create("idle")
    t = s.commit("INSERT (t:TSK {title: 'x'})").ids["t"]
    cabinet.flush(s)
    r = s.commit(f"SET {t}.title = 'x'")  # no change: no new version
    assert not r.changed and not s.dirty
    before = dump(cabinet)
    with counting_writes(cabinet) as w:
        assert cabinet.flush(s) == 1
    assert sum(w.puts.values()) == 0
    assert dump(cabinet) == before


# =========================================================================== compare-and-swap


@pytest.mark.req("MN-REQ-14.1", ATOMIC, HISTORY)
def test_stale_writer_gets_conflict_and_the_cabinet_is_unchanged(cabinet: Any) -> None:
    s = cabinet.create("cas")
    s.commit("INSERT (t:TSK {title: 'base'})")
    cabinet.flush(s)
    a = cabinet.open("cas")
    b = cabinet.open("cas")
    a.commit("INSERT (x:TSK {title: 'from a'})")
    assert cabinet.flush(a) == 2
    rb = b.commit("INSERT (y:TSK {title: 'from b'})")
    pending = b.journal()
    before = dump(cabinet)

    with pytest.raises(ConflictError) as info:
        cabinet.flush(b)
    err = info.value
    assert err.code == "conflict"
    assert (err.details["stored"], err.details["expected"]) == (2, 1)
    assert err.to_dict()["stored"] == 2 and err.to_dict()["expected"] == 1
    assert dump(cabinet) == before
    # the loser keeps its work, still dirty, still at its own version
    assert b.dirty and b.journal() == pending and b.version == 2 and binding_of(b).version == 1
    assert graph_of(b)["nodes"][rb.ids["y"]][2]["title"] == ("str", "from b")
    with pytest.raises(ConflictError):
        cabinet.flush(b)
    assert dump(cabinet) == before

    # a fresh open and a redo succeed, and keep both writers' work
    c = cabinet.open("cas")
    c.commit("INSERT (y:TSK {title: 'from b'})")
    assert cabinet.flush(c) == 3
    titles = sorted(p[2]["title"][1] for p in graph_of(cabinet.open("cas"))["nodes"].values())
    assert titles == ["base", "from a", "from b"]
    assert [e.version for e in cabinet.log("cas")] == [1, 2, 3]
    cabinet.verify()


@pytest.mark.req("MN-REQ-14.1", HISTORY)
def test_is_stale_probes_the_stored_version_with_one_catalog_read(cabinet: Any) -> None:
    a = cabinet.create("probe")
    a.commit("INSERT (t:TSK {title: 'base'})")
    cabinet.flush(a)
    b = cabinet.open("probe")
    with counting_storage_calls(cabinet) as calls:
        assert not cabinet.is_stale(b) and not cabinet.is_stale(a)
    assert dict(calls) == {"read": 2}, "a probe is one read, never a hydrate"
    a.commit("INSERT (u:TSK {title: 'moved on'})")
    assert not cabinet.is_stale(b), "an unflushed commit is not in the cabinet"
    cabinet.flush(a)
    assert cabinet.is_stale(b) and not cabinet.is_stale(a)
    assert not cabinet.is_stale(cabinet.open("probe"))
    cabinet.drop("probe")
    assert cabinet.is_stale(a)
    cabinet.create("probe")  # the same id and version 0 again: another creation
    fresh = cabinet.open("probe")
    a2 = Session("probe")
    with pytest.raises(ConflictError):
        cabinet.is_stale(a2)  # never opened from a cabinet
    assert not cabinet.is_stale(fresh)
    binding_of(b).version = 0
    assert cabinet.is_stale(b), "the token tells another creation of the same id"


@pytest.mark.req(ATOMIC)
def test_unbound_sessions_cannot_be_flushed(cabinet: Any) -> None:
    s = cabinet.create("x")
    s.commit("INSERT (t:TSK {title: 'a'})")
    s.commit("INSERT (u:TSK {title: 'b'})")
    cabinet.flush(s)
    before = dump(cabinet)
    past = cabinet.open("x", at=1)
    past.commit("INSERT (v:TSK {title: 'rewrite history'})")
    with pytest.raises(ConflictError) as info:
        cabinet.flush(past)
    assert info.value.code == "conflict"
    loose = Session("x")
    loose.commit("INSERT (w:TSK {title: 'never opened'})")
    with pytest.raises(ConflictError):
        cabinet.flush(loose)
    assert dump(cabinet) == before


# =========================================================================== past versions

SCENARIO = [
    "INSERT (t:TSK {title: 'Fix pricing page', status: 'open', prio: 2}), "
    "(m:MOD {path: 'web/pricing.py'}), (l:LAW {text: 'Never ship on Fridays'}), "
    "(t)-[:TOUCHES]->(m)",
    "INSERT (u:TSK #billing {title: 'Billing export', status: 'open'}), (p:PKG {name: 'stripe'}), "
    "(m2:MOD {path: 'billing/export.py'}), (u)-[w:TOUCHES {weight: 3}]->(m2), "
    "(m2)-[:IMPORTS]->(p), (<m>)-[:IMPORTS]->(p)",
    "SET <t>.status = 'doing', <t>.prio = 1",
    "SET <m>:HOT SET <w>.weight = 5",
    "DELETE <m2>",
    "SETTLE <t>",
    "INSERT (v:TSK #pricing2 {title: 'Pricing copy', status: 'open'}), (v)-[vm:TOUCHES]->(<m>) "
    "REMOVE <t>.prio",
    "REMOVE <u>#billing SET <v>#billing",
    "DELETE <vm>",
    "REMOVE <m>:HOT SET <p>.version = '2.1'",
    "INSERT (r:REQ {title: 'Pricing must be exact'}), (<v>)-[:SATISFIES]->(r)",
    "DELETE <u>",
]
QUERIES = [
    "",
    "TSK",
    "MOD",
    "TSK status:open",
    "pricing",
    "#billing",
    "#pricing2",
    "PKG stripe",
    "MATCH (n:TSK) WHERE n.title CONTAINS 'pricing' LIMIT 3",
    "REQ",
    "LAW",
]
FLUSH_AFTER = {1, 3, 4, 7, 8, 9, 12}


def _run_scenario(cabinet: Any, sid: str) -> tuple[Any, dict[int, dict[str, str]], dict[int, Any]]:
    s = cabinet.create(sid)
    texts = {0: {q: s.recall(q).text for q in QUERIES}}
    graphs = {0: graph_of(s)}
    h: dict[str, str] = {}
    for i, delta in enumerate(SCENARIO, 1):
        r = s.commit(re.sub(r"<(\w+)>", lambda m: h[m.group(1)], delta))
        assert r.version == i, delta
        h.update(r.ids)
        texts[i] = {q: s.recall(q).text for q in QUERIES}
        graphs[i] = graph_of(s)
        if i in FLUSH_AFTER:
            assert cabinet.flush(s) == i
    return s, texts, graphs


@pytest.mark.req(HISTORY)
def test_past_versions_read_back_exactly_what_recall_gave(place: Any, cabinet: Any) -> None:
    s, texts, graphs = _run_scenario(cabinet, "hist")
    # the scenario exercises the elements it claims to
    assert "#billing" in texts[2]["#billing"] and "weight: 5" in texts[4]["TSK"]
    assert texts[5]["MOD"] != texts[4]["MOD"]
    last = len(SCENARIO)

    def check(cab: Any) -> None:
        for v in range(0, last + 1):
            past = cab.open("hist", at=v)
            assert past.version == v
            assert graph_of(past) == graphs[v], f"graph at version {v}"
            for q in QUERIES:
                assert past.recall(q).text == texts[v][q], f"version {v}, q={q!r}"
        live = cab.open("hist")
        assert {q: live.recall(q).text for q in QUERIES} == texts[last]

    check(cabinet)
    check(place.reopen(cabinet))


@pytest.mark.req(HISTORY, ERRORS)
@pytest.mark.parametrize("at", [-1, 3, 99, "1", 1.0, 1.5])
def test_missing_versions_are_version_not_found(cabinet: Any, at: Any) -> None:
    s = cabinet.create("v")
    s.commit("INSERT (t:TSK {title: 'a'})")
    s.commit("INSERT (u:TSK {title: 'b'})")
    cabinet.flush(s)
    with pytest.raises(VersionNotFound) as info:
        cabinet.open("v", at=at)
    assert info.value.code == "version_not_found"


@pytest.mark.req(HISTORY)
def test_unflushed_versions_are_not_in_the_cabinet(cabinet: Any) -> None:
    s = cabinet.create("v")
    s.commit("INSERT (t:TSK {title: 'a'})")
    cabinet.flush(s)
    s.commit("INSERT (u:TSK {title: 'b'})")
    with pytest.raises(VersionNotFound):
        cabinet.open("v", at=2)
    assert cabinet.open("v").version == 1
    assert [e.version for e in cabinet.log("v")] == [1]


# =========================================================================== values

VALUES: dict[str, Any] = {
    "s_unicode": "Grüße, 世界, 🚀, e\u0301, \u200b",
    "s_quotes": "it's \"quoted\" and \\back\\slashed\\ ''",
    "s_newlines": "line1\nline2\r\n\ttabbed\n",
    "s_empty": "",
    "s_control": "nul\x00 bell\x07 esc\x1b del\x7f",
    "s_gql": "INSERT (x:TSK) // no comment /* nor this */ }",
    "i_neg": -42,
    "i_zero": 0,
    "i_big": 2**62,
    "i_big_neg": -(2**62),
    "i_max": 2**63 - 1,
    "i_min": -(2**63),
    "f_pi": 3.141592653589793,
    "f_tiny": 5e-324,
    "f_huge": 1.7976931348623157e308,
    "f_neg": -0.1,
    "f_zero": 0.0,
    "f_neg_zero": -0.0,
    "f_whole": 2.0,
    "b_true": True,
    "b_false": False,
    "l_str": ["a", "b'c", "d\ne", "", "世界"],
    "l_mixed": [1, 2.5, True, "x", -3, False, 0.0],
    "l_empty": [],
    "l_big": [2**62, -(2**62), 1e-300],
}


@pytest.mark.req(ATOMIC, HISTORY)
def test_every_value_type_round_trips_through_flush_and_open(place: Any, cabinet: Any) -> None:
    s = cabinet.create("vals")
    r = s.commit(
        f"INSERT (a:TSK&EXTRA&MORE #valued {gql_props(VALUES)}), (b:MOD {{path: 'b'}}), "
        f"(a)-[e:TOUCHES {gql_props(VALUES)}]->(b)"
    )
    cabinet.flush(s)
    want = {k: typed(v) for k, v in VALUES.items()}
    live = graph_of(s)
    assert live["nodes"][r.ids["a"]][2] == want, "the commit itself changed a value"
    texts = {q: s.recall(q).text for q in ("TSK", "#valued", "")}

    for cab in _then_restarted(place, cabinet):
        back = graph_of(cab.open("vals"))
        assert back == live
        kind, labels, props, nick = back["nodes"][r.ids["a"]]
        assert (kind, labels, nick) == ("TSK", ("EXTRA", "MORE"), "valued")
        assert props == want
        assert back["edges"][r.ids["e"]][3] == want
        hyd = cab.open("vals")
        assert {q: hyd.recall(q).text for q in texts} == texts


@pytest.mark.req(ATOMIC, HISTORY)
def test_set_that_changes_only_the_type_of_a_value_is_kept(cabinet: Any) -> None:
    """int, float and bool are distinct value types (SPEC §2): SET x = 1 over
    x = true, and SET y = 1.0 over y = 1, are changes that must persist."""
    s = cabinet.create("types")
    r = s.commit("INSERT (a:TSK {x: true, y: 1, z: 'k'})")
    a = r.ids["a"]
    res = s.commit(f"SET {a}.x = 1, {a}.y = 1.0")
    cabinet.flush(s)
    props = graph_of(cabinet.open("types"))["nodes"][a][2]
    assert (props["x"], props["y"]) == (("int", 1), ("float", (1.0).hex())), (
        f"commit said changed={res.changed}; stored x={props['x']}, y={props['y']}"
    )


UNSTORABLE = {
    "int_2_64": str(2**64),
    "int_below_min": str(-(2**63) - 1),
    "lone_surrogate": "'\\ud800'",
}


@pytest.mark.req(ERRORS, ATOMIC)
@pytest.mark.parametrize("literal", list(UNSTORABLE.values()), ids=list(UNSTORABLE))
def test_a_value_the_cabinet_cannot_store_is_refused_at_commit_or_round_trips(
    cabinet: Any, literal: str
) -> None:
    s = cabinet.create("odd")
    try:
        r = s.commit(f"INSERT (a:TSK {{v: {literal}}})")
    except MemNetError:
        assert s.version == 0 and not s.dirty
        return
    value = graph_of(s)["nodes"][r.ids["a"]][2]["v"]
    before = dump(cabinet)
    try:
        cabinet.flush(s)
    except Exception as e:  # noqa: BLE001 - the kind of failure is the finding
        raise AssertionError(
            f"commit accepted v = {literal} but flush raised {type(e).__name__}: {e} "
            f"(the session stays dirty and can never be flushed; cabinet unchanged: "
            f"{dump(cabinet) == before})"
        ) from None
    assert graph_of(cabinet.open("odd"))["nodes"][r.ids["a"]][2]["v"] == value


# =========================================================================== recycling, nicks


@pytest.mark.req(HISTORY, "MN-REQ-05")
def test_recycled_elements_and_nicknames_survive_flush_and_open(place: Any, cabinet: Any) -> None:
    s = cabinet.create("rec")
    r = s.commit(
        "INSERT (a:TSK #alpha {title: 'Alpha task'}), (b:TSK #beta {title: 'Beta task'}), "
        "(m:MOD {path: 'm.py'}), (a)-[am:TOUCHES]->(m), (b)-[bm:TOUCHES]->(m)"
    )
    ids = r.ids
    s.commit(f"DELETE {ids['a']}, {ids['bm']}")
    cabinet.flush(s)
    live = graph_of(s)

    for cab in _then_restarted(place, cabinet):
        h = cab.open("rec")
        g = graph_of(h)
        assert g == live
        assert set(g["nodes"]) == {ids["b"], ids["m"]} and g["edges"] == {}
        assert g["nodes"][ids["b"]][3] == "beta"
        shape = h.recall("#beta")
        assert shape.receipt.seed_mode == "nick" and shape.receipt.seeds == (ids["b"],)
        alpha = h.recall("#alpha")
        assert alpha.receipt.seed_mode != "nick"
        assert "Alpha task" not in alpha.text and "Alpha task" not in h.recall("TSK").text
        assert not handle_re(ids["a"]).search(h.recall("").text)
        # recycled, not forgotten: writing to it is refused as recycled
        with pytest.raises(CommitRejected) as info:
            h.commit(f"SET {ids['a']}.title = 'back'")
        assert "recycled" in str(info.value)
        # the past still has it
        assert cab.open("rec", at=1).recall("#alpha").receipt.seeds == (ids["a"],)

    cab = place.opened[-1]
    h = cab.open("rec")
    r2 = h.commit(
        f"INSERT (c:TSK #alpha {{title: 'Alpha reborn'}}), (c)-[cm:TOUCHES]->({ids['m']})"
    )
    assert r2.ids["c"] not in ids.values() and r2.ids["cm"] not in ids.values()
    cab.flush(h)
    again = cab.open("rec")
    assert again.recall("#alpha").receipt.seeds == (r2.ids["c"],)
    assert ids["a"] not in graph_of(again)["nodes"]
    cab.verify()


# =========================================================================== isolation


@pytest.mark.req(ISOLATION)
def test_sessions_with_overlapping_handles_and_prefix_ids_never_leak(cabinet: Any) -> None:
    sids = ["a", "ab", "a-1", "b", "a0"]
    minted = set()
    for n, sid in enumerate(sids):
        s = cabinet.create(sid)
        r = s.commit(
            f"INSERT (x:TSK {{title: 'secret of {sid}', owner: '{sid}'}}), "
            f"(y:MOD {{path: '{sid}/m.py', owner: '{sid}'}}), (x)-[:TOUCHES]->(y)"
        )
        minted.add((r.ids["x"], r.ids["y"]))
        for i in range(n):  # different versions per session
            s.commit(f"SET {r.ids['x']}.round = {i}")
        cabinet.flush(s)
    assert len(minted) == 1, "every session should mint the same handles"
    ((hx, hy),) = minted

    def check(sid: str, version: int) -> None:
        h = cabinet.open(sid)
        assert h.version == version
        g = graph_of(h)
        assert {p[2]["owner"] for p in g["nodes"].values()} == {("str", sid)}
        assert len(g["nodes"]) == 2 and len(g["edges"]) == 1
        text = h.recall("TSK").text + h.recall("").text + h.recall("secret").text
        assert f"secret of {sid}'" in text
        for other in sids:
            if other != sid:
                assert f"secret of {other}'" not in text and f"'{other}/m.py'" not in text
        assert [e.version for e in cabinet.log(sid)] == list(range(1, version + 1))

    for n, sid in enumerate(sids):
        check(sid, n + 1)
    # a write to one never shows in another with the same handles
    a = cabinet.open("a")
    a.commit(f"SET {hx}.title = 'changed in a', {hy}.path = 'changed'")
    cabinet.flush(a)
    for n, sid in enumerate(sids[1:], 1):
        check(sid, n + 1)
    cabinet.drop("a")
    for n, sid in enumerate(sids[1:], 1):
        check(sid, n + 1)
    assert cabinet.verify()["sessions"] == 4


# =========================================================================== damaged records


def _two_sessions(cabinet: Any) -> None:
    for sid in ("x", "y"):
        s = cabinet.create(sid)
        r = s.commit("INSERT (a:TSK {title: 'a'}), (b:MOD {path: 'b'}), (a)-[:TOUCHES]->(b)")
        s.commit(f"SET {r.ids['a']}.title = 'a2'")
        cabinet.flush(s)


def _put(cabinet: Any, table: str, key: bytes, value: bytes | None) -> None:
    def work(txn: Any) -> None:
        if value is None:
            assert txn.delete(table, key)
        else:
            txn.put(table, key, value)

    cabinet.kv.run_write(work)


def _get(cabinet: Any, table: str, key: bytes) -> bytes:
    with cabinet.kv.read() as txn:
        raw = txn.get(table, key)
    assert raw is not None
    return raw


def _record(payload: Any, key: bytes) -> bytes:
    """A record in the documented format: crc32 of the key and the body
    (big-endian), then the msgpack body."""
    import zlib

    import msgpack

    body = msgpack.packb(payload, use_bin_type=True)
    return zlib.crc32(key + body).to_bytes(4, "big") + body


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_foreign_format_number_is_cabinet_format(place: Any, cabinet: Any) -> None:
    import msgpack

    raw = _get(cabinet, "meta", b"format")
    from memnet.cabinet import records as R

    header = msgpack.unpackb(raw[4:], raw=False)
    assert header["format"] == R.FORMAT_VERSION
    _put(cabinet, "meta", b"format", _record(dict(header, format=99), b"format"))
    with pytest.raises(CabinetFormat) as info:
        place.reopen(cabinet)
    assert info.value.code == "cabinet_format"


@pytest.mark.req(ERRORS)
def test_a_damaged_format_header_is_refused(place: Any, cabinet: Any) -> None:
    raw = bytearray(_get(cabinet, "meta", b"format"))
    raw[-1] ^= 0xFF
    _put(cabinet, "meta", b"format", bytes(raw))
    with pytest.raises((CabinetCorrupt, CabinetFormat)):
        place.reopen(cabinet)


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_flipped_byte_in_a_node_record_is_cabinet_corrupt(cabinet: Any) -> None:
    _two_sessions(cabinet)
    y_text = cabinet.open("y").recall("").text
    key = node_key("x", 2)
    raw = bytearray(_get(cabinet, "nodes", key))
    raw[len(raw) // 2] ^= 0x01
    _put(cabinet, "nodes", key, bytes(raw))
    with pytest.raises(CabinetCorrupt) as info:
        cabinet.open("x")
    assert info.value.code == "cabinet_corrupt"
    with pytest.raises(CabinetCorrupt):
        cabinet.verify()
    assert cabinet.open("y").recall("").text == y_text


@pytest.mark.req(ERRORS)
def test_a_missing_node_record_is_cabinet_corrupt(cabinet: Any) -> None:
    _two_sessions(cabinet)
    _put(cabinet, "nodes", node_key("x", 1), None)
    with pytest.raises(CabinetCorrupt):
        cabinet.open("x")
    with pytest.raises(CabinetCorrupt):
        cabinet.verify()


@pytest.mark.req(ERRORS)
def test_a_damaged_log_record_is_cabinet_corrupt(cabinet: Any) -> None:
    _two_sessions(cabinet)
    key = node_key("x", 1)  # log keys have the same layout: sid 0x00 version
    raw = bytearray(_get(cabinet, "log", key))
    raw[-2] ^= 0x10
    _put(cabinet, "log", key, bytes(raw))
    with pytest.raises(CabinetCorrupt):
        cabinet.open("x", at=1)
    with pytest.raises(CabinetCorrupt):
        cabinet.log("x")
    with pytest.raises(CabinetCorrupt):
        cabinet.verify()


@pytest.mark.req(ERRORS)
def test_a_catalog_that_disagrees_with_the_log_fails_verify(cabinet: Any) -> None:
    import msgpack

    _two_sessions(cabinet)
    raw = _get(cabinet, "catalog", b"x")
    cat = msgpack.unpackb(raw[4:], raw=False)
    _put(cabinet, "catalog", b"x", _record(dict(cat, version=cat["version"] + 1), b"x"))
    with pytest.raises(CabinetCorrupt):
        cabinet.verify()


def _packed(obj: Any) -> bytes:
    import msgpack

    return msgpack.packb(obj, use_bin_type=True)


PROPS = _packed({"path": "b"})  # node records carry their props as msgpack bytes
WELL_FORMED_BUT_WRONG = {
    "scalar": 5,
    "nil": None,
    "short_tuple": [1, 2, 3],
    "props_not_bytes": ["MOD", [], "not a map", None, False, "k", b""],
    "props_a_plain_map": ["MOD", [], {"path": "b"}, None, False, "k", b""],
    "kind_not_a_string": [5, [], PROPS, None, False, "k", b""],
    "adjacency_not_whole_entries": ["MOD", [], PROPS, None, False, "k", b"abc"],
    "adjacency_to_a_missing_edge": [
        "MOD",
        [],
        PROPS,
        None,
        False,
        "k",
        (99 << 1 | 1).to_bytes(4, "little"),
    ],
}


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "props",
    [_packed("not a map"), _packed({1: 2}), b"\xc1\xc1"],
    ids=["not_a_map", "int_keys", "not_msgpack"],
)
def test_stored_props_that_lie_are_cabinet_corrupt_when_first_read(
    cabinet: Any, props: bytes
) -> None:
    """A hydrate leaves property maps undecoded until they are read: a bad map
    fails verify() at once, and the first read of it raises CabinetCorrupt."""
    _two_sessions(cabinet)
    _put(
        cabinet,
        "nodes",
        node_key("x", 2),
        _record(["MOD", [], props, None, False, "k", b"", 0], node_key("x", 2)),
    )
    with pytest.raises(CabinetCorrupt):
        cabinet.verify()
    try:
        s = cabinet.open("x")
    except CabinetCorrupt:
        return
    with pytest.raises(CabinetCorrupt):
        s.store.node_props(2)


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "payload", list(WELL_FORMED_BUT_WRONG.values()), ids=list(WELL_FORMED_BUT_WRONG)
)
def test_a_checksummed_record_of_the_wrong_shape_is_cabinet_corrupt(
    cabinet: Any, payload: Any
) -> None:
    """records.py: "a damaged or hostile record can cost neither memory nor a
    crash: it becomes a CabinetCorrupt error naming its key". Both on open and
    on verify, never another exception type and never a silent success."""
    _two_sessions(cabinet)
    _put(cabinet, "nodes", node_key("x", 2), _record(payload, node_key("x", 2)))
    failures = []
    for what, call in (("verify()", cabinet.verify), ("open('x')", lambda: cabinet.open("x"))):
        try:
            call()
            failures.append(f"{what} succeeded")
        except CabinetCorrupt:
            pass
        except Exception as e:  # noqa: BLE001 - the kind of failure is the finding
            failures.append(f"{what} raised {type(e).__name__}: {e}")
    assert not failures, "; ".join(failures)


# --------------------------------------------------------------------------- value helper


def test_gql_value_helper_writes_what_the_parser_reads() -> None:
    """Guards the test helper itself (our own quoting, not the emitter's)."""
    from memnet import parse_delta

    for v in VALUES.values():
        (ins,) = parse_delta(f"INSERT (a:TSK {{v: {gql_value(v)}}})").statements
        assert typed(dict(ins.nodes[0].props)["v"]) == typed(v), v
    assert typed_props({"a": [1, True]}) == {"a": ("list", (("int", 1), ("bool", True)))}


@pytest.mark.req(HISTORY, ERRORS)
def test_session_info_is_the_catalog_row(cabinet: Any) -> None:
    s = cabinet.create("one")
    s.commit("INSERT (t:TSK {title: 'row'}), (m:MOD {path: 'm.py'}), (t)-[:TOUCHES]->(m)")
    cabinet.flush(s)
    cabinet.create("two")
    info = cabinet.session_info("one")
    assert info == next(i for i in cabinet.sessions() if i.id == "one")
    assert (info.version, info.nodes, info.edges, info.rows) == (1, 2, 1, 3)
    with pytest.raises(SessionNotFound):
        cabinet.session_info("three")
    with pytest.raises(InvalidSessionId):
        cabinet.session_info("Bad/Id")


def posting_records(cabinet: Any, sid: str) -> dict[bytes, bytes]:
    with cabinet.kv.read() as txn:
        return dict(txn.scan("postings", sid.encode("ascii") + b"\x00"))


@pytest.mark.req("MN-REQ-14", ERRORS)
def test_the_stored_index_is_checked_and_a_damaged_one_is_cabinet_corrupt(
    cabinet: Any, monkeypatch: Any
) -> None:
    """Hydrate reads the index from the postings table: verify() recomputes it
    from the node records, and a posting that lies is caught (by verify, or by
    the id-range checks when a recall first reads it)."""
    import msgpack

    from memnet.cabinet import records as R

    monkeypatch.setattr(R, "POSTING_PENDING", 0)  # every flush folds its deltas
    monkeypatch.setattr(R, "PENDING_SHARE", 1 << 40)
    _two_sessions(cabinet)
    assert cabinet.verify()["sessions"] == 2
    recs = posting_records(cabinet, "x")
    assert recs and not [k for k in recs if k.startswith(R.delta_prefix("x"))]

    # drop node 1 from the posting of the word 'a2' (its title): verify sees it
    def a2(m: dict[bytes, bytes]) -> bytes | None:
        return next((t for t in m if t.startswith(b"wa2\x00")), None)

    key, raw = next((k, v) for k, v in recs.items() if a2(msgpack.unpackb(v[4:], raw=False)))
    m = msgpack.unpackb(raw[4:], raw=False)
    term = a2(m)
    del m[term]
    _put(cabinet, "postings", key, _record(m, key) if m else None)
    with pytest.raises(CabinetCorrupt) as info:
        cabinet.verify()
    assert "index" in str(info.value)
    # a posting that names a node past the last one is refused when read
    _put(cabinet, "postings", key, _record({**m, term: (999).to_bytes(4, "little")}, key))
    s = cabinet.open("x")
    with pytest.raises(CabinetCorrupt):
        s.recall("a2")
    # a posting record that does not decode fails the hydrate
    _put(cabinet, "postings", key, b"\x00\x00\x00\x00garbage")
    with pytest.raises(CabinetCorrupt):
        cabinet.open("x")
    assert cabinet.open("y").recall("a2").receipt.matched == 1


@pytest.mark.req("MN-REQ-14.2", ERRORS)
def test_a_flush_appends_one_index_delta_and_a_damaged_delta_is_caught(cabinet: Any) -> None:
    import msgpack

    from memnet.cabinet import records as R

    s = cabinet.create("p")
    r = s.commit(
        "INSERT (a:TSK {title: 'alpha beta', n: 1}), (b:TSK {title: 'gamma'}), (a)-[:FOLLOWS]->(b)"
    )
    cabinet.flush(s)
    before = posting_records(cabinet, "p")
    s.commit(f"SET {r.ids['a']}.n = 2")
    cabinet.flush(s)
    after = posting_records(cabinet, "p")
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {R.delta_key("p", s.version)}  # one small record, nothing rewritten
    delta = msgpack.unpackb(after[R.delta_key("p", s.version)][4:], raw=False)
    assert set(delta["a"]) == {b"pn\x00i2"} and set(delta["r"]) == {b"pn\x00i1"}
    fresh = cabinet.open("p")
    assert fresh.recall("TSK n:2").receipt.matched == 1
    assert fresh.recall("TSK n:1").receipt.matched == 0
    assert cabinet.verify()["sessions"] == 1
    # a delta that lies is caught by verify
    key = R.delta_key("p", s.version)
    _put(cabinet, "postings", key, _record({"a": {}, "r": delta["r"]}, key))
    with pytest.raises(CabinetCorrupt):
        cabinet.verify()
    _put(cabinet, "postings", key, _record({"a": 5}, key))
    with pytest.raises(CabinetCorrupt):
        cabinet.open("p")


@pytest.mark.req("MN-REQ-14", "MN-REQ-14.2")
@pytest.mark.parametrize("pending", [0, 40, None])
def test_long_postings_get_records_of_their_own_and_stay_exact(
    cabinet: Any, monkeypatch: Any, pending: int | None
) -> None:
    from memnet.cabinet import records as R

    if pending is not None:  # fold at every flush / every few flushes / default
        monkeypatch.setattr(R, "POSTING_PENDING", pending)
        monkeypatch.setattr(R, "PENDING_SHARE", 1 << 40)
    s = cabinet.create("big")
    nodes = ", ".join(f"(t{i}:TSK {{title: 'common word {i}', n: {i % 3}}})" for i in range(300))
    ids = s.commit(f"INSERT {nodes}").ids
    cabinet.flush(s)
    if pending == 0:
        plen = len(b"big\x00") + 6
        own = {
            k[plen:]
            for k in posting_records(cabinet, "big")
            if len(k) > plen and not k.startswith(R.delta_prefix("big"))
        }
        assert b"kTSK" in own
        for word in (b"wcommon\x00", b"wword\x00"):  # one impact level each
            assert len([t for t in own if t.startswith(word)]) == 1, word
    # shrink and grow the long postings across flushes; the stored index follows
    s.commit("DELETE " + ", ".join(ids[f"t{i}"] for i in range(0, 300, 2)))
    cabinet.flush(s)
    s.commit(f"INSERT (x:TSK {{title: 'common ground', n: 7}}) SET {ids['t1']}.title = 'rare'")
    cabinet.flush(s)
    for i in range(3, 40, 2):
        s.commit(f"SET {ids[f't{i}']}.n = {i}")
        cabinet.flush(s)
    assert cabinet.verify()["sessions"] == 1
    fresh = cabinet.open("big")
    assert fresh.recall("TSK common", limit=50).receipt.matched == 150
    assert fresh.recall("TSK rare").receipt.matched == 1
    assert fresh.recall("TSK n:7").receipt.matched == 2
    for q in ("TSK common", "word", "TSK n:1", "", "TSK n:39"):
        assert fresh.recall(q).text.split("\n", 1)[1] == s.recall(q).text.split("\n", 1)[1]


@pytest.mark.req("MN-REQ-14", "MN-REQ-14.2")
def test_a_flush_that_changes_most_nodes_rewrites_the_index_from_memory(
    cabinet: Any, monkeypatch: Any
) -> None:
    """The first flush of a session built by many commits writes every posting
    from the index in memory (no delta); a small flush after it appends a
    delta; a large change to a hydrated session (whose postings are still the
    stored bytes) rewrites them again. Each stored index is the one the node
    records give (verify), and a fresh hydrate recalls as the writer does."""
    from memnet.cabinet import postings as P
    from memnet.cabinet import records as R

    monkeypatch.setattr(P, "REWRITE_MIN", 8)
    monkeypatch.setattr(R, "POSTING_BIG", 16)  # some postings get records of their own
    s = cabinet.create("bulk")
    handles = []
    for c in range(4):  # one session built by several commits before its first flush
        nodes = ", ".join(
            f"(t{i}:TSK {{title: 'common word{c} {i}', n: {i % 3}}})" for i in range(20)
        )
        r = s.commit(f"INSERT {nodes}, (t0)-[:FOLLOWS]->(t1)")
        handles += [r.ids[f"t{i}"] for i in range(20)]
    cabinet.flush(s)
    delta = R.delta_prefix("bulk")
    recs = posting_records(cabinet, "bulk")
    assert recs and not [k for k in recs if k.startswith(delta)]
    assert [e.version for e in cabinet.log("bulk")] == [1, 2, 3, 4]
    s.commit(f"SET {handles[0]}.n = 9")
    cabinet.flush(s)  # one node: a delta, nothing rewritten
    after = posting_records(cabinet, "bulk")
    assert {k for k in after.keys() | recs.keys() if after.get(k) != recs.get(k)} == {
        R.delta_key("bulk", s.version)
    }
    assert cabinet.verify()["sessions"] == 1
    fresh = cabinet.open("bulk")
    fresh.commit("DELETE " + ", ".join(handles[:30]))
    fresh.commit(f"SET {handles[40]}.title = 'rare'")
    cabinet.flush(fresh)  # a third of the nodes: rewritten from the loaded postings
    recs = posting_records(cabinet, "bulk")
    assert not [k for k in recs if k.startswith(delta)]
    assert cabinet.verify()["sessions"] == 1
    again = cabinet.open("bulk")
    for q in ("TSK common", "word3", "TSK n:1", "TSK n:9", "rare", ""):
        assert again.recall(q).text.split("\n", 1)[1] == fresh.recall(q).text.split("\n", 1)[1]
    assert again.recall("TSK rare").receipt.matched == 1
    assert cabinet.open("bulk", at=2).recall("TSK word1", limit=50).receipt.matched == 20


@pytest.mark.req("MN-REQ-14")
def test_a_hydrated_index_matches_the_writer_when_postings_span_many_ranges(
    cabinet: Any, monkeypatch: Any
) -> None:
    """A hydrate takes the stored postings in one record at a time. With small
    id ranges and a low bar for a posting of its own, terms are split over
    many ranges, some in buckets and some in records of their own: every
    posting read back (by lookup, or all at once) is the writer's, and terms
    nobody holds are absent."""
    import msgpack

    from memnet.cabinet import records as R

    monkeypatch.setattr(R, "POSTING_RANGE", 16)
    monkeypatch.setattr(R, "POSTING_BIG", 3)
    monkeypatch.setattr(R, "POSTING_PENDING", 0)  # no pending deltas: all in postings
    monkeypatch.setattr(R, "PENDING_SHARE", 1 << 40)
    s = cabinet.create("spread")
    words = ["alpha", "beta", "gamma", "delta"]
    nodes = ", ".join(
        f"(t{i}:{'TSK' if i % 3 else 'DOC'} {{title: "
        f"'{' '.join(words[: 1 + (i * 7) % 4])} item{i % 11}', n: {i % 5}}})"
        for i in range(120)
    )
    s.commit(f"INSERT {nodes}")
    cabinet.flush(s)
    want = {t: list(p) for t, p in s.store.index.postings()}
    where: dict[bytes, set[str]] = {}
    plen = len(b"spread\x00")
    for k, v in posting_records(cabinet, "spread").items():
        _rng, _b, term = R.split_bucket_key(k, plen)
        for t in msgpack.unpackb(v[4:]) if term is None else (term,):
            where.setdefault(t, set()).add("own" if term else "bucket")
    assert [t for t, w in where.items() if len(w) == 2]  # ranges of both kinds
    fresh = cabinet.open("spread")
    idx = fresh.store.index
    for t in sorted(want)[::3]:  # some by lookup first, waking their buckets
        assert list(idx.posting(t) or ()) == want[t], t
    assert idx.posting(b"wnowhere\x00") is None and idx.posting(b"kNOPE") is None
    assert {t: list(p) for t, p in idx.postings()} == want
    again = cabinet.open("spread")
    for q in ("TSK alpha", "DOC delta", "item3", "TSK n:2", ""):
        assert again.recall(q).text.split("\n", 1)[1] == s.recall(q).text.split("\n", 1)[1]
    assert cabinet.verify()["sessions"] == 1


@pytest.mark.req("MN-REQ-14")
def test_a_very_long_word_held_by_many_nodes_still_flushes(cabinet: Any, monkeypatch: Any) -> None:
    """A posting of its own is keyed by its term, and a key has at most 511
    bytes on LMDB: a word of 600 characters held by more nodes than
    POSTING_BIG stays in its bucket record instead, written whole and merged
    by later flushes, and reads back the same on every back end."""
    from memnet.cabinet import records as R

    monkeypatch.setattr(R, "POSTING_BIG", 8)
    monkeypatch.setattr(R, "POSTING_PENDING", 0)  # every flush folds its deltas
    monkeypatch.setattr(R, "PENDING_SHARE", 1 << 40)
    long = "q" * 600
    s = cabinet.create("long")
    s.commit("INSERT " + ", ".join(f"(a{i}:TSK {{title: 'item {long}'}})" for i in range(12)))
    cabinet.flush(s)  # written whole
    for _ in range(3):  # then merged, past POSTING_BIG
        s.commit("INSERT " + ", ".join(f"(b{i}:TSK {{title: 'more {long}'}})" for i in range(5)))
        cabinet.flush(s)
    term = next(t for t, _p in s.store.index.postings() if t.startswith(b"w" + long.encode()))
    assert len(list(s.store.index.posting(term) or ())) == 27
    assert len(R.big_key("long", 0, term)) > R.BIG_KEY_MAX
    fresh = cabinet.open("long")
    assert {t: list(p) for t, p in fresh.store.index.postings()} == {
        t: list(p) for t, p in s.store.index.postings()
    }
    assert fresh.recall(long).receipt.matched == 27
    s.commit("SETTLE na1")  # and the session takes commits still
    cabinet.flush(s)
    assert cabinet.verify()["sessions"] == 1


@pytest.mark.req("MN-REQ-14", ERRORS)
def test_a_term_stored_in_another_bucket_is_found_by_verify(cabinet: Any, monkeypatch: Any) -> None:
    """A flush that edits a stored posting looks for it in its term's bucket
    only: verify() checks every term's bucket, and one moved into another
    bucket's record (checksum made good) is reported."""
    import msgpack

    from memnet.cabinet import records as R

    monkeypatch.setattr(R, "POSTING_PENDING", 0)  # no pending deltas: all in postings
    monkeypatch.setattr(R, "PENDING_SHARE", 1 << 40)
    s = cabinet.create("moved")
    s.commit("INSERT " + ", ".join(f"(t{i}:TSK {{title: 'word{i} other{i}'}})" for i in range(300)))
    cabinet.flush(s)
    assert cabinet.verify()["sessions"] == 1
    plen = len(b"moved\x00")
    buckets = {
        k: msgpack.unpackb(v[4:])
        for k, v in posting_records(cabinet, "moved").items()
        if not k.startswith(R.delta_prefix("moved")) and R.split_bucket_key(k, plen)[2] is None
    }
    src = next(k for k, m in buckets.items() if len(m) >= 2)
    dst = next(k for k in buckets if k != src)
    term = sorted(buckets[src])[0]
    buckets[dst][term] = buckets[src].pop(term)
    for k in (src, dst):
        _put(cabinet, "postings", k, _record(buckets[k], k))
    with pytest.raises(CabinetCorrupt, match="wrong bucket"):
        cabinet.verify()


@pytest.mark.req("MN-REQ-14")
def test_a_flush_stores_the_terms_nodes_have_after_later_commits(
    cabinet: Any, monkeypatch: Any
) -> None:
    """A node's index terms are remembered from the commit that created it, so
    its first flush need not compute them again; a later commit that changes
    its labels or props, recycles or restores it before that flush must win:
    what is stored (read back by a hydrate) is the writer's index, posting
    for posting, on both the delta and the merge paths."""
    s = cabinet.create("memo")
    base = s.commit("INSERT (k:TSK {title: 'keeper'})")
    cabinet.flush(s)
    r = s.commit(
        "INSERT (a:TSK {title: 'alpha one'}), (b:TSK {title: 'beta two'}), "
        "(c:DOC {title: 'gamma three'}), (d:TSK {title: 'delta four'}), "
        "(e:TSK {title: 'epsilon five'})"
    )
    s.commit(f"SET {r.ids['a']}.title = 'alpha changed'")
    s.commit(f"SET {r.ids['b']}:URGENT")
    s.commit(f"DELETE {r.ids['c']}")
    s.commit(f"SET {base.ids['k']}.title = 'kept again'")
    s.commit(f"REMOVE {r.ids['d']}.title")
    cabinet.flush(s)
    want = {t: list(p) for t, p in s.store.index.postings()}
    fresh = cabinet.open("memo")
    assert {t: list(p) for t, p in fresh.store.index.postings()} == want
    assert fresh.recall("TSK changed").receipt.matched == 1
    assert fresh.recall("TSK one").receipt.matched == 0
    assert fresh.recall("gamma").receipt.matched == 0
    # and once more through the merge of pending deltas into the postings
    import memnet.cabinet.records as R

    monkeypatch.setattr(R, "POSTING_PENDING", 0)
    r2 = fresh.commit("INSERT (f:TSK {title: 'zeta six'})")
    fresh.commit(f"SET {r2.ids['f']}.title = 'zeta moved'")
    cabinet.flush(fresh)
    assert not [
        k for k in posting_records(cabinet, "memo") if k.startswith(R.delta_prefix("memo"))
    ]  # folded
    want = {t: list(p) for t, p in fresh.store.index.postings()}
    assert {t: list(p) for t, p in cabinet.open("memo").store.index.postings()} == want


@pytest.mark.req("MN-REQ-14")
def test_pending_deltas_that_take_ids_back_replay_to_the_writers_index(
    cabinet: Any, monkeypatch: Any
) -> None:
    """Flushes that each append a delta: ids added by one and taken back by a
    later one (a title changed and changed back, a node deleted after it was
    added, a term that lives for one flush only, an id added again to a
    stored posting that holds ids after it) replay at hydrate to exactly the
    index the writer holds, each id once."""
    from memnet.cabinet import records as R

    s = cabinet.create("replay")
    r = s.commit(
        "INSERT (a:TSK {title: 'alpha one'}), (b:TSK {title: 'beta two'}), "
        "(c:DOC {title: 'alpha gamma'})"
    )
    a, b, c = r.ids["a"], r.ids["b"], r.ids["c"]
    pending = R.POSTING_PENDING
    monkeypatch.setattr(R, "POSTING_PENDING", 0)
    cabinet.flush(s)  # folded: the postings themselves are stored
    monkeypatch.setattr(R, "POSTING_PENDING", pending)
    steps = [
        f"SET {a}.title = 'omega one'",
        f"SET {a}.title = 'alpha one'",
        "INSERT (d:TSK {title: 'fleeting alpha'})",
        f"SET {b}.title = 'only once'",
        f"SET {b}.title = 'beta two'",
        f"SET {c}:URGENT",
        f"REMOVE {c}:URGENT",
        f"SET {c}.title = 'alpha gamma later'",
    ]
    for q in steps:
        got = s.commit(q)
        cabinet.flush(s)
        if "d" in got.ids:  # its terms live for one delta only
            s.commit(f"DELETE {got.ids['d']}")
            cabinet.flush(s)
    deltas = [
        k for k in posting_records(cabinet, "replay") if k.startswith(R.delta_prefix("replay"))
    ]
    assert len(deltas) == len(steps) + 1  # nothing folded: the hydrate replays them all
    want = {t: list(p) for t, p in s.store.index.postings()}
    got_index = {t: list(p) for t, p in cabinet.open("replay").store.index.postings()}
    assert got_index == want
    assert all(p == sorted(set(p)) for p in got_index.values())


def test_a_hydrated_index_term_table_stays_out_of_the_collector(cabinet: Any) -> None:
    """The term table of a hydrated index holds only bytes, so the cyclic
    garbage collector never walks it (on a large session, one walk of it is
    a pause of 0.1 s or more on a Recall): the postings a Recall or a Commit
    turns into arrays are kept beside it, and read back the same."""
    import gc

    s = cabinet.create("gc")
    r = s.commit(
        "INSERT (a:TSK {title: 'alpha beta', n: 1}), (b:TSK {title: 'beta gamma'}), "
        "(a)-[:FOLLOWS]->(b)"
    )
    cabinet.flush(s)
    fresh = cabinet.open("gc")
    shards = list(fresh.store.index.shards.values())
    assert shards and not any(map(gc.is_tracked, shards))
    assert fresh.recall("TSK beta").receipt.matched == 2
    fresh.commit(f"SET {r.ids['a']}.n = 2 INSERT (c:TSK {{title: 'beta delta'}})")
    fresh.commit(f"SET {r.ids['b']}.title = 'gamma'")
    shards = list(fresh.store.index.shards.values())
    assert shards and not any(map(gc.is_tracked, shards))
    assert fresh.recall("TSK beta").receipt.matched == 2
    assert fresh.recall("TSK n:2").receipt.matched == 1
    assert fresh.recall("TSK n:1").receipt.matched == 0
    cabinet.flush(fresh)
    again = cabinet.open("gc")
    for q in ("TSK beta", "gamma", "TSK n:2", "delta", ""):
        assert again.recall(q).text.split("\n", 1)[1] == fresh.recall(q).text.split("\n", 1)[1]
    assert cabinet.verify()["sessions"] == 1
