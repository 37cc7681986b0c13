"""Flush (memory → cabinet): the records of what changed since the last flush
and their one write transaction (see :meth:`memnet.cabinet.Cabinet.flush`).

The records are built before the write, with the session locked (nodes,
node chunks, edge chunks, log records, and the whole postings when most of
the index changed); the write then compares the stored version with the one
the session's binding holds (compare-and-swap), lays the nodes out again if
another process flushed meanwhile, and puts the records in the order that
lets the stored index delta read the node records as they were.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

from ..commit import CommitRecord
from ..errors import ConflictError, SessionNotFound
from ..session import Session
from . import records as R
from .binding import Binding
from .catalog import options_of, read_catalog
from .elements import edge_chunks, log_record, node_chunks, node_layout, node_record, overrides
from .kv import KV, Txn
from .postings import posting_records, posting_writes, rewrite_postings

Records = list[tuple[bytes, bytes]]
Layout = tuple[list[int], list[int], int, bool]


class Flush:
    """One flush of session ``s`` (bound by ``b``): what changed, taken out
    of its store, and the records built from it; :meth:`write` is the write
    transaction (run again by a backend that retries)."""

    def __init__(self, s: Session, b: Binding, sid: str, pending: list[CommitRecord]) -> None:
        st = s.store
        dirty_nodes, dirty_edges = st.take_changes()
        self.s, self.b, self.sid, self.pending = s, b, sid, pending
        self.nodes = sorted(dirty_nodes)
        self.term_nodes = sorted(st.dirty_terms or ())
        self.edges = sorted(dirty_edges)
        self.base = b.version
        self.token = b.token
        self.unsure = dict(b.unsure)
        self.stats = {
            "version": s.version,
            "nodes": st.live_nodes,
            "edges": st.live_edges,
            "bytes": st.live_bytes,
            "kinds": st.live_kinds(),
            "next_node": st.next_node,
            "next_edge": st.next_edge,
            "updated": time.time(),
            **options_of(s),
        }
        self.mark = R.new_token()
        self.done = self.planned = b.chunks

    def build(self) -> None:
        """The records, laid out for the node chunks the binding says the
        cabinet holds."""
        s, sid, st = self.s, self.sid, self.s.store
        self.layout: Layout = node_layout(s, self.nodes, *self.planned)
        self.node_recs = [node_record(s, sid, n) for n in self.layout[0]]
        self.chunk_recs = node_chunks(s, sid, self.layout[1])
        self.edge_recs = edge_chunks(s, sid, {e // R.EDGE_CHUNK for e in self.edges})
        self.log_recs = [log_record(sid, r) for r in self.pending]
        # a change to a large share of the nodes (the first flush of a
        # session built in memory) rewrites the postings from the index
        # the session holds, as adopt does, instead of diffing node by node
        self.posting_recs = (
            posting_records(sid, st.index)
            if rewrite_postings(len(self.term_nodes), st.next_node - 1)
            else None
        )

    def run(self, kv: KV) -> int:
        """Write, then settle the session and its binding; the stored version."""
        s, b = self.s, self.b
        try:
            kv.run_write(self.write)
        except BaseException:
            b.unsure[self.mark] = s.version
            raise
        s.store.clear_changes(set(self.nodes), set(self.edges))
        b.chunks = self.done
        b.version = s.version
        b.unsure = {}
        s.settle(s.version)
        return s.version

    # -- the write transaction ------------------------------------------------------
    def write(self, txn: Txn) -> None:
        cat = self._stored(txn)
        landed = self.unsure.get(cat.get("flush", "")) == cat["version"]
        if cat["version"] != self.base and not landed:
            raise ConflictError(
                f"session {self.sid!r} is at version {cat['version']} in the cabinet but this "
                f"copy was loaded at version {self.base}; open it again and redo the commit",
                stored=cat["version"],
                expected=self.base,
            )
        # the records built above go first, on their way while the index
        # delta is computed (a server applies them meanwhile); but not the
        # stored nodes whose terms changed: the delta reads their records
        # as they were
        stored = (int(cat.get("nchunks", 0)), int(cat.get("over", 0)))
        singles, chunks, nchunks, fold, recs, crecs = self._laid_out(stored)
        top = int(cat.get("next_node", 1 << 62))
        # the node records this flush adds over chunked nodes (exact: a
        # hydrate checks the count)
        cover = stored[0] * R.NODE_CHUNK
        cut = bisect.bisect_left(singles, cover)
        over = (
            0
            if fold
            else stored[1]
            + txn.present(R.NODES, [R.element_key(self.sid, n) for n in singles[:cut]]).count(False)
        )
        later = self._put_records(txn, singles, recs, top)
        counts = self._put_postings(txn, cat, landed)
        for k, v in later:
            txn.put(R.NODES, k, v)
        self._put_chunks(txn, stored, chunks, nchunks, fold, crecs, top)
        key = R.sid_key(self.sid)
        row = dict(cat, **self.stats, **counts, nchunks=nchunks, over=over, flush=self.mark)
        txn.put(R.CATALOG, key, R.encode(row, key))
        self.done = (nchunks, over)

    def _stored(self, txn: Txn) -> dict[str, Any]:
        """The catalog row, refused when the session was dropped (and perhaps
        created again) since it was loaded."""
        cat = read_catalog(txn, self.sid)
        if cat is None:
            raise SessionNotFound(f"no session {self.sid!r} in this cabinet (dropped?)")
        if cat.get("token") != self.token:
            raise ConflictError(
                f"session {self.sid!r} was dropped and created again since this copy was "
                "loaded; open it again and redo the commit",
                stored=cat["version"],
                expected=self.base,
            )
        return cat

    def _laid_out(
        self, stored: tuple[int, int]
    ) -> tuple[list[int], list[int], int, bool, Records, Records]:
        """The node layout and records for the chunks the cabinet holds."""
        if stored == self.planned:
            singles, chunks, nchunks, fold = self.layout
            return singles, chunks, nchunks, fold, self.node_recs, self.chunk_recs
        # another process flushed meanwhile: lay the nodes out again
        s, sid = self.s, self.sid
        singles, chunks, nchunks, fold = node_layout(s, self.nodes, *stored)
        recs = [node_record(s, sid, n) for n in singles]
        return singles, chunks, nchunks, fold, recs, node_chunks(s, sid, chunks)

    def _put_records(self, txn: Txn, singles: list[int], recs: Records, top: int) -> Records:
        """Put the node, edge and log records, and send them; the node
        records whose stored state the index delta reads still come back."""
        reread = set() if self.posting_recs is not None else {n for n in self.term_nodes if n < top}
        later = []
        for n, (k, v) in zip(singles, recs, strict=True):
            if n in reread:
                later.append((k, v))
            else:
                txn.put(R.NODES, k, v)
        for k, v in self.edge_recs:
            txn.put(R.EDGES, k, v)
        for k, v in self.log_recs:
            txn.put(R.LOG, k, v)
        txn.send_soon()
        return later

    def _put_postings(self, txn: Txn, cat: dict[str, Any], landed: bool) -> dict[str, int]:
        """Write the stored index (whole, or the delta of this flush); its
        catalog counts."""
        sid = self.sid
        if self.posting_recs is not None:
            txn.delete_prefix(R.POSTINGS, R.prefix(sid))
            writes: list[tuple[bytes, bytes | None]] = list(self.posting_recs)
            counts = {"pdelta": 0, "precs": len(self.posting_recs)}
        else:
            # after a flush whose outcome was unknown landed, the store's
            # kept states predate what the cabinet holds: read the records
            writes, counts = posting_writes(
                txn, sid, self.s, self.term_nodes, cat, self.s.version, kept=not landed
            )
        for k, pv in writes:
            if pv is None:
                txn.delete(R.POSTINGS, k)
            else:
                txn.put(R.POSTINGS, k, pv)
        return counts

    def _put_chunks(
        self,
        txn: Txn,
        stored: tuple[int, int],
        chunks: list[int],
        nchunks: int,
        fold: bool,
        crecs: Records,
        top: int,
    ) -> None:
        """The node chunks go last, as they replace node records the index
        delta may have read."""
        s, sid = self.s, self.sid
        cover = stored[0] * R.NODE_CHUNK
        if fold:
            gone = [k for _n, k, _v in overrides(txn, sid, cover - 1)]
            extra = {R.key_id(k) // R.NODE_CHUNK for k in gone} - set(chunks)
            crecs = crecs + node_chunks(s, sid, extra)  # (write may run again)
            txn.discard(R.NODES, gone)
        if nchunks > stored[0]:
            lo, hi = max(1, cover), min(top, nchunks * R.NODE_CHUNK)
            txn.discard(R.NODES, [R.element_key(sid, n) for n in range(lo, hi)])
        for k, v in crecs:
            txn.put(R.NODES, k, v)


__all__ = ["Flush"]
