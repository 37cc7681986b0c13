"""A session's nodes, edges and log as records, both ways: the bulk paths of
adopt, flush and hydrate.

Writing, nodes go NODE_CHUNK to a chunk record of columns
(``node_chunks``), and a node a flush changed, or one past the last full
chunk, is a record of its own (``node_record``); edges go 4,096 to a chunk
record of columns (``edge_chunks``), a commit one log record
(``log_record``). Reading, a hydrate decodes the node chunks and node
records into runs of columns (``_node_columns``) that the store takes in one
after the other, copies the edge columns chunk by chunk (``edge_columns``)
and loads the stored postings (``postings.py``), checking on the way that
every record is where the catalog says it must be.
"""

from __future__ import annotations

import bisect
import zlib
from array import array
from collections.abc import Callable, Iterator
from typing import Any, cast

import msgpack

from ..commit import Change, CommitRecord, gc_paused
from ..errors import CabinetCorrupt
from ..session import Session
from . import records as R
from .kv import Txn
from .postings import apply_deltas, stored_deltas, stored_postings
from .records import decode_props, is_node, props_bytes


def _stored_node(s: Session, nid: int) -> tuple[Any, ...]:
    """A node as its records hold it (see ``records.is_node``)."""
    # props ride as msgpack bytes inside the record: a hydrate keeps them so
    # until they are read, and a node never read is written back unchanged
    kind, labels, props, nick, recycled, okey, adj, ltok = s.store.stored_node(nid)
    return kind, labels, props_bytes(props), nick, recycled, okey, adj, ltok


def node_record(s: Session, sid: str, nid: int) -> tuple[bytes, bytes]:
    """``(key, record)`` of one node."""
    key = R.element_key(sid, nid)
    return key, R.encode(_stored_node(s, nid), key)


def node_chunks(s: Session, sid: str, chunks: Any) -> list[tuple[bytes, bytes]]:
    """The node chunk records of the given chunk numbers, all full."""
    out = []
    for c in sorted(chunks):
        first, end = R.chunk_span(c)
        key = R.node_chunk_key(sid, c)
        out.append(
            (key, R.encode_node_chunk(key, first, [_stored_node(s, n) for n in range(first, end)]))
        )
    return out


