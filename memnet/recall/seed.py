"""Seeding: MATCH_L and the nickname path.

MATCH_L keeps the nodes that pass every hard filter (kind, labels, property
equality, ``CONTAINS``) and, when ``q`` has keywords, match at least one of
them; it ranks them and keeps the first ``L``. The order (see
``docs/math/seeding.md``) is:

1. a name-like value equal to the whole keyword phrase first;
2. then the BM25F score of the keywords' words (IDF from posting lengths,
   impacts stored in the index), an exact word counting over a stem;
3. then more keywords matched;
4. then live tasks (a TSK not settled);
5. (q with filters only) a node q describes whole first: its kind, labels
   and properties are exactly those q names;
6. then the canonical order of observables, and the node id for nodes that
   print the same.

Everything the order needs is in the index: filtering and ranking read
postings, the kind and label columns and the node keys, never a node's
properties. Two filters still read them, on the candidates that reach them:
``CONTAINS`` (consecutive words in one property) and equality with a value
the index does not hold (a long string, a list).

Keywords: a keyword (a codebook word, or a quoted phrase) is split into words
as stored text is (:mod:`memnet.graph.words`). A one-word keyword matches a
node holding that word or a word with the same stem. An identifier
(``betweenness_centrality``) matches a node holding the identifier, or, when
no node does, one holding all its parts; a quoted phrase matches a node
holding all its words.

A settled node (``settled: true``) never passes a ``status`` filter other
than ``status:settled``, so ``TSK status:open`` never seeds a finished task.
"""

from __future__ import annotations

import heapq
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, filterfalse, repeat
from operator import add
from typing import Any

from ..gql.ast import SeedQuery, Value
from ..gql.emit import format_value
from ..graph.index import SHORT_VALUE, Index, prop_term, value_key
from ..graph.store import Store
from ..graph.words import (
    NAME_FLAG,
    NAME_MAX_PARTS,
    name_term,
    parts_of,
    present_terms,
)
from ..values import node_key
from .prune import Pruned
from .relevance import (
    Keyword,
    Word,
    Words,
    has,
    idf,
    idset,
    read_posting,
    terms_size,
    tiers_size,
    unflagged,
    union,
)

SETTLED_TERM = prop_term("settled", "b", True)


@dataclass(frozen=True, slots=True)
class SeedResult:
    mode: str  # match | nick | peak | outline | skip
    seeds: tuple[int, ...]
    matched: int  # candidates that passed every filter
    more: tuple[int, ...] = ()  # the next-ranked matches, when L was left open


# -- text filters (these read properties) ----------------------------------------
def _phrase_in(words: list[str], needle: list[str]) -> bool:
    n = len(needle)
    if n == 0:
        return False
    if n == 1:
        return needle[0] in words
    first = needle[0]
    for i, w in enumerate(words):
        if w == first and words[i : i + n] == needle:
            return True
    return False


def _strings(v: Value) -> Iterable[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, tuple):
        for x in v:
            if isinstance(x, str):
                yield x


def props_contain(props: Mapping[str, Value], key: str | None, needle: list[str]) -> bool:
    """Whether the parts ``needle`` appear consecutively in ``props[key]``
    (any string property when ``key`` is None)."""
    if key is not None:
        v = props.get(key)
        return v is not None and any(_phrase_in(parts_of(s), needle) for s in _strings(v))
    return any(_phrase_in(parts_of(s), needle) for v in props.values() for s in _strings(v))


def _value_matches(stored: Value | None, wanted: Value) -> bool:
    if stored is None:
        return False
    if isinstance(stored, tuple) and not isinstance(wanted, tuple):
        return any(_same(x, wanted) for x in stored)
    return _same(stored, wanted)


def _same(a: Value, b: Value) -> bool:
    # bool is an int and 1 == 1.0 in Python; the query language keeps them apart
    if isinstance(a, tuple):
        return (
            isinstance(b, tuple)
            and len(a) == len(b)
            and all(type(x) is type(y) and x == y for x, y in zip(a, b, strict=False))
        )
    return type(a) is type(b) and a == b


