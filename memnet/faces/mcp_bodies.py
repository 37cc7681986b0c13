"""The bodies of the MCP tools (:mod:`memnet.faces.mcp`), independent of the SDK.

:class:`MemNetTools` holds the cabinet and a cache of hydrated sessions; each
method is one tool of the table in :mod:`memnet.faces.mcp_tools` and returns
``(text, structured)`` or raises :class:`~memnet.errors.MemNetError`.
:func:`call` reads a call's arguments by the table and runs the body;
:func:`outcome` turns what it returned or raised into a tool result.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import CODES, MemNetError, SessionNotFound, os_error
from ..ids import check_session_id
from .mcp_tools import HINTS, ToolSpec, check_arguments
from .roots import Roots

if TYPE_CHECKING:
    from ..cabinet import Cabinet
    from ..session import Session

CACHE_SIZE = 16  # hydrated sessions kept between tool calls

Progress = Callable[[int, int], None]


class MemNetTools:
    """The tool bodies, independent of the SDK: each returns ``(text, structured)``
    or raises :class:`MemNetError`. The file tools read below ``roots`` (the
    server's, or the ones a call passes: narrowed by the client's).

    Hydrated sessions are cached, but every call first checks the catalog: a
    session another writer moved on (or dropped and created again) is opened
    afresh, so a recall sees the latest work. A flush that still loses the race
    raises ``conflict``; the cached copy is dropped so the next call reloads.
    """

    def __init__(
        self, cabinet: Cabinet, *, cache_size: int = CACHE_SIZE, roots: Roots | None = None
    ) -> None:
        self.cabinet = cabinet
        self.roots = roots or Roots()  # what file tools may read (faces/roots.py)
        self.cache_size = cache_size
        self._cache: OrderedDict[str, tuple[Session, float]] = OrderedDict()
        self._lock = threading.Lock()  # sync tools run on worker threads
        self._indexes: dict[str, Any] = {}  # host index directory -> HostIndex

    # the catalog row of sid, or None
    def _info(self, sid: str) -> Any:
        try:
            return self.cabinet.session_info(sid)
        except SessionNotFound:
            return None

    def _session(self, sid: str) -> Session:
        check_session_id(sid)
        info = self._info(sid)
        if info is None:
            self._cache.pop(sid, None)
            raise SessionNotFound(f"no session {sid!r} in this cabinet")
        hit = self._cache.get(sid)
        if hit is not None:
            s, created = hit
            if s.version == info.version and created == info.created and not s.dirty:
                self._cache.move_to_end(sid)
                return s
        s = self.cabinet.open(sid)
        self._cache[sid] = (s, info.created)
        self._cache.move_to_end(sid)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return s

    def _flush(self, sid: str, s: Session) -> None:
        """Store what ``s`` committed; a copy the cabinet refused is never served again."""
        try:
            if s.dirty:
                self.cabinet.flush(s)
        except BaseException:
            self._cache.pop(sid, None)
            raise

    def recall(
        self,
        session: str,
        q: str,
        *,
        k: int,
        max_rows: int | None,
        limit: int | None,
        fanout: int,
        view: str,
        laws: bool,
        since: str | None = None,
        max_tokens: int | None = None,
    ) -> tuple[str, dict[str, Any]]:
        with self._lock:
            shape = self._session(session).recall(
                q,
                k=k,
                max_rows=max_rows,
                limit=limit,
                fanout=fanout,
                view=view,
                laws=laws,
                since=since,
                max_tokens=max_tokens,
            )
        return shape.text, shape.receipt.to_dict()

    def outline(self, session: str, *, view: str) -> tuple[str, dict[str, Any]]:
        with self._lock:
            shape = self._session(session).outline(view=view)
        return shape.text, shape.receipt.to_dict()

    def commit(self, session: str, delta: str) -> tuple[str, dict[str, Any]]:
        with self._lock:
            s = self._session(session)
            res = s.commit(delta)  # atomic: on an error the cached copy is unchanged
            try:
                self.cabinet.flush(s)
            except BaseException:
                # the copy holds a commit the cabinet refused: never serve it again
                self._cache.pop(session, None)
                raise
        out: dict[str, Any] = {"version": res.version, "ids": dict(res.ids), "changed": res.changed}
        if res.advice:
            out["advice"] = res.advice
        if res.changed:
            minted = ", ".join(f"{k}={v}" for k, v in sorted(res.ids.items()))
            text = (
                f"committed {session} version {res.version}: +{res.created} "
                f"~{res.updated} -{res.recycled}" + (f"; handles {minted}" if minted else "")
            )
        else:
            text = f"nothing changed; {session} stays at version {res.version}"
        if res.advice:
            text += f"\nadvice: {res.advice}"
        return text, out

    def sessions(self) -> tuple[str, dict[str, Any]]:
        with self._lock:
            rows = [i.to_dict() for i in self.cabinet.sessions()]
        if rows:
            text = "\n".join(
                f"{r['id']}  v{r['version']}  {r['nodes']} nodes  "
                f"{r['edges']} edges  {r['bytes']} bytes"
                for r in rows
            )
        else:
            text = "no sessions yet: create one with memnet_create_session"
        return text, {"sessions": rows}

    def absorb(
        self, lead: str, member: str, anchors: list[str], id_policy: str, hops: int
    ) -> tuple[str, dict[str, Any]]:
        from ..absorb import export_working_memory_slice, import_slice

        with self._lock:
            slc = export_working_memory_slice(self._session(member), anchors, hops=hops)
            s = self._session(lead)
            res = import_slice(s, slc, id_policy)  # atomic: refused whole or one version
            try:
                self.cabinet.flush(s)
            except BaseException:
                self._cache.pop(lead, None)
                raise
        if res.changed:
            text = (
                f"absorbed {len(slc.nodes)} nodes and {len(slc.edges)} edges of {member} "
                f"into {lead} (version {res.version}, policy {id_policy})"
            )
        else:
            text = f"{lead} already holds the slice of {member} (version {res.version} unchanged)"
        return text, {
            "version": res.version,
            "changed": res.changed,
            "created": res.created,
            "matched": res.matched,
            "updated": res.updated,
            "ids": res.ids,
        }

    def ingest(
        self,
        session: str,
        path: str,
        create: bool,
        *,
        roots: Roots | None = None,
        progress: Progress | None = None,
    ) -> tuple[str, dict[str, Any]]:
        from ..ingest import check_ingest_path, ingest_new, ingest_path

        path = (roots or self.roots).check(path, "path")
        check_ingest_path(path)  # before anything is read or written
        with self._lock:
            if create and self._info(check_session_id(session)) is None:
                # stored only once the ingest succeeded: a failure leaves no session behind
                s, results = ingest_new(self.cabinet, session, path, progress=progress)
            else:
                s = self._session(session)
                results = ingest_path(s, path, progress=progress)  # a Commit per part
                self._flush(session, s)
        parts = [r.to_dict() for r in results]
        for part in parts:
            part["warnings"] = part["warnings"][:50]
        text = "\n".join(f"ingested {path} into {session}: {r.summary()}" for r in results)
        return text, {"session": session, "version": s.version, "parts": parts}

    def snap(
        self,
        model: str,
        prefix: str,
        budget: int,
        strict: bool = False,
        *,
        roots: Roots | None = None,
        progress: Progress | None = None,
    ) -> tuple[str, dict[str, Any]]:
        from ..snap import snap

        model = (roots or self.roots).check(model, "model")
        with self._lock:
            try:
                res = snap(
                    self.cabinet, model, prefix, budget=budget, strict=strict, progress=progress
                )
            finally:  # a failed snap may have dropped sessions it had created
                for sid in [
                    s for s in self._cache if s == prefix + "-cat" or s.startswith(prefix + "-")
                ]:
                    self._cache.pop(sid, None)
        text = (
            f"snapped {model} with prefix {prefix}: {res.summary()}; recall "
            f"{res.catalog} with 'REQ rid:<id>' or 'SES' to find an interior"
        )
        text += "".join(f"\nnot ingested: {w}" for w in res.failed)
        out = res.to_dict()
        out["warnings"] = out["warnings"][:50]
        return text, out

    # -- Host Snap (memnet.host): an index is opened once (it follows its refreshes)
    def _host_index(self, index: str | None, roots: Roots | None) -> Any:
        from ..host import default_index_dir, open_index

        where = (
            (roots or self.roots).check(index, "index")
            if index
            else os.fspath(default_index_dir(self.cabinet.info().get("path")))
        )
        if where not in self._indexes:
            self._indexes[where] = open_index(where)
        return self._indexes[where]

    def host_search(
        self, q: str, top: int, index: str | None = None, *, roots: Roots | None = None
    ) -> tuple[str, dict[str, Any]]:
        from ..host.index import check_top, query_words

        query_words(q)
        check_top(top)
        with self._lock:
            hits = self._host_index(index, roots).search(q, top)
        text = (
            "\n".join(f"{h.locator}  {h.title}  ({h.score:.2f})" for h in hits)
            or f"no hits for {q!r}"
        )
        return text, {"hits": [h.to_dict() for h in hits]}

    def host_snap(
        self,
        session: str,
        q: str,
        top: int,
        index: str | None = None,
        *,
        roots: Roots | None = None,
    ) -> tuple[str, dict[str, Any]]:
        from ..host import snap
        from ..host.index import check_top, query_words

        query_words(q)
        check_top(top)
        with self._lock:
            hook = self._host_index(index, roots)
            s = self._session(session)
            res = snap(s, q, hook=hook, top=top)  # one atomic Commit
            self._flush(session, s)
        lines = [
            f"snapped {q!r} into {session}: {res.summary()}; recall it with "
            f"'QRY {' '.join(q.split()[:3])}'"
        ]
        lines += [f"{hd}  {h.locator}" for h, hd in zip(res.hits, res.handles, strict=True)]
        return "\n".join(lines), res.to_dict()

    def create_session(self, session: str) -> tuple[str, dict[str, Any]]:
        with self._lock:
            s = self.cabinet.create(session)
            self._cache.pop(session, None)
        text = f"created session {session} (version {s.version}); commit to it with memnet_commit"
        return text, {"session": session, "version": s.version}


def error_text(e: MemNetError) -> str:
    """``code: message — what to do next``, one line an agent can act on."""
    hint = HINTS.get(e.code)
    text = f"{e.code}: {e.message}"
    if hint is None and e.code not in ("internal",) and e.code in CODES:
        hint = CODES[e.code]
    return f"{text} — {hint}" if hint else text


#: A lone surrogate: what a path that is not UTF-8 holds once decoded. The wire
#: cannot carry one; it is shown as its ``\\u`` escape.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(text: str) -> str:
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` as plain JSON data that the wire can carry."""
    text = json.dumps(d, default=str, ensure_ascii=False)
    if _SURROGATE.search(text):  # the JSON gets an escaped backslash, then u and the digits
        text = _SURROGATE.sub(lambda m: f"\\\\u{ord(m.group()):04x}", text)
    out: dict[str, Any] = json.loads(text)
    return out


def outcome(call: Callable[[], tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any], bool]:
    """``(text, structured content, is_error)`` of one tool call: a
    MemNetError (or an OS error, or any failure, as ``internal``) becomes an
    error result whose text starts with its code."""
    try:
        text, structured = call()
    except (MemNetError, OSError) as e:
        err = os_error(e) if isinstance(e, OSError) else e
    except Exception as e:  # noqa: BLE001 - report, keep serving
        err = MemNetError(f"unexpected failure: {type(e).__name__}: {e}", code="internal")
    else:
        return _text(text), _jsonable(structured), False
    return _text(error_text(err)), {"error": _jsonable(err.to_dict())}, True


def call(
    tools: MemNetTools, spec: ToolSpec, arguments: Any, **extra: Any
) -> tuple[str, dict[str, Any]]:
    """Call ``spec``'s body with ``arguments`` read by the table (and
    ``extra``: the roots and progress the server passes to the file tools)."""
    body: Callable[..., tuple[str, dict[str, Any]]] = getattr(tools, spec.method)
    return body(**check_arguments(spec, arguments), **extra)


__all__ = ["CACHE_SIZE", "MemNetTools", "Progress", "call", "error_text", "outcome"]
