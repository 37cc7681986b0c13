"""Words as people type them: how text becomes index words and how a node's
words are weighted, the same way for a stored node and for a query.

A *token* is a run of word characters, possibly joined by ``.``, ``/``,
``:`` or ``-`` (``shop/pricing.py``, ``half-even``, ``1.1``). Every token
gives three layers of words, all case-folded:

* the whole token (``betweenness_centrality``, ``shop/pricing.py``);
* its *segments*, cut at the joining characters (``shop``, ``pricing.py`` is
  cut too: ``pricing``, ``py``);
* its *parts*: segments cut at ``_``, at lower→upper case changes
  (``getUserName`` → ``get user name``, ``HTTPServer`` → ``http server``) and
  between letters and digits (``utf8`` → ``utf 8``).

A plain lower-case word is all three at once. The parts, in order, are the
text's *phrase sequence*: ``CONTAINS`` and phrase keywords match consecutive
parts, and a field's length is its number of parts.

Words of three or more letters also have a *stem* (the Snowball English
stemmer, through PyStemmer), so ``rounding`` meets ``round`` and
``persons`` meets ``person``.

Index terms (bytes) that come from text::

    w <word> 0x00 <level>   the node holds this exact word
    s <stem> 0x00 <level>   the node holds a word with this stem
    n <name key>            a name-like value of the node, as its parts
                            joined by spaces, when it has 2 to 6 parts

``level`` (one byte) is the word's *impact* in the node, a BM25F weight
quantised to 1..32 (see ``docs/math/seeding.md``). On a ``w`` term 32 is
added when a name-like value of the node is exactly this one word, so the
name tier of a one-word query is the top levels of one word. Putting the
level in the term keeps a posting a plain list of node ids: a node whose
impact changes simply leaves one term and joins another.

Hot module: every word of every committed node goes through :func:`text_terms`;
its memo tables are ``dict`` subclasses with ``__missing__`` and it counts with
Counter's C helper, because plain dicts, ``functools.lru_cache`` and
``collections.Counter`` in their place cost 18 % more CPU indexing WordNet's
266,688 nodes (``Index.terms``, cold memos: 17.8 s -> 21.1 s; D165).
"""

from __future__ import annotations

import math
import re
from collections import _count_elements  # type: ignore[attr-defined]  # Counter's C helper
from collections.abc import Callable, Container, Iterable, Mapping
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any

# -- analysis constants (documented in docs/math/seeding.md) -------------------
#: property keys whose values name a node (weighted up, and tested for equality
#: with the whole query phrase)
NAME_KEYS = frozenset(
    {
        "name",
        "names",
        "title",
        "lemma",
        "lemmas",
        "alias",
        "aliases",
        "path",
        "rid",
        "id",
        "locator",
    }
)
NAME_WEIGHT = 3.0  # a name-like field counts three times a text field
NAME_AVG = 2.0  # reference length (parts) of a name-like field
TEXT_AVG = 12.0  # reference length (parts) of a text field
BM25_K1 = 1.2
BM25_B = 0.75
STEM_WEIGHT = 0.5  # a stem-only match counts half an exact one
LEVELS = 32  # impact levels 1..32; +32 marks a one-word name
NAME_FLAG = 32
NAME_MAX_PARTS = 6  # longer name-like values get no name key
STEM_MIN = 3  # shorter words are not stemmed
_VMAX = (BM25_K1 + 1.0) * (1.0 + STEM_WEIGHT)

_TOKEN = re.compile(r"\w+(?:[./:\-]+\w+)*")
_SEGMENT = re.compile(r"[^./:\-]+")
_ASCII_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_RUNS = re.compile(r"\d+|[^\W\d_]+")


# -- the stemmer ---------------------------------------------------------------
_stemmer: Any = None


def _load_stemmer() -> Any:
    global _stemmer
    if _stemmer is None:
        import Stemmer  # PyStemmer: the Snowball stemmers compiled

        _stemmer = Stemmer.Stemmer("english")
    return _stemmer


def stemmer_id() -> str:
    """Which stemmer (and version) made the stems; a cabinet records it so an
    index is never read with stems made another way."""
    import Stemmer

    return f"snowball-english/PyStemmer-{Stemmer.version()}"


