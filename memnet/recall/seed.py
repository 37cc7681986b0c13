"""Seeding: MATCH_L and the nickname path.

MATCH_L applies hard filters (kind, labels, property equality, ``CONTAINS``)
and ranks what passes by keywords matched, then live tasks first, then the
canonical order of observables, and keeps the first ``L``. Candidates come
from the smallest posting that any filter offers, so the cost follows the
number of matches and never the size of the session.

Word semantics: keywords and ``CONTAINS`` needles are split into index words
(case-folded runs of letters and digits); a property matches when those words
appear in it consecutively, in order. ``CONTAINS 'pric'`` therefore does not
match ``'pricing'`` - whole words only, which is what an index can serve.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..gql.ast import SeedQuery, Value
from ..graph.index import SHORT_VALUE, words_of_text
from ..graph.store import Store


@dataclass(frozen=True, slots=True)
class SeedResult:
    mode: str            # match | nick | peak | outline | skip
    seeds: tuple[int, ...]
    matched: int         # candidates that passed every filter


def _phrase_in(words: list[str], needle: list[str]) -> bool:
    n = len(needle)
    if n == 0:
        return False
    if n == 1:
        return needle[0] in words
    first = needle[0]
    for i, w in enumerate(words):
        if w == first and words[i:i + n] == needle:
            return True
    return False


def _strings(v: Value) -> Iterable[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, tuple):
        for x in v:
            if isinstance(x, str):
                yield x


def _value_matches(stored: Value | None, wanted: Value) -> bool:
    if stored is None:
        return False
    if isinstance(stored, tuple) and not isinstance(wanted, tuple):
        return any(_same(x, wanted) for x in stored)
    return _same(stored, wanted)


def _same(a: Value, b: Value) -> bool:
    # bool is an int and 1 == 1.0 in Python; the query language keeps them apart
    if isinstance(a, tuple):
        return (isinstance(b, tuple) and len(a) == len(b)
                and all(type(x) is type(y) and x == y for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def props_contain(props: Mapping[str, Value], key: str | None, needle: list[str]) -> bool:
    """Whether the words of ``needle`` appear consecutively in ``props[key]``
    (any string property when ``key`` is None)."""
    if key is not None:
        v = props.get(key)
        return v is not None and any(_phrase_in(words_of_text(s), needle) for s in _strings(v))
    return any(_phrase_in(words_of_text(s), needle)
               for v in props.values() for s in _strings(v))


class _Filters:
    def __init__(self, store: Store, q: SeedQuery) -> None:
        self.s = store
        self.q = q
        self.contains = [(k, words_of_text(n)) for k, n in q.contains]

    def passes(self, nid: int) -> bool:
        s, q = self.s, self.q
        if s.nrec[nid]:
            return False
        if q.kind is not None and s.kind[nid] != q.kind:
            return False
        for lab in q.labels:
            if not s.has_label(nid, lab):
                return False
        props = s.node_props(nid)
        for k, v in q.props:
            if not _value_matches(props.get(k), v):
                return False
        for k, needle in self.contains:
            if not props_contain(props, k, needle):
                return False
        return True


def _postings(store: Store, q: SeedQuery) -> list[array]:
    """Every posting a hard filter offers (the smallest one is scanned)."""
    idx = store.index
    out: list[array] = []
    if q.kind is not None:
        out.append(idx.kind(q.kind))
    for lab in q.labels:
        out.append(idx.label(lab))
    for k, v in q.props:
        if isinstance(v, tuple):
            continue
        p = idx.prop(k, v)
        if p is not None:
            out.append(p)
        elif isinstance(v, str) and len(v) > SHORT_VALUE:
            out.extend(idx.word(w) for w in set(words_of_text(v)))
    for _k, needle in q.contains:
        out.extend(idx.word(w) for w in set(words_of_text(needle)))
    return out


def _is_live_task(store: Store, nid: int) -> bool:
    return store.has_label(nid, "TSK") and store.node_props(nid).get("settled") is not True


def match(store: Store, q: SeedQuery, limit: int) -> SeedResult:
    """MATCH_L: at most ``limit`` seeds, ranked by observables."""
    filt = _Filters(store, q)
    counts: dict[int, int] = {}
    if q.keywords:
        phrases = [words_of_text(kw) for kw in q.keywords]
        for words in phrases:
            if not words:
                continue
            posts = sorted((store.index.word(w) for w in set(words)), key=len)
            for nid in posts[0]:
                if len(words) > 1 and not props_contain(store.node_props(nid), None, words):
                    continue
                counts[nid] = counts.get(nid, 0) + 1
        cand: Iterable[int] = [nid for nid in counts if filt.passes(nid)]
    else:
        posts = _postings(store, q)
        if posts:
            cand = (nid for nid in min(posts, key=len) if filt.passes(nid))
        else:  # a filter no index serves (e.g. an unindexable value): scan
            cand = (nid for nid in store.live_node_ids() if filt.passes(nid))
    kept = list(cand)
    key = store.key
    best = heapq.nsmallest(
        limit, kept,
        key=lambda n: (-counts.get(n, 0), not _is_live_task(store, n), key[n], n))
    return SeedResult("match", tuple(best), len(kept))


def matches(store: Store, q: SeedQuery, nid: int) -> bool:
    """Whether node ``nid`` is one of the matches of ``q`` (filters and, when q
    has keywords, at least one keyword)."""
    if not _Filters(store, q).passes(nid):
        return False
    if not q.keywords:
        return True
    props = store.node_props(nid)
    return any(props_contain(props, None, words_of_text(kw)) for kw in q.keywords)


def by_nick(store: Store, nick: str) -> int | None:
    nid = store.nick_owner.get(nick)
    if nid is None or store.nrec[nid]:
        return None
    return nid


__all__ = ["SeedResult", "by_nick", "match", "matches", "props_contain"]
