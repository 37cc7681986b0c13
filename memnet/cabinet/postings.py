"""The stored seed index: a session's postings as records, and their upkeep.

A session's index is stored as postings (the sorted ids of the live nodes
with a term) grouped in buckets by id range, a posting past ``POSTING_BIG``
ids in a record of its own (the keys are in ``records.py``). A whole-session
write (adopt, a first flush, an upgrade) writes every posting from the index
in memory; a flush appends one *delta* record of the ids its changed nodes
gained and lost, and folds the pending deltas into the postings once they
pass ``records.pending_limit()`` ids; a hydrate loads the postings and applies the
pending deltas.
"""

from __future__ import annotations

import bisect
import struct
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import CabinetCorrupt
from ..graph.index import Index, le_array, le_bytes
from ..session import Session
from . import records as R
from .kv import Txn
from .records import decode_props, node_from


def posting_records(sid: str, index: Index) -> list[tuple[bytes, bytes]]:
    """Every posting of an index as bucket records (for a whole-session write).

    A posting still held as the stored bytes (a hydrated session) is read
    without being turned into an array in the index: a flush that rewrites
    every posting must not leave the session bigger in memory."""
    step = R.POSTING_RANGE
    buckets: dict[tuple[int, int], dict[bytes, bytes]] = {}  # (bucket, range) -> map
    big: list[tuple[bytes, bytes]] = []
    for term, p in index.raw_postings():
        if p.__class__ is bytes and len(p) & 3:
            raise CabinetCorrupt(f"a stored index posting for {term!r} is malformed")
        ids = le_array(p) if isinstance(p, bytes) else p
        if not ids:
            continue
        b = R.bucket_of(term)
        i = 0
        while i < len(ids):
            rng = ids[i] // step
            j = len(ids) if ids[-1] // step == rng else bisect.bisect_left(ids, (rng + 1) * step, i)
            part = p if (i, j) == (0, len(ids)) and p.__class__ is bytes else le_bytes(ids[i:j])
            if j - i > R.POSTING_BIG and R.own_record(key := R.big_key(sid, rng, term), j - i):
                big.append((key, R.seal(key, part)))
            else:
                buckets.setdefault((b, rng), {})[term] = part
            i = j
    out = []
    for (b, rng), m in sorted(buckets.items()):
        key = R.bucket_key(sid, rng, b)
        out.append((key, R.encode(m, key)))
    return out + big


def node_terms(rec: tuple[Any, ...] | None) -> set[bytes]:
    """The index terms of a node record (``rec[2]``, the props, as stored
    bytes or a map)."""
    if rec is None or rec[4]:
        return set()
    props = rec[2]
    return Index.terms(
        rec[0], rec[1], (decode_props(props) if type(props) is bytes else props) if props else None
    )


Ids = dict[bytes, list[int]]  # term -> ascending node ids
_ONE_ID = struct.Struct("<I").pack


