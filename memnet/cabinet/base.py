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
           ``sid 0x00 0xFF chunk``     1,024 nodes as columns
edges      ``sid 0x00 chunk``          4,096 edges as columns: types, src,
                                       dst, recycled flags, props
log        ``sid 0x00 version``        time, summary, changed elements
postings   ``sid 0x00 bucket range``   the seed index: per term of the
                                       bucket, sorted ids of the live nodes
                                       with that kind, label, short value or
                                       word (65,536-id ranges); a long
                                       posting under the same key + its term;
           ``sid 0x00 0xFFFFFFFF v``   the ids each term gained and lost in
                                       the flush that reached version v
=========  ==========================  ======================================

A hydrate reads the stored postings instead of rebuilding the index from
every node's properties, and copies edge columns chunk by chunk; a flush
records the postings its changed nodes' terms gained or lost as one delta
(folded into the buckets once enough wait) and rewrites the chunks its changed
edges fall in, so its cost follows the change, not the session.

This module holds the :class:`Cabinet` contract; the work behind it is in
``records.py`` (keys and record codecs), ``catalog.py`` (the header, catalog
rows and format upgrades), ``elements.py`` (nodes, edges and log to records
and back), ``postings.py`` (the stored index) and ``verify.py``.

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
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from ..commit import gc_paused
from ..errors import (
    CabinetError,
    ConflictError,
    InvalidArgument,
    PathNotFound,
    SessionExists,
    SessionNotFound,
    VersionNotFound,
)
from ..graph.store import edge_handle, node_handle
from ..ids import check_session_id
from ..session import Session
from . import records as R
from .backends import open_kv
from .binding import bind, binding_of
from .catalog import (
    LogEntry,
    SessionInfo,
    catalog_row,
    check_header,
    check_listed,
    natural_key,
    options_of,
    read_catalog,
    sid_of,
    upgrade_cabinet,
    write_birth,
)
from .elements import (
    edge_chunks,
    log_of,
    log_record,
    node_chunks,
    node_record,
)
from .flush import Flush
from .hydrate import CallerFailed, Guarded, hydrate_session
from .kv import KV, Txn
from .postings import posting_records
from .verify import verify_cabinet

_C = TypeVar("_C")
_P = ParamSpec("_P")
_Q = ParamSpec("_Q")
_R = TypeVar("_R")
_S = TypeVar("_S")


class _ClassOrInstance(Generic[_C, _P, _R, _Q, _S]):
    """``Cabinet.open(path)`` opens a cabinet; ``cabinet.open(sid)`` hydrates a
    session. Both names are in the brief, so one attribute serves both: called on
    the class it runs the class function, on an instance the instance function
    (typed so that a type checker sees each call's own signature and result)."""

    def __init__(
        self,
        on_class: Callable[Concatenate[type[_C], _P], _R],
        on_instance: Callable[Concatenate[_C, _Q], _S],
    ) -> None:
        # on_class is the classmethod object of the class body (a type checker
        # sees its function), on_instance a plain function: both bind by __get__
        self.on_class: Any = on_class
        self.on_instance: Any = on_instance
        self.__doc__ = on_instance.__doc__

    @overload
    def __get__(self, obj: None, cls: type[_C] | None = None) -> Callable[_P, _R]: ...

    @overload
    def __get__(self, obj: _C, cls: type[_C] | None = None) -> Callable[_Q, _S]: ...

    def __get__(
        self, obj: _C | None, cls: type[_C] | None = None
    ) -> Callable[_P, _R] | Callable[_Q, _S]:
        if obj is None:
            return cast("Callable[_P, _R]", self.on_class.__get__(None, cls))
        return cast("Callable[_Q, _S]", self.on_instance.__get__(obj, cls))


def _session_arg(session: Any) -> str:
    """The checked id of a Session argument (``invalid_argument`` otherwise)."""
    if not isinstance(session, Session):
        raise InvalidArgument(f"expected a memnet.Session, not {type(session).__name__}")
    return check_session_id(session.name)


