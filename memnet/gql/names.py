"""The dialect's names, checked where code (not text) supplies them.

A variable or property key is ``[A-Za-z_][A-Za-z0-9_]*`` (a variable of the
form ``_anonN`` is reserved for anonymous node patterns), a kind, label or
edge type is ``[A-Z][A-Z0-9_]*`` and a nick is ``[a-z0-9][a-z0-9_-]*``. The
emitter (:mod:`memnet.gql.emit`) and the bulk path of Commit
(:mod:`memnet.commit.bulk`) check with these functions, so nothing they write
fails to parse; each raises :class:`~memnet.errors.InvalidArgument` (a
ValueError) and returns the name when it is good::

    >>> check_label("TSK")
    'TSK'
"""

from __future__ import annotations

import re

from ..errors import InvalidArgument

#: a variable or property key
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: variables the parser gives anonymous node patterns (refused from users)
ANON_RE = re.compile(r"_anon[0-9]+")
#: a kind, label or edge type
LABEL_RE = re.compile(r"[A-Z][A-Z0-9_]*")
#: a nick, without its ``#``
NICK_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")


def check_name(s: str, what: str) -> str:
    """``s`` when it is a name (``what`` says what it names in the message)."""
    if not isinstance(s, str) or NAME_RE.fullmatch(s) is None:
        raise InvalidArgument(f"{what} {s!r} is not a name ([A-Za-z_][A-Za-z0-9_]*)")
    return s


def check_var(s: str) -> str:
    """``s`` when it is a variable a user may write."""
    check_name(s, "variable")
    if ANON_RE.fullmatch(s):
        raise InvalidArgument(f"variable {s!r} is reserved for anonymous nodes")
    return s


def check_label(s: str, what: str = "label") -> str:
    """``s`` when it is a kind, label or edge type."""
    if not isinstance(s, str) or LABEL_RE.fullmatch(s) is None:
        raise InvalidArgument(f"{what} {s!r} is not upper case ([A-Z][A-Z0-9_]*)")
    return s


def check_nick(s: str) -> str:
    """``s`` when it is a nick (without its ``#``)."""
    if not isinstance(s, str) or NICK_RE.fullmatch(s) is None:
        raise InvalidArgument(f"nick {s!r} is not [a-z0-9][a-z0-9_-]*")
    return s


__all__ = [
    "ANON_RE",
    "LABEL_RE",
    "NAME_RE",
    "NICK_RE",
    "check_label",
    "check_name",
    "check_nick",
    "check_var",
]
