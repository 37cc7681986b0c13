"""The cabinet: named sessions persisted with zero LLM tokens.

``hydrate`` (cabinet → memory) is :meth:`Cabinet.open`; ``flush`` (memory →
cabinet) is :meth:`Cabinet.flush`. A flush writes only the elements that
changed since the last flush plus one log record per commit, in one write
transaction that first compares the stored version with the version the
session was loaded at: a stale writer gets ``conflict`` and writes nothing.

Layout (fixed named tables, small per-element records, see ``records.py``):

=========  ==========================  ======================================
table      key                         value
=========  ==========================  ======================================
meta       ``format``                  format version, engine, versions
catalog    ``sid``                     version, rows, bytes, counts, times
nodes      ``sid 0x00 id``             kind, labels, props, nick, recycled,
                                       observable key, ordered adjacency
edges      ``sid 0x00 chunk``          4,096 edges as columns: types, src,
                                       dst, recycled flags, props
log        ``sid 0x00 version``        time, summary, changed elements
postings   ``sid 0x00 term range``     the seed index: sorted ids of the
                                       live nodes with that kind, label,
                                       short value or word (65,536-id ranges)
=========  ==========================  ======================================

A hydrate reads the stored postings instead of rebuilding the index from
every node's properties, and copies edge columns chunk by chunk; a flush
updates the postings of the terms its changed nodes gained or lost (it reads
their stored records for the old terms) and rewrites the chunks its changed
edges fall in, so its cost follows the change, not the session.

Example::

    >>> import tempfile, memnet
    >>> cab = memnet.Cabinet.open(tempfile.mkdtemp())
    >>> s = cab.create("notes")
    >>> _ = s.commit("INSERT (t:TSK {title: 'Persist me'})")
    >>> cab.flush(s)
    1
    >>> cab.open("notes").recall("TSK").receipt.rows
    1
"""

from __future__ import annotations

import bisect
import gc
import os
import re
import time
import uuid
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgpack

from .._version import __version__
from ..commit import Caps, Change, CommitRecord, gc_paused, replay
from ..errors import (
    CabinetCorrupt,
    CabinetError,
    CabinetFormat,
    CabinetUrlError,
    ConflictError,
    InvalidArgument,
    MemNetError,
    SessionExists,
    SessionNotFound,
    VersionNotFound,
)
from ..graph.index import Index, le_array, le_bytes
from ..graph.store import edge_handle, node_handle
from ..graph.words import stemmer_id
from ..ids import check_session_id
from ..session import Session
from ..values import Value
from . import records as R
from .kv import KV, MemoryKV, Txn


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of the catalog."""

    id: str
    version: int
    rows: int
    bytes: int
    nodes: int
    edges: int
    created: float
    updated: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "rows": self.rows, "bytes": self.bytes,
                "nodes": self.nodes, "edges": self.edges, "created": self.created,
                "updated": self.updated}


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One commit of a session's history, as stored."""

    version: int
    time: float
    created: int
    updated: int
    recycled: int
    changed: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "time": self.time, "created": self.created,
                "updated": self.updated, "recycled": self.recycled,
                "changed": list(self.changed)}


HEADER = b"format"  # the key of the cabinet's header in the meta table


def _read_header(txn: Txn) -> dict[str, Any] | None:
    """The header (one sealed the format-3 way is read too, so that an old
    cabinet is ``cabinet_format`` with the way to upgrade it)."""
    raw = txn.get(R.META, HEADER)
    return None if raw is None else _upgrade_header(raw)


def _check_count(header: dict[str, Any], found: int) -> None:
    """The catalog holds the number of sessions the header recorded."""
    want = header.get("sessions")
    if want != found:
        raise CabinetCorrupt(f"the header records {want!r} sessions but the catalog holds "
                             f"{found}: the catalog was lost or damaged")


def _count_sessions(txn: Txn, step: int) -> None:
    """Record in the header, in the transaction that creates or drops a
    session, how many sessions the catalog must hold."""
    header = _read_header(txn)
    if header is None or type(header.get("sessions")) is not int:
        raise CabinetCorrupt("the cabinet's header was lost or damaged")
    header["sessions"] += step
    txn.put(R.META, HEADER, R.encode(header, HEADER))


_CAT_INTS = ("version", "nodes", "edges", "bytes", "next_node", "next_edge", "pdelta", "precs")


def _catalog_row(raw: bytes, key: bytes) -> dict[str, Any]:
    """Decode and shape-check one catalog row."""
    cat = R.decode(raw, key)
    if type(cat) is not dict or any(type(cat.get(f)) is not int for f in _CAT_INTS) or \
            any(type(cat.get(f)) not in (int, float) for f in ("created", "updated")):
        raise CabinetCorrupt(f"catalog record {key!r} is malformed")
    return dict(cat)


def _sid_of(key: bytes) -> str:
    """The session id a catalog key names (a key that is not one is damage)."""
    sid = key.decode("ascii", "replace")
    try:
        return check_session_id(sid)
    except MemNetError:
        raise CabinetCorrupt(f"the catalog holds a bad session id {sid!r}") from None


def _natural(sid: str) -> tuple[Any, ...]:
    """Sort key of a session id: digit runs as numbers (``ok-2`` < ``ok-10``)."""
    parts = re.split(r"([0-9]+)", sid)
    return tuple(int(x) if i % 2 else x for i, x in enumerate(parts)), sid


def _props_bytes(props: Any) -> bytes | None:
    if props is None or props.__class__ is bytes:
        return props  # type: ignore[no-any-return]
    return msgpack.packb(props, use_bin_type=True)


def decode_props(raw: bytes) -> dict[str, Value] | None:
    """A stored property map (``cabinet_corrupt`` when the bytes are not one)."""
    try:
        props = msgpack.unpackb(raw, use_list=False)
    except Exception as e:  # noqa: BLE001 - msgpack raises several unrelated types
        raise CabinetCorrupt(f"a stored property map does not decode: {e}") from None
    if type(props) is not dict or any(type(k) is not str for k in props):
        raise CabinetCorrupt("a stored property map is not a map of names")
    return props or None

