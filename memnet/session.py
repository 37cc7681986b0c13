"""Session: one bounded working memory and its two verbs.

Example::

    >>> from memnet import Session
    >>> s = Session("demo")
    >>> r = s.commit("INSERT (t:TSK {title: 'Fix pricing page', status: 'open'}), "
    ...              "(l:LAW {text: 'Never ship on Fridays'})")
    >>> sorted(r.ids)
    ['l', 't']
    >>> shape = s.recall("TSK status:open pricing")
    >>> shape.receipt.seed_mode, shape.receipt.rows
    ('match', 2)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from .commit import (
    Bulk,
    Caps,
    CommitRecord,
    CommitResult,
    gc_paused,
    import_elements,
    plan_and_apply,
)
from .errors import NotADelta
from .gql import ast
from .gql.emit import format_query
from .gql.parse import parse_delta
from .graph.store import Store, edge_handle, node_handle
from .ids import check_session_id
from .limits import LIMITS, Limits
from .recall.delta import Archive, Memo, memo_key, recall_since
from .recall.hints import Hints
from .recall.lines import LineCache, prime_lines
from .recall.peak import ExemplarState, PeakState, census
from .recall.receipt import LINE_TOKENS, finish
from .recall.relevance import Relevance, Words, read_in
from .recall.seed import SeedResult, by_nick, match, matches
from .recall.shape import Shape, build_body
from .recall.walk import WalkResult, shape_walk
from .session_args import check_delta, check_options, recall_args
from .tokens import DEFAULT_TOKENIZER
from .tokens import loaded as tokens_loaded

DEFAULT_HISTORY = 64  # commit records kept in memory per session


class Session:
    """A labelled property graph an agent reads with :meth:`recall` and writes
    with :meth:`commit`.

    ``caps`` is the rate cap R (live rows and bytes); ``delete_on_settle``
    recycles a task when it is settled; ``history_limit`` bounds how many
    commit records stay in memory (None keeps them all; a cabinet keeps the
    whole log on disk either way, and commits not yet flushed are always kept).
    """

    def __init__(
        self,
        name: str,
        *,
        caps: Caps | None = None,
        delete_on_settle: bool = False,
        history_limit: int | None = DEFAULT_HISTORY,
        tokenizer: str = DEFAULT_TOKENIZER,
    ) -> None:
        self.name = check_session_id(name)
        check_options(caps, delete_on_settle, history_limit, tokenizer)
        self.caps = caps or Caps()
        self.delete_on_settle = delete_on_settle
        self.history_limit = history_limit
        self.tokenizer = tokenizer
        self.store = Store()
        self.version = 0
        self._history: list[CommitRecord] = []
        # the commits made since a store (a cabinet) last took them; None
        # while no store keeps this session (see start_journal)
        self._journal: list[CommitRecord] | None = None
        #: held by every read and write of the session (reentrant): code that
        #: reads the store over several calls, or writes it, takes it too
        self.lock = threading.RLock()
        self._lines = LineCache(tokenizer)
        # Peak_L and the outline's exemplars: built on first use, then kept up
        # to date by every commit (recall/peak.py)
        self._peaks: PeakState | None = None
        self._exemplars: ExemplarState | None = None
        self._states_at = 0  # the version the two states above describe
        self._recalled = False
        # seeds of recent queries at the current version: a broad q costs its
        # matches once per version, then a lookup
        # (keyed by the normalised q text: SeedQuery equality would take 1, 1.0
        # and true for the same value)
        self._seed_cache: dict[
            tuple[str, str, int | None, int, bool], tuple[SeedResult, Relevance | None]
        ] = {}
        self._seed_cache_version = 0
        # the Shapes served lately, and (set by the cabinet the session was
        # opened from) its past versions: for Recall with since=
        self._memo = Memo()
        #: where past versions come from for Recall with since= (set by the
        #: store the session was opened from; None for a session made here)
        self.archive: Archive | None = None

    def __repr__(self) -> str:
        s = self.store
        return (
            f"Session({self.name!r}, version={self.version}, nodes={s.live_nodes}, "
            f"edges={s.live_edges})"
        )

    # -- Commit ---------------------------------------------------------------
    def commit(self, delta: str | ast.Delta) -> CommitResult:
        """Apply a Δ atomically: all of it or none of it.

        ``delta`` is shaped GQL text (or an already parsed :class:`~memnet.gql.ast.Delta`).
        Returns the minted handles and the new version; raises a
        :class:`~memnet.errors.MemNetError` with the session unchanged otherwise.
        """
        check_delta(delta)
        with gc_paused():
            d = parse_delta(delta) if isinstance(delta, str) else delta
            with self.lock:
                try:
                    result, record = plan_and_apply(
                        self.store,
                        d,
                        version=self.version,
                        caps=self.caps,
                        delete_on_settle=self.delete_on_settle,
                    )
                finally:
                    # the syntax tree parsed here is freed while the collector
                    # is held: the first collection after the write then
                    # walks what the write kept, not the whole tree
                    del d
                self._keep(record)
                return result

    def commit_bulk(self, bulk: Bulk) -> CommitResult:
        """Apply a :class:`~memnet.commit.Bulk` batch: the bulk path of Commit.

        The same as ``commit(bulk.text())`` (atomic, the same checks and
        errors, handles, store state and history record, so ``at=`` and delta
        recall read it like any commit) without writing or parsing text.
        """
        if not isinstance(bulk, Bulk):
            raise NotADelta(f"commit_bulk takes a memnet.Bulk, got {type(bulk).__name__}")
        return self.commit(bulk.to_delta())

    def _prime(self, record: CommitRecord | None) -> None:
        """Count the interior Shape lines of the nodes a commit wrote, so the
        first Recall that reaches them does not pay for it."""
        # only in a session that recalls in this process (or where the
        # tokenizer is loaded): a process that commits and exits (the CLI)
        # should not count for nothing
        if record is not None and (self._recalled or tokens_loaded(self.tokenizer)):
            prime_lines(self.store, (c.id for c in record.changes if c.op[0] == "N"), self._lines)

    def _keep(self, record: CommitRecord | None) -> None:
        """Make a written change a version: bump, history, pending flush."""
        if record is None:
            return
        self._prime(record)
        if self._states_at == record.version - 1:
            if self._peaks is not None:
                self._peaks.apply(record.changes)
            if self._exemplars is not None:
                self._exemplars.apply(record.changes)
            self._states_at = record.version
        self.version = record.version
        self._history.append(record)
        if self._journal is not None:
            self._journal.append(record)
        if self.history_limit is not None and len(self._history) > self.history_limit:
            del self._history[: len(self._history) - self.history_limit]

    def import_batch(
        self, nodes: list[Any], edges: list[Any]
    ) -> tuple[CommitResult, list[int], list[int]]:
        """Add a batch of elements Absorb has checked as one version: the
        result and the ids given to the nodes and the edges, in order."""
        with self.lock, gc_paused():
            result, record, nids, eids = import_elements(
                self.store, nodes, edges, version=self.version, caps=self.caps
            )
            self._keep(record)
            return result, nids, eids

    # -- the journal: what a store that keeps this session lacks ---------------
    def start_journal(self) -> None:
        """Keep every commit from now on, whatever ``history_limit`` says,
        until :meth:`settle` (called by a store that now holds this version)."""
        with self.lock:
            self._journal = []

    def stop_journal(self) -> None:
        """Keep no journal any more (the session no longer belongs to a store)."""
        with self.lock:
            self._journal = None

    @property
    def journaling(self) -> bool:
        """Whether a store keeps this session (a journal is kept)."""
        return self._journal is not None

    def journal(self) -> list[CommitRecord]:
        """The commits made since the journal was started or last settled,
        oldest first (empty when no journal is kept)."""
        with self.lock:
            return list(self._journal or ())

    def settle(self, version: int) -> None:
        """Forget the journaled commits up to ``version``: a store holds them."""
        with self.lock:
            if self._journal:
                self._journal = [r for r in self._journal if r.version > version]

    @property
    def dirty(self) -> bool:
        """Whether this session holds commits its cabinet has not stored yet."""
        return bool(self._journal)

    def history(self) -> list[CommitRecord]:
        """The commit records kept in memory, oldest first."""
        with self.lock:
            return list(self._history)

    # -- Recall ---------------------------------------------------------------
    def recall(
        self,
        q: str | ast.SeedQuery = "",
        *,
        k: int = LIMITS.k,
        max_rows: int | None = None,
        limit: int | None = None,
        fanout: int = LIMITS.fanout,
        view: str = "interior",
        laws: bool = True,
        since: str | None = None,
        max_tokens: int | None = None,
    ) -> Shape:
        """Seed nodes from ``q``, walk ``k`` hops, return a Shape of at most
        ``max_rows`` rows (and, given ``max_tokens``, at most that many tokens).

        ``q`` is codebook tokens (``TSK status:open pricing``), the seed query
        form (``MATCH (n:TSK) WHERE n.title CONTAINS 'pricing' LIMIT 3``), or
        empty for the session outline.

        ``max_rows`` defaults to ``LIMITS.max_rows`` (50), or, given
        ``max_tokens``, to its ceiling (``LIMITS.max_rows_max``): the token
        budget is then the bound. ``limit`` caps the seeds. Left out, the first ``LIMITS.limit`` (5)
        matches seed the Shape and the next ones (up to ``LIMITS.limit_max``)
        join the walk when they answer q better than what is left of it, as
        rows and tokens allow (docs/math/walk.md). The Shape fills by rank,
        seeds, rules, then the walk, and stops before ``max_rows`` rows or
        ``max_tokens`` tokens, the receipt line included.

        ``since`` is the etag of a Shape this q gave with the same knobs, at
        this version or one of the 16 before it: the answer is then only what
        changed (``receipt.answer`` is ``delta``, or ``unchanged`` with no
        body), or the whole Shape with ``receipt.why`` when the etag cannot be
        resolved (``memnet/recall/delta.py``).
        """
        sq, knobs = recall_args(q, k, max_rows, limit, fanout, view, laws, since, max_tokens)
        k, max_rows, limit, fanout, view, laws, max_tokens = knobs
        with self.lock:
            if since is not None:
                return recall_since(self, sq, knobs, since)
            shape = self.recall_checked(
                sq,
                k=k,
                max_rows=max_rows,
                limit=limit,
                fanout=fanout,
                view=view,
                laws=laws,
                max_tokens=max_tokens,
            )
            self._memo.put(memo_key(shape, sq, knobs), self.version, shape)
            return shape

    def outline(
        self,
        *,
        max_rows: int = LIMITS.max_rows,
        limit: int | None = None,
        view: str = "shell",
        laws: bool = True,
    ) -> Shape:
        """The session outline: each kind with its count, exemplars and laws."""
        return self.recall("", max_rows=max_rows, limit=limit, view=view, laws=laws)

    def _seed(self, sq: ast.SeedQuery, limit: int, open_l: bool, words: Words) -> SeedResult:
        s = self.store
        if sq.empty:
            return SeedResult("outline", self._cached_exemplars(limit), 0)
        if sq.nick is not None:
            nid = by_nick(s, sq.nick)
            rest = replace(sq, nick=None, limit=None)
            seeds: tuple[int, ...] = (nid,) if nid is not None else ()
            matched = len(seeds)
            if not rest.empty and limit > len(seeds):
                m = match(s, rest, limit, words)
                seeds += tuple(x for x in m.seeds if x not in seeds)[: limit - len(seeds)]
                # the nick's owner is counted once even when the rest matches it too
                matched = m.matched + (0 if nid is None or matches(s, rest, nid) else 1)
            if nid is not None:
                return SeedResult("nick", seeds, matched)
            if seeds:  # the nick is unknown but the rest of q matched
                return SeedResult("match", seeds, matched)
        else:
            if open_l and sq.keywords:
                # L left open: the next matches may join the walk as seeds
                m = match(s, sq, LIMITS.limit_max, words)
                m = replace(m, seeds=m.seeds[:limit], more=m.seeds[limit:])
            else:
                m = match(s, sq, limit, words)
            if m.seeds:
                return m
        top = self._cached_peaks()[:limit]
        if top:
            return SeedResult("peak", top, 0)
        return SeedResult("skip", (), 0)

    def _states(self) -> None:
        """Forget the peak and exemplar states when they describe another
        version (a store changed outside commits, e.g. a copy walked back for
        delta recall): they are built again on use."""
        if self._states_at != self.version:
            self._peaks = self._exemplars = None
            self._states_at = self.version

    def _cached_peaks(self) -> tuple[int, ...]:
        self._states()
        if self._peaks is None:
            self._peaks = PeakState(self.store)
        return self._peaks.top(LIMITS.limit_max)

    def _cached_exemplars(self, limit: int) -> tuple[int, ...]:
        self._states()
        if self._exemplars is None:
            self._exemplars = ExemplarState(self.store)
        return self._exemplars.top(limit)

    def _cached_seed(
        self, sq: ast.SeedQuery, qtext: str, limit: int, open_l: bool
    ) -> tuple[SeedResult, Relevance | None]:
        """The seeds of ``sq`` and what scores nodes against it, once per
        version."""
        if self._seed_cache_version != self.version:
            self._seed_cache.clear()
            self._seed_cache_version = self.version
        key = (qtext, sq.form, sq.limit, limit, open_l)
        hit = self._seed_cache.get(key)
        if hit is None:
            if len(self._seed_cache) >= 1024:
                self._seed_cache.clear()
            words = Words(self.store)
            seed = self._seed(sq, limit, open_l, words)
            rel = (
                Relevance(self.store, sq.keywords, words)
                if (sq.keywords and seed.mode in ("match", "nick"))
                else None
            )
            hit = self._seed_cache[key] = (seed, rel or None)
        return hit

    @property
    def memo(self) -> Memo:
        """The Shapes this session served lately (for Recall with since=)."""
        return self._memo

    @property
    def line_cache(self) -> LineCache:
        """The token counts of Shape lines, kept per session."""
        return self._lines

    def recall_checked(
        self,
        sq: ast.SeedQuery,
        *,
        k: int,
        max_rows: int,
        limit: int | None,
        fanout: int,
        view: str,
        laws: bool,
        max_tokens: int | None = None,
    ) -> Shape:
        """Recall a parsed q with knobs :meth:`recall` has checked, at the
        session's version (no since=, nothing remembered); the lock held."""
        s = self.store
        self._recalled = True
        sq, note = read_in(s, sq)
        qtext = format_query(sq)
        open_l = limit is None
        limit = LIMITS.limit if limit is None else limit
        seed, rel = self._cached_seed(sq, qtext, limit, open_l)
        if seed.mode == "skip":
            walk = WalkResult()
        else:
            walk = shape_walk(
                s,
                seed.seeds,
                k=0 if seed.mode == "outline" else k,
                max_rows=max_rows,
                fanout=fanout,
                laws=laws,
                rel=rel,
                extra=seed.more,
            )
        budget = None if max_tokens is None else max_tokens - LINE_TOKENS - 1
        cen = tuple(census(s)) if seed.mode == "outline" else ()
        while True:
            npats, epats, body, body_tokens, taken = build_body(
                s, walk.items, view, self._lines, None if budget is None else max(budget, 0)
            )
            walk.keep(taken)
            roots = seed.seeds
            if seed.more and len(walk.roots) > len(roots):
                roots += tuple(n for n in walk.roots if n not in set(roots))
            seeds = tuple(node_handle(n) for n in roots)
            fields: dict[str, Any] = dict(
                session=self.name,
                version=self.version,
                q=qtext,
                seed_mode=seed.mode,
                seeds=seeds,
                matched=seed.matched,
                rows=walk.rows,
                max_rows=max_rows,
                hops=walk.hops,
                k=0 if seed.mode == "outline" else k,
                clamped=walk.clamped,
                hidden=walk.hidden,
                laws=len(walk.laws),
                laws_cut=walk.laws_cut,
                periphery=tuple(node_handle(n) for n in walk.periphery),
                periphery_q=Hints(s, walk.periphery),
                view=view,
                tokenizer=self.tokenizer,
                holds_answer=self._holds(seed),
                read_first=self._read_first(seed, sq, cen),
                advice=self._advice(seed, walk, limit, open_l, max_tokens),
                census=cen,
                max_tokens=max_tokens,
                note=note,
            )
            text, receipt = finish(fields, body, body_tokens, self._lines)
            if max_tokens is None or receipt.tokens <= max_tokens or not walk.items:
                return Shape(text, receipt, npats, epats, seeds)
            # the line took more than its share: give the body less
            budget = body_tokens - (receipt.tokens - max_tokens)

    def _holds(self, seed: SeedResult) -> bool:
        if seed.mode in ("match", "nick"):
            return True
        if seed.mode == "outline":
            return self.store.live_nodes > 0
        return False

    def _read_first(
        self, seed: SeedResult, sq: ast.SeedQuery, cen: tuple[tuple[str, int], ...]
    ) -> str:
        s = self.store
        if seed.mode == "outline":
            if not cen:
                return f"session {self.name} is empty"
            kinds = ", ".join(f"{c} {k}" for k, c in cen[:6])
            return (
                f"outline of {self.name}: {s.live_nodes} live nodes ({kinds}); "
                "recall with a kind, key:value or keyword to go deeper"
            )
        if seed.mode == "skip":
            return "the memory holds nothing on this q"
        if seed.mode == "peak":
            return "nothing matched q: these are the busiest hubs"
        first = seed.seeds[0]
        props = s.node_props(first)
        label = next(
            (v for k in ("title", "name", "path") if isinstance(v := props.get(k), str)), ""
        )
        label = f" {label[:60]!r}" if label else ""
        return (
            f"{len(seed.seeds)} seed(s) from {seed.matched} match(es); start at "
            f"{node_handle(first)} ({s.node_kind(first)}{label})"
        )

    def _advice(
        self, seed: SeedResult, walk: WalkResult, limit: int, open_l: bool, max_tokens: int | None
    ) -> tuple[str, ...]:
        """What the caller should send next, when the Shape could not say it
        all: each a change to the same Recall, runnable as written."""
        out: list[str] = []
        if seed.mode in ("match", "nick") and seed.matched > limit and not open_l:
            out.append(
                f"q matched {seed.matched} nodes and limit={limit} seeded the Shape: "
                "recall without limit to take more as room allows"
            )
        if max_tokens is not None and not walk.rows and seed.seeds:
            out.append(f"max_tokens={max_tokens} leaves no room for a row: raise it")
        if walk.laws_cut:
            out.append(
                f"{walk.laws_cut} standing rule(s) did not fit: recall with laws=false "
                "if you hold them already"
            )
        s = self.store
        if (s.live_nodes + s.live_edges) >= 0.9 * self.caps.rows:
            out.append("the session is near its cap: start a new session (S_i+1) for new work")
        return tuple(out)

    # -- inspection ---------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Live counts and sizes (cheap, no scan)."""
        s = self.store
        return {
            "session": self.name,
            "version": self.version,
            "nodes": s.live_nodes,
            "edges": s.live_edges,
            "rows": s.live_nodes + s.live_edges,
            "bytes": s.live_bytes,
            "cap_rows": self.caps.rows,
            "cap_bytes": self.caps.bytes,
        }

    def handles(self) -> Iterator[str]:
        """Handles of every live node."""
        return (node_handle(n) for n in self.store.live_node_ids())

    def to_networkx(self) -> Any:
        """The live graph as a ``networkx.MultiDiGraph`` for your own analysis.

        Nodes are keyed by handle with ``kind``, ``labels``, ``props`` and
        ``nick`` attributes; edges are keyed by edge handle with ``type`` and
        ``props``. Recycled elements are left out. Not used by Recall.
        """
        import networkx as nx

        g = nx.MultiDiGraph(name=self.name, version=self.version)
        s = self.store
        with self.lock:
            for n in s.live_node_ids():
                g.add_node(
                    node_handle(n),
                    kind=s.node_kind(n),
                    labels=s.extra_labels(n),
                    props=dict(s.node_props(n)),
                    nick=s.node_nick(n),
                )
            for e in s.live_edge_ids():
                a, b = s.edge_ends(e)
                if s.node_recycled(a) or s.node_recycled(b):
                    continue
                g.add_edge(
                    node_handle(a),
                    node_handle(b),
                    key=edge_handle(e),
                    type=s.edge_type(e),
                    props=dict(s.edge_props(e)),
                )
        return g


__all__ = ["LIMITS", "Limits", "Session"]
