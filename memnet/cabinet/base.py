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
import time
import uuid
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgpack

from .._version import __version__
from ..commit import Caps, Change, CommitRecord, replay
from ..errors import (
    CabinetCorrupt,
    CabinetError,
    CabinetFormat,
    ConflictError,
    MemNetError,
    SessionExists,
    SessionNotFound,
    VersionNotFound,
)
from ..graph.index import Index, le_array, le_bytes
from ..graph.words import stemmer_id
from ..graph.store import _decode_props, edge_handle, node_handle
from ..ids import check_session_id
from ..session import Session
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


def _props_bytes(props: Any) -> bytes | None:
    if props is None or props.__class__ is bytes:
        return props  # type: ignore[no-any-return]
    return msgpack.packb(props, use_bin_type=True)


def _node_record(s: Session, nid: int) -> bytes:
    # props ride as msgpack bytes inside the record: a hydrate keeps them so
    # until they are read, and a node never read is written back unchanged
    st = s.store
    return R.encode((st.kind[nid], st.labels[nid], _props_bytes(st.props.raw(nid)),
                     st.nick.get(nid), bool(st.nrec[nid]), st.key[nid], st.adj[nid].tobytes(),
                     st.ltok[nid]))


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
        out.append((R.element_key(sid, c),
                    R.encode_edge_chunk(lo, st.etype[lo:hi], st.esrc[lo:hi], st.edst[lo:hi],
                                        st.erec[lo:hi], props)))
    return out


def _posting_records(sid: str, index: Index) -> list[tuple[bytes, bytes]]:
    """Every posting of an index as bucket records (for a whole-session write)."""
    step = R.POSTING_RANGE
    buckets: dict[tuple[int, int], dict[bytes, bytes]] = {}
    big: list[tuple[bytes, bytes]] = []
    for term, p in index.postings():
        ids = sorted(p)
        b = R.bucket_of(term)
        i = 0
        while i < len(ids):
            rng = ids[i] // step
            j = bisect.bisect_left(ids, (rng + 1) * step, i)
            if j - i > R.POSTING_BIG:
                big.append((R.big_key(sid, rng, term),
                            R.encode_ids(le_bytes(array("I", ids[i:j])))))
            else:
                buckets.setdefault((rng, b), {})[term] = le_bytes(array("I", ids[i:j]))
            i = j
    return [(R.bucket_key(sid, rng, b), R.encode(m))
            for (rng, b), m in sorted(buckets.items())] + big


def _kinds(st: Any) -> dict[str, int]:
    """Live nodes per kind, for the catalog (a hydrate takes them from there)."""
    return {k: c for k, c in sorted(st.kind_live.items()) if c}


def _node_terms(rec: tuple[Any, ...] | None) -> set[bytes]:
    if rec is None or rec[4]:
        return set()
    return Index.terms(rec[0], rec[1], _decode_props(rec[2]) if rec[2] else None)


def _term_diff(txn: Txn, sid: str, s: Session,
               nodes: list[int]) -> dict[bytes, tuple[set[int], set[int]]]:
    """``term -> (ids added, ids removed)`` for the changed nodes: each node's
    stored record gives the terms it had, the store the terms it has."""
    st = s.store
    diff: dict[bytes, tuple[set[int], set[int]]] = {}
    for nid in nodes:
        key = R.element_key(sid, nid)
        raw = txn.get(R.NODES, key)
        old = _node_terms(None if raw is None else _node_from(raw, key))
        new = set() if st.nrec[nid] else Index.terms(st.kind[nid], st.labels[nid],
                                                     st.props[nid])
        for term in old ^ new:
            entry = diff.setdefault(term, (set(), set()))
            (entry[0] if term in new else entry[1]).add(nid)
    return diff


def _delta_record(diff: dict[bytes, tuple[set[int], set[int]]]) -> bytes:
    return R.encode({"a": {t: le_bytes(array("I", sorted(a)))
                           for t, (a, _r) in sorted(diff.items()) if a},
                     "r": {t: le_bytes(array("I", sorted(r)))
                           for t, (_a, r) in sorted(diff.items()) if r}})


def _decode_delta(raw: bytes, key: bytes) -> tuple[dict[bytes, bytes], dict[bytes, bytes]]:
    d = R.decode(raw, key)
    if not (type(d) is dict and set(d) == {"a", "r"}):
        raise CabinetCorrupt(f"posting delta {key!r} is malformed")
    for m in (d["a"], d["r"]):
        if type(m) is not dict or any(type(k) is not bytes or type(v) is not bytes
                                      or not v or len(v) & 3 for k, v in m.items()):
            raise CabinetCorrupt(f"posting delta {key!r} is malformed")
    return d["a"], d["r"]


