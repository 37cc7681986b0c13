"""Commit(Δ): apply one mutation batch atomically.

A Commit runs in two phases. *Plan* reads the store and a private overlay of
what the Δ has done so far, checks every rule of SPEC §4 and builds the list
of changes; it never writes. *Apply* writes the planned changes, which have
all been checked, so a refused Δ leaves the session exactly as it was.

Rules, in short:

* a variable bound by a pattern with a kind is NEW and gets a minted handle;
* a bare ``(x)`` names a variable bound earlier in the Δ or an existing live
  node handle;
* a pattern whose variable is already a minted handle is an echo of a
  recalled row and is refused (writeback is NEW/SET only);
* unknown handles, recycled targets, dangling edges, bad values and a passed
  rate cap are refused with the line and column of the statement.
"""

from __future__ import annotations

import gc
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .errors import CapExceeded, CommitRejected, EchoRefused, VersionNotFound
from .gql import ast
from .graph.store import Store, edge_handle, node_handle, text_bytes
from .values import node_key, props_text

MAX_STRING = 1 << 20      # one property value
MAX_LIST = 4096           # items in a list value
MAX_PROPS = 256           # properties on one element
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Caps:
    """The rate cap R of a session: live rows (nodes + edges) and bytes."""

    rows: int = 200_000
    bytes: int = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What a Commit returns.

    ``ids`` maps each client variable to its minted handle; ``version`` is the
    session version after the Commit (unchanged when the Δ changed nothing);
    ``changed`` says whether anything was written; ``advice`` is set when the
    session is close to its cap.
    """

    ids: dict[str, str]
    version: int
    changed: bool = True
    created: int = 0
    updated: int = 0
    recycled: int = 0
    advice: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One element's change inside a commit record (used by history and flush).

    ``op`` is ``'N+'`` (node created), ``'E+'`` (edge created), ``'N~'`` (node
    changed) or ``'E~'`` (edge changed). ``state`` is the element's full state
    after the change: for nodes ``(kind, labels, props, nick, recycled)``, for
    edges ``(type, src, dst, props, recycled)``. Property dicts are shared with
    the store and never mutated in place.
    """

    op: str
    id: int
    state: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """One version in a session's history."""

    version: int
    time: float
    changes: tuple[Change, ...]
    summary: dict[str, int] = field(default_factory=dict)


