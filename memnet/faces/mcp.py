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

The protocol is the official ``mcp`` SDK's (2.x, the optional extra
``pip install 'memnet[mcp]'``; without it ``memnet mcp`` is
``dependency_missing``): its low-level ``Server`` answers the handshake,
``tools/list`` and ``tools/call`` over its stdio transport. The tools are
declared once, in the table of :mod:`memnet.faces.mcp_tools`: the listing is
written from it and a call's arguments are read by it (a wrong one is an
``invalid_argument`` result). The bodies are :class:`MemNetTools`.

A :class:`~memnet.errors.MemNetError` becomes a tool error result (``isError``)
whose text starts with the stable code (``session_not_found: ...``) and whose
structured content is ``{"error": {"code", "message", ...}}``. See ``docs/mcp.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

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
from .mcp_tools import BY_NAME, HINTS, INSTRUCTIONS, TOOLS, ToolSpec, check_arguments, listing
from .roots import Roots

if TYPE_CHECKING:  # the SDK is an optional extra
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from ..cabinet import Cabinet
    from ..session import Session

MISSING_EXTRA = "the MCP server needs the extra: pip install 'memnet[mcp]'"
SERVER_NAME = "memnet"
CACHE_SIZE = 16  # hydrated sessions kept between tool calls
#: The longest line read from stdin (a Δ is capped at 4 MiB of text; JSON
#: escaping can double it). A longer line is read to its end, never held, and
#: dropped as a line that is not a message.
MAX_MESSAGE = 16 << 20
#: How long a file tool waits for the client's roots before it reads with the
#: operator's alone.
ROOTS_WAIT = 10.0
ROOTS_KEY = "memnet-roots"  # our key for the roots request of an InputRequiredResult
PROGRESS_EVERY = 0.25  # seconds between two progress notifications of one call

Progress = Callable[[int, int], None]


def _sdk() -> None:
    """Check that the SDK is installed, or raise ``dependency_missing``."""
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        raise DependencyMissing(MISSING_EXTRA) from None


