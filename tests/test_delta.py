"""Delta recall by example: the answer forms, every reason for a whole Shape,
the bounds, ``apply_delta`` and the faces (CLI, wire, MCP).

The properties (a delta applied gives the new Shape, never larger, the same
bytes from memory and from the log) are in ``tests/ver/test_delta.py``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import memnet
from memnet.faces.cli import DEMO_DELTA, main
from memnet.faces.wire import Wire
from memnet.recall import delta

Q = "TSK status:open pricing"

pytestmark = pytest.mark.req("MN-REQ-00.1")


def rows(insert: memnet.gql.ast.Insert) -> tuple[set[object], set[object]]:
    """A Shape's graph whatever the order of its rows."""
    return set(insert.nodes), set(insert.edges)


def demo(name: str = "demo") -> memnet.Session:
    s = memnet.Session(name)
    s.commit(DEMO_DELTA)
    return s


def test_the_three_answers_and_their_receipts() -> None:
    s = demo()
    first = s.recall(Q)
    # a plain Recall is exactly what it was: no delta fields anywhere
    assert "since=" not in first.text and first.receipt.answer == "shape"
    added = {"since", "answer", "why", "added", "changed", "gone"}
    assert not added & first.receipt.to_dict().keys()

    same = s.recall(Q, since=first.receipt.etag)
    assert same.text == f"// unchanged v=1 rows=12/50 etag={first.receipt.etag}"
    assert same.receipt.tokens == memnet.count_tokens(same.text) <= 40
    assert same.receipt.to_dict() == {
        "answer": "unchanged",
        "session": "demo",
        "version": 1,
        "rows": 12,
        "max_rows": 50,
        "tokens": same.receipt.tokens,
        "tokenizer": "o200k_base",
        "bytes": len(same.text),
        "etag": first.receipt.etag,
    }
    assert same.nodes == () and same.edges == ()

    s.commit(
        "SET na5.owner = 'ana', na5:URGENT, na5 #rounding\nREMOVE na5.prio\n"
        "INSERT (d:DEC {title: 'Cache the totals'})-[g:GOVERNS {since: 2024}]->(na3)\n"
        "DELETE na7"
    )
    d = s.recall(
        "TSK pricing", since=s.recall("TSK pricing", since=first.receipt.etag).receipt.etag
    )  # another q: its own etag
    assert d.receipt.answer == "unchanged"
    d = s.recall(Q, since=first.receipt.etag)
    head, _, body = d.text.partition("\n")
    assert head.startswith("// delta v=2 rows=")
    assert f" since={first.receipt.etag} etag={d.receipt.etag}" in head
    new = s.recall(Q)
    assert d.receipt.etag == new.receipt.etag != first.receipt.etag
    assert body.splitlines() == [
        "INSERT",
        "  (na9:DEC {title: 'Cache the totals'}),",
        "  (na9)-[ea7:GOVERNS {since: 2024}]->(na3)",
        "SET na5.owner = 'ana', na5:URGENT, na5 #rounding",
        "REMOVE na5.prio",
        "GONE na7, ea3",
    ]
    assert (d.receipt.added, d.receipt.changed, d.receipt.gone) == (2, 1, 2)
    assert d.nodes == () and d.edges == ()  # a delta's rows are read from its text
    assert set(d.receipt.to_dict()) == {
        "answer",
        "session",
        "version",
        "rows",
        "max_rows",
        "tokens",
        "tokenizer",
        "bytes",
        "etag",
        "since",
        "added",
        "changed",
        "gone",
    }
    assert rows(memnet.apply_delta(first.text, d.text)) == rows(new.insert)
    # the receipt object still holds everything the Shape's own receipt says
    assert d.receipt.seeds == new.receipt.seeds and d.receipt.read_first == new.receipt.read_first


def test_edge_properties_and_nicknames_come_back_out() -> None:
    s = demo()
    s.commit("SET ea1.weight = 2, na5 #rounding, na5:URGENT")
    first = s.recall(Q)
    s.commit("SET ea1.weight = 2.0\nREMOVE na5 #rounding, na5:URGENT")
    d = s.recall(Q, since=first.receipt.etag)
    assert d.text.splitlines()[1:] == ["REMOVE na5:URGENT, na5 #rounding", "SET ea1.weight = 2.0"]
    got = memnet.apply_delta(first.text, d.text)
    assert rows(got) == rows(memnet.apply_delta(s.recall(Q).text, ""))
    # 2 and 2.0 print apart, so they are a change
    assert dict(next(e for e in got.edges if e.var == "ea1").props)["weight"] == 2.0


