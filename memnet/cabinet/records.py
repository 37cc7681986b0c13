"""Record encoding for cabinets: keys from validated ids, checksummed msgpack.

Every value is ``crc32(payload) || payload`` where the payload is msgpack.
Decoding checks the checksum first and then unpacks with explicit size
limits, so a damaged or hostile record can cost neither memory nor a crash:
it becomes a :class:`~memnet.errors.CabinetCorrupt` error naming its key.

Keys are built here and only here, from a session id that has passed
:func:`~memnet.ids.check_session_id` and integer ids::

    <sid ascii> 0x00 <id as 8 bytes big-endian>

so one session's records are one contiguous key range, and no session id can
be a prefix of another's range (ids never contain 0x00).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import msgpack

from ..errors import CabinetCorrupt
from ..ids import check_session_id

FORMAT_VERSION = 1
MAX_RECORD = 256 * 1024 * 1024
_LIMITS = dict(max_str_len=64 * 1024 * 1024, max_bin_len=128 * 1024 * 1024,
               max_array_len=16 * 1024 * 1024, max_map_len=1024 * 1024)
_ID = struct.Struct(">Q")
_CRC = struct.Struct(">I")

# the fixed named tables of every cabinet
META, CATALOG, NODES, EDGES, LOG = "meta", "catalog", "nodes", "edges", "log"
TABLES = (META, CATALOG, NODES, EDGES, LOG)


def sid_key(sid: str) -> bytes:
    return check_session_id(sid).encode("ascii")


def prefix(sid: str) -> bytes:
    """The key prefix of every per-element record of ``sid``."""
    return sid_key(sid) + b"\x00"


def element_key(sid: str, n: int) -> bytes:
    if not 0 <= n < 1 << 63:
        raise ValueError(f"id out of range: {n}")
    return prefix(sid) + _ID.pack(n)


def key_id(key: bytes) -> int:
    """The integer id at the end of an element key."""
    return int(_ID.unpack_from(key, len(key) - 8)[0])


def _default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"cannot store {type(obj).__name__}")


def encode(obj: Any) -> bytes:
    payload = msgpack.packb(obj, use_bin_type=True, default=_default)
    return _CRC.pack(zlib.crc32(payload)) + payload


def decode(raw: bytes | memoryview, where: bytes | str = b"?") -> Any:
    data = bytes(raw)
    if len(data) < 4 or len(data) > MAX_RECORD:
        raise CabinetCorrupt(f"record {where!r} has an impossible size ({len(data)} bytes)")
    (crc,) = _CRC.unpack_from(data)
    payload = data[4:]
    if zlib.crc32(payload) != crc:
        raise CabinetCorrupt(f"record {where!r} failed its checksum")
    try:
        return msgpack.unpackb(payload, raw=False, use_list=False, strict_map_key=True,
                               **_LIMITS)
    except Exception as e:  # msgpack raises several unrelated types
        raise CabinetCorrupt(f"record {where!r} does not decode: {e}") from None


__all__ = ["CATALOG", "EDGES", "FORMAT_VERSION", "LOG", "META", "NODES", "TABLES", "decode",
           "element_key", "encode", "key_id", "prefix", "sid_key"]
