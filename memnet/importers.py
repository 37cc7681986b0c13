r"""Importers: another memory tool's file into a session, in one Commit.

The reference MCP memory server (``@modelcontextprotocol/server-memory``)
keeps its knowledge graph in a JSONL file, one JSON object a line::

    {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["wrote notes"]}
    {"type": "relation", "from": "Ada", "to": "Engine", "relationType": "works on"}

:func:`read_mcp_memory` reads and checks such a file whole before anything is
written (a damaged line is ``import_syntax`` naming its line);
:func:`import_mcp_memory` writes it into a session as one Commit built with
:class:`~memnet.commit.Bulk`:

* an entity becomes a node of kind ``code_of(entityType)`` (``person`` ->
  ``PERSON``) with ``name``, ``observations`` (the list, left out when
  empty), ``locator: 'mem:<name>'``, and ``type`` (the entityType as written)
  only when the kind does not spell it;
* a relation becomes an edge of type ``code_of(relationType)`` (``works on``
  -> ``WORKS_ON``), with ``type`` on the same rule; a relation whose end is
  not an entity of the file gets a placeholder node ``ENTITY {name, locator}``
  (the reference server allows such relations);
* a node the session already holds for a locator is updated in place (its
  ``name``, ``observations`` and ``type`` made the file's, nothing else
  touched; a changed kind recycles it and inserts it again, as ingest does),
  and an edge it already holds is not drawn twice. Importing the same file
  again commits nothing; nothing the file lacks is ever removed.

Example::

    >>> import memnet
    >>> from memnet.importers import McpMemory, import_mcp_memory, parse_mcp_memory
    >>> mem = parse_mcp_memory([
    ...     '{"type": "entity", "name": "Ada", "entityType": "person", "observations": ["x"]}',
    ...     '{"type": "entity", "name": "Engine", "entityType": "project", "observations": []}',
    ...     '{"type": "relation", "from": "Ada", "to": "Engine", "relationType": "works on"}'])
    >>> s = memnet.Session("mem")
    >>> import_mcp_memory(s, mem).summary()
    'version 1: 2 entities, 1 relations: +2 nodes ~0 -0, +1 edges'
    >>> print(s.recall("Ada").text.split("\n", 1)[1])
    INSERT
      (na1:PERSON {locator: 'mem:Ada', name: 'Ada', observations: ['x']}),
      (na1)-[ea1:WORKS_ON]->(na2:PROJECT {locator: 'mem:Engine', name: 'Engine'})
    >>> import_mcp_memory(s, mem).changed    # the same file again: nothing
    False
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .commit import MAX_LIST, MAX_STRING, Bulk, CommitResult
from .errors import ImportSyntaxError, InputTooLarge, InvalidArgument, PathNotFound
from .graph.store import OUT, Store, edge_handle, node_handle
from .values import format_value, has_lone_surrogate

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


# -- writing ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did. ``entities`` and ``relations`` count the file's
    (relations once each); ``created``, ``updated`` and ``recycled`` count
    nodes (a kind changed: one recycled and one created), ``placeholders``
    the created nodes that stand for a relation's end the file does not
    define, ``edges`` the edges drawn."""

    version: int
    changed: bool
    entities: int
    relations: int
    created: int = 0
    updated: int = 0
    recycled: int = 0
    placeholders: int = 0
    edges: int = 0
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "changed": self.changed,
            "entities": self.entities,
            "relations": self.relations,
            "created": self.created,
            "updated": self.updated,
            "recycled": self.recycled,
            "placeholders": self.placeholders,
            "edges": self.edges,
            "warnings": list(self.warnings),
        }

    def summary(self) -> str:
        head = f"version {self.version}" + ("" if self.changed else " (unchanged)")
        ph = (
            f" ({self.placeholders} placeholder{'s' if self.placeholders != 1 else ''})"
            if self.placeholders
            else ""
        )
        line = (
            f"{head}: {self.entities} entities, {self.relations} relations: "
            f"+{self.created} nodes{ph} ~{self.updated} -{self.recycled}, +{self.edges} edges"
        )
        if self.warnings:
            line += f", {len(self.warnings)} warning(s)"
        return line


@dataclass
class ImportPlan:
    """The Commit an import will make (:func:`plan_mcp_memory`), and its counts."""

    bulk: Bulk
    result: ImportResult

    @property
    def empty(self) -> bool:
        return not len(self.bulk)