@lru_cache(maxsize=1 << 17)
def stem(word: str) -> str | None:
    """The stem of an index word, or None when the word is not stemmed (not
    all letters, or shorter than :data:`STEM_MIN`)."""
    if len(word) < STEM_MIN or not word.isalpha():
        return None
    return _load_stemmer().stemWord(word)  # type: ignore[no-any-return]


# -- splitting -------------------------------------------------------------------
def _camel(run: str) -> list[str]:
    """Cut a run of letters at case changes (any script)."""
    if run.isascii():
        return _ASCII_PARTS.findall(run)
    out: list[str] = []
    start = 0
    n = len(run)
    for i in range(1, n):
        a, b = run[i - 1], run[i]
        if (a.islower() and b.isupper()) or (
            a.isupper() and b.isupper() and i + 1 < n and run[i + 1].islower()
        ):
            out.append(run[start:i])
            start = i
    out.append(run[start:])
    return out


def _segment_parts(seg: str) -> list[str]:
    """The parts of one segment, case-folded."""
    out: list[str] = []
    for piece in seg.split("_"):
        if not piece:
            continue
        for run in _RUNS.findall(piece):
            if run[0].isdigit() or run.islower() or run.isupper() or run[1:].islower():
                out.append(run.casefold())
            else:
                out.extend(p.casefold() for p in _camel(run) if p)
    return out


def _simple(tok: str) -> bool:
    """A token that is one part: all letters with no inner capital, or all digits."""
    return (tok.isalpha() and (tok.islower() or tok[1:].islower() or tok.isupper())) or (
        tok.isdigit()
    )


