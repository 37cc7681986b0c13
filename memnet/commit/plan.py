"""Plan and apply: the two phases of a Commit.

*Plan* (:class:`Plan`) reads the store and a private overlay of what the Δ
has done so far, checks every rule and builds the list of changes; it never
writes. *Apply* (:func:`apply_plan`) checks the rate cap and writes the
planned changes, which have all been checked, so a refused Δ leaves the
session exactly as it was. Absorb builds its plans in :mod:`.importing`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..errors import CapExceeded, CommitRejected, EchoRefused
from ..gql import ast
from ..graph.store import Store, edge_handle, node_handle, text_bytes
from ..values import node_key, props_text
from .checks import (
    KEY,
    LABEL,
    MAX_EDGE_TYPES,
    MAX_KINDS,
    MAX_LABEL_NAMES,
    MAX_LABELS,
    MAX_PROPS,
    NICK,
    check_name,
    check_props,
    check_value,
    differs,
)
from .records import Caps, Change, CommitRecord, CommitResult


@dataclass(slots=True)
class _NodeState:
    kind: str
    labels: set[str]
    props: dict[str, Any]
    nick: str | None
    recycled: bool


@dataclass(slots=True)
class _EdgeState:
    type: str
    src: tuple[str, int]  # ('n', id) existing or ('new', index)
    dst: tuple[str, int]
    props: dict[str, Any]
    recycled: bool


class Plan:
    """The overlay a Δ builds before anything is written."""

    def __init__(self, store: Store, delete_on_settle: bool) -> None:
        self.s = store
        self.delete_on_settle = delete_on_settle
        self.vars: dict[str, tuple[str, int]] = {}  # var -> ('new'|'newe'|'n'|'e', idx)
        self.new_nodes: list[_NodeState] = []
        self.new_edges: list[_EdgeState] = []
        self.node_over: dict[int, _NodeState] = {}
        self.edge_over: dict[int, _EdgeState] = {}
        self.nicks: dict[str, tuple[str, int] | None] = {}  # overlay of nick owners
        self.client_vars: list[tuple[str, tuple[str, int]]] = []
        self.handles: dict[str, tuple[str, int]] = {}  # handles resolved so far
        # kinds, labels and edge types checked against the caps on distinct
        # names (held already, or new and counted in self.new_names)
        self.kinds_ok: set[str] = set()
        self.labels_ok: set[str] = set()
        self.types_ok: set[str] = set()
        self.new_names = {"kind": 0, "label": 0, "type": 0}

    @staticmethod
    def _err(msg: str, pos: ast.Pos) -> CommitRejected:
        return CommitRejected(msg, line=pos.line, column=pos.column)

    # -- state access through the overlay -----------------------------------
    def node(self, ref: tuple[str, int]) -> _NodeState:
        tag, i = ref
        if tag == "new":
            return self.new_nodes[i]
        st = self.node_over.get(i)
        if st is None:
            s = self.s
            kind, labels, props, nick, recycled = s.node_state(i)
            st = _NodeState(kind, set(labels), dict(props or {}), nick, recycled)
            self.node_over[i] = st
        return st

    def peek_node_recycled(self, ref: tuple[str, int]) -> bool:
        tag, i = ref
        if tag == "new":
            return self.new_nodes[i].recycled
        st = self.node_over.get(i)
        return st.recycled if st is not None else self.s.node_recycled(i)

    def edge(self, ref: tuple[str, int]) -> _EdgeState:
        tag, i = ref
        if tag == "newe":
            return self.new_edges[i]
        st = self.edge_over.get(i)
        if st is None:
            s = self.s
            etype, src, dst, props, recycled = s.edge_state(i)
            st = _EdgeState(etype, ("n", src), ("n", dst), dict(props or {}), recycled)
            self.edge_over[i] = st
        return st

    def new_node(
        self, kind: str, labels: set[str], props: dict[str, Any], nick: str | None, recycled: bool
    ) -> int:
        """Add a checked new node to the plan; returns its index."""
        self.new_nodes.append(_NodeState(kind, labels, props, nick, recycled))
        return len(self.new_nodes) - 1

    def new_edge(
        self,
        etype: str,
        src: tuple[str, int],
        dst: tuple[str, int],
        props: dict[str, Any],
        recycled: bool,
    ) -> int:
        """Add a checked new edge to the plan; returns its index."""
        self.new_edges.append(_EdgeState(etype, src, dst, props, recycled))
        return len(self.new_edges) - 1

    def nick_owner(self, nick: str) -> tuple[str, int] | None:
        if nick in self.nicks:
            return self.nicks[nick]
        nid = self.s.nick_owner(nick)
        return ("n", nid) if nid is not None else None

    # -- the caps on names ------------------------------------------------------
    def kind(self, kind: str, pos: ast.Pos) -> None:
        """Count ``kind`` against the session's cap on distinct kinds."""
        if not self.s.kind_known(kind):
            self._new_name("kind", kind, self.s.kinds_known(), MAX_KINDS, pos)
        self.kinds_ok.add(kind)

    def edge_type(self, etype: str, pos: ast.Pos) -> None:
        if not self.s.edge_type_known(etype):
            self._new_name("type", etype, self.s.edge_types_known(), MAX_EDGE_TYPES, pos)
        self.types_ok.add(etype)

    def labels(self, labels: set[str] | tuple[str, ...], count: int, pos: ast.Pos) -> None:
        """Check the extra labels of one node (``count``: how many it will
        carry, its kind included) against the caps."""
        if count > MAX_LABELS:
            raise self._err(
                f"a node carries at most {MAX_LABELS} labels, its kind included; "
                f"this one would carry {count}",
                pos,
            )
        use: Any = None
        for lab in labels:
            if lab in self.labels_ok:
                continue
            if use is None:
                use = self.s.label_use()
            if lab not in use:
                self._new_name("label", lab, len(use), MAX_LABEL_NAMES, pos)
            self.labels_ok.add(lab)

    def _new_name(self, what: str, name: str, held: int, cap: int, pos: ast.Pos) -> None:
        n = self.new_names[what] + 1
        if held + n > cap:
            word = {"kind": "kinds", "label": "labels", "type": "edge types"}[what]
            raise CommitRejected(
                f"{name} would be a new {what.replace('type', 'edge type')}: a session holds "
                f"at most {cap} distinct {word} (this one holds {held}; the Δ adds {n} or more); "
                f"reuse the {word} it has, or start a new session",
                line=pos.line,
                column=pos.column,
                what=word,
                held=held,
                cap=cap,
            )
        self.new_names[what] = n

    # -- resolution -----------------------------------------------------------
    def lookup(self, var: str, pos: ast.Pos, *, want: str = "any") -> tuple[str, int]:
        """Resolve a variable or handle to a live element reference."""
        ref = self.vars.get(var)
        if ref is None:
            ref = self.handles.get(var)
            if ref is None:
                h = self.s.resolve(var)
                if h is None:
                    raise self._err(f"unknown handle or variable {var!r}", pos)
                ref = self.handles[var] = h
        tag = ref[0]
        is_node = tag in ("new", "n")
        if want == "node" and not is_node:
            raise self._err(f"{var} is an edge; a node is needed here", pos)
        if want == "edge" and is_node:
            raise self._err(f"{var} is a node; an edge is needed here", pos)
        recycled = self.peek_node_recycled(ref) if is_node else self.edge(ref).recycled
        if recycled:
            raise self._err(f"{var} is recycled", pos)
        return ref

    def bind_new(self, var: str | None, pos: ast.Pos) -> None:
        if var is None:
            return
        if var in self.vars:
            raise self._err(f"variable {var!r} is bound twice in this Δ", pos)
        if self.s.resolve(var) is not None:
            raise EchoRefused(
                f"{var} is an existing handle: re-inserting a recalled row is refused; "
                f"use SET {var}.key = value to change it",
                line=pos.line,
                column=pos.column,
            )

    # -- statements -----------------------------------------------------------
    def insert(self, st: ast.Insert) -> None:
        for np in st.nodes:
            if np.bare:
                if np.var is None:  # pragma: no cover - parser names anonymous nodes
                    raise self._err("empty node pattern", np.pos)
                if np.var not in self.vars:
                    self.lookup(np.var, np.pos, want="node")
                continue
            if not np.labels:
                raise self._err("a new node needs a kind, e.g. (t:TSK {...})", np.pos)
            for lab in np.labels:
                check_name(LABEL, lab, "label", np.pos)
            if np.nick is not None:
                check_name(NICK, np.nick, "nickname", np.pos)
            self.bind_new(np.var, np.pos)
            props = check_props(np.props, np.pos)
            if np.nick is not None:
                self.claim_nick(np.nick, ("new", len(self.new_nodes)), np.pos)
            kind = np.labels[0]
            if kind not in self.kinds_ok:
                self.kind(kind, np.pos)
            extra = set(np.labels[1:]) - {kind}
            if extra:
                self.labels(extra, len(extra) + 1, np.pos)
            self.new_nodes.append(_NodeState(kind, extra, props, np.nick, False))
            ref = ("new", len(self.new_nodes) - 1)
            if np.var is not None:
                self.vars[np.var] = ref
                if not np.var.startswith("_anon"):
                    self.client_vars.append((np.var, ref))
        for ep in st.edges:
            src = self.vars.get(ep.src) or self.lookup(ep.src, ep.pos, want="node")
            dst = self.vars.get(ep.dst) or self.lookup(ep.dst, ep.pos, want="node")
            if src[0] not in ("new", "n") or dst[0] not in ("new", "n"):
                raise self._err("an edge must join two nodes", ep.pos)
            for end, name in ((src, ep.src), (dst, ep.dst)):
                if self.peek_node_recycled(end):
                    raise self._err(f"{name} is recycled: the edge would dangle", ep.pos)
            self.bind_new(ep.var, ep.pos)
            check_name(LABEL, ep.type, "edge type", ep.pos)
            if ep.type not in self.types_ok:
                self.edge_type(ep.type, ep.pos)
            props = check_props(ep.props, ep.pos)
            self.new_edges.append(_EdgeState(ep.type, src, dst, props, False))
            ref = ("newe", len(self.new_edges) - 1)
            if ep.var is not None:
                self.vars[ep.var] = ref
                self.client_vars.append((ep.var, ref))

    def claim_nick(self, nick: str, ref: tuple[str, int], pos: ast.Pos) -> None:
        """Give ``nick`` to ``ref``, refused when a live node holds it."""
        owner = self.nick_owner(nick)
        if owner is not None and owner != ref and not self.peek_node_recycled(owner):
            raise self._err(f"nickname #{nick} is already in use", pos)
        self.nicks[nick] = ref

    def statement(self, st: ast.Statement) -> None:
        if isinstance(st, ast.Insert):
            self.insert(st)
        elif isinstance(st, ast.SetProp):
            ref = self.lookup(st.var, st.pos)
            check_name(KEY, st.key, "property key", st.pos)
            check_value(st.value, st.pos)
            target = self.node(ref) if ref[0] in ("new", "n") else self.edge(ref)
            target.props[st.key] = st.value
            if len(target.props) > MAX_PROPS:
                raise self._err(f"more than {MAX_PROPS} properties on one element", st.pos)
        elif isinstance(st, ast.RemoveProp):
            ref = self.lookup(st.var, st.pos)
            target = self.node(ref) if ref[0] in ("new", "n") else self.edge(ref)
            target.props.pop(st.key, None)
        elif isinstance(st, ast.SetLabel):
            check_name(LABEL, st.label, "label", st.pos)
            n = self.node(self.lookup(st.var, st.pos, want="node"))
            if st.label != n.kind and st.label not in n.labels:
                self.labels((st.label,), len(n.labels) + 2, st.pos)
                n.labels.add(st.label)
        elif isinstance(st, ast.RemoveLabel):
            n = self.node(self.lookup(st.var, st.pos, want="node"))
            if st.label == n.kind:
                raise self._err(
                    f"{st.label} is the kind of {st.var}; a kind cannot be removed", st.pos
                )
            n.labels.discard(st.label)
        elif isinstance(st, ast.SetNick):
            check_name(NICK, st.nick, "nickname", st.pos)
            ref = self.lookup(st.var, st.pos, want="node")
            n = self.node(ref)
            if n.nick is not None and n.nick != st.nick:
                self.nicks[n.nick] = None
            self.claim_nick(st.nick, ref, st.pos)
            n.nick = st.nick
        elif isinstance(st, ast.RemoveNick):
            ref = self.lookup(st.var, st.pos, want="node")
            n = self.node(ref)
            if n.nick != st.nick:
                raise self._err(f"{st.var} has no nickname #{st.nick}", st.pos)
            self.nicks[st.nick] = None
            n.nick = None
        elif isinstance(st, ast.Delete):
            ref = self.lookup(st.var, st.pos)
            if ref[0] in ("new", "newe"):
                raise self._err(
                    f"{st.var} was created in this Δ; leave it out instead of deleting it", st.pos
                )
            if ref[0] == "n":
                self._recycle_node(ref, st.pos)
            else:
                self.edge(ref).recycled = True
        elif isinstance(st, ast.Settle):
            ref = self.lookup(st.var, st.pos, want="node")
            n = self.node(ref)
            if n.kind != "TSK" and "TSK" not in n.labels:
                raise self._err(f"SETTLE ends a task; {st.var} is a {n.kind}, not a TSK", st.pos)
            n.props["settled"] = True
            if "status" in n.props:
                # a settled task shows it: its status can no longer say 'open'
                n.props["status"] = "settled"
            if self.delete_on_settle or n.props.get("delete_on_settle") is True:
                if ref[0] == "new":
                    raise self._err(
                        f"{st.var} was created in this Δ and would be recycled at once", st.pos
                    )
                self._recycle_node(ref, st.pos)
        elif isinstance(st, ast.Gone):
            raise EchoRefused(
                f"GONE {st.var} is part of a delta Recall answer (rows that left a Shape), "
                "not a Commit: nothing was applied; to recycle a row write DELETE with its "
                "handle",
                line=st.pos.line,
                column=st.pos.column,
            )
        else:  # pragma: no cover - the parser yields nothing else
            raise CommitRejected(f"unsupported statement {type(st).__name__}")

    def _recycle_node(self, ref: tuple[str, int], pos: ast.Pos) -> None:
        for es in self.new_edges:
            if ref in (es.src, es.dst):
                raise self._err(
                    "this Δ adds an edge to the node it recycles: the edge would dangle", pos
                )
        n = self.node(ref)
        n.recycled = True
        if n.nick is not None:
            self.nicks[n.nick] = None
        nid = ref[1]
        for e, _d, _o in list(self.s.live_entries(nid)):
            self.edge(("e", e)).recycled = True


