"""Values: what a property holds, its one text form and its order.

Every layer shares this: the graph store keeps values, the GQL parser reads
them, the emitter writes them, the cabinet stores them, and everything MemNet
emits is ordered by their text. It imports nothing else of MemNet but the
error root.

A *value* is a scalar (``str``, ``int``, ``float``, ``bool``) or a tuple of
scalars (a GQL list). Its canonical text is the GQL literal:

* strings single-quoted with ``\\\\``, ``\\'``, ``\\n``, ``\\r``, ``\\t`` escapes
  and ``\\uXXXX`` for other control characters (below U+0020, U+007F) and lone
  surrogates; every other character as itself;
* ints in decimal, floats by ``repr`` (always with ``.`` or an exponent),
  bools ``true``/``false``, tuples as ``[a, b]``.

NaN, infinities, nested lists and other types raise
:class:`~memnet.errors.InvalidArgument`.

The observable key of a node, ``KIND \\x1f LABEL&LABEL \\x1f k: v, k2: v2`` with
keys sorted, orders nodes by what a reader sees: two nodes that print the same
sort the same.

Example::

    >>> format_value(("a", 1, 2.0, True))
    "['a', 1, 2.0, true]"
    >>> props_text({"title": "x", "prio": 2})
    "prio: 2, title: 'x'"
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from .errors import InvalidArgument

Scalar = str | int | float | bool
Value = Scalar | tuple[Scalar, ...]
Props = tuple[tuple[str, Value], ...]

SEP = "\x1f"

_NEEDS_ESCAPE = re.compile(r"[\\'\x00-\x1f\x7f\ud800-\udfff]")
#: a lone surrogate: a code point that no UTF-8 text holds (often a byte that
#: was not UTF-8, decoded with surrogateescape)
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(s: str) -> bool:
    """Whether ``s`` holds a lone surrogate, so is not valid Unicode text."""
    return not s.isascii() and LONE_SURROGATE.search(s) is not None


_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def quote(s: str) -> str:
    """A string as a single-quoted GQL literal."""
    if _NEEDS_ESCAPE.search(s) is None:
        return f"'{s}'"
    return "'" + _NEEDS_ESCAPE.sub(_escape_char, s) + "'"


def scalar_text(v: Any) -> str:
    """One scalar as GQL text."""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InvalidArgument(f"cannot emit non-finite float {v!r}")
        text = repr(float(v))
        if "." not in text and "e" not in text and "E" not in text:
            text += ".0"
        return text
    raise InvalidArgument(f"cannot emit a value of type {type(v).__name__}")


def format_value(v: Value) -> str:
    """One value as GQL text: a scalar or a flat list of scalars."""
    if isinstance(v, (tuple, list)):
        parts = []
        for x in v:
            if isinstance(x, (tuple, list)):
                raise InvalidArgument("lists hold scalars only (no nested lists)")
            parts.append(scalar_text(x))
        return "[" + ", ".join(parts) + "]"
    return scalar_text(v)


def props_text(props: Mapping[str, Value] | None) -> str:
    """Canonical text of a property map: keys sorted, GQL value syntax."""
    if not props:
        return ""
    return ", ".join(f"{k}: {format_value(props[k])}" for k in sorted(props))


def node_key(kind: str, labels: tuple[str, ...], props: Mapping[str, Value] | None) -> str:
    """The observable sort key of a node (nickname and handle excluded)."""
    return f"{kind}{SEP}{'&'.join(labels)}{SEP}{props_text(props)}"


__all__ = [
    "LONE_SURROGATE",
    "Props",
    "SEP",
    "Scalar",
    "Value",
    "format_value",
    "has_lone_surrogate",
    "node_key",
    "props_text",
    "quote",
    "scalar_text",
]
