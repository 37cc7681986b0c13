"""The direct Δ reader (memnet.gql.fast) and lark read the same language:
on any text, the direct reader gives lark's tree (positions included) or
steps aside, and it never accepts what lark refuses."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

from memnet.errors import GQLSyntaxError
from memnet.gql.fast import fast_delta
from memnet.gql.parse import _run
from tests.gql.test_parse import _TOKENS
from tests.ver.strategies import VER, graph_specs

REQ = "MN-REQ-08"


def _with_positions(x: Any) -> Any:
    """A tree with every Pos made part of what is compared."""
    if is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple(_with_positions(getattr(x, f.name)) for f in fields(x))
    if isinstance(x, tuple):
        return tuple(_with_positions(v) for v in x)
    return x


def _lark(text: str) -> Any:
    try:
        return _run(text, "delta")
    except GQLSyntaxError:
        return None


def _same(text: str) -> None:
    fast = fast_delta(text)
    slow = _lark(text)
    if fast is not None:
        assert slow is not None, ("the direct reader accepts what lark refuses", text)
        assert _with_positions(fast) == _with_positions(slow), text


_GRAMMAR = Lark.open_from_package(
    "memnet.gql",
    "memnet.lark",
    ("",),
    parser="lalr",
    lexer="contextual",
    start=["delta", "seed", "codebook"],
)
_KW = ("INSERT", "SET", "REMOVE", "DELETE", "SETTLE", "TRUE", "FALSE")
_EXPLICIT = {k: st.sampled_from([f" {k} ", f" {k.lower()} ", f"\n{k.title()} "]) for k in _KW}
_EXPLICIT["BLANK"] = st.sampled_from([" ", "\n", "\t", "/* c */", "// c\n", " /**/\r\n", ""])


@pytest.mark.req(REQ)
@given(from_lark(_GRAMMAR, start="delta", explicit=_EXPLICIT))
def test_on_grammar_text_both_readers_agree(text: str) -> None:
    _same(text)
    assert fast_delta(text) is not None or _lark(text) is None, text


@pytest.mark.req(REQ)
@given(st.lists(_TOKENS, max_size=40).map("".join))
def test_on_token_soup_the_direct_reader_never_accepts_more(text: str) -> None:
    _same(text)


@pytest.mark.req(REQ)
@VER
@given(graph_specs(max_nodes=12, max_edges=16, min_nodes=1))
def test_session_sized_inserts_read_alike(spec: Any) -> None:
    from tests.ver.strategies import _insert_text

    text = _insert_text(spec, list(range(len(spec.nodes))), {}, list(enumerate(spec.edges)), set())
    _same(text)
    assert fast_delta(text) is not None, text


@pytest.mark.req(REQ)
@pytest.mark.parametrize(
    "text",
    [
        "",
        ";;",
        "INSERT (a:TSK)",
        "insert (a:TSK&X:Y #n-1 {k: 'v', l: [1, 2.5, true]})",
        "INSERT (a)-[e:T {w: -1}]->(b)<-[:U]-(c), (d)",
        "SET na1.k = 'it''s', na1:L, na1 #x REMOVE na1.k, na1:L, na1 #x "
        "DELETE na1, na2; SETTLE na3",
        "INSERT (a {s: 'tab\\tnew\\nline \\u00e9'})\n// comment\n/* block */ SET a.b = 1e3",
        "INSERT (x:TSK) INSERT (x:TSK)",  # defined twice: lark says so
        "INSERT (a {k: 1, k: 2})",  # duplicate key
        "INSERT (_anon1:TSK)",  # reserved
        "INSERT (a {s: 'bad \\q'})",  # unknown escape
        "INSERT (a)<-[:T]->(b)",  # two directions
        "INSERT (a {n: 1.5.3})",
        "INSERT (a {n: 99999999999999999999999999999})",
        "INSERT (a {x: 1e999})",
    ],
)
def test_examples_read_alike(text: str) -> None:
    _same(text)


# --------------------------------------------------------------------------- codebook

_CB_EXPLICIT = {"BLANK": st.sampled_from([" ", "  ", "\n", "\t", " // c\n", " /* c */ "])}
_CB_WORDS = st.sampled_from(
    [
        "TSK",
        "URGENT",
        "status:open",
        "prio:2",
        "w:1.5",
        "done:true",
        "rid:1.10",
        "title~pricing",
        "k:'a b'",
        "#cur",
        "#x_1",
        "pricing",
        "'two words'",
        "v1.2-beta",
        "a:b:c",
        "x~",
        "é",
        "it's",
        "C#",
        "status:",
        "n:-4",
        "n:1e3",
        "TSK:x",
        "prio:2",
        "#a",
        "#b",
    ]
)


def _lark_query(q: str, start: str = "codebook") -> Any:
    try:
        return _run(q, start)
    except GQLSyntaxError:
        return None


def _same_query(q: str) -> None:
    from memnet.gql.codebook import direct_codebook

    direct = direct_codebook(q)
    if direct is not None:
        assert direct == _lark_query(q), q


@pytest.mark.req(REQ)
@given(from_lark(_GRAMMAR, start="codebook", explicit=_CB_EXPLICIT))
def test_codebook_queries_read_alike(q: str) -> None:
    _same_query(q)


@pytest.mark.req(REQ)
@given(st.lists(_CB_WORDS, max_size=8).map(" ".join))
def test_codebook_word_soup_reads_alike(q: str) -> None:
    _same_query(q)


# --------------------------------------------------------------------------- MATCH form

_SEED_KW = ("MATCH", "WHERE", "AND", "CONTAINS", "LIMIT", "RETURN", "TRUE", "FALSE")
_SEED_EXPLICIT = {
    k: st.sampled_from([f" {k} ", f" {k.lower()} ", f"\n{k.title()} "]) for k in _SEED_KW
}
_SEED_EXPLICIT["BLANK"] = _EXPLICIT["BLANK"]
_SEED_WORDS = st.sampled_from(
    [
        "MATCH",
        "match",
        "(n:TSK)",
        "(n)",
        "(:TSK)",
        "(n:TSK&URGENT",
        "#cur",
        "{status: 'open'}",
        "{a: 1, a: 2}",
        ")",
        "WHERE",
        "where",
        "n.title",
        "m.title",
        "n.limit",
        "CONTAINS",
        "'pricing'",
        "'bad \\q'",
        "AND",
        "=",
        "2",
        "[1, 2]",
        "true",
        "LIMIT",
        "limit",
        "3",
        "0",
        "-1",
        "99999999999999999999999",
        "RETURN",
        "n",
        "m",
        "LIMIT5",
        "_anon1",
        "// c\n",
    ]
)


def _same_seed(q: str) -> None:
    from memnet.gql.fast import fast_seed

    direct = fast_seed(q)
    if direct is not None:
        assert direct == _lark_query(q, "seed"), q


@pytest.mark.req(REQ)
@given(from_lark(_GRAMMAR, start="seed", explicit=_SEED_EXPLICIT))
def test_match_queries_read_alike(q: str) -> None:
    """The direct reader gives lark's query on the grammar's own text, and
    reads all of it but what the transformer refuses."""
    from memnet.gql.fast import fast_seed

    _same_seed(q)
    assert fast_seed(q) is not None or _lark_query(q, "seed") is None, q


@pytest.mark.req(REQ)
@given(st.lists(_SEED_WORDS, max_size=14).map(" ".join))
def test_match_word_soup_reads_alike(q: str) -> None:
    _same_seed("MATCH " + q)
    _same_seed(q)
