"""Sync: make a session's ingest scope match a set of artefacts, in one Commit.

:func:`snapshot` reads what the session holds in the scope of an
:class:`~memnet.ingest.model.Artefacts` (live nodes whose ``locator``
property lies under its root and schemes, and live edges of its managed types
between two such nodes). :func:`sync` compares that with the artefacts and
writes the difference as one :class:`~memnet.gql.ast.Delta` built from syntax
tree objects (no GQL text is produced, so the parser's token cap never
applies; the rate cap does, and a refusal leaves the session untouched):

* a new locator becomes an ``INSERT`` of a node with its kind, labels,
  properties and a ``locator`` property;
* a locator held with other properties or labels gets ``SET`` / ``REMOVE``
  statements for just what differs;
* a locator whose kind changed is recycled and inserted again (a kind cannot
  be changed in place);
* a locator the artefacts no longer hold is recycled (``DELETE``), which
  recycles every edge it has, hand-drawn ones included;
* links are keyed by ``(type, src locator, dst locator)``: new keys are
  inserted, keys gone are deleted, changed properties are set or removed.

Everything outside the scope - hand-written tasks, decisions, other trees,
edges of other types - is never touched, except that recycling a node takes its
edges with it. A link may also end at a node outside the scope that the
artefacts name in ``outside`` (found by its locator; the oldest live one when
several hold it): such links, from a node of the scope, are owned like the
others, and one whose far node the session does not hold is left out with a
warning. Statements go in a fixed order (by locator, then by link key),
so the same session and the same artefacts always mint the same handles, and
a sync that finds nothing to change commits nothing (the version stays).

If the session holds two live nodes with one locator in scope (someone
inserted a copy by hand), the oldest is kept and the others are recycled, with
a warning; duplicate managed edges are handled the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgument
from ..gql import ast
from ..graph.store import OUT, edge_handle, node_handle
from .model import Artefacts, Element, Link, Warning_

LOCATOR = "locator"  # the property that carries an element's locator in the session
_LABEL = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

#: What :func:`snapshot` returns: elements by locator as ``(handle, kind,
#: labels, props)`` (labels without the kind, props without ``locator``), and
#: links by ``(type, src locator, dst locator)`` as ``(edge handle, props)``.
Snapshot = tuple[
    dict[str, tuple[str, str, tuple[str, ...], dict[str, Any]]],
    dict[tuple[str, str, str], tuple[str, dict[str, Any]]],
]


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What a sync did.

    ``created``, ``updated`` and ``recycled`` count nodes (an element whose
    kind changed counts as one recycled and one created); ``links_*`` count
    edges of the managed types (``links_removed`` includes edges that went
    with a recycled node). ``ids`` maps the locator of each created node to
    its new handle. ``files`` and ``parsed`` are filled by a file ingester:
    how many files it looked at and how many it read afresh.
    """

    version: int
    changed: bool
    created: int = 0
    updated: int = 0
    recycled: int = 0
    links_added: int = 0
    links_removed: int = 0
    links_updated: int = 0
    warnings: tuple[Warning_, ...] = ()
    ids: dict[str, str] = field(default_factory=dict)
    files: int = 0
    parsed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The counts as plain data (what the CLI's and MCP's JSON carry)."""
        return {
            "version": self.version,
            "changed": self.changed,
            "created": self.created,
            "updated": self.updated,
            "recycled": self.recycled,
            "links_added": self.links_added,
            "links_updated": self.links_updated,
            "links_removed": self.links_removed,
            "files": self.files,
            "parsed": self.parsed,
            "warnings": [str(w) for w in self.warnings],
        }

    def summary(self) -> str:
        """One line for people: the version and the counts."""
        head = f"version {self.version}" + ("" if self.changed else " (unchanged)")
        line = (
            f"{head}: +{self.created} ~{self.updated} -{self.recycled} elements, "
            f"+{self.links_added} ~{self.links_updated} -{self.links_removed} links"
        )
        if self.files:
            line += f", {self.parsed}/{self.files} files parsed"
        if self.warnings:
            line += f", {len(self.warnings)} warning(s)"
        return line


# -- reading the session ------------------------------------------------------------
def read_session(
    session: Any, art_scope: Artefacts
) -> tuple[Snapshot, list[int], list[int], dict[str, str]]:
    """The snapshot, the ids of duplicate nodes and edges to recycle, and the
    handles of the nodes outside the scope that links may end at."""
    s = session.store
    managed = frozenset(art_scope.managed_types)
    in_scope = art_scope.in_scope
    outside = art_scope.outside
    elements: dict[str, tuple[str, str, tuple[str, ...], dict[str, Any]]] = {}
    loc_of: dict[int, str] = {}
    far_of: dict[int, str] = {}  # node id -> locator, for the nodes named in `outside`
    far: dict[str, str] = {}  # locator -> handle of the oldest live node holding it
    dup_nodes: list[int] = []
    cols = s.view()
    prop_maps, etypes = cols.prop_maps, cols.edge_types
    for nid in s.live_node_ids():
        props = prop_maps[nid]
        if not props:
            continue
        loc = props.get(LOCATOR)
        if not isinstance(loc, str):
            continue
        if loc in outside and not in_scope(loc):
            if loc not in far:  # ids ascend: the first one seen is the oldest
                far[loc] = node_handle(nid)
                far_of[nid] = loc
            continue
        if not in_scope(loc):
            continue
        if loc in elements:  # ids ascend, so the first one seen is the oldest
            dup_nodes.append(nid)
            continue
        rest = {k: v for k, v in props.items() if k != LOCATOR}
        elements[loc] = (node_handle(nid), cols.kinds[nid], cols.extra_labels[nid], rest)
        loc_of[nid] = loc
    links: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    first_edge: dict[tuple[str, str, str], int] = {}
    dup_edges: list[int] = []
    for nid, src_loc in loc_of.items():
        for e, d, other in s.live_entries(nid):
            if d != OUT or etypes[e] not in managed:
                continue
            dst_loc = loc_of.get(other) or far_of.get(other)
            if dst_loc is None:
                continue
            key = (etypes[e], src_loc, dst_loc)
            seen = first_edge.get(key)
            if seen is None or e < seen:
                if seen is not None:
                    dup_edges.append(seen)
                first_edge[key] = e
            else:
                dup_edges.append(e)
    for key, e in first_edge.items():
        links[key] = (edge_handle(e), dict(s.edge_props(e)))
    return (elements, links), sorted(dup_nodes), sorted(dup_edges), far


def snapshot(session: Any, art_scope: Artefacts) -> Snapshot:
    """What ``session`` holds in the scope of ``art_scope``.

    Returns ``(elements, links)``: ``elements[locator] = (handle, kind,
    labels, props)`` for every live node whose ``locator`` property is in
    scope (labels exclude the kind; props exclude ``locator``), and
    ``links[(type, src_locator, dst_locator)] = (edge_handle, props)`` for
    every live edge of a managed type between two of those nodes. Reads the
    store directly; costs one pass over the live nodes plus the adjacency of
    the nodes in scope.
    """
    with session.lock:
        return read_session(session, art_scope)[0]


# -- checking the artefacts ---------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    """Equality that tells 1, 1.0 and True apart (as the GQL text does)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b, strict=False))
        )
    return type(a) is type(b) and a == b


