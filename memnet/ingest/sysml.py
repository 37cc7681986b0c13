"""SysML v2 text (a subset) → plain data → :class:`~memnet.ingest.model.Artefacts`.

Three steps, each usable on its own:

* :func:`parse_sysml` reads one file's text into a :class:`SysmlDoc`: a tree of
  frozen :class:`SysmlElement` records (kind, name, short id, typing,
  specialisation, multiplicity, value, doc, line, children) with the relations
  written inside each namespace (:class:`Import`, :class:`Satisfy`,
  :class:`Connect`) and the warnings met on the way.
* :func:`to_artefacts` turns the documents of one model (many files) into
  elements and links keyed by locators ``sysml:<root>/<Qualified::Name>``,
  resolving type, requirement and feature references across files.
* :func:`scan_sysml` does both for a ``.sysml`` file or a directory of them, and
  :func:`load_requirements` lists a model's requirement short ids with their doc.

The subset (grammar in ``sysml.lark``): ``package``, ``import`` (member,
``::*`` and ``::**``), ``part``/``port``/``attribute``/``requirement`` definitions
and usages with short ids ``<'ID'>``, ``:>`` / ``specializes``, typing ``:`` (a
conjugated port type ``~P`` too), ``subsets``/``redefines`` (kept, no edge),
multiplicity ``[lo..hi]``, values ``= expr``, direction ``in``/``out``/``inout``,
``doc /* ... */``, ``satisfy [requirement] R [by X]``, ``connect a.b to c.d``,
``connection [name] [: T] connect a to b``, and ``constraint`` bodies (plain,
``require``/``assume``/``assert``, ``constraint def``) kept as opaque text.

A statement outside the subset (``action def``, ``state def``, ``use case``,
``allocate``, ``enum def``, ``#Tag part x;`` ...) is consumed up to its ``;`` or
through its balanced ``{ }`` block and skipped with a :class:`Warning_` naming
its line; the rest of the file still loads. Text that is not SysML at all
(unbalanced braces, a definition without a name, stray tokens, an unterminated
string or comment) raises :class:`~memnet.errors.ModelSyntaxError` with a line
and column. Before lark runs, the text is checked against :data:`MAX_CHARS`,
:data:`MAX_TOKENS` and :data:`MAX_DEPTH` (:class:`~memnet.errors.InputTooLarge`);
NUL characters and lone surrogates are refused as syntax errors.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

from ..errors import InputTooLarge, MemNetError, ModelSyntaxError
from ..gql.ast import Value
from ..gql.parse import accepted_terminals
from .model import Artefacts, Element, Warning_
from .source import text_name

#: Longest model file accepted (characters).
MAX_CHARS = 4 * 1024 * 1024
#: Lexical tokens of one file (an estimate taken before lark runs). lark's LALR
#: parser with the tree it builds costs some 5-20 µs a token, so this keeps the
#: worst file to a few seconds; split bigger models into several files.
MAX_TOKENS = 250_000
#: Deepest nesting of ``{ [ (`` accepted outside strings and comments.
MAX_DEPTH = 64

SCHEME = "sysml"
MANAGED_TYPES = ("CONTAINS", "TYPED", "SPECIALIZES", "SATISFIES", "CONNECTS", "IMPORTS")
#: Element kinds this ingester produces.
KINDS = ("PKG", "PARTDEF", "PART", "PORTDEF", "PORT", "ATTRDEF", "ATTR", "REQDEF", "REQ",
         "CONSTRAINT")
_DEF_KINDS = frozenset({"PARTDEF", "PORTDEF", "ATTRDEF", "REQDEF"})
_REQ_KINDS = frozenset({"REQ", "REQDEF"})

#: Names from the SysML standard library. A reference that starts with one of
#: them (or that may come through a wildcard import of one) is left unresolved
#: without a warning: the library is not part of the ingested model.
LIBRARY_NAMES = frozenset({
    "ScalarValues", "Boolean", "String", "Integer", "Natural", "Positive", "Real", "Rational",
    "Complex", "Number", "NumericalValue", "ScalarValue", "Base", "Anything", "DataValue",
    "ISQ", "ISQBase", "SI", "SIPrefixes", "USCustomaryUnits", "Quantities", "Units",
    "MeasurementReferences", "Time", "Collections", "KerML", "SysML", "Parts", "Ports",
    "Items", "Actions", "States", "Requirements", "Constraints", "Attributes", "Connections",
    "Interfaces", "Occurrences", "Objects", "Performances", "Links", "Metaobjects",
    "RiskMetadata", "ModelingMetadata", "Trig", "BaseFunctions",
})


# --------------------------------------------------------------------------- the parsed tree


@dataclass(frozen=True, slots=True)
class Import:
    """``import Target;`` (``wildcard`` ``"*"`` or ``"**"`` for ``Target::*`` / ``::**``)."""

    target: str
    wildcard: str = ""
    visibility: str | None = None
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True)
class Satisfy:
    """``satisfy Requirement by Satisfier;`` (``by`` is None: the enclosing element)."""

    requirement: str
    by: str | None = None
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True)
class Connect:
    """``connect src to dst;`` or ``connection name : Type connect src to dst;``."""

    src: str
    dst: str
    name: str | None = None
    type: str | None = None
    line: int = 0
    column: int = 0


Relation = Import | Satisfy | Connect


@dataclass(frozen=True, slots=True)
class SysmlElement:
    """One definition, usage, package or constraint of the subset.

    ``kind`` is one of :data:`KINDS`. References (``types``, ``supertypes``,
    ``subsets``, ``redefines``) are kept as written: qualified names joined by
    ``::``, feature chains by ``.``, unrestricted names with their quotes, a
    conjugated port type with its ``~``. ``role`` tells constraints apart
    (``require``, ``assume``, ``assert``, ``def`` or None). ``relations`` are
    the imports, satisfy and connect statements written directly inside it.
    """

    kind: str
    name: str | None
    line: int
    column: int = 1
    short_id: str | None = None
    types: tuple[str, ...] = ()
    supertypes: tuple[str, ...] = ()
    subsets: tuple[str, ...] = ()
    redefines: tuple[str, ...] = ()
    multiplicity: str | None = None
    value: Value | None = None
    doc: str | None = None
    direction: str | None = None
    abstract: bool = False
    text: str | None = None
    role: str | None = None
    children: tuple[SysmlElement, ...] = ()
    relations: tuple[Relation, ...] = ()


@dataclass(frozen=True, slots=True)
class SysmlDoc:
    """One parsed file: top-level elements and relations, and the warnings."""

    path: str
    elements: tuple[SysmlElement, ...] = ()
    relations: tuple[Relation, ...] = ()
    warnings: list[Warning_] = field(default_factory=list)

    def walk(self) -> Iterator[tuple[tuple[SysmlElement, ...], SysmlElement]]:
        """Every element in document order, with its chain of owners (outermost first)."""
        stack: list[tuple[tuple[SysmlElement, ...], SysmlElement]] = [
            ((), e) for e in reversed(self.elements)]
        while stack:
            owners, el = stack.pop()
            yield owners, el
            inner = owners + (el,)
            stack.extend((inner, c) for c in reversed(el.children))

    def _relations(self, cls: type) -> list[Any]:
        out = [r for r in self.relations if isinstance(r, cls)]
        for _, el in self.walk():
            out.extend(r for r in el.relations if isinstance(r, cls))
        return out

    @property
    def imports(self) -> list[Import]:
        """Every import in the file (top level first, then in document order)."""
        return self._relations(Import)

    @property
    def satisfies(self) -> list[Satisfy]:
        return self._relations(Satisfy)

    @property
    def connects(self) -> list[Connect]:
        return self._relations(Connect)


# --------------------------------------------------------------------------- caps and scan


_TOKEN_ESTIMATE = re.compile(
    r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|//\*[\s\S]*?\*/|//[^\n]*|/\*[\s\S]*?\*/"
    r"|\w+|[^\s\w]")
# what the bracket scan looks at: strings, notes and comments (skipped whole),
# their unterminated openings (errors) and brackets
_SCAN = re.compile(
    r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|//\*[\s\S]*?\*/|(//)[^\n]*|/\*[\s\S]*?\*/"
    r"|(?P<bad>/\*|['\"])|(?P<br>[{}()\[\]])")
_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
_CLOSER = {"}": "{", ")": "(", "]": "["}


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _error(text: str, pos: int, message: str, path: str) -> ModelSyntaxError:
    line, col = _line_col(text, pos)
    return ModelSyntaxError(message, path=path, line=line, column=col)


def _check_input(text: str, path: str) -> None:
    """Caps, bad characters, unterminated strings or comments and bracket balance."""
    if len(text) > MAX_CHARS:
        raise InputTooLarge(f"{path}: model text is {len(text)} characters; the cap is "
                            f"{MAX_CHARS}", length=len(text), cap=MAX_CHARS)
    bad = _BAD_CHAR.search(text)
    if bad is not None:
        what = "a NUL character" if bad.group() == "\x00" else \
            "a lone surrogate (not valid Unicode)"
        raise _error(text, bad.start(), f"the text holds {what}", path)
    if len(text) > MAX_TOKENS:  # shorter text cannot hold that many tokens
        n = len(_TOKEN_ESTIMATE.findall(text))
        if n > MAX_TOKENS:
            raise InputTooLarge(f"{path}: model text holds about {n} tokens; the cap is "
                                f"{MAX_TOKENS} (split the model into several files)",
                                tokens=n, cap=MAX_TOKENS)
    stack: list[int] = []
    for m in _SCAN.finditer(text):
        if m.lastgroup == "br":
            ch = m.group()
            if ch in "{([":
                stack.append(m.start())
                if len(stack) > MAX_DEPTH:
                    raise InputTooLarge(f"{path}: model text nests {{ [ ( deeper than "
                                        f"{MAX_DEPTH}", cap=MAX_DEPTH)
                continue
            if not stack:
                raise _error(text, m.start(), f"'{ch}' closes nothing", path)
            opened = stack.pop()
            if text[opened] != _CLOSER[ch]:
                line, col = _line_col(text, opened)
                raise _error(text, m.start(), f"'{ch}' cannot close the '{text[opened]}' "
                                              f"opened at {line}:{col}", path)
        elif m.lastgroup == "bad":
            what = "comment (no closing */)" if m.group() == "/*" else \
                f"string or name (no closing {m.group()} on its line)"
            raise _error(text, m.start(), f"unterminated {what}", path)
        elif m.group(1) is not None and text.startswith("//*", m.start()):
            raise _error(text, m.start(), "unterminated note (//* without a closing */)", path)
    if stack:
        opened = stack[-1]
        raise _error(text, opened, f"'{text[opened]}' is never closed", path)


# --------------------------------------------------------------------------- lark


_parser: Lark | None = None
_parser_lock = threading.Lock()


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        with _parser_lock:
            if _parser is None:
                _parser = Lark.open_from_package(
                    "memnet.ingest", "sysml.lark", ("",), parser="lalr", lexer="contextual",
                    maybe_placeholders=True, propagate_positions=True)
    return _parser


_WORDS = {
    "NAME": "a name", "UNRESTRICTED": "a quoted name", "STRING": "a string",
    "NUMBER": "a number", "LBRACE": "'{'", "RBRACE": "'}'", "SEMICOLON": "';'",
    "DCOLON": "'::'", "DOT": "'.'", "DOTDOT": "'..'", "IMPORT_WILD": "'::*'",
    "SUBTYPE": "':>'", "REDEF": "':>>'", "COLONEQ": "':='", "EQ": "'='", "TILDE": "'~'",
    "STAR": "'*'", "COLON": "':'", "COMMA": "','", "LSQB": "'['", "RSQB": "']'",
    "LESSTHAN": "'<'", "MORETHAN": "'>'", "DOC_BODY": "a /* comment */", "PUNCT": "a symbol",
    "$END": "end of input",
}


_FIRST = ("SEMICOLON", "LBRACE", "RBRACE")


def _describe_expected(names: set[str]) -> str:
    names = set(names)
    lead: list[str] = []
    if {"PART", "PACKAGE", "PORT"} <= names:  # where a member may start
        lead.append("a declaration (package, part, port, attribute, requirement, ...)")
        names = {n for n in names if not n.isalpha() or n in _FIRST}
        names -= {"NAME", "PUNCT"}
    lead += [_WORDS[n] for n in _FIRST if n in names]
    end = "$END" in names
    parts = lead + sorted({_WORDS.get(n, repr(n.lower()) if n.isalpha() else n)
                           for n in names - set(_FIRST) - {"$END"}})
    if end:
        parts.append("end of input")
    if not parts:
        return "something else"
    if len(parts) > 8:
        parts = parts[:8] + ["..."]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _describe_token(tok: Token) -> str:
    value = str(tok)
    short = value if len(value) <= 30 else value[:27] + "..."
    if tok.type == "NAME":
        return f"name {short!r}"
    if tok.type in ("STRING", "UNRESTRICTED"):
        return f"{'string' if tok.type == 'STRING' else 'quoted name'} {short}"
    if tok.type == "NUMBER":
        return f"number {short}"
    return f"{short!r}"


def _accepted(err: UnexpectedInput, fallback: set[str]) -> set[str]:
    return accepted_terminals(err, fallback) or fallback


def _lark_error(err: UnexpectedInput, text: str, path: str) -> ModelSyntaxError:
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = _accepted(err, set(err.expected or ())) - {"WS", "NOTE"}
        if tok.type == "$END":
            return _error(text, len(text),
                          f"unexpected end of input; expected {_describe_expected(expected)}",
                          path)
        return ModelSyntaxError(
            f"unexpected {_describe_token(tok)}; expected {_describe_expected(expected)}",
            path=path, line=tok.line or 1, column=tok.column or 1)
    if isinstance(err, UnexpectedCharacters):
        at = err.pos_in_stream or 0
        ch = text[at] if at < len(text) else ""
        return ModelSyntaxError(f"unexpected character {ch!r}", path=path, line=err.line,
                                column=err.column)
    if isinstance(err, UnexpectedEOF):
        return _error(text, len(text), "unexpected end of input", path)
    return _error(text, len(text), "the text does not parse", path)  # pragma: no cover


# --------------------------------------------------------------------------- tree → records


_WS_RUN = re.compile(r"\s+")
_DOC_LINE = re.compile(r"^[ \t]*\*(?!/)", re.MULTILINE)
_INT = re.compile(r"[0-9]+")


def _norm(text: str) -> str:
    return _WS_RUN.sub(" ", text).strip()


def _unquote(raw: str) -> str:
    """The name inside ``'...'`` (``\\'`` and ``\\\\`` unescaped)."""
    return re.sub(r"\\(.)", r"\1", raw[1:-1])


def _doc_text(raw: str) -> str:
    """A ``/* ... */`` body: the markers and each line's leading ``*`` dropped."""
    return _norm(_DOC_LINE.sub(" ", raw[2:-2]))


def _name(t: Tree[Any] | None) -> str | None:
    if t is None:
        return None
    tok = t.children[0]
    return _unquote(str(tok)) if getattr(tok, "type", "") == "UNRESTRICTED" else str(tok)


def _ref(t: Tree[Any]) -> str:
    """A qualified name or feature chain as written (quoted names keep their quotes)."""
    out: list[str] = []
    for c in t.children:
        if isinstance(c, Tree):
            out.append(str(c.children[0]))
        else:
            out.append(str(c))
    return "".join(out)


def _refs(t: Tree[Any]) -> tuple[str, ...]:
    return tuple(_ref(c) for c in t.children if isinstance(c, Tree) and c.data == "qname")


def _literal(raw: str, toks: list[Token]) -> Value:
    """A value: a lone number, string or boolean as such, anything else as its text."""
    if len(toks) == 1:
        tok = toks[0]
        s = str(tok)
        if tok.type == "NUMBER":
            if _INT.fullmatch(s):
                n = int(s)
                if -(2 ** 63) <= n < 2 ** 63:
                    return n
                return s
            f = float(s)
            return f if f not in (float("inf"), float("-inf")) else s
        if tok.type == "STRING":
            return re.sub(r"\\(.)", r"\1", s[1:-1])
        if tok.type == "NAME" and s in ("true", "false"):
            return s == "true"
    if len(toks) == 2 and toks[0] == "-" and toks[1].type == "NUMBER":
        v = _literal(str(toks[1]), [toks[1]])
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
    return raw


_USAGE_KIND = {"part_usage": "PART", "port_usage": "PORT", "attr_usage": "ATTR",
               "req_usage": "REQ"}
_DEF_KIND = {"part_def": "PARTDEF", "port_def": "PORTDEF", "attr_def": "ATTRDEF",
             "req_def": "REQDEF"}


class _Reader:
    """Builds the frozen records from lark's tree; collects warnings."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.warnings: list[Warning_] = []

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(Warning_(self.path, line, message))

    def members(self, trees: list[Any]) -> tuple[list[SysmlElement], list[Relation], str | None]:
        """Elements, relations and joined doc text of a list of ``member`` trees."""
        elements: list[SysmlElement] = []
        relations: list[Relation] = []
        docs: list[str] = []
        for m in trees:
            if not isinstance(m, Tree) or m.data != "member":
                continue
            vis = m.children[0]
            visibility = str(vis.children[0]) if isinstance(vis, Tree) else None
            mods = [str(c.children[0]) for c in m.children[1:-1]
                    if isinstance(c, Tree) and c.data == "modifier"]
            body: Tree[Any] = m.children[-1]
            line, col = m.meta.line, m.meta.column
            kind = body.data
            if kind == "doc":
                docs.append(_doc_text(str(body.children[-1])))
            elif kind == "comment":
                pass  # a comment element: not part of what MemNet keeps
            elif kind == "import_stmt":
                wild = body.children[2]  # '::*' or '::**'
                relations.append(Import(_ref(body.children[1]),
                                        str(wild)[2:] if wild is not None else "",
                                        visibility, line, col))
            elif kind == "satisfy":
                qn = [c for c in body.children if isinstance(c, Tree) and c.data == "qname"]
                by = [c for c in body.children if isinstance(c, Tree) and c.data == "by"]
                relations.append(Satisfy(_ref(qn[0]), _ref(by[0].children[0]) if by else None,
                                         line, col))
            elif kind == "connect":
                relations.append(Connect(_ref(body.children[0]), _ref(body.children[1]),
                                         line=line, column=col))
            elif kind == "connection":
                _sid, nm, typing, clause = body.children[:4]
                if clause is None:
                    self.warn(line, "unsupported construct 'connection' without a connect "
                                    "clause skipped")
                    continue
                types = tuple(_ref(tr.children[1]) for tr in typing.children) if typing else ()
                relations.append(Connect(_ref(clause.children[0]), _ref(clause.children[1]),
                                         _name(nm), ", ".join(types) or None, line, col))
            elif kind in ("unknown", "connection_def"):
                self.warn(line, f"unsupported construct '{self._head(body)}' skipped")
            else:
                el = self.element(body, line, col, mods)
                if el is not None:
                    elements.append(el)
        return elements, relations, (" ".join(d for d in docs if d) or None)

    @staticmethod
    def _head(body: Tree[Any]) -> str:
        if body.data == "connection_def":
            return "connection def"
        toks = [c for c in body.children if isinstance(c, Token)]
        if toks[0].type == "PUNCT":  # '#Tag part x;' -> '#Tag'
            return "".join(str(t) for t in toks[:2])
        names = [str(t) for t in toks[:3] if t.type == "NAME"]
        if "def" in names:  # 'action def', 'use case def'
            return " ".join(names[:names.index("def") + 1])
        if names[1:2] == ["case"]:  # 'use case', 'analysis case'
            return " ".join(names[:2])
        return names[0]

    def element(self, body: Tree[Any], line: int, col: int,
                mods: list[str]) -> SysmlElement | None:
        kind = body.data
        children: list[SysmlElement] = []
        relations: list[Relation] = []
        doc: str | None = None
        block = body.children[-1]
        if isinstance(block, Tree) and block.data == "body":
            children, relations, doc = self.members(block.children)
        common: dict[str, Any] = {
            "line": line, "column": col, "abstract": "abstract" in mods, "doc": doc,
            "children": tuple(children), "relations": tuple(relations)}
        if kind == "package":
            return SysmlElement("PKG", _name(body.children[1]),
                                short_id=_name(_short(body.children[0])), **common)
        if kind in _DEF_KIND or kind == "constraint_def":
            sid, nm, spec = body.children[:3]
            fields: dict[str, Any] = {}
            if kind == "constraint_def":
                fields = {"role": "def", "text": self.opaque(body.children[-1])}
            return SysmlElement("CONSTRAINT" if kind == "constraint_def" else _DEF_KIND[kind],
                                _name(nm), short_id=_name(_short(sid)),
                                supertypes=_refs(spec) if spec is not None else (),
                                **fields, **common)
        if kind in _USAGE_KIND:
            return self.usage(_USAGE_KIND[kind], body, mods, common)
        if kind == "constraint":
            role, sid, nm, typing = body.children[:4]
            types = tuple(self.type_ref(t) for t in typing.children) if typing else ()
            return SysmlElement("CONSTRAINT", _name(nm), short_id=_name(_short(sid)),
                                types=types, role=str(role.children[0]) if role else None,
                                text=self.opaque(body.children[-1]), **common)
        raise AssertionError(kind)  # pragma: no cover - the grammar has no other rule

    def usage(self, kind: str, body: Tree[Any], mods: list[str],
              common: dict[str, Any]) -> SysmlElement:
        sid, nm = body.children[0], body.children[1]
        types: tuple[str, ...] = ()
        subsets: tuple[str, ...] = ()
        redefines: tuple[str, ...] = ()
        mult: str | None = None
        value: Value | None = None
        for c in body.children[2:]:
            if not isinstance(c, Tree):
                continue
            if c.data == "typing":
                types += tuple(self.type_ref(t) for t in c.children)
            elif c.data == "subsets":
                subsets += _refs(c)
            elif c.data == "redefines":
                redefines += _refs(c)
            elif c.data == "multiplicity":
                mult = "".join(str(b.children[0]) if isinstance(b, Tree) else str(b)
                               for b in c.children if b is not None)
            elif c.data == "value":
                toks: list[Token] = [t for t in c.children[1:] if isinstance(t, Token)]
                raw = _norm(self.text[toks[0].start_pos:toks[-1].end_pos])
                value = _literal(raw, toks)
        direction = next((m for m in mods if m in ("in", "out", "inout")), None)
        return SysmlElement(kind, _name(nm), short_id=_name(_short(sid)), types=types,
                            subsets=subsets, redefines=redefines, multiplicity=mult,
                            value=value, direction=direction, **common)

    @staticmethod
    def type_ref(t: Tree[Any]) -> str:
        tilde, qn = t.children
        return ("~" if tilde is not None else "") + _ref(qn)

    def opaque(self, block: Any) -> str | None:
        if not isinstance(block, Tree) or block.data != "opaque_block":
            return None
        start, end = block.children[0], block.children[-1]
        assert isinstance(start, Token) and isinstance(end, Token)
        return _norm(_NOTES.sub(_keep_strings, self.text[start.end_pos:end.start_pos]))


# strings (kept) or notes and comments (dropped) inside opaque text
_NOTES = re.compile(r"('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")"
                    r"|//\*[\s\S]*?\*/|//[^\n]*|/\*[\s\S]*?\*/")


def _keep_strings(m: re.Match[str]) -> str:
    return m.group(1) or " "


def _short(t: Tree[Any] | None) -> Tree[Any] | None:
    return t.children[0] if t is not None else None


def parse_sysml(text: str, path: str = "<text>") -> SysmlDoc:
    """Parse one SysML v2 text in the supported subset (see the module doc).

    Raises :class:`~memnet.errors.ModelSyntaxError` (code ``model_syntax``) with
    the line and column of the first error, or
    :class:`~memnet.errors.InputTooLarge` past a cap. Constructs outside the
    subset are skipped and reported in ``SysmlDoc.warnings``.
    """
    if not isinstance(text, str):
        raise ModelSyntaxError(f"expected SysML text (str), got {type(text).__name__}",
                               path=path)
    if text.startswith("\ufeff"):  # a byte order mark: blank, columns unchanged
        text = " " + text[1:]
    _check_input(text, path)
    try:
        tree = _get_parser().parse(text)
    except UnexpectedInput as e:
        raise _lark_error(e, text, path) from None
    except LarkError as e:  # pragma: no cover - any other lark failure
        raise _error(text, len(text), f"the text does not parse ({type(e).__name__})",
                     path) from None
    reader = _Reader(text, path)
    elements, relations, _doc = reader.members(tree.children)
    return SysmlDoc(path, tuple(elements), tuple(relations), reader.warnings)


# --------------------------------------------------------------------------- artefacts


_REF_PART = re.compile(r"(::|\.)?('(?:[^'\\]|\\.)*'|[^:.']+)")


def _split_ref(ref: str) -> list[str]:
    """``A::'b c'.d`` → ``['A', 'b c', 'd']`` (both separators walk into members)."""
    out: list[str] = []
    for m in _REF_PART.finditer(ref):
        seg = m.group(2)
        out.append(_unquote(seg) if seg.startswith("'") else seg)
    return out


@dataclass(slots=True)
class _Rec:
    """One element placed in the model: its locator, owner and source."""

    loc: str
    el: SysmlElement
    owner: str  # "" = the root namespace
    file: str


class _Model:
    """The elements of all files with the name tables reference resolution needs."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.art = Artefacts(root=root, schemes=(SCHEME,), managed_types=MANAGED_TYPES)
        self.recs: dict[str, _Rec] = {}
        self.members: dict[str, dict[str, str]] = {"": {}}  # namespace → name → locator
        self.by_name: dict[str, list[str]] = {}  # simple name or short id → locators
        self.short_ids: dict[str, str] = {}  # short id -> the first element that has it
        self.imports: dict[str, list[tuple[Import, str]]] = {}  # namespace → (import, file)
        self.import_target: dict[tuple[str, int], str | None] = {}
        self.types: dict[str, list[str]] = {}  # locator → TYPED and SPECIALIZES targets
        self.relations: list[tuple[str, Relation, str]] = []  # (namespace, relation, file)

    # -- placing -------------------------------------------------------------------

    def place(self, file: str, elements: tuple[SysmlElement, ...],
              relations: tuple[Relation, ...]) -> None:
        unit = f"{SCHEME}:{self.root}/{file}"
        self._relations("", relations, file)
        # iterative pre-order walk: (owner locator, owner qualified name, element)
        stack: list[tuple[str, str, SysmlElement]] = [("", "", e) for e in reversed(elements)]
        counters: dict[tuple[str, str], int] = {}
        while stack:
            owner, owner_q, el = stack.pop()
            name = el.name or el.short_id
            if name is None and el.redefines:  # `port :>> recall;` is named recall
                name = _split_ref(el.redefines[0])[-1]
                el = replace(el, name=name)
            if name is None:
                if el.kind == "CONSTRAINT":
                    role = el.role or "constraint"
                    n = counters[(owner, role)] = counters.get((owner, role), 0) + 1
                    name = f"{role}{n}"
                else:
                    self.warn(file, el.line, f"anonymous {el.kind} skipped (give it a name)")
                    continue
            qual = f"{owner_q}::{name}" if owner_q else name
            loc = f"{SCHEME}:{self.root}/{qual}"
            if loc in self.recs:
                n = 2
                while f"{loc}-{n}" in self.recs:
                    n += 1
                self.warn(file, el.line, f"duplicate qualified name {qual!r}; "
                                         f"this one is kept as {qual}-{n}")
                name, qual, loc = f"{name}-{n}", f"{qual}-{n}", f"{loc}-{n}"
            self.recs[loc] = _Rec(loc, el, owner, file)
            self.art.add(Element(loc, el.kind, self._props(el, file), unit=unit))
            if owner:
                self.art.link("CONTAINS", owner, loc)
            names = self.members.setdefault(owner, {})
            if el.short_id is not None:
                first = self.short_ids.setdefault(el.short_id, loc)
                if first != loc:
                    self.warn(file, el.line, f"short id {el.short_id!r} is given twice (first "
                                             f"on {first}); references to it mean the first")
            for alias in (name, el.short_id):
                if alias is not None:
                    names.setdefault(alias, loc)
                    self.by_name.setdefault(alias, []).append(loc)
            self.members.setdefault(loc, {})
            self._relations(loc, el.relations, file)
            stack.extend((loc, qual, c) for c in reversed(el.children))

    def _relations(self, ns: str, relations: tuple[Relation, ...], file: str) -> None:
        for r in relations:
            if isinstance(r, Import):
                self.imports.setdefault(ns, []).append((r, file))
            self.relations.append((ns, r, file))

    @staticmethod
    def _props(el: SysmlElement, file: str) -> dict[str, Value]:
        props: dict[str, Value] = {}
        if el.name is not None:
            props["name"] = el.name
        if el.short_id is not None:
            props["rid"] = el.short_id
        if el.doc:
            props["doc"] = el.doc
        if el.types:
            props["type"] = ", ".join(el.types)
        if el.multiplicity is not None:
            props["mult"] = el.multiplicity
        if el.value is not None:
            props["value"] = el.value
        if el.direction is not None:
            props["dir"] = el.direction
        if el.role is not None:
            props["role"] = el.role
        if el.text is not None:
            props["text"] = el.text
        props["file"] = file
        props["line"] = el.line
        return props

    def warn(self, file: str, line: int, message: str) -> None:
        self.art.warnings.append(Warning_(file, line, message))

    # -- resolving -----------------------------------------------------------------

    def member(self, ns: str, name: str, inherit: bool) -> str | None:
        """``name`` owned by ``ns``, or (``inherit``) by what ``ns`` is typed by or
        specialises, breadth first."""
        loc = self.members.get(ns, {}).get(name)
        if loc is not None or not inherit:
            return loc
        seen = {ns}
        queue = list(self.types.get(ns, ()))
        while queue:
            t = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            loc = self.members.get(t, {}).get(name)
            if loc is not None:
                return loc
            queue.extend(self.types.get(t, ()))
        return None

    def _target(self, ns: str, i: int, imp: Import) -> str | None:
        key = (ns, i)
        if key not in self.import_target:
            self.import_target[key] = None  # a cycle resolves to nothing
            self.import_target[key] = self.resolve(imp.target, ns, False, use_imports=False)[0]
        return self.import_target[key]

    def _via_imports(self, ns: str, name: str) -> str | None:
        for i, (imp, _file) in enumerate(self.imports.get(ns, ())):
            target = self._target(ns, i, imp)
            if target is None:
                continue
            if not imp.wildcard:
                if name in (self.recs[target].el.name, self.recs[target].el.short_id):
                    return target
                continue
            loc = self.members.get(target, {}).get(name)
            if loc is not None:
                return loc
            if imp.wildcard == "**":  # any depth below the target, first in pre-order
                stack = list(reversed(self.members.get(target, {}).values()))
                while stack:
                    cur = stack.pop()
                    loc = self.members.get(cur, {}).get(name)
                    if loc is not None:
                        return loc
                    stack.extend(reversed(self.members.get(cur, {}).values()))
        return None

    def _library_in_scope(self, ns: str) -> bool:
        """True when a wildcard import of a library package is visible from ``ns``."""
        while True:
            for imp, _ in self.imports.get(ns, ()):
                if imp.wildcard and _split_ref(imp.target)[0] in LIBRARY_NAMES:
                    return True
            if not ns:
                return False
            ns = self.recs[ns].owner

    def resolve(self, ref: str, ns: str, inherit: bool,
                use_imports: bool = True) -> tuple[str | None, str]:
        """The locator ``ref`` names seen from namespace ``ns``, or None and why.

        The first name is looked up in ``ns`` and then in each enclosing
        namespace (owned members, inherited ones when ``inherit``, then that
        namespace's imports), and last in the whole model when exactly one
        element carries that name. Each further name is a member of the
        element found so far (owned or inherited)."""
        segs = _split_ref(ref)
        if not segs:
            return None, "empty reference"
        first = segs[0]
        found: str | None = None
        cur = ns
        while True:
            found = self.member(cur, first, inherit)
            if found is None and use_imports:
                found = self._via_imports(cur, first)
            if found is not None or not cur:
                break
            cur = self.recs[cur].owner
        if found is None:
            cands = self.by_name.get(first, [])
            if len(set(cands)) > 1:
                return None, f"{first!r} is ambiguous ({len(set(cands))} elements carry it)"
            if not cands:
                if first in LIBRARY_NAMES or (use_imports and self._library_in_scope(ns)):
                    return None, "library"
                return None, f"no element named {first!r} is visible"
            found = cands[0]
        for seg in segs[1:]:
            nxt = self.member(found, seg, True)
            if nxt is None:
                return None, f"{self.recs[found].el.name or found!r} has no member {seg!r}"
            found = nxt
        return found, ""

    def link_all(self) -> None:
        # 1. typing and specialisation, lexical scope only (no inherited members yet)
        for loc, rec in self.recs.items():
            el = rec.el
            for ref, etype, what in ([(t, "TYPED", "type") for t in el.types]
                                     + [(s, "SPECIALIZES", "supertype") for s in el.supertypes]):
                target, why = self.resolve(ref.lstrip("~"), rec.owner, False)
                if target is None:
                    if why != "library":
                        self.warn(rec.file, el.line, f"unresolved {what} {ref!r} of "
                                                     f"{el.kind} {el.name!r}: {why}")
                    continue
                if target == loc:
                    self.warn(rec.file, el.line, f"{el.kind} {el.name!r} names itself as "
                                                 f"its {what}")
                    continue
                self.art.link(etype, loc, target)
                self.types.setdefault(loc, []).append(target)
        # 2. imports, satisfy and connect, with inherited members
        for ns, r, file in self.relations:
            if isinstance(r, Import):
                target, why = self.resolve(r.target, ns, False, use_imports=False)
                if target is None:
                    if why != "library":
                        self.warn(file, r.line, f"unresolved import {r.target!r}: {why}")
                elif ns:
                    self.art.link("IMPORTS", ns, target)
            elif isinstance(r, Satisfy):
                self._satisfy(ns, r, file)
            else:
                self._connect(ns, r, file)

    def _satisfy(self, ns: str, r: Satisfy, file: str) -> None:
        req, why = self.resolve(r.requirement, ns, True)
        if req is None:
            self.warn(file, r.line, f"unresolved requirement {r.requirement!r} in satisfy: "
                                    f"{why}")
            return
        if self.recs[req].el.kind not in _REQ_KINDS:
            self.warn(file, r.line, f"satisfy names {r.requirement!r}, which is a "
                                    f"{self.recs[req].el.kind}, not a requirement")
            return
        if r.by is None:
            if not ns:
                self.warn(file, r.line, "satisfy outside any element needs 'by'")
                return
            self.art.link("SATISFIES", ns, req)
            return
        by, why = self.resolve(r.by, ns, True)
        if by is None:
            self.warn(file, r.line, f"unresolved satisfier {r.by!r}: {why}")
            return
        self.art.link("SATISFIES", by, req)

    def _connect(self, ns: str, r: Connect, file: str) -> None:
        ends = []
        for ref in (r.src, r.dst):
            loc, why = self.resolve(ref, ns, True)
            if loc is None:
                self.warn(file, r.line, f"unresolved connection end {ref!r}: {why}")
                return
            ends.append(loc)
        self.art.link("CONNECTS", ends[0], ends[1])


def to_artefacts(files: list[tuple[str, SysmlDoc]], root: str) -> Artefacts:
    """The elements and links of one model made of ``(relative path, document)`` pairs.

    Files are taken in path order, so the result does not depend on the order
    given. Each element's locator is ``sysml:<root>/<Qualified::Name>`` (the
    names of its owners and its own, ``::``-joined; a requirement without a
    name goes by its short id, an unnamed constraint by its role and a number,
    e.g. ``require1``); its unit is ``sysml:<root>/<relative path>``. A second
    element with a qualified name already taken is kept under ``<name>-2``
    (``-3``, ...) with a warning. Links: ``CONTAINS`` owner → owned,
    ``TYPED`` usage → its type, ``SPECIALIZES`` definition → supertype,
    ``SATISFIES`` satisfier → requirement, ``CONNECTS`` first end → second end,
    ``IMPORTS`` importing namespace → the imported package or member. A
    reference that resolves to nothing leaves its link out and adds a warning
    (except names of the SysML standard library, :data:`LIBRARY_NAMES`).
    """
    model = _Model(root)
    ordered = sorted(files, key=lambda f: f[0])
    for path, doc in ordered:
        model.art.warnings.extend(doc.warnings)
    for path, doc in ordered:
        model.place(path, doc.elements, doc.relations)
    model.link_all()
    return model.art


def _read(path: Path, rel: str) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        head = data[:e.start]
        line = head.count(b"\n") + 1
        col = len(head) - (head.rfind(b"\n") + 1) + 1
        raise ModelSyntaxError("the file is not UTF-8 text", path=rel, line=line,
                               column=col) from None


def _model_files(path: str | os.PathLike[str]) -> tuple[str, list[tuple[str, Path]]]:
    """The root name and the ``(relative posix path, file)`` pairs of a model."""
    p = Path(path)
    if p.is_file():
        if p.suffix != ".sysml":
            raise MemNetError(f"{os.fspath(p)!r} is not a .sysml file",
                              code="path_not_found", path=os.fspath(p))
        return p.name, [(p.name, p)]
    if not p.is_dir():
        raise MemNetError(f"no SysML file or directory at {os.fspath(p)!r}",
                          code="path_not_found", path=os.fspath(p))
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(p):  # symbolic links are not followed
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            full = Path(dirpath) / fn
            if fn.endswith(".sysml") and not fn.startswith(".") and not full.is_symlink():
                rel = full.relative_to(p).as_posix()
                if not text_name(rel):  # it could never be part of a locator
                    raise ModelSyntaxError("the path is not UTF-8; rename it", path=os.fsencode(
                        rel).decode("ascii", "backslashreplace"))
                found.append((rel, full))
    found.sort()
    return p.resolve().name or p.name, found


def _parse_files(path: str | os.PathLike[str]) -> tuple[str, list[tuple[str, SysmlDoc]]]:
    root, files = _model_files(path)
    return root, [(rel, parse_sysml(_read(full, rel), rel)) for rel, full in files]


def scan_sysml(path: str | os.PathLike[str]) -> Artefacts:
    """Ingest a ``.sysml`` file or every ``.sysml`` file under a directory.

    The walk is sorted and skips hidden files and directories; a path that is
    neither a file nor a directory is a ``path_not_found`` error. The root (the
    scope a sync reconciles) is the directory's name, or for a single file the
    file's own name, so ingesting one file never claims its neighbours. A file
    that does not parse raises :class:`~memnet.errors.ModelSyntaxError` (the
    whole scan fails: a partial model would read as deletions).
    """
    root, docs = _parse_files(path)
    return to_artefacts(docs, root)


def load_requirements(path: str | os.PathLike[str]) -> dict[str, str]:
    """Every requirement short id of a model (file or directory) → its doc text.

    Both requirement definitions and usages count; a requirement without a doc
    maps to ``""``. The same short id on two requirements raises
    :class:`~memnet.errors.ModelSyntaxError` naming the second one.
    """
    _root, docs = _parse_files(path)
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    for rel, doc in docs:
        for _owners, el in doc.walk():
            if el.kind not in _REQ_KINDS or el.short_id is None:
                continue
            rid = el.short_id
            if rid in out:
                raise ModelSyntaxError(f"requirement id {rid!r} is given twice (first at "
                                       f"{where[rid]})", path=rel, line=el.line,
                                       column=el.column)
            out[rid] = el.doc or ""
            where[rid] = f"{rel}:{el.line}"
    return out


__all__ = [
    "KINDS",
    "MANAGED_TYPES",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "Connect",
    "Import",
    "Relation",
    "Satisfy",
    "SysmlDoc",
    "SysmlElement",
    "load_requirements",
    "parse_sysml",
    "scan_sysml",
    "to_artefacts",
]