def test_why_the_whole_shape_comes_back() -> None:
    s = demo()
    first = s.recall(Q)
    other = s.recall(Q, k=1)
    s.commit("SET na5.prio = 2")
    unknown = s.recall(Q, since="012345678901")
    assert unknown.receipt.answer == "shape" and unknown.receipt.since == "012345678901"
    assert unknown.receipt.why.startswith("not one of the Shapes this session served lately")
    head = unknown.text.partition("\n")[0]
    assert f'since=012345678901 why="{unknown.receipt.why}"' in head
    assert unknown.receipt.tokens == memnet.count_tokens(unknown.text)
    assert unknown.text.partition("\n")[2] == s.recall(Q).text.partition("\n")[2]
    assert {"since", "answer", "why"} <= unknown.receipt.to_dict().keys()
    # the etag of the same q with other knobs is another ask
    assert s.recall(Q, since=other.receipt.etag).receipt.answer == "shape"
    # older than the window
    for i in range(delta.WINDOW):
        s.commit(f"SET na6.prio = {10 + i}")
    assert s.version == delta.WINDOW + 2
    late = s.recall(Q, since=first.receipt.etag)
    assert late.receipt.answer == "shape" and "versions 2-17" in late.receipt.why


def test_the_memory_is_bounded() -> None:
    s = demo()
    first = s.recall(Q)
    for i in range(delta.MEMO_SIZE):
        s.recall(f"TSK w{i}")
    s.commit("SET na5.prio = 2")
    assert s.recall(Q, since=first.receipt.etag).receipt.answer == "shape"


def test_a_delta_as_large_as_the_shape_is_sent_whole() -> None:
    s = memnet.Session("wide")
    mods = ", ".join(f"(m{i}:MOD {{n: {i}}}), (t)-[:TOUCHES]->(m{i})" for i in range(40))
    r = s.commit(f"INSERT (t:TSK {{title: 'hub', status: 'open'}}), {mods}")
    first = s.recall("TSK hub", fanout=40, max_rows=100)
    t = r.ids["t"]
    news = ", ".join(f"(k{i}:MOD {{n: {i}}}), ({t})-[:TOUCHES]->(k{i})" for i in range(40))
    s.commit("DELETE " + ", ".join(h for v, h in r.ids.items() if v != "t") + f"\nINSERT {news}")
    d = s.recall("TSK hub", fanout=40, max_rows=100, since=first.receipt.etag)
    assert d.receipt.answer == "shape"
    assert d.receipt.why == "the delta would cost as many tokens as the Shape or more"


def test_a_bad_since_is_a_coded_error() -> None:
    s = demo()
    for bad in ("xyz", "0123456789ab", "01234567890123", 12, b"012345678901"):
        with pytest.raises(memnet.QueryError, match="since must be the etag"):
            s.recall(Q, since=bad)  # type: ignore[arg-type]


def test_a_delta_answer_is_not_a_commit() -> None:
    s = demo()
    first = s.recall(Q)
    s.commit("DELETE na7")
    d = s.recall(Q, since=first.receipt.etag)
    assert "\nGONE na7" in d.text and "DELETE" not in d.text
    for text in (d.text, "  " + d.text, s.recall(Q, since=d.receipt.etag).text):
        with pytest.raises(memnet.EchoRefused, match="delta Recall answer"):
            s.commit(text)
    # the part that says what left the Shape, pasted without its receipt line,
    # or with every other line of the answer: refused whole, nothing recycled
    gone = next(ln for ln in d.text.splitlines() if ln.startswith("GONE "))
    body = d.text.split("\n", 1)[1]
    for text in (gone, body, gone.lower(), "INSERT (x:TSK {title: 'new'})\n" + gone):
        with pytest.raises(memnet.EchoRefused, match="delta Recall answer") as err:
            s.commit(text)
        assert err.value.code == "echo_refused"
    assert s.version == 2
    assert memnet.apply_delta(first.text, d.text) == s.recall(Q).insert


def test_apply_delta_refuses_another_shape() -> None:
    s = demo()
    first = s.recall(Q)
    s.commit("SET na5.prio = 2\nDELETE na7")
    d = s.recall(Q, since=first.receipt.etag)
    elsewhere = s.recall("LAW")
    with pytest.raises(memnet.DeltaMismatch, match="another Shape"):
        memnet.apply_delta(elsewhere.text, d.text)
    with pytest.raises(memnet.DeltaMismatch, match="not a delta"):
        memnet.apply_delta(first.text, "SETTLE na5")
    with pytest.raises(memnet.DeltaMismatch, match="one INSERT"):
        memnet.apply_delta(first.text + "\nSET na5.prio = 1", d.text)
    assert memnet.apply_delta(first, s.recall(Q, since=first.receipt.etag)) == memnet.apply_delta(
        first.text, d.text
    )


# -- from a cabinet -----------------------------------------------------------------------
def stored(tmp_path: Path) -> tuple[memnet.Cabinet, memnet.Session, memnet.Shape]:
    cab = memnet.Cabinet.open(tmp_path / "cab")
    s = cab.create("shop")
    s.commit(DEMO_DELTA)
    cab.flush(s)
    first = s.recall(Q)
    s.commit("SET na5.prio = 2")
    cab.flush(s)
    return cab, s, first


