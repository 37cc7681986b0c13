"""The cabinet's header and catalog: the format check, the catalog rows, the
settings a session keeps, and the in-place upgrade of an older format.

The header (``meta``/``format``) records the format, the storage engine and
the stemmer of the word index; the catalog holds one row per session
(version, counts, next ids, the settings of :func:`options_of`, the index
bookkeeping ``pdelta``/``precs``), and the log a birth record of each session
(:func:`write_birth`), the two written and deleted together.
"""

from __future__ import annotations

import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

from .._version import __version__
from ..commit import Caps
from ..errors import CabinetCorrupt, CabinetFormat, InvalidArgument, MemNetError
from ..graph.index import Index, shard_of
from ..graph.words import stemmer_id
from ..ids import check_session_id
from ..session import Session
from ..session_args import check_options
from ..tokens import DEFAULT_TOKENIZER
from . import records as R
from .kv import KV, Txn
from .postings import (
    apply_deltas,
    node_terms,
    posting_records,
    stored_deltas,
    stored_postings,
)
from .records import node_from, v3_payload


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of the catalog."""

    id: str
    version: int
    rows: int
    bytes: int
    nodes: int
    edges: int
    created: float
    updated: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "version": self.version,
            "rows": self.rows,
            "bytes": self.bytes,
            "nodes": self.nodes,
            "edges": self.edges,
            "created": self.created,
            "updated": self.updated,
        }


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One commit of a session's history, as stored."""

    version: int
    time: float
    created: int
    updated: int
    recycled: int
    changed: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "time": self.time,
            "created": self.created,
            "updated": self.updated,
            "recycled": self.recycled,
            "changed": list(self.changed),
        }


HEADER = b"format"  # the key of the cabinet's header in the meta table


def read_header(txn: Txn) -> dict[str, Any] | None:
    """The header (one sealed the format-3 way is read too, so that an old
    cabinet is ``cabinet_format`` with the way to upgrade it)."""
    raw = txn.get(R.META, HEADER)
    return None if raw is None else _upgrade_header(raw)


def write_birth(txn: Txn, sid: str, created: float) -> None:
    """Write the birth record of ``sid``, in the transaction that writes its
    first catalog row (a drop deletes both): a session is written down twice,
    in two tables, under keys of its own, so a catalog row lost on its own is
    found without a count that every create would rewrite."""
    key = R.birth_key(sid)
    txn.put(R.LOG, key, R.encode({"t": created}, key))


def read_catalog(txn: Txn, sid: str) -> dict[str, Any] | None:
    """The catalog row of ``sid``; None when there is none, after checking
    that the session has no birth record either (its row alone lost is
    ``cabinet_corrupt``, not a session never made)."""
    key = R.sid_key(sid)
    raw = txn.get(R.CATALOG, key)
    if raw is None:
        check_no_birth(txn, sid)
        return None
    return catalog_row(raw, key)


def check_no_birth(txn: Txn, sid: str) -> None:
    """``sid`` has no catalog row: it must have no birth record either (a
    session whose row alone is gone is damage, not a session never made)."""
    if txn.get(R.LOG, R.birth_key(sid)) is not None:
        raise CabinetCorrupt(
            f"session {sid!r} has its records but no catalog row: the row "
            "was lost or damaged (restore the cabinet from a backup)"
        )


def check_listed(txn: Txn, rows: int) -> None:
    """The catalog rows read are as many as the backend counts itself (LMDB:
    the table's own entry count); a backend that keeps no count (PostgreSQL,
    whose rows cannot go missing from a scan) is not asked."""
    kept = txn.count(R.CATALOG)
    if kept is not None and kept != rows:
        raise CabinetCorrupt(f"the catalog counts {kept} rows but {rows} were read: it is damaged")


def _first_session_lost(txn: Txn) -> str | None:
    """The first session the log holds (every session has its birth record
    there) when the catalog has no row of it, else None: one index probe,
    whatever the catalog's size, that finds a catalog lost, emptied or cut
    short while the sessions' records remain."""
    sid = next(txn.sids(R.LOG), None)
    if sid is None:
        return None
    try:
        key = R.sid_key(sid)
    except MemNetError:
        raise CabinetCorrupt(f"the log holds a key that names no session ({sid!r})") from None
    return sid if txn.get(R.CATALOG, key) is None else None


