"""``memnet mcp``: the MCP tools over stdio, without the SDK.

An MCP client on stdio exchanges JSON-RPC 2.0 messages, one per line. The
handshake revisions of the protocol (2024-11-05 to 2025-11-25) need only a few
methods from a server that offers tools: ``initialize``, ``ping``,
``tools/list`` and ``tools/call``, plus two notifications to accept. This
module answers them itself, so a client's ``initialize`` is answered in the
time it takes to start Python and read the tool list, where loading the SDK
(pydantic models, anyio, starlette) took over a second.

The tools are the ones :func:`memnet.faces.mcp.build_server` registers with
the SDK: their names, descriptions, input schemas and annotations are kept in
``mcp_tools.json`` beside this module, written from the SDK's own listing
(:func:`memnet.faces.mcp.write_tool_list`; a test checks the two agree), and
the calls go to the same :class:`~memnet.faces.mcp.MemNetTools` bodies.
Arguments are checked against the schema: a wrong type, a missing or unknown
argument is an ``invalid_argument`` tool error naming it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from .._version import __version__
from ..errors import InvalidArgument
from .mcp import CALLS, INSTRUCTIONS, SERVER_NAME, MemNetTools, outcome
from .roots import FILE_TOOLS, Roots, roots_request

if TYPE_CHECKING:
    from ..cabinet import Cabinet

#: The revisions reachable through ``initialize`` that this server speaks; a
#: client asking for another one is offered the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
TOOLS_FILE = os.path.join(os.path.dirname(__file__), "mcp_tools.json")

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603


def load_tools() -> list[dict[str, Any]]:
    """The tool list as ``tools/list`` returns it."""
    with open(TOOLS_FILE, encoding="utf-8") as f:
        tools: list[dict[str, Any]] = json.load(f)
    return tools


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    if "anyOf" in schema:
        return any(_type_ok(value, s) for s in schema["anyOf"])
    t = schema.get("type")
    if t == "string":
        return type(value) is str
    if t == "integer":
        return type(value) is int
    if t == "boolean":
        return type(value) is bool
    if t == "null":
        return value is None
    if t == "array":
        return type(value) is list and all(_type_ok(x, schema.get("items", {})) for x in value)
    return True


_INT_TEXT = re.compile(r"\s*-?[0-9]{1,18}\s*")


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
    """What a lenient client sends for a number or a flag (``"5"``, ``"true"``)
    read as the schema's type (ASCII digits only); anything else unchanged,
    for the type check to refuse."""
    if type(value) is str and schema.get("type") == "integer" and _INT_TEXT.fullmatch(value):
        return int(value)
    if type(value) is str and schema.get("type") == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def check_arguments(tool: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """``arguments`` checked against the tool's input schema, defaults filled in."""
    name = tool["name"]
    schema = tool["inputSchema"]
    props: dict[str, Any] = schema.get("properties", {})
    if arguments is None:
        arguments = {}
    if type(arguments) is not dict:
        raise InvalidArgument(f"{name}: arguments must be an object")
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise InvalidArgument(f"{name}: unknown argument {unknown[0]!r} (it takes "
                              f"{', '.join(props) or 'none'})")
    out: dict[str, Any] = {}
    for key, spec in props.items():
        if key not in arguments:
            if key in schema.get("required", ()):
                raise InvalidArgument(f"{name}: argument {key!r} is required")
            out[key] = spec.get("default")
            continue
        value = _coerce(arguments[key], spec)
        if not _type_ok(value, spec):
            want = spec.get("type") or " or ".join(s.get("type", "?") for s in spec.get(
                "anyOf", ()))
            raise InvalidArgument(f"{name}: argument {key!r} must be {want}, not "
                                  f"{type(value).__name__} {json.dumps(value)[:40]}")
        out[key] = value
    return out


