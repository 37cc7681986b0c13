"""MN-VER: which seeds MATCH_L picks (docs/math/seeding.md).

Properties: a node whose name equals q is a seed whenever at most L nodes have
that name, however the name and q are written (snake_case, camelCase,
spaces); the seeds do not depend on insertion order; index and query words
are split and stemmed alike. Examples: each term of the ranking does what the
formula says.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memnet
from memnet.graph.words import parts_of, stem, token_words, words_of
from tests.ver.strategies import VER

REL = "MN-REQ-06.1"

# words that share no stem with each other, none starting with n or e
VOCAB = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "pricing",
    "ledger",
)
IDENT = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3, unique=True)


def spell(parts: list[str], style: int) -> str:
    """One identifier written in one of several ways people write them."""
    if style == 0:
        return "_".join(parts)
    if style == 1:
        return parts[0] + "".join(p.title() for p in parts[1:])
    if style == 2:
        return "".join(p.title() for p in parts)
    if style == 3:
        return " ".join(parts)
    if style == 4:
        return "-".join(parts)
    return ".".join(parts)


def _session(nodes: list[str], name: str = "rel") -> tuple[memnet.Session, list[str]]:
    s = memnet.Session(name)
    ids = s.commit("INSERT " + ", ".join(f"(v{i}:{n})" for i, n in enumerate(nodes))).ids
    return s, [ids[f"v{i}"] for i in range(len(nodes))]


# --------------------------------------------------------------------------- properties


@pytest.mark.req(REL)
@VER
@given(
    target=IDENT,
    others=st.lists(IDENT, max_size=12),
    dup=st.integers(1, 7),
    style_n=st.integers(0, 5),
    style_q=st.integers(0, 5),
    limit=st.integers(1, 8),
    data=st.data(),
)
def test_a_node_named_q_is_a_seed_when_at_most_l_are(
    target, others, dup, style_n, style_q, limit, data
) -> None:  # type: ignore[no-untyped-def]
    """``dup`` nodes are named ``target`` (each written its own way); the rest
    have other names, and texts that mention the target's words. The named
    ones are seeds when there are at most L of them, and the seeds are all
    named ones otherwise."""
    nodes = []
    for i in range(dup):
        st_i = data.draw(st.integers(0, 5)) if i else style_n
        nodes.append(f"SYM {{name: '{spell(target, st_i)}', line: {i}}}")
    for o in others:
        if o == target:
            continue
        words = " ".join(o + target)
        nodes.append(f"SYM {{name: '{spell(o, 0)}', doc: 'about {words} and more {words}'}}")
    s, handles = _session(nodes)
    q = spell(target, style_q)
    if style_q == 3 and len(target) > 1:
        q = "'" + q + "'" if data.draw(st.booleans()) else q  # a phrase or separate keywords
    seeds = s.recall(q, limit=limit).receipt.seeds
    named = set(handles[:dup])
    if dup <= limit:
        assert named <= set(seeds), (q, nodes, seeds)
        assert list(seeds[:dup]) == [h for h in seeds if h in named]  # the name tier first
    else:
        assert set(seeds) <= named and len(seeds) == limit


@pytest.mark.req(REL, "MN-REQ-02")
@VER
@given(
    names=st.lists(IDENT, min_size=1, max_size=10),
    texts=st.lists(IDENT, max_size=10),
    q=IDENT,
    seed=st.integers(0, 2**16),
    limit=st.integers(1, 6),
)
def test_seeds_do_not_depend_on_insertion_order(names, texts, q, seed, limit) -> None:  # type: ignore[no-untyped-def]
    nodes = [f"DEC {{title: '{spell(n, 3)}'}}" for n in names]
    nodes += [f"TSK {{title: 'task', note: '{' '.join(t * 2)}'}}" for t in texts]
    order = list(range(len(nodes)))
    random.Random(seed).shuffle(order)
    a, ha = _session(nodes, "a")
    b, hb = _session([nodes[i] for i in order], "b")
    for query in (spell(q, 3), spell(q, 0), f"DEC {q[0]}", q[-1]):
        sa = a.recall(query, limit=limit).receipt
        sb = b.recall(query, limit=limit).receipt
        assert sa.matched == sb.matched
        # the same nodes (by what they hold), in the same order
        key_a = [a.store.node_key(int(h[2:], 36)) for h in sa.seeds]
        key_b = [b.store.node_key(int(h[2:], 36)) for h in sb.seeds]
        assert key_a == key_b, (query, key_a, key_b)


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)


@pytest.mark.req(REL)
@VER
@given(
    text=st.one_of(
        _TEXT,
        st.lists(
            st.sampled_from(
                VOCAB
                + (
                    "getUserName",
                    "HTTPServer2",
                    "shop/pricing.py",
                    "x.y-z_w",
                    "Rounding",
                    "persons",
                )
            ),
            max_size=6,
        ).map(" ".join),
    ),
    data=st.data(),
)
def test_index_and_query_split_and_stem_alike(text, data) -> None:  # type: ignore[no-untyped-def]
    """Any word the splitter finds in a stored text, asked as a keyword (in
    whatever case), finds the node; any run of its parts, asked as CONTAINS,
    finds it; and a word's stem is the stem of its casefolded form."""
    words = [w for w in words_of(text) if re.fullmatch(r"[^\W_]+", w)]
    parts = parts_of(text)
    s, (h,) = _session([f"DEC {{text: {_quote(text)}}}"])
    for w in words[:6]:
        for form in (w, w.upper()):
            r = s.recall(_quote(form)).receipt
            assert r.seed_mode == "match" and r.seeds == (h,), (text, form)
        assert stem(w.upper().casefold()) == stem(w)
    if parts:
        i = data.draw(st.integers(0, len(parts) - 1))
        j = data.draw(st.integers(i + 1, min(len(parts), i + 3)))
        needle = " ".join(parts[i:j])
        r = s.recall(f"MATCH (n:DEC) WHERE n.text CONTAINS {_quote(needle)}").receipt
        assert r.seeds == (h,), (text, needle)


