"""Record encoding for cabinets: keys from validated ids, checksummed msgpack.

Every value is ``crc32(key || payload) || payload`` where the payload is
msgpack: the checksum covers the key the record is stored under, so a record
proves both that its bytes are the ones written and that it was written under
that key (a damaged key, or a record found under another key, fails it).
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

import functools
import os
import struct
import threading
import zlib
from array import array
from typing import Any, TypeGuard

import msgpack

from ..errors import CabinetCorrupt
from ..graph.index import SHARDS, le_array, le_bytes, shard_of
from ..ids import check_session_id
from ..values import Value

# 2: edge chunks, stored postings; 3: props as bytes, index deltas; 4: checksums
# cover the key, text terms with identifier parts, stems and impact levels
# (memnet.graph.words), node records keep their Shape line's token count;
# 5: node chunk records beside the node records; 6: posting buckets by the index
# shard of their terms (the levels of a word together), keyed bucket first;
# 7: each session's birth record in the log (version 0) instead of a count of
# the sessions in the header
FORMAT_VERSION = 7
UPGRADABLE = (3, 4, 5, 6)  # formats Cabinet.upgrade rewrites in place
MAX_RECORD = 256 * 1024 * 1024
ID = struct.Struct(">Q")  # the id at the end of an element key
CRC = struct.Struct(">I")

# the fixed named tables of every cabinet
META, CATALOG, NODES, EDGES, LOG = "meta", "catalog", "nodes", "edges", "log"
POSTINGS = "postings"
TABLES = (META, CATALOG, NODES, EDGES, LOG, POSTINGS)


def new_token() -> str:
    """A random mark (128 bits as 32 hex digits) for a session's creation or
    a flush attempt; os.urandom, not uuid, which costs a fresh process the
    import of platform."""
    return os.urandom(16).hex()


def sid_key(sid: str) -> bytes:
    return check_session_id(sid).encode("ascii")


@functools.lru_cache(maxsize=1024)
def prefix(sid: str) -> bytes:
    """The key prefix of every per-element record of ``sid`` (remembered: a
    flush asks for it once per record)."""
    return sid_key(sid) + b"\x00"


def element_key(sid: str, n: int) -> bytes:
    if not 0 <= n < 1 << 63:
        raise ValueError(f"id out of range: {n}")
    return prefix(sid) + ID.pack(n)


def birth_key(sid: str) -> bytes:
    """The key of a session's birth record: its log at version 0, which no
    commit takes (written with its catalog row, deleted with it)."""
    return element_key(sid, 0)


def key_id(key: bytes) -> int:
    """The integer id at the end of an element key."""
    return int(ID.unpack_from(key, len(key) - 8)[0])


def _default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"cannot store {type(obj).__name__}")


def seal(key: bytes, payload: bytes) -> bytes:
    """``payload`` with its checksum, which covers ``key`` too."""
    return CRC.pack(zlib.crc32(payload, zlib.crc32(key))) + payload


class _Packers(threading.local):
    """One msgpack packer per thread (a packer holds a buffer while it packs;
    building one per record cost a flush more than the packing did)."""

    def __init__(self) -> None:
        self.packer = msgpack.Packer(use_bin_type=True, default=_default)


_PACKERS = _Packers()


def encode(obj: Any, key: bytes) -> bytes:
    """The record of ``obj`` stored under ``key``."""
    return seal(key, _PACKERS.packer.pack(obj))


def _payload(data: bytes, key: bytes) -> memoryview:
    if len(data) < 4 or len(data) > MAX_RECORD:
        raise CabinetCorrupt(f"record {key!r} has an impossible size ({len(data)} bytes)")
    payload = memoryview(data)[4:]
    if zlib.crc32(payload, zlib.crc32(key)) != CRC.unpack_from(data)[0]:
        raise CabinetCorrupt(
            f"record {key!r} failed its checksum (damaged, or not the "
            "record written under that key)"
        )
    return payload


def decode(raw: bytes, key: bytes) -> Any:
    """Check and unpack one msgpack record.

    msgpack bounds every string, binary, array and map length by the size of
    the buffer it is given, and records are capped at MAX_RECORD, so a record
    that lies about a length fails instead of allocating.
    """
    payload = _payload(raw, key)
    try:
        return msgpack.unpackb(payload, use_list=False)
    except Exception as e:  # msgpack raises several unrelated types
        raise CabinetCorrupt(f"record {key!r} does not decode: {e}") from None


# Edges are the most numerous elements, so they are stored by chunk: the
# record of chunk c holds edges c*EDGE_CHUNK .. c*EDGE_CHUNK+EDGE_CHUNK-1 (edge
# 0 does not exist) as columns: the first id, the chunk's type names, one type
# code per edge (u8, or u16 past 255 types), src and dst (u32 arrays), flags
# (bit 0 recycled) and the props of the edges that have any, by offset. A
# hydrate turns a chunk into the store's columns with a few C-level copies; a
# flush rewrites the chunks its changed edges fall in (bounded, whatever the
# session's size).
EDGE_CHUNK = 4096


def encode_edge_chunk(
    key: bytes,
    first: int,
    types: list[str],
    src: array[int],
    dst: array[int],
    flags: bytes | bytearray,
    props: dict[int, Any],
) -> bytes:
    """One chunk record of ``len(types)`` consecutive edges from id ``first``."""
    table: dict[str, int] = {}
    codes = [table.setdefault(t, len(table)) for t in types]
    wide = len(table) > 255
    code_bytes = le_bytes(array("H", codes)) if wide else bytes(codes)
    return encode(
        (
            first,
            tuple(table),
            wide,
            code_bytes,
            le_bytes(src),
            le_bytes(dst),
            bytes(flags),
            tuple(props.items()) if props else None,
        ),
        key,
    )


def decode_edge_chunk(
    raw: bytes,
    key: bytes,
) -> tuple[int, list[str], array[int], array[int], bytes, dict[int, Any]]:
    """``(first, types, src, dst, flags, props)`` of one edge chunk record,
    shape-checked (the caller checks the ids against the session)."""
    rec = decode(raw, key)
    try:
        first, table, wide, code_bytes, sb, db, flags, props = rec
        if not (
            type(first) is int
            and type(table) is tuple
            and type(wide) is bool
            and type(code_bytes) is bytes
            and type(sb) is bytes
            and type(db) is bytes
            and type(flags) is bytes
            and (props is None or type(props) is tuple)
            and all(type(t) is str and t for t in table)
        ):
            raise ValueError("bad field types")
        codes = le_array(code_bytes, "H") if wide else code_bytes
        n = len(flags)
        if not (len(codes) == n and len(sb) == len(db) == 4 * n and n):
            raise ValueError("columns of different lengths")
        if max(codes) >= len(table):
            raise ValueError("a type code is out of range")
        names = [table[c] for c in codes]
        if props and any(type(x) is not tuple or len(x) != 2 for x in props):
            raise ValueError("bad edge props")
        props = dict(props or ())
        if any(
            type(o) is not int or not 0 <= o < n or type(p) is not dict for o, p in props.items()
        ):
            raise ValueError("bad edge props")
        return first, names, le_array(sb), le_array(db), flags, props
    except (TypeError, ValueError) as e:
        raise CabinetCorrupt(f"edge chunk record {key!r} is malformed: {e}") from None


# Nodes are stored two ways under a session's prefix in the nodes table.
# A *chunk record* holds nodes c*NODE_CHUNK .. c*NODE_CHUNK+NODE_CHUNK-1 (node 0
# does not exist) as columns, under ``sid 0x00 0xFF c(u32)``: it sorts after
# every node record, whose key holds an id below 2**63. The catalog counts the
# chunk records (``nchunks``); chunks 0 .. nchunks-1 are all there and all
# full. A *node record* (``element_key``) holds one node and overrides that
# node's entry in its chunk: a flush writes the nodes it changed as node
# records, and the nodes past the last full chunk are node records too. A
# flush that completes a chunk's range writes the chunk instead and deletes
# its node records; once many nodes are overridden, a flush writes their
# chunks again. A hydrate decodes a chunk with one unpack and extends the
# store's columns with it, instead of a call per node.
NODE_CHUNK = 1024
_CHUNK_NO = struct.Struct(">I")
CHUNK_MARK = b"\xff"


def node_chunk_prefix(sid: str) -> bytes:
    return prefix(sid) + CHUNK_MARK


def node_chunk_key(sid: str, c: int) -> bytes:
    return prefix(sid) + CHUNK_MARK + _CHUNK_NO.pack(c)


def chunk_span(c: int) -> tuple[int, int]:
    """``(first, end)``: the node ids chunk ``c`` holds are first .. end-1."""
    return max(1, c * NODE_CHUNK), (c + 1) * NODE_CHUNK


def chunk_no(key: bytes, plen: int) -> int:
    """The chunk number in a chunk key (``plen``: the length of its prefix
    with the mark); a key of another shape is damage."""
    if len(key) != plen + 4:
        raise CabinetCorrupt(f"node chunk key {key!r} is malformed")
    return int(_CHUNK_NO.unpack_from(key, plen)[0])


def encode_node_chunk(key: bytes, first: int, recs: list[tuple[Any, ...]]) -> bytes:
    """One chunk record of the node records ``recs`` (each as ``is_node``
    describes, props as bytes) of consecutive ids from ``first``."""
    kinds, labels, props, nicks, recycled, keys, adjs, ltoks = zip(*recs, strict=True)
    table: dict[str, int] = {}
    codes = [table.setdefault(k, len(table)) for k in kinds]
    wide = len(table) > 255
    return encode(
        (
            first,
            tuple(table),
            wide,
            le_bytes(array("H", codes)) if wide else bytes(codes),
            labels,
            props,
            nicks,
            bytes(map(bool, recycled)),
            keys,
            adjs,
            le_bytes(array("H", ltoks)),
        ),
        key,
    )


def decode_node_chunk(raw: bytes, key: bytes) -> tuple[int, tuple[Any, ...]]:
    """``(first, columns)`` of one chunk record, shape-checked column by
    column: ``columns`` are kinds, labels, props, nicks, recycled flags
    (bytes), keys, adjacency bytes and line tokens (``array('H')``), as
    :meth:`memnet.graph.stored.StoredGraph.load` takes them."""
    rec = decode(raw, key)
    try:
        first, table, wide, code_bytes, labels, props, nicks, recycled, keys, adjs, lt = rec
        if not (
            type(first) is int
            and type(table) is tuple
            and type(wide) is bool
            and type(code_bytes) is bytes
            and type(recycled) is bytes
            and type(lt) is bytes
            and all(type(t) is str for t in table)
        ):
            raise ValueError("bad field types")
        codes = le_array(code_bytes, "H") if wide else code_bytes
        n = len(codes)
        if not (
            n
            and len(labels)
            == len(props)
            == len(nicks)
            == len(recycled)
            == len(keys)
            == len(adjs)
            == n
            and len(lt) == 2 * n
        ):
            raise ValueError("columns of different lengths")
        if max(codes) >= len(table):
            raise ValueError("a kind code is out of range")
        if not (
            set(map(type, keys)) == {str}
            and set(map(type, adjs)) == {bytes}
            and set(map(type, labels)) == {tuple}
            and set(map(type, props)) <= _PROPS
            and set(map(type, nicks)) <= _NICKS
            and max(recycled) <= 1
            and not any(map((3).__and__, map(len, adjs)))
            and all(type(x) is str for lab in labels if lab for x in lab)
        ):
            raise ValueError("a value of the wrong type")
        return first, (
            [table[c] for c in codes],
            labels,
            props,
            nicks,
            recycled,
            keys,
            adjs,
            le_array(lt, "H"),
        )
    except (TypeError, ValueError) as e:
        raise CabinetCorrupt(f"node chunk record {key!r} is malformed: {e}") from None


_PROPS = {bytes, type(None)}
_NICKS = {str, type(None)}


def chunk_columns(raw: bytes, key: bytes, sid: str, c: int) -> tuple[int, tuple[Any, ...]]:
    """:func:`decode_node_chunk` of the record of chunk ``c`` of ``sid``,
    checked to hold exactly the nodes of that chunk's range."""
    first, cols = decode_node_chunk(raw, key)
    lo, end = chunk_span(c)
    if first != lo or len(cols[0]) != end - lo:
        raise CabinetCorrupt(f"session {sid!r}: node chunk {c} holds the wrong nodes")
    return first, cols


