"""Text → syntax tree for the shaped GQL dialect.

One lark grammar (``memnet.lark``, LALR with the contextual lexer) has three start
rules: ``delta`` (a mutation batch, also what an emitted Shape is), ``seed`` (the
``MATCH`` form of a query) and ``codebook`` (the token form of a query). The
syntax tree is built while parsing: a :class:`lark.Transformer` is handed to the
LALR parser, so every rule is reduced straight into :mod:`memnet.gql.ast`
objects and no tree is ever walked recursively.

Text in the usual forms never reaches lark: direct readers (``fast.py`` for a Δ
and the MATCH form, ``codebook.py`` for the token form) build the same trees,
and lark parses only what they do not accept, to say what is wrong and where.

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
from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate
from operator import sub
from typing import Any, Protocol

from memnet.errors import GQLSyntaxError, InputTooLarge
from memnet.gql.ast import (
    Delta,
    EdgePattern,
    Insert,
    NodePattern,
    Pos,
    SeedQuery,
    Value,
)
from memnet.gql.emit import MATCH_WORD, plain_word
from memnet.values import LONE_SURROGATE, has_lone_surrogate

#: Longest Δ text accepted (characters).
MAX_DELTA_CHARS = 4 * 1024 * 1024
#: Longest query text accepted (characters).
MAX_QUERY_CHARS = 4096
#: Deepest nesting of ``( [ {`` accepted outside strings and comments.
MAX_DEPTH = 16
#: Lexical tokens of one Δ (lark's LALR costs a few µs a token, so this keeps
#: the worst case near a second; split bigger batches into several commits).
MAX_DELTA_TOKENS = 50_000
_TOKEN_ESTIMATE = re.compile(
    r"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'?|//[^\n]*|/\*.*?(?:\*/|\Z)"
    r"|\w+|[^\s\w]",
    re.DOTALL,
)

_ANON_RE = re.compile(r"_anon[0-9]+")
# matches up to (and including) the first backslash that starts no valid escape
_BAD_ESCAPE_RE = re.compile(r"(?:[^\\]++|\\(?:[\\'nrt]|u[0-9A-Fa-f]{4}))*+\\")
# an escape (kept for the codec) or a doubled quote (folded to one)
_QUOTE_PAIR_RE = re.compile(r"(\\[\s\S])|(')'")


# --------------------------------------------------------------------------- errors


class Token(Protocol):
    """What the helpers here need of a token (lark's tokens have it, and so do
    the direct readers')."""

    type: str
    line: int | None
    column: int | None
    start_pos: int | None

    def __str__(self) -> str: ...


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
    before = text[max(0, offset - span) : offset].rsplit("\n", 1)[-1]
    after = text[offset : offset + span].split("\n", 1)[0]
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


# --------------------------------------------------------------------------- caps


# A string (or, unterminated, the rest of the text) or a comment: what the depth
# scan skips. Every quantifier is possessive or lazy-to-a-literal: linear time.
_SKIP_RE = re.compile(
    r"'(?:[^'\\]++|\\[\s\S]|'')*+'|//[^\n]*+|/\*[\s\S]*?\*/|'[\s\S]*+|/\*[\s\S]*+"
)
_NOT_BRACKET_RE = re.compile(r"[^()\[\]{}]++")
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_LEAD_RE = re.compile(r"(?:\s++|//[^\n]*+|/\*[\s\S]*?\*/)*+")


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
    deepest: int = max(map(sub, sums, floors))
    return deepest


def _check_caps(text: str, max_chars: int) -> None:
    _check_size(text, max_chars)
    _check_tokens(text)


def _check_tokens(text: str) -> None:
    """The token cap, for text lark reads (the fast Δ reader needs none)."""
    if len(text) > MAX_DELTA_TOKENS:  # shorter text cannot hold that many tokens
        n = len(_TOKEN_ESTIMATE.findall(text))
        if n > MAX_DELTA_TOKENS:
            raise InputTooLarge(
                f"input holds about {n} tokens; the cap is {MAX_DELTA_TOKENS} "
                "(split it into several commits)",
                tokens=n,
                cap=MAX_DELTA_TOKENS,
            )


def _check_size(text: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise InputTooLarge(
            f"input is {len(text)} characters; the cap is {max_chars}",
            length=len(text),
            cap=max_chars,
        )
    if not text.isascii():
        m = LONE_SURROGATE.search(text)
        if m is not None:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise GQLSyntaxError(
                "the text holds a lone surrogate (not valid Unicode)", line=line, column=col
            )
    if _nesting_depth(text) > MAX_DEPTH:
        raise InputTooLarge(f"input nests ( [ {{ deeper than {MAX_DEPTH}", cap=MAX_DEPTH)


def _first_word_is_match(text: str) -> bool:
    """True when the first word after whitespace and comments is MATCH (any case)."""
    lead = _LEAD_RE.match(text)
    return lead is not None and MATCH_WORD.match(text, lead.end()) is not None


# --------------------------------------------------------------------------- values


def _decode_string(tok: Token) -> str:
    """The value of a quoted string token (or of a codebook pair ending in one).

    Only C-level passes: a possessive regex finds the first bad escape, a template
    substitution folds doubled quotes, and the escapes themselves (a subset of
    Python's) are decoded by the ``unicode_escape`` codec, with every character
    beyond Latin-1 first written as its own ``\\u``/``\\U`` escape."""
    text = str(tok)
    quote = text.index("'")
    inner = text[quote + 1 : -1]
    value = _decode_text(inner)
    if value is not None:
        return value
    bad = _BAD_ESCAPE_RE.match(inner)
    if bad is None:  # the escapes are known: one names half a surrogate pair
        _surrogate_error(tok, inner, quote + 1)
    assert bad is not None
    at = bad.end() - 1
    esc = inner[at + 1 : at + 2]
    if esc == "u":
        raise _fail_at(tok, "\\u needs four hex digits", quote + 1 + at)
    shown = repr(esc)[1:-1]
    raise _fail_at(
        tok,
        f"unknown escape \\{shown} in string (use \\\\, \\', \\n, \\r, \\t or \\uXXXX)",
        quote + 1 + at,
    )


def _decode_text(inner: str) -> str | None:
    """The value of a string literal's inside, or None when it holds an
    escape the dialect does not know or a ``\\u`` escape of half a surrogate
    pair that no other half completes (a high-low pair is one character, the
    JSON habit)."""
    if "\\" not in inner:
        return inner.replace("''", "'") if "''" in inner else inner
    if _BAD_ESCAPE_RE.match(inner) is not None:
        return None
    if "''" in inner:
        inner = _QUOTE_PAIR_RE.sub(r"\1\2", inner)
    out = inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
    if has_lone_surrogate(out):
        try:
            return out.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            return None
    return out


_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|[\s\S])")


def _surrogate_error(tok: Token, raw: str, at: int) -> None:
    """Raise the error for the first ``\\u`` escape in ``raw`` (a string's
    text between its quotes, starting ``at`` in the token) that names half of
    a surrogate pair with no other half."""
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
    raise _fail_at(
        tok,
        "a \\u escape names half of a surrogate pair, which is not a "
        "character (write the character itself)",
        at + (high or 0),
    )


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


# --------------------------------------------------------------------------- building


class _RawInsert:
    __slots__ = ("pos", "paths")

    def __init__(self, pos: Pos, paths: list[list[Any]]) -> None:
        self.pos = pos
        self.paths = paths


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


class _InsertState:
    """Resolves raw INSERT paths into Insert objects, with per-Δ bookkeeping."""

    __slots__ = ("anon", "defined", "edge_vars")

    def __init__(self) -> None:
        self.anon = 0
        self.defined: set[str] = set()  # node variables with a defining pattern
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


def _run(text: str, start: str) -> Any:
    """Parse with lark (imported now: only errors and text the direct readers
    leave need it)."""
    from .grammar import run

    return run(text, start)


def _require_text(text: object) -> str:
    if not isinstance(text, str):
        raise GQLSyntaxError(f"expected GQL text (str), got {type(text).__name__}")
    return text


def parse_delta(text: str) -> Delta:
    """Parse a mutation batch (or an emitted Shape) into a :class:`Delta`.

    The direct reader (:mod:`memnet.gql.fast`) reads any Δ under the size cap
    in linear time; when it does not accept the text, lark parses it to say
    what is wrong and where (for text past the token cap, the direct reader
    names the place itself)."""
    text = _require_text(text)
    _check_size(text, MAX_DELTA_CHARS)
    result = _fast.read_delta(text)
    if not isinstance(result, int):
        return result
    try:
        _check_tokens(text)
    except InputTooLarge:
        at = result
        line, column = _pos_of(text, at)
        raise GQLSyntaxError(
            f"the Δ does not parse at {_describe_at(text, at)} (in a Δ this large only the "
            "place is named; send the part around it alone for the full message)",
            line=line,
            column=column,
            context=_context(text, at),
        ) from None
    lark_result: Delta = _run(text, "delta")
    return lark_result


def _pos_of(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


_NAME_AT = re.compile(r"[A-Za-z0-9_]++")


def _describe_at(text: str, offset: int) -> str:
    word = _NAME_AT.match(text, offset)
    if word is not None:
        return repr(word.group()[:30])
    return f"character {text[offset]!r}" if offset < len(text) else "the end of input"


def _parse_match(text: str) -> SeedQuery:
    _check_caps(text, MAX_QUERY_CHARS)
    direct = _fast.fast_seed(text)  # lark only for what the direct reader leaves
    if direct is not None:
        return direct
    result: SeedQuery = _run(text, "seed")
    return result


@lru_cache(maxsize=1024)
def _parse_query_cached(q: str) -> SeedQuery:
    if not q.strip():
        return SeedQuery()
    if _first_word_is_match(q):
        return _parse_match(q)
    if plain_word(q):
        return SeedQuery(keywords=(q,))  # one plain word, the usual fresh q
    _check_caps(q, MAX_QUERY_CHARS)
    from .codebook import _direct_codebook  # it reads values with the helpers above

    direct = _direct_codebook(q)
    if direct is not None:
        return direct
    result: SeedQuery = _run(q, "codebook")
    return result


def parse_query(q: str) -> SeedQuery:
    """Parse a Recall query: the MATCH form when its first word is MATCH
    (any case), otherwise the codebook token form. Blank ``q`` → ``SeedQuery()``."""
    q = _require_text(q)
    if len(q) > MAX_QUERY_CHARS:  # do not let oversized text into the cache
        raise InputTooLarge(
            f"input is {len(q)} characters; the cap is {MAX_QUERY_CHARS}",
            length=len(q),
            cap=MAX_QUERY_CHARS,
        )
    return _parse_query_cached(q)


def parse(text: str) -> Delta | SeedQuery:
    """Parse GQL text: a MATCH query (first word MATCH, after any comments) →
    :class:`SeedQuery` under the query cap; anything else → :class:`Delta` under
    the Δ cap."""
    text = _require_text(text)
    if len(text) > MAX_DELTA_CHARS:
        raise InputTooLarge(
            f"input is {len(text)} characters; the cap is {MAX_DELTA_CHARS}",
            length=len(text),
            cap=MAX_DELTA_CHARS,
        )
    if _first_word_is_match(text):
        return _parse_match(text)
    return parse_delta(text)


from . import fast as _fast  # noqa: E402  (the direct Δ reader uses the helpers above)

__all__ = ["MAX_DELTA_CHARS", "MAX_DEPTH", "MAX_QUERY_CHARS", "parse", "parse_delta", "parse_query"]
