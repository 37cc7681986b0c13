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
``invalid_argument`` result). The bodies are :class:`MemNetTools`
(:mod:`memnet.faces.mcp_bodies`).

A :class:`~memnet.errors.MemNetError` becomes a tool error result (``isError``)
whose text starts with the stable code (``session_not_found: ...``) and whose
structured content is ``{"error": {"code", "message", ...}}``. See ``docs/mcp.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from typing import TYPE_CHECKING, Any, BinaryIO

from .._version import __version__
from ..errors import DependencyMissing, InvalidArgument
from .mcp_bodies import MemNetTools, Progress, call, error_text, outcome
from .mcp_tools import BY_NAME, HINTS, INSTRUCTIONS, listing
from .roots import Roots

if TYPE_CHECKING:  # the SDK is an optional extra
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from ..cabinet import Cabinet

MISSING_EXTRA = "the MCP server needs the extra: pip install 'memnet[mcp]'"
SERVER_NAME = "memnet"
#: The longest line read from stdin (a Δ is capped at 4 MiB of text; JSON
#: escaping can double it). A longer line is read to its end, never held, and
#: dropped as a line that is not a message.
MAX_MESSAGE = 16 << 20
#: How long a file tool waits for the client's roots before it reads with the
#: operator's alone.
ROOTS_WAIT = 10.0
ROOTS_KEY = "memnet-roots"  # our key for the roots request of an InputRequiredResult
PROGRESS_EVERY = 0.25  # seconds between two progress notifications of one call


def _sdk() -> None:
    """Check that the SDK is installed, or raise ``dependency_missing``."""
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        raise DependencyMissing(MISSING_EXTRA) from None


# -- the CLI command ------------------------------------------------------------------
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
    "build_server",
    "call",
    "error_text",
    "outcome",
    "run",
    "serve_stdio",
]
