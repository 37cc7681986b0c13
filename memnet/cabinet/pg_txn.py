"""PostgreSQL backend: one transaction on the connection, its reads and its
buffered writes (see :mod:`memnet.cabinet.kv_pg` for the connection, the
retries and the schema).

A cabinet key ``sid 0x00 rest`` is read and written as ``(sid, rest)``. Reads
in a write transaction remember the keys the server holds, so a delete knows
whether the key existed; puts and deletes are buffered (read back by ``get``)
and sent as one array upsert and one array delete per table and session, with
``COMMIT``, in one pipelined round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import CabinetCorrupt, CabinetError
from .kv import Txn

SPILL_BYTES = 16 << 20  # buffered writes past this are sent before COMMIT
_FIRST_PAGE, _MAX_PAGE = 1024, 32768


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


class PgTxn(Txn):
    """One transaction on the connection. Writes are buffered (read back by
    get) and sent when the transaction commits, or earlier before a scan or
    when they pass SPILL_BYTES."""

    def __init__(self, conn: Any, write: bool, begin: tuple[str, ...] | None = None) -> None:
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
        # COMMIT went out: a connection lost now leaves the outcome unknown
        self.commit_sent = False

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

    def rows(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Every row of ``query`` (``BEGIN`` riding with it when not sent yet)."""
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
            rows = self.rows(f"SELECT v FROM memnet_{table} WHERE k = %b", (key,))
        elif kind == "sid":
            sid = _sid_text(key)
            if sid is None:
                return None
            rows = self.rows(f"SELECT v FROM memnet_catalog WHERE sid = %b{lock}", (sid,))
        else:
            sid, rest = _split(key)
            if sid is None:
                return None
            rows = self.rows(f"SELECT v FROM memnet_{table} WHERE sid = %b AND k = %b", (sid, rest))
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
            for k, v in self.rows(
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
            rows = self.rows(
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
            rows = self.rows(
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
            self.commit_sent = True
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
