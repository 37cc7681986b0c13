"""Reading a reference MCP memory file: one JSON object a line, checked whole
before anything is written (a damaged line is ``import_syntax`` naming its
line), and the codes its entity and relation types are written with."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..commit import MAX_LIST, MAX_STRING
from ..errors import ImportSyntaxError, InputTooLarge, InvalidArgument, PathNotFound
from ..values import has_lone_surrogate

Progress = Callable[[int, int], None]

MEM_SCHEME = "mem:"  # locator of an imported entity: mem:<name>
PLACEHOLDER_KIND = "ENTITY"  # a relation's end that is no entity of the file
FALLBACK_KIND = "ENTITY"  # an entityType with no letter or digit
FALLBACK_EDGE = "RELATED"  # a relationType with no letter or digit
#: kinds the engine or MemNet's own tools give a meaning (standing rules,
#: tasks, placeholders, Host Snap's queries, Model Snap's sessions and
#: stubs, the MATCH form of q): an entityType that spells one gets MEM_ first
RESERVED_KINDS = frozenset({"LAW", "TSK", "GAP", "QRY", "SES", "STUB", "MATCH"})
OWNED_KEYS = ("name", "observations", "type")  # what a re-import may change on a node
_NOT_CODE = re.compile(r"[^A-Z0-9]+")
_PLAIN = re.compile(r"[A-Za-z0-9]+(?:[ ._\-/:]+[A-Za-z0-9]+)*")
_CODE_MAX = 64
PROGRESS_EVERY = 4096  # lines (or entities) between two progress calls


def code_of(
    text: str, fallback: str = FALLBACK_KIND, *, reserved: frozenset[str] = frozenset()
) -> str:
    """The upper-case code a kind or an edge type is written with: the
    letters and digits of ``text``, upper-cased, ``_`` for each run of
    anything else (``'software project'`` -> ``SOFTWARE_PROJECT``);
    ``fallback`` when none is left; ``X_`` before a leading digit; ``MEM_``
    before a ``reserved`` code; at most 64 characters."""
    code = _NOT_CODE.sub("_", text.upper()).strip("_")
    if not code:
        return fallback
    if code[0].isdigit():
        code = "X_" + code
    if code in reserved:
        code = "MEM_" + code
    return code[:_CODE_MAX].rstrip("_")


def spells(text: str, code: str) -> bool:
    """Whether ``code`` says all of ``text`` but its case and separators (so
    the text need not be kept beside it)."""
    return (
        _PLAIN.fullmatch(text) is not None and _NOT_CODE.sub("_", text.upper()).strip("_") == code
    )


# -- reading ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class McpEntity:
    name: str
    entity_type: str
    observations: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class McpRelation:
    src: str
    dst: str
    relation_type: str
    line: int


@dataclass
class McpMemory:
    """A memory file read whole: entities by name (file order), relations
    (file order, repeats included), and the lines skipped (a record of
    another ``type``, which the reference server skips too)."""

    entities: dict[str, McpEntity] = field(default_factory=dict)
    relations: list[McpRelation] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    path: str | None = None
    lines: int = 0


def _text(
    obj: Mapping[str, Any], key: str, line: int, path: str | None, *, empty: bool = False
) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or (not empty and not v):
        what = "missing" if key not in obj else f"{type(v).__name__} {v!r:.40}"
        kind = "string" if empty else "non-empty string"
        raise ImportSyntaxError(
            f"{obj.get('type')} needs {key!r} as a {kind}, got {what}", path=path, line=line
        )
    _check_string(v, key, line, path)
    return v


def _check_string(v: str, what: str, line: int, path: str | None) -> None:
    if has_lone_surrogate(v):
        raise ImportSyntaxError(
            f"{what} holds a lone surrogate (\\ud800-\\udfff), which is no text",
            path=path,
            line=line,
        )
    if len(v) > MAX_STRING:
        raise InputTooLarge(
            f"{_where(path, line)}{what} is {len(v):,} characters; a value holds "
            f"at most {MAX_STRING:,}",
            length=len(v),
            cap=MAX_STRING,
        )


def _where(path: str | None, line: int) -> str:
    return f"{path}:{line}: " if path else f"line {line}: "


def _record(raw: bytes, line: int, path: str | None, mem: McpMemory) -> None:
    """Check one non-blank line and add what it holds to ``mem``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ImportSyntaxError(f"not UTF-8 (byte {e.start + 1})", path=path, line=line) from None
    text = text.rstrip("\r\n")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ImportSyntaxError(
            f"not JSON: {e.msg} at column {e.pos + 1}", path=path, line=line
        ) from None
    except RecursionError:
        raise ImportSyntaxError("not a record: nested too deeply", path=path, line=line) from None
    if not isinstance(obj, dict):
        raise ImportSyntaxError(
            f"a record is a JSON object, not {type(obj).__name__}", path=path, line=line
        )
    kind = obj.get("type")
    if kind == "entity":
        name = _text(obj, "name", line, path)
        etype = _text(obj, "entityType", line, path, empty=True)
        obs = obj.get("observations")
        if not isinstance(obs, list) or not all(isinstance(o, str) for o in obs):
            raise ImportSyntaxError(
                "entity needs 'observations' as a list of strings", path=path, line=line
            )
        if len(obs) > MAX_LIST:
            raise InputTooLarge(
                f"{_where(path, line)}entity {name!r} has {len(obs):,} "
                f"observations; a list holds at most {MAX_LIST:,}",
                length=len(obs),
                cap=MAX_LIST,
            )
        for o in obs:
            _check_string(o, "an observation", line, path)
        if sum(map(len, obs)) > MAX_STRING:
            raise InputTooLarge(
                f"{_where(path, line)}the observations of {name!r} hold more "
                f"than {MAX_STRING:,} characters",
                cap=MAX_STRING,
            )
        had = mem.entities.get(name)
        if had is not None:
            raise ImportSyntaxError(
                f"entity {name!r} is already defined at line {had.line}", path=path, line=line
            )
        mem.entities[name] = McpEntity(name, etype, tuple(obs), line)
    elif kind == "relation":
        mem.relations.append(
            McpRelation(
                _text(obj, "from", line, path),
                _text(obj, "to", line, path),
                _text(obj, "relationType", line, path, empty=True),
                line,
            )
        )
    elif isinstance(kind, str):
        mem.skipped.append(
            f"{_where(path, line)}skipped: a record of type {kind!r:.40} "
            "(neither entity nor relation)"
        )
    else:
        raise ImportSyntaxError(
            "a record needs 'type': 'entity' or 'relation'", path=path, line=line
        )