def _node_of(e: McpEntity, kinds: dict[str, tuple[str, bool]]) -> tuple[str, dict[str, Any]]:
    got = kinds.get(e.entity_type)
    if got is None:  # a file has few types: each is worked out once
        kind = code_of(e.entity_type, reserved=RESERVED_KINDS)
        got = kinds[e.entity_type] = (kind, spells(e.entity_type, kind))
    props: dict[str, Any] = {"name": e.name}
    if e.observations:
        props["observations"] = e.observations
    if not got[1]:
        props["type"] = e.entity_type
    return got[0], props


def _same(a: Any, b: Any) -> bool:
    return format_value(a) == format_value(b)


def plan_mcp_memory(
    session: Any, mem: McpMemory, *, progress: Progress | None = None
) -> ImportPlan:
    """The Commit that makes ``session`` hold ``mem`` (see the module doc),
    without writing it; ``progress(done, total)`` counts entities."""
    st: Store = session.store
    b = Bulk()
    edits: list[tuple[str, str, str, Any]] = []  # (op, handle, key, value)
    gone: list[str] = []
    ref: dict[str, str] = {}  # entity name -> handle or variable
    created = updated = placeholders = 0
    total = len(mem.entities)
    kinds: dict[str, tuple[str, bool]] = {}
    for i, e in enumerate(mem.entities.values(), 1):
        kind, props = _node_of(e, kinds)
        loc = MEM_SCHEME + e.name
        held = st.holders("locator", loc)
        nid = held[0] if held else None
        if nid is not None and st.node_kind(nid) == kind:
            h = node_handle(nid)
            ref[e.name] = h
            have = st.node_props(nid)
            n_edits = len(edits)
            for k in OWNED_KEYS:
                if k in props:
                    if k not in have or not _same(have[k], props[k]):
                        edits.append(("set", h, k, props[k]))
                elif k in have:
                    edits.append(("remove", h, k, None))
            updated += len(edits) > n_edits
        else:
            if nid is not None:  # the kind changed: recycled, and made again
                gone.append(node_handle(nid))
            ref[e.name] = b.node(kind, {**props, "locator": loc})
            created += 1
        if progress is not None and i % PROGRESS_EVERY == 0:
            progress(i, total)
    # the ends of relations the file does not define
    for name in sorted({x for r in mem.relations for x in (r.src, r.dst)} - set(ref)):
        held = st.holders("locator", MEM_SCHEME + name)
        if held:
            ref[name] = node_handle(held[0])
        else:
            ref[name] = b.node(PLACEHOLDER_KIND, {"name": name, "locator": MEM_SCHEME + name})
            created += 1
            placeholders += 1
    out_of: dict[int, dict[tuple[str, int], list[int]]] = {}
    seen: set[tuple[str, str, str]] = set()
    edges = 0
    types: dict[str, tuple[str, bool]] = {}
    for r in mem.relations:
        got = types.get(r.relation_type)
        if got is None:
            etype = code_of(r.relation_type, FALLBACK_EDGE)
            got = types[r.relation_type] = (etype, spells(r.relation_type, etype))
        etype = got[0]
        key = (etype, r.src, r.dst)
        if key in seen:
            continue
        seen.add(key)
        props = {} if got[1] else {"type": r.relation_type}
        src, dst = ref[r.src], ref[r.dst]
        eid = _held_edge(st, out_of, etype, src, dst)
        if eid is not None:
            have = st.edge_props(eid)
            h = edge_handle(eid)
            if "type" in props and not ("type" in have and _same(have["type"], props["type"])):
                edits.append(("set", h, "type", props["type"]))
            elif "type" not in props and "type" in have:
                edits.append(("remove", h, "type", None))
            continue
        b.edge(src, etype, dst, props or None)
        edges += 1
    for op, h, k, v in edits:
        if op == "set":
            b.set(h, k, v)
        else:
            b.remove(h, k)
    for h in gone:
        b.delete(h)
    if progress is not None:
        progress(total, total)
    warnings = tuple(mem.skipped)
    if placeholders:
        warnings += (
            f"{placeholders} relation end(s) name no entity of the file: each got a "
            f"placeholder node {PLACEHOLDER_KIND} {{name, locator}}",
        )
    return ImportPlan(
        b,
        ImportResult(
            version=session.version,
            changed=False,
            entities=len(mem.entities),
            relations=len(seen),
            created=created,
            updated=updated,
            recycled=len(gone),
            placeholders=placeholders,
            edges=edges,
            warnings=warnings,
        ),
    )


