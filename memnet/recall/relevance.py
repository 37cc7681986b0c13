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
from itertools import repeat

from ..graph.index import Index
from ..graph.store import Store
from ..graph.words import NAME_FLAG, present_terms, token_words, tokens

EMPTY = array("I")

Tiers = list[tuple[int, "array[int]"]]   # (level, ascending ids), highest level first


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
    """The weight of a word held by ``df`` of ``n`` live nodes."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


# -- the query, analysed ---------------------------------------------------------------
class Word:
    """One query word: the nodes holding it exactly (``exact``) and those
    holding a word with its stem (``stems``, a superset), by level. The
    tiers' terms are found at once; their postings are read when first
    used (a hub word's ranking reads only its top tiers)."""

    __slots__ = ("word", "idx", "xterms", "sterms", "xsize", "ssize", "df", "_exact", "_stems",
                 "_levels", "_ids")

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
