"""How well a node answers q: the query's words, their postings and scores.

A query word (:class:`Word`) knows the index terms that hold it, exactly or
by stem, and reads their postings as *tiers* (level, ascending ids) when first
asked. MATCH_L (:mod:`memnet.recall.seed`) ranks its candidates with them, and
:class:`Relevance` scores any node the same way, so the ShapeWalk can take
the neighbours that answer q first:

    score(v, q) = Σ_{u ∈ words(q)} idf(u) · level(u, v)

with the levels stored in the index and the idf read from posting lengths
(``docs/math/seeding.md``). Nothing here reads a node's properties.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence, Sized
from dataclasses import replace
from itertools import repeat

from ..gql.ast import SeedQuery
from ..graph.index import Index
from ..graph.store import Store
from ..graph.words import NAME_FLAG, NAME_MAX_PARTS, name_term, present_terms, token_words, tokens

EMPTY = array("I")

Tiers = list[tuple[int, "array[int]"]]  # (level, ascending ids), highest level first


# -- postings as tiers ---------------------------------------------------------------
def read_tiers(idx: Index, terms: list[tuple[int, bytes]]) -> Tiers:
    post = idx.posting
    return [(lv, post(t)) for lv, t in terms]  # type: ignore[misc]


def terms_size(idx: Index, terms: list[tuple[int, bytes]]) -> int:
    size = idx.posting_size
    return sum(size(t) for _lv, t in terms)


def tiers_size(tiers: Sequence[tuple[int, Sized]]) -> int:
    return sum(len(p) for _lv, p in tiers)


def idset(tiers: Sequence[tuple[int, Iterable[int]]]) -> set[int]:
    return set().union(*(p for _lv, p in tiers)) if tiers else set()


def read_posting(idx: Index, term: bytes) -> array[int]:
    return idx.posting(term) or EMPTY


def union(idx: Index, terms: list[tuple[int, bytes]]) -> set[int]:
    """The ids under any of ``terms`` (terms the index holds)."""
    return idset(read_tiers(idx, terms))


def has(p: array[int], n: int) -> bool:
    i = bisect_left(p, n)
    return i < len(p) and p[i] == n


def unflagged(lv: int) -> int:
    """A tier's level without the name flag an exact tier may carry."""
    return lv - NAME_FLAG if lv > NAME_FLAG else lv


def idf(n: int, df: int) -> float:
    """The weight of a word held by ``df`` of ``n`` live nodes: the square of
    BM25's inverse document frequency, so that the common words of a
    question as people write it (``when``, ``did``, ``the``) cannot outvote
    the rare word that says what it is about (docs/math/seeding.md)."""
    w = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return w * w


# -- the query, analysed ---------------------------------------------------------------
class Word:
    """One query word: the nodes holding it exactly (``exact``) and those
    holding a word with its stem (``stems``, a superset), by level. The
    tiers' terms are found at once; their postings are read when first
    used (a hub word's ranking reads only its top tiers)."""

    __slots__ = (
        "word",
        "idx",
        "xterms",
        "sterms",
        "xsize",
        "ssize",
        "df",
        "_exact",
        "_stems",
        "_levels",
        "_ids",
    )

    def __init__(self, store: Store, word: str) -> None:
        self.word = word
        idx = self.idx = store.index
        self.xterms, self.sterms = present_terms(idx.shard, word)
        self.xsize = terms_size(idx, self.xterms)
        self.ssize = terms_size(idx, self.sterms)
        self.df = self.ssize if self.sterms else self.xsize
        self._exact: Tiers | None = None
        self._stems: Tiers | None = None
        self._levels: dict[int, int] | None = None
        self._ids: set[int] | None = None

    @property
    def exact(self) -> Tiers:
        if self._exact is None:
            self._exact = read_tiers(self.idx, self.xterms)
        return self._exact

    @property
    def stems(self) -> Tiers:
        if self._stems is None:
            self._stems = read_tiers(self.idx, self.sterms)
        return self._stems

    def ids(self) -> set[int]:
        """Every node holding the word or its stem (built once; callers
        never change it)."""
        if self._ids is None:
            self._ids = idset(self.stems or self.exact)
        return self._ids

    def levels(self) -> dict[int, int]:
        """node → level (an exact level over a stem level; name flag removed)."""
        if self._levels is None:
            d: dict[int, int] = {}
            for lv, p in reversed(self.stems):
                d.update(zip(p, repeat(lv)))
            for lv, p in reversed(self.exact):
                d.update(zip(p, repeat(unflagged(lv))))
            self._levels = d
        return self._levels

    def level(self, nid: int) -> int:
        """The level of one node, by bisecting the tiers (no dict built)."""
        if self._levels is not None:
            return self._levels.get(nid, 0)
        for tiers in (self.exact, self.stems):
            for lv, p in tiers:
                if has(p, nid):
                    return unflagged(lv)
        return 0


