"""MN-VER: every Commit that changes something is a new version, one higher,
kept in the session's history; a Commit that changes nothing is not."""

from __future__ import annotations

import pytest
from hypothesis import given

import memnet
from tests.ver.strategies import VER, build, graph_specs


@pytest.mark.req("MN-REQ-13", "MN-REQ-03")
@VER
@given(graph_specs())
def test_each_changing_commit_bumps_the_version_by_one(spec) -> None:  # type: ignore[no-untyped-def]
    b = build(spec)
    s = b.session
    changed = 0
    for expected, result, before in b.commits:
        assert result.changed is expected, (expected, result)
        assert result.version == before + (1 if expected else 0)
        changed += expected
    assert s.version == changed
    hist = s.history()
    assert len(hist) == changed
    assert [rec.version for rec in hist] == list(range(1, changed + 1))
    assert all(rec.changes for rec in hist)
    times = [rec.time for rec in hist]
    assert times == sorted(times)
    # every element created is recorded once, in the version that created it
    n_created = sum(1 for rec in hist for ch in rec.changes if ch.op == "N+")
    e_created = sum(1 for rec in hist for ch in rec.changes if ch.op == "E+")
    assert (n_created, e_created) == (len(spec.nodes), len(spec.edges))


@pytest.mark.req("MN-REQ-13")
def test_no_op_commits_do_not_make_versions() -> None:
    s = memnet.Session("noop")
    ids = s.commit(
        "INSERT (a:TSK {title: 'x', status: 'open'}), (b:MOD {path: 'p'}), (a)-[e:TOUCHES]->(b)"
    ).ids
    assert s.version == 1 and len(s.history()) == 1
    for delta in (
        "",
        "   \n",
        "// only a comment",
        "/* block */",
        ";",
        f"SET {ids['a']}.status = 'open'",
        f"REMOVE {ids['a']}.missing",
        f"SET {ids['a']}:TSK",
        f"SET {ids['a']}.title = 'y'\nSET {ids['a']}.title = 'x'",
    ):
        r = s.commit(delta)
        assert r.changed is False, delta
        assert r.version == 1 and r.ids == {}
    assert s.version == 1 and len(s.history()) == 1
    r = s.commit(f"SET {ids['a']}.status = 'done'")
    assert r.changed and r.version == 2 and s.version == 2 and len(s.history()) == 2
    r = s.commit(f"DELETE {ids['e']}")
    assert r.changed and r.version == 3 and r.recycled == 1
    # deleting what is already recycled is refused, not a silent no-op
    with pytest.raises(memnet.CommitRejected):
        s.commit(f"DELETE {ids['e']}")
    assert s.version == 3 and len(s.history()) == 3


@pytest.mark.req("MN-REQ-13", "MN-REQ-02")
def test_receipt_names_the_version() -> None:
    s = memnet.Session("ver")
    s.commit("INSERT (a:TSK {title: 'pricing'})")
    sh1 = s.recall("TSK")
    assert sh1.receipt.version == 1 and " v=1 " in sh1.text.split("\n", 1)[0]
    s.commit("INSERT (b:TSK {title: 'other'})")
    sh2 = s.recall("TSK")
    assert sh2.receipt.version == 2 and " v=2 " in sh2.text.split("\n", 1)[0]
    assert sh1.text != sh2.text


@pytest.mark.req("MN-REQ-13")
def test_long_runs_keep_consecutive_versions() -> None:
    full = memnet.Session("long", history_limit=None)
    default = memnet.Session("long")
    for s in (full, default):
        h = s.commit("INSERT (t:TSK {title: 'counter', n: 0})").ids["t"]
        for i in range(1, 70):
            assert s.commit(f"SET {h}.n = {i}").version == i + 1
        assert s.version == 70
        versions = [rec.version for rec in s.history()]
        assert versions, "the newest commits are kept"
        assert versions == list(range(versions[0], 71))
    assert len(full.history()) == 70
    assert full.to_networkx().nodes[h]["props"]["n"] == 69
