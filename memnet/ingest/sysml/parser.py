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

Every statement becomes :class:`SysmlElement` records and relations. A usage
written without a name gets one from what it redefines or references, its
role, or its keyword and position in its owner (``item1``, ``connection2``:
see :meth:`Reader.element`). Text that is not SysML is a syntax error at the
furthest point any reading reached; read with ``recover``, the statement that
holds it is skipped instead, with a warning naming the line and column, and
reading goes on after it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...gql.ast import Value
from ..model import Warning_
from . import behaviour, connections, statements
from .clauses import DECL_START, Clauses, Decl, last_name
from .doc import (
    DEF_KIND,
    EXT_DEF_KIND,
    USAGE_KIND,
    Connect,
    Relation,
    SysmlDoc,
    SysmlElement,
    Tag,
)
from .expr import Fail
from .lexer import Tokens
from .statements import Body, Pre

VISIBILITY = frozenset({"private", "public", "protected"})
FLAGS = frozenset(
    {
        "abstract",
        "variation",
        "variant",
        "derived",
        "constant",
        "ref",
        "end",
        "individual",
        "snapshot",
        "timeslice",
        "in",
        "out",
        "inout",
        "standard",
        "library",
    }
)
CALC_BODY = frozenset({"calc", "constraint", "case", "analysis", "verification", "use case"})
#: usage kinds that are not occurrences (``then`` never follows one of them)
_NOT_STEPS = frozenset({"ATTR", "ENUM", "REF", "META"})
_ROLE_NAMES = {"subject": "subject", "objective": "objective", "return": "result"}
#: the keyword an anonymous usage of each kind is numbered by (``item1``)
_KIND_WORD = {kind: word for word, kind in reversed(USAGE_KIND.items())} | {
    "CASE": "case",
    "REQ": "requirement",
    "FLOW": "flow",
    "OCC": "occurrence",
}
#: roles and keywords of more than one word, as one word
_ONE_WORD = {"assert not": "assert", "use case": "usecase"}
#: tokens after a closed body that still belong to the statement (``if … { } else { }``)
_GOES_ON = frozenset({"else", "until"})


def _derived_name(
    body: Body, kind: str, decl: Decl, role: str | None, word: str | None, refs: tuple[str, ...]
) -> str:
    """The name of an element declared without one (see :meth:`Reader.element`)."""
    if decl.redefines:
        return last_name(decl.redefines[0])
    if role in _ROLE_NAMES:
        return _ROLE_NAMES[role]
    if refs:
        return last_name(refs[0])
    w = role or word or _KIND_WORD.get(kind, "ref")
    return body.name_for(_ONE_WORD.get(w, w))


def _element_props(
    kind: str, decl: Decl, pre: Pre, inner: Body, props: dict[str, Value] | None
) -> tuple[dict[str, Value], Value | None]:
    """``(props, value)`` of an element: a default value becomes the
    ``default`` property, and its flags, filters and parallel mark are
    properties too."""
    p: dict[str, Value] = dict(props or {})
    value = decl.value
    if decl.default and value is not None:
        p["default"], value = value, None
    for flag in ("variation", "variant", "end", "individual", "snapshot", "timeslice"):
        if flag in pre.flags:
            p[flag] = True
    if "ref" in pre.flags and kind != "REF":
        p["ref"] = True
    if inner.filters:
        p["filter"] = "; ".join(inner.filters)
    if inner.parallel:
        p["parallel"] = True
    return p, value