class Keyword:
    """One keyword: its tokens' words and parts."""

    __slots__ = ("toks", "words", "parts")

    def __init__(self, text: str) -> None:
        self.toks = [token_words(t) for t in tokens(text)]
        words: dict[str, None] = {}
        parts: list[str] = []
        for w, p in self.toks:
            words.update(dict.fromkeys(w))
            parts.extend(p)
        self.words = list(words)
        self.parts = parts


class Words:
    """The query words met so far, each analysed once per match."""

    def __init__(self, store: Store) -> None:
        self.s = store
        self.memo: dict[str, Word] = {}

    def __call__(self, word: str) -> Word:
        w = self.memo.get(word)
        if w is None:
            w = self.memo[word] = Word(self.s, word)
        return w


#: a word held by more live nodes than this does not steer the walk: its idf is
#: small, and the map of its nodes would cost more than the walk itself
STEER_DF = 1024


def steering_levels(w: Word) -> dict[int, int]:
    """node → the level the walk scores ``w`` at: the exact level, or twice
    the stem level when that is higher. The index keeps a stem-only match at
    half weight (α, docs/math/seeding.md), so that MATCH_L ranks the word
    itself first; the walk reads the stem at full weight, as BM25 over stems
    would, since the text next to a match rarely repeats the question's own
    form of a word (``camped`` asked, ``camping`` written)."""
    d: dict[int, int] = {}
    for lv, p in reversed(w.stems):
        d.update(zip(p, repeat(2 * lv)))
    get = d.get
    for lv, p in reversed(w.exact):
        u = unflagged(lv)
        d.update((v, u) for v in p if get(v, 0) < u)
    return d


class Relevance:
    """``score(v, q)`` for any node: how well it answers q's keywords, as
    MATCH_L ranks its candidates (see the module docstring).

    Built once per query and session version from the words MATCH_L read
    (``words``): each word held by at most ``STEER_DF`` live nodes adds its
    idf times its level (:func:`steering_levels`) to the score of every node
    that holds it, so a node's score is one lookup in :attr:`scores`
    (absent: 0). A query with no
    such word is falsy: the walk then keeps the stored order.
    """

    __slots__ = ("scores",)

    def __init__(self, store: Store, keywords: Iterable[str], words: Words | None = None) -> None:
        W = words if words is not None else Words(store)
        n = store.live_nodes
        held = [
            w
            for w in map(W, dict.fromkeys(x for kw in map(Keyword, keywords) for x in kw.words))
            if 0 < w.df <= STEER_DF
        ]
        scores: dict[int, float] = {}
        if len(held) == 1:
            # one word: its levels order the nodes as its weight times them
            # would (the walk compares scores and shares of scores only)
            scores = steering_levels(held[0])  # type: ignore[assignment]
        for w in held if len(held) > 1 else ():
            weight = idf(n, w.df)
            get = scores.get
            scores.update((v, get(v, 0.0) + weight * lv) for v, lv in steering_levels(w).items())
        self.scores = scores

    def __bool__(self) -> bool:
        return bool(self.scores)

    def score(self, nid: int) -> float:
        return self.scores.get(nid, 0.0)