class _Member:
    """A property filter: the nodes under any of a few terms. While the ids
    asked about are few against the postings, membership is read by
    bisecting the postings; otherwise (and to drive a match) from a set,
    built once."""

    __slots__ = ("idx", "terms", "size", "_ids")

    def __init__(self, idx: Index, terms: list[bytes]) -> None:
        self.idx = idx
        self.terms = terms
        self.size = sum(map(idx.posting_size, terms))
        self._ids: set[int] | frozenset[int] | None = None

    def ids(self) -> set[int] | frozenset[int]:
        if self._ids is None:
            sets = [self.idx.id_set(t) for t in self.terms]
            self._ids = sets[0] if len(sets) == 1 else set().union(*sets)
        return self._ids

    def keep(self, out: list[int]) -> list[int]:
        if self._ids is None and len(out) * 16 < self.size:
            posts = [p for p in map(self.idx.posting, self.terms) if p]
            return [n for n in out if any(has(p, n) for p in posts)]
        return list(compress(out, map(self.ids().__contains__, out)))


class _Filters:
    """The hard filters of q, applied to lists of node ids."""

    def __init__(self, store: Store, q: SeedQuery) -> None:
        self.s = store
        idx = store.index
        self.kind = q.kind
        self.labels = q.labels
        # property equality: served by postings where the index holds the value
        self.sets: list[_Member] = []
        self.slow: list[tuple[str, Value, str | None]] = []  # read from props
        bare = dict(q.bare)
        self.status = False
        loose = q.form == "codebook"
        for k, v in q.props:
            # a bare codebook number or boolean also matches its text
            raw = (
                (bare.get(k) or format_value(v))
                if (loose and not isinstance(v, (str, tuple)))
                else None
            )
            if k == "status" and v != "settled":
                self.status = True
            vk = value_key(v) if not isinstance(v, tuple) else None
            alt = raw is not None and len(raw) <= SHORT_VALUE
            if vk is not None and (raw is None or alt):
                terms = [prop_term(k, vk[0], vk[1])]
                if raw is not None:
                    terms.append(prop_term(k, "s", raw))
                self.sets.append(_Member(idx, terms))
            else:
                self.slow.append((k, v, raw))
        self.settled = idx.id_set(SETTLED_TERM)
        self.contains = [(k, parts_of(n)) for k, n in q.contains]
        self.trivial = not (
            self.kind is not None or self.labels or self.sets or self.slow or self.contains
        )

    def driver(self, q: SeedQuery) -> array[int] | set[int] | frozenset[int] | None:
        """The smallest id collection a filter offers (None: no filter has
        one); the others are only sized, never read."""
        idx = self.s.index
        size = idx.posting_size
        offers: list[tuple[int, int, Callable[[], Any]]] = []  # (size, order, read)
        if q.kind is not None:
            t = ("k" + q.kind).encode()
            offers.append((size(t), len(offers), partial(read_posting, idx, t)))
        for lab in q.labels:
            t = ("l" + lab).encode()
            offers.append((size(t), len(offers), partial(read_posting, idx, t)))
        for m in self.sets:
            offers.append((m.size, len(offers), m.ids))
        for _k, needle in self.contains:
            for w in dict.fromkeys(needle):
                terms = present_terms(idx.shard, w)[0]
                offers.append((terms_size(idx, terms), len(offers), partial(union, idx, terms)))
        if not offers:
            return None
        return min(offers)[2]()  # type: ignore[no-any-return]

    def apply(self, ids: Iterable[int]) -> list[int]:
        s = self.s
        out = ids if isinstance(ids, list) else list(ids)
        if self.kind is not None and out:
            # the codes are a compact array: a comprehension over it beats a
            # chain of maps, and never touches a node's objects
            kinds = s.view().kinds
            code, codes = kinds.code_of(self.kind), kinds.codes
            out = [i for i in out if codes[i] == code]
        for lab in self.labels:
            if out:
                out = list(compress(out, map(s.has_label, out, repeat(lab))))
        for m in self.sets:
            if out:
                out = m.keep(out)
        if self.status and self.settled and out:
            out = list(filterfalse(self.settled.__contains__, out))
        return self._slow(out)

    def _slow(self, out: list[int]) -> list[int]:
        if not (self.slow or self.contains) or not out:
            return out
        s = self.s
        keep = []
        for nid in out:
            props = s.node_props(nid)
            if all(
                _value_matches(props.get(k), v)
                or (raw is not None and _value_matches(props.get(k), raw))
                for k, v, raw in self.slow
            ) and all(props_contain(props, k, nd) for k, nd in self.contains):
                keep.append(nid)
        return keep

    def live_task(self, nid: int) -> bool:
        return self.s.has_label(nid, "TSK") and nid not in self.settled


