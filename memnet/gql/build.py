"""The builder every reader of a Δ shares: raw INSERT paths → :class:`Insert`.

Three things write a Δ's syntax tree: lark's transformer
(:mod:`memnet.gql.grammar`), the direct reader (:mod:`memnet.gql.fast`) and
the bulk path of Commit (:mod:`memnet.commit.bulk`), which builds a Δ in code
without text. Each collects an ``INSERT`` as a :class:`RawInsert` (its paths,
as written) and hands it to the Δ's one :class:`InsertState`, which names the
anonymous nodes, keeps the defining pattern of each variable and enforces the
two rules the dialect leaves to us:

* a variable defined (labels, props or nick) twice anywhere in one Δ is an
  error, as is an edge variable used twice or shared with a node;
* anonymous node patterns are named ``_anon1``, ``_anon2``, … per Δ, so user
  variables of that exact form are reserved and refused (:func:`read_var`).

Example::

    >>> from memnet.gql.ast import NodePattern, Pos
    >>> raw = RawInsert(Pos(1, 1), [[NodePattern(None, ("TSK",))]])
    >>> InsertState().build(raw).nodes[0].var
    '_anon1'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeAlias

from .ast import EdgePattern, Insert, NodePattern, Pos, Value
from .failure import Token, fail_at, fail_pos
from .names import ANON_RE

#: An edge of a path as the readers write it: (points right, variable, type,
#: props, position, the variable's token or None). A plain tuple: the direct
#: reader makes one per edge of every Δ.
RawEdge: TypeAlias = tuple[bool, str | None, str, tuple[tuple[str, Value], ...], Pos, Any]


class RawInsert:
    """An ``INSERT`` as written: each path alternates node patterns and
    :data:`RawEdge` tuples (``[node, edge, node, …]``). A plain class, not a
    record: it only carries an INSERT from a reader to :class:`InsertState`."""

    __slots__ = ("pos", "paths")

    def __init__(self, pos: Pos, paths: list[list[Any]]) -> None:
        self.pos = pos
        self.paths = paths


def token_pos(tok: Token) -> Pos:
    """The position of a token."""
    return Pos(tok.line or 1, tok.column or 1)


def read_var(tok: Token) -> str:
    """A variable token's name (the anonymous names are refused)."""
    name = str(tok)
    if ANON_RE.fullmatch(name):
        raise fail_at(tok, f"variable names like {name} are reserved for anonymous nodes")
    return name


def merge_props(items: Iterable[tuple[Token, Value]]) -> tuple[tuple[str, Value], ...]:
    """``(key token, value)`` pairs as props; a key written twice is refused."""
    seen: set[str] = set()
    out: list[tuple[str, Value]] = []
    for key_tok, value in items:
        key = str(key_tok)
        if key in seen:
            raise fail_at(key_tok, f"duplicate property key {key!r}")
        seen.add(key)
        out.append((key, value))
    return tuple(out)


class InsertState:
    """Resolves raw INSERT paths into Insert objects, with per-Δ bookkeeping
    (one state per Δ, used for each of its INSERTs in order)."""

    __slots__ = ("anon", "defined", "edge_vars")

    def __init__(self) -> None:
        self.anon = 0
        self.defined: set[str] = set()  # node variables with a defining pattern
        self.edge_vars: set[str] = set()

    def build(self, raw: RawInsert) -> Insert:
        """The Insert of ``raw``; raises :class:`~memnet.gql.failure.SyntaxFail`.
        (One loop, no helper calls: the direct reader runs it for every node.)"""
        nodes: list[NodePattern] = []
        index: dict[str, int] = {}
        edges: list[EdgePattern] = []
        for path in raw.paths:
            prev: str | None = None
            pending: RawEdge | None = None
            for i, item in enumerate(path):
                if i % 2:
                    pending = item
                    continue
                node: NodePattern = item
                var = node.var
                if var is None:
                    self.anon += 1
                    var = f"_anon{self.anon}"
                    node = NodePattern(var, node.labels, node.props, node.nick, node.pos)
                elif var in self.edge_vars:
                    raise fail_pos(node.pos, f"variable {var} is already an edge")
                if var in index:
                    if not node.bare:
                        if not nodes[index[var]].bare:
                            raise fail_pos(node.pos, f"variable {var} defined twice")
                        nodes[index[var]] = node
                        self.defined.add(var)
                else:
                    if not node.bare:
                        if var in self.defined:
                            raise fail_pos(node.pos, f"variable {var} defined twice")
                        self.defined.add(var)
                    index[var] = len(nodes)
                    nodes.append(node)
                if pending is not None and prev is not None:
                    right, evar, etype, eprops, epos, _tok = pending
                    if evar is not None:
                        if evar in self.edge_vars or evar in self.defined or evar in index:
                            raise fail_pos(epos, f"variable {evar} defined twice")
                        self.edge_vars.add(evar)
                    src, dst = (prev, var) if right else (var, prev)
                    edges.append(EdgePattern(evar, etype, src, dst, eprops, epos))
                prev = var
                pending = None
        return Insert(tuple(nodes), tuple(edges), raw.pos)


__all__ = ["InsertState", "RawEdge", "RawInsert", "merge_props", "read_var", "token_pos"]