def _value(v: Any, where: str) -> ast.Value:
    if isinstance(v, list):
        v = tuple(v)
    if isinstance(v, tuple):
        for x in v:
            if not isinstance(x, (str, int, float, bool)):
                raise TypeError(f"{where}: a list holds a {type(x).__name__}")
        return v
    if not isinstance(v, (str, int, float, bool)):
        raise TypeError(f"{where}: a value of type {type(v).__name__} cannot be stored")
    return v


def _props(props: Mapping[str, Any], where: str) -> dict[str, ast.Value]:
    out: dict[str, ast.Value] = {}
    for k, v in props.items():
        if not isinstance(k, str) or _KEY.fullmatch(k) is None:
            raise InvalidArgument(f"{where}: bad property key {k!r}")
        if k == LOCATOR:
            raise InvalidArgument(f"{where}: 'locator' is set by the sync, not by the ingester")
        out[k] = _value(v, f"{where}.{k}")
    return out


def _label(x: Any, what: str, where: str) -> str:
    if not isinstance(x, str) or _LABEL.fullmatch(x) is None:
        raise InvalidArgument(f"{where}: bad {what} {x!r} (must match [A-Z][A-Z0-9_]*)")
    return x


def _desired(
    art: Artefacts,
) -> tuple[
    dict[str, tuple[str, tuple[str, ...], dict[str, Any]]],
    dict[tuple[str, str, str], dict[str, Any]],
]:
    """Check every element and link; raise InvalidArgument before anything is written."""
    managed = set(art.managed_types)
    for t in managed:
        _label(t, "managed edge type", "artefacts")
    elements: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {}
    for loc, el in art.elements.items():
        if not isinstance(el, Element) or el.locator != loc:
            raise InvalidArgument(f"element {loc!r} is filed under another locator")
        if not art.in_scope(loc):
            raise InvalidArgument(f"element {loc!r} is outside the scope {art.schemes}:{art.root}")
        kind = _label(el.kind, "kind", loc)
        labels = tuple(sorted({_label(x, "label", loc) for x in el.labels} - {kind}))
        elements[loc] = (kind, labels, _props(el.props, loc))
    links: dict[tuple[str, str, str], dict[str, Any]] = {}
    for key, lk in art.links.items():
        if not isinstance(lk, Link) or lk.key != key:
            raise InvalidArgument(f"link {key!r} is filed under another key")
        where = f"{lk.src} -[{lk.type}]-> {lk.dst}"
        if lk.type not in managed:
            raise InvalidArgument(
                f"{where}: edge type {lk.type!r} is not one of the managed types "
                f"{tuple(art.managed_types)}"
            )
        if lk.src not in elements:
            raise InvalidArgument(f"{where}: {lk.src!r} is not an element of the artefacts")
        if lk.dst not in elements and lk.dst not in art.outside:
            raise InvalidArgument(
                f"{where}: {lk.dst!r} is neither an element of the "
                f"artefacts nor named in their outside locators"
            )
        links[key] = _props(lk.props, where)
    return elements, links


