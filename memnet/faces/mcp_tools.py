"""The MCP tools, declared once: the table ``memnet mcp`` lists and calls.

Each :class:`ToolSpec` gives a tool's name, the :class:`~memnet.faces.mcp.MemNetTools`
method it calls, its description, its arguments (:class:`Arg`: JSON type,
description, default, choices) and what it does to the cabinet.
:func:`listing` turns the table into the ``tools/list`` answer and
:func:`check_arguments` reads a call's arguments by it, so the schema a client
sees is the schema a call is held to.

The whole listing is sent with every request an LLM makes, so every word here
costs: ``tests/faces/test_mcp.py`` holds it to 1,500 o200k tokens (SPEC §7).
This module imports nothing heavy: ``memnet mcp --help`` reads it without the
SDK or the engine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import InvalidArgument
from ..limits import LIMITS
from . import params as P

if TYPE_CHECKING:
    from .params import Param


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of an argument a call must give.
REQUIRED: Final = _Required()

JsonType = Literal["string", "integer", "boolean", "array"]
#: What a tool does to the cabinet; the annotations a client reads from it.
Effect = Literal["read", "create", "write", "write-idempotent"]


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument: its JSON type, a short description, its default
    (``None``: optional, the method's own default; :data:`REQUIRED`: must be
    given) and, where the choices are fixed, the choices."""

    name: str
    type: JsonType
    doc: str = ""
    default: Any = None
    choices: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, json_type: JsonType, p: Param, default: Any = None) -> Arg:
        """The argument ``name`` that :mod:`~memnet.faces.params` describes as
        ``p`` (its words for a tool, its choices, its default unless ``default``
        is given: :data:`REQUIRED`)."""
        return cls(name, json_type, p.tool, p.default if default is None else default, p.choices)

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.type == "array":
            out["items"] = {"type": "string"}
        if self.choices:
            out["enum"] = list(self.choices)
        if self.doc:
            out["description"] = self.doc
        if self.default is not None and self.default is not REQUIRED:
            out["default"] = self.default
        return out


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool (see the module doc). ``path_arg`` names the argument that
    is a path to read, confined to the server's roots (the method then takes
    ``roots``); a tool that ``reports_progress`` takes ``progress``."""

    name: str
    method: str
    doc: str
    args: tuple[Arg, ...]
    effect: Effect
    path_arg: str | None = None
    reports_progress: bool = False

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {a.name: a.schema() for a in self.args},
        }
        required = [a.name for a in self.args if a.default is REQUIRED]
        if required:
            schema["required"] = required
        return schema

    def annotations(self) -> dict[str, bool]:
        """MCP tool annotations, only where they differ from the protocol's
        defaults (not read-only, destructive, not idempotent, open world; the
        last two hints mean nothing for a read-only tool). No tool reaches
        outside the cabinet and the roots: a closed world."""
        out = {"readOnlyHint": True} if self.effect == "read" else {}
        if self.effect == "create":
            out["destructiveHint"] = False
        if self.effect == "write-idempotent":
            out["idempotentHint"] = True
        return out | {"openWorldHint": False}


# -- what the agent reads --------------------------------------------------------
INSTRUCTIONS = (
    "MemNet: bounded working memory in sessions. Look with memnet_outline, read with "
    "memnet_recall, write with memnet_commit using the handles a Shape shows."
)

Q_LINE = (
    "q: codebook tokens `KIND key:value key~words words` (`TSK status:open pricing`) or "
    "`MATCH (n:TSK) WHERE n.title CONTAINS 'x' LIMIT 3`; empty: the outline."
)
KINDS_LINE = (
    "Usual kinds: TSK task, LAW rule, DEC decision, MOD module, SYM class/def, PKG "
    "package, REQ requirement, DOC document."
)

RECALL_DOC = "\n".join(
    [
        "Read a bounded Shape of a session. Text: the receipt line "
        "`// shape v=… q=… rows=… holds_answer=… etag=…` (+ `note=`, `more=`), then an INSERT "
        "literal; rows carry handles (na1, ea1).",
        Q_LINE,
        KINDS_LINE,
        "`more=` is a q for what lies past the cut. Edit rows by handle with memnet_commit, "
        "never by INSERT.",
    ]
)

#: What an agent should do next, per error code (appended to the message).
HINTS: dict[str, str] = {
    "session_not_found": "create it with memnet_create_session (memnet_sessions lists the "
    "sessions that exist)",
    "session_exists": "use it as it is, or pick another id (memnet_sessions lists them)",
    "invalid_session_id": "session ids are 1-64 characters from a-z, 0-9 and '-', starting "
    "with a letter or digit",
    "gql_syntax": "fix the text at that position and call again; q is codebook tokens "
    "(TSK status:open pricing) or MATCH (n:TSK) WHERE n.title CONTAINS 'x' "
    "LIMIT 3; a delta is INSERT/SET/REMOVE/DELETE/SETTLE",
    "bad_query": f"ranges: k 0-{LIMITS.k_max}, max_rows 1-{LIMITS.max_rows_max}, "
    f"limit 1-{LIMITS.limit_max}, fanout 1-{LIMITS.fanout_max}, "
    "view interior|shell",
    "commit_rejected": "nothing was applied; fix the delta and commit again",
    "echo_refused": "nothing was applied; do not re-insert rows you recalled: INSERT only "
    "new rows and SET properties on existing handles",
    "cap_exceeded": "nothing was applied; the session is full: start a new session with "
    "memnet_create_session",
    "conflict": "nothing was written; another writer committed first: recall again to see "
    "its work, then redo the commit",
    "input_too_large": "send a smaller text",
    "version_not_found": "recall the current version instead",
    "path_outside_root": "use a path inside the roots named in the message; more roots are "
    "the operator's to give (memnet mcp --root DIR)",
    "invalid_argument": "check the tool's arguments against its input schema (tools/list): "
    "their names, types and which are required",
}

# -- the table ---------------------------------------------------------------------
SESSION = Arg.of("session", "string", P.SESSION, REQUIRED)
INDEX = Arg.of("index", "string", P.INDEX)
TOP = Arg.of("top", "integer", P.TOP)
WORDS = Arg.of("q", "string", P.WORDS, REQUIRED)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memnet_recall",
        "recall",
        RECALL_DOC,
        (
            SESSION,
            Arg.of("q", "string", P.Q),
            Arg.of("k", "integer", P.HOPS),
            Arg.of("max_rows", "integer", P.ROWS),
            Arg.of("limit", "integer", P.LIMIT),
            Arg.of("fanout", "integer", P.FANOUT),
            Arg.of("view", "string", P.VIEW),
            Arg.of("laws", "boolean", P.LAWS),
            Arg.of("since", "string", P.SINCE),
            Arg.of("max_tokens", "integer", P.MAX_TOKENS),
        ),
        "read",
    ),
    ToolSpec(
        "memnet_outline",
        "outline",
        "A session's census as a Shape: each kind with its count, a few exemplars, the "
        "laws. Call it first on an unfamiliar session.",
        (SESSION, Arg.of("view", "string", P.OUTLINE_VIEW)),
        "read",
    ),
    ToolSpec(
        "memnet_commit",
        "commit",
        "Apply a delta atomically and store it: `INSERT (t:TSK {title: 'x'}), "
        "(t)-[:TOUCHES]->(na2)` (t new, na2 a handle you read); `SET na3.status = "
        "'done'`; `REMOVE na3.x`; `DELETE na3`; `SETTLE na3`. Returns the new handles.",
        (SESSION, Arg("delta", "string", default=REQUIRED)),
        "write",
    ),
    ToolSpec(
        "memnet_sessions",
        "sessions",
        "List the sessions: id, version, nodes, edges, bytes.",
        (),
        "read",
    ),
    ToolSpec(
        "memnet_create_session",
        "create_session",
        "Create an empty session.",
        (Arg.of("session", "string", P.NEW_SESSION, REQUIRED),),
        "create",
    ),
    ToolSpec(
        "memnet_ingest",
        "ingest",
        "Read a directory or .sysml file into a session: Python (MOD, SYM), markdown "
        "(DOC, SEC), directories (PKG), SysML (REQ with rid, ...); each node keyed by "
        "`locator`. Again later, only what changed is written.",
        (
            SESSION,
            Arg.of("path", "string", P.INGEST_PATH, REQUIRED),
            Arg.of("create", "boolean", P.CREATE),
        ),
        "write-idempotent",
        path_arg="path",
        reports_progress=True,
    ),
    ToolSpec(
        "memnet_snap",
        "snap",
        "Model Snap: cut a SysML v2 model into a catalog session `<prefix>-cat` (one SES "
        "node per interior) and interiors `<prefix>-1..k`; recall the catalog with `REQ "
        "rid:<id>` to find where a requirement lives.",
        (
            Arg.of("model", "string", P.MODEL, REQUIRED),
            Arg.of("prefix", "string", P.PREFIX, REQUIRED),
            Arg.of("budget", "integer", P.BUDGET),
            Arg.of("strict", "boolean", P.STRICT),
        ),
        "write-idempotent",
        path_arg="model",
        reports_progress=True,
    ),
    ToolSpec(
        "memnet_absorb",
        "absorb",
        "Join the bounded slice around `anchors` (handles of session `member`) into "
        "session `lead` as one version. For your own changes use memnet_commit.",
        (
            Arg("lead", "string", default=REQUIRED),
            Arg("member", "string", default=REQUIRED),
            Arg("anchors", "array", default=REQUIRED),
            Arg.of("id_policy", "string", P.ID_POLICY),
            Arg.of("hops", "integer", P.SLICE_HOPS),
        ),
        "create",
    ),
    ToolSpec(
        "memnet_host_search",
        "host_search",
        "Search the BM25 index of a library (built by `memnet host index PATH`) for "
        "locators; writes nothing.",
        (WORDS, TOP, INDEX),
        "read",
        path_arg="index",
    ),
    ToolSpec(
        "memnet_host_snap",
        "host_snap",
        "Search the host index and commit the hits into a session: a QRY node with HIT "
        "{rank} edges to a node per locator (idempotent). Then recall `QRY <words>`.",
        (SESSION, WORDS, TOP, INDEX),
        "write-idempotent",
        path_arg="index",
    ),
)

BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
#: The tools that read a path a call names, and the argument that names it.
FILE_TOOLS: dict[str, str] = {t.name: t.path_arg for t in TOOLS if t.path_arg}


def listing() -> list[dict[str, Any]]:
    """The ``tools/list`` answer, as JSON: what a client hands to its model."""
    return [
        {
            "name": t.name,
            "description": t.doc,
            "inputSchema": t.input_schema(),
            "annotations": t.annotations(),
        }
        for t in TOOLS
    ]


# -- reading a call's arguments ---------------------------------------------------------
_INT_TEXT = re.compile(r"\s*-?[0-9]{1,18}\s*")


def _read(value: Any, arg: Arg) -> Any:
    """``value`` as ``arg``'s type, or :class:`InvalidArgument`. What a lenient
    client sends for a number or a flag (``"5"``, ``"true"``) is read as the
    type (ASCII digits only)."""
    t = arg.type
    if t == "integer" and type(value) is str and _INT_TEXT.fullmatch(value):
        value = int(value)
    elif t == "boolean" and value in ("true", "false"):
        value = value == "true"
    ok = {
        "string": type(value) is str,
        "integer": type(value) is int,
        "boolean": type(value) is bool,
        "array": type(value) is list and all(type(x) is str for x in value),
    }[t]
    if not ok:
        want = "a list of strings" if t == "array" else t
        raise InvalidArgument(
            f"argument {arg.name!r} must be {want}, not "
            f"{type(value).__name__} {json.dumps(value)[:40]}"
        )
    if arg.choices and value not in arg.choices:
        raise InvalidArgument(
            f"argument {arg.name!r} must be one of {', '.join(arg.choices)}, "
            f"not {json.dumps(value)[:40]}"
        )
    return value


def check_arguments(tool: ToolSpec, arguments: Any) -> dict[str, Any]:
    """``arguments`` read by ``tool``'s table: every argument by name, defaults
    filled in (``None`` for an optional one left out or sent as null). A wrong
    type, a choice not offered, a missing or an unknown argument is
    ``invalid_argument`` naming it."""
    if arguments is None:
        arguments = {}
    if type(arguments) is not dict:
        raise InvalidArgument(f"{tool.name}: arguments must be an object")
    names = [a.name for a in tool.args]
    unknown = sorted(set(arguments) - set(names))
    if unknown:
        raise InvalidArgument(
            f"{tool.name}: unknown argument {unknown[0]!r} (it takes {', '.join(names) or 'none'})"
        )
    out: dict[str, Any] = {}
    for arg in tool.args:
        value = arguments.get(arg.name)
        if value is None:
            if arg.default is REQUIRED:
                raise InvalidArgument(f"{tool.name}: argument {arg.name!r} is required")
            out[arg.name] = arg.default
            continue
        try:
            out[arg.name] = _read(value, arg)
        except InvalidArgument as e:
            raise InvalidArgument(f"{tool.name}: {e.message}") from None
    return out


__all__ = [
    "Arg",
    "BY_NAME",
    "FILE_TOOLS",
    "HINTS",
    "INSTRUCTIONS",
    "REQUIRED",
    "TOOLS",
    "ToolSpec",
    "check_arguments",
    "listing",
]