class Reader(Clauses):
    """Reads one file's tokens into records (see the module doc)."""

    def __init__(self, toks: Tokens, path: str, recover: bool = False) -> None:
        super().__init__(toks, path)
        self.warnings: list[Warning_] = []
        self.recover = recover  # skip a statement that does not parse, with a warning
        self.speculating = 0  # readings under way that another reading may replace
        # positions (with the body's close and enum) where a member was tried and
        # is not one: a result expression that nests bodies (`if {…} ? a else b`)
        # would otherwise be tried as a member again at every level, in time
        # exponential in the nesting
        self._not_member: set[tuple[int, str, bool]] = set()

    def read(self) -> SysmlDoc:
        top = self.members("$END")
        return SysmlDoc(self.path, tuple(top.elements), tuple(top.relations), self.warnings)

    # -- bodies ----------------------------------------------------------------------------

    def members(
        self,
        close: str,
        calc: bool = False,
        enum: bool = False,
        into: Body | None = None,
        meta: bool = False,
    ) -> Body:
        """Members up to ``close`` (not consumed), added to ``into`` (default: a new
        body); with ``calc`` the last may be a result expression; with ``meta``
        they are the features of a metadata usage (``isMandatory = true;``
        redefines ``isMandatory``)."""
        body = into if into is not None else Body()
        k = self.k
        self.deeper()
        try:
            while k[self.i] != close:
                self.note(close)
                mark, warned, state = self.i, len(self.warnings), body.mark()
                try:
                    if calc:
                        self._calc_member(body, close, enum)
                    else:
                        self.member(body, enum, meta)
                except Fail:
                    if not self.recover or self.speculating:
                        raise
                    self.skip_statement(body, close, mark, warned, state)
        finally:
            self.nesting -= 1
        return body

    def _calc_member(self, body: Body, close: str, enum: bool) -> None:
        """A member of a calculation's body, or its result expression."""
        k = self.k
        mark, warned, state = self.i, len(self.warnings), body.mark()
        try:
            if (mark, close, enum) in self._not_member:
                raise Fail(mark, close)
            self.speculating += 1
            try:
                self.member(body, enum)
            finally:
                self.speculating -= 1
            return
        except Fail:  # not a member: the result expression
            self._not_member.add((mark, close, enum))
            self.i = mark
            del self.warnings[warned:]
            body.reset(state)
        try:
            if k[self.i] in VISIBILITY:
                self.i += 1
            start = self.i
            self.speculating += 1
            try:
                self.expr()
            finally:
                self.speculating -= 1
            body.text = self.span(start)
            if k[self.i] != close:
                self.fail(close)
        except Fail:
            if not self.recover or self.speculating:
                raise
            # neither reads: read it as a member again, now skipping what does not parse
            # inside it, so only the statement itself is lost if it is the culprit
            self.i = mark
            del self.warnings[warned:]
            body.reset(state)
            self.member(body, enum)

    def skip_statement(
        self, body: Body, close: str, mark: int, warned: int, state: tuple[object, ...]
    ) -> None:
        """Skip the statement that starts at token ``mark`` and does not parse: up
        to its ``;`` or the end of its body, at the same bracket depth (never past
        ``close``), with one warning naming the line and column where reading
        failed (what its own members had warned goes with it)."""
        k = self.k
        if self.far < mark:  # every failure notes where it happened; this is a safeguard
            self.far, self.far_what = mark, set()
        err = self.error()
        del self.warnings[warned:]
        body.reset(state)  # type: ignore[arg-type]
        j, depth = mark, 0
        while k[j] != "$END":
            kind = k[j]
            if depth == 0 and (kind == close or kind == "}"):
                break
            j += 1
            if kind in ("(", "[", "{"):
                depth += 1
            elif kind in (")", "]", "}"):
                depth -= 1
                if depth == 0 and kind == "}" and k[j] not in _GOES_ON:
                    break
            elif kind == ";" and depth == 0:
                break
        j = max(j, mark + 1)
        first = self.where(mark)[0]
        lastl = self.toks.line_col(self.toks.end[j - 1] - 1)[0]
        lines = f"line {first}" if lastl == first else f"lines {first}-{lastl}"
        head = err.message.removeprefix(f"{self.path}: ").removesuffix(
            f" at line {err.line}, column {err.column}"
        )
        self.warnings.append(
            Warning_(
                self.path,
                err.line or first,
                f"syntax error at line {err.line}, column {err.column}: "
                f"{head}; the statement at {lines} is skipped",
            )
        )
        self.i = j
        self.far, self.far_what = -1, set()

    def body(
        self, calc: bool = False, enum: bool = False, state: bool = False, meta: bool = False
    ) -> Body:
        """``;`` or ``{ members }`` (a state body may be ``parallel``)."""
        parallel = state and self.k[self.i] == "parallel"
        if parallel:
            self.i += 1
            self.expect("{")
        elif self.accept(";"):
            return Body()
        else:
            self.expect("{")
        inner = self.members("}", calc, enum, meta=meta)
        inner.parallel = parallel
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

    def member(self, body: Body, enum: bool = False, meta: bool = False) -> None:
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
                    if self.i == mark or not (
                        after in USAGE_WORDS or after in FLAGS or after == "#"
                    ):
                        self.i = mark
            elif kind == "#":
                self.i += 1
                pre.meta.append(self.qname())
            elif (
                kind == "NAME"
                and self.toks.value[self.i] == "readonly"
                and (k[self.i + 1] in USAGE_WORDS or k[self.i + 1] in FLAGS)
            ):
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
        elif kind == "def":  # `individual def I`, or `#Kw def X` (an extended definition)
            self.definition(
                body,
                i0,
                pre,
                "individual" if "individual" in pre.flags and not pre.meta else "def",
                words=1,
            )
        elif kind in USAGE_WORDS:
            self.usage(body, i0, pre, kind)
        else:
            self.bare_usage(body, i0, pre, enum, meta)

    def bare_usage(self, body: Body, i0: int, pre: Pre, enum: bool, meta: bool = False) -> None:
        """A usage written without a keyword (``x : T;``, ``:>> m = 1;``); in a
        metadata body, its leading name is the feature it redefines."""
        k = self.k
        if k[self.i] not in DECL_START and not (pre.flags or pre.direction or pre.meta):
            self.fail("DECL")
        decl = Decl()
        if k[self.i] == "NAME" and k[self.i + 1] == "::":  # `A::b = 1;` redefines A::b
            decl.redefines.append(self.qname())
        named_at = self.i if k[self.i] == "NAME" else None
        self.usage_decl(decl)
        if meta and named_at is not None and decl.name is not None and not decl.redefines:
            decl.redefines.append(self.toks.value[named_at])  # as written, quotes kept
        self.value_part(decl)
        inner = self.body(meta=meta)
        if enum:
            kind = "ENUM"
        elif pre.flags & {"individual", "snapshot", "timeslice"}:
            kind = "OCC"
        else:
            kind = "REF"
        self.element(body, kind, decl, i0, pre, inner)

    def definition(self, body: Body, i0: int, pre: Pre, word: str, words: int = 2) -> None:
        self.i += words  # the keyword and 'def'
        decl = self.definition_decl()
        inner = self.body(calc=word in CALC_BODY, enum=word == "enum", state=word == "state")
        kind = DEF_KIND.get(word, EXT_DEF_KIND)
        role = (
            "def"
            if kind == "CONSTRAINT"
            else (
                word
                if kind in ("REQDEF", "CASEDEF") and word not in ("requirement", "case")
                else None
            )
        )
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
        inner = self.body(calc=word in CALC_BODY)
        role = (
            word
            if word in ("concern", "viewpoint", "analysis", "verification", "use case")
            else None
        )
        self.element(body, USAGE_KIND[word], decl, i0, pre, inner, role=role, word=word)

    # -- records ------------------------------------------------------------------------------

    def where(self, i: int) -> tuple[int, int]:
        return self.toks.line_col(self.toks.start[i])

    def warn(self, i: int, message: str) -> None:
        self.warnings.append(Warning_(self.path, self.where(i)[0], message))

    def element(
        self,
        body: Body,
        kind: str,
        decl: Decl,
        i0: int,
        pre: Pre,
        inner: Body | None = None,
        role: str | None = None,
        props: dict[str, Value] | None = None,
        word: str | None = None,
        references: str | None = None,
    ) -> SysmlElement:
        """Add an element to ``body``.

        One without a name (and without a short id) is named, in this order, by
        the last name of the feature it redefines (``port :>> clutchPort;`` is
        ``clutchPort``), by its role (``subject``, ``objective``, ``result`` for
        a return value), by the last name of the feature it references
        (``::>``, or the one a statement such as ``perform a.b { … }`` names:
        ``b``), and otherwise by its role or keyword and a number counting the
        anonymous members of that word in the same owner, in document order
        (``require1``, ``decide2``, ``item1``, ``connection1``).
        """
        inner = inner if inner is not None else Body()
        if body.role_next is not None:  # `return` announced the role of this member
            role, body.role_next = body.role_next, None
        refs = tuple(decl.references) + ((references,) if references is not None else ())
        name, derived = decl.name, False
        if name is None and decl.short_id is None:
            name, derived = _derived_name(body, kind, decl, role, word, refs), True
        p, value = _element_props(kind, decl, pre, inner, props)
        line, col = self.where(i0)
        tags = tuple(Tag(m, None, line, col) for m in pre.meta)
        el = SysmlElement(
            kind,
            name,
            line,
            col,
            short_id=decl.short_id,
            types=tuple(decl.types),
            supertypes=tuple(decl.supertypes),
            subsets=tuple(decl.subsets),
            redefines=tuple(decl.redefines),
            multiplicity=decl.multiplicity,
            value=value,
            doc=" ".join(d for d in inner.docs if d) or None,
            direction=pre.direction,
            abstract="abstract" in pre.flags,
            text=inner.text,
            role=role,
            children=tuple(inner.elements),
            relations=tags + tuple(inner.relations),
            references=refs,
            props=tuple(sorted(p.items())),
            derived=derived,
        )
        body.elements.append(el)
        if kind not in _NOT_STEPS and pre.direction is None and name is not None:
            body.prev, body.prev_state = name, kind == "STATE"
        return el

    def relate(self, body: Body, rel: Relation) -> None:
        body.relations.append(rel)

    def succession(
        self,
        body: Body,
        i0: int,
        src: str | None,
        dst: str,
        props: Mapping[str, Value | None] | None = None,
        transition: bool = False,
    ) -> None:
        """A ``then`` edge (a TRANSITION after a state) from ``src`` to ``dst``."""
        if src is None:
            self.warn(i0, f"a succession to {dst!r} has no step before it: no link")
            return
        line, col = self.where(i0)
        edge = "TRANSITION" if transition or body.prev_state else "THEN"
        self.relate(
            body,
            Connect(
                src,
                dst,
                line=line,
                column=col,
                edge=edge,
                props=tuple(sorted((k, v) for k, v in (props or {}).items() if v is not None)),
            ),
        )


_STATEMENTS = {**statements.STATEMENTS, **connections.STATEMENTS, **behaviour.STATEMENTS}
_USAGES = {**statements.USAGES, **connections.USAGES, **behaviour.USAGES}
DEF_WORDS = frozenset(DEF_KIND)
USAGE_WORDS = frozenset(USAGE_KIND) | frozenset(_USAGES)


def parse_tokens(toks: Tokens, path: str, recover: bool = False) -> SysmlDoc:
    """Read the tokens of one file; a syntax error names the furthest point reached
    (with ``recover``, only the statement that holds it is skipped, with a warning)."""
    reader = Reader(toks, path, recover)
    try:
        return reader.read()
    except Fail:
        raise reader.error() from None


__all__ = ["Reader", "parse_tokens"]