# The seed index is stored too, so a hydrate reads postings instead of
# rebuilding them from every node's properties. Postings are split by node-id
# range (POSTING_RANGE ids) and grouped into POSTING_BUCKETS buckets by the
# index shard of the term (``memnet.graph.index.shard_of``: the CRC-32 of the
# term without its level byte), so a flush rewrites a few bounded records
# whatever the session's size; each bucket record is a msgpack map ``{term:
# ids}`` (terms as in ``memnet.graph.index``; ids as the bytes of a sorted
# little-endian u32 array). Key: ``sid 0x00 bucket(u16) range(u32)``: bucket
# first, so a hydrate reads one bucket's ranges one after another and merges
# them into its index shard while that is in cache. A posting longer than
# POSTING_BIG ids in its range (a common word, a kind) gets a record of its
# own instead, ``sid 0x00 bucket(u16) range(u32) term``, whose value is the
# checksummed ids (it sorts right after its bucket record): so a bucket stays
# a few hundred bytes and a flush that touches a rare term never rewrites a
# large posting. (A term too long for such a key stays in its bucket record:
# see BIG_KEY_MAX.)
POSTING_RANGE = 1 << 16
POSTING_BUCKETS = SHARDS
POSTING_BIG = 256
_BUCKET = struct.Struct(">HI")
_RANGE_ONLY = struct.Struct(">I")