#: The function words of an English question (D173): in the codebook form,
#: a bare keyword that is one of these is left out of q when q has another
#: keyword and the whole phrase is no node's name. Written in capitals (IT,
#: US, WHO) a word is meant and stays; ``I`` and ``A`` are words of a
#: sentence all the same.
QUIET = frozenset(
    """
    a an the what when where which who whom whose why how
    is are was were be been being am do does did has have had having
    i me my mine you your yours he him his she her hers it its we our ours
    they them their theirs of in on at to for from by with about into onto as
    and or but if than that this these those there then so would could should
    might must shall any some
    """.split()
)


def read_in(store: Store, q: SeedQuery) -> tuple[SeedQuery, str]:
    """``q`` as this session reads it, and a note when that differs from the
    text in a way its printed q does not show. In the codebook form:

    * a capital word that names no kind (or label) of a live node is read as
      a keyword, where it stood among the keywords (``recall("read a GML
      file")`` looks for the word GML), since a kind that no node has would
      match nothing; the note says so;
    * the function words of a question (:data:`QUIET`: ``what``, ``did``,
      ``the``, ``I``) are left out when another keyword remains and the whole
      phrase names no node, so they cannot seed a short text that holds
      nothing but them; the printed q is what was looked for.

    The MATCH form is taken as written."""
    if q.form != "codebook":
        return q, ""
    read: list[str] = []
    if q.kind is not None or q.labels:
        q, read = _capitals(store, q)
    if len(q.keywords) > 1:
        kept = _unquiet(store, q.keywords)
        if len(kept) < len(q.keywords):
            q = replace(q, keywords=kept, upper_at=())
            read = [w for w in read if w in kept]  # a capital word left out is not named
    return q, _caps_note(read)


def _unquiet(store: Store, keywords: tuple[str, ...]) -> tuple[str, ...]:
    """``keywords`` without the function words of a question, or all of them
    when nothing else is left or the whole phrase is a node's name."""

    def quiet(w: str) -> bool:
        return w.lower() in QUIET and (len(w) == 1 or not w.isupper())

    kept = tuple(w for w in keywords if not quiet(w))
    if not kept or len(kept) == len(keywords):
        return keywords
    parts = [p for kw in keywords for p in Keyword(kw).parts]
    if 1 < len(parts) <= NAME_MAX_PARTS and store.index.posting_size(name_term(parts)):
        return keywords  # the phrase names a node ("the who", "out of use")
    return kept


def _caps_note(words: list[str]) -> str:
    if not words:
        return ""
    one = len(words) == 1
    return (
        f"{', '.join(words)} read as {'a keyword' if one else 'keywords'}: "
        f"no node has that {'kind' if one else 'kind or label'}"
    )


def _capitals(store: Store, q: SeedQuery) -> tuple[SeedQuery, list[str]]:
    """``q`` with its capital words that name no kind or label of a live
    node read as keywords (see :func:`read_in`), and those words."""
    caps = [q.kind, *q.labels] if q.kind is not None else list(q.labels)
    absent = [not store.live_count(c) and not store.index.label(c) for c in caps]
    if not any(absent) and (q.kind is None or store.live_count(q.kind)):
        return q, []
    at = list(q.upper_at) if len(q.upper_at) == len(caps) else [0] * len(caps)
    keywords = list(q.keywords)
    for j in sorted(range(len(caps)), key=lambda j: (-at[j], -j)):
        if absent[j]:  # from the last back, so the earlier ones keep their place
            keywords.insert(at[j], caps[j])
    words = [c for c, gone in zip(caps, absent, strict=True) if gone]
    kept = [c for c, gone in zip(caps, absent, strict=True) if not gone]
    # the kind is the first capital word left that is a kind of a live node;
    # the others filter as labels (a label matches a node's kind too)
    kind = kept[0] if kept and store.live_count(kept[0]) else None
    labels = tuple(kept[1:] if kind is not None else kept)
    return replace(q, kind=kind, labels=labels, keywords=tuple(keywords), upper_at=()), words
