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

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..commit import Bulk, CommitResult
from ..errors import InvalidArgument
from ..graph.store import OUT, Store, edge_handle, node_handle
from ..values import format_value
from .mcp_file import (
    FALLBACK_EDGE,
    FALLBACK_KIND,
    MEM_SCHEME,
    OWNED_KEYS,
    PLACEHOLDER_KIND,
    PROGRESS_EVERY,
    RESERVED_KINDS,
    McpEntity,
    McpMemory,
    McpRelation,
    Progress,
    code_of,
    parse_mcp_memory,
    read_mcp_memory,
    spells,
)


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
    created, updated = _plan_entities(st, mem, b, edits, gone, ref, progress)
    placeholders = _plan_relation_ends(st, mem, b, ref)
    created += placeholders
    edges, relations = _plan_relations(st, mem, b, edits, ref)
    for op, h, k, v in edits:
        if op == "set":
            b.set(h, k, v)
        else:
            b.remove(h, k)
    for h in gone:
        b.delete(h)
    total = len(mem.entities)
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
            relations=relations,
            created=created,
            updated=updated,
            recycled=len(gone),
            placeholders=placeholders,
            edges=edges,
            warnings=warnings,
        ),
    )


def _plan_entities(
    st: Store,
    mem: McpMemory,
    b: Bulk,
    edits: list[tuple[str, str, str, Any]],
    gone: list[str],
    ref: dict[str, str],
    progress: Progress | None,
) -> tuple[int, int]:
    """Plan the entities' nodes: a held node of the same kind gets edits of
    its owned keys, any other entity a new node (a held one of another kind
    is recycled). Fills ``ref``; returns ``(created, updated)``."""
    created = updated = 0
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
    return created, updated


def _plan_relation_ends(st: Store, mem: McpMemory, b: Bulk, ref: dict[str, str]) -> int:
    """The ends of relations the file does not define: a held node, else a
    new placeholder. Fills ``ref``; returns how many placeholders."""
    placeholders = 0
    for name in sorted({x for r in mem.relations for x in (r.src, r.dst)} - set(ref)):
        held = st.holders("locator", MEM_SCHEME + name)
        if held:
            ref[name] = node_handle(held[0])
        else:
            ref[name] = b.node(PLACEHOLDER_KIND, {"name": name, "locator": MEM_SCHEME + name})
            placeholders += 1
    return placeholders


def _plan_relations(
    st: Store,
    mem: McpMemory,
    b: Bulk,
    edits: list[tuple[str, str, str, Any]],
    ref: Mapping[str, str],
) -> tuple[int, int]:
    """Plan the relations' edges (each distinct one once): a held edge gets
    an edit of its ``type`` property when needed, any other a new edge.
    Returns ``(new edges, distinct relations)``."""
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
    return edges, len(seen)


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
    from ..session import Session

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
    from ..commit import Caps
    from ..session import Session

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