_FIELD_WORDS = (
    "round",
    "rounding",
    "rounds",
    "Rounded",
    "ledger",
    "ledgers",
    "alpha",
    "getUserName",
    "shop/pricing.py",
    "HTTPServer2",
    "x",
    "7",
    "utf8",
    "persons",
    "LEDGER",
    "I",
    "McRound",
    "ABc",
)
_FIELD = st.lists(st.sampled_from(_FIELD_WORDS), max_size=9).map(" ".join)
_PROPS = st.dictionaries(
    st.sampled_from(("title", "name", "path", "text", "note", "lemmas", "prio")),
    st.one_of(_FIELD, st.lists(_FIELD, max_size=3).map(tuple), st.integers(0, 9)),
    max_size=5,
)


def _oracle_text_terms(props: dict[str, object]) -> set[bytes]:
    """The ``w`` and ``s`` terms of a property map, straight from the formula
    in docs/math/seeding.md: per field, each token adds the field's scale once
    to each distinct word and each distinct stem it gives; a word's impact is
    saturate(x_w) + STEM_WEIGHT * saturate(x_stem - x_w), a stem's
    STEM_WEIGHT * saturate(x_stem), each quantised; a word that is alone a
    name-like value gets the name flag."""
    from memnet.graph import words as W

    def sat(x: float) -> float:
        return x * (W.BM25_K1 + 1.0) / (x + W.BM25_K1)

    xw: dict[str, float] = {}
    xs: dict[str, float] = {}
    alone: set[str] = set()
    for key, v in props.items():
        strs = (
            [v]
            if isinstance(v, str)
            else [x for x in v if isinstance(x, str)]
            if isinstance(v, tuple)
            else []
        )
        named = key in W.NAME_KEYS
        if named:
            for x in strs:
                for nv in W._name_values(key, x):
                    if len(parts_of(nv)) == 1:
                        alone.add(parts_of(nv)[0])
        toks = [t for x in strs for t in W.tokens(x)]
        length = sum(len(token_words(t)[1]) for t in toks)
        if not length:
            continue
        avg, weight = (W.NAME_AVG, W.NAME_WEIGHT) if named else (W.TEXT_AVG, 1.0)
        scale = weight / (1.0 - W.BM25_B + W.BM25_B * length / avg)
        cw: dict[str, int] = {}
        cs: dict[str, int] = {}
        for t in toks:
            ws = token_words(t)[0]
            for w in ws:
                cw[w] = cw.get(w, 0) + 1
            for t_ in dict.fromkeys(x for x in map(stem, ws) if x is not None):
                cs[t_] = cs.get(t_, 0) + 1
        for w, c in cw.items():
            xw[w] = xw.get(w, 0.0) + c * scale
        for t_, c in cs.items():
            xs[t_] = xs.get(t_, 0.0) + c * scale
    out = set()
    for w, x in xw.items():
        st_ = stem(w)
        rest = xs.get(st_, 0.0) - x if st_ is not None else 0.0
        lv = W.quantise(sat(x) + (W.STEM_WEIGHT * sat(rest) if rest > 1e-12 else 0.0))
        out.add(b"w" + w.encode() + b"\x00" + bytes((lv + (W.NAME_FLAG if w in alone else 0),)))
    for t_, x in xs.items():
        out.add(b"s" + t_.encode() + b"\x00" + bytes((W.quantise(W.STEM_WEIGHT * sat(x)),)))
    return out


