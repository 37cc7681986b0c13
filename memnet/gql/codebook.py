"""The codebook form of a Recall query, read word by word.

``TSK status:open pricing`` is a few whitespace-separated tokens (an upper-case
kind and labels, ``key:value`` and ``key~value`` pairs, one ``#nick``,
keywords); :func:`direct_codebook` types each word as the grammar's lexer
would and builds the :class:`~memnet.gql.ast.SeedQuery` without lark. Text it
does not take (a quote, a comment, a ``#`` that is not a lone nick) goes to
lark's ``codebook`` rule (:mod:`memnet.gql.grammar`), which builds its query
with the same :func:`codebook_query`. Values are read with
:mod:`memnet.gql.literals`, as every reader reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .ast import SeedQuery, Value
from .emit import format_value
from .failure import SyntaxFail, Token, fail_at
from .literals import decode_string

_INT_RE = re.compile(r"-?[0-9]+")
_FLOAT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")


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


def codebook_query(tokens: Iterable[Token]) -> SeedQuery:
    """The query of a codebook token list (each token typed CB_UPPER,
    CB_PAIR, CB_NICK, CB_STRING or CB_WORD)."""
    kind: str | None = None
    labels: list[str] = []
    props: list[tuple[str, Value]] = []
    seen: set[str] = set()
    contains: list[tuple[str, str]] = []
    keywords: list[str] = []
    bare: list[tuple[str, str]] = []
    nick: str | None = None
    upper_at: list[int] = []  # where each capital word stood among the keywords
    for tok in tokens:
        t = tok.type
        if t == "CB_UPPER":
            upper_at.append(len(keywords))
            if kind is None:
                kind = str(tok)
            else:
                labels.append(str(tok))
        elif t == "CB_PAIR":
            text = str(tok)
            cut = min(i for i in (text.find(":"), text.find("~")) if i >= 0)
            key, sep, raw = text[:cut], text[cut], text[cut + 1 :]
            quoted = raw.startswith("'")
            if sep == "~":
                contains.append((key, decode_string(tok) if quoted else raw))
                continue
            if key in seen:
                raise fail_at(tok, f"duplicate property key {key!r}")
            seen.add(key)
            value = decode_string(tok) if quoted else _bare_codebook_value(raw)
            if not isinstance(value, str) and raw != format_value(value):
                bare.append((key, raw))  # the text as written, when not canonical
            props.append((key, value))
        elif t == "CB_NICK":
            if nick is not None:
                raise fail_at(tok, "a query names at most one #nick")
            nick = str(tok)[1:]
        elif t == "CB_STRING":
            keywords.append(decode_string(tok))
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
        bare=tuple(bare),
        upper_at=tuple(upper_at) if keywords else (),
    )


class _Word(str):
    """A whitespace-separated word of a codebook query, typed as the grammar
    would type it (positions are not kept: any error goes to lark)."""

    type: str
    line: int | None = None
    column: int | None = None
    start_pos: int | None = None


_CB_UPPER = re.compile(r"[A-Z][A-Z0-9_]*")
_CB_NICK = re.compile(r"#[a-z0-9][a-z0-9_-]*")
_CB_PAIR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[:~][^\s'#]+")
_CB_HARD = re.compile(r"['#]|//|/\*")


def direct_codebook(q: str) -> SeedQuery | None:
    """The codebook query in ``q`` read word by word, or None when it holds a
    quote, a comment or a ``#`` that is not a lone nick (lark reads those)."""
    words = q.split()
    toks: list[_Word] = []
    for w in words:
        tok = _Word(w)
        if _CB_UPPER.fullmatch(w):
            tok.type = "CB_UPPER"
        elif _CB_NICK.fullmatch(w):
            tok.type = "CB_NICK"
        elif _CB_HARD.search(w):
            return None
        elif _CB_PAIR.fullmatch(w):
            tok.type = "CB_PAIR"
        else:
            tok.type = "CB_WORD"
        toks.append(tok)
    try:
        return codebook_query(toks)
    except SyntaxFail:
        return None


__all__ = ["codebook_query", "direct_codebook"]
