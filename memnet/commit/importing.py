"""Import elements: the engine half of Absorb.

A batch of elements is planned like an INSERT (the same checks on names,
values and the caps on distinct names) and applied by
:func:`.plan.apply_plan`, so the rate cap and atomicity are those of a
Commit. With ids kept, placeholders recycled from birth fill the ids between
the store's next id and each kept one.
"""

from __future__ import annotations

from typing import Any

from ..gql import ast
from ..graph.store import Store
from .checks import LABEL, NICK, check_name, check_props
from .plan import Plan, apply_plan
from .records import Caps, CommitRecord, CommitResult

GAP = "GAP"  # kind and type of the placeholders that keep imported ids in place

NodeRow = tuple[int | None, str, tuple[str, ...], dict[str, Any], str | None]
EdgeRow = tuple[int | None, str, int, int, dict[str, Any]]


def import_elements(
    store: Store,
    nodes: list[NodeRow],
    edges: list[EdgeRow],
    *,
    version: int,
    caps: Caps,
) -> tuple[CommitResult, CommitRecord | None, list[int], list[int]]:
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
    p = Plan(store, False)
    keep = bool(nodes) and nodes[0][0] is not None
    slot, gap_host = _plan_nodes(p, store, nodes, keep)
    eslot = _plan_edges(p, store, edges, slot, gap_host, keep)
    result, record = apply_plan(store, p, version=version, caps=caps, tidy=False)
    base_n = store.next_node - len(p.new_nodes)
    base_e = store.next_edge - len(p.new_edges)
    node_ids = [base_n + slot[i] for i in range(len(nodes))]
    edge_ids = [base_e + eslot[i] for i in range(len(edges))]
    return result, record, node_ids, edge_ids


def _plan_nodes(
    p: Plan, store: Store, nodes: list[NodeRow], keep: bool
) -> tuple[dict[int, int], int | None]:
    """Plan the nodes (and, keeping ids, the placeholders between them);
    returns each node's index in the plan and the last placeholder's."""
    pos = ast.Pos(1, 1)
    order = (
        sorted(range(len(nodes)), key=lambda i: nodes[i][0] or 0)
        if keep
        else list(range(len(nodes)))
    )
    slot: dict[int, int] = {}  # index in nodes -> index in p.new_nodes
    gap_host: int | None = None
    expect = store.next_node
    for i in order:
        nid, kind, labels, props, nick = nodes[i]
        if keep:
            assert nid is not None and nid >= expect, "kept ids must be fresh"
            if expect < nid and GAP not in p.kinds_ok:
                p.kind(GAP, pos)
            while expect < nid:
                gap_host = p.new_node(GAP, set(), {}, None, True)
                expect += 1
            expect += 1
        for lab in (kind, *labels):
            check_name(LABEL, lab, "label", pos)
        if kind not in p.kinds_ok:
            p.kind(kind, pos)
        extra = set(labels) - {kind}
        if extra:
            p.labels(extra, len(extra) + 1, pos)
        checked = check_props(tuple(props.items()), pos)
        if nick is not None:
            check_name(NICK, nick, "nickname", pos)
            p.claim_nick(nick, ("new", len(p.new_nodes)), pos)
        slot[i] = p.new_node(kind, extra, checked, nick, False)
    return slot, gap_host


def _plan_edges(
    p: Plan,
    store: Store,
    edges: list[EdgeRow],
    slot: dict[int, int],
    gap_host: int | None,
    keep: bool,
) -> dict[int, int]:
    """Plan the edges (and, keeping ids, the placeholders between them);
    returns each edge's index in the plan."""
    pos = ast.Pos(1, 1)
    eorder = (
        sorted(range(len(edges)), key=lambda i: edges[i][0] or 0)
        if keep
        else list(range(len(edges)))
    )
    eslot: dict[int, int] = {}
    expect_e = store.next_edge
    for i in eorder:
        eid, etype, src, dst, props = edges[i]
        if keep:
            assert eid is not None and eid >= expect_e, "kept ids must be fresh"
            if expect_e < eid and GAP not in p.types_ok:
                p.kind(GAP, pos)
                p.edge_type(GAP, pos)
            while expect_e < eid:
                if gap_host is None:  # a host for edge placeholders, after the kept nodes
                    gap_host = p.new_node(GAP, set(), {}, None, True)
                host = ("new", gap_host)
                p.new_edge(GAP, host, host, {}, True)
                expect_e += 1
            expect_e += 1
        check_name(LABEL, etype, "edge type", pos)
        if etype not in p.types_ok:
            p.edge_type(etype, pos)
        checked = check_props(tuple(props.items()), pos)
        eslot[i] = p.new_edge(etype, ("new", slot[src]), ("new", slot[dst]), checked, False)
    return eslot