def _node_record(s: Session, sid: str, nid: int) -> tuple[bytes, bytes]:
    """``(key, record)`` of one node."""
    # props ride as msgpack bytes inside the record: a hydrate keeps them so
    # until they are read, and a node never read is written back unchanged
    st = s.store
    key = R.element_key(sid, nid)
    return key, R.encode((st.kind[nid], st.labels[nid], _props_bytes(st.props.raw(nid)),
                          st.nick.get(nid), bool(st.nrec[nid]), st.key[nid],
                          st.adj.raw(nid), st.ltok[nid]), key)


def _edge_chunks(s: Session, sid: str, chunks: Any) -> list[tuple[bytes, bytes]]:
    """The chunk records of the given chunk numbers (see records.py)."""
    st = s.store
    out = []
    get = st.eprops.get
    for c in sorted(chunks):
        lo, hi = max(1, c * R.EDGE_CHUNK), min(st.next_edge, (c + 1) * R.EDGE_CHUNK)
        if lo >= hi:
            continue
        props = {e - lo: p for e in range(lo, hi) if (p := get(e))}
        key = R.element_key(sid, c)
        out.append((key, R.encode_edge_chunk(key, lo, st.etype[lo:hi], st.esrc[lo:hi],
                                             st.edst[lo:hi], st.erec[lo:hi], props)))
    return out


def _posting_records(sid: str, index: Index) -> list[tuple[bytes, bytes]]:
    """Every posting of an index as bucket records (for a whole-session write).

    A posting still held as the stored bytes (a hydrated session) is read
    without being turned into an array in the index: a flush that rewrites
    every posting must not leave the session bigger in memory."""
    step = R.POSTING_RANGE
    buckets: dict[tuple[int, int], dict[bytes, bytes]] = {}
    big: list[tuple[bytes, bytes]] = []
    for term, p in index.raw_postings():
        if p.__class__ is bytes and len(p) & 3:
            raise CabinetCorrupt(f"a stored index posting for {term!r} is malformed")
        ids = le_array(p) if p.__class__ is bytes else p
        if not ids:
            continue
        b = R.bucket_of(term)
        i = 0
        while i < len(ids):
            rng = ids[i] // step
            j = len(ids) if ids[-1] // step == rng else \
                bisect.bisect_left(ids, (rng + 1) * step, i)
            part = p if (i, j) == (0, len(ids)) and p.__class__ is bytes else \
                le_bytes(ids[i:j])
            if j - i > R.POSTING_BIG:
                key = R.big_key(sid, rng, term)
                big.append((key, R.seal(key, part)))
            else:
                buckets.setdefault((rng, b), {})[term] = part
            i = j
    out = []
    for (rng, b), m in sorted(buckets.items()):
        key = R.bucket_key(sid, rng, b)
        out.append((key, R.encode(m, key)))
    return out + big


def _kinds(st: Any) -> dict[str, int]:
    """Live nodes per kind, for the catalog (a hydrate takes them from there)."""
    return {k: c for k, c in sorted(st.kind_live.items()) if c}


def _node_terms(rec: tuple[Any, ...] | None) -> set[bytes]:
    if rec is None or rec[4]:
        return set()
    return Index.terms(rec[0], rec[1], decode_props(rec[2]) if rec[2] else None)


def _term_diff(txn: Txn, sid: str, s: Session,
               nodes: list[int]) -> dict[bytes, tuple[set[int], set[int]]]:
    """``term -> (ids added, ids removed)`` for the changed nodes: each node's
    stored record gives the terms it had, the store the terms it has."""
    st = s.store
    diff: dict[bytes, tuple[set[int], set[int]]] = {}
    keys = [R.element_key(sid, nid) for nid in nodes]
    for nid, key, raw in zip(nodes, keys, txn.get_many(R.NODES, keys), strict=True):
        old = _node_terms(None if raw is None else _node_from(raw, key))
        new = set() if st.nrec[nid] else Index.terms(st.kind[nid], st.labels[nid],
                                                     st.props[nid])
        for term in old ^ new:
            entry = diff.setdefault(term, (set(), set()))
            (entry[0] if term in new else entry[1]).add(nid)
    return diff


def _delta_record(diff: dict[bytes, tuple[set[int], set[int]]], key: bytes) -> bytes:
    return R.encode({"a": {t: le_bytes(array("I", sorted(a)))
                           for t, (a, _r) in sorted(diff.items()) if a},
                     "r": {t: le_bytes(array("I", sorted(r)))
                           for t, (_a, r) in sorted(diff.items()) if r}}, key)


def _decode_delta(raw: bytes, key: bytes) -> tuple[dict[bytes, bytes], dict[bytes, bytes]]:
    d = R.decode(raw, key)
    if not (type(d) is dict and set(d) == {"a", "r"}):
        raise CabinetCorrupt(f"posting delta {key!r} is malformed")
    for m in (d["a"], d["r"]):
        if type(m) is not dict or any(type(k) is not bytes or type(v) is not bytes
                                      or not v or len(v) & 3 for k, v in m.items()):
            raise CabinetCorrupt(f"posting delta {key!r} is malformed")
    return d["a"], d["r"]


