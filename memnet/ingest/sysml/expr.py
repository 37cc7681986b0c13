"""Token access, failure bookkeeping and KerML expressions (KerML 8.2.5.8).

:class:`Cursor` is the base of the SysML statement reader: it walks
:class:`~memnet.ingest.sysml.lexer.Tokens`, remembers the furthest place a
parse failed and what would have been accepted there (the error a user sees
names that place), and recognises expressions, qualified names and feature
chains. Expressions are recognised, not evaluated: the reader keeps their
text. Every operator of KerML's table 6 is accepted at one level (precedence
does not change what is accepted), unary operators are read in a loop, and
the nesting of recursive constructs is capped so no text can exhaust the stack.
"""

from __future__ import annotations

from typing import NoReturn

from ...errors import InputTooLarge, ModelSyntaxError
from .lexer import Tokens

#: Deepest nesting of expressions and bodies the reader follows (brackets are
#: capped by the lexer; this also bounds ``if ... else if ...`` chains).
MAX_NESTING = 120

BINARY = frozenset(
    {
        "??",
        "implies",
        "or",
        "and",
        "xor",
        "|",
        "&",
        "==",
        "!=",
        "===",
        "!==",
        "<",
        ">",
        "<=",
        ">=",
        "..",
        "+",
        "-",
        "*",
        "/",
        "%",
        "^",
        "**",
    }
)
#: classification and cast operators: their right operand is a type name
CLASSIFY = frozenset({"istype", "hastype", "@", "@@", "as", "meta"})
UNARY = frozenset({"+", "-", "~", "not"})
LITERALS = frozenset({"NUMBER", "STRING", "true", "false", "null", "*"})

_WORDS = {
    "NAME": "a name",
    "STRING": "a string",
    "NUMBER": "a number",
    "$END": "end of input",
    "DECL": "a declaration (package, part, attribute, action, requirement, ...)",
    "EXPR": "an expression",
    "COMMENT": "a /* comment */",
}
_FIRST = (";", "{", "}")


class Fail(Exception):
    """A parse attempt failed (the reader may try another reading)."""


