"""The bulk path of Commit: a Δ built in code, without GQL text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import CommitRejected
from ..gql import ast


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
        from ..gql.parse import _InsertState

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
            from ..gql.parse import _Fail, _RawInsert

            try:
                ins = self._state.build(_RawInsert(ast.Pos(self._insert_at, 1), self._paths))
            except _Fail as f:
                from ..errors import GQLSyntaxError

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
        from ..gql.emit import (
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