# -- MATCH_L ------------------------------------------------------------------------
def _keywords(q: SeedQuery) -> list[Keyword]:
    return [k for k in map(Keyword, q.keywords) if k.toks]


def _and(words: list[Word]) -> set[int]:
    """Nodes holding every one of ``words`` (exactly or by stem): the rarest
    word's nodes, tested against the others by bisecting their tiers."""
    words = sorted(words, key=lambda w: w.df)
    out = words[0].ids()
    for w in words[1:]:
        if not out:
            break
        out = {n for n in out if w.level(n)}
    return out


def _keyword_ids(kw: Keyword, W: Callable[[str], Word]) -> set[int]:
    """The nodes a keyword matches (see the module docstring)."""
    per_token: list[set[int]] = []
    for twords, tparts in kw.toks:
        ids = W(twords[0]).ids()
        if not ids and len(tparts) > 1:
            ids = _and([W(p) for p in dict.fromkeys(tparts)])
        per_token.append(ids)
    per_token.sort(key=len)
    out = per_token[0]
    for ids in per_token[1:]:
        out = out & ids
    return out


def _name_ids(kws: list[Keyword], W: Callable[[str], Word], store: Store) -> set[int]:
    """Nodes with a name-like value equal to the whole keyword phrase."""
    parts = [p for kw in kws for p in kw.parts]
    if len(parts) == 1:
        return idset([(lv, p) for lv, p in W(parts[0]).exact if lv > NAME_FLAG])
    if 1 < len(parts) <= NAME_MAX_PARTS:
        return set(store.index.posting(name_term(parts)) or ())
    return set()


def _none(ids: list[int]) -> list[int]:
    return []


def _tsk_live(store: Store, filt: _Filters) -> Callable[[list[int]], list[int]]:
    """A function keeping the live tasks of a list of ids (set tests only)."""
    # the kind is read from the compact code column (the ids are live nodes of
    # the postings): no set of every task is built for a query that ranks three
    cols = store.view()
    code, codes, nrec = cols.kinds.code_of("TSK"), cols.kinds.codes, cols.node_recycled
    ltsk = store.index.id_set(b"lTSK")
    settled = filt.settled
    if filt.kind is not None and filt.kind != "TSK" and not ltsk:
        return _none  # the ids passed a kind filter no task passes

    def live(ids: list[int]) -> list[int]:
        out = (
            [n for n in ids if (codes[n] == code or n in ltsk) and not nrec[n]]
            if ltsk
            else [n for n in ids if codes[n] == code and not nrec[n]]
        )
        return list(filterfalse(settled.__contains__, out)) if settled else out

    return live


def _first(
    store: Store, ids: list[int], n: int, live: Callable[[list[int]], list[int]]
) -> list[int]:
    """The first ``n`` of ``ids`` (nodes that rank the same otherwise): live
    tasks first, then the canonical key, then the id."""
    if n <= 0 or not ids:
        return []
    ids = sorted(ids)
    key = store.view().keys.__getitem__
    lv = live(ids)
    if not lv:
        return heapq.nsmallest(n, ids, key=key)
    top = heapq.nsmallest(n, lv, key=key)
    if len(top) < n:
        lset = set(lv)
        top += heapq.nsmallest(n - len(top), filterfalse(lset.__contains__, ids), key=key)
    return top


