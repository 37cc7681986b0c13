"""Session ids: a storage boundary, checked with a full match.

Session ids are joined into storage keys, so nothing but
``[a-z0-9][a-z0-9-]{0,63}`` (ASCII) may ever reach a key builder.
"""

from __future__ import annotations

import re

from .errors import InvalidSessionId

_SID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}", re.ASCII)


def check_session_id(sid: object) -> str:
    """Return ``sid`` when it is a valid session id, else raise InvalidSessionId."""
    if not isinstance(sid, str) or _SID.fullmatch(sid) is None:
        raise InvalidSessionId(
            f"invalid session id {sid!r}: use 1-64 characters from a-z, 0-9 and '-', "
            "starting with a letter or digit"
        )
    return sid


__all__ = ["check_session_id"]
