"""Text → syntax tree for the shaped GQL dialect: the front door.

Public functions::

    parse(text)        -> Delta | SeedQuery   (MATCH first → SeedQuery, else Delta)
    parse_delta(text)  -> Delta
    parse_query(q)     -> SeedQuery           (MATCH form or codebook form, cached)

This module only sends text to a reader. First the caps of
:mod:`memnet.gql.caps` (length, nesting depth, and for text lark reads the
token count) raise :class:`~memnet.errors.InputTooLarge`. Then text in the
usual forms is read by a direct reader (:mod:`memnet.gql.fast` for a Δ and the
MATCH form, :mod:`memnet.gql.codebook` for the token form); lark
(:mod:`memnet.gql.grammar`, one LALR grammar in ``memnet.lark`` with the start
rules ``delta``, ``seed`` and ``codebook``) parses only what they do not
accept, to say what is wrong and where. Every other failure is a
:class:`~memnet.errors.GQLSyntaxError` with a 1-based line and column.

What every reader shares is public and lives apart: the builder of an
``INSERT`` and the rules on variables (:mod:`memnet.gql.build`), the value
decoders (:mod:`memnet.gql.literals`), the failure and its context
(:mod:`memnet.gql.failure`) and the name checks (:mod:`memnet.gql.names`).

The codebook form also reads ``key~value`` (``title~'pricing page'``) as a
CONTAINS pair; that is how :func:`memnet.gql.emit.format_query` renders one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..errors import GQLSyntaxError, InputTooLarge
from . import fast
from .ast import Delta, SeedQuery
from .caps import (
    MAX_DELTA_CHARS,
    MAX_DELTA_TOKENS,
    MAX_DEPTH,
    MAX_QUERY_CHARS,
    check_caps,
    check_length,
    check_size,
    check_tokens,
)
from .emit import MATCH_WORD, plain_word
from .failure import context, line_column

_LEAD_RE = re.compile(r"(?:\s++|//[^\n]*+|/\*[\s\S]*?\*/)*+")


def _first_word_is_match(text: str) -> bool:
    """True when the first word after whitespace and comments is MATCH (any case)."""
    lead = _LEAD_RE.match(text)
    return lead is not None and MATCH_WORD.match(text, lead.end()) is not None


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
    check_size(text, MAX_DELTA_CHARS)
    result = fast.read_delta(text)
    if not isinstance(result, int):
        return result
    try:
        check_tokens(text)
    except InputTooLarge:
        at = result
        line, column = line_column(text, at)
        raise GQLSyntaxError(
            f"the Δ does not parse at {_describe_at(text, at)} (in a Δ this large only the "
            "place is named; send the part around it alone for the full message)",
            line=line,
            column=column,
            context=context(text, at),
        ) from None
    lark_result: Delta = _run(text, "delta")
    return lark_result


_NAME_AT = re.compile(r"[A-Za-z0-9_]++")


def _describe_at(text: str, offset: int) -> str:
    word = _NAME_AT.match(text, offset)
    if word is not None:
        return repr(word.group()[:30])
    return f"character {text[offset]!r}" if offset < len(text) else "the end of input"


def _parse_match(text: str) -> SeedQuery:
    check_caps(text, MAX_QUERY_CHARS)
    direct = fast.fast_seed(text)  # lark only for what the direct reader leaves
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
    check_caps(q, MAX_QUERY_CHARS)
    from .codebook import direct_codebook  # imported now: a MATCH query or a Δ never needs it

    direct = direct_codebook(q)
    if direct is not None:
        return direct
    result: SeedQuery = _run(q, "codebook")
    return result


def parse_query(q: str) -> SeedQuery:
    """Parse a Recall query: the MATCH form when its first word is MATCH
    (any case), otherwise the codebook token form. Blank ``q`` → ``SeedQuery()``."""
    q = _require_text(q)
    check_length(q, MAX_QUERY_CHARS)  # do not let oversized text into the cache
    return _parse_query_cached(q)


def parse(text: str) -> Delta | SeedQuery:
    """Parse GQL text: a MATCH query (first word MATCH, after any comments) →
    :class:`SeedQuery` under the query cap; anything else → :class:`Delta` under
    the Δ cap."""
    text = _require_text(text)
    check_length(text, MAX_DELTA_CHARS)
    if _first_word_is_match(text):
        return _parse_match(text)
    return parse_delta(text)


__all__ = [
    "MAX_DELTA_CHARS",
    "MAX_DELTA_TOKENS",
    "MAX_DEPTH",
    "MAX_QUERY_CHARS",
    "parse",
    "parse_delta",
    "parse_query",
]
