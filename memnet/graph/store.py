"""The session graph: nodes, edges, recycling, pre-ordered adjacency.

Storage is columnar (:mod:`.stored`): a node or edge is an integer id into a
few parallel lists and arrays, not a Python object, so a million nodes with
their edges fit in well under 2 KB each. Handles (``na1``, ``eb2f``,
:mod:`.handles`) are the ids written in base 36 behind a prefix and a length
letter; they are minted, never chosen by a client, and never reused (a
recycled element keeps its handle).

Each node's adjacency is an ``array('I')`` of entries ``edge_id << 1 | dir``
(dir 0: this node is the source; 1: the target), kept sorted on write by the
observables of the edge and of the node at the other end. A walk therefore
reads the first F live entries of a hub exactly as it reads a leaf.

The columns are the store's own (``_kind``, ``_esrc``, ...): code outside
``graph/`` reads an element through the named methods of :mod:`.reads` and, on a hot
path, the columns through :meth:`Store.view`, a read-only view bound once per
call; every write goes through a method, which keeps the index, the counts,
the adjacency order and the change tracking exact.

This module knows nothing of GQL text beyond the canonical value format, and
nothing of storage or faces.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable
from itertools import repeat
from typing import Any

from ..values import Value, node_key, props_text
from .columns import StoreView
from .handles import b36, edge_handle, node_handle, parse_handle, text_bytes
from .reads import IN, OUT, GraphReads
from .stored import NO_LABELS

#: adjacency entries of a node with ranked out-edges the walk orders
RANK_SCAN = 256


class Store(GraphReads):
    """A labelled property graph with recycling and observable-ordered adjacency."""

    # -- adjacency order ----------------------------------------------------
    def entry_key(self, entry: int) -> tuple[str, int, str, str, int]:
        """Observable order of one adjacency entry; the edge id settles ties
        between observably identical entries the same way every time."""
        e = entry >> 1
        d = entry & 1
        other = self._edst[e] if d == OUT else self._esrc[e]
        ep = self._eprops.get(e)
        return (self._etype[e], d, self._key[other], props_text(ep) if ep else "", e)

    def _insort(self, nid: int, entry: int) -> None:
        bisect.insort(self._adj[nid], entry, key=self.entry_key)
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
        mirrors: dict[int, list[int]] = {}
        for entry in self._adj[nid]:
            e, d = entry >> 1, entry & 1
            other = self._edst[e] if d == OUT else self._esrc[e]
            if other == nid:
                loops = True
                continue
            mirrors.setdefault(other, []).append((e << 1) | (1 - d))
        for other, ms in mirrors.items():
            lst = self._adj[other]
            if len(ms) == 1:
                mirror = ms[0]
                i = lst.index(mirror)
                del lst[i]
                j = bisect.bisect(lst, key(mirror), key=key)
                lst.insert(j, mirror)
                if dirty is not None and j != i:
                    dirty.add(other)
                continue
            # several edges join the two nodes: all their entries move
            # together, so they all leave before any goes back (bisect
            # needs the rest of the list in order)
            gone = set(ms)
            kept = array("I", [x for x in lst if x not in gone])
            for mirror in ms:
                bisect.insort(kept, mirror, key=key)
            if kept != lst:
                self._adj[other] = kept
                if dirty is not None:
                    dirty.add(other)
        if loops:
            self._adj[nid] = array("I", sorted(self._adj[nid], key=key))
        if dirty is not None:
            dirty.add(nid)

    # -- writes (called by commit, already validated) -----------------------
    def add_node(
        self,
        kind: str,
        labels: tuple[str, ...],
        props: dict[str, Value] | None,
        nick: str | None = None,
    ) -> int:
        nid = len(self._kind)
        labels = tuple(sorted(x for x in set(labels) if x != kind))
        props = props or None
        self._kind.append(kind)
        self._labels.append(labels)
        if labels and self._label_use is not None:
            self._label_use.update(labels)
        self._props.append(props)
        k = node_key(kind, labels, props)
        self._key.append(k)
        self._adj.append(array("I"))
        self._nrec.append(0)
        self._ltok.append(0)
        if nick is not None:
            self._nick[nid] = nick
            self._nick_owner[nick] = nid
        terms = self.index.add_node(nid, kind, labels, props)
        self.live_nodes += 1
        self._kind_live[kind] += 1
        self.live_bytes += text_bytes(k) + 8
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)
            self.dirty_terms.add(nid)  # type: ignore[union-attr]
            self._remember_terms(nid, terms)
        return nid

    def add_edge(
        self, etype: str, src: int, dst: int, props: dict[str, Value] | None = None
    ) -> int:
        eid = len(self._etype)
        self._etype.append(etype)
        self._esrc.append(src)
        self._edst.append(dst)
        self._erec.append(0)
        if props:
            self._eprops[eid] = props
            if "rank" in props:
                self._ranks.add(src)
        self._insort(src, eid << 1 | OUT)
        self._insort(dst, eid << 1 | IN)
        self.live_edges += 1
        self.live_bytes += self.edge_bytes(eid)
        if self.dirty_edges is not None:
            self.dirty_edges.add(eid)
        return eid

    def add_nodes(
        self,
        items: list[tuple[str, tuple[str, ...], dict[str, Value] | None, str | None]],
        known: list[str] | None = None,
    ) -> int:
        """Add nodes ``(kind, labels, props, nick)`` as :meth:`add_node` would,
        one after another, with the index postings written once per term.
        ``known``, when given, are their observable keys (``node_key``)
        computed already. Returns the id of the first."""
        first = len(self._kind)
        kinds, labels_col, props_col, keys = self._kind, self._labels, self._props, self._key
        adj, nrec, ltok = self._adj, self._nrec, self._ltok
        nicks, owners = self._nick, self._nick_owner
        kind_live = self._kind_live
        use = self._label_use
        added: list[tuple[int, str, tuple[str, ...], dict[str, Value] | None]] = []
        live_bytes = 0
        nid = first
        for i, (kind, labels, props, nick) in enumerate(items):
            labels = tuple(sorted(x for x in set(labels) if x != kind)) if labels else NO_LABELS
            if labels and use is not None:
                use.update(labels)
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
        self.index.add_nodes(added, self._remember_terms if self.dirty_nodes is not None else None)
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
        first = eid = len(self._etype)
        add_type = self._etype.append
        esrc, edst, eprops = self._esrc, self._edst, self._eprops
        touched: dict[int, list[int]] = {}
        live_bytes = 0
        for t, src, dst, props in items:
            add_type(t)
            esrc.append(src)
            edst.append(dst)
            live_bytes += len(t) + 8
            if props:
                eprops[eid] = props
                live_bytes += text_bytes(props_text(props))
                if "rank" in props:
                    self._ranks.add(src)
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
        self._erec.extend(bytes(n))
        key = self.entry_key
        adj = self._adj
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

    def update_node(
        self,
        nid: int,
        *,
        labels: tuple[str, ...] | None = None,
        props: dict[str, Value] | None | Any = ...,
        nick: str | None | Any = ...,
    ) -> None:
        """Replace a node's labels, props (a new dict, never mutated in place)
        and/or nick, keeping indexes and neighbours' adjacency order exact."""
        kind = self._kind[nid]
        old_labels, old_props = self._labels[nid], self._props[nid]
        self._ltok[nid] = 0
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)
            if labels is not None or props is not ...:
                self._remember_before(nid)
                self.dirty_terms.add(nid)  # type: ignore[union-attr]
        if labels is not None:
            labels = tuple(sorted(x for x in set(labels) if x != kind))
            if labels != old_labels:
                self._labels[nid] = labels
                self.index.change_labels(nid, old_labels, labels)
                use = self._label_use
                if use is not None:
                    use.update(labels)
                    use.subtract(old_labels)
                    for x in old_labels:
                        if use[x] <= 0:
                            del use[x]
        if props is not ...:
            props = props or None
            self._props[nid] = props
            self.index.change_props(nid, old_props, props)
        if nick is not ...:
            old = self._nick.pop(nid, None)
            if old is not None and self._nick_owner.get(old) == nid:
                del self._nick_owner[old]
            if nick is not None:
                self._nick[nid] = nick
                self._nick_owner[nick] = nid
        k = node_key(kind, self._labels[nid], self._props[nid])
        if k != self._key[nid]:
            if not self._nrec[nid]:
                self.live_bytes += text_bytes(k) - text_bytes(self._key[nid])
            self._key[nid] = k
            self._reposition(nid)

    def update_edge(self, eid: int, props: dict[str, Value] | None) -> None:
        before = self.edge_bytes(eid)
        if self.dirty_edges is not None:
            self.dirty_edges.add(eid)
        if props:
            self._eprops[eid] = props
            if "rank" in props:
                self._ranks.add(self._esrc[eid])
        else:
            self._eprops.pop(eid, None)
        if self._erec[eid]:
            return  # not in any adjacency list any more
        self.live_bytes += self.edge_bytes(eid) - before
        for nid, entry in ((self._esrc[eid], eid << 1 | OUT), (self._edst[eid], eid << 1 | IN)):
            self._adj[nid].remove(entry)
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
            if self._nrec[nid]:
                continue
            self._remember_before(nid)
            self._nrec[nid] = 1
            gone.append((nid, self._kind[nid], self._labels[nid], self._props[nid]))
            if self.dirty_nodes is not None:
                self.dirty_nodes.add(nid)
                self.dirty_terms.add(nid)  # type: ignore[union-attr]
            self.live_nodes -= 1
            self._kind_live[self._kind[nid]] -= 1
            self.live_bytes -= text_bytes(self._key[nid]) + 8
            nick = self._nick.get(nid)
            if nick is not None and self._nick_owner.get(nick) == nid:
                del self._nick_owner[nick]
        if gone:
            self.index.remove_nodes(gone)

    def recycle_edge(self, eid: int) -> None:
        self.recycle_edges((eid,))

    def recycle_edges(self, eids: Iterable[int]) -> None:
        """Hide edges: they leave both adjacency lists (each list filtered
        once, however many of its entries go)."""
        by_node: dict[int, set[int]] = {}
        for eid in eids:
            if self._erec[eid]:
                continue
            self._erec[eid] = 1
            if self.dirty_edges is not None:
                self.dirty_edges.add(eid)
            self.live_edges -= 1
            self.live_bytes -= self.edge_bytes(eid)
            for nid, entry in ((self._esrc[eid], eid << 1 | OUT), (self._edst[eid], eid << 1 | IN)):
                by_node.setdefault(nid, set()).add(entry)
                self._hidden[nid] = self._hidden.get(nid, 0) + 1
        for nid, entries in by_node.items():
            a = self._adj[nid]
            if len(entries) <= 4:
                for x in entries:
                    a.remove(x)
            else:
                self._adj[nid] = array("I", [x for x in a if x not in entries])
            if self.dirty_nodes is not None:
                self.dirty_nodes.add(nid)

    # -- undoing a recycle (rewinding a copy to a past version) --------------
    def restore_node(self, nid: int) -> None:
        """Make a recycled node live again, back in the index and the counts
        (the inverse of :meth:`recycle_node`; its edges are restored apart)."""
        if not self._nrec[nid]:
            return
        self._remember_before(nid)
        self._nrec[nid] = 0
        if self.dirty_nodes is not None:
            self.dirty_nodes.add(nid)
            self.dirty_terms.add(nid)  # type: ignore[union-attr]
        kind = self._kind[nid]
        self.live_nodes += 1
        self._kind_live[kind] += 1
        self.live_bytes += text_bytes(self._key[nid]) + 8
        nick = self._nick.get(nid)
        if nick is not None:
            self._nick_owner[nick] = nid
        self.index.add_node(nid, kind, self._labels[nid], self._props[nid])

    def restore_edge(self, eid: int) -> None:
        """Put a recycled edge back in both adjacency lists (the inverse of
        :meth:`recycle_edge`)."""
        if not self._erec[eid]:
            return
        self._erec[eid] = 0
        if self.dirty_edges is not None:
            self.dirty_edges.add(eid)
        p = self._eprops.get(eid)
        if p and "rank" in p:
            self._ranks.add(self._esrc[eid])
        self.live_edges += 1
        self.live_bytes += self.edge_bytes(eid)
        for nid, entry in ((self._esrc[eid], eid << 1 | OUT), (self._edst[eid], eid << 1 | IN)):
            self._insort(nid, entry)
            left = self._hidden.get(nid, 0) - 1
            if left > 0:
                self._hidden[nid] = left
            else:
                self._hidden.pop(nid, None)

    # -- line token counts (a cache the session and recall fill) --------------
    def set_line_tokens(self, nid: int, n: int) -> None:
        """Remember the tokens of a node's interior line (0: forget them)."""
        self._ltok[nid] = n


__all__ = [
    "IN",
    "OUT",
    "Store",
    "StoreView",
    "b36",
    "edge_handle",
    "node_handle",
    "parse_handle",
    "text_bytes",
]
