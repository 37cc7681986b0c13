"""Absorb's ``merge`` policy: one Commit of what the lead does not hold yet.

A slice node merges into the lead node imported before from the same member
handle, else the holder of its ``locator``, else the only node of its kind
with its first name-like value (:data:`MERGE_KEYS`); edges between held
nodes are matched by type and ends. What is held gets the properties,
labels and nickname it lacks; the rest is inserted, each node carrying its
``origin``. Absorbing the same slice again changes nothing. The result of
every policy, :class:`AbsorbResult`, and the slice values' engine form live
here too, so :mod:`memnet.absorb` imports this module and not the other way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import AbsorbRejected
from .gql import ast
from .graph.store import OUT, Store, edge_handle, node_handle, parse_handle
from .session import Session

if TYPE_CHECKING:
    from .absorb import SliceEdge, SliceNode, WorkingMemorySlice


class AbsorbResult(BaseModel):
    """What an import did: the handle map (member → lead) and the new version.

    ``created`` counts the rows (nodes and edges) added; under ``merge``,
    ``matched`` the rows found already in the lead and ``updated`` those of
    them that changed; ``changed`` is False when nothing was written (the
    version stays)."""

    ids: dict[str, str]
    version: int
    created: int
    matched: int = 0
    updated: int = 0
    changed: bool = True


def engine_props(props: dict[str, Any]) -> dict[str, Any]:
    """JSON lists back to the engine's tuples (a slice holds lists)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in props.items()}


def origin(slc: WorkingMemorySlice, handle: str) -> str:
    """The ``origin`` an imported node carries: ``'member/handle'``."""
    return f"{slc.provenance.session}/{handle}"


#: name-like keys a node without a locator is matched by, in this order
MERGE_KEYS = ("name", "title", "path", "rid", "lemma", "id", "alias")
#: properties that say where a node came from: never merged into a held node
_PROVENANCE = ("locator", "origin")


