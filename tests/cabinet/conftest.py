"""The cabinet backends every contract test runs against.

``BACKENDS`` maps a backend name to a *place* factory: given ``tmp_path`` (and
the server, for PostgreSQL) it returns an object that opens cabinets on one
storage, and can open that same storage again (a restart): a class with
``open(**kw)``, ``reopen(cab, **kw)`` and ``cleanup()``.

PostgreSQL runs on a throwaway server this session starts (``pg_server``,
see ``tests/pgserver.py``); each test gets a schema of its own in one database
(the URL's ``options=-csearch_path=...``). Without the server binaries or
psycopg the PostgreSQL tests skip, except with ``CI=true``, where they fail.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memnet import Cabinet

from ..pgserver import PgServer, find_bindir


class Place:
    """What every place shares: the cabinets it opened, a restart, cleanup.
    A subclass opens a cabinet with ``_open(**kw)``."""

    name = "?"
    persistent = True

    def __init__(self, tmp_path: Path) -> None:
        self.opened: list[Cabinet] = []

    def _open(self, **kw: Any) -> Cabinet:
        raise NotImplementedError

    def open(self, **kw: Any) -> Cabinet:
        cab = self._open(**kw)
        self.opened.append(cab)
        return cab

    def reopen(self, cab: Cabinet, **kw: Any) -> Cabinet:
        cab.close()
        return self.open(**kw)

    def cleanup(self) -> None:
        for cab in self.opened:
            cab.close()


class MemoryPlace(Place):
    """An in-memory cabinet; a restart opens a new Cabinet on the same KV."""

    name = "memory"
    persistent = False

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.kv: Any = None

    def _open(self, **kw: Any) -> Cabinet:
        if self.kv is None:
            cab = Cabinet.open(backend="memory")
            self.kv = cab.kv
            return cab
        return Cabinet(self.kv)


class LmdbPlace(Place):
    """An LMDB cabinet in a directory under ``tmp_path``."""

    name = "lmdb"

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.path = tmp_path / "cabinet"

    def _open(self, **kw: Any) -> Cabinet:
        return Cabinet.open(self.path, backend="lmdb", **kw)


_schemas = itertools.count(1)


class PostgresPlace(Place):
    """A PostgreSQL cabinet in a schema of its own on the session's server."""

    name = "postgres"

    def __init__(self, tmp_path: Path, server: PgServer) -> None:
        super().__init__(tmp_path)
        self.server = server
        self.schema = f"t{next(_schemas)}"
        server.sql(f"CREATE SCHEMA {self.schema}", "contract")
        self.url = server.url("contract", options=f"-csearch_path%3D{self.schema}")

    def _open(self, **kw: Any) -> Cabinet:
        kw.pop("max_size", None)
        return Cabinet.open(self.url, **kw)

    def cleanup(self) -> None:
        super().cleanup()
        self.server.sql(f"DROP SCHEMA {self.schema} CASCADE", "contract")


BACKENDS: dict[str, type] = {
    "memory": MemoryPlace,
    "lmdb": LmdbPlace,
    "postgres": PostgresPlace,
}


def _pg_missing() -> str | None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'memnet[postgres]')"
    if find_bindir() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql)"
    return None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A throwaway PostgreSQL server for the whole test session, with a
    database ``contract`` for the contract suite."""
    missing = _pg_missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {missing}")
        pytest.skip(missing)
    server = PgServer()
    try:
        server.start()
        server.create_database("contract")
        yield server
    finally:
        server.cleanup()


@pytest.fixture(params=list(BACKENDS))
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "postgres":
        p = PostgresPlace(tmp_path, request.getfixturevalue("pg_server"))
    else:
        p = BACKENDS[request.param](tmp_path)
    yield p
    p.cleanup()


@pytest.fixture
def cabinet(place: Any) -> Cabinet:
    """An open, empty cabinet of each backend."""
    return place.open()


@pytest.fixture
def lmdb_path(tmp_path: Path) -> Path:
    return tmp_path / "cabinet"