_GC_LOCK = threading.Lock()
_GC_HELD = 0  # writes under way that paused the collector


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector while a batch is parsed and written.

    A commit allocates many small objects (syntax tree, property maps, index
    entries) that form no cycles; the collections their count would trigger
    walk every object the session holds, which made a bulk load spend about
    a quarter of its time in the collector. Collection resumes when the last
    write under way ends (only when it was enabled before the first began);
    the young objects of the write are collected by the collector's own
    schedule after that (collecting them at the end of each write was tried
    and cost a WordNet bulk load a third of its speed).
    """
    global _GC_HELD
    with _GC_LOCK:
        first = _GC_HELD == 0
        if first and not gc.isenabled():
            first = None  # somebody else turned it off: leave it so
        else:
            _GC_HELD += 1
            if first:
                gc.disable()
    if first is None:
        yield
        return
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_HELD -= 1
            if _GC_HELD == 0:
                gc.enable()


# --------------------------------------------------------------------------
# plan


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
    src: tuple[str, int]     # ('n', id) existing or ('new', index)
    dst: tuple[str, int]
    props: dict[str, Any]
    recycled: bool


def _differs(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    """Whether two property maps print differently. Python's ``==`` would call
    ``1``, ``1.0`` and ``True`` equal; the canonical text does not."""
    if not old:
        return bool(new)
    return old.keys() != new.keys() or props_text(old) != props_text(new)


def _check_value(v: Any, where: ast.Pos) -> None:
    if isinstance(v, tuple):
        if len(v) > MAX_LIST:
            raise CommitRejected(f"a list holds more than {MAX_LIST} items",
                                 line=where.line, column=where.column)
        for x in v:
            _check_value(x, where)
        # the cap on one value's text holds for a list as for a string
        if sum(len(x) for x in v if isinstance(x, str)) > MAX_STRING:
            raise CommitRejected(f"the strings of a list value hold more than {MAX_STRING} "
                                 "characters", line=where.line, column=where.column)
        return
    if isinstance(v, int) and not isinstance(v, bool) and not INT_MIN <= v <= INT_MAX:
        raise CommitRejected("integers must fit in 64 bits (-2**63 .. 2**63-1)",
                             line=where.line, column=where.column)
    if isinstance(v, float) and not math.isfinite(v):
        raise CommitRejected("NaN and infinite numbers cannot be stored",
                             line=where.line, column=where.column)
    if isinstance(v, str):
        if len(v) > MAX_STRING:
            raise CommitRejected(f"a string value is longer than {MAX_STRING} characters",
                                 line=where.line, column=where.column)
        if not v.isascii() and _SURROGATE.search(v):
            raise CommitRejected("a string holds a lone surrogate (not valid Unicode text)",
                                 line=where.line, column=where.column)
    if not isinstance(v, (str, int, float, bool, tuple)):
        raise CommitRejected(f"bad value type {type(v).__name__}",
                             line=where.line, column=where.column)


def _check_props(props: ast.Props, where: ast.Pos) -> dict[str, Any]:
    if len(props) > MAX_PROPS:
        raise CommitRejected(f"more than {MAX_PROPS} properties on one element",
                             line=where.line, column=where.column)
    out: dict[str, Any] = {}
    for k, v in props:
        _check_name(_KEY, k, "property key", where)
        _check_value(v, where)
        out[k] = v
    return out


_LABEL = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_NICK = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


_GOOD: dict[re.Pattern[str], set[str]] = {_LABEL: set(), _KEY: set(), _NICK: set()}


def _check_name(pattern: re.Pattern[str], value: object, what: str, pos: ast.Pos) -> None:
    # the parser only yields good names; a Delta built by hand may not
    good = _GOOD[pattern]
    if type(value) is str and value in good:
        return
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise CommitRejected(f"bad {what} {value!r}", line=pos.line, column=pos.column)
    if len(good) >= 1 << 14:
        good.clear()
    good.add(value)


class _Plan:
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
            st = _NodeState(s.kind[i], set(s.labels[i]), dict(s.node_props(i)),
                            s.nick.get(i), bool(s.nrec[i]))
            self.node_over[i] = st
        return st

    def peek_node_recycled(self, ref: tuple[str, int]) -> bool:
        tag, i = ref
        if tag == "new":
            return self.new_nodes[i].recycled
        st = self.node_over.get(i)
        return st.recycled if st is not None else bool(self.s.nrec[i])

    def edge(self, ref: tuple[str, int]) -> _EdgeState:
        tag, i = ref
        if tag == "newe":
            return self.new_edges[i]
        st = self.edge_over.get(i)
        if st is None:
            s = self.s
            st = _EdgeState(s.etype[i], ("n", s.esrc[i]), ("n", s.edst[i]),
                            dict(s.eprops.get(i) or {}), bool(s.erec[i]))
            self.edge_over[i] = st
        return st

    def nick_owner(self, nick: str) -> tuple[str, int] | None:
        if nick in self.nicks:
            return self.nicks[nick]
        nid = self.s.nick_owner.get(nick)
        return ("n", nid) if nid is not None else None

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
                line=pos.line, column=pos.column)

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
                _check_name(_LABEL, lab, "label", np.pos)
            if np.nick is not None:
                _check_name(_NICK, np.nick, "nickname", np.pos)
            self.bind_new(np.var, np.pos)
            props = _check_props(np.props, np.pos)
            if np.nick is not None:
                self._claim_nick(np.nick, ("new", len(self.new_nodes)), np.pos)
            kind = np.labels[0]
            self.new_nodes.append(_NodeState(kind, set(np.labels[1:]) - {kind}, props,
                                             np.nick, False))
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
            _check_name(_LABEL, ep.type, "edge type", ep.pos)
            props = _check_props(ep.props, ep.pos)
            self.new_edges.append(_EdgeState(ep.type, src, dst, props, False))
            ref = ("newe", len(self.new_edges) - 1)
            if ep.var is not None:
                self.vars[ep.var] = ref
                self.client_vars.append((ep.var, ref))

    def _claim_nick(self, nick: str, ref: tuple[str, int], pos: ast.Pos) -> None:
        owner = self.nick_owner(nick)
        if owner is not None and owner != ref and not self.peek_node_recycled(owner):
            raise self._err(f"nickname #{nick} is already in use", pos)
        self.nicks[nick] = ref

    def statement(self, st: ast.Statement) -> None:
        if isinstance(st, ast.Insert):
            self.insert(st)
        elif isinstance(st, ast.SetProp):
            ref = self.lookup(st.var, st.pos)
            _check_name(_KEY, st.key, "property key", st.pos)
            _check_value(st.value, st.pos)
            target = self.node(ref) if ref[0] in ("new", "n") else self.edge(ref)
            target.props[st.key] = st.value
            if len(target.props) > MAX_PROPS:
                raise self._err(f"more than {MAX_PROPS} properties on one element", st.pos)
        elif isinstance(st, ast.RemoveProp):
            ref = self.lookup(st.var, st.pos)
            target = self.node(ref) if ref[0] in ("new", "n") else self.edge(ref)
            target.props.pop(st.key, None)
        elif isinstance(st, ast.SetLabel):
            _check_name(_LABEL, st.label, "label", st.pos)
            n = self.node(self.lookup(st.var, st.pos, want="node"))
            if st.label != n.kind:
                n.labels.add(st.label)
        elif isinstance(st, ast.RemoveLabel):
            n = self.node(self.lookup(st.var, st.pos, want="node"))
            if st.label == n.kind:
                raise self._err(f"{st.label} is the kind of {st.var}; a kind cannot be removed",
                                st.pos)
            n.labels.discard(st.label)
        elif isinstance(st, ast.SetNick):
            _check_name(_NICK, st.nick, "nickname", st.pos)
            ref = self.lookup(st.var, st.pos, want="node")
            n = self.node(ref)
            if n.nick is not None and n.nick != st.nick:
                self.nicks[n.nick] = None
            self._claim_nick(st.nick, ref, st.pos)
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
                raise self._err(f"{st.var} was created in this Δ; leave it out instead of "
                                "deleting it", st.pos)
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
                    raise self._err(f"{st.var} was created in this Δ and would be recycled "
                                    "at once", st.pos)
                self._recycle_node(ref, st.pos)
        else:  # pragma: no cover - the parser yields nothing else
            raise CommitRejected(f"unsupported statement {type(st).__name__}")

    def _recycle_node(self, ref: tuple[str, int], pos: ast.Pos) -> None:
        for es in self.new_edges:
            if ref in (es.src, es.dst):
                raise self._err("this Δ adds an edge to the node it recycles: the edge "
                                "would dangle", pos)
        n = self.node(ref)
        n.recycled = True
        if n.nick is not None:
            self.nicks[n.nick] = None
        nid = ref[1]
        for e, _d, _o in list(self.s.live_entries(nid)):
            self.edge(("e", e)).recycled = True


def plan_and_apply(store: Store, delta: ast.Delta, *, version: int, caps: Caps,
                   delete_on_settle: bool = False) -> tuple[CommitResult, CommitRecord | None]:
    """Check ``delta`` against ``store`` and, if every rule holds, apply it.

    Returns the result and the history record (None when nothing changed).
    Raises a CommitRejected subclass, with the store untouched, otherwise.
    """
    p = _Plan(store, delete_on_settle)
    for st in delta.statements:
        p.statement(st)
    # a Δ of SETTLE, DELETE and REMOVE only is always welcome, even past the
    # cap: it is how a full session is tidied (SETTLE adds a small flag)
    tidy = all(isinstance(st, (ast.Settle, ast.Delete, ast.RemoveProp, ast.RemoveLabel,
                               ast.RemoveNick)) for st in delta.statements)
    return _apply(store, p, version=version, caps=caps, tidy=tidy)


GAP = "GAP"  # kind and type of the placeholders that keep imported ids in place


def import_elements(store: Store, nodes: list[tuple[int | None, str, tuple[str, ...],
                                                    dict[str, Any], str | None]],
                    edges: list[tuple[int | None, str, int, int, dict[str, Any]]], *,
                    version: int, caps: Caps) -> tuple[CommitResult, CommitRecord | None,
                                                       list[int], list[int]]:
    """Add a batch of elements atomically (the engine half of Absorb).

    ``nodes`` are ``(id or None, kind, labels, props, nick)``; ``edges`` are
    ``(id or None, type, src, dst, props)`` where ``src``/``dst`` index into
    ``nodes``. With ids given (the ``keep`` policy), every id must be at or past
    the store's next id; the ids in between are taken by placeholders that are
    recycled from birth, so the kept elements land on exactly their ids. With
    ids None the engine mints new ones. Checks and the rate cap are those of a
    Commit; returns the result, the record and the minted node and edge ids (in
    the order given).
    """
    p = _Plan(store, False)
    pos = ast.Pos(1, 1)
    keep = bool(nodes) and nodes[0][0] is not None
    order = sorted(range(len(nodes)), key=lambda i: nodes[i][0] or 0) if keep else \
        list(range(len(nodes)))
    slot: dict[int, int] = {}          # index in nodes -> index in p.new_nodes
    gap_host: int | None = None
    expect = store.next_node
    for i in order:
        nid, kind, labels, props, nick = nodes[i]
        if keep:
            assert nid is not None and nid >= expect, "kept ids must be fresh"
            while expect < nid:
                p.new_nodes.append(_NodeState(GAP, set(), {}, None, True))
                gap_host = len(p.new_nodes) - 1
                expect += 1
            expect += 1
        for lab in (kind, *labels):
            _check_name(_LABEL, lab, "label", pos)
        checked = _check_props(tuple(props.items()), pos)
        if nick is not None:
            _check_name(_NICK, nick, "nickname", pos)
            p._claim_nick(nick, ("new", len(p.new_nodes)), pos)
        slot[i] = len(p.new_nodes)
        p.new_nodes.append(_NodeState(kind, set(labels) - {kind}, checked, nick, False))
    eorder = sorted(range(len(edges)), key=lambda i: edges[i][0] or 0) if keep else \
        list(range(len(edges)))
    eslot: dict[int, int] = {}
    expect_e = store.next_edge
    for i in eorder:
        eid, etype, src, dst, props = edges[i]
        if keep:
            assert eid is not None and eid >= expect_e, "kept ids must be fresh"
            while expect_e < eid:
                if gap_host is None:  # a host for edge placeholders, after the kept nodes
                    p.new_nodes.append(_NodeState(GAP, set(), {}, None, True))
                    gap_host = len(p.new_nodes) - 1
                host = ("new", gap_host)
                p.new_edges.append(_EdgeState(GAP, host, host, {}, True))
                expect_e += 1
            expect_e += 1
        _check_name(_LABEL, etype, "edge type", pos)
        checked = _check_props(tuple(props.items()), pos)
        eslot[i] = len(p.new_edges)
        p.new_edges.append(_EdgeState(etype, ("new", slot[src]), ("new", slot[dst]), checked,
                                      False))
    result, record = _apply(store, p, version=version, caps=caps, tidy=False)
    base_n = store.next_node - len(p.new_nodes)
    base_e = store.next_edge - len(p.new_edges)
    node_ids = [base_n + slot[i] for i in range(len(nodes))]
    edge_ids = [base_e + eslot[i] for i in range(len(edges))]
    return result, record, node_ids, edge_ids


def _apply(store: Store, p: _Plan, *, version: int, caps: Caps,
           tidy: bool) -> tuple[CommitResult, CommitRecord | None]:
    """Check the rate cap for a finished plan and write it."""
    # which existing elements really change
    node_changes: list[tuple[int, _NodeState]] = []
    for nid, ns in p.node_over.items():
        if (set(store.labels[nid]) != ns.labels or _differs(store.props[nid], ns.props)
                or store.nick.get(nid) != ns.nick or bool(store.nrec[nid]) != ns.recycled):
            node_changes.append((nid, ns))
    edge_changes: list[tuple[int, _EdgeState]] = []
    for eid, es in p.edge_over.items():
        if _differs(store.eprops.get(eid), es.props) or bool(store.erec[eid]) != es.recycled:
            edge_changes.append((eid, es))

    if not p.new_nodes and not p.new_edges and not node_changes and not edge_changes:
        return CommitResult(ids={}, version=version, changed=False), None

    # rate cap R: live rows and bytes after the Δ
    rows = store.live_nodes + store.live_edges
    nbytes = store.live_bytes
    keys = [node_key(ns.kind, tuple(sorted(ns.labels)), ns.props) for ns in p.new_nodes]
    for ns, key in zip(p.new_nodes, keys, strict=False):
        if not ns.recycled:
            rows += 1
            nbytes += text_bytes(key) + 8
    for es in p.new_edges:
        if not es.recycled:
            rows += 1
            nbytes += text_bytes(es.type) + text_bytes(props_text(es.props)) + 8
    for nid, ns in node_changes:
        if ns.recycled and not store.nrec[nid]:
            rows -= 1
            nbytes -= store.node_bytes(nid)
        elif not ns.recycled:
            nbytes += (text_bytes(node_key(ns.kind, tuple(sorted(ns.labels)), ns.props))
                       - text_bytes(store.key[nid]))
    for eid, es in edge_changes:
        if es.recycled and not store.erec[eid]:
            rows -= 1
            nbytes -= store.edge_bytes(eid)
    # refuse what passes the cap and grows
    before_rows = store.live_nodes + store.live_edges
    if not tidy and ((rows > caps.rows and rows > before_rows)
                     or (nbytes > caps.bytes and nbytes > store.live_bytes)):
        raise CapExceeded(
            f"this Commit would bring the session to {rows} rows / {nbytes} bytes, past its cap "
            f"of {caps.rows} rows / {caps.bytes} bytes; start a new session (S_i+1) for new "
            "work instead of growing this one",
            rows=rows, bytes=nbytes, cap_rows=caps.rows, cap_bytes=caps.bytes)

    # ---- apply: everything below has been checked -----------------------
    new_version = version + 1
    changes: list[Change] = []
    first = store.add_nodes([(ns.kind, tuple(ns.labels), ns.props or None, ns.nick)
                             for ns in p.new_nodes], keys) if p.new_nodes else store.next_node
    minted_nodes = range(first, first + len(p.new_nodes))

    def real(ref: tuple[str, int]) -> int:
        return first + ref[1] if ref[0] == "new" else ref[1]

    first_e = store.add_edges([(es.type, real(es.src), real(es.dst), es.props or None)
                               for es in p.new_edges]) if p.new_edges else store.next_edge
    minted_edges = range(first_e, first_e + len(p.new_edges))
    # nick releases first so that a nick can move between nodes in one Δ
    for nid, ns in node_changes:
        if store.nick.get(nid) != ns.nick:
            store.update_node(nid, nick=None)
    for nid, ns in node_changes:
        props: Any = ns.props if _differs(store.props[nid], ns.props) else ...
        nick: Any = ns.nick if store.nick.get(nid) != ns.nick else ...
        store.update_node(nid, labels=tuple(ns.labels), props=props, nick=nick)
    for eid, es in edge_changes:
        if _differs(store.eprops.get(eid), es.props):
            store.update_edge(eid, es.props or None)
    # placeholders born recycled (imports that keep ids) and recycled elements
    store.recycle_edges([minted_edges[i] for i, es in enumerate(p.new_edges) if es.recycled]
                        + [eid for eid, es in edge_changes if es.recycled])
    store.recycle_nodes([minted_nodes[i] for i, ns in enumerate(p.new_nodes) if ns.recycled])
    gone = [nid for nid, ns in node_changes if ns.recycled and not store.nrec[nid]]
    store.recycle_nodes(gone)
    recycled = len(gone)
    recycled += sum(1 for _e, es in edge_changes if es.recycled)

    for nid in minted_nodes:
        changes.append(Change("N+", nid, node_state(store, nid)))
    for eid in minted_edges:
        changes.append(Change("E+", eid, edge_state(store, eid)))
    for nid, _ns in node_changes:
        changes.append(Change("N~", nid, node_state(store, nid)))
    for eid, _es in edge_changes:
        changes.append(Change("E~", eid, edge_state(store, eid)))

    ids: dict[str, str] = {}
    for var, ref in p.client_vars:
        ids[var] = (node_handle(minted_nodes[ref[1]]) if ref[0] == "new"
                    else edge_handle(minted_edges[ref[1]]))
    summary = {"created": len(minted_nodes) + len(minted_edges),
               "updated": len(node_changes) + len(edge_changes) - recycled,
               "recycled": recycled}
    record = CommitRecord(new_version, time.time(), tuple(changes), summary)
    used = (store.live_nodes + store.live_edges) / caps.rows
    advice = None
    if used >= 0.9:
        advice = (f"session holds {used:.0%} of its row cap; plan the next session (S_i+1) "
                  "and settle finished tasks")
    result = CommitResult(ids=ids, version=new_version, changed=True,
                          created=summary["created"], updated=summary["updated"],
                          recycled=recycled, advice=advice)
    return result, record


# --------------------------------------------------------------------------
# the bulk path: a Δ built in code


class Bulk:
    """A Δ built in code instead of GQL text: the bulk path of Commit.

    Each call adds what one line of GQL would say, in call order: :meth:`node`
    and :meth:`edge` add to an ``INSERT`` (consecutive ones share it), the
    other methods add ``SET``, ``REMOVE``, ``DELETE`` and ``SETTLE``
    statements. ``Session.commit_bulk(b)`` applies the batch exactly as
    ``Session.commit(b.text())`` would (the same checks and errors, the same
    minted handles, store state and history record), without writing or
    reading any text. References are variables returned by :meth:`node` (or
    given to it) and existing handles (``'na1'``).

    Example::

        >>> from memnet import Bulk, Session
        >>> s = Session("bulk-demo")
        >>> b = Bulk()
        >>> t = b.node("TSK", {"title": "Load the corpus", "status": "open"}, var="t")
        >>> law = b.node("LAW", {"text": "Never ship on Fridays"})
        >>> _ = b.edge(t, "FOLLOWS", law)
        >>> r = s.commit_bulk(b)
        >>> sorted(r.ids), r.created
        (['_1', 't'], 3)

    A node without ``var`` gets the variable ``_1``, ``_2``, ... (its handle is
    in ``CommitResult.ids`` under that name). Once committed (or turned into a
    :class:`~memnet.gql.ast.Delta` by :meth:`to_delta`) a Bulk is closed:
    adding more raises ValueError; it may be committed to other sessions.
    """

    __slots__ = ("_statements", "_paths", "_insert_at", "_line", "_state", "_auto", "_ops",
                 "_delta")

    def __init__(self) -> None:
        from .gql.parse import _InsertState

        self._statements: list[ast.Statement] = []
        self._paths: list[list[Any]] = []
        self._insert_at = 0      # line of the open INSERT (0: none open)
        self._line = 1           # next line of the text form
        self._state = _InsertState()
        self._auto = 0
        self._ops: list[tuple[Any, ...]] = []  # what text() renders
        self._delta: ast.Delta | None = None

    def __len__(self) -> int:
        """Lines of the text form so far (one per element or statement)."""
        return len(self._ops)

    # -- building ---------------------------------------------------------------
    def _open(self) -> None:
        if self._delta is not None:
            raise ValueError("this Bulk was already turned into a Δ; build a new one")
        if not self._insert_at:
            self._insert_at = self._line
            self._line += 1
            self._ops.append(("INSERT",))

    def _statement(self, st: ast.Statement, op: tuple[Any, ...]) -> None:
        if self._delta is not None:
            raise ValueError("this Bulk was already turned into a Δ; build a new one")
        self._close()
        self._statements.append(st)
        self._ops.append(op)
        self._line += 1

    def _close(self) -> None:
        if self._insert_at:
            from .gql.parse import _Fail, _RawInsert

            try:
                ins = self._state.build(_RawInsert(ast.Pos(self._insert_at, 1), self._paths))
            except _Fail as f:
                from .errors import GQLSyntaxError

                raise GQLSyntaxError(f.message, line=f.line, column=f.column) from None
            self._statements.append(ins)
            self._paths = []
            self._insert_at = 0

    def node(self, kind: str, props: dict[str, Any] | None = None, *,
             labels: Sequence[str] = (), nick: str | None = None, var: str | None = None) -> str:
        """Add a new node; returns its variable (``var`` or ``_1``, ``_2``, ...)."""
        self._open()
        if var is None:
            self._auto += 1
            var = f"_{self._auto}"
        else:
            _check_var(var)
        pairs = _pairs(props)
        self._paths.append([ast.NodePattern(var, (kind, *labels), pairs, nick,
                                            ast.Pos(self._line, 1))])
        self._ops.append(("N", var, (kind, *labels), pairs, nick))
        self._line += 1
        return var

    def edge(self, src: str, type: str, dst: str, props: dict[str, Any] | None = None, *,
             var: str | None = None) -> str | None:
        """Add an edge ``src -[type]-> dst`` between variables of this Bulk or
        existing node handles; returns ``var``."""
        self._open()
        _check_var(src)
        _check_var(dst)
        if var is not None:
            _check_var(var)
        pairs = _pairs(props)
        line = self._line
        # the text form puts the target on the next line, so each position
        # can be told without printing the values
        self._paths.append([ast.NodePattern(src, pos=ast.Pos(line, 1)),
                            (True, var, type, pairs, ast.Pos(line, len(src) + 3), None),
                            ast.NodePattern(dst, pos=ast.Pos(line + 1, 1))])
        self._ops.append(("E", src, type, dst, pairs, var))
        self._line += 2
        return var

    def set(self, ref: str, key: str, value: Any) -> None:
        """``SET ref.key = value``"""
        self._statement(ast.SetProp(ref, key, _value(value), ast.Pos(self._line, 5)),
                        ("SET", ref, ".", key, _value(value)))

    def remove(self, ref: str, key: str) -> None:
        """``REMOVE ref.key``"""
        self._statement(ast.RemoveProp(ref, key, ast.Pos(self._line, 8)),
                        ("REMOVE", ref, ".", key))

    def label(self, ref: str, label: str) -> None:
        """``SET ref:LABEL``"""
        self._statement(ast.SetLabel(ref, label, ast.Pos(self._line, 5)),
                        ("SET", ref, ":", label))

    def unlabel(self, ref: str, label: str) -> None:
        """``REMOVE ref:LABEL``"""
        self._statement(ast.RemoveLabel(ref, label, ast.Pos(self._line, 8)),
                        ("REMOVE", ref, ":", label))

    def nick(self, ref: str, nick: str) -> None:
        """``SET ref #nick``"""
        self._statement(ast.SetNick(ref, nick, ast.Pos(self._line, 5)),
                        ("SET", ref, " #", nick))

    def unnick(self, ref: str, nick: str) -> None:
        """``REMOVE ref #nick``"""
        self._statement(ast.RemoveNick(ref, nick, ast.Pos(self._line, 8)),
                        ("REMOVE", ref, " #", nick))

    def delete(self, ref: str) -> None:
        """``DELETE ref``: recycle a node (with its edges) or an edge."""
        self._statement(ast.Delete(ref, ast.Pos(self._line, 8)), ("DELETE", ref, "", ""))

    def settle(self, ref: str) -> None:
        """``SETTLE ref``: end a task."""
        self._statement(ast.Settle(ref, ast.Pos(self._line, 8)), ("SETTLE", ref, "", ""))

    # -- reading ------------------------------------------------------------------
    def to_delta(self) -> ast.Delta:
        """The syntax tree of this batch (what parsing :meth:`text` gives); closes the Bulk."""
        if self._delta is None:
            self._close()
            self._delta = ast.Delta(tuple(self._statements))
            self._paths = []
        return self._delta

    def text(self) -> str:
        """This batch as GQL text, one element or statement a line (an edge
        takes two: its target is on the second). Raises ValueError on a name
        the grammar would refuse (such a batch is refused by Commit too)."""
        from .gql.emit import (
            _label,
            _name,
            _var,
            format_edge,
            format_node,
            format_props,
            format_value,
        )

        out: list[str] = []
        ops = self._ops
        for i, op in enumerate(ops):
            tag = op[0]
            more = i + 1 < len(ops) and ops[i + 1][0] in ("N", "E")
            sep = "," if more else ""
            if tag == "INSERT":
                out.append("INSERT")
            elif tag == "N":
                _t, var, labels, pairs, nick = op
                out.append(format_node(var, labels, pairs, nick) + sep)
            elif tag == "E":
                _t, src, etype, dst, pairs, var = op
                format_edge(var, etype, src, dst)  # checks the names
                body = format_props(pairs)
                inner = (var or "") + ":" + etype + (" " + body if body else "")
                out.append(f"({src})-[{inner}]->")
                out.append(f"({dst}){sep}")
            else:
                _t, ref, sep, name, *value = op
                _var(ref)
                if sep == ".":
                    _name(name, "property key")
                elif sep == ":":
                    _label(name)
                elif sep:
                    format_node(None, (), (), name)  # checks the nick
                tail = f" = {format_value(value[0])}" if value else ""
                out.append(f"{tag} {ref}{sep}{name}{tail}")
        return "\n".join(out)