def _check_first_session(kv: KV, sid: str | None) -> None:
    """Report ``sid`` (what :func:`_first_session_lost` found) when a second
    look in a new transaction finds the same: on a distributed database
    (Citus) the two reads of one transaction need not see one snapshot
    across nodes, so a drop between them must not pass for a lost catalog."""
    if sid is None:
        return
    with kv.read() as again:
        if _first_session_lost(again) != sid:
            return
    raise CabinetCorrupt(
        f"the log holds session {sid!r} but the catalog does not: the "
        "catalog was lost or damaged (restore the cabinet from a backup)"
    )


_CAT_INTS = ("version", "nodes", "edges", "bytes", "next_node", "next_edge", "pdelta", "precs")


def catalog_row(raw: bytes, key: bytes) -> dict[str, Any]:
    """Decode and shape-check one catalog row."""
    cat = R.decode(raw, key)
    if (
        type(cat) is not dict
        or any(type(cat.get(f)) is not int for f in _CAT_INTS)
        or any(type(cat.get(f)) not in (int, float) for f in ("created", "updated"))
    ):
        raise CabinetCorrupt(f"catalog record {key!r} is malformed")
    return dict(cat)


def sid_of(key: bytes) -> str:
    """The session id a catalog key names (a key that is not one is damage)."""
    sid = key.decode("ascii", "replace")
    try:
        return check_session_id(sid)
    except MemNetError:
        raise CabinetCorrupt(f"the catalog holds a bad session id {sid!r}") from None


def natural_key(sid: str) -> tuple[Any, ...]:
    """Sort key of a session id: digit runs as numbers (``ok-2`` < ``ok-10``)."""
    parts = re.split(r"([0-9]+)", sid)
    return tuple(int(x) if i % 2 else x for i, x in enumerate(parts)), sid


def _upgrade_header(raw: bytes) -> dict[str, Any]:
    """The header of a cabinet to upgrade, sealed either way."""
    try:
        header = R.decode(raw, HEADER)
    except CabinetCorrupt:
        header = msgpack.unpackb(v3_payload(raw, HEADER), use_list=False)
    if type(header) is not dict:
        raise CabinetCorrupt("the cabinet's header is malformed")
    return header


def options_of(s: Session) -> dict[str, Any]:
    """The session settings a cabinet keeps with it (the rate cap R and the
    settle policy), so a hydrated session behaves like the one flushed."""
    check_options(s.caps, s.delete_on_settle, None, s.tokenizer)  # (changed since made?)
    return {
        "cap_rows": s.caps.rows,
        "cap_bytes": s.caps.bytes,
        "delete_on_settle": s.delete_on_settle,
        "tokenizer": s.tokenizer,
    }