@pytest.mark.req(REL)
@VER
@given(props=_PROPS)
def test_word_impacts_follow_the_formula(props) -> None:  # type: ignore[no-untyped-def]
    """The index files a node under exactly the word and stem levels the
    formula gives, whether a word sits in one field or several, once or many
    times, in a name-like field or a text."""
    from memnet.graph.index import Index

    got = {t for t in Index.terms("DOC", (), props) if t[:1] in (b"w", b"s")}
    assert got == _oracle_text_terms(props), props


@pytest.mark.req(REL)
@VER
@given(
    text=st.one_of(
        _TEXT,
        st.lists(
            st.sampled_from(_FIELD_WORDS + ("A", "aB", "Ab", "AB", "abC", "r\u00e9sum\u00e9")),
            max_size=9,
        ).map(" ".join),
        st.text(st.sampled_from("aAbB rR.-_1"), max_size=30),
    )
)
def test_a_plain_field_is_counted_as_the_token_analysis_counts_it(text) -> None:  # type: ignore[no-untyped-def]
    """A field of plain words (the shortcut that skips the per-token
    analysis) gets the length, word counts and stem counts that analysis
    gives."""
    from memnet.graph import words as W

    W._field.cache_clear()
    want = W._counts([W._TOKS[t] for t in W.tokens(text)])
    assert W._field(text) == want, text


def _quote(t: str) -> str:
    return "'" + t.replace("\\", "\\\\").replace("'", "\\'") + "'"


# --------------------------------------------------------------------------- words


@pytest.mark.req(REL)
@pytest.mark.parametrize(
    "token, words, parts",
    [
        ("person", ("person",), ("person",)),
        ("Person", ("person",), ("person",)),
        ("HTTP", ("http",), ("http",)),
        (
            "betweenness_centrality",
            ("betweenness_centrality", "betweenness", "centrality"),
            ("betweenness", "centrality"),
        ),
        ("getUserName", ("getusername", "get", "user", "name"), ("get", "user", "name")),
        ("HTTPServer2", ("httpserver2", "http", "server", "2"), ("http", "server", "2")),
        (
            "shop/pricing.py",
            ("shop/pricing.py", "shop", "pricing", "py"),
            ("shop", "pricing", "py"),
        ),
        (
            "networkx.shortest_path",
            ("networkx.shortest_path", "networkx", "shortest_path", "shortest", "path"),
            ("networkx", "shortest", "path"),
        ),
        ("half-even", ("half-even", "half", "even"), ("half", "even")),
        ("1.1", ("1.1", "1"), ("1", "1")),
        ("utf8", ("utf8", "utf", "8"), ("utf", "8")),
        ("ÜberCoolTyp", ("übercooltyp", "über", "cool", "typ"), ("über", "cool", "typ")),
    ],
)
def test_tokens_split_into_words_and_parts(token, words, parts) -> None:  # type: ignore[no-untyped-def]
    assert token_words(token) == (words, parts)


