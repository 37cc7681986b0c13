"""A direct reader for mutation batches: the Δ grammar of ``memnet.lark``
without the general parser.

lark's LALR parser costs several microseconds a token, which makes it the
bottleneck of every Commit sent as text. This module reads the same ``delta``
grammar in two steps: one regular expression cuts the whole text into tokens
(a C-level scan; blanks and comments dropped), then a recursive descent over
the token list builds the same syntax tree through the same checks (the
builder of :mod:`memnet.gql.build` for variables, the string decoding of
:mod:`memnet.gql.literals`). It never reports an error itself: on anything it
does not accept it gives up (``None``, or the offset where it stopped) and
:func:`memnet.gql.parse.parse_delta` asks lark, which says what is wrong and
where. So the grammar file stays the one definition of the language, and a
property test (tests/gql/test_fast.py) holds the two readers to the same trees.

Each token is read once and the descent only moves forward: a Δ is read in
time linear in its length."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from .ast import (
    Delete,
    Delta,
    Gone,
    NodePattern,
    Pos,
    RemoveLabel,
    RemoveNick,
    RemoveProp,
    SeedQuery,
    SetLabel,
    SetNick,
    SetProp,
    Settle,
    Statement,
    Value,
)
from .build import InsertState, RawEdge, RawInsert
from .failure import SyntaxFail
from .literals import decode_text
from .names import ANON_RE, LABEL_RE

# One alternative per token kind; the names are the kinds. Blanks and comments
# are matched and dropped; anything else is one character of kind X (refused).
_TOKENS = re.compile(
    r"""
  (?:\s++|//[^\n]*+|/\*[\s\S]*?\*/)++
| (?P<S>'(?:[^'\\]++|\\[\s\S]|'')*+')
| (?P<F>-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)(?![A-Za-z0-9_.]))
| (?P<I>-?[0-9]+(?![A-Za-z0-9_.]))
| (?P<W>[A-Za-z_][A-Za-z0-9_]*)
| (?P<N>\#[a-z0-9][a-z0-9_-]*(?![A-Z]))
| (?P<P>\]->|\]-|-\[|<-\[|[(){}\[\]:&,.=;])
| (?P<X>[\s\S])
""",
    re.VERBOSE,
)
_LABEL = LABEL_RE
_ANON = ANON_RE
_NL = re.compile(r"\n")
_STATEMENTS = frozenset({"insert", "set", "remove", "delete", "settle", "gone"})
_INF = (float("inf"), float("-inf"))


class _Stop(Exception):
    """The text is not a Δ this reader accepts (lark will say why)."""

    def __init__(self, at: int) -> None:
        self.at = at


def _scan(text: str) -> tuple[list[str | None], list[str], list[int]]:
    """The tokens of ``text`` as three columns (kind, text, start), ending with
    an end marker; blanks and comments are left out. The scan ends at the
    first character no token starts with (the reader stops there anyway), so
    junk is never scanned past its first character."""
    kinds: list[str | None] = []
    values: list[str] = []
    starts: list[int] = []
    add_k, add_v, add_s = kinds.append, values.append, starts.append
    for m in _TOKENS.finditer(text):
        k = m.lastgroup
        if k is not None:
            add_k(k)
            add_v(m.group())
            add_s(m.start())
            if k == "X":
                break
    add_k(None)  # the end
    add_v("")
    add_s(len(text))
    return kinds, values, starts


class _Reader:
    __slots__ = ("text", "k", "v", "at", "i", "nls", "_decode")

    def __init__(self, text: str) -> None:
        self.text = text
        self.k, self.v, self.at = _scan(text)
        self.i = 0
        self.nls: list[int] | None = None
        self._decode = decode_text

    def stop(self) -> _Stop:
        return _Stop(self.at[self.i])

    def pos(self, i: int) -> Pos:
        at = self.at[i]
        if self.nls is None:
            self.nls = [m.start() for m in _NL.finditer(self.text)]
        n = bisect_right(self.nls, at - 1)
        start = self.nls[n - 1] + 1 if n else 0
        return Pos(n + 1, at - start + 1)

    def punct(self, p: str) -> None:
        i = self.i
        if self.k[i] != "P" or self.v[i] != p:
            raise _Stop(self.at[i])
        self.i = i + 1

    def is_punct(self, p: str) -> bool:
        i = self.i
        if self.k[i] == "P" and self.v[i] == p:
            self.i = i + 1
            return True
        return False

    def name(self) -> str:
        i = self.i
        if self.k[i] != "W":
            raise _Stop(self.at[i])
        self.i = i + 1
        return self.v[i]

    def var(self) -> str:
        name = self.name()
        if _ANON.fullmatch(name):
            raise _Stop(self.at[self.i - 1])
        return name

    def label(self) -> str:
        i = self.i
        if self.k[i] != "W" or _LABEL.fullmatch(self.v[i]) is None:
            raise _Stop(self.at[i])
        self.i = i + 1
        return self.v[i]

    def nick(self) -> str:
        i = self.i
        if self.k[i] != "N":
            raise _Stop(self.at[i])
        self.i = i + 1
        return self.v[i][1:]

    # -- values --------------------------------------------------------------------
    def scalar(self) -> Value:
        i = self.i
        k, v = self.k[i], self.v[i]
        self.i = i + 1
        if k == "S":
            value = self._decode(v[1:-1])
            if value is not None:
                return value
        elif k == "I":
            try:
                return int(v)
            except ValueError:  # longer than Python reads
                pass
        elif k == "F":
            f = float(v)
            if f not in _INF:
                return f
        elif k == "W":
            low = v.lower()
            if low == "true":
                return True
            if low == "false":
                return False
        raise _Stop(self.at[i])

    def value(self) -> Value:
        if not self.is_punct("["):
            return self.scalar()
        items: list[Value] = []
        if not self.is_punct("]"):
            items.append(self.scalar())
            while self.is_punct(","):
                items.append(self.scalar())
            self.punct("]")
        return tuple(items)  # type: ignore[arg-type]

    def props(self) -> tuple[tuple[str, Value], ...]:
        out: list[tuple[str, Value]] = []
        seen: set[str] = set()
        if not self.is_punct("}"):
            while True:
                key = self.name()
                if key in seen:
                    raise _Stop(self.at[self.i - 1])
                seen.add(key)
                self.punct(":")
                out.append((key, self.value()))
                if not self.is_punct(","):
                    break
            self.punct("}")
        return tuple(out)

    # -- patterns ----------------------------------------------------------------------
    def node(self) -> NodePattern:
        start = self.i
        self.punct("(")
        var = self.var() if self.k[self.i] == "W" else None
        labels: tuple[str, ...] = ()
        if self.is_punct(":"):
            got = [self.label()]
            while self.is_punct("&") or self.is_punct(":"):
                got.append(self.label())
            labels = tuple(got)
        nick = self.nick() if self.k[self.i] == "N" else None
        props = self.props() if self.is_punct("{") else ()
        self.punct(")")
        return NodePattern(var, labels, props, nick, self.pos(start))

    def edge(self, right: bool) -> RawEdge:
        start = self.i - 1
        var = self.var() if self.k[self.i] == "W" else None
        self.punct(":")
        etype = self.label()
        props = self.props() if self.is_punct("{") else ()
        self.punct("]->" if right else "]-")
        return (right, var, etype, props, self.pos(start), None)

    def insert(self, start: int) -> RawInsert:
        paths = []
        while True:
            path: list[Any] = [self.node()]
            while True:
                if self.is_punct("-["):
                    path.append(self.edge(True))
                elif self.is_punct("<-["):
                    path.append(self.edge(False))
                else:
                    break
                path.append(self.node())
            paths.append(path)
            if not self.is_punct(","):
                break
        return RawInsert(self.pos(start), paths)

    # -- SET / REMOVE --------------------------------------------------------------------
    def item(self, setting: bool) -> Statement:
        start = self.i
        var = self.name()
        pos = self.pos(start)
        if self.is_punct("."):
            key = self.name()
            if setting:
                self.punct("=")
                return SetProp(var, key, self.value(), pos)
            return RemoveProp(var, key, pos)
        if self.is_punct(":"):
            label = self.label()
            return SetLabel(var, label, pos) if setting else RemoveLabel(var, label, pos)
        nick = self.nick()
        return SetNick(var, nick, pos) if setting else RemoveNick(var, nick, pos)

    # -- the whole Δ ----------------------------------------------------------------------
    def delta(self) -> Delta:
        out: list[Statement] = []
        state = InsertState()
        kinds, values = self.k, self.v
        while True:
            i = self.i
            k = kinds[i]
            if k is None:
                break
            if k == "P" and values[i] == ";":
                self.i = i + 1
                continue
            word = values[i].lower() if k == "W" else ""
            if word not in _STATEMENTS:
                raise _Stop(self.at[i])
            self.i = i + 1
            if word == "insert":
                try:
                    out.append(state.build(self.insert(i)))
                except SyntaxFail:
                    raise _Stop(self.at[i]) from None
            elif word == "set" or word == "remove":
                setting = word == "set"
                out.append(self.item(setting))
                while self.is_punct(","):
                    out.append(self.item(setting))
            else:
                make = Delete if word == "delete" else Settle if word == "settle" else Gone
                while True:
                    start = self.i
                    out.append(make(self.name(), self.pos(start)))
                    if not self.is_punct(","):
                        break
        return Delta(tuple(out))

    # -- the MATCH form of a Recall query ------------------------------------------------
    def word(self, w: str) -> bool:
        """Whether the next token is keyword ``w`` (any case); taken if so."""
        i = self.i
        if self.k[i] == "W" and self.v[i].lower() == w:
            self.i = i + 1
            return True
        return False

    def seed(self) -> SeedQuery:
        """``MATCH node [WHERE cond (AND cond)*] [LIMIT n] [RETURN var]`` (the
        last two in either order), folded as the grammar's transformer folds
        it; anything the transformer would refuse stops the reader."""
        if not self.word("match"):
            raise self.stop()
        node = self.node()
        var = node.var
        props: list[tuple[str, Value]] = list(node.props)
        seen = {k for k, _v in props}
        contains: list[tuple[str, str]] = []
        if self.word("where"):
            while True:
                if self.name() != var:
                    raise _Stop(self.at[self.i - 1])
                self.punct(".")
                key = self.name()
                if self.word("contains"):
                    i = self.i
                    needle = self._decode(self.v[i][1:-1]) if self.k[i] == "S" else None
                    if needle is None:
                        raise _Stop(self.at[i])
                    self.i = i + 1
                    contains.append((key, needle))
                else:
                    self.punct("=")
                    if key in seen:
                        raise _Stop(self.at[self.i - 1])
                    seen.add(key)
                    props.append((key, self.value()))
                if not self.word("and"):
                    break
        limit: int | None = None
        returned = False
        for _ in range(2):
            if limit is None and self.word("limit"):
                i = self.i
                if self.k[i] != "I" or int(self.v[i]) < 1:
                    raise _Stop(self.at[i])
                self.i = i + 1
                limit = int(self.v[i])
            elif not returned and self.word("return"):
                if self.name() != var:
                    raise _Stop(self.at[self.i - 1])
                returned = True
        if self.k[self.i] is not None:
            raise self.stop()
        labels = node.labels
        return SeedQuery(
            kind=labels[0] if labels else None,
            labels=labels[1:],
            props=tuple(props),
            contains=tuple(contains),
            nick=node.nick,
            limit=limit,
            form="match",
        )


def fast_seed(text: str) -> SeedQuery | None:
    """The MATCH-form query in ``text``, or None when this reader does not
    accept it (lark then parses it, and says what is wrong)."""
    try:
        return _Reader(text).seed()
    except (_Stop, ValueError):  # ValueError: a LIMIT longer than Python reads
        return None


def read_delta(text: str) -> Delta | int:
    """The Δ in ``text``, or the offset where this reader stopped when it does
    not accept the text (a syntax error, or anything else the full parser
    must judge)."""
    try:
        return _Reader(text).delta()
    except _Stop as e:
        return e.at


def fast_delta(text: str) -> Delta | None:
    """The Δ in ``text``, or None when this reader does not accept it."""
    got = read_delta(text)
    return None if isinstance(got, int) else got


__all__ = ["fast_delta", "fast_seed", "read_delta"]