# -- the CLI hooks -------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``memnet mcp``: ``--root DIR`` (repeatable), the directories
    its file tools may read; the server speaks MCP over stdin/stdout and logs
    to stderr."""
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory the tools that read files (ingest, snap, host "
        "index) may read, with all below it; repeat for several. "
        "Without one, only the roots the client lists; with neither, "
        "those tools are off",
    )
    parser.epilog = (
        f"Serves over stdio until the client closes stdin. Tools: "
        f"{', '.join(t.name for t in TOOLS)} (docs/mcp.md)."
    )


def run(args: argparse.Namespace) -> int:
    """``memnet mcp``: serve the cabinet at ``args.home`` over stdio until EOF."""
    if sys.stdin is None or sys.stdout is None:  # started with `<&-` or `>&-`
        raise InvalidArgument(
            "memnet mcp reads requests on stdin and answers on stdout, and one of them is closed"
        )
    roots = Roots(getattr(args, "root", None) or ())  # a bad --root fails before the cabinet
    _sdk()
    import anyio

    from ..cabinet import Cabinet

    cab = Cabinet.open(getattr(args, "home", None))
    try:
        anyio.run(serve_stdio, build_server(cab, roots=roots))
    except KeyboardInterrupt:  # Ctrl-C is how a person stops a stdio server
        pass
    finally:
        cab.close()
    return 0


class CappedLines(io.TextIOWrapper):
    """A byte stream read as UTF-8 lines of at most ``limit`` characters (bad
    bytes replaced, as the SDK's transport does). A longer line is read to its
    end without being kept and comes out as a blank line, which the
    transport drops as it drops any line that is not a message. Closing it
    leaves ``stream`` open (it is the process's stdin)."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_MESSAGE) -> None:
        super().__init__(stream, encoding="utf-8", errors="replace")
        self.limit = limit

    def close(self) -> None:
        with contextlib.suppress(ValueError):  # detached already
            self.detach()

    def readline(self, size: int = -1, /) -> str:  # type: ignore[override]
        line = super().readline(self.limit + 1)
        if len(line) > self.limit and not line.endswith("\n"):
            while line and not line.endswith("\n"):
                line = super().readline(1 << 20)
            return "\n"
        return line


async def serve_stdio(server: Server[Any], stdin: BinaryIO | None = None) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes (the SDK's stdio
    transport, reading lines through :class:`CappedLines`)."""
    import anyio
    from mcp.server.stdio import stdio_server

    lines = CappedLines(stdin or sys.stdin.buffer)
    async with stdio_server(stdin=anyio.wrap_file(lines)) as (read, write):
        await server.run(read, write, server.create_initialization_options())


# -- the tools ---------------------------------------------------------------------------
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


# -- the server ----------------------------------------------------------------------------
def build_server(
    cabinet: Cabinet, *, name: str = SERVER_NAME, roots: Roots | None = None
) -> Server[Any]:
    """The SDK ``Server`` of the tools on ``cabinet`` (kept open by the
    caller); its file tools read only below ``roots`` and, when the client
    offers them, the client's roots (none at all: they are off).
    ``mcp.Client(server)`` talks to it in process; :func:`serve_stdio` serves it."""
    _sdk()
    import anyio
    import mcp.types as mt
    from mcp.server.lowlevel import Server

    tools = MemNetTools(cabinet, roots=roots)
    listed = mt.ListToolsResult(tools=[mt.Tool.model_validate(t) for t in listing()])

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> mt.ListToolsResult:
        return listed

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
    ) -> mt.CallToolResult | mt.InputRequiredResult:
        spec = BY_NAME.get(params.name)
        if spec is None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=mt.INVALID_PARAMS, message=f"unknown tool: {params.name!r}")
        extra: dict[str, Any] = {}
        if spec.path_arg is not None:
            answer = await _client_roots(ctx, params)
            if isinstance(answer, mt.InputRequiredResult):
                return answer
            extra["roots"] = tools.roots.narrowed(answer)
        if spec.reports_progress:
            extra["progress"] = _progress(ctx)
        text, structured, is_error = await anyio.to_thread.run_sync(
            lambda: outcome(lambda: call(tools, spec, params.arguments, **extra))
        )
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=is_error,
        )

    server: Server[Any] = Server(
        name,
        version=__version__,
        title="MemNet",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.memnet_tools = tools  # type: ignore[attr-defined]  # for tests and embedding
    return server


async def _client_roots(ctx: ServerRequestContext[Any], params: Any) -> Any:
    """The client's answer to ``roots/list`` as JSON, or ``None`` when it
    declared no roots capability, answered with an error, or not within
    :data:`ROOTS_WAIT`. On a 2026-07-28 connection, where a server asks only by
    answering, an ``InputRequiredResult`` asking for them (the client calls
    again with the answer)."""
    import anyio
    import mcp.types as mt
    from mcp.shared.exceptions import MCPError
    from mcp.shared.message import ServerMessageMetadata
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    caps = ctx.session.client_capabilities
    if caps is None or caps.roots is None:
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (params.input_responses or {}).get(ROOTS_KEY)
        if answer is None:
            return mt.InputRequiredResult(input_requests={ROOTS_KEY: mt.ListRootsRequest()})
        return answer.model_dump(mode="json", by_alias=True)
    with anyio.move_on_after(ROOTS_WAIT):
        try:
            res = await ctx.session.send_request(
                mt.ListRootsRequest(),
                mt.ListRootsResult,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except (MCPError, ValueError):  # an error answer, or one that is not a roots list
            return None
        return res.model_dump(mode="json", by_alias=True)
    return None


def _progress(ctx: ServerRequestContext[Any]) -> Progress:
    """A ``progress(done, total)`` for a tool body (run on a worker thread)
    that reports to the client, at most once per :data:`PROGRESS_EVERY`
    seconds and at the end (the SDK sends nothing to a call that asked for no
    progress)."""
    import anyio.from_thread

    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY and done != total:
            return
        last[0] = now
        with contextlib.suppress(Exception):  # advisory: a client gone never fails the work
            anyio.from_thread.run(ctx.session.report_progress, float(done), float(total) or None)

    return progress


__all__ = [
    "CappedLines",
    "HINTS",
    "INSTRUCTIONS",
    "MAX_MESSAGE",
    "MISSING_EXTRA",
    "MemNetTools",
    "add_arguments",
    "build_server",
    "call",
    "error_text",
    "outcome",
    "run",
    "serve_stdio",
]
