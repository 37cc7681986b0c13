"""Reading what a command is given (a file, a device, a pipe, stdin) in
bounded chunks.

A Δ or a slice has a size cap; whatever names it (``commit work /dev/zero``,
``absorb --slice big.json``, ``commit work < /dev/zero``) is read a chunk at a
time and refused with ``input_too_large`` as soon as it passes the cap, so no
input makes a command hold more than the cap and one chunk. A regular file
whose size already says it is too large is refused before a byte is read.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from typing import IO, Any

from ..errors import InputTooLarge, PathNotFound

CHUNK = 1 << 20  # bytes (or characters) asked for per read


def read_capped(
    f: IO[Any], cap: int, what: str, progress: Callable[[int], None] | None = None, *, why: str = ""
) -> bytes | str:
    """All of ``f`` (binary or text), at most ``cap`` bytes or characters;
    past the cap, :class:`~memnet.errors.InputTooLarge` (``length`` is how
    much had been read by then: at least ``cap + 1``; ``why`` ends the
    message)."""
    parts: list[Any] = []
    total = 0
    while True:
        chunk = f.read(min(CHUNK, cap + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        if total > cap:
            raise InputTooLarge(
                f"{what} is more than {cap:,} {_unit(chunk)}"
                + (f" ({why})" if why else "; that is the cap"),
                length=total,
                cap=cap,
            )
        if progress is not None:
            progress(total)
    if not parts:
        return "" if isinstance(f, io.TextIOBase) else b""
    return "".join(parts) if isinstance(parts[0], str) else b"".join(parts)


def open_capped(
    path: str,
    cap: int,
    what: str,
    *,
    why: str = "",
) -> tuple[IO[bytes], int | None]:
    """``path`` opened for binary reading and its size when it is a regular
    file (None for a device, a pipe or a socket), refused with
    ``input_too_large`` before any read when that size passes ``cap``. An
    ``OSError`` is the caller's to report (``os_error``)."""
    if not path or "\x00" in path:
        raise PathNotFound(
            f"{what} names no file (an empty name, or one holding a NUL)", path=path[:200]
        )
    f = open(path, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    try:
        st = os.fstat(f.fileno())
        size = st.st_size if stat.S_ISREG(st.st_mode) else None
        if size is not None and size > cap:
            raise InputTooLarge(
                f"{what} is {size:,} bytes" + (f" ({why})" if why else f"; the cap is {cap:,}"),
                length=size,
                cap=cap,
            )
    except BaseException:
        f.close()
        raise
    return f, size


def _unit(chunk: object) -> str:
    return "characters" if isinstance(chunk, str) else "bytes"


__all__ = ["CHUNK", "open_capped", "read_capped"]