_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANON_VAR = re.compile(r"_anon[0-9]+")
_GOOD_VARS: set[str] = set()


def _check_var(var: object) -> None:
    if var in _GOOD_VARS:
        return
    if (not isinstance(var, str) or _VAR.fullmatch(var) is None
            or _ANON_VAR.fullmatch(var) is not None):
        raise CommitRejected(f"bad variable or handle {var!r} (a name [A-Za-z_][A-Za-z0-9_]*, "
                             "not _anonN)")
    if len(_GOOD_VARS) > 1 << 16:
        _GOOD_VARS.clear()
    _GOOD_VARS.add(var)


def _value(v: Any) -> Any:
    return tuple(v) if type(v) is list else v


def _pairs(props: dict[str, Any] | None) -> ast.Props:
    if not props:
        return ()
    return tuple([(k, tuple(v) if type(v) is list else v) for k, v in props.items()])


def node_state(store: Store, nid: int) -> tuple[Any, ...]:
    return (store.kind[nid], store.labels[nid], store.props[nid], store.nick.get(nid),
            bool(store.nrec[nid]))


def edge_state(store: Store, eid: int) -> tuple[Any, ...]:
    return (store.etype[eid], store.esrc[eid], store.edst[eid], store.eprops.get(eid),
            bool(store.erec[eid]))





