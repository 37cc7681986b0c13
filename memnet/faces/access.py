"""How the ``memnet`` commands reach the cabinet: open it (refusing one that
is not there), hydrate a session with a progress line, and say how to run a
command again so that it creates the session it missed.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from ..errors import PathNotFound, SessionNotFound
from .progress import Progress

if TYPE_CHECKING:
    from ..cabinet import Cabinet
    from ..session import Session


def open_cabinet(
    args: argparse.Namespace, *, create: bool = False, sid: str | None = None
) -> Cabinet:
    """The cabinet at ``--home``. Only a command that makes something
    (``create``) makes a cabinet where there is none; any other stops first,
    so a mistyped path leaves nothing behind: with ``session_not_found`` when
    it names a session ``sid``, else ``path_not_found``."""
    from ..cabinet import Cabinet

    if not create:
        need_cabinet(args.home, sid)
    return Cabinet.open(args.home)


def need_cabinet(home: str | None, sid: str | None = None) -> None:
    """Stop when there is no cabinet at ``home`` (see :func:`open_cabinet`)."""
    from ..cabinet.kv import home_of
    from ..cabinet.kv_pg import is_cabinet_url

    where = home_of(home)
    # a lock file without its data file is a cabinet that lost it: opening
    # it says so (cabinet_corrupt)
    if (
        where
        and not is_cabinet_url(where)
        and not any(os.path.isfile(os.path.join(where, f)) for f in ("data.mdb", "lock.mdb"))
    ):
        if sid is not None:
            raise SessionNotFound(f"no session {sid!r}: there is no cabinet at {where!r}")
        raise PathNotFound(f"no cabinet at {where!r}", path=where)


def hydrate(cab: Cabinet, sid: str, at: int | None = None) -> Session:
    """Open ``sid`` from the cabinet, with a progress line on a terminal."""
    with Progress(f"hydrate {sid}") as bar:
        return cab.open(sid, at=at, progress=bar)


def rerun_hint(args: argparse.Namespace, *words: str) -> str:
    """The command line that runs ``memnet`` with ``words`` on the same
    cabinet (``--home`` as given), quoted for a POSIX shell."""
    import shlex

    home = ["--home", args.home] if args.home is not None else []
    return "memnet " + " ".join(shlex.quote(w) for w in (*home, *words))


def with_create_hint(e: SessionNotFound, hint: str) -> SessionNotFound:
    """``e`` saying how to create the session: ``hint`` is a command line
    that does the same work and creates it first (it must run as given)."""
    return SessionNotFound(f"{e.message}; to create it with this command, run: {hint}")


__all__ = ["hydrate", "need_cabinet", "open_cabinet", "rerun_hint", "with_create_hint"]