def _stored_nodes(
    txn: Txn,
    sid: str,
    nodes: list[int],
    cover: int,
) -> list[tuple[Any, ...] | None]:
    """The stored records of ``nodes`` (None for one never stored): its node
    record, else its entry in the chunk record of ids 1..cover it falls in."""
    keys = [R.element_key(sid, nid) for nid in nodes]
    out: list[tuple[Any, ...] | None] = [
        None if raw is None else node_from(raw, k)
        for raw, k in zip(txn.get_many(R.NODES, keys), keys, strict=True)
    ]
    want: dict[int, list[int]] = {}
    for i, nid in enumerate(nodes):
        if out[i] is None and nid <= cover:
            want.setdefault(nid // R.NODE_CHUNK, []).append(i)
    if want:
        ckeys = [R.node_chunk_key(sid, c) for c in want]
        for (c, at), ck, raw in zip(want.items(), ckeys, txn.get_many(R.NODES, ckeys), strict=True):
            if raw is None:
                raise CabinetCorrupt(f"session {sid!r}: node chunk {c} is missing")
            first, cols = R.chunk_columns(raw, ck, sid, c)
            for i in at:
                out[i] = tuple(col[nodes[i] - first] for col in cols)
    return out


def _term_diff(
    txn: Txn,
    sid: str,
    s: Session,
    nodes: list[int],
    stored_top: int,
    cover: int = 0,
    kept: bool = True,
) -> tuple[Ids, Ids]:
    """``(added, removed)``: the ids each term gained and lost over the changed
    ``nodes`` (ascending): each node's stored state gives the terms it had,
    the store the terms it has (kept from the commit that created it, when
    it is new). The stored state is the one the store kept at the node's
    first change since the last flush (``kept``: when that flush is the
    last one that reached the cabinet), else its record: its node record, or
    its entry in its node chunk (nodes 1..cover). Nodes from ``stored_top``
    on were never stored: no record is asked for."""
    st = s.store
    added: Ids = {}
    removed: Ids = {}
    cut = bisect.bisect_left(nodes, stored_top)
    olds: list[tuple[Any, ...] | None] = [None] * cut
    read = []
    for i in range(cut):
        b = st.stored_before(nodes[i]) if kept else None
        if b is None:
            read.append(i)
        else:
            kind, labels, props, recycled = b
            olds[i] = (kind, labels, props, None, recycled)
    if read:
        for i, rec in zip(
            read, _stored_nodes(txn, sid, [nodes[i] for i in read], cover), strict=True
        ):
            olds[i] = rec
    for i, nid in enumerate(nodes):
        new = st.node_terms(nid)
        rec = olds[i] if i < cut else None
        if rec is not None:
            old = node_terms(rec)
            if old:
                for term in old - new:
                    removed.setdefault(term, []).append(nid)
                new -= old
        for term in new:
            got = added.get(term)
            if got is None:
                added[term] = [nid]
            else:
                got.append(nid)
    return added, removed


def _id_bytes(ids: Ids) -> dict[bytes, bytes]:
    """Each term's ids as stored (little-endian u32), terms in order."""
    return {
        t: _ONE_ID(v[0]) if len(v) == 1 else le_bytes(array("I", v)) for t, v in sorted(ids.items())
    }


def _delta_record(added: Ids, removed: Ids, key: bytes) -> bytes:
    return R.encode({"a": _id_bytes(added), "r": _id_bytes(removed)}, key)


def _decode_delta(raw: bytes, key: bytes) -> tuple[dict[bytes, bytes], dict[bytes, bytes]]:
    d = R.decode(raw, key)
    if not (type(d) is dict and set(d) == {"a", "r"}):
        raise CabinetCorrupt(f"posting delta {key!r} is malformed")
    for m in (d["a"], d["r"]):
        if type(m) is not dict or any(
            type(k) is not bytes or R.bad_posting(v) for k, v in m.items()
        ):
            raise CabinetCorrupt(f"posting delta {key!r} is malformed")
    return d["a"], d["r"]


def stored_deltas(
    txn: Txn,
    sid: str,
    cat: dict[str, Any],
) -> list[tuple[bytes, dict[bytes, bytes], dict[bytes, bytes]]]:
    """The pending posting deltas of a session, oldest first: (key, added,
    removed); they hold the number of ids the catalog counts (``pdelta``)."""
    out = []
    for k, v in txn.scan(R.POSTINGS, R.delta_prefix(sid)):
        out.append((k, *_decode_delta(v, k)))
    if sum(len(v) // 4 for _k, a, r in out for m in (a, r) for v in m.values()) != cat.get(
        "pdelta", 0
    ):
        raise CabinetCorrupt(f"session {sid!r}: the pending index deltas disagree with the catalog")
    return out


def _merge_postings(
    txn: Txn,
    sid: str,
    changes: dict[bytes, dict[int, bool]],
) -> list[tuple[bytes, bytes | None]]:
    """Posting records to rewrite (None: delete) so the stored postings take
    ``term -> {id: present}``: bucket entries and postings of their own are
    read, edited and written back."""
    step = R.POSTING_RANGE
    by_bucket: dict[tuple[int, int], dict[bytes, dict[int, bool]]] = {}
    for term, ops in changes.items():
        b = R.bucket_of(term)
        lo, hi = min(ops) // step, max(ops) // step
        if lo == hi:  # the usual case: every id in one range
            by_bucket.setdefault((lo, b), {})[term] = ops
            continue
        for nid, present in ops.items():
            by_bucket.setdefault((nid // step, b), {}).setdefault(term, {})[nid] = present
    out: list[tuple[bytes, bytes | None]] = []
    # every record this merge may read, fetched at once (one round trip on a server)
    want = [R.bucket_key(sid, rng, b) for rng, b in sorted(by_bucket)]
    want += [
        k
        for (rng, b), terms in sorted(by_bucket.items())
        for t in sorted(terms)
        if len(k := R.big_key(sid, rng, t)) <= R.BIG_KEY_MAX
    ]
    stored = dict(zip(want, txn.get_many(R.POSTINGS, want), strict=True))
    for (rng, b), terms in sorted(by_bucket.items()):
        key = R.bucket_key(sid, rng, b)
        raw = stored[key]
        # the bucket's checksum is checked; of its postings, the ones edited
        # here are (the others are written back as they were read)
        m = R.decode_bucket(raw, key, deep=False) if raw is not None else {}
        changed = False
        for term, ops in sorted(terms.items()):
            bkey = R.big_key(sid, rng, term)
            braw = stored.get(bkey)  # (None too for a key too long to have a record)
            if braw is not None:
                ids = set(le_array(R.decode_ids(braw, bkey)))
            else:
                had = m.get(term)
                if had is not None and R.bad_posting(had):
                    raise CabinetCorrupt(f"posting record {key!r} is malformed")
                ids = set(le_array(had)) if had is not None else set()
            if all(ops.values()):  # only additions (new nodes): the usual case
                ids.update(ops)
            else:
                ids.difference_update(n for n, present in ops.items() if not present)
                ids.update(n for n, present in ops.items() if present)
            data = le_bytes(array("I", sorted(ids))) if ids else b""
            if braw is not None or R.own_record(bkey, len(ids)):  # a posting of its own
                changed |= m.pop(term, None) is not None
                out.append((bkey, R.seal(bkey, data) if data else None))
            elif data:
                changed |= m.get(term) != data
                m[term] = data
            else:
                changed |= m.pop(term, None) is not None
        if changed:
            out.append((key, R.encode(m, key) if m else None))
    return out


REWRITE_MIN = 256  # fewer changed nodes than this always flush as an index delta


def rewrite_postings(changed: int, nodes: int) -> bool:
    """Whether a flush that changed the terms of ``changed`` of ``nodes`` nodes
    writes the whole index again instead of a delta: when the changed nodes
    are a quarter of the session or more (the first flush of a session built
    in memory, a bulk load). Computing their terms one by one to diff them
    against their stored records would cost more than writing every posting
    from the index the session holds, as adopt does."""
    return changed >= REWRITE_MIN and changed * 4 >= nodes


def posting_writes(
    txn: Txn,
    sid: str,
    s: Session,
    nodes: list[int],
    cat: dict[str, Any],
    version: int,
    kept: bool = True,
) -> tuple[list[tuple[bytes, bytes | None]], dict[str, int]]:
    """The posting records a flush writes, and the catalog's counts after
    (``pdelta``: ids in pending deltas, ``precs``: posting records).

    A flush does not edit the postings in place: it appends one *delta*
    record (the ids each term gained and lost), a single small write. When
    the pending deltas pass ``R.pending_limit()`` ids, this flush folds them
    all (and its own) into the stored postings and deletes them, so the
    work of folding is spread over the flushes that made it."""
    pending, precs = int(cat.get("pdelta", 0)), int(cat.get("precs", 0))
    gained, lost = _term_diff(
        txn,
        sid,
        s,
        nodes,
        int(cat.get("next_node", 1 << 62)),
        max(0, int(cat.get("nchunks", 0)) * R.NODE_CHUNK - 1),
        kept,
    )
    if not gained and not lost:
        return [], {"pdelta": pending, "precs": precs}
    n = sum(map(len, gained.values())) + sum(map(len, lost.values()))
    if pending + n <= R.pending_limit(s.store.live_nodes):
        key = R.delta_key(sid, version)
        return [(key, _delta_record(gained, lost, key))], {"pdelta": pending + n, "precs": precs}
    changes: dict[bytes, dict[int, bool]] = {}
    out: list[tuple[bytes, bytes | None]] = []
    stored = stored_deltas(txn, sid, cat)
    for key, added, removed in stored:
        for term, raw in removed.items():
            ops = changes.setdefault(term, {})
            for nid in le_array(raw):
                ops[nid] = False
        for term, raw in added.items():
            ops = changes.setdefault(term, {})
            for nid in le_array(raw):
                ops[nid] = True
        out.append((key, None))
    for ids, present in ((lost, False), (gained, True)):
        for term, nids in ids.items():
            ops = changes.setdefault(term, {})
            for nid in nids:
                ops[nid] = present
    merged = _merge_postings(txn, sid, changes)
    precs += sum((v is not None) - (txn.get(R.POSTINGS, k) is not None) for k, v in merged)
    return merged + out, {"pdelta": 0, "precs": precs}


def stored_postings(
    txn: Txn,
    sid: str,
    cat: dict[str, Any],
    split: Callable[[bytes, int], tuple[int, int, bytes | None]] = R.split_bucket_key,
) -> Iterator[tuple[int, dict[bytes, bytes]]]:
    """The posting maps of a session with their buckets (bucket records, and
    one-term maps for postings with records of their own), in key order:
    bucket by bucket and in range order within a bucket, one at a time (so
    the index takes each in before the next is decoded); there are as many
    records as the catalog counts (``precs``), so none can go missing
    unnoticed. ``split`` reads a key as ``(range, bucket, term or None)``
    (an upgrade passes the reader of an older layout)."""
    pre = R.prefix(sid)
    plen = len(pre)
    dpre = R.delta_prefix(sid)
    n = 0
    for k, v in txn.scan(R.POSTINGS, pre):
        if k.startswith(dpre):
            break  # the deltas sort last; apply_deltas reads them
        _rng, b, term = split(k, plen)
        n += 1
        if term is None:
            yield b, R.decode_bucket(v, k, deep=False)
        else:
            yield b, {term: R.decode_ids(v, k)}
    if n != cat.get("precs"):
        raise CabinetCorrupt(
            f"session {sid!r}: the catalog counts {cat.get('precs')!r} index "
            f"records, the cabinet holds {n}"
        )


def apply_deltas(
    index: Index, deltas: list[tuple[bytes, dict[bytes, bytes], dict[bytes, bytes]]]
) -> None:
    """Bring a loaded index up to date with the pending posting deltas (most
    terms of a delta gained or lost one id: read without an array)."""
    add, one = index.add_id, int.from_bytes
    for _key, added, removed in deltas:
        for term, raw in removed.items():
            index.drop_ids(term, {one(raw, "little")} if len(raw) == 4 else set(le_array(raw)))
        for term, raw in added.items():
            if len(raw) == 4:
                add(term, one(raw, "little"))
            else:
                for nid in le_array(raw):
                    add(term, nid)
