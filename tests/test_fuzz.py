"""Fuzzing every place MemNet takes text from outside (Hypothesis, bounded for CI;
``bench/fuzz.py`` runs the long campaign): parse, Recall, Commit, the wire
splitter and slice files. Only a ``MemNetError`` may come out, a refused
Commit or Absorb leaves the session byte-identical, and a stream of statements
cut into arbitrary chunks splits into the same statements as the whole.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memnet import MemNetError, Session, export_working_memory_slice, import_slice
from memnet.faces.wire import Splitter
from memnet.gql.parse import parse, parse_delta, parse_query

pytestmark = pytest.mark.req("MN-REQ-15")
FUZZ = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TOKENS = [
    "INSERT",
    "SET",
    "REMOVE",
    "DELETE",
    "SETTLE",
    "MATCH",
    "WHERE",
    "CONTAINS",
    "LIMIT",
    "AND",
    "TSK",
    "MOD",
    "LAW",
    "TSK_2",
    "t",
    "m",
    "na1",
    "na2",
    "ea1",
    "_anon1",
    "title",
    "status",
    "'x'",
    "'it''s'",
    "'\\u00e9'",
    "'\\uD800'",
    "'\\uD83D\\uDE00'",
    "'\\q'",
    "'open",
    "0",
    "-1",
    "1.5",
    "1e309",
    "9223372036854775808",
    "true",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "-",
    "->",
    "<-",
    "-[",
    "]->",
    ";",
    ".",
    "=",
    "~",
    "#",
    "#p",
    "&",
    "'",
    "\\",
    "//",
    "/*",
    "*/",
    "\n",
    "\u2028",
    "\x00",
]
token_soup = st.lists(st.sampled_from(TOKENS), max_size=30).map(" ".join)
any_text = st.text(st.characters(codec=None), max_size=120)  # lone surrogates, NUL, all planes
texts = st.one_of(token_soup, any_text)


def state(s: Session) -> bytes:
    """The session as bytes: everything a Commit or an Absorb can change."""
    return pickle.dumps((s.version, s.store, s.history(), s.journal()))


def _reader() -> Session:
    s = Session("fz-read")
    s.commit(
        "INSERT "
        + ", ".join(
            f"(t{i}:TSK {{title: 'task {i} pricing', status: 'open', n: {i}}})-[:NEXT]->"
            f"(m{i}:MOD #m{i} {{path: 'm{i}.py'}})"
            for i in range(12)
        )
    )
    return s


READER = _reader()
SLICE = json.loads(export_working_memory_slice(READER, ["na1"], hops=1).to_json())


@FUZZ
@given(texts)
def test_parse_refuses_with_a_code_or_parses(text: str) -> None:
    for fn in (parse, parse_delta, parse_query):
        try:
            fn(text)
        except MemNetError:
            pass


knobs = st.fixed_dictionaries(
    {},
    optional={
        "k": st.integers(-2, 8),
        "max_rows": st.integers(-1, 502),
        "limit": st.integers(-1, 52),
        "fanout": st.integers(-1, 66),
        "view": st.sampled_from(["shell", "interior", "x", ""]),
        "laws": st.booleans(),
    },
)


@FUZZ
@given(st.one_of(texts, st.builds(lambda a, b: f"TSK {a} {b}", token_soup, any_text)), knobs)
def test_recall_refuses_with_a_code_or_answers(q: str, kw: dict[str, Any]) -> None:
    try:
        shape = READER.recall(q, **kw)
    except MemNetError:
        return
    assert shape.receipt.rows <= kw.get("max_rows", 50)


deltas = st.one_of(
    token_soup,
    any_text,
    st.builds(
        lambda head, body: f"{head} {body}",
        st.sampled_from(["INSERT", "SET na1.", "REMOVE na1.", "DELETE", "SETTLE"]),
        token_soup,
    ),
)


@FUZZ
@given(deltas)
def test_a_refused_commit_leaves_the_session_byte_identical(delta: str) -> None:
    s = Session("fz-write")
    s.commit("INSERT (t:TSK {title: 'x', status: 'open'})-[:T]->(m:MOD {path: 'a.py'})")
    before = state(s)
    try:
        s.commit(delta)
    except MemNetError:
        assert state(s) == before


statement = st.one_of(  # one statement each: no ';' outside a string or a comment
    st.sampled_from(
        [
            "PING",
            "SESSIONS",
            "RECALL TSK",
            "INSERT (t:TSK {title: 'a;b'})",
            "SET na1.x = 'it''s; here'",
            "RECALL 'x\\';y'",
            "// c;\nPING",
            "/* ; */ PING",
            "RECALL '日本;語'",
            "INSERT (t:TSK {e: '😀;'})",
        ]
    ),
    st.lists(
        st.sampled_from([t for t in TOKENS if not {";", "'", "/"} & set(t)]),
        min_size=1,
        max_size=12,
    ).map(" ".join),
)


@FUZZ
@given(
    st.lists(statement, max_size=8),
    st.lists(st.integers(1, 40), min_size=1, max_size=60),
    st.sampled_from(["", "'open", "/* open", "// tail", "  "]),
)
def test_the_wire_splitter_gives_the_same_statements_whatever_the_chunks(
    statements: list[str], cuts: list[int], tail: str
) -> None:
    data = ("".join(f"{s};" for s in statements) + tail).encode("utf-8", "surrogatepass")
    split = Splitter()
    got: list[Any] = []
    i = 0
    while i < len(data):
        for n in cuts:
            got += split.feed(data[i : i + n])
            i += n
    got += split.finish()
    # the splitter reads bytes: blank is ASCII blank (the wire skips the rest, see test_wire)
    want = [("stmt", b) for s in statements if (b := s.encode("utf-8", "surrogatepass")).strip()]
    assert got[: len(want)] == want
    # an unterminated string is refused at the end; an open comment holds no statement
    assert [kind for kind, _ in got[len(want) :]] == (["bad"] if tail == "'open" else [])


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)


def _mutated_slice(path: list[str], value: Any) -> Any:
    data = json.loads(json.dumps(SLICE))
    cur = data
    for key in path[:-1]:
        nxt = cur.get(key) if isinstance(cur, dict) else None
        if not isinstance(nxt, dict):
            break
        cur = nxt
    else:
        cur[path[-1]] = value
    return data


slices = st.one_of(
    texts,
    json_values,
    st.builds(
        _mutated_slice,
        st.lists(
            st.sampled_from(
                ["format", "provenance", "nodes", "edges", "session", "anchors", "version", "hops"]
            ),
            min_size=1,
            max_size=3,
        ),
        json_values,
    ),
)


@FUZZ
@given(slices, st.sampled_from(["remint", "keep", "reject", "x"]))
def test_a_refused_slice_leaves_the_lead_byte_identical(slc: Any, policy: str) -> None:
    lead = Session("fz-lead")
    lead.commit("INSERT (t:TSK {title: 'lead'})")
    before = state(lead)
    for form in (slc, json.dumps(slc, allow_nan=True) if not isinstance(slc, str) else slc):
        try:
            import_slice(lead, form, policy)
        except MemNetError:
            assert state(lead) == before
        else:
            before = state(lead)