def _stored_deltas(txn: Txn, sid: str) -> list[tuple[bytes, dict[bytes, bytes],
                                                     dict[bytes, bytes]]]:
    """The pending posting deltas of a session, oldest first: (key, added, removed)."""
    out = []
    for k, v in txn.scan(R.POSTINGS, R.delta_prefix(sid)):
        out.append((k, *_decode_delta(v, k)))
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
    for (rng, b), terms in sorted(by_bucket.items()):
        key = R.bucket_key(sid, rng, b)
        raw = txn.get(R.POSTINGS, key)
        m = R.decode_bucket(raw, key) if raw is not None else {}
        before = dict(m)
        for term, ops in sorted(terms.items()):
            bkey = R.big_key(sid, rng, term)
            braw = txn.get(R.POSTINGS, bkey)
            if braw is not None:
                ids = set(le_array(R.decode_ids(braw, bkey)))
            else:
                ids = set(le_array(m[term])) if term in m else set()
            ids.difference_update(n for n, present in ops.items() if not present)
            ids.update(n for n, present in ops.items() if present)
            data = le_bytes(array("I", sorted(ids))) if ids else b""
            if braw is not None or len(ids) > R.POSTING_BIG:  # a posting of its own
                m.pop(term, None)
                out.append((bkey, R.encode_ids(data) if data else None))
            elif data:
                m[term] = data
            else:
                m.pop(term, None)
        if m != before:
            out.append((key, R.encode(m) if m else None))
    return out


def _posting_writes(txn: Txn, sid: str, s: Session, nodes: list[int], pending: int,
                    version: int) -> tuple[list[tuple[bytes, bytes | None]], int]:
    """The posting records a flush writes, and the pending delta count after.

    A flush does not edit the postings in place: it appends one *delta*
    record (the ids each term gained and lost), a single small write. When
    the pending deltas pass ``R.POSTING_PENDING`` ids, this flush folds them
    all (and its own) into the stored postings and deletes them, so the
    work of folding is spread over the flushes that made it."""
    diff = _term_diff(txn, sid, s, nodes)
    if not diff:
        return [], pending
    n = sum(len(a) + len(r) for a, r in diff.values())
    if pending + n <= R.POSTING_PENDING:
        return [(R.delta_key(sid, version), _delta_record(diff))], pending + n
    changes: dict[bytes, dict[int, bool]] = {}
    out: list[tuple[bytes, bytes | None]] = []
    stored = _stored_deltas(txn, sid)
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
    return _merge_postings(txn, sid, changes) + out, 0


def _open_kv(path: str | os.PathLike[str] | None, backend: str, max_size: int | None,
             sync: bool) -> KV:
    if backend == "memory":
        return MemoryKV(R.TABLES)
    if backend != "lmdb":
        raise ValueError(f"unknown cabinet backend {backend!r} (lmdb, memory)")
    from .kv_lmdb import DEFAULT_MAX_SIZE, LmdbKV

    where = os.fspath(path) if path is not None else os.environ.get("MEMNET_HOME", ".memnet")
    if max_size is None:
        env = os.environ.get("MEMNET_MAX_SIZE")
        max_size = int(env) if env else DEFAULT_MAX_SIZE
    return LmdbKV.acquire(where, R.TABLES, max_size=max_size, sync=sync)


def _reindex(txn: Txn, sid: str) -> int:
    """Rebuild one session's stored index from its node records (an upgrade):
    every posting and pending delta is replaced. Returns the nodes read."""
    index = Index()
    n = 0
    for k, v in txn.scan(R.NODES, R.prefix(sid)):
        n += 1
        for term in _node_terms(_node_from(v, k)):
            index.add_id(term, R.key_id(k))
    for k in [k for k, _v in txn.scan(R.POSTINGS, R.prefix(sid))]:
        txn.delete(R.POSTINGS, k)
    for k, v in _posting_records(sid, index):
        txn.put(R.POSTINGS, k, v)
    cat = Cabinet._catalog(txn, sid)
    if cat is not None:
        txn.put(R.CATALOG, R.sid_key(sid), R.encode(dict(cat, pdelta=0)))
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