def replay(store: Store, changes: tuple[Change, ...] | list[Change]) -> None:
    """Apply recorded changes to ``store`` (reading a past version back).

    Records come from :func:`plan_and_apply` (or a cabinet's log) in version
    order; created ids must be the next ids of ``store``.
    """
    for ch in changes:
        if ch.op == "N+":
            kind, labels, props, nick, recycled = ch.state
            nid = store.add_node(kind, tuple(labels), dict(props) if props else None, nick)
            if nid != ch.id:
                raise ValueError(f"replay out of order: node {ch.id} minted as {nid}")
            if recycled:
                store.recycle_node(nid)
        elif ch.op == "E+":
            etype, src, dst, props, recycled = ch.state
            eid = store.add_edge(etype, src, dst, dict(props) if props else None)
            if eid != ch.id:
                raise ValueError(f"replay out of order: edge {ch.id} minted as {eid}")
            if recycled:
                store.recycle_edge(eid)
        elif ch.op == "N~":
            kind, labels, props, nick, recycled = ch.state
            cur_nick = store.nick.get(ch.id)
            store.update_node(ch.id, labels=tuple(labels),
                              props=dict(props) if props else None,
                              nick=nick if nick != cur_nick else ...)
            if recycled:
                store.recycle_node(ch.id)
        elif ch.op == "E~":
            etype, src, dst, props, recycled = ch.state
            store.update_edge(ch.id, dict(props) if props else None)
            if recycled:
                store.recycle_edge(ch.id)
        else:
            raise ValueError(f"unknown change op {ch.op!r}")