class Cursor:
    """A position in a token list, with the furthest failure seen so far."""

    def __init__(self, toks: Tokens, path: str) -> None:
        self.toks = toks
        self.text = toks.text
        self.path = path
        self.k = toks.kind
        self.i = 0
        self.far = -1
        self.far_what: set[str] = set()
        self.nesting = 0

    # -- tokens -------------------------------------------------------------------------

    def note(self, what: str) -> None:
        """``what`` would have been accepted here (kept for the error message)."""
        if self.i > self.far:
            self.far, self.far_what = self.i, {what}
        elif self.i == self.far:
            self.far_what.add(what)

    def fail(self, what: str) -> NoReturn:
        self.note(what)
        raise Fail

    def accept(self, kind: str) -> bool:
        if self.k[self.i] == kind:
            self.i += 1
            return True
        self.note(kind)
        return False

    def expect(self, kind: str) -> int:
        """Consume a token of ``kind``; its index."""
        if self.k[self.i] != kind:
            self.fail(kind)
        self.i += 1
        return self.i - 1

    def deeper(self) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            line, col = self.toks.line_col(self.toks.start[self.i])
            raise InputTooLarge(
                f"{self.path}:{line}:{col}: the model nests declarations or "
                f"expressions deeper than {MAX_NESTING}",
                cap=MAX_NESTING,
            )

    def error(self) -> ModelSyntaxError:
        """The syntax error at the furthest failure."""
        i = max(self.far, 0)
        kind, value = self.k[i], self.toks.value[i]
        what = set(self.far_what)
        if kind == "$END":
            head = "unexpected end of input"
        else:
            short = value if len(value) <= 30 else value[:27] + "..."
            head = {
                "NAME": f"unexpected name {short!r}"
                if not short.startswith("'")
                else f"unexpected quoted name {short}",
                "STRING": f"unexpected string {short}",
                "NUMBER": f"unexpected number {short}",
            }.get(kind, f"unexpected {short!r}")
        line, col = self.toks.line_col(self.toks.start[i])
        return ModelSyntaxError(
            f"{head}; expected {_describe(what)}", path=self.path, line=line, column=col
        )

    # -- names ----------------------------------------------------------------------------

    def qname(self) -> str:
        """``A::B::'c d'``, or ``$::A::B`` from the global namespace (a ``::`` not
        followed by a name is left alone)."""
        k = self.k
        start = self.i
        if k[self.i] == "$" and k[self.i + 1] == "::":
            self.i += 2
        self.expect("NAME")
        while k[self.i] == "::" and k[self.i + 1] == "NAME":
            self.i += 2
        self.note("::")
        return self.joined(start, self.i)

    def chain(self) -> str:
        """A qualified name or a feature chain ``a.b::c.d``."""
        start = self.i
        self.qname()
        while self.k[self.i] == "." and self.k[self.i + 1] == "NAME":
            self.i += 1
            self.qname()
        self.note(".")
        return self.joined(start, self.i)

    def joined(self, start: int, end: int) -> str:
        return "".join(self.toks.value[start:end])

    # -- expressions ----------------------------------------------------------------------

    def expr(self) -> None:
        """An OwnedExpression."""
        self.deeper()
        try:
            k = self.k
            if k[self.i] == "if":
                self.i += 1
                self.expr()
                self.expect("?")
                self.expr()
                self.expect("else")
                self.expr()
                return
            self.operand()
            while True:
                op = k[self.i]
                if op in BINARY:
                    self.i += 1
                    self.operand()
                elif op in CLASSIFY:
                    self.i += 1
                    self.qname()
                else:
                    self.note("EXPR_OP")
                    return
        finally:
            self.nesting -= 1

    def operand(self) -> None:
        k = self.k
        while k[self.i] in UNARY:
            self.i += 1
        kind = k[self.i]
        if kind in CLASSIFY:  # `@Safety`, `istype T`: a test of the context
            self.i += 1
            self.qname()
            return
        if kind == "all":
            self.i += 1
            self.qname()
            return
        self.primary()

    def primary(self) -> None:
        k = self.k
        kind = k[self.i]
        named = False
        if kind in LITERALS:
            self.i += 1
        elif kind == "(":
            self.i += 1
            if not self.accept(")"):
                self.sequence(")")
        elif kind == "{":
            self.body_expression()
        elif kind == "NAME" or (kind == "$" and k[self.i + 1] == "::"):
            if self.toks.value[self.i] == "new" and k[self.i + 1] == "NAME":
                self.i += 1
            self.qname()
            named = True
        else:
            self.fail("EXPR")
        while True:  # postfix operators
            kind = k[self.i]
            if kind == "." and k[self.i + 1] == "NAME":
                self.i += 1
                self.qname()
                named = True
                continue
            named = named and kind == "("
            if kind == "(" and named:
                self.arguments()
            elif kind == "." and k[self.i + 1] in ("{", "metadata"):
                self.i += 1
                if k[self.i] == "metadata":
                    self.i += 1
                else:
                    self.body_expression()
            elif kind == ".?":
                self.i += 1
                self.body_expression()
            elif kind == "[":
                self.i += 1
                self.sequence("]")
            elif kind == "#" and k[self.i + 1] == "(":
                self.i += 2
                self.sequence(")")
            elif kind == "->":
                self.i += 1
                self.qname()
                if k[self.i] == "{":
                    self.body_expression()
                elif k[self.i] == "(":
                    self.arguments()
                else:
                    self.qname()  # a function reference: `->reduce '+'`
            else:
                self.note("(")
                self.note("[")
                return

    def sequence(self, close: str) -> None:
        """``e1, e2, ...`` (a trailing comma allowed) and the closing bracket."""
        self.expr()
        while self.accept(","):
            if self.accept(close):
                return
            self.expr()
        self.expect(close)

    def arguments(self) -> None:
        """``( )``, ``(e1, e2)`` or ``(p1 = e1, p2 = e2)``."""
        k = self.k
        self.expect("(")
        if self.accept(")"):
            return
        while True:
            if k[self.i] == "NAME" and k[self.i + 1] == "=":
                self.i += 2
            self.expr()
            if not self.accept(","):
                break
        self.expect(")")

    def body_expression(self) -> None:
        """``{ members... result }``; the statement reader supplies the members."""
        raise NotImplementedError


def _describe(names: set[str]) -> str:
    names = set(names) - {"EXPR_OP"}
    lead = []
    if "DECL" in names:  # where a member may start: the keywords say nothing more
        names = {n for n in names if n in _FIRST or n in ("EXPR", "$END")}
        lead.append(_WORDS["DECL"])
    lead += [f"'{n}'" for n in _FIRST if n in names]
    rest = sorted(_WORDS.get(n, f"'{n}'") for n in names - set(_FIRST) - {"$END"})
    parts = lead + rest + (["end of input"] if "$END" in names else [])
    if not parts:
        return "something else"
    if len(parts) > 8:
        parts = parts[:8] + ["..."]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


__all__ = ["BINARY", "CLASSIFY", "MAX_NESTING", "Cursor", "Fail"]