def _same_tier(ids: Any) -> Any:
    return ids


def _match_filters(store: Store, q: SeedQuery, filt: _Filters, limit: int) -> SeedResult:
    driver = filt.driver(q)
    if driver is not None:
        cand = filt.apply(sorted(driver) if not isinstance(driver, array) else list(driver))
    else:  # a filter no index serves (e.g. an unindexable value): scan
        cand = filt.apply(list(store.live_node_ids()))
    exact = _described(store, q, cand)[:limit]  # they rank first (D172)
    rest = list(filterfalse(set(exact).__contains__, cand)) if exact else cand
    seeds = exact + _first(store, rest, limit - len(exact), _tsk_live(store, filt))
    return SeedResult("match", tuple(seeds), len(cand))


def _described(store: Store, q: SeedQuery, cand: list[int]) -> list[int]:
    """The candidates whose kind, labels and properties are exactly those q
    names, nothing more (every one prints the same): those without a
    nickname first, then by id. Empty when q names no kind or a filter
    other than equality."""
    if q.kind is None or q.contains or any(isinstance(v, tuple) for _k, v in q.props):
        return []
    labels = tuple(sorted(x for x in set(q.labels) if x != q.kind))
    want = node_key(q.kind, labels, dict(q.props) or None)
    keys, nicks = store.view().keys, store.view().nicks
    same = [n for n in cand if keys[n] == want]
    return sorted(same, key=lambda n: (n in nicks, n)) if len(same) > 1 else same


def _match_one_word(store: Store, filt: _Filters, w: Word, limit: int) -> SeedResult:
    """One keyword of one word: the score is the word's level, so the tiers,
    read from the top, are already in rank order. The filters run once, over
    the tiers that hold every match (the stem tiers hold every exact node
    too); the exact tiers then keep the nodes that passed."""
    idx = store.index
    xterms, sterms = w.xterms, w.sterms
    if sterms and w.ssize == w.xsize:
        # the stem tiers hold every exact node, each once: as many ids means
        # no node holds the stem alone, and the exact tiers say it all
        sterms = []
    exact: Sequence[tuple[int, Any]]
    stems: Sequence[tuple[int, Any]]
    tier: Callable[[Any], Any]
    if filt.trivial:
        # a tier is its term until its level is reached
        exact, stems, tier = xterms, sterms, idx.posting
        matched = w.ssize if sterms else w.xsize
    else:
        post = idx.posting
        tier = _same_tier
        if sterms:
            stems = [(lv, filt.apply(list(post(t) or ()))) for lv, t in sterms]
            passed = idset(stems)
            exact = [(lv, list(filter(passed.__contains__, post(t) or ()))) for lv, t in xterms]
        else:
            stems = ()
            exact = [(lv, filt.apply(list(post(t) or ()))) for lv, t in xterms]
        matched = tiers_size(stems or exact)
    live = _tsk_live(store, filt)
    by_exact, by_stem = dict(exact), dict(stems)  # one tier a level
    # a stem tier repeats nodes of the exact tiers: each node counts once, at
    # its exact level, which is never below its stem level (docs/math/seeding.md:
    # sat is concave). So the levels are read from the top until the seeds are
    # found, a stem tier dropping the exact nodes met so far.
    met: set[int] = set()
    seeds: list[int] = []
    for lv in sorted(by_exact.keys() | by_stem.keys(), reverse=True):
        here = by_exact.get(lv)
        ids: list[int] = list(tier(here) or ()) if here is not None else []
        more = by_stem.get(lv)
        if stems:
            met.update(ids)
        if more is not None:
            ids += filterfalse(met.__contains__, tier(more) or ())
        seeds += _first(store, ids, limit - len(seeds), live)
        if len(seeds) >= limit:
            break
    return SeedResult("match", tuple(seeds), matched)