def node_layout(
    s: Session,
    nodes: list[int],
    nchunks: int,
    over: int,
) -> tuple[list[int], list[int], int, bool]:
    """How a flush writes the changed ``nodes`` (ascending) of a session whose
    cabinet holds ``nchunks`` full chunks and ``over`` node records that
    override them: ``(nodes written as node records, chunks written, the
    chunk count after, whether every overriding node record goes)``. Chunks
    whose whole range now exists are written; once the overriding records
    may pass a share of the chunked nodes (OVERRIDE_SHARE, and OVERRIDE_MIN),
    counting each changed chunked node as a new one, the chunks they fall in
    are written again and they go."""
    new_n = s.store.next_node // R.NODE_CHUNK
    lo, hi = nchunks * R.NODE_CHUNK, new_n * R.NODE_CHUNK
    over += bisect.bisect_left(nodes, lo)
    fold = over > max(OVERRIDE_MIN, lo // OVERRIDE_SHARE)
    singles = [n for n in nodes if not (lo <= n < hi) and (n >= lo or not fold)]
    chunks = list(range(nchunks, new_n))
    if fold:
        chunks = sorted(set(chunks) | {n // R.NODE_CHUNK for n in nodes if n < lo})
    return singles, chunks, new_n, fold


OVERRIDE_SHARE = 8  # a flush rewrites overridden chunks past one node record in 8
OVERRIDE_MIN = R.NODE_CHUNK  # ... and past this many


def edge_chunks(s: Session, sid: str, chunks: Any) -> list[tuple[bytes, bytes]]:
    """The chunk records of the given chunk numbers (see records.py)."""
    st = s.store
    out = []
    for c in sorted(chunks):
        lo, hi = max(1, c * R.EDGE_CHUNK), min(st.next_edge, (c + 1) * R.EDGE_CHUNK)
        if lo >= hi:
            continue
        types, srcs, dsts, recycled, by_id = st.stored_edges(lo, hi)
        key = R.element_key(sid, c)
        out.append(
            (
                key,
                R.encode_edge_chunk(
                    key, lo, types, srcs, dsts, recycled, {e - lo: p for e, p in by_id.items()}
                ),
            )
        )
    return out


def log_record(sid: str, rec: CommitRecord) -> tuple[bytes, bytes]:
    """``(key, record)`` of one commit of the log."""
    key = R.element_key(sid, rec.version)
    return key, R.encode(
        {"t": rec.time, "s": rec.summary, "c": [(c.op, c.id, c.state) for c in rec.changes]}, key
    )


DECODE_RUN = 16384  # node records decoded at a time by a hydrate
RELEASE_AFTER = 65536  # a hydrate of this many elements lets the mapped pages go


def _decode_nodes(
    values: Iterator[bytes],
    sid: str,
    first: int,
    count: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[tuple[Any, ...]]]:
    """:func:`node_from` over the records of nodes first..first+count-1, with
    the checksum (which covers each node's key) and unpacking inlined (the
    hot loop of a hydrate), in lists of DECODE_RUN records: the store takes
    each list in before the next is decoded, so the decoded records of the
    whole session never exist at once (their memory is reused run after run
    instead of being left behind as holes between what the store keeps)."""
    crc32, unpackb, crc_of, pack = zlib.crc32, msgpack.unpackb, R.CRC.unpack_from, R.ID.pack
    pre = crc32(R.prefix(sid))
    out: list[tuple[Any, ...]] = []
    append = out.append
    i = first - 1
    for i, raw in enumerate(values, first):
        payload = memoryview(raw)[4:]
        if len(raw) < 5 or crc32(payload, crc32(pack(i), pre)) != crc_of(raw)[0]:
            raise CabinetCorrupt(f"node record {i} of {sid!r} failed its checksum")
        try:
            rec = unpackb(payload, use_list=False)
        except Exception:
            raise CabinetCorrupt(f"node record {i} of {sid!r} does not decode") from None
        if not is_node(rec):
            raise CabinetCorrupt(f"record {i} of {sid!r} is not a node record")
        append(rec)
        if not (i - first + 1) % DECODE_RUN:
            yield out
            out = []
            append = out.append
            if progress is not None:
                progress(i)
    if i != first + count - 1:
        raise CabinetCorrupt(f"session {sid!r}: node records are missing")
    if out:
        yield out
    if progress is not None:
        progress(i)


def _tail(
    txn: Txn,
    sid: str,
    first: int,
    last: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[tuple[Any, ...]]]:
    """Decode the node records first..last of ``sid`` (in runs, see
    :func:`_decode_nodes`), checking that the ids are dense (the keys at both
    ends are where they must be, and none follows)."""
    if last < first:
        if txn.get(R.NODES, R.element_key(sid, first)) is not None:
            raise CabinetCorrupt(f"session {sid!r}: node records disagree with the catalog")
        return iter(())
    if (
        txn.get(R.NODES, R.element_key(sid, first)) is None
        or txn.get(R.NODES, R.element_key(sid, last)) is None
        or txn.get(R.NODES, R.element_key(sid, last + 1)) is not None
    ):
        raise CabinetCorrupt(f"session {sid!r}: node records disagree with the catalog")
    count = last - first + 1
    return _decode_nodes(
        txn.values(R.NODES, R.prefix(sid), count, start=R.element_key(sid, first)),
        sid,
        first,
        count,
        progress,
    )


def _cover(sid: str, cat: dict[str, Any]) -> int:
    """The nodes the chunk records of ``sid`` hold: ids 1..cover."""
    nchunks = cat.get("nchunks", 0)
    if type(nchunks) is not int or nchunks < 0 or nchunks * R.NODE_CHUNK > int(cat["next_node"]):
        raise CabinetCorrupt(
            f"session {sid!r}: the catalog counts {nchunks!r} node chunks "
            f"for {int(cat['next_node']) - 1} nodes"
        )
    return max(0, nchunks * R.NODE_CHUNK - 1)


def overrides(txn: Txn, sid: str, cover: int) -> Iterator[tuple[int, bytes, bytes]]:
    """``(id, key, record)`` of the node records that override chunked nodes
    (ids 1..cover), in id order; a key of no node is damage."""
    if cover < 1:
        return
    plen = len(R.prefix(sid))
    for k, v in txn.scan(R.NODES, R.prefix(sid)):
        if k[plen : plen + 1] == R.CHUNK_MARK:
            break
        nid = R.key_id(k) if len(k) == plen + 8 else -1
        if nid < 1:
            raise CabinetCorrupt(f"session {sid!r}: node record {k!r} is out of place")
        if nid > cover:
            break
        yield nid, k, v


def _chunk_runs(
    txn: Txn,
    sid: str,
    cover: int,
    expected: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """The chunked nodes 1..cover of ``sid`` as runs of columns, one per
    chunk record, with the node records that override some of them put in
    their place (as many as the catalog counts, ``expected``: one lost or
    left behind is damage)."""
    if not cover:
        return
    over = overrides(txn, sid, cover)
    nxt = next(over, None)
    want = overridden = 0
    plen = len(R.node_chunk_prefix(sid))
    for k, v in txn.scan(R.NODES, R.node_chunk_prefix(sid)):
        c = R.chunk_no(k, plen)
        if c != want or R.chunk_span(c)[1] - 1 > cover:
            raise CabinetCorrupt(
                f"session {sid!r}: node chunk {c} is out of place or disagrees with the catalog"
            )
        lo, cols = R.chunk_columns(v, k, sid, c)
        end = lo + len(cols[0])
        if nxt is not None and nxt[0] < end:
            cols = (
                tuple(list(col) for col in cols[:4])
                + (bytearray(cols[4]),)
                + tuple(list(col) for col in cols[5:7])
                + (cols[7],)
            )
            while nxt is not None and nxt[0] < end:
                nid, nk, nv = nxt
                rec = R.node_from(nv, nk)
                for col, x in zip(cols, rec, strict=True):
                    col[nid - lo] = x
                overridden += 1
                nxt = next(over, None)
        yield cols
        want += 1
        if progress is not None:
            progress(end - 1)
    if want * R.NODE_CHUNK - 1 != cover:
        raise CabinetCorrupt(f"session {sid!r}: node chunk records are missing")
    if overridden != expected:
        raise CabinetCorrupt(
            f"session {sid!r}: {overridden} node records override node "
            f"chunks, the catalog counts {expected}"
        )


def _node_columns(
    txn: Txn,
    sid: str,
    cat: dict[str, Any],
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """Every node of ``sid`` (ids 1 .. next_node-1) as runs of columns (see
    ``StoredGraph.load``): the chunks, then the node records past them."""
    cover = _cover(sid, cat)
    yield from _chunk_runs(txn, sid, cover, int(cat.get("over", 0)), progress)
    for run in _tail(txn, sid, cover + 1, int(cat["next_node"]) - 1, progress):
        yield tuple(zip(*run, strict=True))


def effective_nodes(
    txn: Txn,
    sid: str,
    cat: dict[str, Any],
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """``(id, record)`` of every node of ``sid`` in id order, as its records
    hold it (a chunk's entry, or the node record that overrides it)."""
    nid = 0
    for cols in _node_columns(txn, sid, cat):
        for rec in zip(*cols, strict=True):
            nid += 1
            yield nid, rec


def edge_columns(
    txn: Txn,
    sid: str,
    n_nodes: int,
    n_edges: int,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[str], array[int], array[int], bytearray, dict[int, Any]]:
    """The edge columns of ids 1..n_edges from the chunk records, checking that
    every chunk is where it must be and no edge dangles."""
    types: list[str] = []
    src, dst, flags = array("I"), array("I"), bytearray()
    props: dict[int, Any] = {}
    want = 1
    for k, v in txn.scan(R.EDGES, R.prefix(sid)):
        first, names, a, b, f, p = R.decode_edge_chunk(v, k)
        c = R.key_id(k)
        end = min(n_edges + 1, (c + 1) * R.EDGE_CHUNK)
        if first != want or c != first // R.EDGE_CHUNK or first + len(f) != end:
            raise CabinetCorrupt(
                f"session {sid!r}: edge chunk {c} is out of place or disagrees with the catalog"
            )
        if min(a) < 1 or min(b) < 1 or max(a) > n_nodes or max(b) > n_nodes:
            raise CabinetCorrupt(f"session {sid!r}: edge chunk {c} holds a dangling edge")
        types.extend(names)
        src.extend(a)
        dst.extend(b)
        flags.extend(f)
        if p:
            props.update((first + o, x) for o, x in p.items())
        want = end
        if progress is not None:
            progress(want - 1)
    if want != n_edges + 1:
        raise CabinetCorrupt(f"session {sid!r}: edge records are missing")
    return types, src, dst, flags, props


def _decode_log(raw: bytes, where: bytes) -> tuple[float, dict[str, int], list[Change]]:
    d = R.decode(raw, where)
    try:
        changes = [Change(op, int(i), tuple(state)) for op, i, state in d["c"]]
        return float(d["t"]), dict(d["s"]), changes
    except (KeyError, TypeError, ValueError) as e:
        raise CabinetCorrupt(f"log record {where!r} is malformed: {e}") from None


def log_of(
    txn: Txn,
    sid: str,
    cat: dict[str, Any],
    upto: int | None = None,
) -> Iterator[tuple[int, float, dict[str, int], list[Change]]]:
    """``(version, time, summary, changes)`` of the log records of a session,
    from the first version it keeps up to ``upto`` (default: its version),
    checked to run without a gap: a record lost to damage is ``cabinet_corrupt``."""
    want = int(cat.get("log_from", 1))
    end = cat["version"] if upto is None else upto
    for k, v in txn.scan(R.LOG, R.prefix(sid)):
        ver = R.key_id(k)
        if ver == 0:
            continue  # the session's birth record, not a commit
        if ver > end:
            break
        if ver != want:
            raise CabinetCorrupt(f"session {sid!r}: the log jumps from version {want - 1} to {ver}")
        yield ver, *_decode_log(v, k)
        want += 1
    if want != end + 1:
        raise CabinetCorrupt(f"session {sid!r}: the log ends at version {want - 1}, not {end}")


def load_session(
    txn: Txn,
    s: Session,
    sid: str,
    cat: dict[str, Any],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Fill the empty store of ``s`` from the records of ``sid`` (the catalog row
    ``cat``): nodes, edge columns, stored postings and their pending deltas.
    Returns the elements read."""
    n_nodes, n_edges = int(cat["next_node"]) - 1, int(cat["next_edge"]) - 1
    total = n_nodes + n_edges
    with gc_paused():
        nodes = _node_columns(txn, sid, cat, progress and (lambda d: progress(d, total)))
        types, src, dst, flags, eprops = edge_columns(
            txn, sid, n_nodes, n_edges, progress and (lambda d: progress(n_nodes + d, total))
        )
        # each bucket's map goes to the index shard of that number (a record's
        # checksum covers its key: only a writer could misplace a term, and
        # verify checks that none did)
        postings = stored_postings(txn, sid, cat)
        try:
            # cast: Store.load only extends its bytearray of recycled flags with them
            s.store.load(
                nodes,
                types,
                src,
                dst,
                cast(bytes, flags),
                eprops,
                postings,
                kinds=dict(cat.get("kinds") or {}),
                live_bytes=int(cat["bytes"]),
                decode_props=decode_props,
                damaged=CabinetCorrupt,
            )
            apply_deltas(s.store.index, stored_deltas(txn, sid, cat))
            if s.tokenizer != cat.get("tokenizer"):
                # the stored line counts are another tokenizer's
                s.store.forget_line_tokens()
        except (TypeError, ValueError, AttributeError) as e:
            raise CabinetCorrupt(f"session {sid!r} holds a malformed record: {e}") from None
    return total