def test_a_fresh_hydrate_rebuilds_the_old_shape(tmp_path: Path) -> None:
    cab, s, first = stored(tmp_path)
    warm = s.recall(Q, since=first.receipt.etag)
    cold = memnet.Cabinet.open(tmp_path / "cab").open("shop")
    assert cold.recall(Q, since=first.receipt.etag).text == warm.text
    assert warm.text.splitlines()[1:] == ["SET na5.prio = 2"]
    # a past version opened with at= answers too
    past = cab.open("shop", at=1)
    assert past.recall(Q, since=first.receipt.etag).receipt.answer == "unchanged"
    # an etag no version of the window had
    miss = cold.recall(Q, since="012345678901")
    assert miss.receipt.why == "no Shape of this q and knobs had that etag at versions 0-1"


def test_commits_not_flushed_are_compared_from_memory_only(tmp_path: Path) -> None:
    cab, s, first = stored(tmp_path)
    s.commit("SET na5.prio = 3")  # not flushed
    mid = s.recall(Q)
    s.commit("SET na5.prio = 4")
    s._memo = delta.Memo()  # as if it had served neither Shape
    assert s.recall(Q, since=first.receipt.etag).receipt.answer == "delta"
    why = s.recall(Q, since=mid.receipt.etag).receipt.why
    assert why == (
        "no Shape of this q and knobs had that etag at versions 0-3 (versions after "
        "2 are not flushed yet)"
    )


@pytest.mark.parametrize("bound", ["REWIND_READ", "REWIND_UNDO"])
def test_walking_back_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str
) -> None:
    cab, s, first = stored(tmp_path)
    monkeypatch.setattr(delta, bound, 0)
    why = (
        memnet.Cabinet.open(tmp_path / "cab")
        .open("shop")
        .recall(Q, since=first.receipt.etag)
        .receipt.why
    )
    assert why.startswith("versions 0-1 cannot be rebuilt: going back would")
    assert why.endswith("than 0 recorded changes")


def test_what_a_cabinet_cannot_rebuild(tmp_path: Path) -> None:
    cab = memnet.Cabinet.open(tmp_path / "cab")
    m = memnet.Session("adopted", history_limit=0)  # its history cut: no log to adopt
    m.commit(DEMO_DELTA)
    first = m.recall(Q)
    cab.adopt(m)
    m.commit("SET na5.prio = 2")
    cab.flush(m)
    fresh = memnet.Cabinet.open(tmp_path / "cab").open("adopted")
    why = fresh.recall(Q, since=first.receipt.etag).receipt.why
    assert why == (
        "versions 0-1 cannot be rebuilt: session 'adopted' keeps no log record of version 1"
    )
    # dropped and created again: the old copy's log is gone
    _cab, s, first = stored(tmp_path / "b")
    _cab.drop("shop")
    again = _cab.create("shop")
    again.commit(DEMO_DELTA)
    _cab.flush(again)
    s._memo = delta.Memo()
    why = s.recall(Q, since=first.receipt.etag).receipt.why
    assert why == "versions 0-1 cannot be rebuilt: session 'shop' was dropped and created again"
    _cab.close()
    assert "closed" in s.recall(Q, since=first.receipt.etag).receipt.why


# -- the faces ----------------------------------------------------------------------------
@pytest.mark.req("MN-REQ-00.1", "MN-REQ-19")
def test_cli_since(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stored(tmp_path)
    home = str(tmp_path / "cab")
    assert main(["--home", home, "recall", "shop", Q, "--format", "json", "--at", "1"]) == 0
    etag = json.loads(capsys.readouterr().out)["receipt"]["etag"]
    assert main(["--home", home, "recall", "shop", Q, "--since", etag]) == 0
    out = capsys.readouterr().out
    assert out.startswith("// delta v=2 ") and out.endswith("SET na5.prio = 2\n")
    assert main(["--home", home, "recall", "shop", Q, "--since", etag, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["receipt"]["answer"] == "delta"
    assert main(["--home", home, "recall", "shop", Q, "--since", etag, "--format", "dot"]) == 1
    assert capsys.readouterr().err.startswith("memnet: error: bad_query: --since")
    assert main(["--home", home, "recall", "shop", Q, "--since", "nope"]) == 1
    assert "bad_query: since must be the etag" in capsys.readouterr().err


@pytest.mark.req("MN-REQ-00.1", "MN-REQ-19")
def test_wire_since(tmp_path: Path) -> None:
    _cab, _s, first = stored(tmp_path)
    out = io.BytesIO()
    with memnet.Cabinet.open(tmp_path / "cab") as cab:
        w = Wire(cab, out)
        w.execute("USE shop")
        text = w.execute(f"RECALL {Q} WITH since={first.receipt.etag}")
        assert text.startswith("// delta v=2 ")
        etag = text.split(" etag=")[1].split()[0]
        assert w.execute(f"RECALL {Q} WITH rows=50, since={etag}").startswith("// unchanged ")
        w.answer(("stmt", f"RECALL {Q} WITH since=zz".encode()))
    assert out.getvalue().startswith(b"error bad_query ")
