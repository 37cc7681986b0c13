"""MemNet as an MCP server (``memnet mcp``): the library's verbs as MCP tools over stdio.

The server keeps one :class:`~memnet.Cabinet` open for its lifetime and offers
tools that mirror the Python API:

===========================  ======================================================
``memnet_recall``            ``Session.recall``: the Shape text + its receipt
``memnet_outline``           ``Session.outline``: the census of kinds + its receipt
``memnet_commit``            ``Session.commit`` then ``Cabinet.flush``
``memnet_sessions``          ``Cabinet.sessions``: the catalog
``memnet_create_session``    ``Cabinet.create``
``memnet_absorb``            ``export_working_memory_slice`` + ``import_slice``
``memnet_ingest``            ``memnet.ingest.ingest_path`` then ``Cabinet.flush``
``memnet_snap``              ``memnet.snap.snap`` (Model Snap)
``memnet_host_search``       ``memnet.host.search`` (needs ``memnet[host]``)
``memnet_host_snap``         ``memnet.host.snap`` then ``Cabinet.flush``
===========================  ======================================================

A :class:`~memnet.errors.MemNetError` becomes a tool error result (``isError``)
whose text starts with the stable code (``session_not_found: ...``) and whose
structured content is ``{"error": {"code", "message", ...}}``.

``memnet mcp`` serves them over stdio through :mod:`memnet.faces.mcp_stdio`,
which needs no SDK. :func:`build_server` offers the same tools as an SDK
``MCPServer`` for embedding; the official ``mcp`` SDK (2.x) is the optional extra
it needs (``pip install 'memnet[mcp]'``), imported by it alone. See ``docs/mcp.md``.
"""

import argparse
import json
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from .._version import __version__
from ..errors import (
    CODES,
    DependencyMissing,
    InvalidArgument,
    MemNetError,
    SessionNotFound,
    os_error,
)
from ..ids import check_session_id
from ..limits import LIMITS
from .mcp_text import (
    ABSORB_DOC,
    COMMIT_DOC,
    CREATE_DOC,
    HINTS,
    HOST_SEARCH_DOC,
    HOST_SNAP_DOC,
    INGEST_DOC,
    INSTRUCTIONS,
    OUTLINE_DOC,
    RECALL_DOC,
    SESSIONS_DOC,
    SNAP_DOC,
)
from .roots import Roots

if TYPE_CHECKING:
    from ..session import Session

if TYPE_CHECKING:  # the SDK is an optional extra
    from mcp.server.mcpserver import MCPServer

    from ..cabinet import Cabinet

MISSING_EXTRA = ("an MCP server object for the SDK (build_server) needs the extra: "
                 "pip install 'memnet[mcp]'")
SERVER_NAME = "memnet"
CACHE_SIZE = 16  # hydrated sessions kept between tool calls



def _sdk() -> Any:
    """Import the SDK pieces this face needs, or raise ``dependency_missing``.

    (This module has no ``from __future__ import annotations``: the SDK reads the
    tool functions' annotations, which refer to names local to build_server.)"""
    try:
        import mcp.types as mtypes
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise DependencyMissing(MISSING_EXTRA) from None
    return MCPServer, mtypes


