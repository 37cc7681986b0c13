"""The lark side of the GQL dialect: the LALR parser built from ``memnet.lark``,
the transformer that reduces its rules straight into :mod:`memnet.gql.ast`
objects (an ``INSERT`` through the shared builder, :mod:`memnet.gql.build`),
and the translation of lark's errors into :class:`~memnet.errors.GQLSyntaxError`
messages with line, column and context.

:mod:`memnet.gql.parse` imports this module only when it needs lark: a Δ the
direct reader accepts, and a plain codebook query, never load the parser.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..errors import GQLSyntaxError
from .ast import (
    Delete,
    Delta,
    Gone,
    NodePattern,
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
from .build import InsertState, RawEdge, RawInsert, merge_props, read_var, token_pos
from .codebook import codebook_query
from .failure import SyntaxFail, context, end_position, fail_at, offset_of, syntax_error
from .literals import decode_string, read_int, read_scalar

_VALUE_TERMS = frozenset({"STRING", "INT", "FLOAT", "TRUE", "FALSE"})
_STATEMENT_TERMS = frozenset({"INSERT", "SET", "REMOVE", "DELETE", "SETTLE"})
_KEYWORDS = _STATEMENT_TERMS | {"MATCH", "WHERE", "AND", "CONTAINS", "LIMIT", "RETURN"}
_IGNORED = frozenset({"BLANK"})
_WORDS = {
    "NAME": "a name",
    "LABEL": "an upper-case label",
    "NICK": "a #nick",
    "STRING": "a quoted string",
    "INT": "an integer",
    "FLOAT": "a number",
    "TRUE": "true",
    "FALSE": "false",
    "LPAR": "'('",
    "_RPAR": "')'",
    "LBRACE": "'{'",
    "_RBRACE": "'}'",
    "LBRACK": "'['",
    "_RBRACK": "']'",
    "EDGE_R_OPEN": "'-['",
    "_EDGE_R_CLOSE": "']->'",
    "EDGE_L_OPEN": "'<-['",
    "_EDGE_L_CLOSE": "']-'",
    "_COLON": "':'",
    "_AMP": "'&'",
    "_COMMA": "','",
    "_DOT": "'.'",
    "_EQ": "'='",
    "_SEMI": "';'",
    "$END": "end of input",
    "CB_UPPER": "an upper-case kind or label",
    "CB_PAIR": "a key:value pair",
    "CB_NICK": "a #nick",
    "CB_STRING": "a quoted phrase",
    "CB_WORD": "a keyword",
}


def _describe_expected(expected: Iterable[str]) -> str:
    names = set(expected) - _IGNORED
    parts: list[str] = []
    if _VALUE_TERMS <= names:
        parts.append("a value")
        names -= _VALUE_TERMS
        if "LBRACK" in names:
            names.discard("LBRACK")
    elif {"INT", "FLOAT"} <= names:
        parts.append("a number")
        names -= {"INT", "FLOAT"}
    if _STATEMENT_TERMS <= names:
        parts.append("a statement (INSERT, SET, REMOVE, DELETE or SETTLE)")
        names -= _STATEMENT_TERMS
        names.discard("GONE")  # only a delta Recall answer writes it
    if {"CB_UPPER", "CB_PAIR", "CB_NICK", "CB_STRING", "CB_WORD"} <= names:
        parts.append("a query token")
        names -= {"CB_UPPER", "CB_PAIR", "CB_NICK", "CB_STRING", "CB_WORD"}
    end = "$END" in names
    names.discard("$END")
    parts.extend(sorted(_WORDS.get(n, n) for n in names))
    if end:
        parts.append("end of input")
    if not parts:
        return "something else"
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _describe_token(tok: Token) -> str:
    value = str(tok)
    short = value if len(value) <= 30 else value[:27] + "..."
    if tok.type == "NAME":
        return f"name {short!r}"
    if tok.type in _KEYWORDS:
        return f"keyword {short.upper()}"
    if tok.type in ("STRING", "CB_STRING"):
        return "string"
    if tok.type in ("INT", "FLOAT"):
        return f"number {short}"
    if tok.type in ("LABEL", "CB_UPPER"):
        return f"label {short}"
    return repr(short)


def _accepted(err: UnexpectedInput, fallback: Iterable[str]) -> set[str]:
    """The terminals the parser would really accept where it stopped: lark's
    own ``accepts`` (each candidate fed to a copy of the parser; LALR's merged
    look-ahead sets list more), else what the lexer allowed."""
    accepts = getattr(err, "accepts", None) if isinstance(err, UnexpectedToken) else None
    return set(accepts if accepts else fallback) - _IGNORED


def _lark_to_error(err: UnexpectedInput, text: str) -> GQLSyntaxError:
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = _accepted(err, err.expected or ())
        if tok.type == "$END":
            line, column = end_position(text)
            offset = len(text)
            message = f"unexpected end of input; expected {_describe_expected(expected)}"
        else:
            line, column = tok.line or 1, tok.column or 1
            offset = tok.start_pos if tok.start_pos is not None else offset_of(text, line, column)
            if tok.type.startswith("CB_") or any(n.startswith("CB_") for n in expected):
                # the fallback lexer read a token of the other form: describe the text
                message = _char_message(text, offset, expected)
            else:
                message = _token_message(tok, expected)
        return GQLSyntaxError(message, line=line, column=column, context=context(text, offset))
    if isinstance(err, UnexpectedCharacters):
        offset = err.pos_in_stream if err.pos_in_stream is not None else 0
        expected = _accepted(err, err.allowed or ())
        message = _char_message(text, offset, expected)
        return GQLSyntaxError(
            message, line=err.line, column=err.column, context=context(text, offset)
        )
    line = getattr(err, "line", None) or 1
    column = getattr(err, "column", None) or 1
    if not isinstance(line, int) or line < 1:
        line, column = end_position(text)
    return GQLSyntaxError(
        "the text does not parse",
        line=line,
        column=column,
        context=context(text, offset_of(text, line, column)),
    )


def _token_message(tok: Token, expected: set[str]) -> str:
    if tok.type == "_EDGE_L_CLOSE" and "_EDGE_R_CLOSE" in expected:
        return "undirected edges are not supported; write -[:TYPE]-> or <-[:TYPE]-"
    if tok.type == "_EDGE_R_CLOSE" and "_EDGE_L_CLOSE" in expected:
        return "an edge has one direction; write <-[:TYPE]- or -[:TYPE]->"
    if tok.type == "LBRACK" and "STRING" in expected and "LBRACK" not in expected:
        return "lists hold scalars only (no nested lists)"
    if (
        tok.type in ("_RBRACK", "_EDGE_R_CLOSE", "_EDGE_L_CLOSE")
        and "_COLON" in expected
        and "_RPAR" not in expected
    ):
        return "an edge needs a type, e.g. -[:TOUCHES]->"
    if tok.type == "_AMP" and ("_EDGE_R_CLOSE" in expected or "_EDGE_L_CLOSE" in expected):
        return "an edge has exactly one type"
    if tok.type == "NAME" and tok.lower() == "null" and "STRING" in expected:
        return "null is not a value in this dialect; leave the property out or REMOVE it"
    if tok.type == "NAME" and "LABEL" in expected and not (expected - {"LABEL"}):
        return f"kinds, labels and edge types are upper case (got {str(tok)[:30]!r})"
    return f"unexpected {_describe_token(tok)}; expected {_describe_expected(expected)}"


_STRING_BODY = re.compile(r"(?:[^'\\]++|\\[\s\S]|'')*+'")
_WORD_AT = re.compile(r"\S*+")
_NAME_AT = re.compile(r"[A-Za-z0-9_]++")


def _char_message(text: str, offset: int, expected: set[str]) -> str:
    rest = text[offset : offset + 8]
    ch = text[offset] if offset < len(text) else ""
    if rest.startswith("/*"):
        return "unterminated /* comment (no closing */)"
    if ch == "'" and _STRING_BODY.match(text, offset + 1) is None:
        return "unterminated string (no closing ')"
    if rest.startswith("]-") and "_EDGE_R_CLOSE" in expected:
        return "undirected edges are not supported; write -[:TYPE]-> or <-[:TYPE]-"
    if rest.startswith("]->") and "_EDGE_L_CLOSE" in expected:
        return "an edge has one direction; write <-[:TYPE]- or -[:TYPE]->"
    if ch in "&:" and expected & {"_EDGE_R_CLOSE", "_EDGE_L_CLOSE"}:
        return "an edge has exactly one type"
    if ch == "]" and "_COLON" in expected and "_RPAR" not in expected:
        return "an edge needs a type, e.g. -[:TOUCHES]->"
    if ch == "[" and "STRING" in expected and "LBRACK" not in expected:
        return "lists hold scalars only (no nested lists)"
    if rest[:4].lower() == "null" and (expected & _VALUE_TERMS):
        return "null is not a value in this dialect; leave the property out or REMOVE it"
    if "LABEL" in expected and ch.isalpha() and not ("A" <= ch <= "Z"):
        return "kinds, labels and edge types are upper case (e.g. :TSK)"
    if "LABEL" in expected and "A" <= ch <= "Z":
        return "kinds, labels and edge types are upper case letters, digits and _"
    if ("NICK" in expected or "CB_NICK" in expected) and ch == "#":
        return "a nick is # then lower-case letters, digits, _ or -"
    if expected & {"CB_UPPER", "CB_WORD"}:
        m = _WORD_AT.match(text, offset)  # \S*+ matches everywhere (maybe empty)
        word = m.group() if m is not None else ""
        quote = word.find("'")
        if quote >= 0 and _STRING_BODY.match(text, offset + quote + 1) is None:
            return "unterminated string (no closing ')"
        return "query tokens are separated by spaces (a quote or # cannot follow a word)"
    if rest.startswith(">") and "LPAR" in expected and text[max(0, offset - 2) : offset] == "]-":
        return "an edge has one direction; write <-[:TYPE]- or -[:TYPE]->"
    name = _NAME_AT.match(text, offset)
    if name is not None:
        shown = repr(name.group()[:30])
    else:
        shown = f"character {ch!r}" if ch else "end of input"
    return f"unexpected {shown}; expected {_describe_expected(expected)}"


class _Builder(Transformer):  # type: ignore[type-arg]
    """Reduces grammar rules straight into AST objects (called by the LALR parser)."""

    # ---- values
    def value(self, c: list[Any]) -> Value:
        v = c[0]
        return v if isinstance(v, tuple) else read_scalar(v)

    def scalar(self, c: list[Any]) -> Value:
        return read_scalar(c[0])

    def list_value(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(x for x in c[1:] if x is not None)

    def prop(self, c: list[Any]) -> tuple[Token, Value]:
        return (c[0], c[1])

    def props(self, c: list[Any]) -> tuple[tuple[str, Value], ...]:
        return merge_props(x for x in c[1:] if x is not None)

    # ---- patterns
    def label_expr(self, c: list[Any]) -> tuple[str, ...]:
        return tuple(str(t) for t in c)

    def node(self, c: list[Any]) -> NodePattern:
        lpar, name, labels, nick, props = c
        return NodePattern(
            None if name is None else read_var(name),
            labels or (),
            props or (),
            None if nick is None else str(nick)[1:],
            token_pos(lpar),
        )

    def edge_right(self, c: list[Any]) -> RawEdge:
        opener, name, etype, props = c
        var = None if name is None else read_var(name)
        return (True, var, str(etype), props or (), token_pos(opener), name)

    def edge_left(self, c: list[Any]) -> RawEdge:
        opener, name, etype, props = c
        var = None if name is None else read_var(name)
        return (False, var, str(etype), props or (), token_pos(opener), name)

    def path(self, c: list[Any]) -> list[Any]:
        return c

    def insert(self, c: list[Any]) -> RawInsert:
        return RawInsert(token_pos(c[0]), c[1:])

    # ---- SET / REMOVE / DELETE / SETTLE
    def set_stmt(self, c: list[Any]) -> list[Statement]:
        return c[1:]

    def set_prop(self, c: list[Any]) -> SetProp:
        return SetProp(str(c[0]), str(c[1]), c[2], token_pos(c[0]))

    def set_label(self, c: list[Any]) -> SetLabel:
        return SetLabel(str(c[0]), str(c[1]), token_pos(c[0]))

    def set_nick(self, c: list[Any]) -> SetNick:
        return SetNick(str(c[0]), str(c[1])[1:], token_pos(c[0]))

    def remove_stmt(self, c: list[Any]) -> list[Statement]:
        return c[1:]

    def remove_prop(self, c: list[Any]) -> RemoveProp:
        return RemoveProp(str(c[0]), str(c[1]), token_pos(c[0]))

    def remove_label(self, c: list[Any]) -> RemoveLabel:
        return RemoveLabel(str(c[0]), str(c[1]), token_pos(c[0]))

    def remove_nick(self, c: list[Any]) -> RemoveNick:
        return RemoveNick(str(c[0]), str(c[1])[1:], token_pos(c[0]))

    def delete_stmt(self, c: list[Any]) -> list[Statement]:
        return [Delete(str(t), token_pos(t)) for t in c[1:]]

    def settle_stmt(self, c: list[Any]) -> list[Statement]:
        return [Settle(str(t), token_pos(t)) for t in c[1:]]

    def gone_stmt(self, c: list[Any]) -> list[Statement]:
        return [Gone(str(t), token_pos(t)) for t in c[1:]]

    # ---- the whole Δ
    def delta(self, c: list[Any]) -> Delta:
        out: list[Statement] = []
        state = InsertState()
        for item in c:
            if isinstance(item, RawInsert):
                out.append(state.build(item))
            else:
                out.extend(item)
        return Delta(tuple(out))

    # ---- MATCH form
    def cond_contains(self, c: list[Any]) -> tuple[Any, ...]:
        return ("contains", c[0], c[1], decode_string(c[3]))

    def cond_eq(self, c: list[Any]) -> tuple[Any, ...]:
        return ("eq", c[0], c[1], c[2])

    def where(self, c: list[Any]) -> list[Any]:
        return [x for x in c if not isinstance(x, Token)]

    def limit(self, c: list[Any]) -> tuple[Any, ...]:
        tok = c[1]
        n = read_int(tok)
        if n < 1:
            raise fail_at(tok, f"LIMIT must be at least 1 (got {n})")
        return ("limit", n)

    def return_clause(self, c: list[Any]) -> tuple[Any, ...]:
        return ("return", c[1])

    def seed(self, c: list[Any]) -> SeedQuery:
        node: NodePattern = c[1]
        conds = c[2] or []
        var = node.var
        props: list[tuple[Token | str, Value]] = list(node.props)
        contains: list[tuple[str, str]] = []
        limit: int | None = None

        def check(tok: Token) -> None:
            if str(tok) != var:
                if var is None:
                    raise fail_at(
                        tok, f"variable {tok} is not bound: the MATCH pattern has no variable"
                    )
                raise fail_at(tok, f"variable {tok} is not the MATCH variable {var}")

        for kind, var_tok, key_tok, value in conds:
            check(var_tok)
            if kind == "contains":
                contains.append((str(key_tok), value))
            else:
                props.append((key_tok, value))
        for extra in c[3:]:
            if extra is None:
                continue
            if extra[0] == "limit":
                limit = extra[1]
            else:
                check(extra[1])
        seen: set[str] = set()
        merged: list[tuple[str, Value]] = []
        for key, value in props:
            name = str(key)
            if name in seen:
                if isinstance(key, Token):
                    raise fail_at(key, f"duplicate property key {name!r}")
            seen.add(name)
            merged.append((name, value))
        labels = node.labels
        return SeedQuery(
            kind=labels[0] if labels else None,
            labels=labels[1:],
            props=tuple(merged),
            contains=tuple(contains),
            nick=node.nick,
            limit=limit,
            form="match",
        )

    # ---- codebook form
    def codebook(self, c: list[Any]) -> SeedQuery:
        return codebook_query(c)


_parser: Lark | None = None
_parser_lock = threading.Lock()


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        with _parser_lock:
            if _parser is None:
                _parser = Lark.open_from_package(
                    "memnet.gql",
                    "memnet.lark",
                    ("",),
                    parser="lalr",
                    lexer="contextual",
                    start=["delta", "seed", "codebook"],
                    transformer=_Builder(),
                    maybe_placeholders=True,
                    propagate_positions=False,
                )
    return _parser


def run(text: str, start: str) -> Any:
    """The tree of ``text`` from start rule ``start`` (``delta``, ``seed`` or
    ``codebook``); any fault raises :class:`~memnet.errors.GQLSyntaxError`."""
    try:
        return _get_parser().parse(text, start=start)
    except SyntaxFail as f:
        raise syntax_error(f, text) from None
    except UnexpectedInput as e:
        raise _lark_to_error(e, text) from None
    except LarkError as e:  # pragma: no cover - any other lark failure
        line, column = end_position(text)
        raise GQLSyntaxError(
            f"the text does not parse ({type(e).__name__})", line=line, column=column
        ) from None


__all__ = ["run"]