def _log_record(rec: CommitRecord) -> bytes:
    return R.encode({"t": rec.time, "s": rec.summary,
                     "c": [(c.op, c.id, c.state) for c in rec.changes]})


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


def _decode_nodes(values: Iterator[bytes], sid: str,
                  progress: Callable[[int], None] | None = None) -> list[tuple[Any, ...]]:
    """:func:`_node_from` over many records with the checksum and unpacking
    inlined (the hot loop of a hydrate)."""
    crc32, unpackb, crc_of = zlib.crc32, msgpack.unpackb, R.CRC.unpack_from
    out: list[tuple[Any, ...]] = []
    append = out.append
    for i, raw in enumerate(values, 1):
        payload = memoryview(raw)[4:]
        if len(raw) < 5 or crc32(payload) != crc_of(raw)[0]:
            raise CabinetCorrupt(f"node record {i} of {sid!r} failed its checksum")
        try:
            rec = unpackb(payload, use_list=False)
        except Exception:
            raise CabinetCorrupt(f"node record {i} of {sid!r} does not decode") from None
        if not _is_node(rec):
            raise CabinetCorrupt(f"record {i} of {sid!r} is not a node record")
        append(rec)
        if progress is not None and not i % 65536:
            progress(i)
    if progress is not None:
        progress(len(out))
    return out


def _edge_columns(txn: Txn, sid: str, n_nodes: int, n_edges: int,
                  progress: Callable[[int], None] | None = None,
                  ) -> tuple[list[str], array, array, bytearray, dict[int, Any]]:
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


