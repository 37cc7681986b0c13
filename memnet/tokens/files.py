"""The files of the per-user cache: where they live, and the hashed table
layout the token ranks and the piece counts are kept in."""

from __future__ import annotations

import os
import sys
import zlib
from array import array
from collections.abc import Callable
from typing import Any


def cache_dir() -> str | None:
    """Where MemNet keeps its per-user caches: ``$MEMNET_CACHE_DIR`` (empty:
    none), else ``$XDG_CACHE_HOME/memnet``, else ``~/.cache/memnet``."""
    env = os.environ.get("MEMNET_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memnet")


def write_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (through a file beside it)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# A hashed table file (the ranks, the pieces): magic, CRC-32 of the rest, then
# the key count n and the slot count m (a power of two, at least 2n), m
# little-endian u32 slots (0: empty, else 1 + the offset of an entry) in which
# a key sits at crc32(key) mod m or the first free slot after it, then the
# entries: the key's length less one (a byte), its bytes, its value (``width``
# bytes, little-endian).
_HEAD = 13  # magic (5) + CRC (4) + n (4); m follows


def read_table(
    path: str,
    magic: bytes,
    width: int,
) -> tuple[Callable[[bytes], int | None], int] | None:
    """``(lookup, keys)`` over a table file, or None when it is missing or
    damaged. The file is mapped, not read: a lookup touches a slot and an
    entry."""
    import mmap

    try:
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, or empty
        return None
    sizes = table_sizes(mm, magic)
    if sizes is None:
        return None
    n, m = sizes
    lo = _HEAD + 4
    slots: Any
    if sys.byteorder == "little":
        slots = memoryview(mm)[lo : lo + 4 * m].cast("I")
    else:  # pragma: no cover - no big-endian machine at hand
        slots = array("I", mm[lo : lo + 4 * m])
        slots.byteswap()
    base = lo + 4 * m  # entry offsets count from here
    mask = m - 1
    crc = zlib.crc32

    def lookup(key: bytes) -> int | None:
        h = crc(key) & mask
        while True:
            at = slots[h]
            if not at:
                return None
            at += base - 1
            end = at + 2 + mm[at]
            if mm[at + 1 : end] == key:
                return int.from_bytes(mm[end : end + width], "little")
            h = (h + 1) & mask

    return lookup, n


def table_sizes(buf: Any, magic: bytes) -> tuple[int, int] | None:
    """``(keys, slots)`` of the table file held in ``buf`` (bytes or a map of
    it), or None when its magic, checksum or slot count is wrong."""
    if (
        buf[:5] != magic
        or len(buf) < _HEAD + 4
        or zlib.crc32(memoryview(buf)[9:]) != int.from_bytes(buf[5:9], "big")
    ):
        return None
    m = int.from_bytes(buf[_HEAD : _HEAD + 4], "little")
    if m <= 0 or m & (m - 1) or len(buf) < _HEAD + 4 + 4 * m:
        return None
    return int.from_bytes(buf[9:_HEAD], "big"), m


def table_items(path: str, magic: bytes, width: int) -> dict[bytes, int]:
    """Every entry of a table file (none when it is missing or damaged)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    sizes = table_sizes(raw, magic)
    if sizes is None:
        return {}
    at = _HEAD + 4 + 4 * sizes[1]
    out: dict[bytes, int] = {}
    end = len(raw)
    while at < end:
        k = at + 2 + raw[at]
        out[raw[at + 1 : k]] = int.from_bytes(raw[k : k + width], "little")
        at = k + width
    return out


def write_table(
    path: str, magic: bytes, items: dict[bytes, int], width: int, ordered: bool = False
) -> None:
    """Write a table file atomically; one that cannot be written is skipped
    (keys longer than 256 bytes, or none, are not cached). The entries lie in
    the order of ``items`` when ``ordered``, else by value and key."""
    if any(not 0 < len(t) <= 256 for t in items) or not items:
        return
    m = 1 << (2 * len(items) - 1).bit_length()
    slots = array("I", bytes(4 * m))
    blob = bytearray()
    mask = m - 1
    for tok, r in (
        items.items() if ordered else sorted(items.items(), key=lambda kv: (kv[1], kv[0]))
    ):
        h = zlib.crc32(tok) & mask
        while slots[h]:
            h = (h + 1) & mask
        slots[h] = len(blob) + 1
        blob += bytes((len(tok) - 1,)) + tok + r.to_bytes(width, "little")
    if sys.byteorder != "little":
        slots.byteswap()
    body = len(items).to_bytes(4, "big") + m.to_bytes(4, "little") + slots.tobytes() + blob
    write_file(path, magic + zlib.crc32(body).to_bytes(4, "big") + body)