def plan_and_apply(
    store: Store, delta: ast.Delta, *, version: int, caps: Caps, delete_on_settle: bool = False
) -> tuple[CommitResult, CommitRecord | None]:
    """Check ``delta`` against ``store`` and, if every rule holds, apply it.

    Returns the result and the history record (None when nothing changed).
    Raises a CommitRejected subclass, with the store untouched, otherwise.
    """
    p = Plan(store, delete_on_settle)
    for st in delta.statements:
        p.statement(st)
    # a Δ of SETTLE, DELETE and REMOVE only is always welcome, even past the
    # cap: it is how a full session is tidied (SETTLE adds a small flag)
    tidy = all(
        isinstance(st, (ast.Settle, ast.Delete, ast.RemoveProp, ast.RemoveLabel, ast.RemoveNick))
        for st in delta.statements
    )
    return apply_plan(store, p, version=version, caps=caps, tidy=tidy)


def apply_plan(
    store: Store, p: Plan, *, version: int, caps: Caps, tidy: bool
) -> tuple[CommitResult, CommitRecord | None]:
    """Check the rate cap for a finished plan and write it (the *Apply* phase).

    ``tidy``: the Δ only settles, deletes and removes, which the cap always
    lets through. Returns the result and the history record (None when
    nothing changed); raises CapExceeded, with the store untouched, otherwise.
    """
    node_changes, edge_changes = _changes(store, p)
    if not p.new_nodes and not p.new_edges and not node_changes and not edge_changes:
        return CommitResult(ids={}, version=version, changed=False), None
    keys = [node_key(ns.kind, tuple(sorted(ns.labels)), ns.props) for ns in p.new_nodes]
    _check_cap(store, p, keys, node_changes, edge_changes, caps=caps, tidy=tidy)
    # ---- apply: everything below has been checked -----------------------
    written = _write(store, p, keys, node_changes, edge_changes)
    return _result(store, p, node_changes, edge_changes, written, version=version + 1, caps=caps)


