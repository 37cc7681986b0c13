"""A session's nodes, edges and log as records, both ways: the bulk paths of
adopt, flush and hydrate.

Writing, a node is one record (``_node_record``), edges go 4,096 to a chunk
record of columns (``_edge_chunks``), a commit one log record
(``_log_record``). Reading, a hydrate decodes the node records in chunks
(``_decode_nodes``) that the store takes in one after the other, copies the
edge columns chunk by chunk (``_edge_columns``) and loads the stored postings
(``postings.py``), checking on the way that every record is where the
catalog says it must be.
"""

from __future__ import annotations

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
from .postings import _apply_deltas, _stored_deltas, _stored_postings
from .records import _is_node, _props_bytes, decode_props


def _node_record(s: Session, sid: str, nid: int) -> tuple[bytes, bytes]:
    """``(key, record)`` of one node."""
    # props ride as msgpack bytes inside the record: a hydrate keeps them so
    # until they are read, and a node never read is written back unchanged
    kind, labels, props, nick, recycled, okey, adj, ltok = s.store.stored_node(nid)
    key = R.element_key(sid, nid)
    return key, R.encode((kind, labels, _props_bytes(props), nick, recycled, okey, adj, ltok),
                         key)


def _edge_chunks(s: Session, sid: str, chunks: Any) -> list[tuple[bytes, bytes]]:
    """The chunk records of the given chunk numbers (see records.py)."""
    st = s.store
    out = []
    for c in sorted(chunks):
        lo, hi = max(1, c * R.EDGE_CHUNK), min(st.next_edge, (c + 1) * R.EDGE_CHUNK)
        if lo >= hi:
            continue
        types, srcs, dsts, recycled, by_id = st.stored_edges(lo, hi)
        key = R.element_key(sid, c)
        out.append((key, R.encode_edge_chunk(key, lo, types, srcs, dsts, recycled,
                                             {e - lo: p for e, p in by_id.items()})))
    return out


def _log_record(sid: str, rec: CommitRecord) -> tuple[bytes, bytes]:
    """``(key, record)`` of one commit of the log."""
    key = R.element_key(sid, rec.version)
    return key, R.encode({"t": rec.time, "s": rec.summary,
                          "c": [(c.op, c.id, c.state) for c in rec.changes]}, key)


NODE_CHUNK = 16384  # node records decoded at a time by a hydrate
RELEASE_AFTER = 65536  # a hydrate of this many elements lets the mapped pages go


def _decode_nodes(values: Iterator[bytes], sid: str, count: int,
                  progress: Callable[[int], None] | None = None,
                  ) -> Iterator[list[tuple[Any, ...]]]:
    """:func:`_node_from` over the records of nodes 1..count, with the checksum
    (which covers each node's key) and unpacking inlined (the hot loop of a
    hydrate), in lists of NODE_CHUNK records: the store takes each list in
    before the next is decoded, so the decoded records of the whole session
    never exist at once (their memory is reused chunk after chunk instead of
    being left behind as holes between what the store keeps)."""
    crc32, unpackb, crc_of, pack = zlib.crc32, msgpack.unpackb, R.CRC.unpack_from, R.ID.pack
    pre = crc32(R.prefix(sid))
    out: list[tuple[Any, ...]] = []
    append = out.append
    i = 0
    for i, raw in enumerate(values, 1):
        payload = memoryview(raw)[4:]
        if len(raw) < 5 or crc32(payload, crc32(pack(i), pre)) != crc_of(raw)[0]:
            raise CabinetCorrupt(f"node record {i} of {sid!r} failed its checksum")
        try:
            rec = unpackb(payload, use_list=False)
        except Exception:
            raise CabinetCorrupt(f"node record {i} of {sid!r} does not decode") from None
        if not _is_node(rec):
            raise CabinetCorrupt(f"record {i} of {sid!r} is not a node record")
        append(rec)
        if not i % NODE_CHUNK:
            yield out
            out = []
            append = out.append
            if progress is not None:
                progress(i)
    if i != count:
        raise CabinetCorrupt(f"session {sid!r}: node records are missing")
    if out:
        yield out
    if progress is not None:
        progress(i)


def _edge_columns(txn: Txn, sid: str, n_nodes: int, n_edges: int,
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
            raise CabinetCorrupt(f"session {sid!r}: edge chunk {c} is out of place or "
                                 "disagrees with the catalog")
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


def _log_of(txn: Txn, sid: str, cat: dict[str, Any], upto: int | None = None,
            ) -> Iterator[tuple[int, float, dict[str, int], list[Change]]]:
    """``(version, time, summary, changes)`` of the log records of a session,
    from the first version it keeps up to ``upto`` (default: its version),
    checked to run without a gap: a record lost to damage is ``cabinet_corrupt``."""
    want = int(cat.get("log_from", 1))
    end = cat["version"] if upto is None else upto
    for k, v in txn.scan(R.LOG, R.prefix(sid)):
        ver = R.key_id(k)
        if ver > end:
            break
        if ver != want:
            raise CabinetCorrupt(f"session {sid!r}: the log jumps from version {want - 1} to "
                                 f"{ver}")
        yield ver, *_decode_log(v, k)
        want += 1
    if want != end + 1:
        raise CabinetCorrupt(f"session {sid!r}: the log ends at version {want - 1}, not {end}")


def _dense(txn: Txn, sid: str, count: int,
           progress: Callable[[int], None] | None = None,
           ) -> Iterator[list[tuple[Any, ...]]]:
    """Decode the node records 1..count of ``sid`` (in chunks, see
    :func:`_decode_nodes`), checking that the ids are dense (the first and
    last keys are where they must be)."""
    if count == 0:
        return iter(())
    if txn.get(R.NODES, R.element_key(sid, 1)) is None or \
            txn.get(R.NODES, R.element_key(sid, count)) is None or \
            txn.get(R.NODES, R.element_key(sid, count + 1)) is not None:
        raise CabinetCorrupt(f"session {sid!r}: node records disagree with the catalog")
    return _decode_nodes(txn.values(R.NODES, R.prefix(sid), count), sid, count, progress)


def _load(txn: Txn, s: Session, sid: str, cat: dict[str, Any],
          progress: Callable[[int, int], None] | None = None) -> int:
    """Fill the empty store of ``s`` from the records of ``sid`` (the catalog row
    ``cat``): nodes, edge columns, stored postings and their pending deltas.
    Returns the elements read."""
    n_nodes, n_edges = int(cat["next_node"]) - 1, int(cat["next_edge"]) - 1
    total = n_nodes + n_edges
    with gc_paused():
        nodes = _dense(txn, sid, n_nodes, progress and (lambda d: progress(d, total)))
        types, src, dst, flags, eprops = _edge_columns(
            txn, sid, n_nodes, n_edges, progress and (lambda d: progress(n_nodes + d, total)))
        postings = _stored_postings(txn, sid, cat)
        try:
            # cast: Store.load only extends its bytearray of recycled flags with them
            s.store.load(nodes, types, src, dst, cast(bytes, flags), eprops, postings,
                         kinds=dict(cat.get("kinds") or {}), live_bytes=int(cat["bytes"]),
                         decode_props=decode_props, damaged=CabinetCorrupt)
            _apply_deltas(s.store.index, _stored_deltas(txn, sid, cat))
            if s.tokenizer != cat.get("tokenizer"):
                # the stored line counts are another tokenizer's
                s.store.forget_line_tokens()
        except (TypeError, ValueError, AttributeError) as e:
            raise CabinetCorrupt(f"session {sid!r} holds a malformed record: {e}"
                                 ) from None
    return total
