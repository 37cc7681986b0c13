"""The columns of a store, and what a storage reads and writes of them.

:class:`StoredGraph` holds the columns (a node or edge is an integer id into
a few parallel lists and arrays) and the store's side that faces a storage
layer: loading stored records (:meth:`StoredGraph.load`), giving them back
(:meth:`StoredGraph.stored_node`, :meth:`StoredGraph.stored_edges`) and
tracking what changed since the last flush. :class:`~memnet.graph.store.Store`
builds on it with every read and write that keeps the graph consistent.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..values import Value
from .columns import AdjList, CodedColumn, PropsList, StoreView
from .index import Index, le_array

NO_LABELS: tuple[str, ...] = ()


TERM_MEMO = 16384  # nodes whose creation terms a store keeps for the next flush


class StoredGraph:
    """The columns of a store (index 0 unused, so every handle is non-zero)."""

    def __init__(self) -> None:
        # nodes (index 0 unused so that every handle is non-zero)
        self._kind = CodedColumn("")
        self._labels = CodedColumn(NO_LABELS)
        self._props: PropsList = PropsList([None])
        self._key: list[str] = [""]
        self._adj: AdjList = AdjList([array("I")])
        self._nrec = bytearray(1)
        # tokens of each node's line in an interior Shape (0: not known yet),
        # filled by the session after a commit and by the first recall
        self._ltok = array("H", [0])
        self._nick: dict[int, str] = {}
        self._nick_owner: dict[str, int] = {}
        # edges
        self._etype = CodedColumn("")
        self._esrc = array("I", [0])
        self._edst = array("I", [0])
        self._eprops: dict[int, dict[str, Value]] = {}
        self._erec = bytearray(1)
        # the nodes that are the source of an edge with a `rank` property
        # (Store.ranked_sources): found on load, added to by the writes that
        # add such an edge, never taken from (a superset is harmless)
        self._ranks: set[int] = set()
        # derived
        self.index = Index()
        self.live_nodes = 0
        self.live_edges = 0
        self.live_bytes = 0
        self._kind_live: Counter[str] = Counter()
        # What changed since the last flush, when a cabinet asks for it
        # (None: nobody is tracking, so nothing is recorded).
        self.dirty_nodes: set[int] | None = None
        # nodes whose index terms may have changed (created, relabelled,
        # re-propertied, recycled): the ones whose stored postings a flush edits
        self.dirty_terms: set[int] | None = None
        self.dirty_edges: set[int] | None = None
        # the terms the index was given for nodes created since the last flush,
        # with the labels and props they were computed from, so the flush
        # need not compute them again (bounded: TERM_MEMO nodes at most)
        self._term_memo: dict[int, tuple[tuple[str, ...], Any, tuple[bytes, ...]]] = {}
        # what the storage holds of a node changed since the last flush, kept
        # at its first change (kind, labels, props as held, recycled), so the
        # flush need not read the node back to know the terms it had
        # (bounded: TERM_MEMO nodes at most; the others are read)
        self._before: dict[int, tuple[str, tuple[str, ...], Any, bool]] = {}
        # recycled edges leave the adjacency lists (a walk never reads them);
        # this counts them per node so a receipt can still say what it hid
        self._hidden: dict[int, int] = {}
        # how many nodes (recycled included) carry each extra label: built on
        # first use (Store.label_use), then kept exact by every write
        self._label_use: Counter[str] | None = None
        self._view = StoreView(
            self._kind,
            self._labels,
            self._props,
            self._key,
            self._adj,
            self._nrec,
            self._ltok,
            self._nick,
            self._nick_owner,
            self._etype,
            self._esrc,
            self._edst,
            self._eprops,
            self._erec,
            self._hidden,
        )

    def __getstate__(self) -> dict[str, Any]:
        # the label counts are derived and built again on first use: a copy
        # need not carry them (and building them changes nothing observable)
        state = self.__dict__.copy()
        state["_label_use"] = None
        return state

    def track_changes(self) -> None:
        """Start recording which elements change (for an incremental flush)."""
        if self.dirty_nodes is None:
            self.dirty_nodes = set()
            self.dirty_edges = set()
            self.dirty_terms = set()

    def take_changes(self) -> tuple[set[int], set[int]]:
        """The elements changed since the last call (the sets are kept by the caller)."""
        self.track_changes()
        assert self.dirty_nodes is not None and self.dirty_edges is not None
        return self.dirty_nodes, self.dirty_edges

    def clear_changes(self, nodes: set[int], edges: set[int]) -> None:
        """Forget changes that have been written (after a successful flush)."""
        if self.dirty_nodes is not None and self.dirty_edges is not None:
            self.dirty_nodes.difference_update(nodes)
            self.dirty_edges.difference_update(edges)
            if self.dirty_terms is not None:
                self.dirty_terms.difference_update(nodes)
            for memo in (self._term_memo, self._before):
                if memo:
                    for nid in nodes:
                        memo.pop(nid, None)

    def _remember_before(self, nid: int) -> None:
        """Keep a node as the storage holds it, before its first change since
        the last flush (see :meth:`stored_before`), when changes are tracked."""
        b = self._before
        if self.dirty_nodes is not None and nid not in b and len(b) < TERM_MEMO:
            b[nid] = (
                self._kind[nid],
                self._labels[nid],
                self._props.raw(nid),
                bool(self._nrec[nid]),
            )

    def stored_before(self, nid: int) -> tuple[str, tuple[str, ...], Any, bool] | None:
        """``(kind, labels, props, recycled)`` of a node as it was before its
        first change since the last flush (``props`` as held: a map, or the
        stored bytes), or None when not kept. For a node the storage held at
        that flush, this is what its record holds."""
        return self._before.get(nid)

    def _remember_terms(self, nid: int, terms: set[bytes]) -> None:
        """Keep the terms a new node was indexed under until it is flushed."""
        if self.dirty_nodes is not None and len(self._term_memo) < TERM_MEMO:
            self._term_memo[nid] = (self._labels[nid], self._props.raw(nid), tuple(terms))

    # -- bulk load (hydrate) ------------------------------------------------
    def load(
        self,
        nodes: Iterable[tuple[Any, ...]],
        etypes: list[str],
        esrc: array[int],
        edst: array[int],
        erec: bytes | bytearray,
        eprops: dict[int, dict[str, Value]],
        postings: Iterable[tuple[int, dict[bytes, bytes]]],
        *,
        kinds: dict[str, int],
        live_bytes: int,
        decode_props: Callable[[bytes], dict[str, Value] | None],
        damaged: Callable[[str], Exception],
    ) -> None:
        """Fill an empty store from stored records, ids dense from 1.

        ``nodes``: runs of consecutive nodes in id order (taken in one after
        the other), each as eight columns ``(kinds, labels, props, nicks,
        recycled, keys, adjs, ltoks)``, where an ``adj`` is the stored, already
        ordered adjacency (little-endian bytes of ``array('I')``, kept so until
        first read, see :class:`AdjList`), a ``key`` the stored observable key
        and an ``ltok`` the tokens of its interior line (0: unknown); the edges come as columns
        for ids 1.. (types, sources, targets, recycled flags, and props by
        id); ``postings`` are the stored index postings (maps of term to the
        bytes of its ids, with the shard of their terms, see ``Index.load``); ``kinds``
        the live nodes per kind and ``live_bytes`` the stored byte count.
        Nothing is re-sorted and no index is rebuilt: the work is a few list
        and array extensions per column and chunk.
        """
        if len(self._kind) != 1 or len(self._etype) != 1:
            raise ValueError("Store.load needs an empty store")
        self._props._decode = decode_props
        for kind_col, labels, props, nicks, recs, keys, adjs, ltoks in nodes:
            first = len(self._kind)
            self._kind.extend(kind_col)
            self._labels.extend(labels)  # tuples, () when none (see records._is_node)
            # bytes, decoded when read (an empty map is held as None)
            self._props.extend(props if b"" not in props else (x or None for x in props))
            self._key.extend(keys)
            self._adj.extend(adjs)  # the stored bytes: arrays when first read
            self._nrec.extend(map(bool, recs))
            self._ltok.extend(ltoks)
            if nicks.count(None) == len(nicks):
                continue
            for nid, nick in enumerate(nicks, first):
                if nick is not None:
                    self._nick[nid] = nick
                    if not recs[nid - first]:
                        self._nick_owner[nick] = nid
        self._etype.extend(etypes)
        self._esrc.extend(esrc)
        self._edst.extend(edst)
        self._erec.extend(erec)
        self._eprops.update(eprops)
        self._ranks = {self._esrc[e] for e, p in eprops.items() if "rank" in p}
        hidden = self._hidden
        i = self._erec.find(1, 1)
        while i != -1:
            for nid in (self._esrc[i], self._edst[i]):
                hidden[nid] = hidden.get(nid, 0) + 1
            i = self._erec.find(1, i + 1)
        self.index.load(postings, len(self._kind) - 1, damaged)
        self._kind_live.update(kinds)
        self.live_nodes = sum(self._kind_live.values())
        self.live_edges = len(self._erec) - 1 - self._erec.count(1)
        self.live_bytes = live_bytes

    def forget_line_tokens(self) -> None:
        """Forget every node's line tokens (they were another tokenizer's)."""
        self._ltok[:] = array("H", bytes(2 * len(self._ltok)))

    # -- records as a storage keeps them (the inverse of load) ----------------
    def stored_node(
        self, nid: int
    ) -> tuple[
        str, tuple[str, ...], dict[str, Value] | bytes | None, str | None, bool, str, bytes, int
    ]:
        """``(kind, labels, props, nick, recycled, key, adj, ltok)`` of a node as
        :meth:`load` takes it back: ``props`` as held (the stored bytes when
        never read), ``adj`` as little-endian bytes."""
        return (
            self._kind[nid],
            self._labels[nid],
            self._props.raw(nid),
            self._nick.get(nid),
            bool(self._nrec[nid]),
            self._key[nid],
            self._adj.raw(nid),
            self._ltok[nid],
        )

    def stored_edges(
        self, lo: int, hi: int
    ) -> tuple[list[str], array[int], array[int], bytearray, dict[int, dict[str, Value]]]:
        """Edges ``lo`` to ``hi - 1`` as :meth:`load` takes them: columns
        (types, sources, targets, recycled flags) and the props by edge id."""
        get = self._eprops.get
        props = {e: p for e in range(lo, hi) if (p := get(e))}
        return (
            self._etype.take(lo, hi),
            self._esrc[lo:hi],
            self._edst[lo:hi],
            self._erec[lo:hi],
            props,
        )

    def adjacency_top(self) -> int:
        """The largest adjacency entry of any node (0: none), read without
        turning stored entries into arrays."""
        return max(le_array(b"".join(self._adj)), default=0)


__all__ = ["StoredGraph"]
