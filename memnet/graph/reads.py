"""What a store answers without changing: lookups, element reads, live
counts and the names it holds.

:class:`GraphReads` is the read side of :class:`~memnet.graph.store.Store`,
over the columns of :class:`~memnet.graph.stored.StoredGraph`; the store adds
every write (and the adjacency order writes keep) on top of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Set

from ..values import Value, format_value, props_text
from .columns import StoreView
from .handles import parse_handle, text_bytes
from .index import Index
from .stored import StoredGraph

OUT, IN = 0, 1
_NO_PROPS: Mapping[str, Value] = {}


class GraphReads(StoredGraph):
    """The reads of a store: every method here leaves the graph as it is."""

    # -- sizes and lookups --------------------------------------------------
    @property
    def next_node(self) -> int:
        return len(self._kind)

    @property
    def next_edge(self) -> int:
        return len(self._etype)

    def has_node(self, nid: int) -> bool:
        return 0 < nid < len(self._kind)

    def has_edge(self, eid: int) -> bool:
        return 0 < eid < len(self._etype)

    def node_live(self, nid: int) -> bool:
        return 0 < nid < len(self._kind) and not self._nrec[nid]

    def resolve(self, handle: str) -> tuple[str, int] | None:
        """A minted handle → ``('n'|'e', id)``; None when never minted."""
        h = parse_handle(handle)
        if h is None:
            return None
        if h[0] == "n" and self.has_node(h[1]):
            return h
        if h[0] == "e" and self.has_edge(h[1]):
            return h
        return None

    def node_props(self, nid: int) -> Mapping[str, Value]:
        return self._props[nid] or {}

    def node_bytes(self, nid: int) -> int:
        return text_bytes(self._key[nid]) + 8

    def edge_bytes(self, eid: int) -> int:
        ep = self._eprops.get(eid)
        return len(self._etype[eid]) + (text_bytes(props_text(ep)) if ep else 0) + 8

    # -- reads ----------------------------------------------------------------
    def holders(self, key: str, value: Value, kind: str | None = None) -> list[int]:
        """The live nodes (of ``kind``) whose property ``key`` is ``value``
        (``1``, ``1.0`` and ``true`` told apart), oldest first. Found through
        the index: the value's posting, or for a long string the posting of
        its rarest word, then an exact test; never a scan of every node (a
        value with no word at all, such as a list, finds nothing)."""
        idx = self.index
        posting = idx.prop(key, value)
        if posting is None:
            if not isinstance(value, str):
                return []
            from .words import present_terms, words_of

            # the rarest word by the sizes of its postings; only its ids are read
            size = idx.posting_size
            sized = [
                (sum(size(t) for _lv, t in present_terms(idx.shard, w)[0]), w)
                for w in set(words_of(value))
            ]
            if not sized:
                return []
            posting = idx.word_ids(min(sized)[1])
        want = format_value(value)
        out = []
        for nid in posting:
            if self._nrec[nid] or (kind is not None and self._kind[nid] != kind):
                continue
            props = self.node_props(nid)
            got = props.get(key) if props else None
            if got is not None and format_value(got) == want:
                out.append(nid)
        return sorted(out)

    def ranked_sources(self) -> Set[int]:
        """The nodes that are the source of a live edge with a ``rank``
        property (Host Snap's ``HIT {rank}``), so the walk takes their
        neighbours in rank order. It may hold a node whose ranked edges are
        gone (a write adds to it, none takes from it)."""
        return self._ranks

    def live_entries(self, nid: int) -> Iterator[tuple[int, int, int]]:
        """``(edge, dir, other)`` for live edges to live nodes, in order."""
        esrc, edst, erec, nrec = self._esrc, self._edst, self._erec, self._nrec
        for entry in self._adj[nid]:
            e = entry >> 1
            if erec[e]:
                continue
            d = entry & 1
            other = edst[e] if d == OUT else esrc[e]
            if nrec[other]:
                continue
            yield e, d, other

    def live_node_ids(self) -> Iterator[int]:
        nrec = self._nrec
        return (i for i in range(1, len(self._kind)) if not nrec[i])

    def live_edge_ids(self) -> Iterator[int]:
        erec = self._erec
        return (i for i in range(1, len(self._etype)) if not erec[i])

    def node_labels(self, nid: int) -> tuple[str, ...]:
        """Kind first, then the extra labels."""
        kinds, labels = self._kind, self._labels
        return (kinds.names[kinds.codes[nid]], *labels.names[labels.codes[nid]])

    def node_state(
        self, nid: int
    ) -> tuple[str, tuple[str, ...], dict[str, Value] | None, str | None, bool]:
        """``(kind, labels, props, nick, recycled)`` of a node, as history records it
        (``labels`` without the kind; ``props`` shared, never to be mutated)."""
        return (
            self._kind[nid],
            self._labels[nid],
            self._props[nid],
            self._nick.get(nid),
            bool(self._nrec[nid]),
        )

    def edge_state(self, eid: int) -> tuple[str, int, int, dict[str, Value] | None, bool]:
        """``(type, src, dst, props, recycled)`` of an edge, as history records it."""
        return (
            self._etype[eid],
            self._esrc[eid],
            self._edst[eid],
            self._eprops.get(eid),
            bool(self._erec[eid]),
        )

    def has_label(self, nid: int, label: str) -> bool:
        kinds, labels = self._kind, self._labels
        return kinds.names[kinds.codes[nid]] == label or label in labels.names[labels.codes[nid]]

    def view(self) -> StoreView:
        """The columns, read-only, for a loop over many elements (bind it once
        per call; it stays valid as the store grows)."""
        return self._view

    def node_kind(self, nid: int) -> str:
        kinds = self._kind
        return kinds.names[kinds.codes[nid]]

    def extra_labels(self, nid: int) -> tuple[str, ...]:
        """A node's labels besides its kind, sorted."""
        return self._labels[nid]

    def node_key(self, nid: int) -> str:
        """A node's observable key (the order of Shapes and adjacency)."""
        return self._key[nid]

    def node_nick(self, nid: int) -> str | None:
        return self._nick.get(nid)

    def nick_owner(self, nick: str) -> int | None:
        """The live node holding ``nick``, if any."""
        return self._nick_owner.get(nick)

    def node_recycled(self, nid: int) -> bool:
        return bool(self._nrec[nid])

    def edge_type(self, eid: int) -> str:
        return self._etype[eid]

    def edge_ends(self, eid: int) -> tuple[int, int]:
        """``(source, target)`` of an edge."""
        return self._esrc[eid], self._edst[eid]

    def edge_props(self, eid: int) -> Mapping[str, Value]:
        return self._eprops.get(eid) or _NO_PROPS

    def edge_recycled(self, eid: int) -> bool:
        return bool(self._erec[eid])

    def live_count(self, kind: str) -> int:
        """How many live nodes have kind ``kind``."""
        return self._kind_live.get(kind, 0)

    def live_kinds(self) -> dict[str, int]:
        """Live nodes per kind, by kind name (kinds with none left out)."""
        return {k: c for k, c in sorted(self._kind_live.items()) if c}

    def node_terms(self, nid: int) -> set[bytes]:
        """The index terms a node files under (none once recycled): for a node
        created since the last flush, the ones it was indexed under while its
        labels and props are still the same objects (a change always puts new
        ones), else computed."""
        if self._nrec[nid]:
            return set()
        hit = self._term_memo.get(nid)
        if hit is not None and hit[0] is self._labels[nid] and hit[1] is self._props.raw(nid):
            return set(hit[2])
        return Index.terms(self._kind[nid], self._labels[nid], self._props[nid])

    # -- the names a session holds (the caps on distinct names, SPEC §4) -----
    def kind_known(self, kind: str) -> bool:
        """Whether a node of this store (recycled or not) has kind ``kind``."""
        return self._kind.code_of(kind) > 0

    def kinds_known(self) -> int:
        """How many distinct kinds the nodes of this store have, recycled
        nodes' included (a node keeps its kind, so this never goes down)."""
        return len(self._kind.names) - 1

    def edge_type_known(self, etype: str) -> bool:
        """Whether an edge of this store (recycled or not) has type ``etype``."""
        return self._etype.code_of(etype) > 0

    def edge_types_known(self) -> int:
        """How many distinct edge types the edges of this store have."""
        return len(self._etype.names) - 1

    def label_use(self) -> Mapping[str, int]:
        """How many nodes (recycled included) carry each extra label. Built
        from the label column on first use (a count per distinct label set),
        then kept exact by every write."""
        use = self._label_use
        if use is None:
            use = Counter()
            names = self._labels.names
            for code, n in Counter(self._labels.codes).items():
                for lab in names[code]:
                    use[lab] += n
            self._label_use = use
        return use
