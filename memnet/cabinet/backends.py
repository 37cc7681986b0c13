"""Which backend a cabinet opens: LMDB, PostgreSQL or memory (see
:meth:`memnet.cabinet.Cabinet.open`).

Kept apart from :mod:`memnet.cabinet.kv` (the contract the backends meet), so
that the contract imports no backend and no backend imports this module.
The backends are imported when asked for: opening an LMDB cabinet never loads
the PostgreSQL driver's module.
"""

from __future__ import annotations

import os

from ..errors import CabinetUrlError, InvalidArgument
from .kv import KV, MemoryKV, home_of


def open_kv(
    path: str | os.PathLike[str] | None,
    backend: str,
    max_size: int | None,
    sync: bool,
    tables: tuple[str, ...],
    start_over: bool = False,
) -> KV:
    """The backend behind ``Cabinet.open`` (see its docstring), holding ``tables``."""
    if backend == "memory":
        return MemoryKV(tables)
    if backend not in ("lmdb", "postgres"):
        raise InvalidArgument(f"unknown cabinet backend {backend!r} (lmdb, postgres, memory)")
    from .kv_pg import SCHEMES, PgKV, is_cabinet_url, looks_like_url

    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InvalidArgument(
            f"a cabinet is a directory path or a postgresql:// URL, not {type(path).__name__}"
        )
    where = home_of(path)
    if type(where) is not str or not where or "\x00" in where:
        raise InvalidArgument(
            f"a cabinet is a directory path or a postgresql:// URL, not {where!r}"
        )
    if backend == "postgres" or (not isinstance(path, os.PathLike) and is_cabinet_url(where)):
        scheme = where.split("://", 1)[0].lower() if looks_like_url(where) else "postgresql"
        if scheme not in SCHEMES:
            raise CabinetUrlError(
                f"unknown cabinet URL scheme {scheme!r}: a cabinet is a directory (LMDB) "
                "or a postgresql://user@host:port/dbname URL"
            )
        return PgKV(where, tables, sync=sync)
    from .kv_lmdb import DEFAULT_MAX_SIZE, LmdbKV

    if max_size is None:
        env = os.environ.get("MEMNET_MAX_SIZE")
        try:
            max_size = int(env) if env else DEFAULT_MAX_SIZE
        except ValueError:
            raise InvalidArgument(
                f"MEMNET_MAX_SIZE must be a number of bytes, not {env!r}"
            ) from None
    if type(max_size) is not int or max_size < 1:
        raise InvalidArgument(
            f"the cabinet's max_size must be a positive number of bytes, not {max_size!r}"
        )
    return LmdbKV.acquire(where, tables, max_size=max_size, sync=sync, start_over=start_over)


__all__ = ["open_kv"]
