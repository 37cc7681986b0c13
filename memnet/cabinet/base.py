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
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..commit import Change, CommitRecord, replay
from ..errors import (
    CabinetCorrupt,
    CabinetFormat,
    ConflictError,
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


def _log_record(rec: CommitRecord) -> bytes:
    return R.encode({"t": rec.time, "s": rec.summary,
                     "c": [(c.op, c.id, c.state) for c in rec.changes]})


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
        self.kv = kv
        self._check_format()

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
        return cls(LmdbKV(where, R.TABLES, max_size=max_size, sync=sync))

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
        self.kv.close()

    def __enter__(self) -> Cabinet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- catalog ------------------------------------------------------------------
    @staticmethod
    def _catalog(txn: Txn, sid: str) -> dict[str, Any] | None:
        raw = txn.get(R.CATALOG, R.sid_key(sid))
        return None if raw is None else dict(R.decode(raw, sid))

    def exists(self, sid: str) -> bool:
        with self.kv.read() as txn:
            return self._catalog(txn, sid) is not None

    def sessions(self) -> list[SessionInfo]:
        """The catalog: every session with its version and size, by id."""
        out = []
        with self.kv.read() as txn:
            for k, v in txn.scan(R.CATALOG):
                c = R.decode(v, k)
                out.append(SessionInfo(k.decode("ascii"), c["version"], c["nodes"] + c["edges"],
                                       c["bytes"], c["nodes"], c["edges"], c["created"],
                                       c["updated"]))
        return out

    def create(self, sid: str, **session_options: Any) -> Session:
        """Create an empty session; an existing id is refused with ``session_exists``."""
        check_session_id(sid)
        now = time.time()

        def work(txn: Txn) -> None:
            if self._catalog(txn, sid) is not None:
                raise SessionExists(f"session {sid!r} already exists in this cabinet")
            txn.put(R.CATALOG, R.sid_key(sid), R.encode(
                {"version": 0, "nodes": 0, "edges": 0, "bytes": 0, "next_node": 1,
                 "next_edge": 1, "created": now, "updated": now}))

        self.kv.run_write(work)
        s = Session(sid, **session_options)
        self._bind(s, 0)
        return s

    @staticmethod
    def _bind(s: Session, version: int) -> None:
        s.base_version = version
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
    def hydrate(self, sid: str, *, at: int | None = None, **session_options: Any) -> Session:
        """Hydrate a session; ``at=version`` reads a past version back."""
        check_session_id(sid)
        with self.kv.read() as txn:
            cat = self._catalog(txn, sid)
            if cat is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            version = int(cat["version"])
            if at is not None and at != version:
                if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at <= version:
                    raise VersionNotFound(f"session {sid!r} has versions 0 to {version}, "
                                          f"not {at!r}")
                return self._replay(txn, sid, at, session_options)
            s = Session(sid, **session_options)
            n_nodes, n_edges = int(cat["next_node"]) - 1, int(cat["next_edge"]) - 1
            nodes = self._dense(txn, R.NODES, sid, n_nodes, R.decode)
            types: dict[bytes, str] = {}
            edges = self._dense(txn, R.EDGES, sid, n_edges,
                                lambda raw, where: R.decode_edge(raw, where, types))
        try:
            s.store.load(nodes, edges)
        except (TypeError, ValueError) as e:
            raise CabinetCorrupt(f"session {sid!r} holds a malformed record: {e}") from None
        s.version = version
        self._bind(s, version)
        return s

    @staticmethod
    def _dense(txn: Txn, table: str, sid: str, count: int, dec: Any) -> list[Any]:
        """Decode the records 1..count of ``sid`` in ``table``, checking that the
        ids are dense (the first and last keys are where they must be)."""
        if count == 0:
            return []
        if txn.get(table, R.element_key(sid, 1)) is None or \
                txn.get(table, R.element_key(sid, count)) is None or \
                txn.get(table, R.element_key(sid, count + 1)) is not None:
            raise CabinetCorrupt(f"session {sid!r}: {table} records disagree with the catalog")
        where = f"{sid}/{table}"
        out = [dec(v, where) for v in txn.values(table, R.prefix(sid), count)]
        if len(out) != count:
            raise CabinetCorrupt(f"session {sid!r}: {table} records are missing")
        return out

    def _replay(self, txn: Txn, sid: str, at: int, opts: dict[str, Any]) -> Session:
        s = Session(sid, **opts)
        pre = R.prefix(sid)
        for k, v in txn.scan(R.LOG, pre):
            ver = R.key_id(k)
            if ver > at:
                break
            t, summary, changes = _decode_log(v, k)
            replay(s.store, changes)
            s.version = ver
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
            st = s.store
            stats = {"version": s.version, "nodes": st.live_nodes, "edges": st.live_edges,
                     "bytes": st.live_bytes, "next_node": st.next_node,
                     "next_edge": st.next_edge, "updated": time.time()}
            node_recs = [(R.element_key(sid, n), _node_record(s, n)) for n in nodes]
            edge_recs = [(R.element_key(sid, e), _edge_record(s, e)) for e in edges]
            log_recs = [(R.element_key(sid, r.version), _log_record(r)) for r in pending]

            def work(txn: Txn) -> None:
                cat = self._catalog(txn, sid)
                if cat is None:
                    raise SessionNotFound(f"no session {sid!r} in this cabinet (dropped?)")
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
        with self.kv.read() as txn:
            for k, v in txn.scan(R.CATALOG):
                sid = k.decode("ascii")
                check_session_id(sid)
                cat = R.decode(v, k)
                counts["sessions"] += 1
                pre = R.prefix(sid)
                n_nodes = live_nodes = 0
                for i, (nk, nv) in enumerate(txn.scan(R.NODES, pre), 1):
                    rec = R.decode(nv, nk)
                    if R.key_id(nk) != i or len(rec) != 7:
                        raise CabinetCorrupt(f"{sid}: node record {i} is out of place")
                    adj = array("I")
                    adj.frombytes(rec[6])
                    n_nodes = i
                    live_nodes += 0 if rec[4] else 1
                n_edges = live_edges = 0
                for i, (ek, ev) in enumerate(txn.scan(R.EDGES, pre), 1):
                    rec = R.decode_edge(ev, ek)
                    if R.key_id(ek) != i or not (0 < rec[1] <= n_nodes and 0 < rec[2] <= n_nodes):
                        raise CabinetCorrupt(f"{sid}: edge record {i} is dangling or out of place")
                    n_edges = i
                    live_edges += 0 if rec[4] else 1
                last = 0
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