_SESSION_OPTIONS = frozenset({"caps", "delete_on_settle", "history_limit", "tokenizer"})


def _check_session_options(options: dict[str, Any]) -> None:
    unknown = set(options) - _SESSION_OPTIONS
    if unknown:
        raise InvalidArgument(
            f"unknown session option(s) {', '.join(sorted(unknown))} "
            f"(known: {', '.join(sorted(_SESSION_OPTIONS))})"
        )


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
    def open_cabinet(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        backend: str = "lmdb",
        max_size: int | None = None,
        sync: bool = True,
        start_over: bool = False,
    ) -> Cabinet:
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

        A string that starts like a PostgreSQL URL but is not one (such as
        ``postgresql:/host/db``, a URL with white space around it, or
        ``host=... password=...``) is ``bad_cabinet_url``, never a directory.
        An LMDB directory that holds a cabinet's lock file or an empty
        ``data.mdb`` but no data (its data file was lost) is
        ``cabinet_corrupt``, never taken for a new cabinet; ``start_over=True``
        removes those two files and starts a new, empty cabinet there instead
        (a data file that holds anything is never replaced).
        """
        if type(start_over) is not bool:
            raise InvalidArgument(f"start_over must be True or False, not {start_over!r}")
        return cls(open_kv(path, backend, max_size, sync, R.TABLES, start_over))

    def _check_format(self) -> None:
        """Check the header (any backend): the format, the engine, and that the
        first session of the log is in the catalog (see
        :func:`~memnet.cabinet.catalog.check_header`)."""
        check_header(self.kv)

    @classmethod
    def upgrade(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        backend: str = "lmdb",
        max_size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Bring a cabinet written by an older format (3 to 6), or indexed
        with another stemmer, to this format in place; returns ``{"sessions":
        n, "nodes": m}``. From format 6 (with this stemmer) each session gains
        its birth record, all in one transaction, and the header loses its
        count of sessions. From format 3 every record is checked against its
        old checksum and sealed again under its key, and node records gain
        their token count (unknown until first used); from format 3 or 4 the
        node records of every full range of ``NODE_CHUNK`` ids are written as
        one node chunk record; from format 5 the stored postings are moved to
        format 6's buckets and key order (no node is read); from an older
        format, or with another stemmer, each session's stored index is
        rebuilt from its nodes.

        The header is marked first, so that no engine reads the cabinet until
        the upgrade is done; each session is then rewritten in one transaction
        that also records it as done, and the header is written whole last. An
        upgrade that stops half way is run again and takes up where it
        stopped. A cabinet that needs nothing is left as it is.
        """
        kv = open_kv(path, backend, max_size, True, R.TABLES)
        try:
            return upgrade_cabinet(kv, progress)
        finally:
            kv.close()

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
    def exists(self, sid: str) -> bool:
        check_session_id(sid)
        with self.kv.read() as txn:
            return read_catalog(txn, sid) is not None

    @staticmethod
    def _info(sid: str, c: dict[str, Any]) -> SessionInfo:
        return SessionInfo(
            sid,
            c["version"],
            c["nodes"] + c["edges"],
            c["bytes"],
            c["nodes"],
            c["edges"],
            c["created"],
            c["updated"],
        )

    def sessions(self) -> list[SessionInfo]:
        """The catalog: every session with its version and size, by id (the
        numbers in ids compared as numbers: ``ok-2`` before ``ok-10``)."""
        with self.kv.read() as txn:
            rows = [self._info(sid_of(k), catalog_row(v, k)) for k, v in txn.scan(R.CATALOG)]
            check_listed(txn, len(rows))
        return sorted(rows, key=lambda i: natural_key(i.id))

    def session_info(self, sid: str) -> SessionInfo:
        """One row of the catalog (one record read, whatever the catalog's size)."""
        check_session_id(sid)
        with self.kv.read() as txn:
            cat = read_catalog(txn, sid)
        if cat is None:
            raise SessionNotFound(f"no session {sid!r} in this cabinet")
        return self._info(sid, cat)

    def create(self, sid: str, **session_options: Any) -> Session:
        """Create an empty session; an existing id is refused with ``session_exists``."""
        check_session_id(sid)
        now = time.time()

        def work(txn: Txn) -> None:
            if read_catalog(txn, sid) is not None:
                raise SessionExists(f"session {sid!r} already exists in this cabinet")
            key = R.sid_key(sid)
            txn.put(
                R.CATALOG,
                key,
                R.encode(
                    {
                        "version": 0,
                        "nodes": 0,
                        "edges": 0,
                        "bytes": 0,
                        "next_node": 1,
                        "next_edge": 1,
                        "created": now,
                        "updated": now,
                        "token": token,
                        "pdelta": 0,
                        "precs": 0,
                        **options_of(s),
                    },
                    key,
                ),
            )
            write_birth(txn, sid, now)

        _check_session_options(session_options)
        s = Session(sid, **session_options)
        token = R.new_token()
        self.kv.run_write(work)
        bind(s, 0, token, self)
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
        sid = _session_arg(s)
        if binding_of(s) is not None:
            raise SessionExists(f"session {sid!r} already belongs to a cabinet; use flush()")
        with s.lock:
            st = s.store
            now = time.time()
            history = s.history()
            whole = [r.version for r in history] == list(range(1, s.version + 1))
            with gc_paused():
                nchunks = st.next_node // R.NODE_CHUNK
                node_recs = node_chunks(s, sid, range(nchunks)) + [
                    node_record(s, sid, n)
                    for n in range(max(1, nchunks * R.NODE_CHUNK), st.next_node)
                ]
                edge_recs = edge_chunks(s, sid, range(st.next_edge // R.EDGE_CHUNK + 1))
                posting_recs = posting_records(sid, st.index)
                log_recs = [log_record(sid, r) for r in history] if whole else []
            token = R.new_token()
            cat = {
                "version": s.version,
                "nodes": st.live_nodes,
                "edges": st.live_edges,
                "bytes": st.live_bytes,
                "kinds": st.live_kinds(),
                "next_node": st.next_node,
                "next_edge": st.next_edge,
                "created": now,
                "updated": now,
                "token": token,
                "pdelta": 0,
                "precs": len(posting_recs),
                "nchunks": nchunks,
                "over": 0,
                **({} if whole else {"log_from": s.version + 1}),
                **options_of(s),
            }

            def work(txn: Txn) -> None:
                if read_catalog(txn, sid) is not None:
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
                write_birth(txn, sid, now)

            self.kv.run_write(work)
            bind(s, s.version, token, self).chunks = (nchunks, 0)
            return s.version

    def is_stale(self, session: Session) -> bool:
        """Whether the cabinet now holds another state of ``session`` than the
        one it was loaded (or last flushed) at: another writer flushed, or the
        session was dropped (and perhaps created again). One catalog read, no
        hydrate; a clean stale copy is best opened again."""
        sid = _session_arg(session)
        b = binding_of(session)
        if b is None:
            raise ConflictError(
                f"session {sid!r} was not opened from this cabinet", stored=None, expected=None
            )
        with self.kv.read() as txn:
            cat = read_catalog(txn, sid)
        return cat is None or cat.get("token") != b.token or cat["version"] != b.version

    def drop(self, sid: str) -> None:
        """Delete a session and all of its records, in one transaction."""
        check_session_id(sid)
        pre = R.prefix(sid)

        def work(txn: Txn) -> None:
            if read_catalog(txn, sid) is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for table in (R.NODES, R.EDGES, R.LOG, R.POSTINGS):  # the birth record too
                txn.delete_prefix(table, pre)
            txn.delete(R.CATALOG, R.sid_key(sid))

        self.kv.run_write(work)

    # -- hydrate ------------------------------------------------------------------
    def hydrate(
        self,
        /,
        sid: str,
        *,
        at: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        **session_options: Any,
    ) -> Session:
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
        _check_session_options(session_options)
        if at is not None and (type(at) is not int or at < 0):
            raise VersionNotFound(f"at must be a version number (0 or more), not {at!r}")
        if progress is not None:
            if not callable(progress):
                raise InvalidArgument(
                    f"progress must be a function (done, total), not {type(progress).__name__}"
                )
            try:
                return hydrate_session(self, sid, at, Guarded(progress), session_options)
            except CallerFailed as e:  # the caller's own error, not a damaged record
                raise e.error from None
        return hydrate_session(self, sid, at, None, session_options)

    open = _ClassOrInstance(open_cabinet, hydrate)

    def log(self, sid: str, *, since: int = 0) -> list[LogEntry]:
        """The commits of a session, oldest first: version, time, what changed."""
        check_session_id(sid)
        if type(since) is not int or since < 0:
            raise InvalidArgument(f"since must be a version number (0 or more), not {since!r}")
        out = []
        with self.kv.read() as txn:
            cat = read_catalog(txn, sid)
            if cat is None:
                raise SessionNotFound(f"no session {sid!r} in this cabinet")
            for ver, t, summary, changes in log_of(txn, sid, cat):
                if ver <= since:
                    continue
                changed = tuple(
                    node_handle(c.id) if c.op[0] == "N" else edge_handle(c.id) for c in changes
                )
                out.append(
                    LogEntry(
                        ver,
                        t,
                        summary.get("created", 0),
                        summary.get("updated", 0),
                        summary.get("recycled", 0),
                        changed,
                    )
                )
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
        sid = _session_arg(s)
        b = binding_of(s)
        if b is None:
            raise ConflictError(
                f"session {sid!r} was not opened from this cabinet; use Cabinet.create() or "
                "Cabinet.open() and commit to the session it returns",
                stored=None,
                expected=None,
            )
        with s.lock:
            pending = s.journal()
            if not pending:
                return s.version
            f = Flush(s, b, sid, pending)
            # the collector is held over the whole flush, the write included:
            # its records and index deltas are many young objects that form no
            # cycle, and the collections they would trigger walk every object
            # the session holds (a third of a 1,000-element flush at 100k nodes)
            with gc_paused():
                f.build()
                return f.run(self.kv)

    # -- maintenance ------------------------------------------------------------------
    def backup(self, dest: str | os.PathLike[str]) -> None:
        """Write a consistent, compacted copy of the whole cabinet to ``dest``."""
        if (
            not isinstance(dest, (str, os.PathLike))
            or not os.fspath(dest)
            or type(os.fspath(dest)) is not str
        ):
            raise InvalidArgument(f"backup needs a directory path, not {dest!r}")
        if "\x00" in os.fspath(dest):
            raise InvalidArgument(f"a path cannot hold a NUL character: {os.fspath(dest)!r}")
        if os.path.exists(dest) and not os.path.isdir(dest):
            raise PathNotFound(
                f"cannot back up to {os.fspath(dest)!r}: it is a file, not a directory",
                path=os.fspath(dest),
            )
        self.kv.backup(os.fspath(dest))

    def verify(self) -> dict[str, int]:
        """Read every record, check checksums and cross-references.

        Returns counts; raises :class:`~memnet.errors.CabinetCorrupt` on the
        first problem found.
        """
        return verify_cabinet(self.kv)

    def info(self) -> dict[str, Any]:
        return self.kv.info()

    def __iter__(self) -> Iterator[SessionInfo]:
        return iter(self.sessions())


__all__ = ["Cabinet", "LogEntry", "SessionInfo"]