@pytest.mark.req(REL)
def test_stems_meet_the_forms_people_type() -> None:
    assert stem("rounding") == stem("round")
    assert stem("persons") == stem("person")
    assert stem("entities") == stem("entity")
    assert stem("py") is None and stem("x2y") is None  # short or not all letters


# ------------------------------------------------------------------------ the ranking, term by term


@pytest.mark.req(REL)
def test_a_name_equal_to_the_phrase_comes_first() -> None:
    s, (gloss, word, syn) = _session(
        [
            "SYNSET {gloss: '(American football) the person who plays tailback'}",
            "WORD {lemma: 'person'}",
            "SYNSET {lemmas: ['person', 'individual', 'someone'], gloss: 'a human being'}",
        ]
    )
    seeds = s.recall("person", limit=2).receipt.seeds
    assert set(seeds) == {word, syn}
    assert s.recall("person").receipt.seeds[2] == gloss


@pytest.mark.req(REL)
def test_identifier_phrases_find_the_symbol() -> None:
    s, (f, g, m, other) = _session(
        [
            "SYM {name: 'betweenness_centrality', doc: 'Compute the shortest-path betweenness'}",
            "SYM {name: 'physical_entity'}",
            "MOD {path: 'networkx/algorithms/shortest_paths/generic.py'}",
            "DOC {title: 'Notes', text: 'centrality of a node and betweenness in general'}",
        ]
    )
    for q in (
        "betweenness centrality",
        "betweenness_centrality",
        "BetweennessCentrality",
        "'betweenness centrality'",
    ):
        assert s.recall(q).receipt.seeds[0] == f, q
    assert s.recall("entity").receipt.seeds == (g,)
    assert s.recall("generic").receipt.seeds[0] == m  # a path's file stem is a name
    assert s.recall("shortest_paths").receipt.seeds == (m,)
    assert other in s.recall("centrality").receipt.seeds


@pytest.mark.req(REL)
def test_an_exact_word_ranks_above_a_stem_only_match() -> None:
    s, (stem_only, exact) = _session(
        ["DEC {title: 'rounding rules'}", "DEC {title: 'round rules'}"]
    )
    assert s.recall("round").receipt.seeds == (exact, stem_only)
    assert s.recall("rounding").receipt.seeds == (stem_only, exact)
    s, (d,) = _session(["DEC {title: 'Round half-even'}"])
    assert s.recall("DEC rounding").receipt.seeds == (d,)


@pytest.mark.req(REL)
def test_a_short_name_field_outweighs_long_text() -> None:
    s, (long_text, named) = _session(
        [
            "MOD {doc: 'this module mentions ledger once among a great many other words that "
            "make it long'}",
            "MOD {name: 'ledger tools'}",
        ]
    )
    assert s.recall("ledger").receipt.seeds == (named, long_text)


@pytest.mark.req(REL)
def test_a_rare_word_weighs_more_than_a_common_one() -> None:
    common = [f"DEC {{title: 'cache note {i}'}}" for i in range(20)]
    s, hs = _session(common + ["DEC {title: 'cache'}", "DEC {title: 'quota'}"])
    # one node holds the common word, one the rare word, with the same length
    seeds = s.recall("cache quota", limit=1).receipt.seeds
    assert seeds == (hs[-1],)