def _held_edge(
    st: Store, out_of: dict[int, dict[tuple[str, int], list[int]]], etype: str, src: str, dst: str
) -> int | None:
    """The oldest live edge of ``etype`` from ``src`` to ``dst`` when both are
    handles the session holds; a node's out-edges are read once."""
    a, b = st.resolve(src), st.resolve(dst)
    if a is None or b is None or a[0] != "n" or b[0] != "n":
        return None
    edges = out_of.get(a[1])
    if edges is None:
        edges = out_of[a[1]] = {}
        for e, d, other in st.live_entries(a[1]):
            if d == OUT:
                edges.setdefault((st.edge_type(e), other), []).append(e)
    got = edges.get((etype, b[1]))
    return min(got) if got else None


def apply_plan(session: Any, plan: ImportPlan) -> ImportResult:
    """Write a plan as one Commit (none when it is empty)."""
    from dataclasses import replace

    if plan.empty:
        return replace(plan.result, version=session.version, changed=False)
    res: CommitResult = session.commit_bulk(plan.bulk)
    return replace(plan.result, version=res.version, changed=res.changed)


def import_mcp_memory(
    session: Any, source: str | os.PathLike[str] | McpMemory, *, progress: Progress | None = None
) -> ImportResult:
    """Import a reference MCP memory file (or one already read) into
    ``session`` as one Commit; see the module doc. Errors leave the session
    as it was: ``import_syntax`` and ``input_too_large`` before anything is
    planned, ``cap_exceeded`` when the session's rate cap cannot take it."""
    from .session import Session

    if not isinstance(session, Session):
        raise InvalidArgument(f"import needs a memnet.Session, not {type(session).__name__}")
    mem = source if isinstance(source, McpMemory) else read_mcp_memory(source)
    with session.lock:
        return apply_plan(session, plan_mcp_memory(session, mem, progress=progress))


def import_mcp_memory_new(
    cabinet: Any,
    sid: str,
    source: str | os.PathLike[str] | McpMemory,
    *,
    progress: Progress | None = None,
) -> tuple[Any, ImportResult]:
    """Import into a new session ``sid`` of ``cabinet`` (what ``memnet import
    mcp-memory --create`` does when the session does not exist): built in
    memory with a cap fit for the file (:func:`session_for`) and stored with
    ``cabinet.adopt`` only once the import has succeeded, so a failed import
    leaves no empty session behind. Returns the stored session and the result."""
    mem = source if isinstance(source, McpMemory) else read_mcp_memory(source)
    s = session_for(mem, sid)
    res = import_mcp_memory(s, mem, progress=progress)
    cabinet.adopt(s)
    return s, res


def session_for(mem: McpMemory, sid: str) -> Any:
    """A new in-memory session fit to take ``mem``: the default rate cap, or,
    when the file needs more, twice the rows and bytes it needs (a migration
    is sized once by its file; the session then has room to work in)."""
    from .commit import Caps
    from .session import Session

    ends = {x for r in mem.relations for x in (r.src, r.dst)} - mem.entities.keys()
    links = {(r.relation_type, r.src, r.dst) for r in mem.relations}
    need_rows = len(mem.entities) + len(ends) + len(links)
    # a node's bytes are about its printed key; an edge's, its type and ends
    need_bytes = sum(
        2 * len(e.name) + len(e.entity_type) + 48 + sum(len(o) + 4 for o in e.observations)
        for e in mem.entities.values()
    )
    need_bytes += sum(2 * len(x) + 48 for x in ends) + 32 * len(links)
    caps = Caps()
    if need_rows > caps.rows or need_bytes > caps.bytes:
        caps = Caps(rows=max(caps.rows, 2 * need_rows), bytes=max(caps.bytes, 2 * need_bytes))
    return Session(sid, caps=caps)


__all__ = [
    "FALLBACK_EDGE",
    "FALLBACK_KIND",
    "MEM_SCHEME",
    "OWNED_KEYS",
    "PLACEHOLDER_KIND",
    "RESERVED_KINDS",
    "ImportPlan",
    "ImportResult",
    "McpEntity",
    "McpMemory",
    "McpRelation",
    "apply_plan",
    "code_of",
    "import_mcp_memory",
    "import_mcp_memory_new",
    "parse_mcp_memory",
    "plan_mcp_memory",
    "read_mcp_memory",
    "session_for",
    "spells",
]