def _changes(
    store: Store, p: Plan
) -> tuple[list[tuple[int, _NodeState]], list[tuple[int, _EdgeState]]]:
    """The existing elements the plan really changes."""
    node_changes: list[tuple[int, _NodeState]] = []
    for nid, ns in p.node_over.items():
        _kind, had_labels, had_props, had_nick, was_recycled = store.node_state(nid)
        if (
            set(had_labels) != ns.labels
            or differs(had_props, ns.props)
            or had_nick != ns.nick
            or was_recycled != ns.recycled
        ):
            node_changes.append((nid, ns))
    edge_changes: list[tuple[int, _EdgeState]] = []
    for eid, es in p.edge_over.items():
        if differs(store.edge_props(eid), es.props) or store.edge_recycled(eid) != es.recycled:
            edge_changes.append((eid, es))
    return node_changes, edge_changes


def _check_cap(
    store: Store,
    p: Plan,
    keys: list[str],
    node_changes: list[tuple[int, _NodeState]],
    edge_changes: list[tuple[int, _EdgeState]],
    *,
    caps: Caps,
    tidy: bool,
) -> None:
    """Rate cap R: count the live rows and bytes after the Δ and refuse what
    passes the cap and grows (``keys``: the node keys of the new nodes)."""
    rows = store.live_nodes + store.live_edges
    nbytes = store.live_bytes
    for ns, key in zip(p.new_nodes, keys, strict=False):
        if not ns.recycled:
            rows += 1
            nbytes += text_bytes(key) + 8
    for es in p.new_edges:
        if not es.recycled:
            rows += 1
            nbytes += text_bytes(es.type) + text_bytes(props_text(es.props)) + 8
    for nid, ns in node_changes:
        if ns.recycled and not store.node_recycled(nid):
            rows -= 1
            nbytes -= store.node_bytes(nid)
        elif not ns.recycled:
            nbytes += text_bytes(
                node_key(ns.kind, tuple(sorted(ns.labels)), ns.props)
            ) - text_bytes(store.node_key(nid))
    for eid, es in edge_changes:
        if es.recycled and not store.edge_recycled(eid):
            rows -= 1
            nbytes -= store.edge_bytes(eid)
    # refuse what passes the cap and grows
    before_rows = store.live_nodes + store.live_edges
    if not tidy and (
        (rows > caps.rows and rows > before_rows)
        or (nbytes > caps.bytes and nbytes > store.live_bytes)
    ):
        raise CapExceeded(
            f"this Commit would bring the session to {rows} rows / {nbytes} bytes, past its cap "
            f"of {caps.rows} rows / {caps.bytes} bytes; start a new session (S_i+1) for new "
            "work instead of growing this one",
            rows=rows,
            bytes=nbytes,
            cap_rows=caps.rows,
            cap_bytes=caps.bytes,
        )


