"""Text → syntax tree for the shaped GQL dialect.

One lark grammar (``memnet.lark``, LALR with the contextual lexer) has three start
rules: ``delta`` (a mutation batch, also what an emitted Shape is), ``seed`` (the
``MATCH`` form of a query) and ``codebook`` (the token form of a query). The
syntax tree is built while parsing: a :class:`lark.Transformer` is handed to the
LALR parser, so every rule is reduced straight into :mod:`memnet.gql.ast`
objects and no tree is ever walked recursively.

Before lark sees any text, two caps are checked with linear scans: the length
(:data:`MAX_DELTA_CHARS` for a Δ, :data:`MAX_QUERY_CHARS` for a query) and the
nesting depth of ``( [ {`` outside strings and comments (:data:`MAX_DEPTH`).
Either one raises :class:`~memnet.errors.InputTooLarge`. Every other failure is a
:class:`~memnet.errors.GQLSyntaxError` with a 1-based line and column.

Public functions::

    parse(text)        -> Delta | SeedQuery   (MATCH first → SeedQuery, else Delta)
    parse_delta(text)  -> Delta
    parse_query(q)     -> SeedQuery           (MATCH form or codebook form, cached)

Two choices the dialect leaves open are fixed here:

* a variable defined (labels, props or nick) twice anywhere in one Δ is an
  error, as is an edge variable used twice or shared with a node;
* anonymous node patterns are named ``_anon1``, ``_anon2``, … per Δ, so user
  variables of that exact form are reserved and refused.

The codebook form also reads ``key~value`` (``title~'pricing page'``) as a
CONTAINS pair; that is how :func:`memnet.gql.emit.format_query` renders one.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from itertools import accumulate
from operator import sub
from typing import Any, Iterable

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_analysis import Shift

from memnet.errors import GQLSyntaxError, InputTooLarge
from memnet.gql.ast import (
    Delete,
    Delta,
    EdgePattern,
    Insert,
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

#: Longest Δ text accepted (characters).
MAX_DELTA_CHARS = 4 * 1024 * 1024
#: Longest query text accepted (characters).
MAX_QUERY_CHARS = 4096
#: Deepest nesting of ``( [ {`` accepted outside strings and comments.
MAX_DEPTH = 16
#: Lexical tokens of one Δ (lark's LALR costs a few µs a token, so this keeps
#: the worst case near a second; split bigger batches into several commits).
MAX_DELTA_TOKENS = 50_000
_TOKEN_ESTIMATE = re.compile(r"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'?|//[^\n]*|/\*.*?(?:\*/|\Z)|\w+|[^\s\w]",
                             re.DOTALL)

_ANON_RE = re.compile(r"_anon[0-9]+")
_INT_RE = re.compile(r"-?[0-9]+")
_FLOAT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")
# matches up to (and including) the first backslash that starts no valid escape
_BAD_ESCAPE_RE = re.compile(r"(?:[^\\]++|\\(?:[\\'nrt]|u[0-9A-Fa-f]{4}))*+\\")
# an escape (kept for the codec) or a doubled quote (folded to one)
_QUOTE_PAIR_RE = re.compile(r"(\\[\s\S])|(')'")


# --------------------------------------------------------------------------- errors


class _Fail(Exception):
    """Raised inside the transformer; turned into GQLSyntaxError with context."""

    def __init__(self, message: str, line: int, column: int, offset: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset


def _fail_at(tok: Token, message: str, delta: int = 0) -> _Fail:
    """A failure ``delta`` characters into token ``tok``."""
    line, column = tok.line or 1, tok.column or 1
    if delta:
        head = str(tok)[:delta]
        nl = head.count("\n")
        if nl:
            line += nl
            column = delta - head.rfind("\n")
        else:
            column += delta
    start = tok.start_pos if tok.start_pos is not None else None
    return _Fail(message, line, column, None if start is None else start + delta)


def _fail_pos(pos: Pos, message: str) -> _Fail:
    return _Fail(message, pos.line, pos.column, None)


def _context(text: str, offset: int, span: int = 40) -> str:
    """The line around ``offset`` (at most ``span`` characters each side) and a caret."""
    offset = max(0, min(offset, len(text)))
    before = text[max(0, offset - span):offset].rsplit("\n", 1)[-1]
    after = text[offset:offset + span].split("\n", 1)[0]
    return f"{before}{after}\n{' ' * len(before.expandtabs())}^\n"


def _offset_of(text: str, line: int, column: int) -> int:
    """Character offset of a 1-based (line, column); linear in the text."""
    at = 0
    for _ in range(line - 1):
        nxt = text.find("\n", at)
        if nxt < 0:
            break
        at = nxt + 1
    return min(len(text), at + column - 1)


def _end_position(text: str) -> tuple[int, int]:
    line = text.count("\n") + 1
    return line, len(text) - text.rfind("\n")


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


def accepted_terminals(err: UnexpectedInput, fallback: Iterable[str]) -> set[str]:
    """The terminals the parser would really accept where it stopped.

    LALR merges look-ahead sets, so the table row of the state (and the lexer's
    allowed set) can list terminals that a reduction would then refuse. Each
    candidate is tried on a copy of the state stack (no callbacks run). Shared
    with the SysML parser, whose grammar is LALR too."""
    state = getattr(err, "state", None)
    try:
        conf = state.parse_conf
        states = conf.states
        end_state = conf.end_state
        stack0 = list(state.state_stack)
    except AttributeError:
        return set(fallback)
    out: set[str] = set()
    for name in states[stack0[-1]]:
        if not name.isupper():
            continue
        stack = list(stack0)
        for _ in range(10_000):  # bounded: each step pops or shifts on a flat grammar
            entry = states[stack[-1]].get(name)
            if entry is None:
                break
            action, arg = entry
            if action is Shift:
                out.add(name)
                break
            size = len(arg.expansion)
            if size:
                del stack[-size:]
            stack.append(states[stack[-1]][arg.origin.name][1])
            if name == "$END" and stack[-1] == end_state:
                out.add(name)
                break
    return out


def _accepted(err: UnexpectedInput, fallback: Iterable[str]) -> set[str]:
    return accepted_terminals(err, fallback) - _IGNORED


def _lark_to_error(err: UnexpectedInput, text: str) -> GQLSyntaxError:
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = _accepted(err, err.expected or ())
        if tok.type == "$END":
            line, column = _end_position(text)
            offset = len(text)
            message = f"unexpected end of input; expected {_describe_expected(expected)}"
        else:
            line, column = tok.line or 1, tok.column or 1
            offset = tok.start_pos if tok.start_pos is not None else _offset_of(text, line, column)
            if tok.type.startswith("CB_") or any(n.startswith("CB_") for n in expected):
                # the fallback lexer read a token of the other form: describe the text
                message = _char_message(text, offset, expected)
            else:
                message = _token_message(tok, expected)
        return GQLSyntaxError(message, line=line, column=column, context=_context(text, offset))
    if isinstance(err, UnexpectedCharacters):
        offset = err.pos_in_stream if err.pos_in_stream is not None else 0
        expected = _accepted(err, err.allowed or ())
        message = _char_message(text, offset, expected)
        return GQLSyntaxError(message, line=err.line, column=err.column,
                              context=_context(text, offset))
    line = getattr(err, "line", None) or 1
    column = getattr(err, "column", None) or 1
    if not isinstance(line, int) or line < 1:
        line, column = _end_position(text)
    return GQLSyntaxError("the text does not parse", line=line, column=column,
                          context=_context(text, _offset_of(text, line, column)))


def _token_message(tok: Token, expected: set[str]) -> str:
    if tok.type == "_EDGE_L_CLOSE" and "_EDGE_R_CLOSE" in expected:
        return "undirected edges are not supported; write -[:TYPE]-> or <-[:TYPE]-"
    if tok.type == "_EDGE_R_CLOSE" and "_EDGE_L_CLOSE" in expected:
        return "an edge has one direction; write <-[:TYPE]- or -[:TYPE]->"
    if tok.type == "LBRACK" and "STRING" in expected and "LBRACK" not in expected:
        return "lists hold scalars only (no nested lists)"
    if (tok.type in ("_RBRACK", "_EDGE_R_CLOSE", "_EDGE_L_CLOSE") and "_COLON" in expected
            and "_RPAR" not in expected):
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
    rest = text[offset:offset + 8]
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
        word = _WORD_AT.match(text, offset).group()
        quote = word.find("'")
        if quote >= 0 and _STRING_BODY.match(text, offset + quote + 1) is None:
            return "unterminated string (no closing ')"
        return "query tokens are separated by spaces (a quote or # cannot follow a word)"
    if rest.startswith(">") and "LPAR" in expected and text[max(0, offset - 2):offset] == "]-":
        return "an edge has one direction; write <-[:TYPE]- or -[:TYPE]->"
    word = _NAME_AT.match(text, offset)
    if word is not None:
        shown = repr(word.group()[:30])
    else:
        shown = f"character {ch!r}" if ch else "end of input"
    return f"unexpected {shown}; expected {_describe_expected(expected)}"


# --------------------------------------------------------------------------- caps


# A string (or, unterminated, the rest of the text) or a comment: what the depth
# scan skips. Every quantifier is possessive or lazy-to-a-literal: linear time.
_SKIP_RE = re.compile(
    r"'(?:[^'\\]++|\\[\s\S]|'')*+'|//[^\n]*+|/\*[\s\S]*?\*/|'[\s\S]*+|/\*[\s\S]*+")
_NOT_BRACKET_RE = re.compile(r"[^()\[\]{}]++")
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_LEAD_RE = re.compile(r"(?:\s++|//[^\n]*+|/\*[\s\S]*?\*/)*+")
_MATCH_RE = re.compile(r"match(?![A-Za-z0-9_])", re.IGNORECASE)


def _nesting_depth(text: str) -> int:
    """Deepest nesting of ( [ { outside strings and comments.

    A closer with nothing open is ignored. Linear: two C-level regex passes, then
    prefix sums over the brackets alone."""
    if text.count("(") + text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot pass the cap (fast path for ordinary text)
    brackets = _NOT_BRACKET_RE.sub("", _SKIP_RE.sub("", text))
    if not brackets:
        return 0
    sums = list(accumulate(map(_STEP.__getitem__, brackets)))
    floors = accumulate(sums, min, initial=0)
    next(floors)
    # depth after each bracket = running sum minus the lowest point so far (≤ 0)
    return max(map(sub, sums, floors))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_caps(text: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise InputTooLarge(f"input is {len(text)} characters; the cap is {max_chars}",
                            length=len(text), cap=max_chars)
    if not text.isascii():
        m = _SURROGATE.search(text)
        if m is not None:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise GQLSyntaxError("the text holds a lone surrogate (not valid Unicode)",
                                 line=line, column=col)
    if _nesting_depth(text) > MAX_DEPTH:
        raise InputTooLarge(f"input nests ( [ {{ deeper than {MAX_DEPTH}", cap=MAX_DEPTH)
    if len(text) > MAX_DELTA_TOKENS:  # shorter text cannot hold that many tokens
        n = len(_TOKEN_ESTIMATE.findall(text))
        if n > MAX_DELTA_TOKENS:
            raise InputTooLarge(f"input holds about {n} tokens; the cap is {MAX_DELTA_TOKENS} "
                                "(split it into several commits)", tokens=n,
                                cap=MAX_DELTA_TOKENS)


def _first_word_is_match(text: str) -> bool:
    """True when the first word after whitespace and comments is MATCH (any case)."""
    return _MATCH_RE.match(text, _LEAD_RE.match(text).end()) is not None


# --------------------------------------------------------------------------- values


def _decode_string(tok: Token) -> str:
    """The value of a quoted string token (or of a codebook pair ending in one).

    Only C-level passes: a possessive regex finds the first bad escape, a template
    substitution folds doubled quotes, and the escapes themselves (a subset of
    Python's) are decoded by the ``unicode_escape`` codec, with every character
    beyond Latin-1 first written as its own ``\\u``/``\\U`` escape."""
    text = str(tok)
    quote = text.index("'")
    inner = text[quote + 1:-1]
    if "\\" not in inner:
        return inner.replace("''", "'") if "''" in inner else inner
    bad = _BAD_ESCAPE_RE.match(inner)
    if bad is not None:
        at = bad.end() - 1
        esc = inner[at + 1:at + 2]
        if esc == "u":
            raise _fail_at(tok, "\\u needs four hex digits", quote + 1 + at)
        shown = repr(esc)[1:-1]
        raise _fail_at(tok, f"unknown escape \\{shown} in string "
                            "(use \\\\, \\', \\n, \\r, \\t or \\uXXXX)", quote + 1 + at)
    raw = inner
    if "''" in inner:
        inner = _QUOTE_PAIR_RE.sub(r"\1\2", inner)
    out = inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
    if not out.isascii() and _SURROGATE.search(out):
        out = _join_surrogates(tok, raw, out, quote + 1)
    return out


_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|[\s\S])")


def _join_surrogates(tok: Token, raw: str, out: str, at: int) -> str:
    """``out`` with each pair of ``\\u`` escapes of a high and a low surrogate
    joined into one character (the JSON habit); a lone half is not text, so it
    is refused at its escape (``raw`` is the string's text between the quotes,
    ``at`` where it starts in the token)."""
    try:
        return out.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        pass
    high: int | None = None  # offset of a high half waiting for its low half
    for m in _ESCAPE_RE.finditer(raw):
        code = int(m.group(1), 16) if m.group(1) else -1
        if 0xDC00 <= code <= 0xDFFF and high is not None and m.start() == high + 6:
            high = None
            continue
        if high is not None:
            break
        if 0xD800 <= code <= 0xDBFF:
            high = m.start()
        elif 0xDC00 <= code <= 0xDFFF:
            high = m.start()
            break
    raise _fail_at(tok, "a \\u escape names half of a surrogate pair, which is not a "
                        "character (write the character itself)", at + (high or 0))


def _int(tok: Token) -> int:
    try:
        return int(str(tok))
    except ValueError:
        raise _fail_at(tok, "integer literal is too long") from None


def _float(tok: Token) -> float:
    value = float(str(tok))
    if value in (float("inf"), float("-inf")):
        raise _fail_at(tok, "number is out of range")
    return value


def _scalar(tok: Token) -> Value:
    t = tok.type
    if t == "STRING":
        return _decode_string(tok)
    if t == "INT":
        return _int(tok)
    if t == "FLOAT":
        return _float(tok)
    if t == "TRUE":
        return True
    if t == "FALSE":
        return False
    raise _fail_at(tok, "expected a value")  # pragma: no cover - grammar prevents it


def _pos(tok: Token) -> Pos:
    return Pos(tok.line or 1, tok.column or 1)


def _check_var(tok: Token) -> str:
    name = str(tok)
    if _ANON_RE.fullmatch(name):
        raise _fail_at(tok, f"variable names like {name} are reserved for anonymous nodes")
    return name


def _bare_codebook_value(word: str) -> Value:
    if _INT_RE.fullmatch(word):
        try:
            return int(word)
        except ValueError:
            return word
    if _FLOAT_RE.fullmatch(word):
        value = float(word)
        if value not in (float("inf"), float("-inf")):
            return value
        return word
    low = word.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    return word


# --------------------------------------------------------------------------- building


class _RawInsert:
    __slots__ = ("pos", "paths")

    def __init__(self, pos: Pos, paths: list[list[Any]]) -> None:
        self.pos = pos
        self.paths = paths


class _Props:
    """A property map with the tokens of its keys, for duplicate checks."""

    __slots__ = ("items", "key_tokens")

    def __init__(self, items: list[tuple[str, Value]], key_tokens: list[Token]) -> None:
        self.items = items
        self.key_tokens = key_tokens


def _merge_props(items: Iterable[tuple[Token, Value]]) -> tuple[tuple[str, Value], ...]:
    seen: set[str] = set()
    out: list[tuple[str, Value]] = []
    for key_tok, value in items:
        key = str(key_tok)
        if key in seen:
            raise _fail_at(key_tok, f"duplicate property key {key!r}")
        seen.add(key)
        out.append((key, value))
    return tuple(out)


class _Builder(Transformer):  # type: ignore[type-arg]
    """Reduces grammar rules straight into AST objects (called by the LALR parser)."""

    # ---- values
    def value(self, c: list[Any]) -> Value:
        v = c[0]
        return v if isinstance(v, tuple) else _scalar(v)

    def scalar(self, c: list[Any]) -> Value:
        return _scalar(c[0])

    def list_value(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(x for x in c[1:] if x is not None)

    def prop(self, c: list[Any]) -> tuple[Token, Value]:
        return (c[0], c[1])

    def props(self, c: list[Any]) -> tuple[tuple[str, Value], ...]:
        return _merge_props(x for x in c[1:] if x is not None)

    # ---- patterns
    def label_expr(self, c: list[Any]) -> tuple[str, ...]:
        return tuple(str(t) for t in c)

    def node(self, c: list[Any]) -> NodePattern:
        lpar, name, labels, nick, props = c
        return NodePattern(
            None if name is None else _check_var(name),
            labels or (),
            props or (),
            None if nick is None else str(nick)[1:],
            _pos(lpar),
        )

    def edge_right(self, c: list[Any]) -> tuple[Any, ...]:
        opener, name, etype, props = c
        var = None if name is None else _check_var(name)
        return (True, var, str(etype), props or (), _pos(opener), name)

    def edge_left(self, c: list[Any]) -> tuple[Any, ...]:
        opener, name, etype, props = c
        var = None if name is None else _check_var(name)
        return (False, var, str(etype), props or (), _pos(opener), name)

    def path(self, c: list[Any]) -> list[Any]:
        return c

    def insert(self, c: list[Any]) -> _RawInsert:
        return _RawInsert(_pos(c[0]), c[1:])

    # ---- SET / REMOVE / DELETE / SETTLE
    def set_stmt(self, c: list[Any]) -> list[Statement]:
        return c[1:]

    def set_prop(self, c: list[Any]) -> SetProp:
        return SetProp(str(c[0]), str(c[1]), c[2], _pos(c[0]))

    def set_label(self, c: list[Any]) -> SetLabel:
        return SetLabel(str(c[0]), str(c[1]), _pos(c[0]))

    def set_nick(self, c: list[Any]) -> SetNick:
        return SetNick(str(c[0]), str(c[1])[1:], _pos(c[0]))

    def remove_stmt(self, c: list[Any]) -> list[Statement]:
        return c[1:]

    def remove_prop(self, c: list[Any]) -> RemoveProp:
        return RemoveProp(str(c[0]), str(c[1]), _pos(c[0]))

    def remove_label(self, c: list[Any]) -> RemoveLabel:
        return RemoveLabel(str(c[0]), str(c[1]), _pos(c[0]))

    def remove_nick(self, c: list[Any]) -> RemoveNick:
        return RemoveNick(str(c[0]), str(c[1])[1:], _pos(c[0]))

    def delete_stmt(self, c: list[Any]) -> list[Statement]:
        return [Delete(str(t), _pos(t)) for t in c[1:]]

    def settle_stmt(self, c: list[Any]) -> list[Statement]:
        return [Settle(str(t), _pos(t)) for t in c[1:]]

    # ---- the whole Δ
    def delta(self, c: list[Any]) -> Delta:
        out: list[Statement] = []
        state = _InsertState()
        for item in c:
            if isinstance(item, _RawInsert):
                out.append(state.build(item))
            else:
                out.extend(item)
        return Delta(tuple(out))

    # ---- MATCH form
    def cond_contains(self, c: list[Any]) -> tuple[Any, ...]:
        return ("contains", c[0], c[1], _decode_string(c[3]))

    def cond_eq(self, c: list[Any]) -> tuple[Any, ...]:
        return ("eq", c[0], c[1], c[2])

    def where(self, c: list[Any]) -> list[Any]:
        return [x for x in c if not isinstance(x, Token)]

    def limit(self, c: list[Any]) -> tuple[Any, ...]:
        tok = c[1]
        n = _int(tok)
        if n < 1:
            raise _fail_at(tok, f"LIMIT must be at least 1 (got {n})")
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
                    raise _fail_at(tok, f"variable {tok} is not bound: the MATCH pattern "
                                        "has no variable")
                raise _fail_at(tok, f"variable {tok} is not the MATCH variable {var}")

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
                    raise _fail_at(key, f"duplicate property key {name!r}")
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
        kind: str | None = None
        labels: list[str] = []
        props: list[tuple[str, Value]] = []
        seen: set[str] = set()
        contains: list[tuple[str, str]] = []
        keywords: list[str] = []
        nick: str | None = None
        for tok in c:
            t = tok.type
            if t == "CB_UPPER":
                if kind is None:
                    kind = str(tok)
                else:
                    labels.append(str(tok))
            elif t == "CB_PAIR":
                text = str(tok)
                cut = min(i for i in (text.find(":"), text.find("~")) if i >= 0)
                key, sep, raw = text[:cut], text[cut], text[cut + 1:]
                quoted = raw.startswith("'")
                if sep == "~":
                    contains.append((key, _decode_string(tok) if quoted else raw))
                    continue
                if key in seen:
                    raise _fail_at(tok, f"duplicate property key {key!r}")
                seen.add(key)
                props.append((key, _decode_string(tok) if quoted else _bare_codebook_value(raw)))
            elif t == "CB_NICK":
                if nick is not None:
                    raise _fail_at(tok, "a query names at most one #nick")
                nick = str(tok)[1:]
            elif t == "CB_STRING":
                keywords.append(_decode_string(tok))
            else:
                keywords.append(str(tok))
        return SeedQuery(
            kind=kind,
            labels=tuple(labels),
            props=tuple(props),
            keywords=tuple(keywords),
            contains=tuple(contains),
            nick=nick,
            limit=None,
            form="codebook",
        )


class _InsertState:
    """Resolves raw INSERT paths into Insert objects, with per-Δ bookkeeping."""

    __slots__ = ("anon", "defined", "edge_vars")

    def __init__(self) -> None:
        self.anon = 0
        self.defined: set[str] = set()      # node variables with a defining pattern
        self.edge_vars: set[str] = set()

    def build(self, raw: _RawInsert) -> Insert:
        nodes: list[NodePattern] = []
        index: dict[str, int] = {}
        edges: list[EdgePattern] = []
        for path in raw.paths:
            prev: str | None = None
            pending: tuple[Any, ...] | None = None
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
                    raise _fail_pos(node.pos, f"variable {var} is already an edge")
                if var in index:
                    if not node.bare:
                        if not nodes[index[var]].bare:
                            raise _fail_pos(node.pos, f"variable {var} defined twice")
                        nodes[index[var]] = node
                        self.defined.add(var)
                else:
                    if not node.bare:
                        if var in self.defined:
                            raise _fail_pos(node.pos, f"variable {var} defined twice")
                        self.defined.add(var)
                    index[var] = len(nodes)
                    nodes.append(node)
                if pending is not None and prev is not None:
                    right, evar, etype, eprops, epos, etok = pending
                    if evar is not None:
                        if evar in self.edge_vars or evar in self.defined or evar in index:
                            raise _fail_pos(epos, f"variable {evar} defined twice")
                        self.edge_vars.add(evar)
                    src, dst = (prev, var) if right else (var, prev)
                    edges.append(EdgePattern(evar, etype, src, dst, eprops, epos))
                prev = var
                pending = None
        return Insert(tuple(nodes), tuple(edges), raw.pos)


# --------------------------------------------------------------------------- the parser


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


def _run(text: str, start: str) -> Any:
    try:
        return _get_parser().parse(text, start=start)
    except _Fail as f:
        offset = f.offset if f.offset is not None else _offset_of(text, f.line, f.column)
        raise GQLSyntaxError(f.message, line=f.line, column=f.column,
                             context=_context(text, offset)) from None
    except UnexpectedInput as e:
        raise _lark_to_error(e, text) from None
    except LarkError as e:  # pragma: no cover - any other lark failure
        line, column = _end_position(text)
        raise GQLSyntaxError(f"the text does not parse ({type(e).__name__})",
                             line=line, column=column) from None


def _require_text(text: object) -> str:
    if not isinstance(text, str):
        raise GQLSyntaxError(f"expected GQL text (str), got {type(text).__name__}")
    return text


def parse_delta(text: str) -> Delta:
    """Parse a mutation batch (or an emitted Shape) into a :class:`Delta`."""
    text = _require_text(text)
    _check_caps(text, MAX_DELTA_CHARS)
    result: Delta = _run(text, "delta")
    return result


def _parse_match(text: str) -> SeedQuery:
    _check_caps(text, MAX_QUERY_CHARS)
    result: SeedQuery = _run(text, "seed")
    return result


@lru_cache(maxsize=1024)
def _parse_query_cached(q: str) -> SeedQuery:
    if not q.strip():
        return SeedQuery()
    if _first_word_is_match(q):
        return _parse_match(q)
    _check_caps(q, MAX_QUERY_CHARS)
    result: SeedQuery = _run(q, "codebook")
    return result


def parse_query(q: str) -> SeedQuery:
    """Parse a Recall query: the MATCH form when its first word is MATCH
    (any case), otherwise the codebook token form. Blank ``q`` → ``SeedQuery()``."""
    q = _require_text(q)
    if len(q) > MAX_QUERY_CHARS:  # do not let oversized text into the cache
        raise InputTooLarge(f"input is {len(q)} characters; the cap is {MAX_QUERY_CHARS}",
                            length=len(q), cap=MAX_QUERY_CHARS)
    return _parse_query_cached(q)


def parse(text: str) -> Delta | SeedQuery:
    """Parse GQL text: a MATCH query (first word MATCH, after any comments) →
    :class:`SeedQuery` under the query cap; anything else → :class:`Delta` under
    the Δ cap."""
    text = _require_text(text)
    if len(text) > MAX_DELTA_CHARS:
        raise InputTooLarge(f"input is {len(text)} characters; the cap is {MAX_DELTA_CHARS}",
                            length=len(text), cap=MAX_DELTA_CHARS)
    if _first_word_is_match(text):
        return _parse_match(text)
    return parse_delta(text)


__all__ = ["MAX_DELTA_CHARS", "MAX_DEPTH", "MAX_QUERY_CHARS", "parse", "parse_delta", "parse_query"]
