"""The clauses statements share (SysML 8.2.2.6): identification, specialisation,
multiplicity, values, connector and flow ends, payloads, and the text kept of
an expression. :class:`Clauses` extends the expression
:class:`~memnet.ingest.sysml.expr.Cursor` with them; the statement reader
(:mod:`memnet.ingest.sysml.parser`) builds on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...gql.ast import Value
from .expr import Cursor

_WS_RUN = re.compile(r"\s+")
_DOC_LINE = re.compile(r"^[ \t]*\*(?!/)", re.MULTILINE)
_INT = re.compile(r"[0-9]+")
# strings (kept) or notes and comments (dropped) inside kept text
_NOTES = re.compile(
    r"('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")"
    r"|//\*[\s\S]*?\*/|//[^\n]*|/\*[\s\S]*?\*/"
)
_ESCAPE = re.compile(r"\\(.)")

#: tokens that may open a usage declaration written without a keyword
DECL_START = frozenset(
    {
        "NAME",
        "<",
        ":",
        ":>",
        ":>>",
        "::>",
        "=>",
        "subsets",
        "redefines",
        "references",
        "crosses",
        "defined",
        "[",
        "ordered",
        "nonunique",
        "=",
        ":=",
        "default",
    }
)


def norm(text: str) -> str:
    """White space folded to single spaces."""
    return _WS_RUN.sub(" ", text).strip()


def unquote(raw: str) -> str:
    """The name inside ``'...'`` (escapes resolved); a basic name as it is."""
    return _ESCAPE.sub(r"\1", raw[1:-1]) if raw.startswith("'") else raw


def last_name(ref: str) -> str:
    """The last name of a reference (``a.b::'c d'`` → ``c d``)."""
    cut = max(ref.rfind("."), ref.rfind("::"))
    tail = ref[cut + (2 if ref[cut : cut + 2] == "::" else 1) :] if cut >= 0 else ref
    return unquote(tail)


def doc_text(raw: str) -> str:
    """A ``/* ... */`` body: the markers and each line's leading ``*`` dropped."""
    return norm(_DOC_LINE.sub(" ", raw[2:-2]))


def _keep_strings(m: re.Match[str]) -> str:
    return m.group(1) or " "


@dataclass(slots=True)
class Decl:
    """What a declaration says before its body."""

    short_id: str | None = None
    name: str | None = None
    types: list[str] = field(default_factory=list)
    supertypes: list[str] = field(default_factory=list)
    subsets: list[str] = field(default_factory=list)
    redefines: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    multiplicity: str | None = None
    value: Value | None = None
    default: bool = False

    @property
    def specialised(self) -> bool:
        return bool(
            self.types
            or self.subsets
            or self.redefines
            or self.references
            or self.multiplicity is not None
        )


