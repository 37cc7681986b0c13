"""Hydrate (cabinet → memory): a session read back from its records, at its
stored version or, replayed from the log, at a past one (see
:meth:`memnet.cabinet.Cabinet.hydrate`)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..commit import replay
from ..errors import CabinetCorrupt, SessionNotFound, VersionNotFound
from ..session import Session
from .binding import StoredArchive, bind
from .catalog import read_catalog, stored_options
from .elements import RELEASE_AFTER, load_session, log_of
from .kv import Txn

if TYPE_CHECKING:
    from .base import Cabinet


class CallerFailed(Exception):
    """A caller's progress function raised ``error`` (kept apart from the
    errors a malformed record raises while it is decoded)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


class Guarded:
    """A caller's progress function whose errors come out as CallerFailed."""

    def __init__(self, fn: Callable[[int, int], None]) -> None:
        self.fn = fn

    def __call__(self, done: int, total: int) -> None:
        try:
            self.fn(done, total)
        except Exception as e:
            raise CallerFailed(e) from e


def hydrate_session(
    cab: Cabinet,
    sid: str,
    at: int | None,
    progress: Callable[[int, int], None] | None,
    session_options: dict[str, Any],
) -> Session:
    """Session ``sid`` of ``cab`` as stored (bound), or at version ``at``
    (not bound: a past version is for reading)."""
    with cab.kv.read() as txn:
        cat = read_catalog(txn, sid)
        if cat is None:
            raise SessionNotFound(f"no session {sid!r} in this cabinet")
        version = int(cat["version"])
        if at is not None and at != version:
            first = int(cat.get("log_from", 1)) - 1  # oldest version that can be rebuilt
            if first > 0:
                raise VersionNotFound(
                    f"session {sid!r} was adopted at version {first}: the cabinet keeps "
                    f"versions {first} to {version} only as they are now, not {at!r}"
                )
            if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at <= version:
                raise VersionNotFound(f"session {sid!r} has versions 0 to {version}, not {at!r}")
            opts = {**stored_options(cat), **session_options}
            return _replay(cab, txn, sid, cat, at, opts, progress, cat.get("token"))
        s = Session(sid, **{**stored_options(cat), **session_options})
        total = load_session(txn, s, sid, cat, progress)
    st = s.store
    if (st.live_nodes, st.live_edges) != (cat["nodes"], cat["edges"]):
        raise CabinetCorrupt(
            f"session {sid!r}: the stored index or edges disagree with the catalog's counts"
        )
    top = (int(cat["next_edge"]) - 1) << 1 | 1
    # iterating the list gives the entries as held: the stored bytes here
    if st.adjacency_top() > top:
        raise CabinetCorrupt(f"session {sid!r}: a node lists an edge that is not stored")
    s.version = version
    b = bind(s, version, cat.get("token"), cab)
    b.chunks = (int(cat.get("nchunks", 0)), int(cat.get("over", 0)))
    if total >= RELEASE_AFTER:
        cab.kv.release_pages()
        # the store's columns are lists of a million entries each, made
        # while the collector was off: left in the young generations,
        # the next collections would walk every entry (a pause of 0.1 s
        # to 1 s on an early Recall); frozen, collections skip them
        gc.freeze()
    return s


def _replay(
    cab: Cabinet,
    txn: Txn,
    sid: str,
    cat: dict[str, Any],
    at: int,
    opts: dict[str, Any],
    progress: Callable[[int, int], None] | None,
    token: str | None,
) -> Session:
    s = Session(sid, **opts)
    for ver, _t, _summary, changes in log_of(txn, sid, cat, at):
        replay(s.store, changes)
        s.version = ver
        if progress is not None:
            progress(ver, at)
    # a past version is for reading: it is not bound, so it cannot be flushed
    s.archive = StoredArchive(cab, sid, token, s.tokenizer)
    return s


__all__ = ["CallerFailed", "Guarded", "hydrate_session"]