def _stored_postings(txn: Txn, sid: str) -> Iterator[dict[bytes, bytes]]:
    """The posting maps of a session (buckets, and one-term maps for postings
    with records of their own), in range order."""
    pre = R.prefix(sid)
    plen = len(pre)
    dpre = R.delta_prefix(sid)
    for k, v in txn.scan(R.POSTINGS, pre):
        if k.startswith(dpre):
            break  # the deltas sort last; _apply_deltas reads them
        _rng, _b, term = R.split_bucket_key(k, plen)
        yield R.decode_bucket(v, k, deep=False) if term is None else {term: R.decode_ids(v, k)}


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
    """Named sessions in one store (LMDB by default, or in memory).

    Open with :meth:`Cabinet.open`. A cabinet object belongs to the process
    that opened it; sessions it returns are plain :class:`~memnet.Session`
    objects that remember the version they were loaded at.
    """

    def __init__(self, kv: KV) -> None:
        self._kv: KV | None = kv
        self._check_format()

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

        ``path`` defaults to ``$MEMNET_HOME``, else ``./.memnet``. ``backend``
        is ``"lmdb"`` (a directory) or ``"memory"`` (nothing persisted, for tests).
        ``max_size`` caps the LMDB map (default ``$MEMNET_MAX_SIZE`` or 64 GiB).
        """
        return cls(_open_kv(path, backend, max_size, sync))

    def _header(self) -> dict[str, Any] | None:
        with self.kv.read() as txn:
            raw = txn.get(R.META, b"format")
        return None if raw is None else R.decode(raw, b"format")

    def _write_header(self) -> None:
        header = {"format": R.FORMAT_VERSION, "backend": self.kv.name,
                  "engine": self.kv.info().get("lmdb"), "words": stemmer_id(),
                  "memnet": __version__, "created": time.time()}
        old = self._header()
        if old is not None:
            header["created"] = old.get("created", header["created"])
        self.kv.run_write(lambda t: t.put(R.META, b"format", R.encode(header)))

    def _check_format(self) -> None:
        engine = self.kv.info().get("lmdb")
        header = self._header()
        if header is None:
            self._write_header()
            return
        fmt = header.get("format")
        if fmt != R.FORMAT_VERSION:
            msg = (f"cabinet format {fmt!r} is not supported (this MemNet reads format "
                   f"{R.FORMAT_VERSION})")
            if fmt in R.UPGRADABLE:
                msg += ("; run `memnet cabinet upgrade` (Cabinet.upgrade) to rebuild its word "
                        "index, nothing else changes")
            raise CabinetFormat(msg)
        stored = header.get("engine")
        if stored and engine and stored.split(".")[:2] != engine.split(".")[:2]:
            raise CabinetFormat(f"cabinet written by LMDB {stored}, this process has LMDB {engine}")
        words = header.get("words")
        if words != stemmer_id():
            raise CabinetFormat(f"the cabinet's word index was built with {words}, this "
                                f"process stems with {stemmer_id()}: run `memnet cabinet upgrade`"
                                " (Cabinet.upgrade) to rebuild it")

    @classmethod
    def upgrade(cls, path: str | os.PathLike[str] | None = None, *, backend: str = "lmdb",
                max_size: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Rebuild the word index of every session so that a cabinet of an older
        format (3), or one indexed with another stemmer, reads right; returns
        ``{"sessions": n, "nodes": m}``. Nodes, edges and logs are untouched.

        Each session is rebuilt in one transaction and the header is written
        last, so an upgrade that stops half way is simply run again. A cabinet
        that needs no upgrade is left as it is.
        """
        cab = cls.__new__(cls)
        cab._kv = _open_kv(path, backend, max_size, True)
        try:
            header = cab._header()
            if header is None or (header.get("format") == R.FORMAT_VERSION
                                  and header.get("words") == stemmer_id()):
                if header is None:
                    cab._write_header()
                return {"sessions": 0, "nodes": 0}
            fmt = header.get("format")
            if fmt != R.FORMAT_VERSION and fmt not in R.UPGRADABLE:
                raise CabinetFormat(f"cabinet format {fmt!r} cannot be upgraded in place")
            with cab.kv.read() as txn:
                sids = [k.decode("ascii") for k, _v in txn.scan(R.CATALOG)]
            counts = {"sessions": 0, "nodes": 0}
            for i, sid in enumerate(sids):
                counts["nodes"] += cab.kv.run_write(lambda t, sid=sid: _reindex(t, sid))
                counts["sessions"] += 1
                if progress is not None:
                    progress(i + 1, len(sids))
            cab._write_header()
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
        raw = txn.get(R.CATALOG, R.sid_key(sid))
        if raw is None:
            return None
        cat = R.decode(raw, sid)
        if not isinstance(cat, dict) or not isinstance(cat.get("version"), int):
            raise CabinetCorrupt(f"catalog record of {sid!r} is malformed")
        return dict(cat)

    def exists(self, sid: str) -> bool:
        check_session_id(sid)
        with self.kv.read() as txn:
            return self._catalog(txn, sid) is not None

    @staticmethod
    def _info(sid: str, c: dict[str, Any]) -> SessionInfo:
        return SessionInfo(sid, c["version"], c["nodes"] + c["edges"], c["bytes"], c["nodes"],
                           c["edges"], c["created"], c["updated"])

    def sessions(self) -> list[SessionInfo]:
        """The catalog: every session with its version and size, by id."""
        with self.kv.read() as txn:
            return [self._info(k.decode("ascii"), R.decode(v, k))
                    for k, v in txn.scan(R.CATALOG)]

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
            txn.put(R.CATALOG, R.sid_key(sid), R.encode(
                {"version": 0, "nodes": 0, "edges": 0, "bytes": 0, "next_node": 1,
                 "next_edge": 1, "created": now, "updated": now, "token": token,
                 **_options(s)}))

        s = Session(sid, **session_options)
        token = uuid.uuid4().hex
        self.kv.run_write(work)
        self._bind(s, 0, token)
        return s

    def adopt(self, session: Session) -> int:
        """Persist a session that was built in memory (not opened from here) as a
        new session of this cabinet, in one transaction; returns its version.

        The cabinet's history of it starts here: versions before the current
        one were never stored, so they cannot be read back with ``at=``.
        """
        s = session
        sid = check_session_id(s.name)
        if s.base_version is not None:
            raise SessionExists(f"session {sid!r} already belongs to a cabinet; use flush()")
        with s._lock:
            st = s.store
            now = time.time()
            node_recs = [(R.element_key(sid, n), _node_record(s, n))
                         for n in range(1, st.next_node)]
            edge_recs = _edge_chunks(s, sid, range(st.next_edge // R.EDGE_CHUNK + 1))
            posting_recs = _posting_records(sid, st.index)
            token = uuid.uuid4().hex
            cat = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                   "bytes": st.live_bytes, "kinds": _kinds(st), "next_node": st.next_node,
                   "next_edge": st.next_edge,
                   "created": now, "updated": now, "log_from": s.version + 1, "token": token,
                   **_options(s)}

            def work(txn: Txn) -> None:
                if self._catalog(txn, sid) is not None:
                    raise SessionExists(f"session {sid!r} already exists in this cabinet")
                for k, v in node_recs:
                    txn.put(R.NODES, k, v)
                for k, v in edge_recs:
                    txn.put(R.EDGES, k, v)
                for k, v in posting_recs:
                    txn.put(R.POSTINGS, k, v)
                txn.put(R.CATALOG, R.sid_key(sid), R.encode(cat))

            self.kv.run_write(work)
            self._bind(s, s.version, token)
            return s.version

    def _bind(self, s: Session, version: int, token: str | None) -> None:
        s.base_version = version
        s.base_token = token
        s.pending = []
        s.store.track_changes()
        s.archive = _Archive(self, s.name, token, s.tokenizer)

    def drop(self, sid: str) -> None:
        """Delete a session and all of its records, in one transaction."""
        check_session_id(sid)
        pre = R.prefix(sid)

        def work(txn: Txn) -> None:
            if self._catalog(txn, sid) is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for table in (R.NODES, R.EDGES, R.LOG, R.POSTINGS):
                for k in [k for k, _ in txn.scan(table, pre)]:
                    txn.delete(table, k)
            txn.delete(R.CATALOG, R.sid_key(sid))

        self.kv.run_write(work)

    # -- hydrate ------------------------------------------------------------------
    def hydrate(self, sid: str, *, at: int | None = None,
                progress: Callable[[int, int], None] | None = None,
                **session_options: Any) -> Session:
        """Hydrate a session; ``at=version`` reads a past version back.

        ``progress(done, total)`` is called now and then with the records read
        so far (nodes and edges, or log records for a past version)."""
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
                return self._replay(txn, sid, at, {**_stored_options(cat), **session_options},
                                    progress, cat.get("token"))
            s = Session(sid, **{**_stored_options(cat), **session_options})
            n_nodes, n_edges = int(cat["next_node"]) - 1, int(cat["next_edge"]) - 1
            total = n_nodes + n_edges
            # millions of small containers are made here and none is garbage:
            # the cyclic collector would only rescan them, again and again
            gc_was = gc.isenabled()
            gc.disable()
            try:
                nodes = self._dense(txn, sid, n_nodes,
                                    progress and (lambda d: progress(d, total)))
                edges = _edge_columns(txn, sid, n_nodes, n_edges,
                                      progress and (lambda d: progress(n_nodes + d, total)))
                postings = _stored_postings(txn, sid)
                try:
                    s.store.load(nodes, *edges, postings, kinds=dict(cat.get("kinds") or {}),
                                 live_bytes=int(cat["bytes"]))
                    _apply_deltas(s.store.index, _stored_deltas(txn, sid))
                    if s.tokenizer != cat.get("tokenizer"):
                        # the stored line counts are another tokenizer's
                        s.store.ltok = array("H", bytes(2 * len(s.store.ltok)))
                except (TypeError, ValueError, AttributeError) as e:
                    raise CabinetCorrupt(f"session {sid!r} holds a malformed record: {e}"
                                         ) from None
            finally:
                if gc_was:
                    gc.enable()
        st = s.store
        if (st.live_nodes, st.live_edges) != (cat["nodes"], cat["edges"]):
            raise CabinetCorrupt(f"session {sid!r}: the stored index or edges disagree with "
                                 "the catalog's counts")
        top = n_edges << 1 | 1
        if max(map(max, filter(None, st.adj)), default=0) > top:
            raise CabinetCorrupt(f"session {sid!r}: a node lists an edge that is not stored")
        s.version = version
        self._bind(s, version, cat.get("token"))
        return s

    @staticmethod
    def _dense(txn: Txn, sid: str, count: int,
               progress: Callable[[int], None] | None = None) -> list[Any]:
        """Decode the node records 1..count of ``sid``, checking that the ids
        are dense (the first and last keys are where they must be)."""
        if count == 0:
            return []
        if txn.get(R.NODES, R.element_key(sid, 1)) is None or \
                txn.get(R.NODES, R.element_key(sid, count)) is None or \
                txn.get(R.NODES, R.element_key(sid, count + 1)) is not None:
            raise CabinetCorrupt(f"session {sid!r}: node records disagree with the catalog")
        out = _decode_nodes(txn.values(R.NODES, R.prefix(sid), count), sid, progress)
        if len(out) != count:
            raise CabinetCorrupt(f"session {sid!r}: node records are missing")
        return out

    def _replay(self, txn: Txn, sid: str, at: int, opts: dict[str, Any],
                progress: Callable[[int, int], None] | None = None,
                token: str | None = None) -> Session:
        s = Session(sid, **opts)
        pre = R.prefix(sid)
        for k, v in txn.scan(R.LOG, pre):
            ver = R.key_id(k)
            if ver > at:
                break
            t, summary, changes = _decode_log(v, k)
            replay(s.store, changes)
            s.version = ver
            if progress is not None:
                progress(ver, at)
        if s.version != at:
            raise VersionNotFound(f"session {sid!r}: the log does not reach version {at}")
        # a past version is for reading: it is not bound, so it cannot be flushed
        s.archive = _Archive(self, sid, token, s.tokenizer)
        return s

    open = _ClassOrInstance(open_cabinet, hydrate)

    def log(self, sid: str, *, since: int = 0) -> list[LogEntry]:
        """The commits of a session, oldest first: version, time, what changed."""
        check_session_id(sid)
        out = []
        with self.kv.read() as txn:
            if self._catalog(txn, sid) is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for k, v in txn.scan(R.LOG, R.prefix(sid)):
                ver = R.key_id(k)
                if ver <= since:
                    continue
                t, summary, changes = _decode_log(v, k)
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
            st = s.store
            stats = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                     "bytes": st.live_bytes, "kinds": _kinds(st), "next_node": st.next_node,
                     "next_edge": st.next_edge, "updated": time.time(), **_options(s)}
            node_recs = [(R.element_key(sid, n), _node_record(s, n)) for n in nodes]
            edge_recs = _edge_chunks(s, sid, {e // R.EDGE_CHUNK for e in edges})
            log_recs = [(R.element_key(sid, r.version), _log_record(r)) for r in pending]

            def work(txn: Txn) -> None:
                cat = self._catalog(txn, sid)
                if cat is None:
                    raise SessionNotFound(f"no session {sid!r} in this cabinet (dropped?)")
                if cat.get("token") != token:
                    raise ConflictError(
                        f"session {sid!r} was dropped and created again since this copy was "
                        "loaded; open it again and redo the commit",
                        stored=cat["version"], expected=base)
                if cat["version"] != base:
                    raise ConflictError(
                        f"session {sid!r} is at version {cat['version']} in the cabinet but this "
                        f"copy was loaded at version {base}; open it again and redo the commit",
                        stored=cat["version"], expected=base)
                writes, pdelta = _posting_writes(txn, sid, s, term_nodes,
                                                 int(cat.get("pdelta", 0)), s.version)
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
                txn.put(R.CATALOG, R.sid_key(sid), R.encode(dict(cat, **stats, pdelta=pdelta)))

            self.kv.run_write(work)
            st.clear_changes(set(nodes), set(edges))
            s.base_version = s.version
            s.pending = []
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
                                 + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                                 problems=problems[:20])
        with self.kv.read() as txn:
            for k, v in txn.scan(R.CATALOG):
                sid = k.decode("ascii", "replace")
                try:
                    check_session_id(sid)
                except MemNetError:
                    raise CabinetCorrupt(f"the catalog holds a bad session id {sid!r}") from None
                cat = R.decode(v, k)
                if not isinstance(cat, dict) or not {"version", "nodes", "edges", "next_node",
                                                     "next_edge"} <= cat.keys():
                    raise CabinetCorrupt(f"catalog record of {sid!r} is malformed")
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
                        _decode_props(rec[2])  # every stored map must decode
                    for term in _node_terms(rec):
                        want.setdefault(term, []).append(i)
                _types, _src, _dst, flags, _props = _edge_columns(txn, sid, n_nodes,
                                                                   n_edges_cat)
                n_edges = len(flags)
                live_edges = n_edges - flags.count(1)
                stored = Index()
                stored.load(_stored_postings(txn, sid), n_nodes)
                deltas = _stored_deltas(txn, sid)
                _apply_deltas(stored, deltas)
                if sum(len(v) // 4 for _k, a, r in deltas for m in (a, r)
                       for v in m.values()) != int(cat.get("pdelta", 0)):
                    raise CabinetCorrupt(f"{sid}: the pending index deltas disagree with the "
                                         "catalog")
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
                last = int(cat.get("log_from", 1)) - 1
                for lk, lv in txn.scan(R.LOG, pre):
                    ver = R.key_id(lk)
                    _decode_log(lv, lk)
                    if ver != last + 1:
                        raise CabinetCorrupt(f"{sid}: log jumps from version {last} to {ver}")
                    last = ver
                    counts["log"] += 1
                if last != cat["version"]:
                    raise CabinetCorrupt(f"{sid}: catalog says version {cat['version']}, "
                                         f"log ends at {last}")
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