class Clauses(Cursor):
    """Declarations and the other clauses shared by statements."""

    # -- text -------------------------------------------------------------------------------

    def span(self, start: int, end: int | None = None) -> str:
        """The source of tokens ``start .. end`` (default: up to here), notes and
        comments dropped, white space folded."""
        end = self.i if end is None else end
        if end <= start:
            return ""
        raw = self.text[self.toks.start[start] : self.toks.end[end - 1]]
        return norm(_NOTES.sub(_keep_strings, raw))

    def expr_text(self) -> tuple[str, Value]:
        """An expression: its text, and its value (a lone literal as such)."""
        start = self.i
        self.expr()
        text = self.span(start)
        return text, literal(self.k[start : self.i], self.toks.value[start : self.i], text)

    def comment_here(self) -> str | None:
        """The regular comment just before the current token, if any."""
        found = self.toks.comments.get(self.i)
        if not found:
            return None
        start, end = found[0]
        return self.text[start:end]

    # -- declarations -------------------------------------------------------------------------

    def identification(self, decl: Decl) -> None:
        """``<'short'> name``, both optional."""
        k = self.k
        if k[self.i] == "<":
            self.i += 1
            decl.short_id = unquote(self.toks.value[self.expect("NAME")])
            self.expect(">")
        else:
            self.note("<")
        if k[self.i] == "NAME":
            decl.name = unquote(self.toks.value[self.i])
            self.i += 1
        else:
            self.note("NAME")

    def definition_decl(self) -> Decl:
        """``<'id'> Name :> Super, Other`` (a definition needs a name or a short id)."""
        decl = Decl()
        self.identification(decl)
        if decl.name is None and decl.short_id is None:
            self.fail("NAME")
        while self.k[self.i] in (":>", "specializes"):
            self.i += 1
            decl.supertypes.append(self.qname())
            while self.accept(","):
                decl.supertypes.append(self.qname())
        self.note(":>")
        return decl

    def usage_decl(self, decl: Decl | None = None) -> Decl:
        """Identification, then typing, subsetting, redefinition, references and
        multiplicity in any order."""
        decl = decl if decl is not None else Decl()
        self.identification(decl)
        self.specialisations(decl)
        return decl

    def specialisations(self, decl: Decl) -> None:
        k = self.k
        while True:
            kind = k[self.i]
            if kind == "defined" and k[self.i + 1] == "by":
                self.i += 1
                kind = ":"
            into = {
                ":": decl.types,
                ":>": decl.subsets,
                "subsets": decl.subsets,
                ":>>": decl.redefines,
                "redefines": decl.redefines,
                "::>": decl.references,
                "references": decl.references,
                "=>": [],
                "crosses": [],
            }.get(kind)
            if into is not None:
                self.i += 1
                read = self.type_ref if kind == ":" else self.chain
                into.append(read())
                while kind in (":", ":>", "subsets", ":>>", "redefines") and self.accept(","):
                    into.append(read())
            elif kind == "[":
                decl.multiplicity = self.multiplicity()
            elif kind in ("ordered", "nonunique"):
                self.i += 1
            else:
                for what in (":", ":>", ":>>", "::>", "[", "subsets", "redefines"):
                    self.note(what)
                return

    def type_ref(self) -> str:
        tilde = self.accept("~")
        return ("~" if tilde else "") + self.chain()

    def multiplicity(self) -> str:
        """``[n]``, ``[lo..hi]``, ``[*]``: the bounds as written, without spaces."""
        start = self.expect("[")
        self.expr()
        self.expect("]")
        return "".join(self.toks.value[start + 1 : self.i - 1])

    def value_part(self, decl: Decl) -> None:
        """``= e``, ``:= e`` or ``default [=|:=] e``."""
        k = self.k
        kind = k[self.i]
        if kind in ("=", ":="):
            self.i += 1
        elif kind == "default":
            self.i += 1
            if k[self.i] in ("=", ":="):
                self.i += 1
            decl.default = True
        else:
            self.note("=")
            self.note(":=")
            return
        decl.value = self.expr_text()[1]

    # -- ends and payloads -----------------------------------------------------------------

    def end(self) -> str:
        """A connector end: ``[mult] [name ::>] a.b.c [mult]`` (the chain is what it
        names; the multiplicity after it is the older spelling, which the library
        still uses: ``first causes.startShot[nCauses] then …``)."""
        k = self.k
        if k[self.i] == "[":
            self.multiplicity()
        if k[self.i] == "NAME" and k[self.i + 1] in ("::>", "references", "=>"):
            self.i += 2  # `=>` as an older spelling
        target = self.chain()
        if k[self.i] == "[":
            self.multiplicity()
        return target

    def ends(self) -> list[str]:
        """``a to b`` or ``(a, b, c)``."""
        if self.accept("("):
            out = [self.end()]
            self.expect(",")
            out.append(self.end())
            while self.accept(","):
                out.append(self.end())
            self.expect(")")
            return out
        first = self.end()
        self.expect("to")
        return [first, self.end()]

    def payload(self) -> str:
        """A flow's or an accepted message's payload: ``name : Type [n] = e``,
        ``Type``, ``[n] Type``, or a trigger (``at``/``after``/``when`` e)."""
        start = self.i
        k = self.k
        if k[self.i] in ("at", "after", "when"):
            self.i += 1
            self.expr()
            return self.span(start)
        if k[self.i] == "[":
            self.multiplicity()
        decl = self.usage_decl()
        if k[self.i] in ("at", "after", "when"):
            self.i += 1
            self.expr()
        else:
            self.value_part(decl)
        if self.i == start:
            self.fail("NAME")
        return self.span(start)


def literal(kinds: list[str], values: list[str], text: str) -> Value:
    """A lone number, string or boolean as such (a negative number too), else the text."""
    if len(kinds) == 2 and kinds[0] == "-" and kinds[1] == "NUMBER":
        v = literal(kinds[1:], values[1:], text)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else text
    if len(kinds) != 1:
        return text
    kind, s = kinds[0], values[0]
    if kind == "NUMBER":
        if _INT.fullmatch(s):
            n = int(s)
            return n if -(2**63) <= n < 2**63 else s
        f = float(s)
        return f if f not in (float("inf"), float("-inf")) else s
    if kind == "STRING":
        return _ESCAPE.sub(r"\1", s[1:-1])
    if kind in ("true", "false"):
        return kind == "true"
    return text


__all__ = ["DECL_START", "Clauses", "Decl", "doc_text", "last_name", "literal", "norm", "unquote"]
