"""The checks a Commit makes on every name and value a Δ writes (SPEC §4)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..errors import CommitRejected
from ..gql import ast
from ..values import has_lone_surrogate, props_text

MAX_STRING = 1 << 20  # one property value
MAX_LIST = 4096  # items in a list value
MAX_PROPS = 256  # properties on one element
MAX_LABELS = 64  # labels on one node, its kind included
# distinct names one session holds (recycled elements' included); a Δ may
# bring as many new ones as the session has room for, and no more
MAX_KINDS = 256
MAX_LABEL_NAMES = 4096  # extra labels
MAX_EDGE_TYPES = 256
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


def differs(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether two property maps print differently. Python's ``==`` would call
    ``1``, ``1.0`` and ``True`` equal; the canonical text does not."""
    if not old:
        return bool(new)
    return old.keys() != new.keys() or props_text(old) != props_text(new)


def check_value(v: Any, where: ast.Pos) -> None:
    if isinstance(v, tuple):
        if len(v) > MAX_LIST:
            raise CommitRejected(
                f"a list holds more than {MAX_LIST} items", line=where.line, column=where.column
            )
        for x in v:
            check_value(x, where)
        # the cap on one value's text holds for a list as for a string
        if sum(len(x) for x in v if isinstance(x, str)) > MAX_STRING:
            raise CommitRejected(
                f"the strings of a list value hold more than {MAX_STRING} characters",
                line=where.line,
                column=where.column,
            )
        return
    if isinstance(v, int) and not isinstance(v, bool) and not INT_MIN <= v <= INT_MAX:
        raise CommitRejected(
            "integers must fit in 64 bits (-2**63 .. 2**63-1)", line=where.line, column=where.column
        )
    if isinstance(v, float) and not math.isfinite(v):
        raise CommitRejected(
            "NaN and infinite numbers cannot be stored", line=where.line, column=where.column
        )
    if isinstance(v, str):
        if len(v) > MAX_STRING:
            raise CommitRejected(
                f"a string value is longer than {MAX_STRING} characters",
                line=where.line,
                column=where.column,
            )
        if has_lone_surrogate(v):
            raise CommitRejected(
                "a string holds a lone surrogate (not valid Unicode text)",
                line=where.line,
                column=where.column,
            )
    if not isinstance(v, (str, int, float, bool, tuple)):
        raise CommitRejected(
            f"bad value type {type(v).__name__}", line=where.line, column=where.column
        )


def check_props(props: ast.Props, where: ast.Pos) -> dict[str, Any]:
    if len(props) > MAX_PROPS:
        raise CommitRejected(
            f"more than {MAX_PROPS} properties on one element", line=where.line, column=where.column
        )
    out: dict[str, Any] = {}
    for k, v in props:
        check_name(KEY, k, "property key", where)
        check_value(v, where)
        out[k] = v
    return out


LABEL = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
NICK = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


_GOOD: dict[re.Pattern[str], set[str]] = {LABEL: set(), KEY: set(), NICK: set()}


def check_name(pattern: re.Pattern[str], value: object, what: str, pos: ast.Pos) -> None:
    # the parser only yields good names; a Delta built by hand may not
    good = _GOOD[pattern]
    if type(value) is str and value in good:
        return
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise CommitRejected(f"bad {what} {value!r}", line=pos.line, column=pos.column)
    if len(good) >= 1 << 14:
        good.clear()
    good.add(value)
