"""The session graph: nodes, edges, recycling, pre-ordered adjacency.

Storage is columnar: a node or edge is an integer id into a few parallel
lists and arrays, not a Python object, so a million nodes with their edges fit
in well under 2 KB each. Handles (``na1``, ``eb2f``) are the ids written in base
36 behind a prefix and a length letter; they are minted, never chosen by a client, and
never reused (a recycled element keeps its handle).

Each node's adjacency is an ``array('I')`` of entries ``edge_id << 1 | dir``
(dir 0: this node is the source; 1: the target), kept sorted on write by the
observables of the edge and of the node at the other end. A walk therefore
reads the first F live entries of a hub exactly as it reads a leaf.

This module knows nothing of GQL text beyond the canonical value format, and
nothing of storage or faces.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import repeat
from typing import Any

from ..errors import MemNetError
from ..values import Value, node_key, props_text
from .index import Index, le_array, le_bytes

# A handle is a prefix (n: node, e: edge), one letter giving the length of the
# base-36 id (a = 1 ... i = 9), then the id: na1, nb1a, ec2zz. The length
# letter keeps handles out of the way of the variable names people write
# (n1, n12, node, next, task1, e2 are never handles), so a client variable
# cannot silently name an existing element.
_HANDLE = re.compile(r"([ne])([a-i])([1-9a-z][0-9a-z]{0,8})\Z")
_LEN = "abcdefghi"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
OUT, IN = 0, 1
_EMPTY: tuple[str, ...] = ()


_PAIRS = [a + b for a in _DIGITS for b in _DIGITS]   # "00" .. "zz"


def b36(n: int) -> str:
    if n < 1296:
        return _PAIRS[n].lstrip("0") or "0"
    out = []
    while n:
        n, r = divmod(n, 1296)
        out.append(_PAIRS[r])
    return "".join(reversed(out)).lstrip("0")


def text_bytes(s: str) -> int:
    """UTF-8 size of ``s`` (ASCII strings are counted without encoding)."""
    return len(s) if s.isascii() else len(s.encode())


def node_handle(nid: int) -> str:
    d = b36(nid)
    return f"n{_LEN[len(d) - 1]}{d}"


def edge_handle(eid: int) -> str:
    d = b36(eid)
    return f"e{_LEN[len(d) - 1]}{d}"


def parse_handle(text: str) -> tuple[str, int] | None:
    """``'naa'`` → ``('n', 10)``; None when ``text`` is not handle-shaped."""
    # the pattern _HANDLE, spelt out: this runs for every name a Δ uses
    n = _LEN.find(text[1:2]) if len(text) > 2 else -1
    if n < 0 or len(text) != n + 3 or text[0] not in ("n", "e"):
        return None
    digits = text[2:]
    if digits[0] == "0" or not digits.isascii() or not digits.isalnum() or (
            not digits.islower() and not digits.isdigit()):
        return None
    return text[0], int(digits, 36)


def _no_decoder(raw: bytes) -> dict[str, Value] | None:
    raise MemNetError("a stored property map was read by a store that no storage loaded",
                      code="internal")


class _Stored(list):  # type: ignore[type-arg]
    """A column whose entries a hydrate leaves as the bytes they were stored
    as: the first read of an entry decodes it (``_decode``) and keeps the
    result, so opening a large session does not build a million objects
    nobody reads. Iterating the list gives the entries as held."""

    __slots__ = ()
    _decode: Any = None

    def __getitem__(self, i: Any) -> Any:
        v = list.__getitem__(self, i)
        if v.__class__ is bytes:
            v = self._decode(v)
            list.__setitem__(self, i, v)
        return v


class PropsList(_Stored):
    """The nodes' property maps, by id (stored bytes until first read, decoded
    by the function the storage handed :meth:`Store.load`). :meth:`raw` gives
    an entry as stored, without decoding it."""

    _decode = staticmethod(_no_decoder)

    def raw(self, i: int) -> dict[str, Value] | bytes | None:
        return list.__getitem__(self, i)  # type: ignore[no-any-return]


class AdjList(_Stored):
    """The nodes' adjacency arrays, by id (little-endian u32 bytes until first
    read, see :func:`~memnet.graph.index.le_array`). Bytes cost less memory
    than an array and, unlike arrays, are not tracked by the cyclic garbage
    collector, so a million loaded nodes do not make every collection after a
    hydrate walk a million objects. :meth:`raw` gives an entry's stored bytes
    without converting it."""

    __slots__ = ()
    _decode = staticmethod(le_array)

    def raw(self, i: int) -> bytes:
        v = list.__getitem__(self, i)
        return v if v.__class__ is bytes else le_bytes(v)


class Store:
    """A labelled property graph with recycling and observable-ordered adjacency."""

    def __init__(self) -> None:
        # nodes (index 0 unused so that every handle is non-zero)
        self.kind: list[str] = [""]
        self.labels: list[tuple[str, ...]] = [_EMPTY]
        self.props: PropsList = PropsList([None])
        self.key: list[str] = [""]
        self.adj: AdjList = AdjList([array("I")])
        self.nrec = bytearray(1)
        # tokens of each node's line in an interior Shape (0: not known yet),
        # filled by the session after a commit and by the first recall
        self.ltok = array("H", [0])
        self.nick: dict[int, str] = {}
        self.nick_owner: dict[str, int] = {}
        # edges
        self.etype: list[str] = [""]
        self.esrc = array("I", [0])
        self.edst = array("I", [0])
        self.eprops: dict[int, dict[str, Value]] = {}
        self.erec = bytearray(1)
        # derived
        self.index = Index()
        self.live_nodes = 0
        self.live_edges = 0
        self.live_bytes = 0
        self.kind_live: Counter[str] = Counter()
        self._interned: dict[str, str] = {}
        # What changed since the last flush, when a cabinet asks for it
        # (None: nobody is tracking, so nothing is recorded).
        self.dirty_nodes: set[int] | None = None
        # nodes whose index terms may have changed (created, relabelled,
        # re-propertied, recycled): the ones whose stored postings a flush edits
        self.dirty_terms: set[int] | None = None
        self.dirty_edges: set[int] | None = None
        # recycled edges leave the adjacency lists (a walk never reads them);
        # this counts them per node so a receipt can still say what it hid
        self.hidden: dict[int, int] = {}

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

    # -- sizes and lookups --------------------------------------------------
    @property
    def next_node(self) -> int:
        return len(self.kind)

    @property
    def next_edge(self) -> int:
        return len(self.etype)

    def has_node(self, nid: int) -> bool:
        return 0 < nid < len(self.kind)

    def has_edge(self, eid: int) -> bool:
        return 0 < eid < len(self.etype)

    def node_live(self, nid: int) -> bool:
        return 0 < nid < len(self.kind) and not self.nrec[nid]

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
        return self.props[nid] or {}

    def node_bytes(self, nid: int) -> int:
        return text_bytes(self.key[nid]) + 8

    def edge_bytes(self, eid: int) -> int:
        ep = self.eprops.get(eid)
        return len(self.etype[eid]) + (text_bytes(props_text(ep)) if ep else 0) + 8

    def _intern(self, s: str) -> str:
        return self._interned.setdefault(s, s)

    # -- adjacency order ----------------------------------------------------
    def entry_key(self, entry: int) -> tuple[str, int, str, str, int]:
        """Observable order of one adjacency entry; the edge id settles ties
        between observably identical entries the same way every time."""
        e = entry >> 1
        d = entry & 1
        other = self.edst[e] if d == OUT else self.esrc[e]
        ep = self.eprops.get(e)
        return (self.etype[e], d, self.key[other], props_text(ep) if ep else "", e)

    def _insort(self, nid: int, entry: int) -> None:
        bisect.insort(self.adj[nid], entry, key=self.entry_key)
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)

    def _reposition(self, nid: int) -> None:
        """Re-sort the entries that point at ``nid`` after its key changed.

        A neighbour whose order did not move is not marked as changed, so a
        flush does not rewrite its (possibly large) adjacency record.
        """
        loops = False
        key = self.entry_key
        dirty = self.dirty_nodes
        for entry in self.adj[nid]:
            e, d = entry >> 1, entry & 1
            other = self.edst[e] if d == OUT else self.esrc[e]
            if other == nid:
                loops = True
                continue
            mirror = (e << 1) | (1 - d)
            lst = self.adj[other]
            i = lst.index(mirror)
            del lst[i]
            j = bisect.bisect(lst, key(mirror), key=key)
            lst.insert(j, mirror)
            if dirty is not None and j != i:
                dirty.add(other)
        if loops:
            self.adj[nid] = array("I", sorted(self.adj[nid], key=key))
        if dirty is not None:
            dirty.add(nid)

    # -- writes (called by commit, already validated) -----------------------
    def add_node(self, kind: str, labels: tuple[str, ...], props: dict[str, Value] | None,
                 nick: str | None = None) -> int:
        nid = len(self.kind)
        kind = self._intern(kind)
        labels = tuple(sorted(self._intern(x) for x in set(labels) if x != kind))
        props = props or None
        self.kind.append(kind)
        self.labels.append(labels)
        self.props.append(props)
        k = node_key(kind, labels, props)
        self.key.append(k)
        self.adj.append(array("I"))
        self.nrec.append(0)
        self.ltok.append(0)
        if nick is not None:
            self.nick[nid] = nick
            self.nick_owner[nick] = nid
        self.index.add_node(nid, kind, labels, props)
        self.live_nodes += 1
        self.kind_live[kind] += 1
        self.live_bytes += text_bytes(k) + 8
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)
            self.dirty_terms.add(nid)  # type: ignore[union-attr]
        return nid

    def add_edge(self, etype: str, src: int, dst: int,
                 props: dict[str, Value] | None = None) -> int:
        eid = len(self.etype)
        self.etype.append(self._intern(etype))
        self.esrc.append(src)
        self.edst.append(dst)
        self.erec.append(0)
        if props:
            self.eprops[eid] = props
        self._insort(src, eid << 1 | OUT)
        self._insort(dst, eid << 1 | IN)
        self.live_edges += 1
        self.live_bytes += self.edge_bytes(eid)
        if self.dirty_edges is not None:
            self.dirty_edges.add(eid)
        return eid

    def add_nodes(self, items: list[tuple[str, tuple[str, ...], dict[str, Value] | None,
                                          str | None]], known: list[str] | None = None) -> int:
        """Add nodes ``(kind, labels, props, nick)`` as :meth:`add_node` would,
        one after another, with the index postings written once per term.
        ``known``, when given, are their observable keys (``node_key``)
        computed already. Returns the id of the first."""
        first = len(self.kind)
        intern = self._intern
        kinds, labels_col, props_col, keys = self.kind, self.labels, self.props, self.key
        adj, nrec, ltok, nicks, owners = self.adj, self.nrec, self.ltok, self.nick, self.nick_owner
        kind_live = self.kind_live
        added: list[tuple[int, str, tuple[str, ...], dict[str, Value] | None]] = []
        live_bytes = 0
        nid = first
        for i, (kind, labels, props, nick) in enumerate(items):
            kind = intern(kind)
            labels = tuple(sorted(intern(x) for x in set(labels) if x != kind)) if labels \
                else _EMPTY
            props = props or None
            kinds.append(kind)
            labels_col.append(labels)
            props_col.append(props)
            k = known[i] if known is not None else node_key(kind, labels, props)
            keys.append(k)
            adj.append(array("I"))
            if nick is not None:
                nicks[nid] = nick
                owners[nick] = nid
            kind_live[kind] += 1
            live_bytes += text_bytes(k) + 8
            added.append((nid, kind, labels, props))
            nid += 1
        n = nid - first
        nrec.extend(bytes(n))
        ltok.extend(repeat(0, n))
        self.index.add_nodes(added)
        self.live_nodes += n
        self.live_bytes += live_bytes
        if self.dirty_nodes is not None:
            ids = range(first, nid)
            self.dirty_nodes.update(ids)
            self.dirty_terms.update(ids)  # type: ignore[union-attr]
        return first

    def add_edges(self, items: list[tuple[str, int, int, dict[str, Value] | None]]) -> int:
        """Add edges ``(type, src, dst, props)`` as :meth:`add_edge` would, one
        after another; a node's adjacency is sorted once when it was empty and
        takes the new entries one by one otherwise (the order is the same).
        Returns the id of the first."""
        first = eid = len(self.etype)
        intern = self._intern
        etype, esrc, edst, eprops = self.etype, self.esrc, self.edst, self.eprops
        touched: dict[int, list[int]] = {}
        live_bytes = 0
        for t, src, dst, props in items:
            etype.append(intern(t))
            esrc.append(src)
            edst.append(dst)
            live_bytes += len(t) + 8
            if props:
                eprops[eid] = props
                live_bytes += text_bytes(props_text(props))
            got = touched.get(src)
            if got is None:
                touched[src] = [eid << 1 | OUT]
            else:
                got.append(eid << 1 | OUT)
            got = touched.get(dst)
            if got is None:
                touched[dst] = [eid << 1 | IN]
            else:
                got.append(eid << 1 | IN)
            eid += 1
        n = eid - first
        self.erec.extend(bytes(n))
        key = self.entry_key
        adj = self.adj
        for nid, entries in touched.items():
            a = adj[nid]
            if not a:
                adj[nid] = array("I", sorted(entries, key=key) if len(entries) > 1 else entries)
            else:
                for x in entries:
                    bisect.insort(a, x, key=key)
        self.live_edges += n
        self.live_bytes += live_bytes
        if self.dirty_nodes is not None:
            self.dirty_nodes.update(touched)
        if self.dirty_edges is not None:
            self.dirty_edges.update(range(first, eid))
        return first

    def update_node(self, nid: int, *, labels: tuple[str, ...] | None = None,
                    props: dict[str, Value] | None | Any = ...,
                    nick: str | None | Any = ...) -> None:
        """Replace a node's labels, props (a new dict, never mutated in place)
        and/or nick, keeping indexes and neighbours' adjacency order exact."""
        kind = self.kind[nid]
        old_labels, old_props = self.labels[nid], self.props[nid]
        self.ltok[nid] = 0
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)
            if labels is not None or props is not ...:
                self.dirty_terms.add(nid)  # type: ignore[union-attr]
        if labels is not None:
            labels = tuple(sorted(self._intern(x) for x in set(labels) if x != kind))
            if labels != old_labels:
                self.labels[nid] = labels
                self.index.change_labels(nid, old_labels, labels)
        if props is not ...:
            props = props or None
            self.props[nid] = props
            self.index.change_props(nid, old_props, props)
        if nick is not ...:
            old = self.nick.pop(nid, None)
            if old is not None and self.nick_owner.get(old) == nid:
                del self.nick_owner[old]
            if nick is not None:
                self.nick[nid] = nick
                self.nick_owner[nick] = nid
        k = node_key(kind, self.labels[nid], self.props[nid])
        if k != self.key[nid]:
            if not self.nrec[nid]:
                self.live_bytes += text_bytes(k) - text_bytes(self.key[nid])
            self.key[nid] = k
            self._reposition(nid)

    def update_edge(self, eid: int, props: dict[str, Value] | None) -> None:
        before = self.edge_bytes(eid)
        if self.dirty_edges is not None:
            self.dirty_edges.add(eid)
        if props:
            self.eprops[eid] = props
        else:
            self.eprops.pop(eid, None)
        if self.erec[eid]:
            return  # not in any adjacency list any more
        self.live_bytes += self.edge_bytes(eid) - before
        for nid, entry in ((self.esrc[eid], eid << 1 | OUT), (self.edst[eid], eid << 1 | IN)):
            self.adj[nid].remove(entry)
            self._insort(nid, entry)

    def recycle_node(self, nid: int) -> None:
        """Hide a node (its edges are recycled by the caller first)."""
        self.recycle_nodes((nid,))

    def recycle_nodes(self, nids: Iterable[int]) -> None:
        """Hide nodes (their edges are recycled by the caller first). They
        leave the index postings in one pass per posting, so recycling many
        nodes of one kind costs a pass, not a pass per node."""
        gone = []
        for nid in nids:
            if self.nrec[nid]:
                continue
            self.nrec[nid] = 1
            gone.append((nid, self.kind[nid], self.labels[nid], self.props[nid]))
            if self.dirty_nodes is not None:
                self.dirty_nodes.add(nid)
                self.dirty_terms.add(nid)  # type: ignore[union-attr]
            self.live_nodes -= 1
            self.kind_live[self.kind[nid]] -= 1
            self.live_bytes -= text_bytes(self.key[nid]) + 8
            nick = self.nick.get(nid)
            if nick is not None and self.nick_owner.get(nick) == nid:
                del self.nick_owner[nick]
        if gone:
            self.index.remove_nodes(gone)

    def recycle_edge(self, eid: int) -> None:
        self.recycle_edges((eid,))

    def recycle_edges(self, eids: Iterable[int]) -> None:
        """Hide edges: they leave both adjacency lists (each list filtered
        once, however many of its entries go)."""
        by_node: dict[int, set[int]] = {}
        for eid in eids:
            if self.erec[eid]:
                continue
            self.erec[eid] = 1
            if self.dirty_edges is not None:
                self.dirty_edges.add(eid)
            self.live_edges -= 1
            self.live_bytes -= self.edge_bytes(eid)
            for nid, entry in ((self.esrc[eid], eid << 1 | OUT),
                               (self.edst[eid], eid << 1 | IN)):
                by_node.setdefault(nid, set()).add(entry)
                self.hidden[nid] = self.hidden.get(nid, 0) + 1
        for nid, entries in by_node.items():
            a = self.adj[nid]
            if len(entries) <= 4:
                for x in entries:
                    a.remove(x)
            else:
                self.adj[nid] = array("I", [x for x in a if x not in entries])
            if self.dirty_nodes is not None:
                self.dirty_nodes.add(nid)

    # -- undoing a recycle (rewinding a copy to a past version) --------------
    def restore_node(self, nid: int) -> None:
        """Make a recycled node live again, back in the index and the counts
        (the inverse of :meth:`recycle_node`; its edges are restored apart)."""
        if not self.nrec[nid]:
            return
        self.nrec[nid] = 0
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)
            self.dirty_terms.add(nid)  # type: ignore[union-attr]
        kind = self.kind[nid]
        self.live_nodes += 1
        self.kind_live[kind] += 1
        self.live_bytes += text_bytes(self.key[nid]) + 8
        nick = self.nick.get(nid)
        if nick is not None:
            self.nick_owner[nick] = nid
        self.index.add_node(nid, kind, self.labels[nid], self.props[nid])

    def restore_edge(self, eid: int) -> None:
        """Put a recycled edge back in both adjacency lists (the inverse of
        :meth:`recycle_edge`)."""
        if not self.erec[eid]:
            return
        self.erec[eid] = 0
        if self.dirty_edges is not None:
            self.dirty_edges.add(eid)
        self.live_edges += 1
        self.live_bytes += self.edge_bytes(eid)
        for nid, entry in ((self.esrc[eid], eid << 1 | OUT), (self.edst[eid], eid << 1 | IN)):
            self._insort(nid, entry)
            left = self.hidden.get(nid, 0) - 1
            if left > 0:
                self.hidden[nid] = left
            else:
                self.hidden.pop(nid, None)

    # -- bulk load (hydrate) ------------------------------------------------
    def load(self, nodes: Iterable[list[tuple[Any, ...]]], etypes: list[str], esrc: array[int],
             edst: array[int], erec: bytes, eprops: dict[int, dict[str, Value]],
             postings: Iterable[dict[bytes, bytes]], *, kinds: dict[str, int],
             live_bytes: int, decode_props: Callable[[bytes], dict[str, Value] | None],
             damaged: Callable[[str], Exception]) -> None:
        """Fill an empty store from stored records, ids dense from 1.

        ``nodes``: lists (chunks, taken in one after the other) of
        ``(kind, labels, props, nick, recycled, key, adj, ltok)`` in id order,
        where ``adj`` is the stored, already ordered adjacency (little-endian
        bytes of ``array('I')``, kept so until first read, see
        :class:`AdjList`), ``key`` the stored observable key and ``ltok`` the
        tokens of its interior line (0: unknown); the edges come as columns
        for ids 1.. (types, sources, targets, recycled flags, and props by
        id); ``postings`` are the stored index postings (maps of term to the
        bytes of its ids, in id-range order, see ``Index.load``); ``kinds``
        the live nodes per kind and ``live_bytes`` the stored byte count.
        Nothing is re-sorted and no index is rebuilt: the work is a few list
        and array extensions per column and chunk.
        """
        if len(self.kind) != 1 or len(self.etype) != 1:
            raise ValueError("Store.load needs an empty store")
        intern = self._intern
        self.props._decode = decode_props
        for chunk in nodes:
            first = len(self.kind)
            kind_col, labels, props, nicks, recs, keys, adjs, ltoks = zip(*chunk, strict=False)
            del chunk
            self.kind.extend(map(intern, kind_col))
            self.labels.extend(tuple(map(intern, x)) if x else _EMPTY for x in labels)
            self.props.extend(x or None for x in props)  # bytes: decoded when read
            self.key.extend(keys)
            self.adj.extend(adjs)  # the stored bytes: arrays when first read
            self.nrec.extend(map(bool, recs))
            self.ltok.extend(ltoks)
            for nid, nick in enumerate(nicks, first):
                if nick is not None:
                    self.nick[nid] = nick
                    if not recs[nid - first]:
                        self.nick_owner[nick] = nid
        types = {t: intern(t) for t in set(etypes)}
        self.etype.extend(map(types.__getitem__, etypes))
        self.esrc.extend(esrc)
        self.edst.extend(edst)
        self.erec.extend(erec)
        self.eprops.update(eprops)
        hidden = self.hidden
        i = self.erec.find(1, 1)
        while i != -1:
            for nid in (self.esrc[i], self.edst[i]):
                hidden[nid] = hidden.get(nid, 0) + 1
            i = self.erec.find(1, i + 1)
        self.index.load(postings, len(self.kind) - 1, damaged)
        self.kind_live.update(kinds)
        self.live_nodes = sum(self.kind_live.values())
        self.live_edges = len(self.erec) - 1 - self.erec.count(1)
        self.live_bytes = live_bytes

    # -- reads ----------------------------------------------------------------
    def live_entries(self, nid: int) -> Iterator[tuple[int, int, int]]:
        """``(edge, dir, other)`` for live edges to live nodes, in order."""
        esrc, edst, erec, nrec = self.esrc, self.edst, self.erec, self.nrec
        for entry in self.adj[nid]:
            e = entry >> 1
            if erec[e]:
                continue
            d = entry & 1
            other = edst[e] if d == OUT else esrc[e]
            if nrec[other]:
                continue
            yield e, d, other

    def live_node_ids(self) -> Iterator[int]:
        nrec = self.nrec
        return (i for i in range(1, len(self.kind)) if not nrec[i])

    def live_edge_ids(self) -> Iterator[int]:
        erec = self.erec
        return (i for i in range(1, len(self.etype)) if not erec[i])

    def node_labels(self, nid: int) -> tuple[str, ...]:
        """Kind first, then the extra labels."""
        return (self.kind[nid], *self.labels[nid])

    def node_state(self, nid: int) -> tuple[str, tuple[str, ...], dict[str, Value] | None,
                                            str | None, bool]:
        """``(kind, labels, props, nick, recycled)`` of a node, as history records it
        (``labels`` without the kind; ``props`` shared, never to be mutated)."""
        return (self.kind[nid], self.labels[nid], self.props[nid], self.nick.get(nid),
                bool(self.nrec[nid]))

    def edge_state(self, eid: int) -> tuple[str, int, int, dict[str, Value] | None, bool]:
        """``(type, src, dst, props, recycled)`` of an edge, as history records it."""
        return (self.etype[eid], self.esrc[eid], self.edst[eid], self.eprops.get(eid),
                bool(self.erec[eid]))

    def has_label(self, nid: int, label: str) -> bool:
        return self.kind[nid] == label or label in self.labels[nid]


__all__ = ["IN", "OUT", "Store", "b36", "edge_handle", "node_handle", "parse_handle"]