@pytest.mark.req(REL)
def test_more_keywords_matched_then_live_tasks_then_canonical_order() -> None:
    s, (a, b, c) = _session(
        ["TSK {title: 'pricing'}", "TSK {title: 'pricing'}", "DEC {title: 'pricing'}"]
    )
    s.commit(f"SETTLE {a}")
    # a is settled now: b (live) first; c and a are not live tasks: canonical order
    seeds = s.recall("pricing").receipt.seeds
    assert seeds[0] == b


@pytest.mark.req(REL, "MN-REQ-12")
def test_a_settled_task_leaves_the_open_view() -> None:
    s, (t, u) = _session(
        [
            "TSK {title: 'fix rounding', status: 'open'}",
            "TSK {title: 'fix rounding later', status: 'open'}",
        ]
    )
    s.commit(f"SETTLE {t}")
    line = next(x for x in s.recall("TSK settled:true").text.splitlines() if f"({t}:" in x)
    assert "settled: true" in line and "status: 'settled'" in line
    assert s.recall("TSK status:open").receipt.seeds == (u,)
    assert s.recall("TSK settled:true").receipt.seeds == (t,)
    assert s.recall("TSK status:settled").receipt.seeds == (t,)
    # a settled task whose status is set to 'open' again still does not pass
    s.commit(f"SET {t}.status = 'open'")
    assert s.recall("TSK status:open").receipt.seeds == (u,)
    # keywords still find it (BM25 ranks before the live-task preference)
    assert set(s.recall("TSK rounding").receipt.seeds) == {t, u}


_FORMS = (
    "round",
    "rounds",
    "rounding",
    "rounded",
    "price",
    "prices",
    "pricing",
    "ledger",
    "ledgers",
    "alpha",
)


@pytest.mark.req(REL)
@VER
@given(
    nodes=st.lists(
        st.tuples(
            st.sampled_from(("TSK", "DEC", "REQ")),
            st.lists(st.sampled_from(_FORMS), min_size=1, max_size=4),
            st.lists(st.sampled_from(_FORMS), max_size=8),
            st.booleans(),
        ),
        min_size=1,
        max_size=25,
    ),
    word=st.sampled_from(_FORMS),
    kind=st.sampled_from((None, "TSK", "DEC")),
    limit=st.integers(1, 8),
)
def test_the_one_word_ranking_is_the_general_ranking(nodes, word, kind, limit) -> None:  # type: ignore[no-untyped-def]
    """A one-word q takes a shortcut (its tiers read from the top, stopping
    once L seeds are found); it gives the seeds and the match count of the
    general ranking."""
    from memnet.gql.parse import parse_query
    from memnet.recall import seed as S

    rows = []
    for i, (k, title, text, _settled) in enumerate(nodes):
        status = ", status: 'open'" if k == "TSK" else ""
        rows.append(f"{k} {{title: '{' '.join(title)}', text: '{' '.join(text)}', n: {i}{status}}}")
    s, handles = _session(rows)
    for h, (k, _t, _x, settled) in zip(handles, nodes, strict=True):
        if settled and k == "TSK":
            s.commit(f"SETTLE {h}")
    q = parse_query(f"{kind} {word}" if kind else word)
    kws = S._keywords(q)
    filt = S._Filters(s.store, q)
    fast = S._match_one_word(s.store, filt, S.Word(s.store, kws[0].words[0]), limit)
    full = S._match_general(s.store, filt, kws, limit)
    assert (fast.seeds, fast.matched) == (full.seeds, full.matched), (rows, q)