@lru_cache(maxsize=1 << 16)
def token_words(tok: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(words, parts)`` of one token: the distinct words it gives (whole,
    segments, parts) and its parts in order."""
    if _simple(tok):
        w = tok.casefold()
        return (w,), (w,)
    whole = tok.casefold()
    words = [whole]
    parts: list[str] = []
    segs = _SEGMENT.findall(tok)
    for seg in segs:
        sw = seg.casefold()
        if sw not in words:
            words.append(sw)
        for p in _segment_parts(seg):
            parts.append(p)
            if p not in words:
                words.append(p)
    return tuple(words), tuple(parts)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def parts_of(text: str) -> list[str]:
    """The phrase sequence of a text: its parts in order."""
    out: list[str] = []
    for tok in _TOKEN.findall(text):
        out.extend(token_words(tok)[1])
    return out


def words_of(text: str) -> list[str]:
    """Every index word of a text (whole tokens, segments and parts), each once,
    in order of first appearance."""
    seen: dict[str, None] = {}
    for tok in _TOKEN.findall(text):
        for w in token_words(tok)[0]:
            seen.setdefault(w)
    return list(seen)


def name_key(parts: Iterable[str]) -> str:
    return " ".join(parts)


def _name_values(key: str, s: str) -> Iterable[str]:
    """The strings a name-like value offers for equality: the value, and for a
    path its file stem, for a locator its tail."""
    yield s
    if key == "path":
        tail = s.rstrip("/").rpartition("/")[2]
        stem_ = tail.rpartition(".")[0] if "." in tail[1:] else tail
        if stem_ and stem_ != s:
            yield stem_
    elif key == "locator":
        cut = max(s.rfind("::") + 1, s.rfind("#"), s.rfind("/"))
        tail = s[cut + 1 :] if cut >= 0 else ""
        if tail.endswith(".py") or tail.endswith(".md"):
            tail = tail[:-3]
        if tail and tail != s:
            yield tail


# -- field analysis --------------------------------------------------------------
class _Tokens(dict):  # type: ignore[type-arg]
    """token → (words, parts, stems): each token analysed once."""

    def __missing__(self, tok: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        words, parts = token_words(tok)
        stems = tuple(dict.fromkeys(t for t in map(stem, words) if t is not None))
        if len(self) >= 1 << 17:
            self.clear()
        info = self[tok] = (words, parts, stems)
        return info


_TOKS = _Tokens()
_WORDS_OF = itemgetter(0)
_PARTS_OF = itemgetter(1)
_STEMS_OF = itemgetter(2)


def _counts(
    infos: list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]],
) -> tuple[int, dict[str, int], dict[str, int]]:
    wc: dict[str, int] = {}
    sc: dict[str, int] = {}
    _count_elements(wc, chain.from_iterable(map(_WORDS_OF, infos)))
    _count_elements(sc, chain.from_iterable(map(_STEMS_OF, infos)))
    return sum(map(len, map(_PARTS_OF, infos))), wc, sc


@lru_cache(maxsize=1 << 14)
def _field(text: str) -> tuple[int, dict[str, int], dict[str, int]]:
    """``(length, word counts, stem counts)`` of one string: each token counts
    once for each distinct word and each distinct stem it gives."""
    toks = _TOKEN.findall(text)
    flat = "".join(toks)
    if (
        flat.isascii()
        and flat.isalpha()
        and (flat.islower() or all(t.isupper() or t[1:].islower() for t in toks if not t.islower()))
    ):
        # plain prose (most text): every token is one part (all lower case,
        # all upper case or capitalised), its own only word, with at most
        # one stem; counted without the per-token analysis
        if not flat.islower():
            toks = "\0".join(toks).lower().split("\0")
        wc: dict[str, int] = {}
        sc: dict[str | None, int] = {}
        _count_elements(wc, toks)
        _count_elements(sc, map(_STEM_OF, map(_WINFO.__getitem__, toks)))
        sc.pop(None, None)
        return len(toks), wc, sc  # type: ignore[return-value]
    return _counts(list(map(_TOKS.__getitem__, toks)))


def _fields(strs: list[str]) -> tuple[int, dict[str, int], dict[str, int]]:
    """:func:`_field` of the strings of a list, which count as one field."""
    return _counts(list(map(_TOKS.__getitem__, chain.from_iterable(map(_TOKEN.findall, strs)))))


def _saturate(x: float) -> float:
    return x * (BM25_K1 + 1.0) / (x + BM25_K1)


def quantise(v: float) -> int:
    """An impact value as a level 1..LEVELS."""
    return max(1, min(LEVELS, math.ceil(v / _VMAX * LEVELS - 1e-9)))


def _scale(named: bool, length: int) -> float:
    if named:
        return NAME_WEIGHT / (1.0 - BM25_B + BM25_B * length / NAME_AVG)
    return 1.0 / (1.0 - BM25_B + BM25_B * length / TEXT_AVG)


_EXACT: dict[tuple[float, float], int] = {}
_STEMMED: dict[float, int] = {}


def _exact_level(x: float, xs: float) -> int:
    """The level of a word with pseudo-frequency ``x`` whose stem class has
    ``xs`` (``xs`` ≥ ``x``; 0 for a word with no stem)."""
    lv = _EXACT.get((x, xs))
    if lv is None:
        v = _saturate(x)
        if xs - x > 1e-12:
            v += STEM_WEIGHT * _saturate(xs - x)
        if len(_EXACT) >= 1 << 16:
            _EXACT.clear()
        lv = _EXACT[(x, xs)] = quantise(v)
    return lv


def _stem_level(xs: float) -> int:
    lv = _STEMMED.get(xs)
    if lv is None:
        if len(_STEMMED) >= 1 << 16:
            _STEMMED.clear()
        lv = _STEMMED[xs] = quantise(STEM_WEIGHT * _saturate(xs))
    return lv


class _Row(dict):  # type: ignore[type-arg]
    """The exact levels of a word that occurs in one field of its node (the
    usual case), for one field shape (name-like or not, length):
    ``count << 32 | stem count`` → level."""

    __slots__ = ("scale",)

    def __init__(self, named: bool, length: int) -> None:
        super().__init__()
        self.scale = _scale(named, length)

    def __missing__(self, key: int) -> int:
        c, cs, sc = key >> 32, key & 0xFFFFFFFF, self.scale
        if len(self) >= 1 << 12:
            self.clear()
        lv = self[key] = _exact_level(c * sc, cs * sc) if cs else _exact_level(c * sc, 0.0)
        return lv


class _StemRow(_Row):
    """The stem levels of one field shape: stem count → level."""

    def __missing__(self, key: int) -> int:
        if len(self) >= 1 << 12:
            self.clear()
        lv = self[key] = _stem_level(key * self.scale)
        return lv


class _Rows(dict):  # type: ignore[type-arg]
    """(named, length) → its row of levels."""

    def __init__(self, row: type[_Row]) -> None:
        super().__init__()
        self.row = row

    def __missing__(self, key: tuple[bool, int]) -> _Row:
        if len(self) >= 1 << 12:
            self.clear()
        r = self[key] = self.row(*key)
        return r


class _WordInfo(dict):  # type: ignore[type-arg]
    """word → (its stem or None, the prefix of its ``w`` terms)."""

    def __missing__(self, w: str) -> tuple[str | None, bytes]:
        if len(self) >= 1 << 17:
            self.clear()
        info = self[w] = (stem(w), b"w" + w.encode() + b"\x00")
        return info


class _StemPrefix(dict):  # type: ignore[type-arg]
    """stem → the prefix of its ``s`` terms."""

    def __missing__(self, t: str) -> bytes:
        if len(self) >= 1 << 17:
            self.clear()
        p = self[t] = b"s" + t.encode() + b"\x00"
        return p


_ROWS = _Rows(_Row)
_STEM_OF = itemgetter(0)  # the stem in a _WINFO entry
_SROWS = _Rows(_StemRow)
_WINFO = _WordInfo()
_SPREFIX = _StemPrefix()
_LVB = tuple(bytes((lv,)) for lv in range(LEVELS + NAME_FLAG + 1))


def _strings(v: Any) -> list[str]:
    if type(v) is str:
        return [v]
    if type(v) is tuple:
        return [x for x in v if type(x) is str]
    return []


def text_terms(props: Mapping[str, Any] | None, out: set[bytes]) -> None:
    """Add the ``w``, ``s`` and ``n`` terms of a property map to ``out``."""
    if not props:
        return
    fields: list[tuple[bool, int, dict[str, int], dict[str, int]]] = []
    names1: set[str] = set()
    for key, v in props.items():
        strs = _strings(v)
        if not strs:
            continue
        named = key in NAME_KEYS
        length, wc, sc = _field(strs[0]) if len(strs) == 1 else _fields(strs)
        if named:
            for x in strs:
                for nv in _name_values(key, x):
                    parts = parts_of(nv)
                    if len(parts) == 1:
                        names1.add(parts[0])
                    elif 1 < len(parts) <= NAME_MAX_PARTS:
                        out.add(("n" + " ".join(parts)).encode())
        if length:
            fields.append((named, length, wc, sc))
    if not fields:
        return
    if len(fields) == 1 or _apart(fields):
        # each word and stem in one field: levels from the memo tables, a
        # term is its word's prefix and its level byte
        add, winfo, sprefix, lvb = out.add, _WINFO, _SPREFIX, _LVB
        for named, length, wc, sc in fields:
            row, srow = _ROWS[(named, length)], _SROWS[(named, length)]
            get_sc = sc.get
            for w, c in wc.items():
                st, wp = winfo[w]
                lv = row[c << 32 | get_sc(st, 0)]
                if names1 and w in names1:
                    lv += NAME_FLAG
                add(wp + lvb[lv])
            for t, cs in sc.items():
                add(sprefix[t] + lvb[srow[cs]])
        return
    xw: dict[str, float] = {}
    xs: dict[str, float] = {}
    for named, length, wc, sc in fields:
        scale = _scale(named, length)
        for w, c in wc.items():
            xw[w] = xw.get(w, 0.0) + c * scale
        for t, c in sc.items():
            xs[t] = xs.get(t, 0.0) + c * scale
    add, winfo, lvb, get_xs = out.add, _WINFO, _LVB, xs.get
    for w, weight in xw.items():
        st, wp = winfo[w]
        lv = _exact_level(weight, get_xs(st, 0.0))
        if names1 and w in names1:
            lv += NAME_FLAG
        add(wp + lvb[lv])
    sprefix = _SPREFIX
    for t, weight in xs.items():
        add(sprefix[t] + lvb[_stem_level(weight)])


def _apart(fields: list[tuple[bool, int, dict[str, int], dict[str, int]]]) -> bool:
    """Whether no word and no stem occurs in two of the fields."""
    seen_w: set[str] = set()
    seen_s: set[str] = set()
    for _n, _l, wc, sc in fields:
        if not seen_w.isdisjoint(wc) or not seen_s.isdisjoint(sc):
            return False
        seen_w.update(wc)
        seen_s.update(sc)
    return True


# -- query side ------------------------------------------------------------------
_W_LEVELS = [(lv, bytes((lv,))) for lv in range(LEVELS + NAME_FLAG, 0, -1)]
#: the highest level a stem term can have: a stem's impact is STEM_WEIGHT times
#: a saturation, which stays below BM25_K1 + 1
STEM_TOP = quantise(STEM_WEIGHT * (BM25_K1 + 1.0))
_S_LEVELS = [(lv, b) for lv, b in _W_LEVELS[NAME_FLAG:] if lv <= STEM_TOP]


def _exact_top(ls: int) -> int:
    """The highest exact level a word can have in a node where its stem has
    level ``ls``: the stem's pseudo-frequency ``xs`` is at most the largest
    value with that stem level, and over ``0 < x <= xs`` the exact impact
    ``sat(x) + α sat(xs - x)`` (concave in x) peaks where the two slopes
    balance, ``(xs - x + k1)² = α (x + k1)²`` (docs/math/seeding.md). One
    level is added against rounding."""
    k, a = BM25_K1, STEM_WEIGHT
    y = ls * _VMAX / LEVELS / a  # the largest sat(xs) of the level
    if y >= k + 1.0:
        return LEVELS  # xs unbounded
    xs = y * k / (k + 1.0 - y)
    r = math.sqrt(a)
    x = min(xs, max(0.0, (xs + k - r * k) / (1.0 + r)))
    return min(LEVELS, quantise(_saturate(x) + a * _saturate(xs - x)) + 1)


#: stem level -> the mask (bit ``lv``) of the exact levels, name-flagged or
#: not, that a node with that stem level can hold: at least the stem level
#: (the exact impact is never below the stem's, docs/math/seeding.md), at
#: most :func:`_exact_top`
_SPAN = [0] + [
    sum(1 << lv | 1 << (lv + NAME_FLAG) for lv in range(ls, _exact_top(ls) + 1))
    for ls in range(1, STEM_TOP + 1)
]


#: a union of spans -> its exact levels, highest first (at most 2^11 unions)
_SPANNED: dict[int, list[tuple[int, bytes]]] = {}


def present_terms(
    shard: Callable[[bytes], Container[bytes]], word: str
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    """The ``w`` terms of ``word`` and the ``s`` terms of its stem that some
    node holds, highest level first; ``shard(prefix)`` is the set of held
    terms among those that are ``prefix`` and a level byte (the index keeps
    the levels of one word together). A node holding the word holds its stem
    too, at a level that bounds the word's (see ``_SPAN``), so the stem's
    terms are looked up first and only the exact levels they allow are
    tried: 11 lookups and a few dozen instead of 75."""
    st, base = _WINFO[word]
    if st is None:
        have = shard(base)
        return [(lv, t) for lv, b in _W_LEVELS if (t := base + b) in have], []
    sbase = _SPREFIX[st]
    have = shard(sbase)
    sterms = [(lv, t) for lv, b in _S_LEVELS if (t := sbase + b) in have]
    if not sterms:
        return [], []  # no node holds the stem, so none holds the word
    mask = 0
    for lv, _t in sterms:
        mask |= _SPAN[lv]
    levels = _SPANNED.get(mask)
    if levels is None:
        levels = _SPANNED[mask] = [(lv, b) for lv, b in _W_LEVELS if mask >> lv & 1]
    have = shard(base)
    return [(lv, t) for lv, b in levels if (t := base + b) in have], sterms


def word_terms(word: str) -> list[tuple[int, bytes]]:
    """Every possible ``w`` term of a word, highest level first."""
    base = _WINFO[word][1]
    return [(lv, base + b) for lv, b in _W_LEVELS]


def stem_terms(st: str) -> list[tuple[int, bytes]]:
    """Every possible ``s`` term of a stem (levels up to ``STEM_TOP``),
    highest level first."""
    base = _SPREFIX[st]
    return [(lv, base + b) for lv, b in _S_LEVELS]


def name_term(parts: Iterable[str]) -> bytes:
    return ("n" + " ".join(parts)).encode()


__all__ = [
    "LEVELS",
    "NAME_FLAG",
    "NAME_KEYS",
    "name_key",
    "name_term",
    "parts_of",
    "present_terms",
    "quantise",
    "stem",
    "stem_terms",
    "stemmer_id",
    "text_terms",
    "token_words",
    "tokens",
    "word_terms",
    "words_of",
]
