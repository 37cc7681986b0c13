"""The caps on GQL text, checked with linear scans before any reader sees it.

The length (:data:`MAX_DELTA_CHARS` for a Δ, :data:`MAX_QUERY_CHARS` for a
query), the nesting depth of ``( [ {`` outside strings and comments
(:data:`MAX_DEPTH`) and, for text lark reads, the number of tokens
(:data:`MAX_DELTA_TOKENS`). Each raises :class:`~memnet.errors.InputTooLarge`;
text holding a lone surrogate is a :class:`~memnet.errors.GQLSyntaxError`.
"""

from __future__ import annotations

import re
from itertools import accumulate
from operator import sub

from ..errors import GQLSyntaxError, InputTooLarge
from ..values import LONE_SURROGATE

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

# A string (or, unterminated, the rest of the text) or a comment: what the depth
# scan skips. Every quantifier is possessive or lazy-to-a-literal: linear time.
_SKIP_RE = re.compile(
    r"'(?:[^'\\]++|\\[\s\S]|'')*+'|//[^\n]*+|/\*[\s\S]*?\*/|'[\s\S]*+|/\*[\s\S]*+"
)
_NOT_BRACKET_RE = re.compile(r"[^()\[\]{}]++")
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def nesting_depth(text: str) -> int:
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


def check_length(text: str, max_chars: int) -> None:
    """The length cap alone (before anything else looks at the text)."""
    if len(text) > max_chars:
        raise InputTooLarge(
            f"input is {len(text)} characters; the cap is {max_chars}",
            length=len(text),
            cap=max_chars,
        )


def check_size(text: str, max_chars: int) -> None:
    """The length and depth caps, and no lone surrogate."""
    check_length(text, max_chars)
    if not text.isascii():
        m = LONE_SURROGATE.search(text)
        if m is not None:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise GQLSyntaxError(
                "the text holds a lone surrogate (not valid Unicode)", line=line, column=col
            )
    if nesting_depth(text) > MAX_DEPTH:
        raise InputTooLarge(f"input nests ( [ {{ deeper than {MAX_DEPTH}", cap=MAX_DEPTH)


def check_tokens(text: str) -> None:
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


def check_caps(text: str, max_chars: int) -> None:
    """Every cap: :func:`check_size`, then :func:`check_tokens`."""
    check_size(text, max_chars)
    check_tokens(text)


__all__ = [
    "MAX_DELTA_CHARS",
    "MAX_DELTA_TOKENS",
    "MAX_DEPTH",
    "MAX_QUERY_CHARS",
    "check_caps",
    "check_length",
    "check_size",
    "check_tokens",
    "nesting_depth",
]