@pytest.mark.req(REL)
@given(
    nodes=st.lists(
        st.tuples(st.booleans(), st.sampled_from(("2", "'2'", "3"))), min_size=1, max_size=120
    ),
    word_at=st.sets(st.integers(0, 119), max_size=6),
)
def test_property_filters_read_alike_from_postings_and_sets(nodes, word_at) -> None:  # type: ignore[no-untyped-def]
    """A property filter over a few candidates bisects the postings; over
    many it reads a set. Both keep the nodes a brute-force pass keeps, and a
    filter alone drives the match from its posting (``prio:2`` also finds
    the string ``'2'``)."""
    rows, want = [], []
    for i, (is_open, prio) in enumerate(nodes):
        word = " quokka" if i in word_at else ""
        status = "open" if is_open else "done"
        rows.append(f"TSK {{title: 'task {i}{word}', status: '{status}', prio: {prio}}}")
        if is_open and word and prio != "3":
            want.append(i)
    s, handles = _session(rows)
    got = s.recall("TSK status:open prio:2 quokka", limit=50).receipt
    assert got.matched == len(want)
    assert set(got.seeds) == {handles[i] for i in want}
    alone = s.recall("TSK status:done prio:2", limit=50).receipt
    assert alone.matched == sum(1 for o, p in nodes if not o and p != "3")


@pytest.mark.req(REL)
@given(
    prios=st.lists(st.sampled_from((2, "2", 3)), min_size=64, max_size=100),
    asked=st.lists(st.integers(1, 100), min_size=1, max_size=3),
)
def test_a_property_filter_bisects_postings_as_its_set_would_answer(prios, asked) -> None:  # type: ignore[no-untyped-def]
    from memnet.graph.index import prop_term
    from memnet.recall.seed import _Member

    rows = [f"TSK {{n: {i}, prio: {p!r}}}" for i, p in enumerate(prios)]
    s, _handles = _session(rows)
    idx = s.store.index
    terms = [prop_term("prio", "i", 2), prop_term("prio", "s", "2")]
    fresh, built = _Member(idx, terms), _Member(idx, terms)
    built.ids()  # reads from a set from now on
    assert fresh.size == sum(1 for p in prios if p != 3)
    assert (
        fresh.keep(list(asked))
        == built.keep(list(asked))
        == [n for n in asked if n <= len(prios) and prios[n - 1] != 3]
    )
    assert fresh._ids is None or len(asked) * 16 >= fresh.size  # it did bisect


@pytest.mark.req(REL)
@given(xs=st.floats(min_value=1e-6, max_value=1e12))
def test_no_stem_level_lies_above_the_levels_a_query_reads(xs) -> None:  # type: ignore[no-untyped-def]
    """A query reads a stem's tiers up to STEM_TOP only; the formula never
    puts a stem above it (and reaches it for a stem said often enough)."""
    from memnet.graph.words import STEM_TOP, _stem_level, stem_terms

    assert 1 <= _stem_level(xs) <= STEM_TOP
    assert _stem_level(1e12) == STEM_TOP
    assert [lv for lv, _t in stem_terms("round")] == list(range(STEM_TOP, 0, -1))


@pytest.mark.req(REL)
@given(x=st.floats(min_value=1e-6, max_value=1e9), extra=st.floats(min_value=0.0, max_value=1e9))
def test_a_words_exact_level_lies_in_the_span_its_stem_level_allows(x, extra) -> None:  # type: ignore[no-untyped-def]
    """A word said with pseudo-frequency x, its stem with xs >= x: the exact
    level is one a query looks up once it knows the stem's level."""
    from memnet.graph.words import _SPAN, NAME_FLAG, _exact_level, _stem_level

    xs = x + extra
    lv = _exact_level(x, xs if extra else 0.0)
    span = _SPAN[_stem_level(xs)]
    assert span >> lv & 1 and span >> (lv + NAME_FLAG) & 1


@pytest.mark.req(REL)
def test_the_span_holds_the_highest_exact_level_of_each_stem_level() -> None:
    """Over a fine grid of (x, xs), each stem level's span reaches the highest
    exact level seen with it (the peak lies inside (0, xs), where a random
    draw rarely lands)."""
    from memnet.graph.words import _SPAN, _exact_level, _stem_level

    top: dict[int, int] = {}
    for i in range(1, 2401):
        xs = 10 ** (-3 + 6 * i / 2400)
        for j in range(1, 101):
            x = xs * j / 100
            ls = _stem_level(xs)
            top[ls] = max(top.get(ls, 0), _exact_level(x, xs if j < 100 else 0.0))
    for ls, hi in top.items():
        assert _SPAN[ls] >> hi & 1
        assert not _SPAN[ls] >> (hi + 3) & 1 or hi + 3 > 32  # and not far past it


