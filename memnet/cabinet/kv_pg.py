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
in ``pg_conn.py``; the tables and their migrations in ``pg_schema.py``.
"""

from __future__ import annotations

import os
import select
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import CabinetCorrupt, CabinetError, CabinetForked
from .kv import KV, Txn
from .pg_conn import SCHEMES, error_for, is_cabinet_url, looks_like_url, psycopg_module, read_url
from .pg_schema import MIGRATIONS, SCHEMA_SQL, SCHEMA_VERSION, migrate

T = TypeVar("T")

MAX_ATTEMPTS = 32  # reruns after serialization failures or deadlocks
SPILL_BYTES = 16 << 20  # buffered writes past this are sent before COMMIT
_FIRST_PAGE, _MAX_PAGE = 1024, 32768

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


def _table_kind(table: str) -> str:
    return {"meta": "plain", "catalog": "sid"}.get(table, "element")


def _upper(p: bytes) -> bytes | None:
    """The smallest byte string above every string that starts with ``p``."""
    p = p.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else None


def _blob(v: Any, table: str) -> bytes:
    """A stored value as bytes; a column changed to another type is damage."""
    if v.__class__ is bytes:
        return v
    if isinstance(v, (memoryview, bytearray)):
        return bytes(v)
    raise CabinetCorrupt(
        f"a value of the table memnet_{table} is {type(v).__name__}, not "
        "bytes: the cabinet's tables are not as MemNet made them"
    )


class _PgTxn(Txn):
    """One transaction on the connection. Writes are buffered (read back by
    get) and sent when the transaction commits, or earlier before a scan or
    when they pass SPILL_BYTES."""

    def __init__(
        self, kv: PgKV, conn: Any, write: bool, begin: tuple[str, ...] | None = None
    ) -> None:
        self.kv = kv
        self.conn = conn
        self.cur = conn.cursor(binary=True)
        self.write = write
        # BEGIN (and its settings) not sent yet: they ride with the first statement
        self.begin = begin
        self.pending: dict[str, dict[bytes, bytes | None]] = {}
        self.pending_bytes = 0
        self.known: set[tuple[str, bytes]] = set()
        self.pipe: Any = None  # the pipeline send_soon opened, until the commit
        self.pipe_cur: Any = None

    def send_soon(self) -> None:
        """Send the buffered writes in pipeline mode and return without their
        answers: the server applies them (a flush's ~850 node upserts take it
        10-20 ms) while the caller computes the index delta. The answers are
        read with the commit's, or before the next read."""
        if not self.pending:
            return
        if self.pipe is None:
            self.pipe_cur = self.conn.cursor(binary=True)
            self.pipe = self.conn.pipeline()
            self.pipe.__enter__()
        self.send_writes()

    def end_pipeline(self, ok: bool) -> bool:
        """Leave the pipeline send_soon opened: waiting for every answer
        (``ok``; a failed statement raises here), or, on the way out of a
        failed transaction, quietly (the caller rolls back or drops the
        connection). Returns whether leaving it failed (an aborted pipeline):
        the caller then drops the connection rather than roll it back, as the
        state of a connection whose pipeline failed is not to be trusted."""
        pipe, self.pipe = self.pipe, None
        if pipe is None:
            return False
        try:
            pipe.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - abandoning: the caller drops the connection
            if ok:
                raise
            return True
        return False

    # -- reads -----------------------------------------------------------------
    def _exec(self, query: str, params: tuple[Any, ...]) -> None:
        if self.begin is None:
            self.cur.execute(query, params)
            return
        begin, self.begin = self.begin, None
        with _pipeline(self.conn):
            for statement in begin:
                self.cur.execute(statement)
            self.cur.execute(query, params)

    def _rows(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        self._exec(query, params)
        rows: list[tuple[Any, ...]] = self.cur.fetchall()
        return rows

    def get(self, table: str, key: bytes) -> bytes | None:
        buf = self.pending.get(table)
        if buf is not None and key in buf:
            return buf[key]
        kind = _table_kind(table)
        lock = " FOR UPDATE" if self.write and kind == "sid" else ""
        if kind == "plain":
            rows = self._rows(f"SELECT v FROM memnet_{table} WHERE k = %b", (key,))
        elif kind == "sid":
            sid = _sid_text(key)
            if sid is None:
                return None
            rows = self._rows(f"SELECT v FROM memnet_catalog WHERE sid = %b{lock}", (sid,))
        else:
            sid, rest = _split(key)
            if sid is None:
                return None
            rows = self._rows(
                f"SELECT v FROM memnet_{table} WHERE sid = %b AND k = %b", (sid, rest)
            )
        if not rows:
            return None
        if self.write:
            self.known.add((table, key))
        return _blob(rows[0][0], table)

    def _held(
        self, table: str, keys: list[bytes], buf: dict[bytes, bytes | None], values: bool
    ) -> dict[bytes, bytes | None]:
        """The keys (of an element table) outside ``buf`` that the server
        holds, one query per session: key -> its value (``values``), else
        key -> None."""
        by_sid: dict[str, list[bytes]] = {}
        for k in keys:
            if k not in buf:
                sid, rest = _split(k)
                if sid is not None:
                    by_sid.setdefault(sid, []).append(rest)
        found: dict[bytes, bytes | None] = {}
        cols = "k, v" if values else "k, NULL"
        for sid, rests in by_sid.items():
            pre = sid.encode("ascii") + b"\x00"
            for k, v in self._rows(
                f"SELECT {cols} FROM memnet_{table} WHERE sid = %b AND k = ANY(%b::bytea[])",
                (sid, rests),
            ):
                found[pre + _blob(k, table)] = None if v is None else _blob(v, table)
        if self.write:
            self.known.update((table, k) for k in found)
        return found

    def get_many(self, table: str, keys: list[bytes]) -> list[bytes | None]:
        if _table_kind(table) != "element" or len(keys) < 2:
            return [self.get(table, k) for k in keys]
        buf = self.pending.get(table) or {}
        found = self._held(table, keys, buf, values=True)
        return [buf[k] if k in buf else found.get(k) for k in keys]

    def present(self, table: str, keys: list[bytes]) -> list[bool]:
        if _table_kind(table) != "element" or len(keys) < 2:
            return super().present(table, keys)
        buf = self.pending.get(table) or {}
        found = self._held(table, keys, buf, values=False)
        return [buf[k] is not None if k in buf else k in found for k in keys]

    def scan(self, table: str, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        if self.write:
            self.send_writes()  # the server must see this transaction's own writes
        kind = _table_kind(table)
        if kind == "element" and b"\x00" in prefix:  # one session's range
            sid, rest = _split(prefix)
            if sid is None:
                return
            pre = sid.encode("ascii") + b"\x00"
            yield from self._pages(
                table, prefix, ("k",), "sid = %b AND ", (sid,), (rest,), lambda r: pre + bytes(r[0])
            )
            return
        if kind == "plain":
            yield from self._pages(table, prefix, ("k",), "", (), (prefix,), lambda r: bytes(r[0]))
            return
        try:
            lo = prefix.decode("ascii")
        except UnicodeDecodeError:
            return  # session ids are ASCII: nothing starts with this
        if kind == "sid":
            yield from self._pages(
                table, prefix, ("sid",), "", (), (lo,), lambda r: r[0].encode("ascii")
            )
        else:
            yield from self._pages(
                table,
                prefix,
                ("sid", "k"),
                "",
                (),
                (lo, b""),
                lambda r: r[0].encode("ascii") + b"\x00" + bytes(r[1]),
            )

    def _pages(
        self,
        table: str,
        prefix: bytes,
        cursor: tuple[str, ...],
        fixed: str,
        fixed_params: tuple[Any, ...],
        start: tuple[Any, ...],
        key_of: Callable[[Any], bytes],
    ) -> Iterator[tuple[bytes, bytes]]:
        """Rows in key order from ``start`` on, fetched in growing keyset pages
        (each resumes after the last row of the one before), while their keys
        start with ``prefix``."""
        cols = ", ".join(cursor)
        expr, marks = (
            (cols, "%b")
            if len(cursor) == 1
            else (f"({cols})", "(" + ", ".join("%b" for _ in cursor) + ")")
        )
        op, after, page = ">=", start, _FIRST_PAGE
        while True:
            rows = self._rows(
                f"SELECT {cols}, v FROM memnet_{table} WHERE {fixed}{expr} {op} "
                f"{marks} ORDER BY {cols} LIMIT %b",
                (*fixed_params, *after, page),
            )
            for row in rows:
                try:
                    key = key_of(row)
                except (UnicodeError, AttributeError, TypeError):
                    raise CabinetCorrupt(
                        f"a key of the table memnet_{table} is malformed "
                        f"({row[0]!r}): the cabinet's tables are not as "
                        "MemNet made them"
                    ) from None
                if not key.startswith(prefix):
                    return
                if self.write:
                    self.known.add((table, key))
                yield key, _blob(row[-1], table)
            if len(rows) < page:
                return
            after, op = tuple(rows[-1][:-1]), ">"
            page = min(page * 2, _MAX_PAGE)

    def sids(self, table: str) -> Iterator[str]:
        """The session ids of an element table, from its primary key (which
        leads with ``sid``): the first one alone (an open's probe asks for no
        more), then the rest a page at a time."""
        if self.write:
            self.send_writes()
        after, page = None, 1
        while True:
            rows = self._rows(
                f"SELECT DISTINCT sid FROM memnet_{table}"
                + (" WHERE sid > %b" if after is not None else "")
                + " ORDER BY sid LIMIT %b",
                (after, page) if after is not None else (page,),
            )
            for (sid,) in rows:
                yield str(sid)
            if len(rows) < page:
                return
            after, page = rows[-1][0], _FIRST_PAGE

    # -- writes ----------------------------------------------------------------
    def put(self, table: str, key: bytes, value: bytes) -> None:
        assert self.write
        self.pending.setdefault(table, {})[bytes(key)] = bytes(value)
        self.pending_bytes += len(key) + len(value)
        if self.pending_bytes > SPILL_BYTES:
            self.send_writes()

    def delete(self, table: str, key: bytes) -> bool:
        assert self.write
        buf = self.pending.setdefault(table, {})
        if key in buf:
            existed = buf[key] is not None
        else:
            existed = (table, key) in self.known or self.get(table, key) is not None
        buf[bytes(key)] = None
        return existed

    def discard(self, table: str, keys: list[bytes]) -> None:
        assert self.write
        buf = self.pending.setdefault(table, {})
        for k in keys:
            buf[bytes(k)] = None

    def delete_prefix(self, table: str, prefix: bytes) -> int:
        assert self.write
        if _table_kind(table) != "element" or b"\x00" not in prefix:
            return super().delete_prefix(table, prefix)
        self.send_writes()
        sid, rest = _split(prefix)
        if sid is None:
            return 0
        hi = _upper(rest)
        self._exec(
            f"DELETE FROM memnet_{table} WHERE sid = %b AND k >= %b"
            + (" AND k < %b" if hi is not None else ""),
            (sid, rest, hi) if hi is not None else (sid, rest),
        )
        self.known = {(t, k) for t, k in self.known if t != table or not k.startswith(prefix)}
        return int(self.cur.rowcount)

    def statements(self) -> list[tuple[str, tuple[Any, ...]]]:
        """The buffered writes as statements: per table and session one upsert
        of every put and one delete of every deleted key."""
        out: list[tuple[str, tuple[Any, ...]]] = []
        for table, buf in self.pending.items():
            if not buf:
                continue
            kind = _table_kind(table)
            if kind != "element":
                col = "k" if kind == "plain" else "sid"
                for key, value in buf.items():
                    ident: Any = key if kind == "plain" else _sid_text(key)
                    if ident is None:
                        raise CabinetError(
                            f"cannot store key {key!r} in the catalog", code="cabinet_io"
                        )
                    if value is None:
                        out.append((f"DELETE FROM memnet_{table} WHERE {col} = %b", (ident,)))
                    else:
                        out.append(
                            (
                                f"INSERT INTO memnet_{table} ({col}, v) VALUES (%b, %b) "
                                f"ON CONFLICT ({col}) DO UPDATE SET v = EXCLUDED.v",
                                (ident, value),
                            )
                        )
                continue
            groups: dict[str, tuple[list[bytes], list[bytes], list[bytes]]] = {}
            for key, value in buf.items():
                sid, rest = _split(key)
                if sid is None:
                    raise CabinetError(
                        f"cannot store key {key!r}: it names no session", code="cabinet_io"
                    )
                ks, vs, gone = groups.setdefault(sid, ([], [], []))
                if value is None:
                    gone.append(rest)
                else:
                    ks.append(rest)
                    vs.append(value)
            for sid, (ks, vs, gone) in groups.items():
                if gone:
                    out.append(
                        (
                            f"DELETE FROM memnet_{table} WHERE sid = %b AND k = ANY(%b::bytea[])",
                            (sid, gone),
                        )
                    )
                if ks:
                    out.append(
                        (
                            f"INSERT INTO memnet_{table} (sid, k, v) SELECT %b, u.k, u.v "
                            "FROM unnest(%b::bytea[], %b::bytea[]) AS u(k, v) "
                            "ON CONFLICT (sid, k) DO UPDATE SET v = EXCLUDED.v",
                            (sid, ks, vs),
                        )
                    )
        return out

    def send_writes(self, *, commit: bool = False) -> None:
        """Send the buffered writes (and ``COMMIT``) in one pipelined round trip."""
        stmts = self.statements()
        for table, buf in self.pending.items():
            for key, value in buf.items():
                if value is None:
                    self.known.discard((table, key))
                else:
                    self.known.add((table, key))
        self.pending.clear()
        self.pending_bytes = 0
        if not stmts and not commit:
            return
        if self.pipe is not None:  # send_soon's pipeline: its own cursor, no waiting
            self._send(self.pipe_cur, stmts, commit)
            if commit:
                self.end_pipeline(ok=True)
            return
        with _pipeline(self.conn):
            self._send(self.cur, stmts, commit)

    def _send(self, cur: Any, stmts: list[tuple[str, tuple[Any, ...]]], commit: bool) -> None:
        if self.begin is not None:
            for statement in self.begin:
                cur.execute(statement)
            self.begin = None
        for q, params in stmts:
            cur.execute(q, params)
        if commit:
            self.kv._commit_sent = True
            cur.execute("COMMIT")


@contextmanager
def _pipeline(conn: Any) -> Iterator[Any]:
    """``conn.pipeline()`` that leaves quietly when the block failed: psycopg's
    own exit then logs a warning ("error ignored terminating ... pipeline
    aborted") for every serialization failure, which is retried and no error
    at all; the block's error is the one raised either way."""
    pipe = conn.pipeline()
    pipe.__enter__()
    try:
        yield pipe
    except BaseException:
        try:
            pipe.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - the aborted pipeline says what the block raised
            pass
        raise
    pipe.__exit__(None, None, None)


def _split(key: bytes) -> tuple[str | None, bytes]:
    sid, sep, rest = key.partition(b"\x00")
    if not sep:
        return None, b""
    return _sid_text(sid), rest


def _sid_text(key: bytes) -> str | None:
    try:
        return key.decode("ascii")
    except UnicodeDecodeError:
        return None


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
        self._commit_sent = False
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

    def _abandon(self, txn: _PgTxn, conn: Any) -> None:
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
                yield _PgTxn(self, conn, write=False)
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
                self._commit_sent = False
                txn = _PgTxn(self, conn, write=True, begin=self._begin_write)
                try:
                    out = fn(txn)
                    txn.send_writes(commit=True)
                    return out
                except (pe.SerializationFailure, pe.DeadlockDetected):
                    self._abandon(txn, conn)  # another writer got there first: run fn again
                    continue
                except psycopg.Error as e:
                    unknown = self._commit_sent
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
            rows = txn._rows("SELECT version FROM memnet_schema", ())  # type: ignore[attr-defined]
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
