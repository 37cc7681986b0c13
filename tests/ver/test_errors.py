"""MN-VER: errors have one root and stable codes (MN-REQ-15); session ids are
validated storage boundaries (MN-REQ-10); input is capped and errors point at
a line and column (MN-REQ-08); echoes are refused (MN-REQ-04); the rate cap
refuses growth with advice to start a new session (MN-REQ-09)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memnet
from tests.ver.strategies import VER

STABLE_CODES = {
    "gql_syntax",
    "bad_query",
    "commit_rejected",
    "echo_refused",
    "cap_exceeded",
    "session_not_found",
    "session_exists",
    "invalid_session_id",
    "input_too_large",
    "conflict",
    "internal",
}


def _session() -> tuple[memnet.Session, dict[str, str]]:
    s = memnet.Session("errs")
    ids = s.commit(
        "INSERT (t:TSK {title: 'task', status: 'open'}), (m:MOD {path: 'm.py'}), "
        "(t)-[e:TOUCHES]->(m)"
    ).ids
    return s, ids


# --------------------------------------------------------------------------- MN-REQ-15


@pytest.mark.req("MN-REQ-15")
def test_codes_are_the_documented_set() -> None:
    assert STABLE_CODES <= set(memnet.CODES)
    for cls, code in (
        (memnet.GQLSyntaxError, "gql_syntax"),
        (memnet.QueryError, "bad_query"),
        (memnet.CommitRejected, "commit_rejected"),
        (memnet.EchoRefused, "echo_refused"),
        (memnet.CapExceeded, "cap_exceeded"),
        (memnet.SessionNotFound, "session_not_found"),
        (memnet.SessionExists, "session_exists"),
        (memnet.InvalidSessionId, "invalid_session_id"),
        (memnet.InputTooLarge, "input_too_large"),
        (memnet.ConflictError, "conflict"),
    ):
        assert issubclass(cls, memnet.MemNetError)
        assert cls.code == code
    assert issubclass(memnet.EchoRefused, memnet.CommitRejected)
    assert issubclass(memnet.CapExceeded, memnet.CommitRejected)


def _raise(fn):  # type: ignore[no-untyped-def]
    with pytest.raises(memnet.MemNetError) as info:
        fn()
    return info.value


@pytest.mark.req("MN-REQ-15")
def test_every_failure_reports_its_stable_code() -> None:
    s, ids = _session()
    small = memnet.Session("small", caps=memnet.Caps(rows=3))
    cases = [
        (lambda: s.commit("INSERT (x:TSK {title: 'x'"), "gql_syntax"),
        (lambda: s.commit("SET nobody.title = 'x'"), "commit_rejected"),
        (lambda: s.commit(f"INSERT ({ids['t']}:TSK {{title: 'x'}})"), "echo_refused"),
        (lambda: small.commit("INSERT (a:DEC), (b:DEC), (c:DEC), (d:DEC)"), "cap_exceeded"),
        (lambda: s.recall("TSK", k=7), "bad_query"),
        (lambda: s.recall("TSK", k=-1), "bad_query"),
        (lambda: s.recall("TSK", k=True), "bad_query"),
        (lambda: s.recall("TSK", max_rows=0), "bad_query"),
        (lambda: s.recall("TSK", max_rows=501), "bad_query"),
        (lambda: s.recall("TSK", limit=0), "bad_query"),
        (lambda: s.recall("TSK", limit=51), "bad_query"),
        (lambda: s.recall("TSK", fanout=0), "bad_query"),
        (lambda: s.recall("TSK", fanout=65), "bad_query"),
        (lambda: s.recall("TSK", view="full"), "bad_query"),
        (lambda: s.recall("MATCH (n:TSK) LIMIT 99"), "bad_query"),
        (lambda: s.recall("MATCH (n:TSK) LIMIT 0"), "gql_syntax"),
        (lambda: s.recall("MATCH (n:TSK) WHERE m.title CONTAINS 'x'"), "gql_syntax"),
        (lambda: s.recall("TSK " + "x" * 5000), "input_too_large"),
        (lambda: memnet.parse_delta("INSERT " + "(" * 40 + ")" * 40), "input_too_large"),
        (lambda: memnet.Session("Bad/Id"), "invalid_session_id"),
    ]
    for fn, code in cases:
        err = _raise(fn)
        assert err.code == code, (code, type(err).__name__, str(err))
        assert err.to_dict()["code"] == code
        assert err.to_dict()["message"] == err.message
        assert isinstance(err, memnet.MemNetError)
    # nothing above changed the session
    assert s.version == 1


# --------------------------------------------------------------------------- MN-REQ-10


_BAD_IDS = [
    "",
    "Bad/Id",
    "a" * 65,
    "١٢٣",
    "abc\n",
    "\nabc",
    "-abc",
    "ABC",
    "a b",
    "a_b",
    "a.b",
    "..",
    "a/../b",
    "ａｂｃ",
    "abc\x00",
    "é",
    "a\tb",
    "abc ",
    " abc",
    "ß",
]
_GOOD_IDS = ["a", "0", "a" * 64, "a-b-c", "0-", "s1", "x" + "-" * 63, "9lives"]


@pytest.mark.req("MN-REQ-10", "MN-REQ-15")
@pytest.mark.parametrize("sid", _BAD_IDS, ids=[repr(x)[:20] for x in _BAD_IDS])
def test_invalid_session_ids_are_refused(sid: str) -> None:
    with pytest.raises(memnet.InvalidSessionId) as info:
        memnet.Session(sid)
    assert info.value.code == "invalid_session_id"


@pytest.mark.req("MN-REQ-10")
@pytest.mark.parametrize("sid", [None, 123, b"abc", ["a"]])
def test_non_string_session_ids_are_refused(sid: object) -> None:
    with pytest.raises(memnet.InvalidSessionId):
        memnet.Session(sid)  # type: ignore[arg-type]


@pytest.mark.req("MN-REQ-10")
@pytest.mark.parametrize("sid", _GOOD_IDS)
def test_valid_session_ids_are_accepted(sid: str) -> None:
    assert memnet.Session(sid).name == sid


_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def _valid_id(sid: str) -> bool:
    return (
        1 <= len(sid) <= 64
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in sid)
        and sid[0] != "-"
    )


@pytest.mark.req("MN-REQ-10")
@VER
@given(
    st.one_of(
        st.text(max_size=70),
        st.text(st.sampled_from("az09-Z_/.\n é١"), max_size=70),
        st.from_regex(_ID_RE, fullmatch=True),
    )
)
def test_session_id_rule_is_exactly_the_spec(sid: str) -> None:
    if _valid_id(sid):
        assert memnet.Session(sid).name == sid
    else:
        with pytest.raises(memnet.InvalidSessionId):
            memnet.Session(sid)


# --------------------------------------------------------------------------- MN-REQ-08


@pytest.mark.req("MN-REQ-08", "MN-REQ-15")
@pytest.mark.parametrize(
    "text,line,column",
    [
        ("INSERT (a:TSK {title: 'x'})\nINSERT (b:TSK {title: })", 2, 23),
        ("INSERT (a:TSK)\n\n   SET a.x = )", 3, 14),
        ("INSERT (a:TSK {t: 'multi\nline'}), (b:tsk)", 2, 13),
        ("INSERT (a:TSK {v: 1e999})", 1, 19),
        ("INSERT (a:TSK {t: 'abc})", 1, 19),
        ("INSERT (a:TSK {t: 'a\\x'})", 1, 21),
        ("INSERT (a:TSK)-[:T]-(b:TSK)", 1, 19),
        ("// comment\n/* block\ncomment */ INSERT (a:TSK {x: [[1]]})", 3, 31),
        ("INSERT (a:TSK {x: 1, x: 2})", 1, 22),
        ("SET", 1, 4),
    ],
)
def test_syntax_errors_point_at_line_and_column(text: str, line: int, column: int) -> None:
    s = memnet.Session("syntax")
    with pytest.raises(memnet.GQLSyntaxError) as info:
        s.commit(text)
    err = info.value
    assert err.code == "gql_syntax"
    assert (err.line, err.column) == (line, column), str(err)
    assert f"line {line}, column {column}" in str(err)
    assert err.to_dict()["line"] == line and err.to_dict()["column"] == column
    assert s.version == 0 and s.to_networkx().number_of_nodes() == 0


@pytest.mark.req("MN-REQ-08")
@VER
@given(st.integers(1, 200), st.integers(0, 30))
def test_syntax_error_after_a_long_valid_prefix(n: int, pad: int) -> None:
    s = memnet.Session("syntax")
    lines = [f"INSERT (t{i}:TSK {{title: 'task {i}'}})" for i in range(n)]
    bad = " " * pad + "SET t0.title = 'x' t1"
    with pytest.raises(memnet.GQLSyntaxError) as info:
        s.commit("\n".join(lines + [bad]))
    assert (info.value.line, info.value.column) == (n + 1, bad.index("t1") + 1)
    assert s.version == 0


@pytest.mark.req("MN-REQ-08")
def test_input_caps() -> None:
    s = memnet.Session("caps")
    assert memnet.parse_delta("INSERT " + "(" * 0 + "(a:TSK {l: [1]})")  # depth 3 is fine
    with pytest.raises(memnet.InputTooLarge):
        s.commit("INSERT (a:TSK {l: " + "[" * 17 + "]" * 17 + "})")
    # brackets inside strings and comments do not count as nesting
    r = s.commit("// (((((((((((((((((((\nINSERT (a:TSK {t: '" + "(" * 40 + "'})")
    assert r.changed
    with pytest.raises(memnet.InputTooLarge):
        s.recall("q" * 4097)
    with pytest.raises(memnet.InputTooLarge):
        s.commit("INSERT (a:TSK {t: '" + "x" * (4 * 1024 * 1024) + "'})")
    assert s.version == 1


# --------------------------------------------------------------------------- MN-REQ-04


@pytest.mark.req("MN-REQ-04", "MN-REQ-03")
def test_echoing_a_shape_is_refused_and_set_is_the_way() -> None:
    s, ids = _session()
    sh = s.recall("TSK")
    with pytest.raises(memnet.EchoRefused) as info:
        s.commit(sh.text)
    assert info.value.code == "echo_refused"
    assert "SET" in str(info.value)
    assert s.version == 1
    # a bare handle in an edge is a reference, not an echo
    r = s.commit(f"INSERT (d:DEC {{title: 'decided'}})-[:SATISFIES]->({ids['t']})")
    assert r.changed and set(r.ids) == {"d"}
    r = s.commit(f"SET {ids['t']}.status = 'done'")
    assert r.changed
    # an edge handle cannot be re-inserted either
    with pytest.raises(memnet.MemNetError):
        s.commit(f"INSERT (a:DEC)-[{ids['e']}:TOUCHES]->({ids['m']})")


# --------------------------------------------------------------------------- MN-REQ-09


@pytest.mark.req("MN-REQ-09", "MN-REQ-03")
def test_rate_cap_refuses_growth_with_advice() -> None:
    s = memnet.Session("capped", caps=memnet.Caps(rows=5))
    ids = s.commit("INSERT (a:TSK {title: 'a'}), (b:MOD {path: 'b'}), (a)-[e:TOUCHES]->(b)").ids
    r = s.commit("INSERT (c:DEC {title: 'c'}), (d:DEC {title: 'd'})")  # 5 rows: at the cap
    assert r.changed and r.advice and "session" in r.advice
    with pytest.raises(memnet.CapExceeded) as info:
        s.commit("INSERT (x:DEC {title: 'one too many'})")
    err = info.value
    assert err.code == "cap_exceeded"
    assert "new session" in str(err)
    assert s.version == 2 and s.stats()["rows"] == 5
    assert any("new session" in a for a in s.recall("TSK").receipt.advice)
    # shrinking is always allowed, and then there is room again
    s.commit(f"DELETE {ids['e']}")
    s.commit("INSERT (x:DEC {title: 'fits now'})")
    assert s.stats()["rows"] == 5


@pytest.mark.req("MN-REQ-09")
def test_byte_cap_refuses_growth() -> None:
    s = memnet.Session("bytes", caps=memnet.Caps(rows=1000, bytes=400))
    s.commit("INSERT (a:TSK {title: 'small'})")
    with pytest.raises(memnet.CapExceeded):
        s.commit("INSERT (b:DEC {note: '" + "x" * 500 + "'})")
    assert s.version == 1 and s.stats()["nodes"] == 1