def _match_general(
    store: Store, filt: _Filters, kws: list[Keyword], limit: int, W: Words | None = None
) -> SeedResult:
    if W is None:
        W = Words(store)
    names = filt.apply(sorted(_name_ids(kws, W, store)))
    if len(kws) > 1 and all(len(kw.toks) == 1 and len(kw.words) == 1 for kw in kws):
        got = _match_pruned(store, filt, kws, W, names, limit)
        if got is not None:
            return got
    kw_ids = [_keyword_ids(kw, W) for kw in kws]
    cand_set: set[int] = set(names).union(*kw_ids)
    cand = filt.apply(sorted(cand_set))
    if not cand:
        return SeedResult("match", (), 0)

    def matched_kws(nid: int) -> int:
        return sum(1 for ids in kw_ids if nid in ids)

    seeds, _cut = _ranked(store, filt, kws, W, cand, names, limit, matched_kws)
    return SeedResult("match", tuple(seeds), len(cand))


def _ranked(
    store: Store,
    filt: _Filters,
    kws: list[Keyword],
    W: Words,
    cand: list[int],
    names: list[int],
    limit: int,
    matched_kws: Callable[[int], int] | None,
    known: tuple[str, dict[int, int]] | None = None,
    per_word: Mapping[str, int] | None = None,
) -> tuple[list[int], tuple[bool, float]]:
    """The first ``limit`` of ``cand`` (ascending ids, the name matches
    among them) in rank order, and the ``(name tier, score)`` of the last
    candidate that could be one (every seed ranks at or above it).
    ``known`` is a word and the levels of every candidate holding it. The
    keywords a candidate matches are ``matched_kws(nid)``, or, when every
    keyword is one word, counted from the levels (``per_word``: how many
    keywords each word is)."""
    # columns aligned with cand, filled with C-level maps
    n_live = store.live_nodes
    scores: list[float] = [0.0] * len(cand)
    hits = [0] * len(cand) if per_word is not None else None
    for word in dict.fromkeys(w for kw in kws for w in kw.words):
        w = W(word)
        if not w.df:
            continue
        weight = idf(n_live, w.df)
        if known is not None and word == known[0]:
            levels = map(known[1].get, cand, repeat(0))
        elif w.df <= 8 * len(cand) * max(1, len(w.xterms) + len(w.sterms)):
            levels = map(w.levels().get, cand, repeat(0))  # a dict from the postings
        else:
            levels = map(w.level, cand)  # bisect the big postings
        lv = list(levels)
        scores = list(map(add, scores, map(weight.__mul__, lv)))
        if hits is not None and per_word is not None:
            hits = list(map(add, hits, map(per_word[word].__mul__, map(bool, lv))))
    name_set = set(names)
    first = list(zip(map(name_set.__contains__, cand), scores, strict=True))
    # the candidates that can be seeds by (name tier, score), then the full order
    cut = heapq.nlargest(limit, first)[-1]
    near = list(compress(range(len(cand)), map(cut.__le__, first)))
    live = set(_tsk_live(store, filt)([cand[i] for i in near]))
    key = store.view().keys

    def rank(i: int) -> tuple[bool, float, int, bool, str, int]:
        nid = cand[i]
        matched = hits[i] if hits is not None else matched_kws(nid)  # type: ignore[misc]
        return (not first[i][0], -first[i][1], -matched, nid not in live, key[nid], nid)

    return [cand[i] for i in sorted(near, key=rank)[:limit]], cut


