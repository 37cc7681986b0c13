"""PostgreSQL backend: the cabinet's tables in one database, for many machines.

The cabinet logic (:mod:`memnet.cabinet.base`) is the same as on LMDB; this
module meets the small KV contract of :mod:`memnet.cabinet.kv` with one
connection (psycopg 3, the ``postgres`` extra) and these tables::

    memnet_schema    (id = 1, version, memnet)        the schema version row
    memnet_meta      (k bytea, v bytea)               the format header
    memnet_catalog   (sid text, v bytea)              one row per session
    memnet_nodes     (sid text, k bytea, v bytea)     and edges, log, postings

A cabinet key ``sid 0x00 rest`` is stored as ``(sid, rest)``: the session id
leads every primary key, so the tables can be distributed by ``sid`` (Citus)
and one session's transaction touches one shard group. Nothing joins across
sessions. Values are the same checksummed records as on LMDB, byte for byte.

Transactions are ``REPEATABLE READ``: a read sees one snapshot; a write reads
the catalog row ``FOR UPDATE`` (so flushes of one session queue on that row
and the loser sees the new version), buffers its puts and deletes, and sends
them with ``COMMIT`` in one pipelined round trip. A serialization failure
reruns the transaction function (the KV contract allows it); a compare-and-swap
then reports ``conflict``.

Failures become coded errors and never carry the password:
``cabinet_unavailable`` (server down or unreachable, connection lost; with
``details["outcome"] == "unknown"`` when the connection broke while ``COMMIT``
was on its way), ``cabinet_auth``, ``cabinet_timeout``, ``disk_full``,
``cabinet_io``. A connection that broke, or that the server closed while it
was idle (a restart), is replaced at the start of the next transaction; a
failure inside a transaction is reported, never retried behind the caller's
back (the session stays dirty: flush it again).

The connection string and the translation of failures into coded errors are
in ``pg_conn.py``; the tables and their migrations in ``pg_schema.py``; a
transaction's reads and buffered writes in ``pg_txn.py``.
"""

from __future__ import annotations

import os
import select
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import CabinetError, CabinetForked
from .kv import KV, Txn
from .pg_conn import SCHEMES, error_for, is_cabinet_url, looks_like_url, psycopg_module, read_url
from .pg_schema import MIGRATIONS, SCHEMA_SQL, SCHEMA_VERSION, migrate
from .pg_txn import PgTxn

T = TypeVar("T")

MAX_ATTEMPTS = 32  # reruns after serialization failures or deadlocks

_live: weakref.WeakSet[PgKV] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # The child shares the parent's sockets: point each one at /dev/null so that
    # nothing the child does (closing, exiting) can speak on the parent's
    # connection, and refuse further use (cabinet_forked).
    for kv in list(_live):
        kv._forked = True
        conn = kv._conn
        kv._conn = None
        if conn is None:
            continue
        try:
            fd = conn.pgconn.socket
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, fd)
            os.close(null)
        except Exception:  # noqa: BLE001 - nothing more can be done in the child
            pass
        _orphans.append(conn)  # never finalised in the child


_orphans: list[Any] = []
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
_BEGIN_WRITE = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ WRITE"
os.register_at_fork(after_in_child=_after_fork_in_child)