# -- the CLI hooks -------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``memnet mcp``: ``--root DIR`` (repeatable), the directories
    its file tools may read; the server speaks MCP over stdin/stdout and logs
    to stderr."""
    from .mcp_stdio import load_tools

    parser.add_argument("--root", action="append", default=[], metavar="DIR",
                        help="a directory the tools that read files (ingest, snap, host "
                             "index) may read, with all below it; repeat for several. "
                             "Without one, only the roots the client lists; with neither, "
                             "those tools are off")
    names = ", ".join(t["name"] for t in load_tools())
    parser.epilog = (f"Serves over stdio until the client closes stdin. Tools: {names} "
                     "(docs/mcp.md).")


def run(args: argparse.Namespace) -> int:
    """``memnet mcp``: serve the cabinet at ``args.home`` over stdio until EOF
    (through :mod:`memnet.faces.mcp_stdio`, which needs no SDK)."""
    from ..cabinet import Cabinet
    from .mcp_stdio import serve_stdio

    if sys.stdin is None or sys.stdout is None:   # started with `<&-` or `>&-`
        raise InvalidArgument("memnet mcp reads requests on stdin and answers on stdout, "
                              "and one of them is closed")
    roots = Roots(getattr(args, "root", None) or ())  # a bad --root fails before the cabinet
    cab = Cabinet.open(getattr(args, "home", None))
    try:
        try:
            serve_stdio(cab, roots=roots)
        except KeyboardInterrupt:  # Ctrl-C is how a person stops a stdio server
            pass
    finally:
        cab.close()
    return 0


# -- the tools ---------------------------------------------------------------------------
class MemNetTools:
    """The tool bodies, independent of the SDK: each returns ``(text, structured)``
    or raises :class:`MemNetError`.

    Hydrated sessions are cached, but every call first checks the catalog: a
    session another writer moved on (or dropped and created again) is opened
    afresh, so a recall sees the latest work. A flush that still loses the race
    raises ``conflict``; the cached copy is dropped so the next call reloads.
    """

    def __init__(self, cabinet: "Cabinet", *, cache_size: int = CACHE_SIZE,
                 roots: Roots | None = None) -> None:
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

    def _session(self, sid: str) -> "Session":
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

    def _flush(self, sid: str, s: "Session") -> None:
        """Store what ``s`` committed; a copy the cabinet refused is never served again."""
        try:
            if s.dirty:
                self.cabinet.flush(s)
        except BaseException:
            self._cache.pop(sid, None)
            raise

    def recall(self, session: str, q: str, *, k: int, max_rows: int | None, limit: int | None,
               fanout: int, view: str, laws: bool, since: str | None = None,
               max_tokens: int | None = None) -> tuple[str, dict[str, Any]]:
        with self._lock:
            shape = self._session(session).recall(q, k=k, max_rows=max_rows, limit=limit,
                                                  fanout=fanout, view=view, laws=laws,
                                                  since=since, max_tokens=max_tokens)
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
        out: dict[str, Any] = {"version": res.version, "ids": dict(res.ids),
                               "changed": res.changed}
        if res.advice:
            out["advice"] = res.advice
        if res.changed:
            minted = ", ".join(f"{k}={v}" for k, v in sorted(res.ids.items()))
            text = (f"committed {session} version {res.version}: +{res.created} "
                    f"~{res.updated} -{res.recycled}"
                    + (f"; handles {minted}" if minted else ""))
        else:
            text = f"nothing changed; {session} stays at version {res.version}"
        if res.advice:
            text += f"\nadvice: {res.advice}"
        return text, out

    def sessions(self) -> tuple[str, dict[str, Any]]:
        with self._lock:
            rows = [i.to_dict() for i in self.cabinet.sessions()]
        if rows:
            text = "\n".join(f"{r['id']}  v{r['version']}  {r['nodes']} nodes  "
                             f"{r['edges']} edges  {r['bytes']} bytes" for r in rows)
        else:
            text = "no sessions yet: create one with memnet_create_session"
        return text, {"sessions": rows}

    def absorb(self, lead: str, member: str, anchors: list[str], id_policy: str,
               hops: int) -> tuple[str, dict[str, Any]]:
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
        text = (f"absorbed {len(slc.nodes)} nodes and {len(slc.edges)} edges of {member} into "
                f"{lead} (version {res.version}, policy {id_policy})")
        return text, {"version": res.version, "created": res.created, "ids": res.ids}

    def ingest(self, session: str, path: str, create: bool) -> tuple[str, dict[str, Any]]:
        from ..ingest import check_ingest_path, ingest_new, ingest_path

        path = self.roots.check(path, "path")
        check_ingest_path(path)  # before anything is read or written
        with self._lock:
            if create and self._info(check_session_id(session)) is None:
                # stored only once the ingest succeeded: a failure leaves no session behind
                s, results = ingest_new(self.cabinet, session, path)
            else:
                s = self._session(session)
                results = ingest_path(s, path)  # each part one atomic Commit
                self._flush(session, s)
        parts = [r.to_dict() for r in results]
        for part in parts:
            part["warnings"] = part["warnings"][:50]
        text = "\n".join(f"ingested {path} into {session}: {r.summary()}" for r in results)
        return text, {"session": session, "version": s.version, "parts": parts}

    def snap(self, model: str, prefix: str, budget: int,
             strict: bool = False) -> tuple[str, dict[str, Any]]:
        from ..snap import snap

        model = self.roots.check(model, "model")
        with self._lock:
            try:
                res = snap(self.cabinet, model, prefix, budget=budget, strict=strict)
            finally:  # a failed snap may have dropped sessions it had created
                for sid in [s for s in self._cache if s == prefix + "-cat" or
                            s.startswith(prefix + "-")]:
                    self._cache.pop(sid, None)
        text = (f"snapped {model} with prefix {prefix}: {res.summary()}; recall "
                f"{res.catalog} with 'REQ rid:<id>' or 'SES' to find an interior")
        text += "".join(f"\nnot ingested: {w}" for w in res.failed)
        out = res.to_dict()
        out["warnings"] = out["warnings"][:50]
        return text, out

    # -- Host Snap (memnet.host): an index is opened once (it follows its refreshes)
    def _host_index(self, index: str | None) -> Any:
        from ..host import default_index_dir, open_index

        where = self.roots.check(index, "index") if index else \
            os.fspath(default_index_dir(self.cabinet.info().get("path")))
        if where not in self._indexes:
            self._indexes[where] = open_index(where)
        return self._indexes[where]

    def host_search(self, q: str, top: int, index: str | None) -> tuple[str, dict[str, Any]]:
        from ..host.index import check_top, query_words

        query_words(q)
        check_top(top)
        with self._lock:
            hits = self._host_index(index).search(q, top)
        text = "\n".join(f"{h.locator}  {h.title}  ({h.score:.2f})" for h in hits) or \
            f"no hits for {q!r}"
        return text, {"hits": [h.to_dict() for h in hits]}

    def host_snap(self, session: str, q: str, top: int, index: str | None
                  ) -> tuple[str, dict[str, Any]]:
        from ..host import snap
        from ..host.index import check_top, query_words

        query_words(q)
        check_top(top)
        with self._lock:
            hook = self._host_index(index)
            s = self._session(session)
            res = snap(s, q, hook=hook, top=top)  # one atomic Commit
            self._flush(session, s)
        lines = [f"snapped {q!r} into {session}: {res.summary()}; recall it with "
                 f"'QRY {' '.join(q.split()[:3])}'"]
        lines += [f"{hd}  {h.locator}" for h, hd in zip(res.hits, res.handles, strict=True)]
        return "\n".join(lines), res.to_dict()

    def create_session(self, session: str) -> tuple[str, dict[str, Any]]:
        with self._lock:
            s = self.cabinet.create(session)
            self._cache.pop(session, None)
        text = (f"created session {session} (version {s.version}); commit to it with "
                "memnet_commit")
        return text, {"session": session, "version": s.version}


def error_text(e: MemNetError) -> str:
    """``code: message — what to do next``, one line an agent can act on."""
    hint = HINTS.get(e.code)
    text = f"{e.code}: {e.message}"
    if hint is None and e.code not in ("internal",) and e.code in CODES:
        hint = CODES[e.code]
    return f"{text} — {hint}" if hint else text


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(d, default=str, ensure_ascii=False))
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
        return text, _jsonable(structured), False
    return error_text(err), {"error": _jsonable(err.to_dict())}, True


#: Each tool's call on the tool bodies, from its (checked) arguments by name.
CALLS: dict[str, Callable[[MemNetTools, dict[str, Any]], tuple[str, dict[str, Any]]]] = {
    "memnet_recall": lambda t, a: t.recall(
        a["session"], a["q"], k=a["k"], max_rows=a["max_rows"], limit=a["limit"],
        fanout=a["fanout"], view=a["view"], laws=a["laws"], since=a["since"],
        max_tokens=a.get("max_tokens")),
    "memnet_outline": lambda t, a: t.outline(a["session"], view=a["view"]),
    "memnet_commit": lambda t, a: t.commit(a["session"], a["delta"]),
    "memnet_sessions": lambda t, a: t.sessions(),
    "memnet_create_session": lambda t, a: t.create_session(a["session"]),
    "memnet_absorb": lambda t, a: t.absorb(a["lead"], a["member"], a["anchors"],
                                           a["id_policy"], a["hops"]),
    "memnet_ingest": lambda t, a: t.ingest(a["session"], a["path"], a["create"]),
    "memnet_snap": lambda t, a: t.snap(a["model"], a["prefix"], a["budget"], a["strict"]),
    "memnet_host_search": lambda t, a: t.host_search(a["q"], a["top"], a["index"] or None),
    "memnet_host_snap": lambda t, a: t.host_snap(a["session"], a["q"], a["top"],
                                                 a["index"] or None),
}



# -- the server ----------------------------------------------------------------------------
def build_server(cabinet: "Cabinet", *, name: str = SERVER_NAME,
                 roots: Roots | None = None) -> "MCPServer":
    """An ``MCPServer`` whose tools work on ``cabinet`` (kept open by the caller);
    its file tools read only below ``roots`` (none: they are off)."""
    _sdk()  # a clear dependency_missing when the extra is not installed
    import mcp.types as mtypes
    from mcp.server.mcpserver import MCPServer
    from pydantic import Field

    tools = MemNetTools(cabinet, roots=roots)
    server = MCPServer(
        name=name, version=__version__, title="MemNet", instructions=INSTRUCTIONS,
        log_level="WARNING")

    def result(tool: str, args: dict[str, Any]) -> mtypes.CallToolResult:
        text, structured, is_error = outcome(lambda: CALLS[tool](tools, args))
        return mtypes.CallToolResult(content=[mtypes.TextContent(type="text", text=text)],
                                     structured_content=structured, is_error=is_error)

    read_only = mtypes.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                       idempotent_hint=True, open_world_hint=False)
    Sid = Annotated[str, Field(description="session id, e.g. 'work' (memnet_sessions "
                                           "lists them)")]

    def memnet_recall(
        session: Sid,
        q: Annotated[str, Field(description="codebook tokens (`TSK status:open pricing`) or "
                                            "`MATCH (n:TSK) WHERE n.title CONTAINS 'x' "
                                            "LIMIT 3`; empty for the outline")] = "",
        k: Annotated[int, Field(description=f"hops to walk from the seeds "
                                            f"(0-{LIMITS.k_max})")] = LIMITS.k,
        max_rows: Annotated[int | None, Field(description=f"most rows (1-{LIMITS.max_rows_max}; "
                                                          f"default {LIMITS.max_rows})")]
        = None,
        limit: Annotated[int | None, Field(description=f"most seeds (1-{LIMITS.limit_max}; "
                                                       f"default: {LIMITS.limit}, more as room "
                                                       "allows)")] = None,
        fanout: Annotated[int, Field(description=f"most neighbours walked per node "
                                                 f"(1-{LIMITS.fanout_max})")] = LIMITS.fanout,
        view: Annotated[str, Field(description="interior (all properties) or shell (key "
                                               "properties only)")] = "interior",
        laws: Annotated[bool, Field(description="include the LAW rules that apply")] = True,
        since: Annotated[str | None, Field(description="the etag of a Shape of this q (same "
                                                       "options) you hold: answer only what "
                                                       "changed since")] = None,
        max_tokens: Annotated[int | None, Field(description="stop the Shape before this many "
                                                            "tokens")] = None,
    ) -> mtypes.CallToolResult:
        return result("memnet_recall", locals())

    def memnet_outline(
        session: Sid,
        view: Annotated[str, Field(description="shell (key properties, default) or interior "
                                               "(all properties) for the exemplars")] = "shell",
    ) -> mtypes.CallToolResult:
        return result("memnet_outline", locals())

    def memnet_commit(
        session: Sid,
        delta: Annotated[str, Field(description="shaped GQL: INSERT (t:TSK {title: 'x'}) / "
                                                "SET n3.status = 'done' / REMOVE / DELETE / "
                                                "SETTLE")],
    ) -> mtypes.CallToolResult:
        return result("memnet_commit", locals())

    def memnet_sessions() -> mtypes.CallToolResult:
        return result("memnet_sessions", {})

    def memnet_create_session(
        session: Annotated[str, Field(description="new session id: 1-64 characters from "
                                                  "a-z, 0-9 and '-'")],
    ) -> mtypes.CallToolResult:
        return result("memnet_create_session", locals())

    def memnet_absorb(
        lead: Annotated[str, Field(description="session that takes the slice in")],
        member: Annotated[str, Field(description="session the slice comes from")],
        anchors: Annotated[list[str], Field(description="node handles of `member` to build "
                                                        "the slice around, e.g. ['na5']")],
        id_policy: Annotated[str, Field(description="remint (default), keep or reject")]
        = "remint",
        hops: Annotated[int, Field(description="hops from the anchors (0-6)")] = 2,
    ) -> mtypes.CallToolResult:
        return result("memnet_absorb", locals())

    def memnet_ingest(
        session: Sid,
        path: Annotated[str, Field(description="a directory or .sysml file inside the "
                                               "server's roots")],
        create: Annotated[bool, Field(description="create the session first if it does not "
                                                  "exist")] = False,
    ) -> mtypes.CallToolResult:
        return result("memnet_ingest", locals())

    def memnet_snap(
        model: Annotated[str, Field(description="a .sysml file or a directory of them, inside "
                                                "the server's roots")],
        prefix: Annotated[str, Field(description="session id prefix: <prefix>-cat and "
                                                 "<prefix>-1..k")],
        budget: Annotated[int, Field(description="most rows in one interior (default M)")]
        = LIMITS.max_rows,
        strict: Annotated[bool, Field(description="fail on the first file that does not "
                                                  "parse, writing nothing (default: leave "
                                                  "it out and list it)")] = False,
    ) -> mtypes.CallToolResult:
        return result("memnet_snap", locals())

    Index = Annotated[str, Field(description="host index directory inside the server's roots "
                                             "(default: host-index in the MemNet home)")]
    Top = Annotated[int, Field(description="most hits (1-100)")]

    def memnet_host_search(
        q: Annotated[str, Field(description="words to search for, e.g. 'parse a config "
                                            "file'")],
        top: Top = 10, index: Index = "",
    ) -> mtypes.CallToolResult:
        return result("memnet_host_search", locals())

    def memnet_host_snap(
        session: Sid,
        q: Annotated[str, Field(description="words to search for")],
        top: Top = 10, index: Index = "",
    ) -> mtypes.CallToolResult:
        return result("memnet_host_snap", locals())

    def writes(*, destructive: bool, idempotent: bool) -> Any:
        return mtypes.ToolAnnotations(read_only_hint=False, destructive_hint=destructive,
                                      idempotent_hint=idempotent, open_world_hint=False)

    server.add_tool(memnet_recall, title="Recall a Shape", description=RECALL_DOC,
                    annotations=read_only)
    server.add_tool(memnet_outline, title="Outline a session", description=OUTLINE_DOC,
                    annotations=read_only)
    server.add_tool(memnet_commit, title="Commit a delta", description=COMMIT_DOC,
                    annotations=writes(destructive=True, idempotent=False))
    server.add_tool(memnet_sessions, title="List sessions", description=SESSIONS_DOC,
                    annotations=read_only)
    server.add_tool(memnet_create_session, title="Create a session", description=CREATE_DOC,
                    annotations=writes(destructive=False, idempotent=False))
    server.add_tool(memnet_ingest, title="Ingest files", description=INGEST_DOC,
                    annotations=writes(destructive=True, idempotent=True))
    server.add_tool(memnet_snap, title="Model Snap", description=SNAP_DOC,
                    annotations=writes(destructive=True, idempotent=True))
    server.add_tool(memnet_absorb, title="Absorb a slice", description=ABSORB_DOC,
                    annotations=writes(destructive=False, idempotent=False))
    server.add_tool(memnet_host_search, title="Search the host index",
                    description=HOST_SEARCH_DOC, annotations=read_only)
    server.add_tool(memnet_host_snap, title="Host Snap", description=HOST_SNAP_DOC,
                    annotations=writes(destructive=True, idempotent=True))
    server.memnet_tools = tools  # type: ignore[attr-defined]  # for tests and embedding
    return server


def sdk_tool_list(cabinet: "Cabinet") -> list[dict[str, Any]]:
    """The tools as the SDK's server lists them (``tools/list``), as JSON."""
    import anyio
    from mcp import Client

    async def listing() -> list[dict[str, Any]]:
        async with Client(build_server(cabinet)) as client:
            tools = (await client.list_tools()).tools
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    return anyio.run(listing)


def write_tool_list(path: str) -> None:
    """Write :func:`sdk_tool_list` (of an empty in-memory cabinet) to ``path``:
    ``mcp_tools.json``, which ``memnet mcp`` serves without the SDK."""
    from ..cabinet import Cabinet

    with Cabinet.open(backend="memory") as cab:
        tools = sdk_tool_list(cab)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tools, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")


__all__ = ["CALLS", "HINTS", "INSTRUCTIONS", "MISSING_EXTRA", "MemNetTools", "add_arguments",
           "build_server", "error_text", "outcome", "run", "sdk_tool_list", "write_tool_list"]