def _write(
    store: Store,
    p: Plan,
    keys: list[str],
    node_changes: list[tuple[int, _NodeState]],
    edge_changes: list[tuple[int, _EdgeState]],
) -> tuple[range, range, int]:
    """Write a checked plan; returns the minted node and edge ids and how many
    existing elements were recycled."""
    first = (
        store.add_nodes(
            [(ns.kind, tuple(ns.labels), ns.props or None, ns.nick) for ns in p.new_nodes], keys
        )
        if p.new_nodes
        else store.next_node
    )
    minted_nodes = range(first, first + len(p.new_nodes))

    def real(ref: tuple[str, int]) -> int:
        return first + ref[1] if ref[0] == "new" else ref[1]

    first_e = (
        store.add_edges(
            [(es.type, real(es.src), real(es.dst), es.props or None) for es in p.new_edges]
        )
        if p.new_edges
        else store.next_edge
    )
    minted_edges = range(first_e, first_e + len(p.new_edges))
    # nick releases first so that a nick can move between nodes in one Δ
    for nid, ns in node_changes:
        if store.node_nick(nid) != ns.nick:
            store.update_node(nid, nick=None)
    for nid, ns in node_changes:
        props: Any = ns.props if differs(store.node_props(nid), ns.props) else ...
        nick: Any = ns.nick if store.node_nick(nid) != ns.nick else ...
        store.update_node(nid, labels=tuple(ns.labels), props=props, nick=nick)
    for eid, es in edge_changes:
        if differs(store.edge_props(eid), es.props):
            store.update_edge(eid, es.props or None)
    # placeholders born recycled (imports that keep ids) and recycled elements
    store.recycle_edges(
        [minted_edges[i] for i, es in enumerate(p.new_edges) if es.recycled]
        + [eid for eid, es in edge_changes if es.recycled]
    )
    store.recycle_nodes([minted_nodes[i] for i, ns in enumerate(p.new_nodes) if ns.recycled])
    gone = [nid for nid, ns in node_changes if ns.recycled and not store.node_recycled(nid)]
    store.recycle_nodes(gone)
    recycled = len(gone)
    recycled += sum(1 for _e, es in edge_changes if es.recycled)
    return minted_nodes, minted_edges, recycled


