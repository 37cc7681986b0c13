"""SysML v2 text → :class:`~memnet.ingest.sysml.doc.SysmlDoc`: every statement of
the textual notation (SysML 8.2.2, the BNF in the release) read at statement
level.

:class:`Reader` reads a body as members. A member starts with an optional
visibility and the prefixes a usage may carry (``abstract``, ``ref``, ``in``,
``end``, ``individual``, ``#Meta`` ...), then a keyword picks the statement:
definitions (``part def``), usages (``part``, and a usage written without a
keyword, ``mass :>> mass = 10 [kg];``), relationships (``import``, ``alias``,
``satisfy``, ``connect``, ``flow``, ``bind``, ``allocate``, ``dependency``),
behaviour (``perform``, action nodes, successions, ``then``, ``first``,
states, ``entry``/``do``/``exit``, transitions) and annotations (``doc``,
``comment``, metadata). Expressions are recognised by
:class:`~memnet.ingest.sysml.expr.Cursor` and kept as text. A calculation's,
constraint's or case's body may end with its result expression.

Modelled statements become :class:`SysmlElement` records and relations;
a statement the reader recognises but MemNet does not model (views,
renderings, filters, metadata definitions ...) is skipped with a warning
naming the construct and its line, and reading goes on after it. Anything
else is a syntax error at the furthest point any reading reached.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...gql.ast import Value
from ..model import Warning_
from . import behaviour, statements
from .clauses import DECL_START, Clauses, Decl
from .doc import DEF_KIND, USAGE_KIND, Connect, Relation, SysmlDoc, SysmlElement
from .expr import Fail
from .lexer import Tokens
from .statements import Body, Pre

VISIBILITY = frozenset({"private", "public", "protected"})
FLAGS = frozenset({"abstract", "variation", "variant", "derived", "constant", "ref", "end",
                   "individual", "snapshot", "timeslice", "in", "out", "inout", "standard",
                   "library"})
CALC_BODY = frozenset({"calc", "constraint", "case", "analysis", "verification", "use case"})
#: usage kinds that are not occurrences (``then`` never follows one of them)
_NOT_STEPS = frozenset({"ATTR", "ENUM", "REF"})
_ROLE_NAMES = {"subject": "subject", "objective": "objective", "return": "result"}


class Reader(Clauses):
    """Reads one file's tokens into records (see the module doc)."""

    def __init__(self, toks: Tokens, path: str) -> None:
        super().__init__(toks, path)
        self.warnings: list[Warning_] = []
        # positions (with the body's close and enum) where a member was tried and
        # is not one: a result expression that nests bodies (`if {…} ? a else b`)
        # would otherwise be tried as a member again at every level, in time
        # exponential in the nesting
        self._not_member: set[tuple[int, str, bool]] = set()

    def read(self) -> SysmlDoc:
        top = self.members("$END")
        return SysmlDoc(self.path, tuple(top.elements), tuple(top.relations), self.warnings)

    # -- bodies ----------------------------------------------------------------------------

    def members(self, close: str, calc: bool = False, enum: bool = False,
                into: Body | None = None) -> Body:
        """Members up to ``close`` (not consumed), added to ``into`` (default: a new
        body); with ``calc`` the last may be a result expression."""
        body = into if into is not None else Body()
        k = self.k
        self.deeper()
        try:
            while k[self.i] != close:
                self.note(close)
                if not calc:
                    self.member(body, enum)
                    continue
                mark, warned, state = self.i, len(self.warnings), body.mark()
                try:
                    if (mark, close, enum) in self._not_member:
                        raise Fail(mark, close)
                    self.member(body, enum)
                except Fail:  # not a member: the result expression
                    self._not_member.add((mark, close, enum))
                    self.i = mark
                    del self.warnings[warned:]
                    body.reset(state)
                    if k[self.i] in VISIBILITY:
                        self.i += 1
                    start = self.i
                    self.expr()
                    body.text = self.span(start)
                    if k[self.i] != close:
                        self.fail(close)
        finally:
            self.nesting -= 1
        return body

    def body(self, calc: bool = False, enum: bool = False, state: bool = False) -> Body:
        """``;`` or ``{ members }`` (a state body may be ``parallel``)."""
        if state and self.k[self.i] == "parallel":
            self.i += 1
            self.expect("{")
        elif self.accept(";"):
            return Body()
        else:
            self.expect("{")
        inner = self.members("}", calc, enum)
        self.i += 1
        return inner

    def body_expression(self) -> None:
        self.expect("{")
        self.members("}", calc=True)
        self.i += 1

    def block(self, into: Body | None = None) -> Body:
        """An action body parameter: ``[action [decl]] { members }`` (the branches of
        an ``if`` share one body)."""
        if self.accept("action"):
            self.usage_decl()
        self.expect("{")
        inner = self.members("}", into=into)
        self.i += 1
        return inner

    # -- members -----------------------------------------------------------------------------

    def member(self, body: Body, enum: bool = False) -> None:
        k = self.k
        i0 = self.i
        pre = Pre()
        if k[self.i] in VISIBILITY:
            pre.visibility = self.toks.value[self.i]
            self.i += 1
        while True:  # prefixes, in any order
            kind = k[self.i]
            if kind in FLAGS:
                if kind in ("in", "out", "inout"):
                    pre.direction = kind
                else:
                    pre.flags.add(kind)
                self.i += 1
                if kind == "end":  # `end [1] part p`: a cross feature before the keyword
                    mark = self.i
                    self.usage_decl()
                    after = k[self.i]
                    if self.i == mark or not (after in USAGE_WORDS or after in FLAGS
                                              or after == "#"):
                        self.i = mark
            elif kind == "#":
                self.i += 1
                pre.meta.append(self.qname())
            elif kind == "NAME" and self.toks.value[self.i] == "readonly" and \
                    (k[self.i + 1] in USAGE_WORDS or k[self.i + 1] in FLAGS):
                pre.flags.add("readonly")  # an older spelling of `constant`
                self.i += 1
            else:
                break
        kind = k[self.i]
        if kind not in ("doc", "comment", "rep", "language"):
            body.members += 1
        handler = _STATEMENTS.get(kind)
        if handler is not None:
            handler(self, body, i0, pre)
            return
        nxt = k[self.i + 1]
        if kind == "use" and nxt == "case":
            self.i += 1
            if k[self.i + 1] == "def":
                self.definition(body, i0, pre, "use case")
            else:
                self.usage(body, i0, pre, "use case")
        elif kind in DEF_WORDS and nxt == "def":
            self.definition(body, i0, pre, kind)
        elif kind == "def":
            if "individual" in pre.flags:
                self.i -= 1
                self.definition(body, i0, pre, "individual")
            else:
                self.i += 1
                self.definition_decl()
                since = len(self.warnings)
                self.body()
                self.skip(i0, "#" + (pre.meta[0] if pre.meta else "") + " def", since)
        elif kind in USAGE_WORDS:
            self.usage(body, i0, pre, kind)
        else:
            self.bare_usage(body, i0, pre, enum)

    def bare_usage(self, body: Body, i0: int, pre: Pre, enum: bool) -> None:
        """A usage written without a keyword (``x : T;``, ``:>> m = 1;``)."""
        k = self.k
        if k[self.i] not in DECL_START and not (pre.flags or pre.direction or pre.meta):
            self.fail("DECL")
        decl = Decl()
        if k[self.i] == "NAME" and k[self.i + 1] == "::":  # `A::b = 1;` redefines A::b
            decl.redefines.append(self.qname())
        self.usage_decl(decl)
        self.value_part(decl)
        inner = self.body()
        if enum:
            kind = "ENUM"
        elif pre.flags & {"individual", "snapshot", "timeslice"}:
            kind = "OCC"
        else:
            kind = "REF"
        self.element(body, kind, decl, i0, pre, inner)

    def definition(self, body: Body, i0: int, pre: Pre, word: str) -> None:
        self.i += 2  # the keyword and 'def'
        decl = self.definition_decl()
        since = len(self.warnings)
        inner = self.body(calc=word in CALC_BODY, enum=word == "enum", state=word == "state")
        kind = DEF_KIND.get(word)
        if kind is None:
            self.skip(i0, f"{word} def", since)
            return
        role = "def" if kind == "CONSTRAINT" else (word if kind in ("REQDEF", "CASEDEF") and
                                                   word not in ("requirement", "case") else None)
        if word == "individual":
            role = "individual"
        self.element(body, kind, decl, i0, pre, inner, role=role)

    def usage(self, body: Body, i0: int, pre: Pre, word: str) -> None:
        special = _USAGES.get(word)
        if special is not None:
            special(self, body, i0, pre)
            return
        self.i += 1
        decl = self.usage_decl()
        self.value_part(decl)
        since = len(self.warnings)
        inner = self.body(calc=word in CALC_BODY)
        kind = USAGE_KIND.get(word)
        if kind is None:
            self.skip(i0, word, since)
            return
        role = word if word in ("concern", "viewpoint", "analysis", "verification",
                                "use case") else None
        self.element(body, kind, decl, i0, pre, inner, role=role)

    # -- records ------------------------------------------------------------------------------

    def where(self, i: int) -> tuple[int, int]:
        return self.toks.line_col(self.toks.start[i])

    def warn(self, i: int, message: str) -> None:
        self.warnings.append(Warning_(self.path, self.where(i)[0], message))

    def skip(self, i0: int, construct: str, since: int | None = None) -> None:
        """Warn that a statement is skipped; the warnings its members raised since
        ``since`` go with it (one warning per skipped statement)."""
        if since is not None:
            del self.warnings[since:]
        self.warn(i0, f"unsupported construct '{construct}' skipped")

    def element(self, body: Body, kind: str, decl: Decl, i0: int, pre: Pre,
                inner: Body | None = None, role: str | None = None,
                props: dict[str, Value] | None = None, named: bool = False) -> SysmlElement:
        """Add an element to ``body``. An anonymous one that references a feature
        goes by that feature's name; otherwise it gets a name when ``named`` (action
        nodes), as an action or a constraint (``action1``, ``require1``), or as a
        subject, an objective or a return value; others are named by what they
        redefine (or skipped) when placed."""
        inner = inner if inner is not None else Body()
        name = decl.name
        if name is None and decl.short_id is None and not decl.redefines:
            if role in _ROLE_NAMES:
                name = _ROLE_NAMES[role]
            elif decl.references:  # `requirement references r;`: goes by what it names
                name = decl.references[0].replace("'", "")
            elif named or kind in ("CONSTRAINT", "ACT"):
                name = body.name_for(role or ("constraint" if kind == "CONSTRAINT"
                                              else "action"))
        p: dict[str, Value] = dict(props or {})
        value = decl.value
        if decl.default and value is not None:
            p["default"], value = value, None
        for flag in ("variation", "variant", "end", "individual", "snapshot", "timeslice"):
            if flag in pre.flags:
                p[flag] = True
        if "ref" in pre.flags and kind != "REF":
            p["ref"] = True
        meta = pre.meta + inner.meta
        if meta:
            p["meta"] = ", ".join(meta)
        line, col = self.where(i0)
        el = SysmlElement(
            kind, name, line, col, short_id=decl.short_id, types=tuple(decl.types),
            supertypes=tuple(decl.supertypes), subsets=tuple(decl.subsets),
            redefines=tuple(decl.redefines), multiplicity=decl.multiplicity, value=value,
            doc=" ".join(d for d in inner.docs if d) or None, direction=pre.direction,
            abstract="abstract" in pre.flags, text=inner.text, role=role,
            children=tuple(inner.elements), relations=tuple(inner.relations),
            references=tuple(decl.references), props=tuple(sorted(p.items())))
        body.elements.append(el)
        if kind not in _NOT_STEPS and name is not None:
            body.prev, body.prev_state = name, kind == "STATE"
        return el

    def relate(self, body: Body, rel: Relation) -> None:
        body.relations.append(rel)

    def dropped(self, i0: int, what: str, inner: Body) -> None:
        """Warn when a statement that only names a feature has members of its own."""
        if inner.members:
            self.warn(i0, f"unsupported construct '{what}' with members skipped (the "
                          f"{what} itself is kept)")

    def succession(self, body: Body, i0: int, src: str | None, dst: str,
                   props: Mapping[str, Value | None] | None = None,
                   transition: bool = False) -> None:
        """A ``then`` edge (a TRANSITION after a state) from ``src`` to ``dst``."""
        if src is None:
            self.warn(i0, f"a succession to {dst!r} follows no step; skipped")
            return
        line, col = self.where(i0)
        edge = "TRANSITION" if transition or body.prev_state else "THEN"
        self.relate(body, Connect(src, dst, line=line, column=col, edge=edge,
                                  props=tuple(sorted((k, v) for k, v in (props or {}).items()
                                                     if v is not None))))


_STATEMENTS = {**statements.STATEMENTS, **behaviour.STATEMENTS}
_USAGES = {**statements.USAGES, **behaviour.USAGES}
DEF_WORDS = frozenset(DEF_KIND) | {"view", "rendering", "metadata"}
USAGE_WORDS = frozenset(USAGE_KIND) | frozenset(_USAGES) | {"view", "rendering"}


def parse_tokens(toks: Tokens, path: str) -> SysmlDoc:
    """Read the tokens of one file; a syntax error names the furthest point reached."""
    reader = Reader(toks, path)
    try:
        return reader.read()
    except Fail:
        raise reader.error() from None


__all__ = ["Reader", "parse_tokens"]