@pytest.mark.req(REL)
@VER
@given(
    texts=st.lists(
        st.lists(
            st.sampled_from(
                ("round", "rounds", "rounding", "rounded", "price", "prices", "priced", "ab", "x1")
            ),
            min_size=1,
            max_size=30,
        ),
        min_size=1,
        max_size=8,
    ),
    named=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_the_terms_a_query_looks_up_are_every_term_the_index_holds(texts, named) -> None:  # type: ignore[no-untyped-def]
    """present_terms (stem tiers first, then only the exact levels they allow)
    finds what looking up every possible level finds."""
    from memnet.graph.words import present_terms, stem, stem_terms, text_terms, word_terms

    have: set[bytes] = set()
    for i, words in enumerate(texts):
        key = ("title", "text")[named[i] is False]
        text_terms({key: " ".join(words), "note": " ".join(reversed(words[: i + 1]))}, have)
    for w in ("round", "rounds", "rounding", "rounded", "price", "priced", "ab", "x1", "zebra"):
        st_ = stem(w)
        x, s = present_terms(lambda _prefix: have, w)
        assert x == [(lv, t) for lv, t in word_terms(w) if t in have]
        assert s == ([(lv, t) for lv, t in stem_terms(st_) if t in have] if st_ else [])


_VOCAB = ("zebra", "quartz", "lemon", "graph", "test", "node", "edge", "alpha", "beta", "gamma")
# common words often, rare ones seldom: the skew of real postings
_SKEWED_WORD = st.sampled_from([3] * 8 + [4] * 6 + [5] * 4 + [6] * 3 + [7, 8, 9, 0, 1, 2])


def _skewed_rows(draw_words: list[list[int]], kinds: list[str]) -> list[str]:
    rows = []
    for i, (ws, k) in enumerate(zip(draw_words, kinds, strict=True)):
        title = " ".join(_VOCAB[w] for w in ws[:3]) or "empty"
        text = " ".join(_VOCAB[w] for w in ws[3:])
        status = ", status: 'open'" if k == "TSK" else ""
        rows.append(f"{k} {{title: '{title}', text: '{text}', n: {i}{status}}}")
    return rows


@pytest.mark.req(REL)
@VER
@given(
    words=st.lists(st.lists(_SKEWED_WORD, max_size=9), min_size=20, max_size=150),
    kinds=st.lists(st.sampled_from(("TSK", "DEC", "SYM")), min_size=150, max_size=150),
    qs=st.lists(st.lists(st.integers(0, 9), min_size=2, max_size=5), min_size=1, max_size=4),
    kind=st.sampled_from((None, "SYM")),
    limit=st.integers(1, 6),
    settle=st.sets(st.integers(0, 149), max_size=8),
)
def test_ranking_the_rarest_words_first_gives_the_whole_ranking(
    words,
    kinds,
    qs,
    kind,  # type: ignore[no-untyped-def]
    limit,
    settle,
) -> None:
    """A q of several one-word keywords ranks only the nodes of its rarest
    words when their scores already beat anything the other words can give;
    the seeds and the match count must be those of ranking every match."""
    from memnet.gql.parse import parse_query
    from memnet.recall import seed as S

    rows = _skewed_rows(words, kinds[: len(words)])
    s, handles = _session(rows)
    for i in settle:
        if i < len(handles) and kinds[i] == "TSK":
            s.commit(f"SETTLE {handles[i]}")
    for q in qs:
        text = " ".join(_VOCAB[i] for i in q)
        qq = parse_query(f"{kind} {text}" if kind else text)
        kws = S._keywords(qq)
        got = S._match_general(s.store, S._Filters(s.store, qq), kws, limit)
        real = S._match_pruned
        try:
            S._match_pruned = lambda *a: None  # type: ignore[assignment]
            want = S._match_general(s.store, S._Filters(s.store, qq), kws, limit)
        finally:
            S._match_pruned = real  # type: ignore[assignment]
        assert (got.seeds, got.matched) == (want.seeds, want.matched), (rows, text)


@pytest.mark.req(REL)
def test_a_rare_word_settles_the_seeds_without_ranking_the_common_one() -> None:
    """``zebra graph``: the three zebra nodes outscore any node holding only
    graph, so the ranking stops at them, with the seeds and the count of the
    whole ranking."""
    from memnet.gql.parse import parse_query
    from memnet.graph.handles import node_handle
    from memnet.recall import seed as S

    rows = [f"SYM {{name: 'graph thing {i}'}}" for i in range(40)]
    rows += ["SYM {name: 'zebra graph'}", "SYM {name: 'zebra'}", "DEC {title: 'zebra crossing'}"]
    s, handles = _session(rows)
    q = parse_query("zebra graph")
    kws, filt, W = S._keywords(q), S._Filters(s.store, q), S.Words(s.store)
    names = filt.apply(sorted(S._name_ids(kws, W, s.store)))
    pruned = S._match_pruned(s.store, filt, kws, W, names, 3)
    assert pruned is not None and pruned.matched == 43
    full = s.recall("zebra graph", limit=3).receipt
    assert full.matched == 43
    assert full.seeds == tuple(node_handle(n) for n in pruned.seeds)
    assert set(full.seeds) == set(handles[40:43])
    assert full.seeds[0] == handles[40]  # the node named the whole phrase first


@pytest.mark.req(REL)
def test_a_rare_word_too_rare_for_l_seeds_reads_only_the_common_words_top_tiers() -> None:
    """``zebra graph`` with two zebra nodes and five seeds: the zebra nodes
    cannot fill the seeds, so the graph nodes are read from their top level
    down, and ranking stops once five of them are read: the seeds and the
    count are those of ranking all 62 matches, and no more than the top
    tiers (plus the zebra nodes) are ranked."""
    from memnet.gql.parse import parse_query
    from memnet.graph.handles import node_handle
    from memnet.recall import seed as S

    # 'graph' alone in a short title ranks high; in longer text, lower
    rows = [
        "SYM {name: 'graph'}"
        if i < 3
        else f"DEC {{title: 'graph {' '.join(['filler'] * (i % 7))} {i}'}}"
        for i in range(60)
    ]
    rows += ["SYM {name: 'zebra crossing'}", "DEC {title: 'zebra graph notes on a long walk'}"]
    s, handles = _session(rows)
    q = parse_query("zebra graph")
    kws, filt, W = S._keywords(q), S._Filters(s.store, q), S.Words(s.store)
    names = filt.apply(sorted(S._name_ids(kws, W, s.store)))
    ranked: list[int] = []
    real_ranked, real_pruned = S._ranked, S._match_pruned
    try:
        S._ranked = lambda st_, f, k, w, cand, *a: (
            ranked.append(len(cand))
            or real_ranked(  # type: ignore[assignment]
                st_, f, k, w, cand, *a
            )
        )
        pruned = S._match_pruned(s.store, filt, kws, W, names, 5)
        S._match_pruned = lambda *a: None  # type: ignore[assignment]
        full = S._match_general(s.store, S._Filters(s.store, q), kws, 5)
    finally:
        S._ranked, S._match_pruned = real_ranked, real_pruned  # type: ignore[assignment]
    assert pruned is not None and (pruned.seeds, pruned.matched) == (full.seeds, full.matched)
    assert full.matched == 62
    assert ranked[0] < 31 and ranked[-1] == 62  # the pruned ranking, then the whole one
    got = s.recall("zebra graph", limit=5).receipt
    assert got.matched == 62 and got.seeds == tuple(map(node_handle, full.seeds))
    assert {handles[60], handles[61]} <= set(got.seeds)  # both zebra nodes seed
