"""The bulk path of Commit: a Δ built in code, without GQL text."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import InvalidArgument
from ..gql import ast
from ..gql.build import InsertState, RawInsert
from ..gql.failure import SyntaxFail, syntax_error
from ..gql.names import check_label, check_name, check_nick, check_var


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
    adding more raises :class:`~memnet.errors.InvalidArgument` (code
    ``invalid_argument``, also a ValueError); it may be committed to other
    sessions.

    A call checks its arguments when it is made and refuses a bad one with
    ``invalid_argument`` (the message :meth:`text` would give), leaving the
    Bulk as it was: every variable or handle; the key, label or nick of
    :meth:`set`, :meth:`remove`, :meth:`label`, :meth:`unlabel`, :meth:`nick`
    and :meth:`unnick`; ``props`` (None or a mapping) and ``labels`` (a list or
    tuple of names, not a str). The kind, labels, edge type, nick, keys and
    values of :meth:`node` and :meth:`edge`, and the value of :meth:`set`, are
    checked by the Commit, as in the text (``commit_rejected``, with the line).
    """

    __slots__ = (
        "_statements",
        "_paths",
        "_insert_at",
        "_line",
        "_state",
        "_auto",
        "_ops",
        "_delta",
    )

    def __init__(self) -> None:
        self._statements: list[ast.Statement] = []
        self._paths: list[list[Any]] = []
        self._insert_at = 0  # line of the open INSERT (0: none open)
        self._line = 1  # next line of the text form
        self._state = InsertState()
        self._auto = 0
        self._ops: list[tuple[Any, ...]] = []  # what text() renders
        self._delta: ast.Delta | None = None

    def __len__(self) -> int:
        """Lines of the text form so far (one per element or statement)."""
        return len(self._ops)

    # -- building ---------------------------------------------------------------
    def _open(self) -> None:
        if self._delta is not None:
            _closed()
        if not self._insert_at:
            self._insert_at = self._line
            self._line += 1
            self._ops.append(("INSERT",))

    def _statement(self, st: ast.Statement, op: tuple[Any, ...]) -> None:
        if self._delta is not None:
            _closed()
        self._close()
        self._statements.append(st)
        self._ops.append(op)
        self._line += 1

    def _close(self) -> None:
        if self._insert_at:
            try:
                ins = self._state.build(RawInsert(ast.Pos(self._insert_at, 1), self._paths))
            except SyntaxFail as f:
                raise syntax_error(f) from None
            self._statements.append(ins)
            self._paths = []
            self._insert_at = 0

    def node(
        self,
        kind: str,
        props: Mapping[str, Any] | None = None,
        *,
        labels: Iterable[str] = (),
        nick: str | None = None,
        var: str | None = None,
    ) -> str:
        """Add a new node; returns its variable (``var`` or ``_1``, ``_2``, ...).
        ``labels`` are the labels besides ``kind`` (a list or tuple, not a str)."""
        # every argument is checked before the Bulk changes
        if var is not None:
            _check_var(var)
        if type(labels) is not tuple:
            labels = _labels(labels)
        pairs = _pairs(props)
        self._open()
        if var is None:
            self._auto += 1
            var = f"_{self._auto}"
        self._paths.append(
            [ast.NodePattern(var, (kind, *labels), pairs, nick, ast.Pos(self._line, 1))]
        )
        self._ops.append(("N", var, (kind, *labels), pairs, nick))
        self._line += 1
        return var

    def edge(
        self,
        src: str,
        type: str,
        dst: str,
        props: Mapping[str, Any] | None = None,
        *,
        var: str | None = None,
    ) -> str | None:
        """Add an edge ``src -[type]-> dst`` between variables of this Bulk or
        existing node handles; returns ``var``."""
        _check_var(src)
        _check_var(dst)
        if var is not None:
            _check_var(var)
        pairs = _pairs(props)
        self._open()
        line = self._line
        # the text form puts the target on the next line, so each position
        # can be told without printing the values
        self._paths.append(
            [
                ast.NodePattern(src, pos=ast.Pos(line, 1)),
                (True, var, type, pairs, ast.Pos(line, len(src) + 3), None),
                ast.NodePattern(dst, pos=ast.Pos(line + 1, 1)),
            ]
        )
        self._ops.append(("E", src, type, dst, pairs, var))
        self._line += 2
        return var

    def set(self, ref: str, key: str, value: Any) -> None:
        """``SET ref.key = value``"""
        _check_var(ref)
        _check_key(key)
        value = _value(value)
        self._statement(
            ast.SetProp(ref, key, value, ast.Pos(self._line, 5)), ("SET", ref, ".", key, value)
        )

    def remove(self, ref: str, key: str) -> None:
        """``REMOVE ref.key``"""
        _check_var(ref)
        _check_key(key)
        self._statement(ast.RemoveProp(ref, key, ast.Pos(self._line, 8)), ("REMOVE", ref, ".", key))

    def label(self, ref: str, label: str) -> None:
        """``SET ref:LABEL``"""
        _check_var(ref)
        _check_label(label)
        self._statement(ast.SetLabel(ref, label, ast.Pos(self._line, 5)), ("SET", ref, ":", label))

    def unlabel(self, ref: str, label: str) -> None:
        """``REMOVE ref:LABEL``"""
        _check_var(ref)
        _check_label(label)
        self._statement(
            ast.RemoveLabel(ref, label, ast.Pos(self._line, 8)), ("REMOVE", ref, ":", label)
        )

    def nick(self, ref: str, nick: str) -> None:
        """``SET ref #nick``"""
        _check_var(ref)
        _check_nick(nick)
        self._statement(ast.SetNick(ref, nick, ast.Pos(self._line, 5)), ("SET", ref, " #", nick))

    def unnick(self, ref: str, nick: str) -> None:
        """``REMOVE ref #nick``"""
        _check_var(ref)
        _check_nick(nick)
        self._statement(
            ast.RemoveNick(ref, nick, ast.Pos(self._line, 8)), ("REMOVE", ref, " #", nick)
        )

    def delete(self, ref: str) -> None:
        """``DELETE ref``: recycle a node (with its edges) or an edge."""
        _check_var(ref)
        self._statement(ast.Delete(ref, ast.Pos(self._line, 8)), ("DELETE", ref, "", ""))

    def settle(self, ref: str) -> None:
        """``SETTLE ref``: end a task."""
        _check_var(ref)
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
        takes two: its target is on the second). Raises InvalidArgument (a
        ValueError) on a name or value the grammar would refuse (such a batch
        is refused by Commit too)."""
        from ..gql.emit import format_edge, format_node, format_props, format_value

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
                check_var(ref)
                if sep == ".":
                    check_name(name, "property key")
                elif sep == ":":
                    check_label(name)
                elif sep:
                    format_node(None, (), (), name)  # checks the nick
                tail = f" = {format_value(value[0])}" if value else ""
                out.append(f"{tag} {ref}{sep}{name}{tail}")
        return "\n".join(out)


def _closed() -> None:
    raise InvalidArgument(
        "this Bulk was already committed or turned into a Δ (it is closed); build a new one"
    )


# names already checked, by what they name: the common case is one set lookup
_GOOD_VARS: set[str] = set()
_GOOD_KEYS: set[str] = set()
_GOOD_LABELS: set[str] = set()
_GOOD_NICKS: set[str] = set()


def _known(name: object, good: set[str], check: Callable[[Any], object]) -> None:
    """The slow path of the checks below: a name not seen yet (or not a str)."""
    check(name)  # the check of the text path: InvalidArgument with its message
    if len(good) > 1 << 16:
        good.clear()
    good.add(name)  # type: ignore[arg-type]  # check() passed: a str


def _key_name(key: object) -> None:
    check_name(key, "property key")  # type: ignore[arg-type]


def _check_var(var: object) -> None:
    if type(var) is not str or var not in _GOOD_VARS:
        _known(var, _GOOD_VARS, check_var)


def _check_key(key: object) -> None:
    if type(key) is not str or key not in _GOOD_KEYS:
        _known(key, _GOOD_KEYS, _key_name)


def _check_label(label: object) -> None:
    if type(label) is not str or label not in _GOOD_LABELS:
        _known(label, _GOOD_LABELS, check_label)


def _check_nick(nick: object) -> None:
    if type(nick) is not str or nick not in _GOOD_NICKS:
        _known(nick, _GOOD_NICKS, check_nick)


def _labels(labels: object) -> tuple[Any, ...]:
    """``labels`` as a tuple; a str (it would be split into letters), None or
    anything that is not a collection of names is refused."""
    if type(labels) is list:
        return tuple(labels)
    if (
        labels is None
        or isinstance(labels, (str, bytes, bytearray))
        or not isinstance(labels, Iterable)
    ):
        raise InvalidArgument(
            f"labels must be a list or tuple of label names, not "
            f"{type(labels).__name__} {labels!r:.80}"
        )
    return tuple(labels)


def _value(v: Any) -> Any:
    return tuple(v) if type(v) is list else v


def _pairs(props: object) -> ast.Props:
    if type(props) is not dict:
        if props is None:
            return ()
        if not isinstance(props, Mapping):
            raise InvalidArgument(
                f"props must be None or a mapping of property keys to "
                f"values (a dict), not {type(props).__name__} "
                f"{props!r:.80}"
            )
    if not props:
        return ()
    return tuple([(k, tuple(v) if type(v) is list else v) for k, v in props.items()])