class PgKV(KV):
    """The cabinet's tables in a PostgreSQL database (see the module docstring)."""

    name = "postgres"

    def __init__(self, url: str, tables: tuple[str, ...], *, sync: bool = True) -> None:
        self._conninfo, self.display, self._secret = read_url(url)  # needs psycopg
        self.tables = tables
        self.sync = sync
        self._conn: Any = None
        self._pid = os.getpid()
        self._forked = False
        self._closed = False
        self._lock = threading.Lock()
        self._begin_write: tuple[str, ...] = (_BEGIN_WRITE,)
        _live.add(self)
        with self._lock:
            self._connection()
            try:
                self._ensure_schema()
            except BaseException:
                self.close()
                raise

    # -- connection ---------------------------------------------------------------
    def _check(self) -> None:
        if self._forked or os.getpid() != self._pid:
            self._forked = True
            raise CabinetForked(
                "this cabinet was opened before fork(); open it again in the child process "
                "(a database connection must not cross a fork)"
            )
        if self._closed:
            raise CabinetError("the cabinet is closed", code="cabinet_closed")

    def _connection(self) -> Any:
        """The open connection, connecting (again) when there is none, it broke,
        or the server closed it while it was idle (a restart, a terminated
        backend: an idle connection only becomes readable when the server says
        goodbye)."""
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            try:
                readable = select.select([conn.pgconn.socket], [], [], 0)[0]
            except Exception:  # noqa: BLE001 - no socket to look at: connect again
                readable = [True]
            if not readable:
                return conn
        self._drop_connection()
        psycopg = psycopg_module()
        try:
            # prepare_threshold=None: no server-side prepared statements. psycopg
            # prepares a statement after a few runs, and when a pipeline is
            # aborted (a serialization failure, retried) it can go on believing
            # in one the server dropped: every later create or drop then failed
            # with "prepared statement ... does not exist"
            conn = psycopg.connect(self._conninfo, autocommit=True, prepare_threshold=None)
            # on Citus, what a transaction SETs LOCAL reaches the connections
            # to the workers that hold its shards (a session's SET does not);
            # a plain server keeps the name as a placeholder, unused
            conn.execute("SET citus.propagate_set_commands = 'local'")
        except psycopg.Error as e:
            raise self._error(e, "connect to") from None
        settings = ["SET LOCAL synchronous_commit = off"] if not self.sync else []
        try:
            # large records (an index delta, a hub's adjacency, a log entry)
            # are stored compressed: lz4 costs a flush a fraction of pglz's time;
            # a server built without it (or older than 14) keeps its default
            conn.execute("SET default_toast_compression = lz4")
            settings.append("SET LOCAL default_toast_compression = lz4")
        except psycopg.Error:
            pass
        # each write transaction sets them again, LOCAL, so that they reach
        # the servers that store its rows (see docs/cabinet-citus.md)
        self._begin_write = (_BEGIN_WRITE, *settings)
        self._conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - it is being thrown away
                pass

    def _begin_read(self) -> Any:
        """A connection inside a new read-only REPEATABLE READ transaction."""
        psycopg = psycopg_module()
        conn = self._connection()
        try:
            conn.execute(_BEGIN_READ)
        except psycopg.Error as e:
            self._end(conn)
            raise self._error(e, "begin a transaction on") from None
        return conn

    def _abandon(self, txn: PgTxn, conn: Any) -> None:
        """Leave a failed write transaction: rolled back, or the connection
        dropped when its pipeline was aborted (see end_pipeline)."""
        if txn.end_pipeline(ok=False):
            self._drop_connection()
        else:
            self._end(conn)

    def _end(self, conn: Any) -> None:
        """Roll back whatever is open; a connection that cannot is dropped."""
        if conn.closed or conn.broken:
            self._drop_connection()
            return
        try:
            conn.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - the connection is useless now
            self._drop_connection()

    # -- errors -------------------------------------------------------------------
    def _error(self, e: BaseException, doing: str, *, unknown: bool = False) -> CabinetError:
        """The coded error for a psycopg failure (password scrubbed)."""
        return error_for(e, doing, self.display, self._secret, self._conn, unknown=unknown)

    # -- transactions ---------------------------------------------------------------
    @contextmanager
    def read(self) -> Iterator[Txn]:
        self._check()
        psycopg = psycopg_module()
        with self._lock:
            conn = self._begin_read()
            try:
                yield PgTxn(conn, write=False)
            except psycopg.Error as e:
                self._end(conn)
                raise self._error(e, "read from") from None
            except BaseException:
                self._end(conn)
                raise
            try:
                conn.execute("COMMIT")
            except psycopg.Error:
                self._drop_connection()  # a read-only transaction: nothing is lost

    def run_write(self, fn: Callable[[Txn], T]) -> T:
        self._check()
        psycopg = psycopg_module()
        from psycopg import errors as pe

        with self._lock:
            for _attempt in range(MAX_ATTEMPTS):
                conn = self._connection()
                txn = PgTxn(conn, write=True, begin=self._begin_write)
                try:
                    out = fn(txn)
                    txn.send_writes(commit=True)
                    return out
                except (pe.SerializationFailure, pe.DeadlockDetected):
                    self._abandon(txn, conn)  # another writer got there first: run fn again
                    continue
                except psycopg.Error as e:
                    unknown = txn.commit_sent
                    self._abandon(txn, conn)
                    raise self._error(e, "write to", unknown=unknown) from None
                except BaseException:
                    self._abandon(txn, conn)
                    raise
            raise CabinetError(
                f"the PostgreSQL cabinet at {self.display} kept refusing the "
                f"write after {MAX_ATTEMPTS} serialization failures; nothing "
                "was written",
                code="cabinet_io",
            )

    # -- schema ---------------------------------------------------------------------
    def _ensure_schema(self) -> None:
        """Create the tables (or bring them to SCHEMA_VERSION) in one transaction
        under an advisory lock; a newer schema is refused."""
        psycopg = psycopg_module()
        try:
            migrate(self._conn, self.display)
        except psycopg.Error as e:
            self._drop_connection()
            raise self._error(e, "prepare") from None

    # -- maintenance -------------------------------------------------------------------
    def backup(self, dest: str) -> None:
        """Copy every record, the format header included, into a new LMDB
        cabinet at ``dest``, from one snapshot. A copy that fails leaves no
        file of it behind (nor the directory, when it made it)."""
        from .kv_lmdb import LmdbKV, backup_dir, remove_backup

        self._check()
        made = backup_dir(dest)
        try:
            target = LmdbKV.acquire(dest, self.tables)
        except BaseException:
            remove_backup(dest, made, ())
            raise
        try:
            with self.read() as src:

                def work(txn: Txn) -> None:
                    for t in self.tables:
                        for k, v in src.scan(t):
                            txn.put(t, k, v)

                target.run_write(work)
        except BaseException:
            target.close()
            remove_backup(dest, made, ("data.mdb", "lock.mdb"))
            raise
        target.close()

    def check_file(self) -> list[str]:
        """The schema version row must be the one this MemNet writes."""
        with self.read() as txn:
            rows = txn.rows("SELECT version FROM memnet_schema", ())  # type: ignore[attr-defined]
        if [r[0] for r in rows] != [SCHEMA_VERSION]:
            return [f"memnet_schema holds {rows!r}, not version {SCHEMA_VERSION}"]
        return []

    def info(self) -> dict[str, Any]:
        self._check()
        conn = self._conn
        server = conn.info.server_version if conn is not None and not conn.closed else None
        return {
            "backend": self.name,
            "path": self.display,
            "url": self.display,
            "schema": SCHEMA_VERSION,
            "server_version": server,
            "sync": self.sync,
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _live.discard(self)
        if not self._forked and os.getpid() == self._pid:
            self._drop_connection()
        else:
            self._conn = None

    def __repr__(self) -> str:
        return f"PgKV({self.display!r})"


__all__ = [
    "MIGRATIONS",
    "PgKV",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "SCHEMES",
    "is_cabinet_url",
    "looks_like_url",
]