def stored_options(cat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "cap_rows" in cat:
        out["caps"] = Caps(cat["cap_rows"], cat.get("cap_bytes", "missing"))
    if "delete_on_settle" in cat:
        out["delete_on_settle"] = cat["delete_on_settle"]
    if "tokenizer" in cat:
        out["tokenizer"] = cat["tokenizer"]
    try:
        check_options(
            out.get("caps"),
            out.get("delete_on_settle", False),
            None,
            out.get("tokenizer", DEFAULT_TOKENIZER),
        )
    except InvalidArgument as e:  # written by no engine that checks them
        raise CabinetCorrupt(f"a session's stored settings are malformed: {e}") from None
    return out


def _upgrade_session(txn: Txn, sid: str, fmt: int, index: str) -> int:
    """Rewrite one session in this format (see :meth:`Cabinet.upgrade`):
    from format 3, every record sealed again under its key and node records
    given their token count (0, unknown); from format 3 or 4, the node
    records of each full chunk's range written as its chunk record; the
    stored index rebuilt from the nodes (``index`` ``"reindex"``) or moved
    from format 5's buckets (``"rebucket"``, see :func:`_rebucket`). Returns
    the nodes of the session."""
    from .elements import effective_nodes

    pre = R.prefix(sid)
    ckey = R.sid_key(sid)
    craw = txn.get(R.CATALOG, ckey)
    if craw is None:
        raise CabinetCorrupt(f"the catalog row of {sid!r} vanished during the upgrade")
    if fmt == 3:
        try:  # an upgrade that stopped half way converted this session already
            catalog_row(craw, ckey)
            fmt = 4
        except CabinetCorrupt:
            pass
    if fmt == 3:
        cat = msgpack.unpackb(v3_payload(craw, ckey), use_list=False)
        for k, v in list(txn.scan(R.NODES, pre)):
            rec = msgpack.unpackb(v3_payload(v, k), use_list=False)
            if type(rec) is tuple and len(rec) == 7:
                rec = (*rec, 0)
            txn.put(R.NODES, k, R.encode(rec, k))
        for table in (R.EDGES, R.LOG):
            for k, v in list(txn.scan(table, pre)):
                txn.put(table, k, R.seal(k, v3_payload(v, k)))
    else:
        cat = catalog_row(craw, ckey)
    if fmt in (3, 4):
        cat = dict(
            cat,
            nchunks=_chunk_nodes(txn, sid, int(cat.get("nchunks", 0)), int(cat["next_node"])),
            over=0,
        )
        txn.put(R.CATALOG, ckey, R.encode(cat, ckey))
    n = int(cat["next_node"]) - 1
    built = Index()
    if index == "rebucket":
        _rebucket(txn, sid, cat, built)
    else:
        for nid, rec in effective_nodes(txn, sid, cat):
            for term in node_terms(rec):
                built.add_id(term, nid)
    txn.delete_prefix(R.POSTINGS, pre)
    recs = posting_records(sid, built)
    for k, v in recs:
        txn.put(R.POSTINGS, k, v)
    txn.put(R.CATALOG, ckey, R.encode(dict(cat, pdelta=0, precs=len(recs)), ckey))
    if txn.get(R.LOG, R.birth_key(sid)) is None:  # before format 7
        write_birth(txn, sid, float(cat["created"]))
    return n


def _births(kv: KV, sids: list[str]) -> int:
    """Format 6 to 7 (the same stemmer): the birth record of every session
    and the header without its count of sessions, in one transaction (one
    small record a session: nothing to take up after a stop). Returns the
    sessions given a birth record."""

    def write(t: Txn) -> int:
        now = _header_now(t)
        if now.get("format") != 6 or "upgrading" in now:
            return 0  # another run got there first
        n = 0
        for sid in sids:
            ckey = R.sid_key(sid)
            craw = t.get(R.CATALOG, ckey)
            if craw is None:
                raise CabinetCorrupt(f"the catalog row of {sid!r} vanished during the upgrade")
            if t.get(R.LOG, R.birth_key(sid)) is None:
                write_birth(t, sid, float(catalog_row(craw, ckey)["created"]))
                n += 1
        done = {k: v for k, v in now.items() if k != "sessions"}
        t.put(
            R.META,
            HEADER,
            R.encode(dict(done, format=R.FORMAT_VERSION, memnet=__version__), HEADER),
        )
        return n

    return kv.run_write(write)


_V5_KEY = struct.Struct(">IH")  # format 5's posting keys: range, then bucket
_V5_OWN = 0xFFFF  # format 5's bucket of a posting with a record of its own


def _v5_split(key: bytes, plen: int) -> tuple[int, int, bytes | None]:
    """:func:`records.split_bucket_key` for format 5's posting keys: ``sid
    0x00 range(u32) bucket(u16)``, or bucket 0xFFFF and the term of a posting
    with a record of its own."""
    if len(key) >= plen + 6:
        rng, bucket = _V5_KEY.unpack_from(key, plen)
        if bucket == _V5_OWN and len(key) > plen + 6:
            return int(rng), int(bucket), key[plen + 6 :]
        if bucket < R.POSTING_BUCKETS and len(key) == plen + 6:
            return int(rng), int(bucket), None
    raise CabinetCorrupt(f"posting key {key!r} is malformed")


def _rebucket(txn: Txn, sid: str, cat: dict[str, Any], into: Index) -> None:
    """Fill ``into`` with the stored index of a format-5 session, read as it is
    stored (keys range first, buckets by the CRC-32 of the whole term) with
    its pending deltas applied: no node is read, so moving the postings to
    format 6 costs a fraction of rebuilding them."""
    table: dict[bytes, bytes] = {}
    for _b, m in stored_postings(txn, sid, cat, _v5_split):
        for t, ids in m.items():  # ranges come in order: a term's ids are appended
            if type(t) is not bytes or R.bad_posting(ids):
                raise CabinetCorrupt(f"session {sid!r}: a stored posting of {t!r} is malformed")
            had = table.get(t)
            table[t] = ids if had is None else had + ids
    shards: dict[int, dict[bytes, bytes]] = {}
    for t, ids in table.items():
        shards.setdefault(shard_of(t), {})[t] = ids
    del table
    into.load(sorted(shards.items()), int(cat["next_node"]) - 1, CabinetCorrupt)
    apply_deltas(into, stored_deltas(txn, sid, cat))


def _chunk_nodes(txn: Txn, sid: str, done: int, next_node: int) -> int:
    """Write the node records of every full chunk range past the first
    ``done`` chunks as chunk records, and delete them; returns the chunk
    count."""
    nchunks = next_node // R.NODE_CHUNK
    for c in range(done, nchunks):
        first, end = R.chunk_span(c)
        keys = [R.element_key(sid, i) for i in range(first, end)]
        recs = []
        for raw, k in zip(txn.get_many(R.NODES, keys), keys, strict=True):
            if raw is None:
                raise CabinetCorrupt(f"session {sid!r}: node record {R.key_id(k)} is missing")
            recs.append(node_from(raw, k))
        key = R.node_chunk_key(sid, c)
        txn.put(R.NODES, key, R.encode_node_chunk(key, first, recs))
        txn.discard(R.NODES, keys)
    return nchunks


def check_header(kv: KV) -> None:
    """Check the header (any backend): the format, the engine, and that the
    first session of the log is in the catalog (:func:`_check_first_session`),
    so a catalog that was lost or emptied is ``cabinet_corrupt``, never an
    empty list; nothing here reads more than a few records, whatever the
    cabinet holds. A header is written only into a cabinet that holds
    nothing at all."""
    engine = kv.info().get("lmdb")
    lost = None
    with kv.read() as txn:
        header = read_header(txn)
        if header is None:
            held = [t for t in R.TABLES if next(iter(txn.scan(t)), None) is not None]
            if held:
                raise CabinetCorrupt(
                    f"the cabinet holds records ({', '.join(held)}) but "
                    "no header: the header was lost or damaged"
                )
        else:
            if header.get("upgrading") is not None:
                raise CabinetFormat(
                    "an upgrade of this cabinet stopped before it was done: "
                    "run `memnet cabinet upgrade` (Cabinet.upgrade) again to "
                    "finish it"
                )
            fmt = header.get("format")
            if fmt != R.FORMAT_VERSION:
                msg = (
                    f"cabinet format {fmt!r} is not supported (this MemNet reads format "
                    f"{R.FORMAT_VERSION})"
                )
                if fmt in R.UPGRADABLE:
                    msg += "; run `memnet cabinet upgrade` (Cabinet.upgrade) to rewrite it"
                raise CabinetFormat(msg)
            stored = header.get("engine")
            if stored and engine and stored.split(".")[:2] != engine.split(".")[:2]:
                raise CabinetFormat(
                    f"cabinet written by LMDB {stored}, this process has LMDB {engine}"
                )
            words = header.get("words")
            if words != stemmer_id():
                raise CabinetFormat(
                    f"the cabinet's word index was built with {words}, this process stems "
                    f"with {stemmer_id()}: run `memnet cabinet upgrade` (Cabinet.upgrade) to "
                    "rebuild it"
                )
            lost = _first_session_lost(txn)
    _check_first_session(kv, lost)
    if header is None:
        new = {
            "format": R.FORMAT_VERSION,
            "backend": kv.name,
            "engine": engine,
            "words": stemmer_id(),
            "memnet": __version__,
            "created": time.time(),
        }

        def write(t: Txn) -> None:
            if t.get(R.META, HEADER) is None:  # another process may have been first
                t.put(R.META, HEADER, R.encode(new, HEADER))

        kv.run_write(write)


def upgrade_cabinet(kv: KV, progress: Callable[[int, int], None] | None) -> dict[str, int]:
    """The work of :meth:`Cabinet.upgrade <memnet.cabinet.Cabinet.upgrade>` on an
    open backend (see there).

    Before the first session is touched, the header is marked: it names this
    format (an older engine refuses the cabinet) and holds ``upgrading``
    (this engine refuses it too, until the upgrade is run again to the end):
    the format it came from, how the index is redone and with which stemmer,
    and the last session done, written in that session's own transaction. A
    run that stopped is taken up after that session; one whose stemmer is
    not the mark's redoes every session's index from its nodes. A session's
    transaction reads the mark again first, so two upgrades at once never
    convert a session twice. From format 6 with this stemmer, all there is to
    do is one small record a session: :func:`_births`, no mark."""
    with kv.read() as txn:
        header = read_header(txn)
        if header is None:
            return {"sessions": 0, "nodes": 0}
        sids = [k.decode("ascii") for k, _v in txn.scan(R.CATALOG)]
    if (
        header.get("format") == 6
        and header.get("words") == stemmer_id()
        and "upgrading" not in header
    ):
        born = _births(kv, sids)
        if progress is not None:
            progress(len(sids), len(sids))
        return {"sessions": born, "nodes": 0}

    started = kv.run_write(_mark_upgrade)
    if started is None:
        return {"sessions": 0, "nodes": 0}
    header, work = started
    counts = {"sessions": 0, "nodes": 0}
    for i, sid in enumerate(sids):

        def step(t: Txn, sid: str = sid) -> int | None:
            now = _upgrade_mark(_header_now(t))
            if (
                now is None
                or now["words"] != work["words"]
                or (now["after"] is not None and sid <= now["after"])
            ):
                return None  # done, by this run before a stop or by another run
            n = _upgrade_session(t, sid, int(work["from"]), str(work["index"]))
            t.put(R.META, HEADER, R.encode(dict(header, upgrading=dict(work, after=sid)), HEADER))
            return n

        n = kv.run_write(step)
        if n is not None:
            counts["nodes"] += n
            counts["sessions"] += 1
        if progress is not None:
            progress(i + 1, len(sids))
    # the count of sessions older formats kept is not carried over (format 7)
    done = {k: v for k, v in header.items() if k not in ("upgrading", "sessions")}
    done.update(format=R.FORMAT_VERSION, words=stemmer_id(), memnet=__version__)

    def finish(t: Txn) -> None:
        if "upgrading" in _header_now(t):  # (another run may have finished first)
            t.put(R.META, HEADER, R.encode(done, HEADER))

    kv.run_write(finish)
    return counts


def _mark_upgrade(t: Txn) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The header as marked (marked now when it was not), and the mark; None
    when the cabinet needs nothing. A mark made with this stemmer is kept
    as it stands (another run may be moving it on)."""
    now = _header_now(t)
    mark = _upgrade_mark(now)
    if mark is not None and mark["words"] == stemmer_id():
        return now, mark
    if mark is None:
        fmt = now.get("format")
        same_words = now.get("words") == stemmer_id()
        if fmt == R.FORMAT_VERSION and same_words:
            return None
        if fmt != R.FORMAT_VERSION and fmt not in R.UPGRADABLE:
            raise CabinetFormat(f"cabinet format {fmt!r} cannot be upgraded in place")
        # format 5 holds the postings in buckets of another hash and key
        # order: they are moved; before it, or from another stemmer, the
        # index is built again from the nodes
        mark = {
            "from": fmt,
            "index": "rebucket" if fmt == 5 and same_words else "reindex",
            "words": stemmer_id(),
            "after": None,
        }
    else:  # the sessions done so far hold another stemmer's words: all again
        mark = dict(mark, index="reindex", words=stemmer_id(), after=None)
    marked = dict(now, format=R.FORMAT_VERSION, upgrading=mark)
    t.put(R.META, HEADER, R.encode(marked, HEADER))
    return marked, mark


def _header_now(txn: Txn) -> dict[str, Any]:
    """The header, read again inside an upgrade's transaction."""
    header = read_header(txn)
    if header is None:
        raise CabinetCorrupt("the cabinet's header vanished during the upgrade")
    return header


def _upgrade_mark(header: dict[str, Any]) -> dict[str, Any] | None:
    """The ``upgrading`` mark of a header (None when there is none), checked."""
    work = header.get("upgrading")
    if work is None:
        return None
    if not (
        type(work) is dict
        and set(work) == {"from", "index", "words", "after"}
        and (work["from"] in R.UPGRADABLE or work["from"] == R.FORMAT_VERSION)
        and work["index"] in ("rebucket", "reindex")
        and type(work["words"]) is str
        and (work["after"] is None or type(work["after"]) is str)
    ):
        raise CabinetCorrupt(f"the cabinet header's upgrade mark is malformed: {work!r}")
    return work