class StdioServer:
    """One client's session: JSON-RPC messages in, answers out."""

    def __init__(self, tools: MemNetTools) -> None:
        self.tools = tools
        self.listing = load_tools()
        self.by_name = {t["name"]: t for t in self.listing}
        # the client's roots (faces/roots.py): asked for when it offers them;
        # a call of a file tool waits for the answer
        self.client_roots = False
        self.asked: str | None = None     # id of the roots/list request on its way
        self.asks = 0
        self.waiting: list[Any] = []
        self.outbox: list[dict[str, Any]] = []

    def ask_roots(self) -> None:
        if self.client_roots:
            self.asks += 1
            self.asked = f"memnet-roots-{self.asks}"
            self.outbox.append(roots_request(self.asked))

    def take_roots(self, msg: dict[str, Any]) -> None:
        """A client's answer to our roots/list (an error answer: no client roots)."""
        if msg.get("id") == self.asked:
            self.asked = None
            self.tools.roots.set_client(msg.get("result"))

    # -- methods ---------------------------------------------------------------------
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        caps = params.get("capabilities")
        self.client_roots = type(caps) is dict and type(caps.get("roots")) is dict
        return {"protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": SERVER_NAME, "title": "MemNet", "version": __version__},
                "instructions": INSTRUCTIONS}

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        tool = self.by_name.get(name) if type(name) is str else None
        if tool is None:
            raise _RpcError(INVALID_PARAMS, f"unknown tool: {name!r}")

        def call() -> tuple[str, dict[str, Any]]:
            return CALLS[tool["name"]](self.tools, check_arguments(tool, params.get("arguments")))

        text, structured, is_error = outcome(call)
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured,
                "isError": is_error}

    def answer(self, msg: Any) -> dict[str, Any] | None:
        """The reply to one message (None for a notification)."""
        if type(msg) is not dict or msg.get("jsonrpc") != "2.0" or type(
                msg.get("method")) is not str:
            mid = msg.get("id") if type(msg) is dict else None
            return _error(mid, INVALID_REQUEST, "not a JSON-RPC 2.0 request")
        method, mid = msg["method"], msg.get("id")
        if "id" not in msg:  # a notification (initialized, cancelled, ...): no answer
            if method in ("notifications/initialized", "notifications/roots/list_changed"):
                self.ask_roots()
            return None
        if mid is not None and type(mid) is not str and type(mid) is not int:
            # JSON-RPC ids are strings, integers or null (a float, NaN or an
            # object is not echoed: a strict client could not read it back)
            return _error(None, INVALID_REQUEST, "the id must be a string, an integer or null")
        params = msg.get("params") or {}
        if type(params) is not dict:
            return _error(mid, INVALID_PARAMS, "params must be an object")
        try:
            if method == "initialize":
                result = self.initialize(params)
            elif method == "ping":
                result = {}
            elif method == "tools/list":
                result = {"tools": self.listing}
            elif method == "tools/call":
                result = self.call_tool(params)
            elif method in ("resources/list", "resources/templates/list", "prompts/list"):
                # not offered (no capability is declared), but some clients ask anyway
                key = method.split("/")[0] if method != "resources/templates/list" \
                    else "resourceTemplates"
                result = {key: []}
            else:
                return _error(mid, METHOD_NOT_FOUND, "Method not found", method)
        except _RpcError as e:
            return _error(mid, e.code, e.message)
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    def serve(self, lines: Iterable[bytes | str], out: IO[bytes]) -> None:
        """Answer each message of ``lines`` on ``out`` (UTF-8, a line each).
        A line that is not UTF-8 or not JSON gets a parse error; one marked
        too long (see :func:`read_lines`) an invalid-request error. A call of
        a file tool that comes while the client's roots are asked for waits
        for them (at the end of the input, it is answered without them)."""
        for line in lines:
            if line is TOO_LONG:
                self._send(_error(None, INVALID_REQUEST, f"message over {MAX_MESSAGE:,} bytes"),
                           out)
                continue
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):  # bad JSON, not UTF-8, nested too deep
                self._send(_error(None, PARSE_ERROR, "Parse error"), out)
                continue
            if _is_response(msg):   # the client's answer to our roots/list
                self.take_roots(msg)
                if self.asked is None:
                    held, self.waiting = self.waiting, []
                    for m in held:
                        self._send(self._answer(m), out)
            elif self.asked is not None and _file_call(msg):
                self.waiting.append(msg)
            else:
                self._send(self._answer(msg), out)
        for m in self.waiting:
            self._send(self._answer(m), out)

    def _answer(self, msg: Any) -> dict[str, Any] | None:
        try:
            return self.answer(msg)
        except Exception as e:  # a fault of ours: answer it, serve on
            mid = msg.get("id") if type(msg) is dict else None
            return _error(mid if type(mid) in (str, int) else None,
                          INTERNAL_ERROR, f"internal error: {type(e).__name__}")

    def _send(self, reply: dict[str, Any] | None, out: IO[bytes]) -> None:
        """Write our pending requests, then ``reply`` (if any)."""
        for request in self.outbox:
            out.write(_encode(request) + b"\n")
        self.outbox.clear()
        if reply is not None:
            out.write(_encode(reply) + b"\n")
        out.flush()


def _encode(reply: dict[str, Any]) -> bytes:
    """A reply as one line of UTF-8 JSON. Text that cannot be UTF-8 (a lone
    surrogate a client sent, echoed back) is written as a ``\\u`` escape;
    a number JSON cannot hold (NaN, infinity) never reaches the wire."""
    try:
        return json.dumps(reply, ensure_ascii=False, allow_nan=False).encode()
    except UnicodeEncodeError:
        return json.dumps(reply, allow_nan=False).encode()
    except ValueError:  # pragma: no cover - replies are built from checked values
        return json.dumps(_error(reply.get("id"), INTERNAL_ERROR,
                                 "internal error: a reply held a number JSON cannot hold")
                          ).encode()


#: The longest message read (a Δ is capped at 4 MiB of text; JSON escaping can
#: double it). A longer line is skipped to its end and answered with an error.
MAX_MESSAGE = 16 << 20
TOO_LONG = b"\x00too long"


def read_lines(stream: IO[bytes], limit: int = MAX_MESSAGE) -> Iterator[bytes]:
    """The lines of ``stream``, each at most ``limit`` bytes; in place of a
    longer one, :data:`TOO_LONG` (its bytes are read and dropped, never held)."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(1 << 20)
            yield TOO_LONG
        else:
            yield line


def _is_response(msg: Any) -> bool:
    return type(msg) is dict and "method" not in msg and "id" in msg and (
        "result" in msg or "error" in msg)


def _file_call(msg: Any) -> bool:
    """Whether ``msg`` calls a tool that reads a file the call names."""
    params = msg.get("params") if type(msg) is dict else None
    return (type(params) is dict and msg.get("method") == "tools/call"
            and params.get("name") in FILE_TOOLS)


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _error(mid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": mid, "error": err}


def serve_stdio(cabinet: Cabinet, stdin: IO[bytes] | None = None,
                stdout: IO[bytes] | None = None, *, roots: Roots | None = None) -> None:
    """Serve ``cabinet``'s tools on stdin/stdout (as bytes) until stdin closes;
    the file tools read only below ``roots`` (and the client's roots)."""
    StdioServer(MemNetTools(cabinet, roots=roots)).serve(
        read_lines(stdin or sys.stdin.buffer), stdout or sys.stdout.buffer)


__all__ = ["MAX_MESSAGE", "PROTOCOL_VERSIONS", "StdioServer", "TOO_LONG", "check_arguments",
           "load_tools", "read_lines", "serve_stdio"]