def _same(a: Any, b: Any) -> bool:
    """Equality that keeps 1, 1.0 and true apart, lists item by item."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and a == b


def _same_props(have: Any, want: dict[str, Any]) -> bool:
    return len(have) == len(want) and all(k in have and _same(have[k], v) for k, v in want.items())


def _match_node(st: Store, slc: WorkingMemorySlice, n: SliceNode, taken: set[int]) -> int | None:
    """The lead node a slice node merges into, or None: the node imported
    before from the same member handle (``origin``); else the oldest holder
    of its ``locator``; else, for a node without a locator, the only node of
    its kind with its first name-like value (not counting nodes imported from
    other nodes of the same member). A lead node ``taken`` by an
    earlier node of the slice is never taken again, so two nodes of the
    member stay two."""
    held = [x for x in st.holders("origin", origin(slc, n.handle), n.kind) if x not in taken]
    if held:
        return held[0]
    loc = n.props.get("locator")
    if isinstance(loc, str):  # a locator names the node: no other key does
        held = [x for x in st.holders("locator", loc) if x not in taken]
        if held and st.node_kind(held[0]) != n.kind:
            raise AbsorbRejected(
                f"id_policy merge: node {n.handle} ({n.kind}) has the locator {loc!r}, "
                f"which the lead holds as {node_handle(held[0])} of kind "
                f"{st.node_kind(held[0])}; a merge never changes a kind, nothing imported"
            )
        return held[0] if held else None
    mine = f"{slc.provenance.session}/"
    for key in MERGE_KEYS:
        v = n.props.get(key)
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            # a node imported from another node of the same member is that
            # node, whatever it is called; of the rest, two or more holders:
            # none of them is surely this one
            held = [
                x
                for x in st.holders(key, v, n.kind)
                if not str(st.node_props(x).get("origin", "")).startswith(mine)
            ]
            return held[0] if len(held) == 1 and held[0] not in taken else None
    return None


def merge(lead: Session, slc: WorkingMemorySlice) -> AbsorbResult:
    """The ``merge`` policy: one Commit of what the lead does not hold yet
    (the caller holds the lead's lock)."""
    st = lead.store
    ref: dict[str, str] = {}  # member handle -> lead handle or INSERT variable
    edits: list[Any] = []
    new_nodes, matched, updated = _merge_nodes(st, slc, ref, edits)
    new_edges, e_matched, e_updated = _merge_edges(st, slc, ref, edits)
    matched += e_matched
    updated += e_updated
    statements: list[Any] = []
    if new_nodes or new_edges:
        statements.append(ast.Insert(tuple(new_nodes), tuple(new_edges)))
    statements += edits
    if not statements:
        return AbsorbResult(
            ids=ref, version=lead.version, created=0, matched=matched, updated=0, changed=False
        )
    res = lead.commit(ast.Delta(tuple(statements)))
    return AbsorbResult(
        ids={h: res.ids.get(r, r) for h, r in ref.items()},
        version=res.version,
        created=len(new_nodes) + len(new_edges),
        matched=matched,
        updated=updated,
        changed=res.changed,
    )


def _merge_nodes(
    st: Store, slc: WorkingMemorySlice, ref: dict[str, str], edits: list[Any]
) -> tuple[list[ast.NodePattern], int, int]:
    """Pair the slice's nodes with the lead's: the new ones as patterns, the
    changes to held ones added to ``edits``, each node's lead handle or
    variable to ``ref``; returns the patterns and the counts matched and
    updated."""
    new_nodes: list[ast.NodePattern] = []
    matched = updated = 0
    taken: set[int] = set()
    # by member handle, not slice order: the same member nodes always pair up
    # with the same lead nodes, however a slice lists them
    for i, n in enumerate(sorted(slc.nodes, key=_member_id), 1):
        props = engine_props(n.props)
        nid = _match_node(st, slc, n, taken)
        if nid is None:
            var = f"v{i}"
            props["origin"] = origin(slc, n.handle)
            new_nodes.append(
                ast.NodePattern(var, (n.kind, *n.labels), tuple(sorted(props.items())), n.nick)
            )
            ref[n.handle] = var
            continue
        taken.add(nid)
        h = node_handle(nid)
        ref[n.handle] = h
        matched += 1
        have = st.node_props(nid)
        ch: list[Any] = [
            ast.SetProp(h, k, v)
            for k, v in sorted(props.items())
            if k not in _PROVENANCE and not (k in have and _same(have[k], v))
        ]
        held_labels = set(st.node_labels(nid))
        ch += [ast.SetLabel(h, lab) for lab in n.labels if lab not in held_labels]
        if n.nick is not None and st.node_nick(nid) is None and st.nick_owner(n.nick) is None:
            ch.append(ast.SetNick(h, n.nick))
        if ch:
            updated += 1
            edits.extend(ch)
    return new_nodes, matched, updated


def _merge_edges(
    st: Store, slc: WorkingMemorySlice, ref: dict[str, str], edits: list[Any]
) -> tuple[list[ast.EdgePattern], int, int]:
    """Pair the slice's edges with the lead's, as :func:`_merge_nodes` pairs
    nodes: edges between two held nodes are matched by type and ends, and
    parallel edges pair up in order, oldest first."""
    out_of: dict[int, dict[tuple[str, int], list[int]]] = {}  # lead node -> its out-edges
    new_edges: list[ast.EdgePattern] = []
    matched = updated = 0
    for j, e in enumerate(sorted(slc.edges, key=_member_id), 1):
        src, dst = ref[e.src], ref[e.dst]
        props = engine_props(e.props)
        held = _held_edges(st, out_of, e.type, src, dst)
        if not held:
            var = f"w{j}"
            new_edges.append(ast.EdgePattern(var, e.type, src, dst, tuple(sorted(props.items()))))
            ref[e.handle] = var
            continue
        # a parallel edge with these very properties first, else the oldest
        eid = held.pop(
            next((k for k, x in enumerate(held) if _same_props(st.edge_props(x), props)), 0)
        )
        ref[e.handle] = edge_handle(eid)
        matched += 1
        have = st.edge_props(eid)
        ch = [
            ast.SetProp(edge_handle(eid), k, v)
            for k, v in sorted(props.items())
            if not (k in have and _same(have[k], v))
        ]
        if ch:
            updated += 1
            edits.extend(ch)
    return new_edges, matched, updated


def _member_id(el: SliceNode | SliceEdge) -> int:
    ref = parse_handle(el.handle)
    assert ref is not None, "the guard checked every handle"
    return ref[1]


def _held_edges(
    st: Any, out_of: dict[int, dict[tuple[str, int], list[int]]], etype: str, src: str, dst: str
) -> list[int]:
    """The live edges of ``etype`` from ``src`` to ``dst`` not paired yet
    (both lead handles; none when either is a new node), oldest first. A
    node's out-edges are read once (``out_of``), however many slice edges
    leave it."""
    a, b = st.resolve(src), st.resolve(dst)
    if a is None or b is None or a[0] != "n" or b[0] != "n":
        return []
    edges = out_of.get(a[1])
    if edges is None:
        edges = out_of[a[1]] = {}
        for e, d, other in st.live_entries(a[1]):
            if d == OUT:
                edges.setdefault((st.edge_type(e), other), []).append(e)
        for lst in edges.values():
            lst.sort()
    return edges.get((etype, b[1]), [])