StoredChange = tuple[str, int, tuple[Any, ...]]  # (op, id, state after) as a log stores it


def rewind(store: Store, version: int, changes_at: Callable[[int], Sequence[StoredChange]],
           lo: int, *, max_read: int, max_undo: int) -> Iterator[int]:
    """Walk ``store`` back from ``version`` to ``lo`` one commit at a time,
    yielding each version it then holds, newest first (``version`` itself first).

    ``changes_at(v)`` gives the changes of commit ``v`` as a log stores them
    (the state of each element after it). Undoing a commit gives each element
    it changed the state of its previous change, found in older commits; what
    it created is recycled (a recycled element is hidden from every Recall, so
    that is as good as absent) and what it recycled is restored. Raises
    :class:`~memnet.errors.VersionNotFound` when an older state is not kept, or
    when more than ``max_read`` recorded changes would be read or more than
    ``max_undo`` undone (the bounds that keep delta recall cheap).
    """
    read = undone = 0
    records: dict[int, dict[tuple[str, int], tuple[str, tuple[Any, ...]]]] = {}

    def record(v: int) -> dict[tuple[str, int], tuple[str, tuple[Any, ...]]]:
        nonlocal read
        got = records.get(v)
        if got is None:
            raw = changes_at(v)
            read += len(raw)
            if read > max_read:
                raise VersionNotFound(f"going back would read more than {max_read} recorded "
                                      "changes")
            got = records[v] = {(op[0], i): (op, tuple(st)) for op, i, st in raw}
        return got

    def before(kind: str, i: int, w: int) -> tuple[Any, ...]:
        for v in range(w - 1, 0, -1):
            hit = record(v).get((kind, i))
            if hit is not None:
                return hit[1]
        handle = node_handle(i) if kind == "N" else edge_handle(i)
        raise VersionNotFound(f"the log keeps no state of {handle} before version {w}")

    yield version
    for w in range(version, lo, -1):
        rec = record(w)
        undone += len(rec)
        if undone > max_undo:
            raise VersionNotFound(f"going back would undo more than {max_undo} recorded changes")
        store.recycle_edges([i for (_k, i), (op, _s) in rec.items() if op == "E+"])
        nodes: list[tuple[int, tuple[Any, ...]]] = []
        for (_k, i), (op, _s) in rec.items():
            if op == "E~":
                _t, _a, _b, props, recycled = before("E", i, w)
                if store.erec[i] and not recycled:
                    store.restore_edge(i)
                if _differs(store.eprops.get(i), dict(props or {})):
                    store.update_edge(i, dict(props) if props else None)
            elif op == "N~":
                nodes.append((i, before("N", i, w)))
        for i, (_kind, _labels, _props, _nick, recycled) in nodes:
            if store.nrec[i] and not recycled:
                store.restore_node(i)
        for i, was in nodes:  # nick releases first, so that a nick can move back
            if store.nick.get(i) != was[3]:
                store.update_node(i, nick=None)
        for i, (_kind, labels, props, nick, _r) in nodes:
            new = dict(props or {})
            store.update_node(i, labels=tuple(labels),
                              props=new or None if _differs(store.props[i], new) else ...,
                              nick=nick if store.nick.get(i) != nick else ...)
        store.recycle_nodes([i for (_k, i), (op, _s) in rec.items() if op == "N+"])
        yield w - 1


__all__ = ["Bulk", "Caps", "Change", "CommitRecord", "CommitResult", "gc_paused",
           "import_elements", "plan_and_apply", "replay", "rewind"]
