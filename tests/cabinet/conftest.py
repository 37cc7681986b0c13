"""The cabinet backends every contract test runs against.

``BACKENDS`` maps a backend name to a *place* factory: given ``tmp_path`` it
returns an object that opens cabinets on one storage, and can open that same
storage again (a restart). A third backend (PostgreSQL) is one more entry:
a class with ``open(**kw)``, ``reopen(cab, **kw)`` and ``cleanup()`` that
skips itself when no database is configured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memnet import Cabinet


class MemoryPlace:
    """An in-memory cabinet; a restart opens a new Cabinet on the same KV."""

    name = "memory"
    persistent = False

    def __init__(self, tmp_path: Path) -> None:
        self.kv: Any = None
        self.opened: list[Cabinet] = []

    def open(self, **kw: Any) -> Cabinet:
        kw.pop("max_size", None)
        kw.pop("sync", None)
        if self.kv is None:
            cab = Cabinet.open(backend="memory")
            self.kv = cab.kv
        else:
            cab = Cabinet(self.kv)
        self.opened.append(cab)
        return cab

    def reopen(self, cab: Cabinet, **kw: Any) -> Cabinet:
        cab.close()
        return self.open(**kw)

    def cleanup(self) -> None:
        for cab in self.opened:
            cab.close()


class LmdbPlace:
    """An LMDB cabinet in a directory under ``tmp_path``."""

    name = "lmdb"
    persistent = True

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "cabinet"
        self.opened: list[Cabinet] = []

    def open(self, **kw: Any) -> Cabinet:
        cab = Cabinet.open(self.path, backend="lmdb", **kw)
        self.opened.append(cab)
        return cab

    def reopen(self, cab: Cabinet, **kw: Any) -> Cabinet:
        cab.close()
        return self.open(**kw)

    def cleanup(self) -> None:
        for cab in self.opened:
            cab.close()


BACKENDS: dict[str, type] = {
    "memory": MemoryPlace,
    "lmdb": LmdbPlace,
    # "postgres": PostgresPlace,   # later: skip in __init__ when no DSN is configured
}


@pytest.fixture(params=list(BACKENDS))
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
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
