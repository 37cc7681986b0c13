"""Value tokens → values: the dialect's strings, numbers and booleans.

Every reader decodes a literal with these, so a string reads the same through
lark, the direct readers and the codebook form. :func:`decode_text` is the
quiet form (None for text it refuses, for the direct readers, which then let
lark say why); the others take a token and raise
:class:`~memnet.gql.failure.SyntaxFail` at the exact character::

    >>> decode_text("it''s\\\\n")
    "it's\\n"
"""

from __future__ import annotations

import re

from ..values import has_lone_surrogate
from .ast import Value
from .failure import Token, fail_at

# matches up to (and including) the first backslash that starts no valid escape
_BAD_ESCAPE_RE = re.compile(r"(?:[^\\]++|\\(?:[\\'nrt]|u[0-9A-Fa-f]{4}))*+\\")
# an escape (kept for the codec) or a doubled quote (folded to one)
_QUOTE_PAIR_RE = re.compile(r"(\\[\s\S])|(')'")
_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|[\s\S])")


def decode_string(tok: Token) -> str:
    """The value of a quoted string token (or of a codebook pair ending in one).

    Only C-level passes: a possessive regex finds the first bad escape, a template
    substitution folds doubled quotes, and the escapes themselves (a subset of
    Python's) are decoded by the ``unicode_escape`` codec, with every character
    beyond Latin-1 first written as its own ``\\u``/``\\U`` escape."""
    text = str(tok)
    quote = text.index("'")
    inner = text[quote + 1 : -1]
    value = decode_text(inner)
    if value is not None:
        return value
    bad = _BAD_ESCAPE_RE.match(inner)
    if bad is None:  # the escapes are known: one names half a surrogate pair
        _surrogate_error(tok, inner, quote + 1)
    assert bad is not None
    at = bad.end() - 1
    esc = inner[at + 1 : at + 2]
    if esc == "u":
        raise fail_at(tok, "\\u needs four hex digits", quote + 1 + at)
    shown = repr(esc)[1:-1]
    raise fail_at(
        tok,
        f"unknown escape \\{shown} in string (use \\\\, \\', \\n, \\r, \\t or \\uXXXX)",
        quote + 1 + at,
    )


def decode_text(inner: str) -> str | None:
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
    raise fail_at(
        tok,
        "a \\u escape names half of a surrogate pair, which is not a "
        "character (write the character itself)",
        at + (high or 0),
    )


def read_int(tok: Token) -> int:
    """The value of an INT token."""
    try:
        return int(str(tok))
    except ValueError:
        raise fail_at(tok, "integer literal is too long") from None


def read_float(tok: Token) -> float:
    """The value of a FLOAT token (infinite ones are refused)."""
    value = float(str(tok))
    if value in (float("inf"), float("-inf")):
        raise fail_at(tok, "number is out of range")
    return value


def read_scalar(tok: Token) -> Value:
    """The value of a STRING, INT, FLOAT, TRUE or FALSE token."""
    t = tok.type
    if t == "STRING":
        return decode_string(tok)
    if t == "INT":
        return read_int(tok)
    if t == "FLOAT":
        return read_float(tok)
    if t == "TRUE":
        return True
    if t == "FALSE":
        return False
    raise fail_at(tok, "expected a value")  # pragma: no cover - grammar prevents it


__all__ = ["decode_string", "decode_text", "read_float", "read_int", "read_scalar"]
