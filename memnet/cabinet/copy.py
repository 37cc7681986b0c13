"""Copy sessions between two cabinets of any back ends (LMDB, PostgreSQL, memory).

Every back end stores the same records byte for byte, so a session is copied
record by record: the catalog row (with a new creation token, so a copy of the
session loaded from the source can never flush into the destination) and
every node, edge chunk, log and posting record. Each session is read from one
snapshot and written in one transaction; then the destination's records are
read back and compared with the source's (a digest of every key and value),
and the session is hydrated from the destination, which checks its records
against its catalog row. A copy that fails the check is dropped again and
reported as ``cabinet_corrupt``; the history travels with the session, so
``open(sid, at=v)`` reads the same past versions on both sides.

    >>> import tempfile, memnet
    >>> from memnet.cabinet.copy import copy_sessions
    >>> src = memnet.Cabinet.open(backend="memory")
    >>> s = src.create("notes")
    >>> _ = s.commit("INSERT (t:TSK {title: 'Move me'})")
    >>> _ = src.flush(s)
    >>> dst = memnet.Cabinet.open(tempfile.mkdtemp())
    >>> [(i.id, i.version) for i in copy_sessions(src, dst)]
    [('notes', 1)]
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from ..errors import CabinetCorrupt, SessionExists, SessionNotFound
from ..ids import check_session_id
from . import records as R
from .base import Cabinet, SessionInfo
from .catalog import read_catalog
from .kv import Txn

#: the per-element tables of a session, in the order they are copied
ELEMENT_TABLES = (R.NODES, R.EDGES, R.LOG, R.POSTINGS)


def _digest(txn: Txn, sid: str) -> tuple[str, int]:
    """A digest of every element record of ``sid`` (key and value) and their count."""
    h = hashlib.blake2b(digest_size=32)
    n = 0
    pre = R.prefix(sid)
    for table in ELEMENT_TABLES:
        for k, v in txn.scan(table, pre):
            h.update(b"%s\x00%d:%d:" % (table.encode(), len(k), len(v)))
            h.update(k)
            h.update(v)
            n += 1
    return h.hexdigest(), n


def copy_sessions(
    src: Cabinet,
    dst: Cabinet,
    sids: Sequence[str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[SessionInfo]:
    """Copy ``sids`` (default: every session of ``src``) into ``dst``; returns
    their catalog rows in ``dst``.

    Every id must be in ``src`` (``session_not_found``) and none in ``dst``
    (``session_exists``): both are checked before anything is written.
    ``progress(done, total)`` counts sessions."""
    wanted = (
        list(dict.fromkeys(check_session_id(x) for x in sids))
        if sids
        else [i.id for i in src.sessions()]
    )
    for sid in wanted:
        if not src.exists(sid):
            raise SessionNotFound(f"no session {sid!r} in the source cabinet")
        if dst.exists(sid):
            raise SessionExists(
                f"session {sid!r} already exists in the destination cabinet; drop it there first"
            )
    out = []
    for i, sid in enumerate(wanted):
        if progress is not None:
            progress(i, len(wanted))
        out.append(_copy_one(src, dst, sid))
    if progress is not None:
        progress(len(wanted), len(wanted))
    return out


def _copy_one(src: Cabinet, dst: Cabinet, sid: str) -> SessionInfo:
    pre = R.prefix(sid)
    with src.kv.read() as rt:
        cat = read_catalog(rt, sid)
        if cat is None:
            raise SessionNotFound(f"no session {sid!r} in the source cabinet")
        cat.pop("flush", None)
        cat["token"] = R.new_token()
        want = _digest(rt, sid)

        def work(wt: Txn) -> None:
            if read_catalog(wt, sid) is not None:
                raise SessionExists(
                    f"session {sid!r} already exists in the destination "
                    "cabinet; drop it there first"
                )
            for table in ELEMENT_TABLES:  # the birth record too (in the log)
                for k, v in rt.scan(table, pre):
                    wt.put(table, k, v)
            key = R.sid_key(sid)
            wt.put(R.CATALOG, key, R.encode(cat, key))

        dst.kv.run_write(work)
    try:
        with dst.kv.read() as txn:
            got = _digest(txn, sid)
        if got != want:
            raise CabinetCorrupt(
                f"the copy of session {sid!r} does not read back as the "
                f"source ({got[1]} records against {want[1]})"
            )
        dst.hydrate(sid)  # checks the records against the catalog row
    except CabinetCorrupt:
        dst.drop(sid)
        raise
    return dst.session_info(sid)


__all__ = ["copy_sessions"]
