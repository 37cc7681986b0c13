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


def _payload(data: bytes, where: bytes | str) -> memoryview:
    if len(data) < 4 or len(data) > MAX_RECORD:
        raise CabinetCorrupt(f"record {where!r} has an impossible size ({len(data)} bytes)")
    payload = memoryview(data)[4:]
    if zlib.crc32(payload) != _CRC.unpack_from(data)[0]:
        raise CabinetCorrupt(f"record {where!r} failed its checksum")
    return payload


def decode(raw: bytes, where: bytes | str = b"?") -> Any:
    """Check and unpack one msgpack record.

    msgpack bounds every string, binary, array and map length by the size of
    the buffer it is given, and records are capped at MAX_RECORD, so a record
    that lies about a length fails instead of allocating.
    """
    payload = _payload(raw, where)
    try:
        return msgpack.unpackb(payload, use_list=False)
    except Exception as e:  # msgpack raises several unrelated types
        raise CabinetCorrupt(f"record {where!r} does not decode: {e}") from None


# Edges are the most numerous records, so they get a fixed binary layout
# instead of msgpack: src, dst (u32), flags (bit 0 recycled, bit 1 has
# props), type length (u8), the type in ASCII, then msgpack props if any.
_EDGE = struct.Struct(">IIBB")


def encode_edge(etype: str, src: int, dst: int, props: Any, recycled: bool) -> bytes:
    t = etype.encode("ascii")
    flags = (1 if recycled else 0) | (2 if props else 0)
    payload = _EDGE.pack(src, dst, flags, len(t)) + t
    if props:
        payload += msgpack.packb(props, use_bin_type=True, default=_default)
    return _CRC.pack(zlib.crc32(payload)) + payload


def decode_edge(raw: bytes, where: bytes | str = b"?",
                types: dict[bytes, str] | None = None) -> tuple[str, int, int, Any, bool]:
    """``(type, src, dst, props, recycled)`` of one edge record."""
    payload = _payload(raw, where)
    try:
        src, dst, flags, tlen = _EDGE.unpack_from(payload)
        tb = bytes(payload[10:10 + tlen])
        if types is not None:
            etype = types.get(tb)
            if etype is None:
                etype = types[tb] = tb.decode("ascii")
        else:
            etype = tb.decode("ascii")
        props = msgpack.unpackb(payload[10 + tlen:], use_list=False) if flags & 2 else None
    except Exception as e:
        raise CabinetCorrupt(f"edge record {where!r} does not decode: {e}") from None
    if len(tb) != tlen:
        raise CabinetCorrupt(f"edge record {where!r} is truncated")
    return etype, src, dst, props, bool(flags & 1)


__all__ = ["CATALOG", "EDGES", "FORMAT_VERSION", "LOG", "META", "NODES", "TABLES", "decode",
           "decode_edge", "element_key", "encode", "encode_edge", "key_id", "prefix", "sid_key"]