# -- the diff -------------------------------------------------------------------------
def _prop_changes(var: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    for k in sorted(new):
        if k not in old or not _same(old[k], new[k]):
            out.append(ast.SetProp(var, k, new[k]))
    for k in sorted(old):
        if k not in new and k != LOCATOR:
            out.append(ast.RemoveProp(var, k))
    return out


def _sorted_props(props: Mapping[str, Any]) -> ast.Props:
    return tuple((k, props[k]) for k in sorted(props))


def sync(session: Any, artefacts: Artefacts) -> SyncResult:
    """Make the scope of ``artefacts`` in ``session`` equal to ``artefacts``.

    Writes at most one Commit (none when nothing differs). Raises ValueError,
    before anything is written, for artefacts the session cannot hold (a
    link to a locator that is not an element, an element outside the scope,
    a bad kind, label, edge type, key or value); a Commit refusal (the rate
    cap) propagates with the session unchanged.
    """
    with session.lock:
        return sync_read(session, artefacts, None)


Reading = tuple[Snapshot, list[int], list[int], dict[str, str]]


def sync_read(session: Any, art: Artefacts, read: Reading | None) -> SyncResult:
    """:func:`sync` with the session's lock held and, when given, what
    :func:`read_session` found in it."""
    want_el, want_ln = _desired(art)
    (have_el, have_ln), dup_nodes, dup_edges, far = (
        read if read is not None else read_session(session, art)
    )
    warnings = list(art.warnings) + _unlinked(session, want_el, want_ln, dup_nodes, far)
    fresh, gone, edits, updated = _node_changes(want_el, have_el)
    survives = {loc for loc in have_el if loc in want_el and loc not in fresh} | set(far)
    new_nodes = [
        ast.NodePattern(
            fresh[loc],
            (want_el[loc][0], *want_el[loc][1]),
            _sorted_props({**want_el[loc][2], LOCATOR: loc}),
        )
        for loc in sorted(fresh)
    ]

    def ref(loc: str) -> str:
        return fresh.get(loc) or (have_el[loc][0] if loc in have_el else far[loc])

    new_edges, edge_edits, links_updated, dropped, edge_gone = _link_changes(
        want_ln, have_ln, survives, ref
    )
    statements: list[Any] = []
    if new_nodes or new_edges:
        statements.append(ast.Insert(tuple(new_nodes), tuple(new_edges)))
    statements += edits
    statements += edge_edits
    statements += edge_gone
    statements += [ast.Delete(edge_handle(e)) for e in dup_edges]
    statements += [ast.Delete(h) for h in gone]
    statements += [ast.Delete(node_handle(n)) for n in dup_nodes]
    if not statements:
        return SyncResult(
            version=session.version,
            changed=False,
            warnings=tuple(warnings),
            files=art.files,
            parsed=art.parsed,
        )
    res = session.commit(ast.Delta(tuple(statements)))
    ids = {loc: res.ids[var] for loc, var in fresh.items() if var in res.ids}
    return SyncResult(
        version=res.version,
        changed=res.changed,
        created=len(fresh),
        updated=updated,
        recycled=len(gone) + len(dup_nodes),
        links_added=len(new_edges),
        links_removed=len(dropped),
        links_updated=links_updated,
        warnings=tuple(warnings),
        ids=ids,
        files=art.files,
        parsed=art.parsed,
    )


def _unlinked(
    session: Any,
    want_el: Mapping[str, Any],
    want_ln: dict[tuple[str, str, str], Any],
    dup_nodes: list[int],
    far: Mapping[str, str],
) -> list[Warning_]:
    """Drop from ``want_ln`` the links to far nodes the session does not
    hold; a warning for each, and for each duplicate node to recycle."""
    warnings: list[Warning_] = []
    for key in [k for k in sorted(want_ln) if k[2] not in want_el and k[2] not in far]:
        del want_ln[key]  # its far node is not in the session: no link to draw
        warnings.append(
            Warning_(
                key[1],
                0,
                f"no {key[0]} link to {key[2]!r}: the session holds no node with that locator",
            )
        )
    for nid in dup_nodes:
        warnings.append(
            Warning_(
                node_handle(nid),
                0,
                "a second live node with the locator "
                f"{session.store.node_props(nid).get(LOCATOR)!r}; recycled",
            )
        )
    return warnings


def _node_changes(
    want_el: Mapping[str, Any], have_el: Mapping[str, Any]
) -> tuple[dict[str, str], list[str], list[Any], int]:
    """``(fresh, gone, edits, updated)``: the INSERT variable of each new
    element's locator, the handles of the nodes to recycle, the property and
    label edits of the others and how many nodes they touch."""
    fresh: dict[str, str] = {}  # locator -> INSERT variable
    gone: list[str] = []  # handles of nodes to recycle
    edits: list[Any] = []
    updated = 0
    for loc in sorted(want_el):
        kind, labels, props = want_el[loc]
        held = have_el.get(loc)
        if held is None or held[1] != kind:
            if held is not None:
                gone.append(held[0])
            fresh[loc] = f"v{len(fresh) + 1}"
            continue
        handle, _kind, old_labels, old_props = held
        ch = _prop_changes(handle, old_props, props)
        ch += [ast.SetLabel(handle, x) for x in labels if x not in old_labels]
        ch += [ast.RemoveLabel(handle, x) for x in old_labels if x not in labels]
        if ch:
            updated += 1
            edits.extend(ch)
    gone += [have_el[loc][0] for loc in sorted(have_el) if loc not in want_el]
    return fresh, gone, edits, updated


def _link_changes(
    want_ln: Mapping[tuple[str, str, str], Any],
    have_ln: Mapping[tuple[str, str, str], Any],
    survives: set[str],
    ref: Callable[[str], str],
) -> tuple[list[ast.EdgePattern], list[Any], int, list[tuple[str, str, str]], list[Any]]:
    """``(new edges, property edits, links updated, links dropped, deletes)``:
    a held link between two surviving nodes is edited in place, any other
    wanted link is drawn anew."""
    new_edges: list[ast.EdgePattern] = []
    edge_edits: list[Any] = []
    links_updated = 0
    for key in sorted(want_ln):
        t, src, dst = key
        props = want_ln[key]
        held_ln = have_ln.get(key)
        if held_ln is not None and src in survives and dst in survives:
            ch = _prop_changes(held_ln[0], held_ln[1], props)
            if ch:
                links_updated += 1
                edge_edits.extend(ch)
            continue
        new_edges.append(ast.EdgePattern(None, t, ref(src), ref(dst), _sorted_props(props)))
    dropped = [
        key
        for key in sorted(have_ln)
        if key not in want_ln or key[1] not in survives or key[2] not in survives
    ]
    edge_gone = [
        ast.Delete(have_ln[key][0]) for key in dropped if key[1] in survives and key[2] in survives
    ]
    return new_edges, edge_edits, links_updated, dropped, edge_gone


__all__ = ["LOCATOR", "Snapshot", "SyncResult", "read_session", "snapshot", "sync", "sync_read"]
