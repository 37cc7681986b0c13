"""History: replaying recorded changes forward and rewinding a store back."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..errors import VersionNotFound
from ..graph.store import Store, edge_handle, node_handle
from .checks import differs
from .records import Change, StoredChange


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
            cur_nick = store.node_nick(ch.id)
            store.update_node(
                ch.id,
                labels=tuple(labels),
                props=dict(props) if props else None,
                nick=nick if nick != cur_nick else ...,
            )
            if recycled:
                store.recycle_node(ch.id)
        elif ch.op == "E~":
            etype, src, dst, props, recycled = ch.state
            store.update_edge(ch.id, dict(props) if props else None)
            if recycled:
                store.recycle_edge(ch.id)
        else:
            raise ValueError(f"unknown change op {ch.op!r}")


def rewind(
    store: Store,
    version: int,
    changes_at: Callable[[int], Sequence[StoredChange]],
    lo: int,
    *,
    max_read: int,
    max_undo: int,
) -> Iterator[int]:
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
                raise VersionNotFound(
                    f"going back would read more than {max_read} recorded changes"
                )
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
                if store.edge_recycled(i) and not recycled:
                    store.restore_edge(i)
                if differs(store.edge_props(i), dict(props or {})):
                    store.update_edge(i, dict(props) if props else None)
            elif op == "N~":
                nodes.append((i, before("N", i, w)))
        for i, (_kind, _labels, _props, _nick, recycled) in nodes:
            if store.node_recycled(i) and not recycled:
                store.restore_node(i)
        for i, was in nodes:  # nick releases first, so that a nick can move back
            if store.node_nick(i) != was[3]:
                store.update_node(i, nick=None)
        for i, (_kind, labels, props, nick, _r) in nodes:
            new = dict(props or {})
            store.update_node(
                i,
                labels=tuple(labels),
                props=new or None if differs(store.node_props(i), new) else ...,
                nick=nick if store.node_nick(i) != nick else ...,
            )
        store.recycle_nodes([i for (_k, i), (op, _s) in rec.items() if op == "N+"])
        yield w - 1
