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
edges      ``sid 0x00 id``             type, src, dst, props, recycled
log        ``sid 0x00 version``        time, summary, changed elements
=========  ==========================  ======================================

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

import os
import time
import uuid
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

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
from ..graph.store import edge_handle, node_handle
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


def _node_record(s: Session, nid: int) -> bytes:
    st = s.store
    return R.encode((st.kind[nid], st.labels[nid], st.props[nid], st.nick.get(nid),
                     bool(st.nrec[nid]), st.key[nid], st.adj[nid].tobytes()))


def _edge_record(s: Session, eid: int) -> bytes:
    st = s.store
    return R.encode_edge(st.etype[eid], st.esrc[eid], st.edst[eid], st.eprops.get(eid),
                         bool(st.erec[eid]))


def _options(s: Session) -> dict[str, Any]:
    """The session settings a cabinet keeps with it (the rate cap R and the
    settle policy), so a hydrated session behaves like the one flushed."""
    return {"cap_rows": s.caps.rows, "cap_bytes": s.caps.bytes,
            "delete_on_settle": s.delete_on_settle}


def _stored_options(cat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "cap_rows" in cat:
        out["caps"] = Caps(int(cat["cap_rows"]), int(cat["cap_bytes"]))
    if "delete_on_settle" in cat:
        out["delete_on_settle"] = bool(cat["delete_on_settle"])
    return out


def _log_record(rec: CommitRecord) -> bytes:
    return R.encode({"t": rec.time, "s": rec.summary,
                     "c": [(c.op, c.id, c.state) for c in rec.changes]})


def _node_from(raw: bytes, where: Any) -> tuple[Any, ...]:
    """Decode and shape-check one node record (a checksum proves the bytes are
    the ones written, not that they are a node)."""
    rec = R.decode(raw, where)
    if not (isinstance(rec, tuple) and len(rec) == 7 and isinstance(rec[0], str)
            and isinstance(rec[1], tuple) and all(isinstance(x, str) for x in rec[1])
            and (rec[2] is None or (isinstance(rec[2], dict)
                                    and all(isinstance(k, str) for k in rec[2])))
            and (rec[3] is None or isinstance(rec[3], str)) and isinstance(rec[4], bool)
            and isinstance(rec[5], str) and isinstance(rec[6], bytes) and len(rec[6]) % 4 == 0):
        raise CabinetCorrupt(f"record {where!r} is not a node record")
    return rec


def _edge_from(raw: bytes, where: Any, n_nodes: int,
               types: dict[bytes, str] | None = None) -> tuple[Any, ...]:
    rec = R.decode_edge(raw, where, types)
    if not (0 < rec[1] <= n_nodes and 0 < rec[2] <= n_nodes) or (
            rec[3] is not None and not isinstance(rec[3], dict)):
        raise CabinetCorrupt(f"edge record {where!r} is dangling or malformed")
    return rec


def _decode_log(raw: bytes, where: bytes) -> tuple[float, dict[str, int], list[Change]]:
    d = R.decode(raw, where)
    try:
        changes = [Change(op, int(i), tuple(state)) for op, i, state in d["c"]]
        return float(d["t"]), dict(d["s"]), changes
    except (KeyError, TypeError, ValueError) as e:
        raise CabinetCorrupt(f"log record {where!r} is malformed: {e}") from None


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
        if backend == "memory":
            return cls(MemoryKV(R.TABLES))
        if backend != "lmdb":
            raise ValueError(f"unknown cabinet backend {backend!r} (lmdb, memory)")
        from .kv_lmdb import DEFAULT_MAX_SIZE, LmdbKV

        where = os.fspath(path) if path is not None else os.environ.get("MEMNET_HOME", ".memnet")
        if max_size is None:
            env = os.environ.get("MEMNET_MAX_SIZE")
            max_size = int(env) if env else DEFAULT_MAX_SIZE
        return cls(LmdbKV.acquire(where, R.TABLES, max_size=max_size, sync=sync))

    def _check_format(self) -> None:
        engine = self.kv.info().get("lmdb")
        with self.kv.read() as txn:
            raw = txn.get(R.META, b"format")
        if raw is None:
            header = {"format": R.FORMAT_VERSION, "backend": self.kv.name, "engine": engine,
                      "memnet": __version__, "created": time.time()}
            self.kv.run_write(lambda t: t.put(R.META, b"format", R.encode(header)))
            return
        header = R.decode(raw, b"format")
        if header.get("format") != R.FORMAT_VERSION:
            raise CabinetFormat(f"cabinet format {header.get('format')!r} is not supported "
                                f"(this MemNet reads format {R.FORMAT_VERSION})")
        stored = header.get("engine")
        if stored and engine and stored.split(".")[:2] != engine.split(".")[:2]:
            raise CabinetFormat(f"cabinet written by LMDB {stored}, this process has LMDB {engine}")

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
            edge_recs = [(R.element_key(sid, e), _edge_record(s, e))
                         for e in range(1, st.next_edge)]
            token = uuid.uuid4().hex
            cat = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                   "bytes": st.live_bytes, "next_node": st.next_node, "next_edge": st.next_edge,
                   "created": now, "updated": now, "log_from": s.version + 1, "token": token,
                   **_options(s)}

            def work(txn: Txn) -> None:
                if self._catalog(txn, sid) is not None:
                    raise SessionExists(f"session {sid!r} already exists in this cabinet")
                for k, v in node_recs:
                    txn.put(R.NODES, k, v)
                for k, v in edge_recs:
                    txn.put(R.EDGES, k, v)
                txn.put(R.CATALOG, R.sid_key(sid), R.encode(cat))

            self.kv.run_write(work)
            self._bind(s, s.version, token)
            return s.version

    @staticmethod
    def _bind(s: Session, version: int, token: str | None) -> None:
        s.base_version = version
        s.base_token = token
        s.pending = []
        s.store.track_changes()

    def drop(self, sid: str) -> None:
        """Delete a session and all of its records, in one transaction."""
        check_session_id(sid)
        pre = R.prefix(sid)

        def work(txn: Txn) -> None:
            if self._catalog(txn, sid) is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for table in (R.NODES, R.EDGES, R.LOG):
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
                                    progress)
            s = Session(sid, **{**_stored_options(cat), **session_options})
            n_nodes, n_edges = int(cat["next_node"]) - 1, int(cat["next_edge"]) - 1
            total = n_nodes + n_edges
            nodes = self._dense(txn, R.NODES, sid, n_nodes, _node_from,
                                progress and (lambda d: progress(d, total)))
            types: dict[bytes, str] = {}
            edges = self._dense(txn, R.EDGES, sid, n_edges,
                                lambda raw, where: _edge_from(raw, where, n_nodes, types),
                                progress and (lambda d: progress(n_nodes + d, total)))
        try:
            s.store.load(nodes, edges)
        except (TypeError, ValueError, AttributeError) as e:
            raise CabinetCorrupt(f"session {sid!r} holds a malformed record: {e}") from None
        for nid, a in enumerate(s.store.adj):
            if a and max(a) >> 1 > n_edges:
                raise CabinetCorrupt(f"session {sid!r}: node {nid} lists an edge that is not "
                                     "stored")
        s.version = version
        self._bind(s, version, cat.get("token"))
        return s

    @staticmethod
    def _dense(txn: Txn, table: str, sid: str, count: int, dec: Any,
               progress: Callable[[int], None] | None = None) -> list[Any]:
        """Decode the records 1..count of ``sid`` in ``table``, checking that the
        ids are dense (the first and last keys are where they must be)."""
        if count == 0:
            return []
        if txn.get(table, R.element_key(sid, 1)) is None or \
                txn.get(table, R.element_key(sid, count)) is None or \
                txn.get(table, R.element_key(sid, count + 1)) is not None:
            raise CabinetCorrupt(f"session {sid!r}: {table} records disagree with the catalog")
        where = f"{sid}/{table}"
        if progress is None:
            out = [dec(v, where) for v in txn.values(table, R.prefix(sid), count)]
        else:
            out = []
            for i, v in enumerate(txn.values(table, R.prefix(sid), count), 1):
                out.append(dec(v, where))
                if not i % 65536:
                    progress(i)
            progress(len(out))
        if len(out) != count:
            raise CabinetCorrupt(f"session {sid!r}: {table} records are missing")
        return out

    def _replay(self, txn: Txn, sid: str, at: int, opts: dict[str, Any],
                progress: Callable[[int, int], None] | None = None) -> Session:
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
            edges = sorted(dirty_edges)
            pending = list(s.pending)
            base = s.base_version
            token = s.base_token
            st = s.store
            stats = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                     "bytes": st.live_bytes, "next_node": st.next_node,
                     "next_edge": st.next_edge, "updated": time.time(), **_options(s)}
            node_recs = [(R.element_key(sid, n), _node_record(s, n)) for n in nodes]
            edge_recs = [(R.element_key(sid, e), _edge_record(s, e)) for e in edges]
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
                for k, v in node_recs:
                    txn.put(R.NODES, k, v)
                for k, v in edge_recs:
                    txn.put(R.EDGES, k, v)
                for k, v in log_recs:
                    txn.put(R.LOG, k, v)
                txn.put(R.CATALOG, R.sid_key(sid), R.encode(dict(cat, **stats)))

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
                n_edges = live_edges = 0
                for i, (ek, ev) in enumerate(txn.scan(R.EDGES, pre), 1):
                    rec = _edge_from(ev, ek, n_nodes)
                    if R.key_id(ek) != i:
                        raise CabinetCorrupt(f"{sid}: edge record {i} is out of place")
                    n_edges = i
                    live_edges += 0 if rec[4] else 1
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
