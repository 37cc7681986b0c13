"""The pruned MATCH_L: which nodes to rank, and the bound the ranking must beat.

A q of several one-word keywords is ranked over the name matches and the
nodes of its rarest words first, then over those and the top tiers of its
commonest word, before it is ranked over every match
(:func:`memnet.recall.seed._match_pruned` says why that gives the same
seeds). :class:`Pruned` lists those candidate sets, smallest first, each with
the bound of the nodes it leaves out; MATCH_L ranks them in turn and stops at
the first whose last possible seed beats its bound. Nothing here ranks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

from ..graph.store import Store
from .relevance import Word, idf, unflagged

#: one ranking to try: the candidates (ascending ids, past the filters), the
#: commonest word's level of each, and the bound on the score of any node left out
Attempt = tuple[list[int], dict[int, int], float]


def top_level(w: Word) -> int:
    """The highest level any node holds ``w`` at (exact or by stem)."""
    return max([unflagged(lv) for lv, _t in w.xterms] + [lv for lv, _t in w.sterms], default=0)


class Pruned:
    """The candidate sets of one pruned ranking: ``held`` (the query's words
    some node holds, rarest first, at least two) over the nodes that pass
    ``apply`` (the hard filters; ``trivial``: there are none). :attr:`matched`
    counts every match, as the whole ranking would."""

    def __init__(
        self,
        store: Store,
        apply: Callable[[list[int]], list[int]],
        trivial: bool,
        held: list[Word],
        names: list[int],
        limit: int,
    ) -> None:
        n_live = store.live_nodes
        self.store, self.apply, self.trivial = store, apply, trivial
        self.held, self.names, self.limit = held, names, limit
        self.idfs = [idf(n_live, w.df) for w in held]
        self.tops = [wt * top_level(w) for wt, w in zip(self.idfs, held, strict=True)]
        big = self.big = held[-1]
        small = set(names).union(*(w.ids() for w in held[:-1]))
        # the commonest word's level of each node of ``small`` (the other
        # words' nodes), found by bisecting its postings, or its node set
        self.small_lv: dict[int, int] | None = None
        self.big_ids: set[int] = set()
        self.big_tiers = len(big.xterms) + len(big.sterms)
        if trivial and 8 * len(small) * self.big_tiers < big.df:
            # the union's size without a set of the commonest word's nodes
            self.small_lv = {n: big.level(n) for n in small}
            self.n_all = self.matched = big.df + sum(1 for v in self.small_lv.values() if not v)
        else:
            self.big_ids = big.ids()
            everyone = small | self.big_ids
            self.n_all = len(everyone)
            self.matched = self.n_all if trivial else len(apply(sorted(everyone)))

    def big_levels(self, nodes: list[int], into: dict[int, int]) -> dict[int, int]:
        """``into`` with the commonest word's level of each of ``nodes`` (nodes
        of ``small``): bisected in its postings for the few that hold it, read
        from a map of all its nodes when many do."""
        if self.small_lv is not None:
            small_lv = self.small_lv
            into.update((n, small_lv[n]) for n in nodes)
            return into
        big, big_ids = self.big, self.big_ids
        holders = [n for n in nodes if n in big_ids]
        into.update(dict.fromkeys(nodes, 0))
        if 8 * len(holders) * self.big_tiers > big.df:
            lv = big.levels()
            into.update((n, lv.get(n, 0)) for n in holders)
        else:
            into.update((n, big.level(n)) for n in holders)
        return into

    def settle(self, some: set[int], bound: float) -> Iterator[Attempt]:
        """Ranking ``some`` alone, when it may hold the seeds and saves work."""
        if len(some) < self.limit or 2 * len(some) > self.n_all:
            return  # too few to hold the seeds, or too many to save work
        cand = self.apply(sorted(some))
        if len(cand) >= self.limit:
            yield cand, self.big_levels(cand, {}), bound

    def attempts(
        self, tiers_down: Callable[[Word], Sequence[tuple[int, list[bytes]]]]
    ) -> Iterator[Attempt]:
        """The candidate sets, in the order MATCH_L ranks them: the name
        matches and the rarest words' nodes, one word more each time; then
        with them the commonest word's nodes, read from its top level down
        (``tiers_down``: its terms by level, highest first): once L of them
        pass the filters, each scores at least its IDF times the level
        reached, above the bound of the nodes below that level (a ranking
        that settles whatever the other words' nodes alone would, and
        more); last, when there are too few nodes above its last level or
        too many, the other words' nodes alone."""
        held, tops, limit, n_all = self.held, self.tops, self.limit, self.n_all
        apply, trivial = self.apply, self.trivial
        some: set[int] = set(self.names)
        for i in range(1, len(held) - 1):
            some |= held[i - 1].ids()
            yield from self.settle(some, math.fsum(tops[i:]))
        some |= held[-2].ids()
        post = self.store.index.posting
        top: dict[int, int] = {}  # the nodes of the tiers read -> their level
        passed = 0  # how many of them pass the filters
        tiers = tiers_down(self.big)
        for j, (lv, terms) in enumerate(tiers[:-1]):
            new = []
            for t in terms:
                for n in post(t) or ():
                    if n not in top:
                        top[n] = lv
                        new.append(n)
            if 2 * len(top) > n_all:
                break
            passed += len(new) if trivial else len(apply(sorted(new)))
            if passed < limit:
                continue
            part = some.union(top)
            if 2 * len(part) > n_all:
                break
            cand = apply(sorted(part))
            # the commonest word's levels: read with its tiers, or (the other
            # words' nodes below those tiers) looked up
            levels = self.big_levels([n for n in cand if n not in top], dict(top))
            yield cand, levels, self.idfs[-1] * tiers[j + 1][0]
        yield from self.settle(some, tops[-1])


__all__ = ["Attempt", "Pruned", "top_level"]
