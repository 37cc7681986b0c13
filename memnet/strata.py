"""Strata: when a session outgrows its rate cap R, mint the next one (SPEC §2, §6).

A session never grows past its cap and ``M`` is never raised because a session
grew. Instead the work moves on to a new session ``S_{i+1}``. The sessions of
one line of work are its *strata*::

    notes        (stratum 0)
    notes-1      (stratum 1)
    notes-2      ...

and they are listed in a *catalog*, which is itself a small session named
``<prefix>-cat``. Each stratum is one node of the catalog::

    (:SES {sid: 'notes-1', rows: 30, version: 12, status: 'full', note: '...'})

and consecutive strata are linked ``(:SES notes)-[:NEXT]->(:SES notes-1)``.
An agent finds the open strata with an ordinary Recall on the catalog:
``ensure_catalog(cab, 'notes').recall("SES status:open")``.

Example::

    >>> import tempfile, memnet
    >>> from memnet import strata
    >>> cab = memnet.Cabinet.open(tempfile.mkdtemp())
    >>> s = cab.create("notes", caps=memnet.Caps(rows=2, bytes=10**6))
    >>> s, r = strata.commit_or_advance(
    ...     cab, s, "INSERT (a:TSK {title: 'one'}), (b:TSK {title: 'two'})")
    >>> s.name
    'notes'
    >>> s, r = strata.commit_or_advance(cab, s, "INSERT (c:TSK {title: 'three'})")
    >>> s.name
    'notes-1'
    >>> strata.ensure_catalog(cab, "notes").recall("SES status:open").receipt.matched
    1
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from .cabinet import Cabinet
from .commit import CommitResult
from .errors import CapExceeded, ConflictError, InvalidArgument, SessionExists, SessionNotFound
from .gql import ast
from .gql.emit import codebook_value, format_value
from .gql.parse import parse_delta
from .graph.store import parse_handle
from .ids import check_session_id
from .session import Session
from .values import has_lone_surrogate

T = TypeVar("T")

CATALOG_KIND = "SES"
LINK_TYPE = "NEXT"
#: the longest base id kept: room for ``-cat`` and a ``-<n>`` of up to 5 digits
MAX_BASE = 58
_STRATUM = re.compile(r"(.+?)-(\d+)", re.ASCII)
_RETRIES = 3


# -- ids ------------------------------------------------------------------------
def catalog_id(prefix: str) -> str:
    """The id of the catalog session of ``prefix``: ``<prefix>-cat``."""
    check_session_id(prefix)
    return check_session_id(f"{prefix}-cat")


def _stratum_id(base: str, n: int) -> str:
    return check_session_id(base if n == 0 else f"{base}-{n}")


def _short_base(base: str) -> str:
    """``base`` cut to MAX_BASE characters (no trailing '-') so that every
    stratum id and the catalog id stay valid session ids."""
    if len(base) > MAX_BASE:
        base = base[:MAX_BASE].rstrip("-")
    return check_session_id(base)


def split_stratum(cabinet: Cabinet, sid: str) -> tuple[str, int]:
    """``'notes-3'`` → ``('notes', 3)``; ``'notes'`` → ``('notes', 0)``.

    An id such as ``build-2026`` reads as stratum 2026 of ``build`` unless the
    cabinet says otherwise: when ``build-2026-cat`` exists (``build-2026`` is a
    base with its own catalog) and ``build-cat`` does not, it is stratum 0.
    """
    check_session_id(sid)
    m = _STRATUM.fullmatch(sid)
    if m is not None:
        base, n = m.group(1), int(m.group(2))
        own = len(sid) <= 60 and cabinet.exists(catalog_id(sid))
        if not (own and not cabinet.exists(catalog_id(_short_base(base)))):
            return _short_base(base), n
    return _short_base(sid), 0


# -- the catalog ------------------------------------------------------------------
def ensure_catalog(cabinet: Cabinet, prefix: str) -> Session:
    """The catalog session of ``prefix`` (created, empty, if missing)."""
    cid = catalog_id(prefix)
    if cabinet.exists(cid):
        return cabinet.hydrate(cid)
    try:
        return cabinet.create(cid)
    except SessionExists:  # another writer created it in between
        return cabinet.hydrate(cid)


def _find(catalog: Session, sid: str) -> str | None:
    """The handle of the SES node of ``sid`` in ``catalog``, or None."""
    shape = catalog.recall(f"{CATALOG_KIND} sid:{codebook_value(sid)}", k=0, max_rows=5)
    for h in shape.receipt.seeds:
        ref = parse_handle(h)
        if ref is None or ref[0] != "n":
            continue
        nid = ref[1]
        st = catalog.store
        if (
            not st.node_recycled(nid)
            and st.node_kind(nid) == CATALOG_KIND
            and st.node_props(nid).get("sid") == sid
        ):
            return h
    return None


def _with_catalog(cabinet: Cabinet, prefix: str, work: Callable[[Session], T]) -> T:
    """Run ``work(catalog)`` (which commits) and flush; on a flush conflict
    (another writer flushed the catalog first) hydrate again and redo."""
    for attempt in range(_RETRIES):
        cat = ensure_catalog(cabinet, prefix)
        out = work(cat)
        try:
            cabinet.flush(cat)
            return out
        except ConflictError:
            if attempt == _RETRIES - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def register(
    cabinet: Cabinet, prefix: str, sid: str, *, note: str | None = None, status: str | None = None
) -> str:
    """Record session ``sid`` in the catalog of ``prefix``; returns its node handle.

    One ``(:SES {sid, rows, version, status, note})`` node per session: the
    first call inserts it, later calls SET ``rows``/``version`` (read from the
    cabinet's own catalog row of ``sid``), ``status`` and ``note``. ``status``
    is ``'open'`` or ``'full'``; None keeps the stored status (``'open'`` for
    a new node). The catalog is committed and flushed.
    """
    check_session_id(sid)
    if status not in (None, "open", "full"):
        raise InvalidArgument(f"status must be 'open' or 'full', got {status!r}")
    if note is not None and (type(note) is not str or has_lone_surrogate(note)):
        raise InvalidArgument(f"note must be text (valid Unicode), not {note!r}")
    info = cabinet.session_info(sid)  # session_not_found when sid is unknown

    def work(cat: Session) -> str:
        h = _find(cat, sid)
        if h is None:
            props: dict[str, Any] = {
                "sid": sid,
                "rows": info.rows,
                "version": info.version,
                "status": status or "open",
            }
            if note is not None:
                props["note"] = note
            body = ", ".join(f"{k}: {format_value(v)}" for k, v in props.items())
            return cat.commit(f"INSERT (s:{CATALOG_KIND} {{{body}}})").ids["s"]
        sets = [f"{h}.rows = {info.rows}", f"{h}.version = {info.version}"]
        if status is not None:
            sets.append(f"{h}.status = {format_value(status)}")
        if note is not None:
            sets.append(f"{h}.note = {format_value(note)}")
        cat.commit("SET " + ", ".join(sets))
        return h

    return _with_catalog(cabinet, prefix, work)


def _linked(cat: Session, a: str, b: str) -> bool:
    st = cat.store
    ra, rb = parse_handle(a), parse_handle(b)
    assert ra is not None and rb is not None
    return any(
        st.edge_type(e) == LINK_TYPE and st.edge_ends(e) == (ra[1], rb[1])
        for e in st.live_edge_ids()
    )


def link(cabinet: Cabinet, prefix: str, old: str, new: str) -> None:
    """Link two registered strata ``(:SES old)-[:NEXT]->(:SES new)`` (once).
    A session not registered there is ``session_not_found`` (and no catalog
    is made for the link)."""
    cid = catalog_id(prefix)
    if not cabinet.exists(cid):
        raise SessionNotFound(
            f"session {old!r} is not registered in {cid!r} (there is no such catalog)"
        )

    def work(cat: Session) -> None:
        a, b = _find(cat, old), _find(cat, new)
        if a is None or b is None:
            missing = old if a is None else new
            raise SessionNotFound(f"session {missing!r} is not registered in {cid!r}")
        if not _linked(cat, a, b):
            cat.commit(f"INSERT ({a})-[:{LINK_TYPE}]->({b})")

    _with_catalog(cabinet, prefix, work)


# -- minting S_{i+1} ---------------------------------------------------------------
def next_session(cabinet: Cabinet, sid: str, *, note: str | None = None) -> Session:
    """Mint the stratum after ``sid`` and return it (empty, created in the cabinet).

    ``sid`` is ``<base>-<i>`` (or ``<base>``, stratum 0); the new session is
    ``<base>-<j>`` for the first free ``j > i``, with the caps and settle
    policy of ``sid``. Both are registered in the catalog of ``<base>`` (the
    old one as ``'full'``, the new one as ``'open'``) and linked by NEXT.
    This is the advice of a refused Commit ("start a new session S_i+1")
    made executable.
    """
    old = cabinet.open(sid)  # session_not_found when sid is unknown
    base, i = split_stratum(cabinet, sid)
    new: Session | None = None
    j = i + 1
    while new is None:
        nid = _stratum_id(base, j)  # invalid_session_id past 64 characters
        if not cabinet.exists(nid):
            try:
                new = cabinet.create(nid, caps=old.caps, delete_on_settle=old.delete_on_settle)
            except SessionExists:
                pass
        j += 1
    register(cabinet, base, sid, status="full")
    register(cabinet, base, new.name, status="open", note=note)
    link(cabinet, base, sid, new.name)
    return new


# -- Commit, or move on ------------------------------------------------------------------
def outside_refs(delta: str | ast.Delta) -> list[str]:
    """Names a Δ uses without binding them itself: existing handles of the
    session it is written for (``SET n1a.x = 1``, ``(n1a)`` in an edge, ...)."""
    d = parse_delta(delta) if isinstance(delta, str) else delta
    bound: set[str] = set()
    out: list[str] = []

    def use(name: str | None) -> None:
        if name is not None and name not in bound and name not in out:
            out.append(name)

    for st in d.statements:
        if isinstance(st, ast.Insert):
            bound.update(np.var for np in st.nodes if not np.bare and np.var is not None)
            for np in st.nodes:
                if np.bare:
                    use(np.var)
            for ep in st.edges:
                use(ep.src)
                use(ep.dst)
                if ep.var is not None:
                    bound.add(ep.var)
        else:
            use(st.var)
    return out


def commit_or_advance(
    cabinet: Cabinet, session: Session, delta: str | ast.Delta
) -> tuple[Session, CommitResult]:
    """Commit ``delta`` to ``session`` and flush; when the Commit would pass the
    rate cap, mint the next stratum and commit it there instead.

    Returns the session that holds ``delta`` (``session`` or its successor)
    and the Commit's result. Keep working with the returned session. The cap
    is never passed and ``M`` is never raised: a full session stays as it is.

    Caveat — handles do not translate between strata. A Δ that refers to
    existing handles of the full session (``SET n1a.status = 'done'``,
    ``INSERT (t:TSK)-[:TOUCHES]->(n1a)``) cannot move: in the next stratum
    those handles name nothing, or worse, other nodes. Such a Δ is refused
    with the original ``cap_exceeded`` (details carry ``handles`` and
    ``advice``) *before* anything is minted. The same holds for a Δ too big
    for even an empty session with these caps. A Δ made only of SETTLE,
    DELETE and REMOVE is never refused for the cap: it is how a full session
    is tidied.
    """
    d = parse_delta(delta) if isinstance(delta, str) else delta
    try:
        result = session.commit(d)
    except CapExceeded as e:
        refs = outside_refs(d)
        if refs:
            raise CapExceeded(
                f"{e.message}. This Δ refers to existing handles ({', '.join(refs[:8])}) of "
                f"{session.name!r}, which do not exist in a new session, so it was not moved; "
                "settle or delete finished work here, or rewrite the Δ with new nodes only and "
                "commit it to the next stratum (memnet.strata.next_session)",
                **{**e.details, "handles": refs, "advice": "next_session"},
            ) from e
        # would it fit an empty session with the same caps? decide before minting
        probe = Session(
            session.name,
            caps=session.caps,
            delete_on_settle=session.delete_on_settle,
            history_limit=1,
        )
        try:
            probe.commit(d)
        except CapExceeded as e2:
            raise CapExceeded(
                f"{e2.message}. The Δ does not fit even an empty session with these caps: "
                "split it into smaller Commits",
                **e2.details,
            ) from e
        cabinet.flush(session)  # commits made before the refused one
        new = next_session(cabinet, session.name)
        result = new.commit(d)
        cabinet.flush(new)
        register(cabinet, split_stratum(cabinet, new.name)[0], new.name)  # its rows and version
        return new, result
    cabinet.flush(session)
    return session, result


__all__ = [
    "CATALOG_KIND",
    "LINK_TYPE",
    "catalog_id",
    "commit_or_advance",
    "ensure_catalog",
    "link",
    "next_session",
    "outside_refs",
    "register",
    "split_stratum",
]