def parse_mcp_memory(lines: Iterable[str | bytes], *, path: str | None = None) -> McpMemory:
    """A memory file's records from its lines (text or bytes); blank lines
    are skipped, as the reference server skips them."""
    mem = McpMemory(path=path)
    n = 0
    for n, raw in enumerate(lines, 1):
        b = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        if n == 1:
            b = b.removeprefix(b"\xef\xbb\xbf")  # a byte order mark is no JSON
        if b.strip():
            _record(b, n, path, mem)
    mem.lines = n
    return mem


def read_mcp_memory(path: str | os.PathLike[str], *, progress: Progress | None = None) -> McpMemory:
    """Read and check a memory file whole (see :func:`parse_mcp_memory`);
    ``progress(done, total)`` counts bytes. Raises ``path_not_found`` (no
    such regular file), ``import_syntax`` (a damaged line, named) or
    ``input_too_large`` (a value a session cannot hold)."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgument(f"a memory file is a path, not {type(path).__name__}")
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except (OSError, ValueError):
        raise PathNotFound(f"no memory file {p!r}", path=p) from None
    if not stat.S_ISREG(st.st_mode):
        raise PathNotFound(f"{p!r} is not a regular file", path=p)
    total = st.st_size
    name = os.path.basename(p)
    mem = McpMemory(path=name)
    done = n = 0
    with open(p, "rb") as f:
        for n, raw in enumerate(f, 1):
            done += len(raw)
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if raw.strip():
                _record(raw, n, name, mem)
            if progress is not None and n % PROGRESS_EVERY == 0:
                progress(done, total)
    mem.lines = n
    if progress is not None:
        progress(total, total)
    return mem
