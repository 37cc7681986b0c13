"""Parser of the shaped GQL dialect: every statement form, every error, the caps."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memnet.errors import GQLSyntaxError, InputTooLarge, MemNetError
from memnet.gql import parse, parse_delta, parse_query
from memnet.gql.ast import (
    Delete,
    Delta,
    EdgePattern,
    Insert,
    NodePattern,
    Pos,
    RemoveLabel,
    RemoveNick,
    RemoveProp,
    SeedQuery,
    SetLabel,
    SetNick,
    SetProp,
    Settle,
)
from memnet.gql.parse import MAX_DELTA_CHARS, MAX_DEPTH, MAX_QUERY_CHARS

pytestmark = pytest.mark.req("MN-REQ-07")


def one(text: str):
    (stmt,) = parse_delta(text).statements
    return stmt


def syntax_error(text: str, query: bool = False) -> GQLSyntaxError:
    with pytest.raises(GQLSyntaxError) as info:
        parse_query(text) if query else parse(text)
    err = info.value
    assert err.code == "gql_syntax"
    assert isinstance(err.line, int) and isinstance(err.column, int)
    assert err.context and "^" in err.context
    return err


# --------------------------------------------------------------------------- INSERT


def test_insert_node_full_pattern():
    ins = one("INSERT (t:TSK&URGENT #pricing {status: 'open', prio: 2})")
    assert ins == Insert(
        (NodePattern("t", ("TSK", "URGENT"), (("status", "open"), ("prio", 2)), "pricing"),), ()
    )
    assert ins.pos == Pos(1, 1)
    assert ins.nodes[0].pos == Pos(1, 8)


def test_insert_colon_label_synonym():
    assert one("INSERT (t:TSK:URGENT:X)").nodes[0].labels == ("TSK", "URGENT", "X")
    assert one("INSERT (t:TSK&URGENT:X)").nodes[0].labels == ("TSK", "URGENT", "X")


def test_insert_node_parts_optional():
    ins = one("INSERT (a), (:TSK), (#nick), ({x: 1}), ()")
    assert [n.var for n in ins.nodes] == ["a", "_anon1", "_anon2", "_anon3", "_anon4"]
    assert ins.nodes[0].bare and ins.nodes[4].bare
    assert ins.nodes[2].nick == "nick"
    assert ins.nodes[3].props == (("x", 1),)


def test_insert_paths_and_direction():
    ins = one("INSERT (a:TSK)-[e:TOUCHES {w: 2}]->(b:MOD)<-[:CONTAINS]-(c:PKG), (a)-[:X]->(n1a)")
    assert [n.var for n in ins.nodes] == ["a", "b", "c", "n1a"]
    assert ins.nodes[3].bare
    assert ins.edges == (
        EdgePattern("e", "TOUCHES", "a", "b", (("w", 2),)),
        EdgePattern(None, "CONTAINS", "c", "b"),
        EdgePattern(None, "X", "a", "n1a"),
    )
    assert ins.edges[0].pos == Pos(1, 15)
    assert ins.edges[1].pos == Pos(1, 43)


def test_insert_bare_then_defined_keeps_first_position():
    ins = one("INSERT (a)-[:R]->(b), (b:TSK {x: 1}), (a:MOD)")
    assert [n.var for n in ins.nodes] == ["a", "b"]
    assert ins.nodes[0].labels == ("MOD",)
    assert ins.nodes[1] == NodePattern("b", ("TSK",), (("x", 1),))
    assert ins.nodes[1].pos == Pos(1, 23)


def test_anonymous_nodes_numbered_per_delta():
    d = parse_delta("INSERT (:A)-[:R]->(:B)\nINSERT (:C)")
    assert [n.var for n in d.statements[0].nodes] == ["_anon1", "_anon2"]
    assert d.statements[0].edges[0].src == "_anon1"
    assert d.statements[1].nodes[0].var == "_anon3"
    again = parse_delta("INSERT (:C)")
    assert again.statements[0].nodes[0].var == "_anon1"


@pytest.mark.parametrize(
    "text, line, column, word",
    [
        ("INSERT (a:T),\n  (a:T)", 2, 3, "defined twice"),
        ("INSERT (a {x: 1})-[:R]->(a #n)", 1, 25, "defined twice"),
        ("INSERT (a:T)\nINSERT (a:U)", 2, 8, "defined twice"),
        ("INSERT (a)-[e:R]->(b), (b)-[e:R]->(a)", 1, 27, "defined twice"),
        ("INSERT (e)-[e:R]->(b)", 1, 11, "defined twice"),
        ("INSERT (a)-[e:R]->(b), (e)", 1, 24, "already an edge"),
        ("INSERT (_anon1:T)", 1, 9, "reserved"),
    ],
)
def test_insert_variable_errors(text, line, column, word):
    err = syntax_error(text)
    assert (err.line, err.column) == (line, column)
    assert word in err.message


def test_bare_reference_after_definition_in_other_insert():
    d = parse_delta("INSERT (a:T)\nINSERT (a)-[:R]->(b)")
    assert d.statements[1].nodes[0] == NodePattern("a")


# --------------------------------------------------------------------------- values


def test_values():
    ins = one(
        "INSERT (a {s: 'x', i: 42, n: -7, f: 1.5, g: -2e3, h: 2.5E-3, t: true, "
        "u: FALSE, l: [1, 'two', 3.0, false], e: []})"
    )
    assert dict(ins.nodes[0].props) == {
        "s": "x",
        "i": 42,
        "n": -7,
        "f": 1.5,
        "g": -2000.0,
        "h": 0.0025,
        "t": True,
        "u": False,
        "l": (1, "two", 3.0, False),
        "e": (),
    }
    props = dict(ins.nodes[0].props)
    assert type(props["i"]) is int and type(props["g"]) is float


def test_string_escapes():
    text = r"INSERT (a {s: 'a\\b\'c\nd\re\tf\u00e9\u20AC''g', u: 'émoji 😀 ok'})"
    props = dict(one(text).nodes[0].props)
    assert props["s"] == "a\\b'c\nd\re\tf\u00e9\u20ac'g"
    assert props["u"] == "émoji 😀 ok"
    assert dict(one("INSERT (a {s: '', t: ''''})").nodes[0].props) == {"s": "", "t": "'"}


def test_raw_newline_inside_string_keeps_line_numbers():
    d = parse_delta("INSERT (a {s: 'one\ntwo'})\nSET b.x = 1")
    assert d.statements[0].nodes[0].props == (("s", "one\ntwo"),)
    assert d.statements[1].pos == Pos(3, 5)


@pytest.mark.parametrize(
    "text, line, column, word",
    [
        ("SET a.x = 1,\n  b.y = 'a\\qb'", 2, 11, "unknown escape"),
        ("SET a.x = '\\u12g4'", 1, 12, "four hex digits"),
        ("SET a.x = 'abc", 1, 11, "unterminated string"),
        ("SET a.x = null", 1, 11, "null"),
        ("SET a.x = [1, [2]]", 1, 15, "nested"),
        ("SET a.x = [[1]]", 1, 12, "nested"),
        ("SET a.x = 1e999", 1, 11, "out of range"),
        ("SET a.x = 1" + "0" * 5000, 1, 11, "too long"),
        ("SET a.x = .5", 1, 11, "unexpected"),
        ("INSERT (a {x: 1,\n y: 2,\n x: 3})", 3, 2, "duplicate property key 'x'"),
        ("INSERT (a {x: 1,})", 1, 17, "expected a name"),
    ],
)
def test_value_errors(text, line, column, word):
    err = syntax_error(text)
    assert (err.line, err.column) == (line, column), err.message
    assert word in err.message


# --------------------------------------------------------------------------- SET, REMOVE, ...


def test_set_remove_delete_settle():
    d = parse_delta(
        "SET n1a.status = 'done', n1a:DONE, n1a #fin\n"
        "REMOVE n1a.draft, n1a:URGENT, n1a #old;\n"
        "DELETE a, b; SETTLE t1, t2"
    )
    assert d.statements == (
        SetProp("n1a", "status", "done"),
        SetLabel("n1a", "DONE"),
        SetNick("n1a", "fin"),
        RemoveProp("n1a", "draft"),
        RemoveLabel("n1a", "URGENT"),
        RemoveNick("n1a", "old"),
        Delete("a"),
        Delete("b"),
        Settle("t1"),
        Settle("t2"),
    )
    assert [s.pos for s in d.statements] == [
        Pos(1, 5),
        Pos(1, 26),
        Pos(1, 36),
        Pos(2, 8),
        Pos(2, 19),
        Pos(2, 31),
        Pos(3, 8),
        Pos(3, 11),
        Pos(3, 21),
        Pos(3, 25),
    ]


def test_statement_separators_and_empty_delta():
    assert parse_delta("") == Delta(())
    assert parse_delta("  // only a comment\n/* and\nanother */ ") == Delta(())
    assert parse_delta(";;") == Delta(())
    d = parse_delta("DELETE a;;SETTLE b DELETE c")
    assert d.statements == (Delete("a"), Settle("b"), Delete("c"))


def test_keywords_are_case_insensitive_and_contextual():
    d = parse_delta(
        "insert (set:SET {limit: 1, match: true, delete: 'x'})-[:CONTAINS]->(b)\n"
        "Set set.insert = 2 delete delete"
    )
    ins = d.statements[0]
    assert ins.nodes[0] == NodePattern(
        "set", ("SET",), (("limit", 1), ("match", True), ("delete", "x"))
    )
    assert ins.edges[0].type == "CONTAINS"
    assert d.statements[1:] == (SetProp("set", "insert", 2), Delete("delete"))


@pytest.mark.parametrize(
    "text",
    [
        "INSERT(a)",
        "SET a.x=1",
        "DELETE a,b",
        "settle t",
    ],
)
def test_keywords_need_no_space_before_punctuation(text):
    assert parse_delta(text).statements


@pytest.mark.parametrize(
    "text, line, column",
    [
        ("DELETEa", 1, 1),
        ("SET a.x = 1\nSETTLEb", 2, 1),
        ("INSERT (a {x: truex})", 1, 15),
        ("MATCH (n) LIMIT5", 1, 11),
        ("MATCH (n) WHERE n.x = 1 ANDn.y = 2", 1, 25),
    ],
)
def test_keyword_word_boundaries(text, line, column):
    err = syntax_error(text)
    assert (err.line, err.column) == (line, column), err.message


def test_comments_anywhere_whitespace_goes():
    d = parse_delta(
        "// receipt: session=x\nINSERT /* a */ (a /* b */ :T /* c */ {x: /* d */ 1}) "
        "// tail\n -[/*e*/:R]-> (b) /* f */ ; // end"
    )
    ins = d.statements[0]
    assert ins.nodes[0] == NodePattern("a", ("T",), (("x", 1),))
    assert ins.edges[0] == EdgePattern(None, "R", "a", "b")
    assert one("SET a.x = '// not /* a comment */'").value == "// not /* a comment */"


@pytest.mark.parametrize(
    "text, line, column, word",
    [
        ("INSERT (a:tsk)", 1, 11, "upper case"),
        ("INSERT (a:Tsk)", 1, 11, "upper case"),
        ("INSERT (a)-[:touches]->(b)", 1, 14, "upper case"),
        ("SET a:done", 1, 7, "upper case"),
        ("INSERT (a)-[:R]-(b)", 1, 15, "undirected"),
        ("INSERT (a)<-[:R]->(b)", 1, 18, "one direction"),
        ("INSERT (a)-[e]->(b)", 1, 14, "needs a type"),
        ("INSERT (a)-[]->(b)", 1, 13, "needs a type"),
        ("INSERT (a)-[:R&S]->(b)", 1, 15, "exactly one type"),
        ("INSERT (a #Nick)", 1, 11, "nick"),
        ("INSERT (a) /* open", 1, 12, "unterminated /* comment"),
        ("INSERT (a", 1, 10, "end of input"),
        ("INSERT\n  (a),\n  (b)\n  (c)", 4, 3, "expected"),
        ("SET a.x", 1, 8, "end of input"),
        ("SET a = 1", 1, 7, "unexpected"),
        ("REMOVE a.x = 1", 1, 12, "unexpected"),
        ("DELETE", 1, 7, "expected a name"),
        ("UPDATE a", 1, 1, "expected a statement"),
        ("INSERT (a) x", 1, 12, "unexpected 'x'"),
        ("SET a.x = 1,", 1, 13, "end of input"),
        ("INSERT (a:T)$", 1, 13, "unexpected character '$'"),
    ],
)
def test_syntax_errors_with_position(text, line, column, word):
    err = syntax_error(text)
    assert (err.line, err.column) == (line, column), err.message
    assert word in err.message
    assert f"line {line}, column {column}" in str(err)


def test_multiline_error_context():
    text = "INSERT (a:TSK {title: 'x'}),\n       (b:MOD {path: 'p'})\nSET b.size = nul"
    err = syntax_error(text)
    assert (err.line, err.column) == (3, 14)
    assert err.context.splitlines()[0] == "SET b.size = nul"
    assert err.context.splitlines()[1] == " " * 13 + "^"
    assert err.to_dict()["line"] == 3 and err.to_dict()["column"] == 14


# --------------------------------------------------------------------------- queries


def test_match_form():
    q = parse_query(
        "MATCH (n:TSK&URGENT #focus {status: 'open'}) WHERE n.title CONTAINS 'pricing' "
        "AND n.prio = 2 AND n.body CONTAINS 'page' LIMIT 3"
    )
    assert q == SeedQuery(
        kind="TSK",
        labels=("URGENT",),
        props=(("status", "open"), ("prio", 2)),
        contains=(("title", "pricing"), ("body", "page")),
        nick="focus",
        limit=3,
        form="match",
    )


@pytest.mark.parametrize("tail", ["", " RETURN n", " LIMIT 4 RETURN n", " RETURN n LIMIT 4"])
def test_match_return_optional(tail):
    q = parse_query("match (n:TSK)" + tail)
    assert q.kind == "TSK" and q.form == "match"
    assert q.limit == (4 if "LIMIT" in tail else None)


def test_parse_dispatches_on_match():
    assert isinstance(parse("  // hi\n /* x */ Match (n:TSK)"), SeedQuery)
    assert isinstance(parse("INSERT (a)"), Delta)
    with pytest.raises(GQLSyntaxError) as info:
        parse("MATCHED (n)")  # not the MATCH keyword: read as a delta
    assert "expected a statement" in info.value.message


@pytest.mark.parametrize(
    "text, line, column, word",
    [
        ("MATCH (n:TSK) WHERE m.x = 1", 1, 21, "variable m is not the MATCH variable n"),
        ("MATCH (n:TSK)\nRETURN m", 2, 8, "variable m"),
        ("MATCH (:TSK) WHERE n.x = 1", 1, 20, "no variable"),
        ("MATCH (n) LIMIT 0", 1, 17, "at least 1"),
        ("MATCH (n) LIMIT -3", 1, 17, "at least 1"),
        ("MATCH (n {x: 1}) WHERE n.x = 2", 1, 26, "duplicate property key 'x'"),
        ("MATCH (n) WHERE n.x CONTAINS 3", 1, 30, "quoted string"),
        ("MATCH (n) LIMIT 2 LIMIT 3", 1, 19, "unexpected"),
        ("MATCH (n)-[:R]->(m)", 1, 10, "unexpected"),
        ("MATCH", 1, 6, "end of input"),
    ],
)
def test_match_errors(text, line, column, word):
    err = syntax_error(text, query=True)
    assert (err.line, err.column) == (line, column), err.message
    assert word in err.message


def test_codebook_form():
    q = parse_query(
        "TSK URGENT status:open prio:2 w:1.5 done:true title~'pricing page' "
        "pricing 'two words' #focus v1.2-beta limit:3 name:'it''s' n:-4"
    )
    assert q == SeedQuery(
        kind="TSK",
        labels=("URGENT",),
        props=(
            ("status", "open"),
            ("prio", 2),
            ("w", 1.5),
            ("done", True),
            ("limit", 3),
            ("name", "it's"),
            ("n", -4),
        ),
        keywords=("pricing", "two words", "v1.2-beta"),
        contains=(("title", "pricing page"),),
        nick="focus",
        form="codebook",
    )


def test_codebook_odd_words_are_keywords():
    q = parse_query("Pricing x_y a-b 3 3.5 true :x a: http://x TSK-1")
    assert q.kind is None
    assert q.keywords == ("Pricing", "x_y", "a-b", "3", "3.5", "true", ":x", "a:", "TSK-1")
    assert q.props == (("http", "//x"),)


@pytest.mark.parametrize("q", ["", "   ", "\n\t", "// just a comment"])
def test_empty_query(q):
    assert parse_query(q) == SeedQuery()
    assert parse_query(q).empty


@pytest.mark.parametrize(
    "text, column, word",
    [
        ("TSK foo#bar", 5, "separated by spaces"),
        ("TSK a:'open", 5, "unterminated string"),
        ("TSK #a #b", 8, "at most one #nick"),
        ("TSK a:1 a:2", 9, "duplicate property key 'a'"),
        ("TSK #Bad", 5, "nick"),
        ("TSK x:'\\q'", 8, "unknown escape"),
    ],
)
def test_codebook_errors(text, column, word):
    err = syntax_error(text, query=True)
    assert (err.line, err.column) == (1, column), err.message
    assert word in err.message


def test_parse_query_is_cached_and_deterministic():
    a = parse_query("TSK status:open pricing")
    assert parse_query("TSK status:open pricing") is a


def test_non_text_input_is_a_memnet_error():
    for fn in (parse, parse_delta, parse_query):
        with pytest.raises(MemNetError):
            fn(None)  # type: ignore[arg-type]
        with pytest.raises(MemNetError):
            fn(["INSERT"])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- caps


@pytest.mark.req("MN-REQ-08")
def test_size_caps():
    big = "INSERT " + "(a)" * ((5 * 1024 * 1024) // 3)
    assert len(big) > MAX_DELTA_CHARS
    for fn in (parse, parse_delta):
        with pytest.raises(InputTooLarge) as info:
            fn(big)
        assert info.value.code == "input_too_large"
    with pytest.raises(InputTooLarge):
        parse_query("word " * 1000)
    with pytest.raises(InputTooLarge):
        parse("MATCH (n) " + " " * MAX_QUERY_CHARS)
    parse_query("x" * MAX_QUERY_CHARS)


@pytest.mark.req("MN-REQ-08")
@pytest.mark.parametrize("opener", ["[", "(", "{", "([{"])
def test_depth_cap(opener):
    text = "INSERT (a {x: " + opener * 10_000
    with pytest.raises(InputTooLarge):
        parse_delta(text)
    with pytest.raises(InputTooLarge):
        parse_query("MATCH " + opener * 1000)
    with pytest.raises(InputTooLarge):
        parse(opener * 10_000)


@pytest.mark.req("MN-REQ-08")
def test_depth_ignores_strings_and_comments():
    deep = "(" * 40
    d = parse_delta(f"SET a.x = '{deep}' // {deep}\n/* {deep} */ SET a.y = 1")
    assert len(d.statements) == 2
    # closers with nothing open do not lower the floor
    with pytest.raises(InputTooLarge):
        parse_delta(")" * 50 + "(" * (MAX_DEPTH + 1))
    with pytest.raises(GQLSyntaxError):
        parse_delta("(" * MAX_DEPTH)


@pytest.mark.req("MN-REQ-08")
@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ("INSERT (a {x: '" + "a" * 3_000_000, "unterminated string"),
        ("INSERT (a {x: '" + "\\a" * 1_500_000, "unterminated string"),
        ("INSERT (a) /*" + "*" * 3_000_000, "unterminated /* comment"),
        ("SET a.x = " + "''" * 1_500_000, None),  # one string of quotes: valid
        ("SET a.x = " + "'" * 3_000_001, "unterminated string"),
        (" " * 3_000_000 + "x", "unexpected 'x'"),
        ("//\n" * 1_000_000 + "x", "does not parse at 'x'"),
        ("SET a.x = '" + "\\n" * 1_500_000 + "'", None),
    ],
)
def test_pathological_text_is_refused_cleanly(text, outcome):
    # a coded syntax error that says what is wrong, never RecursionError or a
    # lark error, or a clean parse of what is valid; how long the worst inputs
    # take is measured in bench/parse_limits.py
    if outcome is None:
        assert len(parse(text).statements) == 1
    else:
        with pytest.raises(GQLSyntaxError, match=re.escape(outcome)):
            parse(text)


@pytest.mark.req("MN-REQ-08")
def test_token_dense_delta_is_read_whole_and_an_error_in_it_is_placed():
    from memnet.gql.parse import MAX_DELTA_TOKENS

    n = MAX_DELTA_TOKENS // 2 + 10
    # any valid Δ under the size cap is read, however many tokens it has
    d = parse_delta("DELETE " + ", ".join(["a"] * n))
    assert len(d.statements) == n
    # a long string literal is one token, not many
    d = parse_delta("SET a.x = '" + "w " * (MAX_DELTA_TOKENS * 2) + "'")
    assert len(d.statements) == 1
    # a syntax error in such a Δ is named by line and column (lark does not read it)
    text = "DELETE " + ",\n".join(["a"] * n) + " ?"
    with pytest.raises(GQLSyntaxError) as ei:
        parse_delta(text)
    assert ei.value.code == "gql_syntax"
    assert (ei.value.line, ei.value.column) == (n, 3)


@pytest.mark.req("MN-REQ-08")
def test_thousand_node_insert_parses():
    body = ",\n  ".join(
        f"(n{i}:TSK&URGENT #t{i} {{title: 'Task {i}', prio: {i}}})" for i in range(1000)
    )
    text = "INSERT\n  " + body
    d = parse_delta(text)
    assert len(d.statements[0].nodes) == 1000


# --------------------------------------------------------------------------- fuzz

_TOKENS = st.sampled_from(
    [
        "INSERT",
        "SET",
        "REMOVE",
        "DELETE",
        "SETTLE",
        "MATCH",
        "WHERE",
        "AND",
        "CONTAINS",
        "LIMIT",
        "RETURN",
        "true",
        "false",
        "null",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "-[",
        "]->",
        "<-[",
        "]-",
        ":",
        "&",
        ",",
        ".",
        "=",
        ";",
        "#nick",
        "#",
        "'s'",
        "'",
        "''",
        "\\",
        "1",
        "-2",
        "1.5",
        "2e3",
        "n",
        "n1a",
        "_anon1",
        "TSK",
        "x:1",
        "k~v",
        "//c\n",
        "/*",
        "*/",
        " ",
        "\n",
        "\t",
        "\u00e9",
        "\x00",
        "😀",
        "LIMIT5",
        "a:'b c'",
    ]
)


@pytest.mark.req("MN-REQ-08")
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_memnet_errors(text):
    for fn in (parse, parse_delta, parse_query):
        try:
            fn(text)
        except MemNetError:
            pass


@pytest.mark.req("MN-REQ-08")
@given(st.lists(_TOKENS, max_size=40))
def test_token_soup_raises_only_memnet_errors(tokens):
    for sep in ("", " "):
        text = sep.join(tokens)
        for fn in (parse, parse_delta, parse_query):
            try:
                fn(text)
            except GQLSyntaxError as err:
                assert err.line is not None and err.line >= 1 and err.column >= 1
            except MemNetError:
                pass


@pytest.mark.req("MN-REQ-15")
@pytest.mark.parametrize(
    "q",
    [
        "match:x",
        "MATCH:x alpha",
        "/* c */ match:x",
        "match~'a b'",
        "alpha match:x",
        "set:x",
        "limit:3",
    ],
)
def test_a_property_named_like_a_keyword_is_a_codebook_pair(q: str) -> None:
    """``match``, ``set`` and ``limit`` may be property keys: ``match:x`` is a
    key:value pair (not the MATCH form), and the normalised q reads back."""
    from memnet.gql.emit import format_query

    got = parse_query(q)
    assert got.form != "match" and got.props or got.contains or got.limit
    assert parse_query(format_query(got)) == got


@pytest.mark.req("MN-REQ-15")
@given(
    st.from_regex(r"[a-z][A-Za-z0-9]{0,20}", fullmatch=True)
    | st.sampled_from(["match", "matchx", "matches", "mAtch1", "true", "limit", "set"])
)
def test_a_plain_word_q_reads_as_the_grammar_reads_it(word: str) -> None:
    """One plain word (the usual fresh q) skips the word typing; the query
    must be the one the grammar itself builds, and its normalised text the
    word. The word MATCH alone is the MATCH form, unfinished."""
    from memnet.gql.emit import format_query
    from memnet.gql.parse import _run

    if word.lower() == "match":
        with pytest.raises(GQLSyntaxError):
            parse_query(word)
        return
    want = _run(word, "codebook")
    got = parse_query(word)
    assert got == want and got.keywords == (word,)
    assert format_query(got) == word