def bucket_of(term: bytes) -> int:
    """The bucket a term's postings are stored in: its index shard."""
    return shard_of(term)


def bucket_key(sid: str, rng: int, bucket: int) -> bytes:
    return prefix(sid) + _BUCKET.pack(bucket, rng)


# Pending posting deltas (see Cabinet.flush) sort after every bucket:
# ``sid 0x00 0xFFFFFFFF version(u64)``; up to pending_limit() ids may wait there
# before a flush folds them into the postings.
DELTA_RANGE = 0xFFFFFFFF
POSTING_PENDING = 16384
PENDING_SHARE = 4


def pending_limit(nodes: int) -> int:
    """How many ids may wait in deltas in a session of ``nodes`` nodes:
    POSTING_PENDING, or one per PENDING_SHARE nodes in a larger session. A fold
    rewrites every posting bucket it touches, about the same work whatever it
    folds, so a large session folds less often; a hydrate applies what waits,
    a small share of what it reads anyway."""
    return max(POSTING_PENDING, nodes // PENDING_SHARE)


def delta_prefix(sid: str) -> bytes:
    return prefix(sid) + _RANGE_ONLY.pack(DELTA_RANGE)


def delta_key(sid: str, version: int) -> bytes:
    return delta_prefix(sid) + ID.pack(version)


def big_key(sid: str, rng: int, term: bytes) -> bytes:
    return prefix(sid) + _BUCKET.pack(bucket_of(term), rng) + term


#: The longest key a posting of its own may have (LMDB's limit, kept on every
#: back end so a cabinet copies between them as it is): the posting of a longer
#: term (a word of hundreds of characters) stays in its bucket record however
#: many ids it holds.
BIG_KEY_MAX = 511


def own_record(key: bytes, ids: int) -> bool:
    """Whether a posting of ``ids`` ids in one range, whose own record would
    have ``key`` (:func:`big_key`), is written as a record of its own."""
    return ids > POSTING_BIG and len(key) <= BIG_KEY_MAX


def split_bucket_key(key: bytes, plen: int) -> tuple[int, int, bytes | None]:
    """``(range, bucket, term)``: term is None for a bucket record, the term
    of a posting with a record of its own otherwise (which must be in that
    bucket)."""
    if len(key) < plen + 6:
        raise CabinetCorrupt(f"posting key {key!r} is malformed")
    bucket, rng = _BUCKET.unpack_from(key, plen)
    if bucket >= POSTING_BUCKETS:
        raise CabinetCorrupt(f"posting key {key!r} is malformed")
    if len(key) == plen + 6:
        return int(rng), int(bucket), None
    term = key[plen + 6 :]
    if bucket_of(term) != bucket:
        raise CabinetCorrupt(f"posting key {key!r} names a term of another bucket")
    return int(rng), int(bucket), term


def decode_ids(raw: bytes, key: bytes) -> bytes:
    """The ids of a posting with a record of its own (written with :func:`seal`)."""
    payload = bytes(_payload(raw, key))
    if not payload or len(payload) & 3:
        raise CabinetCorrupt(f"posting record {key!r} has an impossible size")
    return payload


def bad_posting(ids: object) -> bool:
    """Whether a stored posting value is not what one must be: non-empty
    bytes holding whole little-endian u32 ids."""
    return type(ids) is not bytes or not ids or len(ids) & 3 != 0


def decode_bucket(raw: bytes, key: bytes, *, deep: bool = True) -> dict[bytes, bytes]:
    """One bucket map. ``deep=False`` (a hydrate) checks only that it is a
    map: each posting is checked when the index first reads it, and verify()
    checks them all."""
    m = decode(raw, key)
    if (
        type(m) is not dict
        or not m
        or deep
        and (any(type(k) is not bytes or not k for k in m) or any(map(bad_posting, m.values())))
    ):
        raise CabinetCorrupt(f"posting record {key!r} is malformed")
    return m


# -- node records and property maps ------------------------------------------------------
def props_bytes(props: dict[str, Value] | bytes | None) -> bytes | None:
    """A node's property map as stored (msgpack bytes; bytes still held as
    read back from the cabinet are kept as they are)."""
    if props is None or type(props) is bytes:
        return props
    packed: bytes = _PACKERS.packer.pack(props)
    return packed


def decode_props(raw: bytes) -> dict[str, Value] | None:
    """A stored property map (``cabinet_corrupt`` when the bytes are not one)."""
    try:
        props = msgpack.unpackb(raw, use_list=False)
    except Exception as e:  # noqa: BLE001 - msgpack raises several unrelated types
        raise CabinetCorrupt(f"a stored property map does not decode: {e}") from None
    if type(props) is not dict or any(type(k) is not str for k in props):
        raise CabinetCorrupt("a stored property map is not a map of names")
    return props or None


def is_node(rec: Any) -> TypeGuard[tuple[Any, ...]]:
    """Whether a decoded record has the node shape ``(kind, labels, props
    bytes, nick, recycled, key, adjacency, line tokens)`` (a checksum proves
    the bytes are the ones written, not that they are a node)."""
    if type(rec) is not tuple or len(rec) != 8:
        return False
    kind, labels, props, nick, recycled, key, adj, ltok = rec
    return (
        type(kind) is str
        and type(labels) is tuple
        and type(recycled) is bool
        and type(key) is str
        and type(adj) is bytes
        and not len(adj) & 3
        and type(ltok) is int
        and 0 <= ltok < 65536
        and (nick is None or type(nick) is str)
        and (props is None or type(props) is bytes)
        and (not labels or all(type(x) is str for x in labels))
    )


def node_from(raw: bytes, where: Any) -> tuple[Any, ...]:
    """Decode and shape-check one node record."""
    rec = decode(raw, where)
    if not is_node(rec):
        raise CabinetCorrupt(f"record {where!r} is not a node record")
    return rec


def v3_payload(raw: bytes, key: bytes) -> bytes:
    """The payload of a format-3 record (its checksum covered the payload only)."""
    if len(raw) < 4 or zlib.crc32(raw[4:]) != CRC.unpack_from(raw)[0]:
        raise CabinetCorrupt(f"record {key!r} failed its (format 3) checksum")
    return raw[4:]


__all__ = [
    "BIG_KEY_MAX",
    "CATALOG",
    "DELTA_RANGE",
    "EDGES",
    "EDGE_CHUNK",
    "FORMAT_VERSION",
    "LOG",
    "META",
    "NODES",
    "NODE_CHUNK",
    "PENDING_SHARE",
    "POSTINGS",
    "POSTING_BIG",
    "POSTING_BUCKETS",
    "POSTING_PENDING",
    "POSTING_RANGE",
    "TABLES",
    "bad_posting",
    "big_key",
    "birth_key",
    "bucket_key",
    "bucket_of",
    "chunk_columns",
    "chunk_no",
    "chunk_span",
    "decode",
    "decode_bucket",
    "decode_edge_chunk",
    "decode_ids",
    "decode_node_chunk",
    "decode_props",
    "delta_key",
    "delta_prefix",
    "element_key",
    "encode",
    "encode_edge_chunk",
    "encode_node_chunk",
    "key_id",
    "new_token",
    "node_chunk_key",
    "node_chunk_prefix",
    "own_record",
    "pending_limit",
    "prefix",
    "seal",
    "sid_key",
    "split_bucket_key",
]
