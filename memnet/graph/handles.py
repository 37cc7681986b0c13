"""Handles: the names of nodes and edges, minted from their ids.

A handle (``na1``, ``eb2f``) is an id written in base 36 behind a prefix and
a length letter; handles are minted, never chosen by a client, and never
reused (a recycled element keeps its handle).
"""

from __future__ import annotations

import re

# A handle is a prefix (n: node, e: edge), one letter giving the length of the
# base-36 id (a = 1 ... i = 9), then the id: na1, nb1a, ec2zz. The length
# letter keeps handles out of the way of the variable names people write
# (n1, n12, node, next, task1, e2 are never handles), so a client variable
# cannot silently name an existing element.
_HANDLE = re.compile(r"([ne])([a-i])([1-9a-z][0-9a-z]{0,8})\Z")
_LEN = "abcdefghi"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


_PAIRS = [a + b for a in _DIGITS for b in _DIGITS]  # "00" .. "zz"
_SHORT = [p.lstrip("0") or "0" for p in _PAIRS]  # 0 .. 1295 without leading zeros
# the handle prefix of an id of 3 or 4 base-36 digits, by its leading pair
_N_HEAD = [f"n{_LEN[len(p) + 1]}{p}" for p in _SHORT]
_E_HEAD = [f"e{_LEN[len(p) + 1]}{p}" for p in _SHORT]
_N_SHORT = [f"n{_LEN[len(p) - 1]}{p}" for p in _SHORT]
_E_SHORT = [f"e{_LEN[len(p) - 1]}{p}" for p in _SHORT]
#: the handle of an id ``i`` from 1,296 to 36**4 is ``HANDLE_HEADS[prefix][i //
#: 1296] + HANDLE_TAILS[i % 1296]``
HANDLE_HEADS = {"n": _N_HEAD, "e": _E_HEAD}
HANDLE_TAILS = _PAIRS


def b36(n: int) -> str:
    if n < 1296:
        return _SHORT[n]
    out = []
    while n:
        n, r = divmod(n, 1296)
        out.append(_PAIRS[r])
    return "".join(reversed(out)).lstrip("0")


def text_bytes(s: str) -> int:
    """UTF-8 size of ``s`` (ASCII strings are counted without encoding)."""
    return len(s) if s.isascii() else len(s.encode())


def node_handle(nid: int) -> str:
    # ids below 36**4 (1.7 million) are two table reads; they are most handles
    if nid < 1296:
        return _N_SHORT[nid]
    if nid < 1679616:
        hi, lo = divmod(nid, 1296)
        return _N_HEAD[hi] + _PAIRS[lo]
    d = b36(nid)
    return f"n{_LEN[len(d) - 1]}{d}"


def edge_handle(eid: int) -> str:
    if eid < 1296:
        return _E_SHORT[eid]
    if eid < 1679616:
        hi, lo = divmod(eid, 1296)
        return _E_HEAD[hi] + _PAIRS[lo]
    d = b36(eid)
    return f"e{_LEN[len(d) - 1]}{d}"


def parse_handle(text: str) -> tuple[str, int] | None:
    """``'naa'`` → ``('n', 10)``; None when ``text`` is not handle-shaped."""
    # the pattern _HANDLE, spelt out: this runs for every name a Δ uses
    n = _LEN.find(text[1:2]) if len(text) > 2 else -1
    if n < 0 or len(text) != n + 3 or text[0] not in ("n", "e"):
        return None
    digits = text[2:]
    if (
        digits[0] == "0"
        or not digits.isascii()
        or not digits.isalnum()
        or (not digits.islower() and not digits.isdigit())
    ):
        return None
    return text[0], int(digits, 36)


__all__ = [
    "HANDLE_HEADS",
    "HANDLE_TAILS",
    "b36",
    "edge_handle",
    "node_handle",
    "parse_handle",
    "text_bytes",
]