def _stored_deltas(txn: Txn, sid: str, cat: dict[str, Any],
                   ) -> list[tuple[bytes, dict[bytes, bytes], dict[bytes, bytes]]]:
    """The pending posting deltas of a session, oldest first: (key, added,
    removed); they hold the number of ids the catalog counts (``pdelta``)."""
    out = []
    for k, v in txn.scan(R.POSTINGS, R.delta_prefix(sid)):
        out.append((k, *_decode_delta(v, k)))
    if sum(len(v) // 4 for _k, a, r in out for m in (a, r) for v in m.values()) != \
            cat.get("pdelta", 0):
        raise CabinetCorrupt(f"session {sid!r}: the pending index deltas disagree with the "
                             "catalog")
    return out


def _merge_postings(txn: Txn, sid: str, changes: dict[bytes, dict[int, bool]],
                    ) -> list[tuple[bytes, bytes | None]]:
    """Posting records to rewrite (None: delete) so the stored postings take
    ``term -> {id: present}``: bucket entries and postings of their own are
    read, edited and written back."""
    step = R.POSTING_RANGE
    by_bucket: dict[tuple[int, int], dict[bytes, dict[int, bool]]] = {}
    for term, ops in changes.items():
        b = R.bucket_of(term)
        for nid, present in ops.items():
            by_bucket.setdefault((nid // step, b), {}).setdefault(term, {})[nid] = present
    out: list[tuple[bytes, bytes | None]] = []
    # every record this merge may read, fetched at once (one round trip on a server)
    want = [R.bucket_key(sid, rng, b) for rng, b in sorted(by_bucket)]
    want += [R.big_key(sid, rng, t) for (rng, b), terms in sorted(by_bucket.items())
             for t in sorted(terms)]
    stored = dict(zip(want, txn.get_many(R.POSTINGS, want), strict=True))
    for (rng, b), terms in sorted(by_bucket.items()):
        key = R.bucket_key(sid, rng, b)
        raw = stored[key]
        m = R.decode_bucket(raw, key) if raw is not None else {}
        before = dict(m)
        for term, ops in sorted(terms.items()):
            bkey = R.big_key(sid, rng, term)
            braw = stored[bkey]
            if braw is not None:
                ids = set(le_array(R.decode_ids(braw, bkey)))
            else:
                ids = set(le_array(m[term])) if term in m else set()
            ids.difference_update(n for n, present in ops.items() if not present)
            ids.update(n for n, present in ops.items() if present)
            data = le_bytes(array("I", sorted(ids))) if ids else b""
            if braw is not None or len(ids) > R.POSTING_BIG:  # a posting of its own
                m.pop(term, None)
                out.append((bkey, R.seal(bkey, data) if data else None))
            elif data:
                m[term] = data
            else:
                m.pop(term, None)
        if m != before:
            out.append((key, R.encode(m, key) if m else None))
    return out


REWRITE_MIN = 256  # fewer changed nodes than this always flush as an index delta


def _rewrite_postings(changed: int, nodes: int) -> bool:
    """Whether a flush that changed the terms of ``changed`` of ``nodes`` nodes
    writes the whole index again instead of a delta: when the changed nodes
    are a quarter of the session or more (the first flush of a session built
    in memory, a bulk load). Computing their terms one by one to diff them
    against their stored records would cost more than writing every posting
    from the index the session holds, as adopt does."""
    return changed >= REWRITE_MIN and changed * 4 >= nodes


def _posting_writes(txn: Txn, sid: str, s: Session, nodes: list[int], cat: dict[str, Any],
                    version: int) -> tuple[list[tuple[bytes, bytes | None]], dict[str, int]]:
    """The posting records a flush writes, and the catalog's counts after
    (``pdelta``: ids in pending deltas, ``precs``: posting records).

    A flush does not edit the postings in place: it appends one *delta*
    record (the ids each term gained and lost), a single small write. When
    the pending deltas pass ``R.POSTING_PENDING`` ids, this flush folds them
    all (and its own) into the stored postings and deletes them, so the
    work of folding is spread over the flushes that made it."""
    pending, precs = int(cat.get("pdelta", 0)), int(cat.get("precs", 0))
    diff = _term_diff(txn, sid, s, nodes)
    if not diff:
        return [], {"pdelta": pending, "precs": precs}
    n = sum(len(a) + len(r) for a, r in diff.values())
    if pending + n <= R.POSTING_PENDING:
        key = R.delta_key(sid, version)
        return [(key, _delta_record(diff, key))], {"pdelta": pending + n, "precs": precs}
    changes: dict[bytes, dict[int, bool]] = {}
    out: list[tuple[bytes, bytes | None]] = []
    stored = _stored_deltas(txn, sid, cat)
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
    for term, (a, r) in diff.items():
        ops = changes.setdefault(term, {})
        for nid in r:
            ops[nid] = False
        for nid in a:
            ops[nid] = True
    merged = _merge_postings(txn, sid, changes)
    precs += sum((v is not None) - (txn.get(R.POSTINGS, k) is not None) for k, v in merged)
    return merged + out, {"pdelta": 0, "precs": precs}


def _open_kv(path: str | os.PathLike[str] | None, backend: str, max_size: int | None,
             sync: bool) -> KV:
    """The backend behind ``Cabinet.open`` (see its docstring)."""
    if backend == "memory":
        return MemoryKV(R.TABLES)
    if backend not in ("lmdb", "postgres"):
        raise InvalidArgument(f"unknown cabinet backend {backend!r} (lmdb, postgres, memory)")
    from .kv_pg import SCHEMES, PgKV, looks_like_url

    where = os.fspath(path) if path is not None else os.environ.get("MEMNET_HOME", ".memnet")
    if backend == "postgres" or (not isinstance(path, os.PathLike) and looks_like_url(where)):
        scheme = where.split("://", 1)[0].lower() if looks_like_url(where) else "postgresql"
        if scheme not in SCHEMES:
            raise CabinetUrlError(
                f"unknown cabinet URL scheme {scheme!r}: a cabinet is a directory (LMDB) "
                "or a postgresql://user@host:port/dbname URL")
        return PgKV(where, R.TABLES, sync=sync)
    from .kv_lmdb import DEFAULT_MAX_SIZE, LmdbKV

    if max_size is None:
        env = os.environ.get("MEMNET_MAX_SIZE")
        max_size = int(env) if env else DEFAULT_MAX_SIZE
    return LmdbKV.acquire(where, R.TABLES, max_size=max_size, sync=sync)


def _v3_payload(raw: bytes, key: bytes) -> bytes:
    """The payload of a format-3 record (its checksum covered the payload only)."""
    if len(raw) < 4 or zlib.crc32(raw[4:]) != R.CRC.unpack_from(raw)[0]:
        raise CabinetCorrupt(f"record {key!r} failed its (format 3) checksum")
    return raw[4:]


def _upgrade_header(raw: bytes) -> dict[str, Any]:
    """The header of a cabinet to upgrade, sealed either way."""
    try:
        header = R.decode(raw, HEADER)
    except CabinetCorrupt:
        header = msgpack.unpackb(_v3_payload(raw, HEADER), use_list=False)
    if type(header) is not dict:
        raise CabinetCorrupt("the cabinet's header is malformed")
    return header


def _upgrade_session(txn: Txn, sid: str, old: bool) -> int:
    """Rewrite one session in this format (see :meth:`Cabinet.upgrade`):
    from format 3, every record sealed again under its key and node records
    given their token count (0, unknown); then the word index rebuilt from
    the node records. Returns the nodes read."""
    pre = R.prefix(sid)
    ckey = R.sid_key(sid)
    craw = txn.get(R.CATALOG, ckey)
    if craw is None:
        raise CabinetCorrupt(f"the catalog row of {sid!r} vanished during the upgrade")
    if old:
        cat = msgpack.unpackb(_v3_payload(craw, ckey), use_list=False)
        for k, v in list(txn.scan(R.NODES, pre)):
            rec = msgpack.unpackb(_v3_payload(v, k), use_list=False)
            if type(rec) is tuple and len(rec) == 7:
                rec = (*rec, 0)
            txn.put(R.NODES, k, R.encode(rec, k))
        for table in (R.EDGES, R.LOG):
            for k, v in list(txn.scan(table, pre)):
                txn.put(table, k, R.seal(k, _v3_payload(v, k)))
    else:
        cat = _catalog_row(craw, ckey)
    index = Index()
    n = 0
    for k, v in txn.scan(R.NODES, pre):
        n += 1
        for term in _node_terms(_node_from(v, k)):
            index.add_id(term, R.key_id(k))
    txn.delete_prefix(R.POSTINGS, pre)
    recs = _posting_records(sid, index)
    for k, v in recs:
        txn.put(R.POSTINGS, k, v)
    txn.put(R.CATALOG, ckey, R.encode(dict(cat, pdelta=0, precs=len(recs)), ckey))
    return n


def _options(s: Session) -> dict[str, Any]:
    """The session settings a cabinet keeps with it (the rate cap R and the
    settle policy), so a hydrated session behaves like the one flushed."""
    return {"cap_rows": s.caps.rows, "cap_bytes": s.caps.bytes,
            "delete_on_settle": s.delete_on_settle, "tokenizer": s.tokenizer}


def _stored_options(cat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "cap_rows" in cat:
        out["caps"] = Caps(int(cat["cap_rows"]), int(cat["cap_bytes"]))
    if "delete_on_settle" in cat:
        out["delete_on_settle"] = bool(cat["delete_on_settle"])
    if isinstance(cat.get("tokenizer"), str):
        out["tokenizer"] = cat["tokenizer"]
    return out


def _log_record(sid: str, rec: CommitRecord) -> tuple[bytes, bytes]:
    """``(key, record)`` of one commit of the log."""
    key = R.element_key(sid, rec.version)
    return key, R.encode({"t": rec.time, "s": rec.summary,
                          "c": [(c.op, c.id, c.state) for c in rec.changes]}, key)


def _is_node(rec: Any) -> bool:
    """Whether a decoded record has the node shape ``(kind, labels, props
    bytes, nick, recycled, key, adjacency, line tokens)`` (a checksum proves
    the bytes are the ones written, not that they are a node)."""
    if type(rec) is not tuple or len(rec) != 8:
        return False
    kind, labels, props, nick, recycled, key, adj, ltok = rec
    return (type(kind) is str and type(labels) is tuple and type(recycled) is bool
            and type(key) is str and type(adj) is bytes and not len(adj) & 3
            and type(ltok) is int and 0 <= ltok < 65536
            and (nick is None or type(nick) is str)
            and (props is None or type(props) is bytes)
            and (not labels or all(type(x) is str for x in labels)))


def _node_from(raw: bytes, where: Any) -> tuple[Any, ...]:
    """Decode and shape-check one node record."""
    rec = R.decode(raw, where)
    if not _is_node(rec):
        raise CabinetCorrupt(f"record {where!r} is not a node record")
    return rec  # type: ignore[no-any-return]


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


def _stored_postings(txn: Txn, sid: str, cat: dict[str, Any]) -> Iterator[dict[bytes, bytes]]:
    """The posting maps of a session (buckets, and one-term maps for postings
    with records of their own), in range order, one at a time (so the index
    takes each in before the next is decoded); there are as many records as
    the catalog counts (``precs``), so none can go missing unnoticed."""
    pre = R.prefix(sid)
    plen = len(pre)
    dpre = R.delta_prefix(sid)
    n = 0
    for k, v in txn.scan(R.POSTINGS, pre):
        if k.startswith(dpre):
            break  # the deltas sort last; _apply_deltas reads them
        _rng, _b, term = R.split_bucket_key(k, plen)
        n += 1
        yield R.decode_bucket(v, k, deep=False) if term is None else {term: R.decode_ids(v, k)}
    if n != cat.get("precs"):
        raise CabinetCorrupt(f"session {sid!r}: the catalog counts {cat.get('precs')!r} index "
                             f"records, the cabinet holds {n}")


def _apply_deltas(index: Index, deltas: list[tuple[bytes, dict[bytes, bytes],
                                                   dict[bytes, bytes]]]) -> None:
    """Bring a loaded index up to date with the pending posting deltas."""
    for _key, added, removed in deltas:
        for term, raw in removed.items():
            index.drop_ids(term, set(le_array(raw)))
        for term, raw in added.items():
            for nid in le_array(raw):
                index.add_id(term, nid)


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


class _Archive:
    """What a cabinet lends a session it opened, to rebuild its past versions
    for delta recall (``memnet/recall/delta.py``): a fresh copy at the stored
    version, and the changes of any stored commit as the log keeps them."""

    def __init__(self, cabinet: Cabinet, sid: str, token: str | None, tokenizer: str) -> None:
        self.cabinet = cabinet
        self.sid = sid
        self.token = token
        self.tokenizer = tokenizer

    def copy(self) -> Session:
        s = self.cabinet.hydrate(self.sid, tokenizer=self.tokenizer)
        if s.base_token != self.token:
            raise VersionNotFound(f"session {self.sid!r} was dropped and created again")
        return s

    def changes(self, version: int) -> list[tuple[str, int, tuple[Any, ...]]]:
        key = R.element_key(self.sid, version)
        with self.cabinet.kv.read() as txn:
            raw = txn.get(R.LOG, key)
        if raw is None:
            raise VersionNotFound(f"session {self.sid!r} keeps no log record of version "
                                  f"{version}")
        try:
            return [(str(op), int(i), tuple(st)) for op, i, st in R.decode(raw, key)["c"]]
        except (KeyError, TypeError, ValueError) as e:
            raise CabinetCorrupt(f"log record {key!r} is malformed: {e}") from None


class _ClassOrInstance:
    """``Cabinet.open(path)`` opens a cabinet; ``cabinet.open(sid)`` hydrates a
    session. Both names are in the brief, so one attribute serves both: called on
    the class it runs the class function, on an instance the instance function."""

    def __init__(self, on_class: Any, on_instance: Any) -> None:
        self.on_class = on_class
        self.on_instance = on_instance
        self.__doc__ = on_instance.__doc__

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return self.on_class.__get__(None, cls)
        return self.on_instance.__get__(obj, cls)


class Cabinet:
    """Named sessions in one store (LMDB by default, PostgreSQL, or in memory).

    Open with :meth:`Cabinet.open`. A cabinet object belongs to the process
    that opened it; sessions it returns are plain :class:`~memnet.Session`
    objects that remember the version they were loaded at.
    """

    def __init__(self, kv: KV) -> None:
        self._kv: KV | None = kv
        try:
            self._check_format()
        except BaseException:
            self.close()  # a cabinet that cannot be used must not hold its backend
            raise

    @property
    def kv(self) -> KV:
        """The storage backend (refused once this cabinet object is closed)."""
        if self._kv is None:
            raise CabinetError("this cabinet is closed", code="cabinet_closed")
        return self._kv

    # -- opening ----------------------------------------------------------------
    @classmethod
    def open_cabinet(cls, path: str | os.PathLike[str] | None = None, *, backend: str = "lmdb",
             max_size: int | None = None, sync: bool = True) -> Cabinet:
        """Open (creating if needed) a cabinet.

        ``path`` defaults to ``$MEMNET_HOME``, else ``./.memnet``. A string of
        the form ``scheme://...`` is a URL, never a path: ``postgresql://``
        (or ``postgres://``) opens a PostgreSQL cabinet (the ``postgres``
        extra), any other scheme is ``bad_cabinet_url``. Otherwise ``backend``
        is ``"lmdb"`` (a directory), ``"postgres"`` (``path`` is a libpq
        connection string) or ``"memory"`` (nothing persisted, for tests).
        ``max_size`` caps the LMDB map (default ``$MEMNET_MAX_SIZE`` or 64 GiB).
        ``sync=False`` trades the durability of the last flushes in a machine
        crash for speed (LMDB: no fsync; PostgreSQL: ``synchronous_commit=off``).
        """
        return cls(_open_kv(path, backend, max_size, sync))

    def _check_format(self) -> None:
        """Check the header (any backend): the format, the engine, and that the
        catalog holds as many sessions as the header recorded, so a catalog
        that was lost or emptied is ``cabinet_corrupt``, never an empty list.
        A header is written only into a cabinet that holds nothing at all."""
        engine = self.kv.info().get("lmdb")
        with self.kv.read() as txn:
            header = _read_header(txn)
            if header is None:
                held = [t for t in R.TABLES if txn.count(t)]
                if held:
                    raise CabinetCorrupt(f"the cabinet holds records ({', '.join(held)}) but "
                                         "no header: the header was lost or damaged")
            else:
                fmt = header.get("format")
                if fmt != R.FORMAT_VERSION:
                    msg = (f"cabinet format {fmt!r} is not supported (this MemNet reads format "
                           f"{R.FORMAT_VERSION})")
                    if fmt in R.UPGRADABLE:
                        msg += "; run `memnet cabinet upgrade` (Cabinet.upgrade) to rewrite it"
                    raise CabinetFormat(msg)
                stored = header.get("engine")
                if stored and engine and stored.split(".")[:2] != engine.split(".")[:2]:
                    raise CabinetFormat(f"cabinet written by LMDB {stored}, this process has "
                                        f"LMDB {engine}")
                words = header.get("words")
                if words != stemmer_id():
                    raise CabinetFormat(
                        f"the cabinet's word index was built with {words}, this process stems "
                        f"with {stemmer_id()}: run `memnet cabinet upgrade` (Cabinet.upgrade) to "
                        "rebuild it")
                _check_count(header, txn.count(R.CATALOG))
        if header is None:
            new = {"format": R.FORMAT_VERSION, "backend": self.kv.name, "engine": engine,
                   "words": stemmer_id(), "memnet": __version__, "created": time.time(),
                   "sessions": 0}

            def write(t: Txn) -> None:
                if t.get(R.META, HEADER) is None:  # another process may have been first
                    t.put(R.META, HEADER, R.encode(new, HEADER))

            self.kv.run_write(write)

    @classmethod
    def upgrade(cls, path: str | os.PathLike[str] | None = None, *, backend: str = "lmdb",
                max_size: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Bring a cabinet written by an older format (3), or indexed with
        another stemmer, to this format in place; returns ``{"sessions": n,
        "nodes": m}``. From format 3 every record is checked against its old
        checksum and sealed again under its key, node records gain their token
        count (unknown until first used), and each session's word index is
        rebuilt; with only another stemmer, the index is rebuilt.

        Each session is rewritten in one transaction and the header last, so an
        upgrade that stops half way is simply run again. A cabinet that needs
        nothing is left as it is.
        """
        cab = cls.__new__(cls)
        cab._kv = _open_kv(path, backend, max_size, True)
        try:
            with cab.kv.read() as txn:
                raw = txn.get(R.META, HEADER)
                header = None if raw is None else _upgrade_header(raw)
                sids = [k.decode("ascii") for k, _v in txn.scan(R.CATALOG)] if header else []
            if header is None or (header.get("format") == R.FORMAT_VERSION
                                  and header.get("words") == stemmer_id()):
                return {"sessions": 0, "nodes": 0}
            fmt = header.get("format")
            if fmt != R.FORMAT_VERSION and fmt not in R.UPGRADABLE:
                raise CabinetFormat(f"cabinet format {fmt!r} cannot be upgraded in place")
            old = fmt != R.FORMAT_VERSION
            counts = {"sessions": 0, "nodes": 0}
            for i, sid in enumerate(sids):
                counts["nodes"] += cab.kv.run_write(
                    lambda t, sid=sid: _upgrade_session(t, sid, old))
                counts["sessions"] += 1
                if progress is not None:
                    progress(i + 1, len(sids))
            header.update(format=R.FORMAT_VERSION, words=stemmer_id(), sessions=len(sids),
                          memnet=__version__)
            cab.kv.run_write(lambda t: t.put(R.META, HEADER, R.encode(header, HEADER)))
            return counts
        finally:
            cab.close()

    def close(self) -> None:
        """Release the backend (other Cabinet objects on the same LMDB directory
        in this process keep theirs). Closing twice is harmless."""
        if self._kv is not None:
            kv, self._kv = self._kv, None
            kv.close()

    def __enter__(self) -> Cabinet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- catalog ------------------------------------------------------------------
    @staticmethod
    def _catalog(txn: Txn, sid: str) -> dict[str, Any] | None:
        key = R.sid_key(sid)
        raw = txn.get(R.CATALOG, key)
        return None if raw is None else _catalog_row(raw, key)

    def exists(self, sid: str) -> bool:
        check_session_id(sid)
        with self.kv.read() as txn:
            return self._catalog(txn, sid) is not None

    @staticmethod
    def _info(sid: str, c: dict[str, Any]) -> SessionInfo:
        return SessionInfo(sid, c["version"], c["nodes"] + c["edges"], c["bytes"], c["nodes"],
                           c["edges"], c["created"], c["updated"])

    def sessions(self) -> list[SessionInfo]:
        """The catalog: every session with its version and size, by id (the
        numbers in ids compared as numbers: ``ok-2`` before ``ok-10``)."""
        with self.kv.read() as txn:
            header = _read_header(txn)
            rows = [self._info(_sid_of(k), _catalog_row(v, k)) for k, v in txn.scan(R.CATALOG)]
        if header is not None:
            _check_count(header, len(rows))
        return sorted(rows, key=lambda i: _natural(i.id))

    def session_info(self, sid: str) -> SessionInfo:
        """One row of the catalog (one record read, whatever the catalog's size)."""
        check_session_id(sid)
        with self.kv.read() as txn:
            cat = self._catalog(txn, sid)
        if cat is None:
            raise SessionNotFound(f"no session {sid!r} in this cabinet")
        return self._info(sid, cat)

    def create(self, sid: str, **session_options: Any) -> Session:
        """Create an empty session; an existing id is refused with ``session_exists``."""
        check_session_id(sid)
        now = time.time()

        def work(txn: Txn) -> None:
            if self._catalog(txn, sid) is not None:
                raise SessionExists(f"session {sid!r} already exists in this cabinet")
            key = R.sid_key(sid)
            txn.put(R.CATALOG, key, R.encode(
                {"version": 0, "nodes": 0, "edges": 0, "bytes": 0, "next_node": 1,
                 "next_edge": 1, "created": now, "updated": now, "token": token,
                 "pdelta": 0, "precs": 0, **_options(s)}, key))
            _count_sessions(txn, 1)

        s = Session(sid, **session_options)
        token = uuid.uuid4().hex
        self.kv.run_write(work)
        self._bind(s, 0, token)
        return s

    def adopt(self, session: Session) -> int:
        """Persist a session that was built in memory (not opened from here) as a
        new session of this cabinet, in one transaction; returns its version.

        When the session still holds every commit it ever made in memory (its
        history was not cut by ``history_limit``), they are stored as its log,
        as if it had been created here and flushed. Otherwise the cabinet's
        history of it starts here: versions before the current one were never
        stored, so they cannot be read back with ``at=``.
        """
        s = session
        sid = check_session_id(s.name)
        if s.base_version is not None:
            raise SessionExists(f"session {sid!r} already belongs to a cabinet; use flush()")
        with s._lock:
            st = s.store
            now = time.time()
            history = s.history()
            whole = [r.version for r in history] == list(range(1, s.version + 1))
            with gc_paused():
                node_recs = [_node_record(s, sid, n) for n in range(1, st.next_node)]
                edge_recs = _edge_chunks(s, sid, range(st.next_edge // R.EDGE_CHUNK + 1))
                posting_recs = _posting_records(sid, st.index)
                log_recs = [_log_record(sid, r) for r in history] if whole else []
            token = uuid.uuid4().hex
            cat = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                   "bytes": st.live_bytes, "kinds": _kinds(st), "next_node": st.next_node,
                   "next_edge": st.next_edge, "created": now, "updated": now, "token": token,
                   "pdelta": 0, "precs": len(posting_recs),
                   **({} if whole else {"log_from": s.version + 1}), **_options(s)}

            def work(txn: Txn) -> None:
                if self._catalog(txn, sid) is not None:
                    raise SessionExists(f"session {sid!r} already exists in this cabinet")
                for k, v in node_recs:
                    txn.put(R.NODES, k, v)
                for k, v in edge_recs:
                    txn.put(R.EDGES, k, v)
                for k, v in posting_recs:
                    txn.put(R.POSTINGS, k, v)
                for k, v in log_recs:
                    txn.put(R.LOG, k, v)
                key = R.sid_key(sid)
                txn.put(R.CATALOG, key, R.encode(cat, key))
                _count_sessions(txn, 1)

            self.kv.run_write(work)
            self._bind(s, s.version, token)
            return s.version

    def _bind(self, s: Session, version: int, token: str | None) -> None:
        s.base_version = version
        s.base_token = token
        s.pending = []
        s.unsure_flushes = {}
        s.store.track_changes()
        s.archive = _Archive(self, s.name, token, s.tokenizer)

    def is_stale(self, session: Session) -> bool:
        """Whether the cabinet now holds another state of ``session`` than the
        one it was loaded (or last flushed) at: another writer flushed, or the
        session was dropped (and perhaps created again). One catalog read, no
        hydrate; a clean stale copy is best opened again."""
        sid = check_session_id(session.name)
        if session.base_version is None:
            raise ConflictError(f"session {sid!r} was not opened from this cabinet",
                                stored=None, expected=None)
        with self.kv.read() as txn:
            cat = self._catalog(txn, sid)
        return (cat is None or cat.get("token") != session.base_token
                or cat["version"] != session.base_version)

    def drop(self, sid: str) -> None:
        """Delete a session and all of its records, in one transaction."""
        check_session_id(sid)
        pre = R.prefix(sid)

        def work(txn: Txn) -> None:
            if self._catalog(txn, sid) is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for table in (R.NODES, R.EDGES, R.LOG, R.POSTINGS):
                txn.delete_prefix(table, pre)
            txn.delete(R.CATALOG, R.sid_key(sid))
            _count_sessions(txn, -1)

        self.kv.run_write(work)

    # -- hydrate ------------------------------------------------------------------
    def hydrate(self, sid: str, *, at: int | None = None,
                progress: Callable[[int, int], None] | None = None,
                **session_options: Any) -> Session:
        """Hydrate a session; ``at=version`` reads a past version back.

        ``progress(done, total)`` is called now and then with the records read
        so far (nodes and edges, or log records for a past version).

        A hydrate of 65,536 elements or more ends with :func:`gc.freeze`:
        every object the process holds then (the session's columns among
        them) is left out of later garbage collections, which would otherwise
        walk the million entries of each column again and again. Objects
        frozen are still freed when no longer referenced, but a reference
        cycle among them is not collected; :func:`gc.unfreeze` undoes it."""
        check_session_id(sid)
        with self.kv.read() as txn:
            cat = self._catalog(txn, sid)
            if cat is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            version = int(cat["version"])
            if at is not None and at != version:
                first = int(cat.get("log_from", 1)) - 1  # oldest version that can be rebuilt
                if first > 0:
                    raise VersionNotFound(
                        f"session {sid!r} was adopted at version {first}: the cabinet keeps "
                        f"versions {first} to {version} only as they are now, not {at!r}")
                if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at <= version:
                    raise VersionNotFound(f"session {sid!r} has versions 0 to {version}, "
                                          f"not {at!r}")
                return self._replay(txn, sid, cat, at,
                                    {**_stored_options(cat), **session_options}, progress,
                                    cat.get("token"))
            s = Session(sid, **{**_stored_options(cat), **session_options})
            n_nodes, n_edges = int(cat["next_node"]) - 1, int(cat["next_edge"]) - 1
            total = n_nodes + n_edges
            with gc_paused():
                nodes = self._dense(txn, sid, n_nodes,
                                    progress and (lambda d: progress(d, total)))
                edges = _edge_columns(txn, sid, n_nodes, n_edges,
                                      progress and (lambda d: progress(n_nodes + d, total)))
                postings = _stored_postings(txn, sid, cat)
                try:
                    s.store.load(nodes, *edges, postings, kinds=dict(cat.get("kinds") or {}),
                                 live_bytes=int(cat["bytes"]), decode_props=decode_props,
                                 damaged=CabinetCorrupt)
                    _apply_deltas(s.store.index, _stored_deltas(txn, sid, cat))
                    if s.tokenizer != cat.get("tokenizer"):
                        # the stored line counts are another tokenizer's
                        s.store.ltok = array("H", bytes(2 * len(s.store.ltok)))
                except (TypeError, ValueError, AttributeError) as e:
                    raise CabinetCorrupt(f"session {sid!r} holds a malformed record: {e}"
                                         ) from None
        st = s.store
        if (st.live_nodes, st.live_edges) != (cat["nodes"], cat["edges"]):
            raise CabinetCorrupt(f"session {sid!r}: the stored index or edges disagree with "
                                 "the catalog's counts")
        top = n_edges << 1 | 1
        # iterating the list gives the entries as held: the stored bytes here
        if max(le_array(b"".join(st.adj)), default=0) > top:
            raise CabinetCorrupt(f"session {sid!r}: a node lists an edge that is not stored")
        s.version = version
        self._bind(s, version, cat.get("token"))
        if total >= RELEASE_AFTER:
            self.kv.release_pages()
            # the store's columns are lists of a million entries each, made
            # while the collector was off: left in the young generations,
            # the next collections would walk every entry (a pause of 0.1 s
            # to 1 s on an early Recall); frozen, collections skip them
            gc.freeze()
        return s

    @staticmethod
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

    def _replay(self, txn: Txn, sid: str, cat: dict[str, Any], at: int, opts: dict[str, Any],
                progress: Callable[[int, int], None] | None = None,
                token: str | None = None) -> Session:
        s = Session(sid, **opts)
        for ver, _t, _summary, changes in _log_of(txn, sid, cat, at):
            replay(s.store, changes)
            s.version = ver
            if progress is not None:
                progress(ver, at)
        # a past version is for reading: it is not bound, so it cannot be flushed
        s.archive = _Archive(self, sid, token, s.tokenizer)
        return s

    open = _ClassOrInstance(open_cabinet, hydrate)

    def log(self, sid: str, *, since: int = 0) -> list[LogEntry]:
        """The commits of a session, oldest first: version, time, what changed."""
        check_session_id(sid)
        out = []
        with self.kv.read() as txn:
            cat = self._catalog(txn, sid)
            if cat is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for ver, t, summary, changes in _log_of(txn, sid, cat):
                if ver <= since:
                    continue
                changed = tuple(node_handle(c.id) if c.op[0] == "N" else edge_handle(c.id)
                                for c in changes)
                out.append(LogEntry(ver, t, summary.get("created", 0), summary.get("updated", 0),
                                    summary.get("recycled", 0), changed))
        return out

    # -- flush ----------------------------------------------------------------------
    def flush(self, session: Session) -> int:
        """Write what changed since the last flush; returns the stored version.

        Compare-and-swap: if the stored version is not the one ``session`` was
        loaded (or last flushed) at, raises ``conflict`` and writes nothing.

        Each attempt leaves a random mark in the catalog row. When an attempt
        fails in a way that leaves its outcome unknown (a server connection
        lost during the commit), the session keeps the mark; the next flush
        that finds it stored knows the attempt landed and goes on from there
        instead of reporting a conflict with itself.
        """
        s = session
        sid = check_session_id(s.name)
        if s.base_version is None:
            raise ConflictError(
                f"session {sid!r} was not opened from this cabinet; use Cabinet.create() or "
                "Cabinet.open() and commit to the session it returns",
                stored=None, expected=None)
        with s._lock:
            if not s.pending:
                return s.version
            dirty_nodes, dirty_edges = s.store.take_changes()
            nodes = sorted(dirty_nodes)
            term_nodes = sorted(s.store.dirty_terms or ())
            edges = sorted(dirty_edges)
            pending = list(s.pending)
            base = s.base_version
            token = s.base_token
            unsure = dict(s.unsure_flushes)
            mark = uuid.uuid4().hex
            st = s.store
            stats = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                     "bytes": st.live_bytes, "kinds": _kinds(st), "next_node": st.next_node,
                     "next_edge": st.next_edge, "updated": time.time(), **_options(s)}
            with gc_paused():
                node_recs = [_node_record(s, sid, n) for n in nodes]
                edge_recs = _edge_chunks(s, sid, {e // R.EDGE_CHUNK for e in edges})
                log_recs = [_log_record(sid, r) for r in pending]
                # a change to a large share of the nodes (the first flush of a
                # session built in memory) rewrites the postings from the index
                # the session holds, as adopt does, instead of diffing node by node
                posting_recs = _posting_records(sid, st.index) \
                    if _rewrite_postings(len(term_nodes), st.next_node - 1) else None

            def work(txn: Txn) -> None:
                cat = self._catalog(txn, sid)
                if cat is None:
                    raise SessionNotFound(f"no session {sid!r} in this cabinet (dropped?)")
                if cat.get("token") != token:
                    raise ConflictError(
                        f"session {sid!r} was dropped and created again since this copy was "
                        "loaded; open it again and redo the commit",
                        stored=cat["version"], expected=base)
                landed = unsure.get(cat.get("flush", "")) == cat["version"]
                if cat["version"] != base and not landed:
                    raise ConflictError(
                        f"session {sid!r} is at version {cat['version']} in the cabinet but this "
                        f"copy was loaded at version {base}; open it again and redo the commit",
                        stored=cat["version"], expected=base)
                if posting_recs is not None:
                    txn.delete_prefix(R.POSTINGS, R.prefix(sid))
                    writes: list[tuple[bytes, bytes | None]] = list(posting_recs)
                    counts = {"pdelta": 0, "precs": len(posting_recs)}
                else:
                    writes, counts = _posting_writes(txn, sid, s, term_nodes, cat, s.version)
                for k, pv in writes:
                    if pv is None:
                        txn.delete(R.POSTINGS, k)
                    else:
                        txn.put(R.POSTINGS, k, pv)
                for k, v in node_recs:
                    txn.put(R.NODES, k, v)
                for k, v in edge_recs:
                    txn.put(R.EDGES, k, v)
                for k, v in log_recs:
                    txn.put(R.LOG, k, v)
                key = R.sid_key(sid)
                txn.put(R.CATALOG, key,
                        R.encode(dict(cat, **stats, **counts, flush=mark), key))

            try:
                self.kv.run_write(work)
            except BaseException:
                s.unsure_flushes[mark] = s.version
                raise
            st.clear_changes(set(nodes), set(edges))
            s.base_version = s.version
            s.pending = []
            s.unsure_flushes = {}
            return s.version

    # -- maintenance ------------------------------------------------------------------
    def backup(self, dest: str | os.PathLike[str]) -> None:
        """Write a consistent, compacted copy of the whole cabinet to ``dest``."""
        self.kv.backup(os.fspath(dest))

    def verify(self) -> dict[str, int]:
        """Read every record, check checksums and cross-references.

        Returns counts; raises :class:`~memnet.errors.CabinetCorrupt` on the
        first problem found.
        """
        counts = {"sessions": 0, "nodes": 0, "edges": 0, "log": 0}
        problems = self.kv.check_file()
        if problems:
            raise CabinetCorrupt(f"the storage file is damaged: {problems[0]}"
                                 + (f" (and {len(problems) - 1} more)"
                                    if len(problems) > 1 else ""),
                                 problems=problems[:20])
        with self.kv.read() as txn:
            header = _read_header(txn)
            if header is None:
                raise CabinetCorrupt("the cabinet has no header")
            _check_count(header, txn.count(R.CATALOG))
            for k, v in txn.scan(R.CATALOG):
                sid = _sid_of(k)
                cat = _catalog_row(v, k)
                counts["sessions"] += 1
                pre = R.prefix(sid)
                n_nodes = live_nodes = 0
                n_edges_cat = int(cat["next_edge"]) - 1
                want: dict[bytes, list[int]] = {}
                for i, (nk, nv) in enumerate(txn.scan(R.NODES, pre), 1):
                    rec = _node_from(nv, nk)
                    if R.key_id(nk) != i:
                        raise CabinetCorrupt(f"{sid}: node record {i} is out of place")
                    adj = array("I")
                    adj.frombytes(rec[6])
                    if adj and max(adj) >> 1 > n_edges_cat:
                        raise CabinetCorrupt(f"{sid}: node {i} lists an edge that is not stored")
                    n_nodes = i
                    live_nodes += 0 if rec[4] else 1
                    if rec[2]:
                        decode_props(rec[2])  # every stored map must decode
                    for term in _node_terms(rec):
                        want.setdefault(term, []).append(i)
                _types, _src, _dst, flags, _props = _edge_columns(txn, sid, n_nodes,
                                                                   n_edges_cat)
                n_edges = len(flags)
                live_edges = n_edges - flags.count(1)
                stored = Index()
                stored.load(_stored_postings(txn, sid, cat), n_nodes, CabinetCorrupt)
                _apply_deltas(stored, _stored_deltas(txn, sid, cat))
                have = {t: sorted(p) for t, p in stored.postings()}
                if have != want:
                    bad = sorted(set(have) ^ set(want))[:1] or sorted(
                        t for t in have if have[t] != want[t])[:1]
                    raise CabinetCorrupt(f"{sid}: the stored index disagrees with the nodes "
                                         f"(first at term {bad[0]!r})")
                kinds = {}
                for t, ids in want.items():
                    if t[:1] == b"k":
                        kinds[t[1:].decode()] = len(ids)
                if kinds != dict(cat.get("kinds") or {}):
                    raise CabinetCorrupt(f"{sid}: catalog kind counts disagree with the records")
                for _entry in _log_of(txn, sid, cat):
                    counts["log"] += 1
                if (live_nodes, live_edges) != (cat["nodes"], cat["edges"]):
                    raise CabinetCorrupt(f"{sid}: catalog counts disagree with the records")
                if (n_nodes + 1, n_edges + 1) != (cat["next_node"], cat["next_edge"]):
                    raise CabinetCorrupt(f"{sid}: catalog ids disagree with the records")
                counts["nodes"] += n_nodes
                counts["edges"] += n_edges
        return counts

    def info(self) -> dict[str, Any]:
        return self.kv.info()

    def __iter__(self) -> Iterator[SessionInfo]:
        return iter(self.sessions())


__all__ = ["Cabinet", "LogEntry", "SessionInfo"]
