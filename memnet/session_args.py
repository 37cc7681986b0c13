"""What a :class:`~memnet.session.Session` refuses before any work: a Δ
that is not one, recall knobs out of range, session settings that could not
work. Each check raises the error the caller sees (the order of the checks is
the order of the errors)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .commit import Caps
from .errors import EchoRefused, InvalidArgument, NotADelta, QueryError
from .gql import ast
from .gql.parse import parse_query
from .limits import LIMITS
from .recall.delta import check_etag
from .recall.lines import VIEWS
from .tokens import TOKENIZERS

_DELTA_ANSWER = re.compile(r"\s*// (?:delta|unchanged) v=")


# Absorb is a join with its own guard, never goldfish writeback
_SLICE_NOT_DELTA = (
    "Commit takes a GQL Δ; a working-memory slice is joined with "
    "memnet.import_slice (Absorb), not committed"
)


def _not_text(delta: object) -> None:
    """Refuse a Δ that is neither text nor a parsed Delta: a slice (a
    mapping, or an object with a provenance) is ``not_a_delta``; anything
    else ``invalid_argument``, saying what Commit takes."""
    if isinstance(delta, Mapping) or getattr(delta, "provenance", None) is not None:
        raise NotADelta(_SLICE_NOT_DELTA)
    if isinstance(delta, (bytes, bytearray, memoryview)):
        raise InvalidArgument(
            "Commit takes the Δ as text (str), not bytes: decode it first, "
            "e.g. data.decode('utf-8')"
        )
    raise InvalidArgument(
        f"Commit takes a GQL Δ as text (str) or a parsed memnet Delta, not {type(delta).__name__}"
    )


def check_range(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise QueryError(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
    return value


def check_options(
    caps: Caps | None, delete_on_settle: Any, history_limit: Any, tokenizer: Any
) -> None:
    """Refuse session settings that could not work (``invalid_argument``), before
    a session is made or a cabinet stores them."""
    if caps is not None:
        if not isinstance(caps, Caps):
            raise InvalidArgument(f"caps must be a memnet.Caps, not {type(caps).__name__}")
        for what in ("rows", "bytes"):
            v = getattr(caps, what)
            if type(v) is not int or v < 1:
                raise InvalidArgument(
                    f"caps.{what} must be a whole number of at least 1, not {v!r}"
                )
    if type(delete_on_settle) is not bool:
        raise InvalidArgument(f"delete_on_settle must be true or false, not {delete_on_settle!r}")
    if history_limit is not None and (type(history_limit) is not int or history_limit < 0):
        raise InvalidArgument(
            "history_limit must be None (keep all) or a whole number of at "
            f"least 0, not {history_limit!r}"
        )
    if tokenizer not in TOKENIZERS:
        raise InvalidArgument(f"unknown tokenizer {tokenizer!r}; known: {', '.join(TOKENIZERS)}")


def check_delta(delta: object) -> None:
    """Refuse what Commit cannot take: not text nor a parsed Delta, a slice,
    or a delta Recall answer pasted back."""
    if not isinstance(delta, (str, ast.Delta)):
        _not_text(delta)
    if isinstance(delta, str) and delta.lstrip().startswith("{"):
        raise NotADelta(_SLICE_NOT_DELTA)
    if isinstance(delta, str) and _DELTA_ANSWER.match(delta):
        # its DELETE lists rows that left a Shape, not rows to recycle
        raise EchoRefused(
            "this is a delta Recall answer, not a Commit: nothing was "
            "applied; write your own SET or INSERT with its handles"
        )


def recall_args(
    q: Any,
    k: Any,
    max_rows: Any,
    limit: Any,
    fanout: Any,
    view: Any,
    laws: Any,
    since: Any,
    max_tokens: Any,
) -> tuple[ast.SeedQuery, tuple[Any, ...]]:
    """The parsed q and the checked knobs ``(k, max_rows, limit, fanout,
    view, laws, max_tokens)`` of a Recall (see :meth:`Session.recall`)."""
    k = check_range("k", k, 0, LIMITS.k_max)
    if max_rows is not None:
        max_rows = check_range("max_rows", max_rows, 1, LIMITS.max_rows_max)
    if limit is not None:
        limit = check_range("limit", limit, 1, LIMITS.limit_max)
    fanout = check_range("fanout", fanout, 1, LIMITS.fanout_max)
    if view not in VIEWS:
        raise QueryError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    if type(laws) is not bool:
        raise QueryError(f"laws must be true or false, got {laws!r}")
    if not isinstance(q, (str, ast.SeedQuery)):
        raise QueryError(
            f"q must be text (codebook tokens or the MATCH form), got {type(q).__name__}"
        )
    if max_tokens is not None:
        max_tokens = check_range(
            "max_tokens", max_tokens, LIMITS.max_tokens_min, LIMITS.max_tokens_max
        )
    if max_rows is None:  # a token budget is the bound unless rows are asked for too
        max_rows = LIMITS.max_rows if max_tokens is None else LIMITS.max_rows_max
    if since is not None:
        check_etag(since)
    sq = parse_query(q) if isinstance(q, str) else q
    if sq.limit is not None:
        limit = check_range("LIMIT", sq.limit, 1, LIMITS.limit_max)
    return sq, (k, max_rows, limit, fanout, view, laws, max_tokens)


__all__ = ["check_delta", "check_options", "check_range", "recall_args"]