def _match_pruned(
    store: Store, filt: _Filters, kws: list[Keyword], W: Words, names: list[int], limit: int
) -> SeedResult | None:
    """:func:`_match_general` for keywords of one word each, ranking only the
    nodes of the rarest words, or those and the top tiers of the commonest,
    when that settles the seeds, or None.

    A node's score is the sum over the query's words of IDF times its level
    for the word, and a node holds a word exactly when it matches that
    keyword. So a node holding none of the rarest words scores at most the
    sum of IDF times top level over the other words, and a node holding none
    but the commonest word, at a level below ``t``, at most its IDF times the
    next level below ``t`` (the bounds). When the last node that could be a
    seed among the name matches and the nodes of the rarest words (and of
    the commonest word's tiers down to ``t``) is a name match or scores above
    the bound of the nodes left out, no other node ranks before it, and
    ranking those nodes alone gives the seeds of the whole ranking
    (docs/math/seeding.md). Which nodes, and their bounds:
    :class:`~memnet.recall.prune.Pruned`."""
    words = [W(kw.words[0]) for kw in kws]  # one object a word (W remembers them)
    # the rarest words first; a word no node holds adds nothing
    held = sorted((w for w in dict.fromkeys(words) if w.df), key=lambda w: w.df)
    if len(held) < 2:
        return None
    pruned = Pruned(store, filt.apply, filt.trivial, held, names, limit)
    if not pruned.matched:
        return SeedResult("match", (), 0)
    per_word = Counter(w.word for w in words)
    big = pruned.big.word
    for cand, levels, bound in pruned.attempts(_tiers_down):
        seeds, cut = _ranked(store, filt, kws, W, cand, names, limit, None, (big, levels), per_word)
        if _beats(cut, bound):
            return SeedResult("match", tuple(seeds), pruned.matched)
    return None


def _beats(cut: tuple[bool, float], bound: float) -> bool:
    """Whether the last candidate that could be a seed, ``cut`` (name tier,
    score), ranks above every node scoring at most ``bound`` (with a margin
    against the rounding of sums taken in another order)."""
    return cut[0] or cut[1] > bound * (1.0 + 1e-9) + 1e-9


def _tiers_down(w: Word) -> list[tuple[int, list[bytes]]]:
    """The terms of ``w``'s nodes by level (exact or by stem, name flag
    removed), the highest level first: a node is under a term of its level
    or above it."""
    by: dict[int, list[bytes]] = {}
    for lv, t in w.xterms:
        by.setdefault(unflagged(lv), []).append(t)
    for lv, t in w.sterms:
        by.setdefault(lv, []).append(t)
    return sorted(by.items(), reverse=True)


def match(store: Store, q: SeedQuery, limit: int, words: Words | None = None) -> SeedResult:
    """MATCH_L: at most ``limit`` seeds, ranked as the module docstring says.
    ``words`` remembers the query words read (the walk scores nodes with
    them afterwards, :class:`~memnet.recall.relevance.Relevance`)."""
    W = words if words is not None else Words(store)
    filt = _Filters(store, q)
    kws = _keywords(q)
    if q.keywords and not kws:  # keywords with no word in them match nothing
        return SeedResult("match", (), 0)
    if not kws:
        return _match_filters(store, q, filt, limit)
    if len(kws) == 1 and len(kws[0].toks) == 1 and len(kws[0].words) == 1:
        return _match_one_word(store, filt, W(kws[0].words[0]), limit)
    return _match_general(store, filt, kws, limit, W)


def matches(store: Store, q: SeedQuery, nid: int) -> bool:
    """Whether node ``nid`` is one of the matches of ``q`` (filters and, when q
    has keywords, at least one keyword)."""
    filt = _Filters(store, q)
    if not filt.apply([nid]):
        return False
    kws = _keywords(q)
    if not kws:
        return not q.keywords
    W = Words(store)
    return nid in _name_ids(kws, W, store) or any(nid in _keyword_ids(kw, W) for kw in kws)


def by_nick(store: Store, nick: str) -> int | None:
    nid = store.nick_owner(nick)
    if nid is None or store.node_recycled(nid):
        return None
    return nid


__all__ = ["SeedResult", "by_nick", "match", "matches", "props_contain"]
