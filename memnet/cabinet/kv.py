"""The small transactional key-value contract every cabinet backend meets.

A backend offers named tables of ordered byte keys, read transactions, and
write transactions that are all-or-nothing. The cabinet logic
(:mod:`memnet.cabinet.base`) is written once against this contract, so the
same test suite runs on the in-memory backend, LMDB and PostgreSQL
(:mod:`memnet.cabinet.kv_pg`).
"""

from __future__ import annotations

import abc
import bisect
import copy
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from ..errors import CabinetError

T = TypeVar("T")


class Txn(abc.ABC):
    """One transaction: reads see one consistent snapshot."""

    @abc.abstractmethod
    def get(self, table: str, key: bytes) -> bytes | None: ...

    @abc.abstractmethod
    def scan(self, table: str, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order."""

    def values(
        self,
        table: str,
        prefix: bytes,
        count: int,
        start: bytes | None = None,
    ) -> Iterator[bytes]:
        """The values of the first ``count`` keys under ``prefix`` (from the key
        ``start`` on, when given), in key order, and nothing else; backends
        override it with a faster cursor walk. The caller checks the keys at
        both ends with :meth:`get`."""
        i = 0
        for k, v in self.scan(table, prefix):
            if start is not None and k < start:
                continue
            if i >= count:
                break
            i += 1
            yield v

    def get_many(self, table: str, keys: list[bytes]) -> list[bytes | None]:
        """:meth:`get` of each key, in order; a backend behind a network
        answers them all in one round trip."""
        return [self.get(table, k) for k in keys]

    def present(self, table: str, keys: list[bytes]) -> list[bool]:
        """Whether each key holds a record, in order; a backend behind a
        network asks for the keys alone, in one round trip."""
        return [v is not None for v in self.get_many(table, keys)]

    def count(self, table: str) -> int | None:
        """How many records ``table`` holds, as the backend keeps the count
        itself (LMDB: the entries of the table's own record); None when it
        keeps none (PostgreSQL), so that nothing counts a table row by row."""
        return None

    def sids(self, table: str) -> Iterator[str]:
        """The session ids that hold records in an element table (keys ``sid
        0x00 ...``), in key order, each once; a damaged key that names no
        session is yielded as the text it holds. Backends skip from one
        session's records to the next instead of reading them."""
        last = None
        for k, _v in self.scan(table):
            sid = k.split(b"\x00", 1)[0].decode("ascii", "replace")
            if sid != last:
                last = sid
                yield sid

    def put(self, table: str, key: bytes, value: bytes) -> None:
        raise NotImplementedError("read-only transaction")

    def delete(self, table: str, key: bytes) -> bool:
        raise NotImplementedError("read-only transaction")

    def send_soon(self) -> None:  # noqa: B027 - a hint: doing nothing is right
        """A hint: the writes made so far may start on their way to the
        store while the caller prepares the rest (a backend behind a network
        sends them without waiting for the answer; the transaction still
        commits or fails as a whole)."""

    def discard(self, table: str, keys: list[bytes]) -> None:
        """Delete ``keys``, not asking whether each was there (a backend
        behind a network sends them with the other writes)."""
        for k in keys:
            self.delete(table, k)

    def delete_prefix(self, table: str, prefix: bytes) -> int:
        """Delete every key that starts with ``prefix``; returns how many."""
        keys = [k for k, _v in self.scan(table, prefix)]
        for k in keys:
            self.delete(table, k)
        return len(keys)


class KV(abc.ABC):
    """A backend: named tables, snapshots, atomic writes."""

    name = "kv"

    @abc.abstractmethod
    def read(self) -> AbstractContextManager[Txn]: ...

    @abc.abstractmethod
    def run_write(self, fn: Callable[[Txn], T]) -> T:
        """Run ``fn`` in one write transaction and commit it; on any exception
        nothing is written. ``fn`` may be run again (after growing storage), so
        it must not have side effects outside the transaction."""

    @abc.abstractmethod
    def backup(self, dest: str) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def check_file(self) -> list[str]:
        """Problems the backend finds in its own files (none by default)."""
        return []

    def release_pages(self) -> None:  # noqa: B027 - optional: a no-op where nothing is mapped
        """After a large read (a hydrate), let go of the storage pages this
        process mapped to read it, if the backend maps any (none by default)."""

    def info(self) -> dict[str, Any]:
        return {"backend": self.name}


class _MemTxn(Txn):
    def __init__(
        self, tables: dict[str, dict[bytes, bytes]], keys: dict[str, list[bytes]], write: bool
    ) -> None:
        self.tables = tables
        self.keys = keys
        self.write = write

    def get(self, table: str, key: bytes) -> bytes | None:
        return self.tables[table].get(key)

    def scan(self, table: str, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        keys = self.keys[table]
        t = self.tables[table]
        i = bisect.bisect_left(keys, prefix)
        while i < len(keys) and keys[i].startswith(prefix):
            k = keys[i]
            yield k, t[k]
            i += 1

    def count(self, table: str) -> int | None:
        return len(self.tables[table])

    def put(self, table: str, key: bytes, value: bytes) -> None:
        assert self.write
        t = self.tables[table]
        if key not in t:
            bisect.insort(self.keys[table], key)
        t[key] = bytes(value)

    def delete(self, table: str, key: bytes) -> bool:
        assert self.write
        t = self.tables[table]
        if key not in t:
            return False
        del t[key]
        keys = self.keys[table]
        keys.pop(bisect.bisect_left(keys, key))
        return True


class MemoryKV(KV):
    """Tables in process memory; a write works on a copy that replaces the
    original only when the transaction commits. For tests and scratch use."""

    name = "memory"

    def __init__(self, tables: tuple[str, ...]) -> None:
        self._tables: dict[str, dict[bytes, bytes]] = {t: {} for t in tables}
        self._keys: dict[str, list[bytes]] = {t: [] for t in tables}
        self._lock = threading.Lock()

    @contextmanager
    def read(self) -> Iterator[Txn]:
        with self._lock:
            tables, keys = self._tables, self._keys
        yield _MemTxn(tables, keys, write=False)

    def run_write(self, fn: Callable[[Txn], T]) -> T:
        with self._lock:
            tables = {t: dict(d) for t, d in self._tables.items()}
            keys = {t: list(k) for t, k in self._keys.items()}
            out = fn(_MemTxn(tables, keys, write=True))
            self._tables, self._keys = tables, keys
            return out

    def backup(self, dest: str) -> None:
        raise CabinetError(
            "an in-memory cabinet cannot be backed up to a path; use snapshot()",
            code="not_supported",
        )

    def snapshot(self) -> MemoryKV:
        """A deep copy (the in-memory equivalent of a backup)."""
        other = MemoryKV(tuple(self._tables))
        with self._lock:
            other._tables = copy.deepcopy(self._tables)
            other._keys = copy.deepcopy(self._keys)
        return other

    def close(self) -> None:
        """Nothing to release: the tables live as long as this object (a new
        Cabinet on the same MemoryKV sees them, like a restart)."""

    def check_file(self) -> list[str]:
        return []


def home_of(path: str | os.PathLike[str] | None) -> str:
    """Where a cabinet is: ``path``, else ``$MEMNET_HOME`` (set and not
    empty), else ``./.memnet``."""
    return os.fspath(path) if path is not None else os.environ.get("MEMNET_HOME") or ".memnet"


__all__ = ["KV", "MemoryKV", "Txn", "home_of"]