def _result(
    store: Store,
    p: Plan,
    node_changes: list[tuple[int, _NodeState]],
    edge_changes: list[tuple[int, _EdgeState]],
    written: tuple[range, range, int],
    *,
    version: int,
    caps: Caps,
) -> tuple[CommitResult, CommitRecord]:
    """The result and the history record of a written plan (``written``: what
    :func:`_write` returns; ``version``: the session's version after it)."""
    minted_nodes, minted_edges, recycled = written
    changes: list[Change] = []
    for nid in minted_nodes:
        changes.append(Change("N+", nid, store.node_state(nid)))
    for eid in minted_edges:
        changes.append(Change("E+", eid, store.edge_state(eid)))
    for nid, _ns in node_changes:
        changes.append(Change("N~", nid, store.node_state(nid)))
    for eid, _es in edge_changes:
        changes.append(Change("E~", eid, store.edge_state(eid)))

    ids: dict[str, str] = {}
    for var, ref in p.client_vars:
        ids[var] = (
            node_handle(minted_nodes[ref[1]])
            if ref[0] == "new"
            else edge_handle(minted_edges[ref[1]])
        )
    summary = {
        "created": len(minted_nodes) + len(minted_edges),
        "updated": len(node_changes) + len(edge_changes) - recycled,
        "recycled": recycled,
    }
    record = CommitRecord(version, time.time(), tuple(changes), summary)
    used = (store.live_nodes + store.live_edges) / caps.rows
    advice = None
    if used >= 0.9:
        advice = (
            f"session holds {used:.0%} of its row cap; plan the next session (S_i+1) "
            "and settle finished tasks"
        )
    result = CommitResult(
        ids=ids,
        version=version,
        changed=True,
        created=summary["created"],
        updated=summary["updated"],
        recycled=recycled,
        advice=advice,
    )
    return result, record
