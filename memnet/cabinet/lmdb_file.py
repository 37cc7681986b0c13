"""An LMDB data file checked with plain reads before LMDB maps it.

LMDB reads ``data.mdb`` through a memory map, so a page the file does not hold
(a truncated file, a damaged page number) is a SIGBUS that kills the process,
and a damaged table name is a new, empty table. Before a cabinet hands the
file to LMDB, :func:`check_data_file` reads what LMDB is about to trust with
``os.pread`` and raises :class:`~memnet.errors.CabinetCorrupt` when it does
not hold together:

* the two meta pages: magic, data version and page size; the committed one (the
  higher transaction id, as LMDB picks) and the other, which must be the
  transaction before it;
* the file holds every page the committed meta page counts as used (a shorter
  file is accepted only when the missing pages are all free);
* the main database names exactly the cabinet's tables (a table that is
  missing or renamed is damage, not an empty table to create);
* every table's branch pages and the free list: each child page exists, is
  reached once, is not a free page, and the branch and leaf page counts agree
  with the table's own record; the leaves of the ``meta`` table (the header)
  and of the free list are checked whole, with their entry counts;
* the leaf pages near the end of the file (the last 128 KiB and a little), whose
  damaged node offsets or key lengths could reach past it, and the overflow
  pages their nodes name.

Everything else is read by LMDB, whose py-lmdb build refuses a node whose
value runs out of its page. One hole remains, in py-lmdb rather than here: a
node that claims a value on overflow pages is touched page by page as soon as
a cursor lands on it, before MemNet sees it, so a damaged length, page number
or node offset in a leaf page not near the end can still reach past the file.
``verify()`` reads every page with plain reads and finds it.

**A file being written.** Another process may commit while the file is
read. A commit writes its pages into free space, then its meta page; the
pages of a tree LMDB frees are written over once no reader needs them. So
:func:`check_data_file` is called twice by an open
(:mod:`memnet.cabinet.kv_lmdb`): with ``tree=False`` before LMDB maps the
file (the meta pages alone), then in full while the opening process holds an
LMDB read transaction, which keeps every tree from the one it sees on from
being written over. What can still change under the check is a meta page (a
commit in between, or a read torn by one): a check that fails is run again,
and its failure is reported only when the meta pages did not change while it
ran (up to ``ATTEMPTS`` checks; past that, the damage found every time is
reported, saying so).

The layout read here is LMDB 0.9's (py-lmdb's bundled engine) on a 64-bit
machine: 16-byte page headers and page numbers of 8 bytes in native order.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import CabinetCorrupt, CabinetFormat
from ..tokens.files import cache_dir, write_file

MAGIC = 0xBEEFC0DE
DATA_VERSION = 1  # LMDB 0.9
HEADER = 16  # bytes of a page header
NODE = 8  # bytes of a node header
MAX_KEY = 511  # LMDB's longest key
P_BRANCH, P_LEAF, P_OVERFLOW, P_META = 0x01, 0x02, 0x04, 0x08
F_BIGDATA, F_SUBDATA = 0x01, 0x02
INTEGERKEY = 0x08
INVALID = (1 << 64) - 1  # the root of an empty table
_E = "<" if sys.byteorder == "little" else ">"
_PAGE = struct.Struct(_E + "QHHHH")  # pgno, pad, flags, lower, upper
_NODE = struct.Struct(_E + "HHHH")  # lo, hi, flags, ksize
_DB = struct.Struct(_E + "IHHQQQQQ")  # pad, flags, depth, branch/leaf/overflow pages, entries, root
_META = struct.Struct(_E + "IIQQ")  # magic, version, address, mapsize
_U64 = struct.Struct(_E + "Q")


@dataclass(frozen=True, slots=True)
class DataFile:
    """What the check learnt: the page size, the pages in use, the tables."""

    psize: int
    next_pgno: int
    tables: frozenset[str]


class _Db:
    """A table's record: flags, depth, page counts, entries and root page."""

    __slots__ = ("branch", "depth", "entries", "flags", "leaf", "overflow", "pad", "root")

    def __init__(self, buf: bytes, off: int) -> None:
        (
            self.pad,
            self.flags,
            self.depth,
            self.branch,
            self.leaf,
            self.overflow,
            self.entries,
            self.root,
        ) = _DB.unpack_from(buf, off)


class _File:
    """Plain reads of one data file, and the facts gathered about its pages."""

    def __init__(self, path: str, fd: int, size: int) -> None:
        self.path = path
        self.fd = fd
        self.size = size
        self.psize = 0
        self.next = 0
        self.free = bytearray()
        self.seen = bytearray()

    def fail(self, what: str) -> CabinetCorrupt:
        return CabinetCorrupt(f"the data file {self.path} is damaged: {what}", path=self.path)

    def read(self, off: int, n: int) -> bytes:
        if off + n > self.size:
            raise self.fail(f"bytes {off}..{off + n} lie past its end ({self.size} bytes)")
        data = os.pread(self.fd, n, off)
        if len(data) != n:
            raise self.fail(f"bytes {off}..{off + n} could not be read")
        return data

    def page(self, pgno: int, kind: int, what: str) -> tuple[bytes, int]:
        """Page ``pgno`` (it must be a ``kind`` page storing its own number)
        and its number of nodes."""
        if not 2 <= pgno < self.next:
            raise self.fail(f"{what} names page {pgno}, outside the pages in use")
        buf = self.read(pgno * self.psize, self.psize)
        no, _pad, flags, lower, upper = _PAGE.unpack_from(buf)
        if no != pgno or flags != kind:
            raise self.fail(f"page {pgno} of {what} is not the page it should be")
        if not HEADER <= lower <= upper <= self.psize or lower & 1:
            raise self.fail(f"page {pgno} of {what} has impossible bounds")
        return buf, (lower - HEADER) >> 1

    def claim(self, pgno: int, what: str) -> None:
        if not 2 <= pgno < self.next:
            raise self.fail(f"{what} names page {pgno}, outside the pages in use")
        if self.free[pgno]:
            raise self.fail(f"{what} names page {pgno}, which is free")
        if self.seen[pgno]:
            raise self.fail(f"{what} reaches page {pgno} twice")
        self.seen[pgno] = 1

    def nodes(
        self, buf: bytes, n: int, pgno: int, what: str, *, leaf: bool, intkey: bool = False
    ) -> list[tuple[int, int, int, bytes, int]]:
        """``(lo_hi, flags, ksize, key, data offset)`` of each node, every node
        inside the page and the keys ascending (a branch's first key is unused;
        ``intkey``: keys are native integers, as in the free list)."""
        upper = _PAGE.unpack_from(buf)[4]
        out = []
        last: Any = None
        for i in range(n):
            (ptr,) = struct.unpack_from(_E + "H", buf, HEADER + 2 * i)
            if ptr < upper or ptr + NODE > self.psize:
                raise self.fail(f"page {pgno} of {what} has a node outside it")
            lo, hi, flags, ksize = _NODE.unpack_from(buf, ptr)
            start = ptr + NODE
            if start + ksize > self.psize:
                raise self.fail(f"page {pgno} of {what} has a key running out of it")
            key = buf[start : start + ksize]
            if leaf or i > 0:
                order = int.from_bytes(key, sys.byteorder) if intkey else key
                if last is not None and order <= last:
                    raise self.fail(f"page {pgno} of {what} holds keys out of order")
                last = order
            out.append((lo | hi << 16, flags, ksize, key, start + ksize))
        return out

    def value(
        self,
        buf: bytes,
        node: tuple[int, int, int, bytes, int],
        pgno: int,
        what: str,
        *,
        claim: bool,
    ) -> bytes | None:
        """The data of a leaf node (read from its overflow pages if it has
        them); None for a node of a big table whose overflow is only checked."""
        size, flags, ksize, _key, at = node
        if flags & F_BIGDATA:
            if at + 8 > self.psize:
                raise self.fail(f"page {pgno} of {what} has a node running out of it")
            (first,) = _U64.unpack_from(buf, at)
            pages = (HEADER - 1 + size) // self.psize + 1
            if not 2 <= first or first + pages > self.next:
                raise self.fail(f"page {pgno} of {what} names overflow pages past the end")
            head = self.read(first * self.psize, HEADER)
            no, _pad, fl, count = struct.unpack_from(_E + "QHHI", head)
            if no != first or fl != P_OVERFLOW or count != pages:
                raise self.fail(f"overflow page {first} of {what} is not what its node says")
            for p in range(first, first + pages):
                if claim:
                    self.claim(p, what)
                elif self.free[p]:
                    raise self.fail(f"{what} names overflow page {p}, which is free")
            return self.read(first * self.psize + HEADER, size) if claim else None
        if at + size > self.psize:
            raise self.fail(f"page {pgno} of {what} has a value running out of it")
        return buf[at : at + size]

    def tree(self, db: _Db, what: str, *, intkey: bool = False) -> list[int]:
        """Walk a table's branch pages; returns its leaf pages in order."""
        if db.root == INVALID:
            if db.depth or db.entries or db.branch or db.leaf or db.overflow:
                raise self.fail(f"the empty table {what} keeps counts")
            return []
        if not 1 <= db.depth <= 32:
            raise self.fail(f"table {what} has an impossible depth {db.depth}")
        self.claim(db.root, what)
        level = [db.root]
        branches = 0
        for _ in range(db.depth - 1):
            below = []
            for pgno in level:
                buf, n = self.page(pgno, P_BRANCH, what)
                if n < 1:
                    raise self.fail(f"branch page {pgno} of {what} is empty")
                branches += 1
                for size, flags, _ks, _key, _at in self.nodes(
                    buf, n, pgno, what, leaf=False, intkey=intkey
                ):
                    child = size | flags << 32
                    self.claim(child, what)
                    below.append(child)
            level = below
        if (branches, len(level)) != (db.branch, db.leaf):
            raise self.fail(f"table {what} does not have the pages it counts")
        return level

    def leaves(
        self, leaves: list[int], what: str, *, whole: bool, flags_ok: int, intkey: bool = False
    ) -> list[tuple[bytes, bytes | None, int]]:
        """``(key, value, flags)`` of every node of ``leaves`` (values of
        overflow nodes only when ``whole``)."""
        out = []
        for pgno in leaves:
            buf, n = self.page(pgno, P_LEAF, what)
            if n < 1:
                raise self.fail(f"leaf page {pgno} of {what} is empty")
            for node in self.nodes(buf, n, pgno, what, leaf=True, intkey=intkey):
                _size, flags, ksize, key, _at = node
                if flags & ~flags_ok or not 1 <= ksize <= MAX_KEY:
                    raise self.fail(f"page {pgno} of {what} has a node LMDB would misread")
                out.append((key, self.value(buf, node, pgno, what, claim=whole), flags))
        return out


def _meta(f: _File, off: int) -> tuple[int, int, int, _Db, _Db, int, int]:
    """``(magic, version, flags, free db, main db, last page, txnid)`` of the
    meta page at ``off``."""
    buf = f.read(off, HEADER + 144)
    _no, _pad, flags, _lo, _up = _PAGE.unpack_from(buf)
    magic, version, _addr, _mapsize = _META.unpack_from(buf, HEADER)
    free, main = _Db(buf, HEADER + 24), _Db(buf, HEADER + 72)
    last, txnid = struct.unpack_from(_E + "QQ", buf, HEADER + 120)
    return magic, version, flags, free, main, last, txnid


ATTEMPTS = 10  # checks of a file that keeps changing before its damage is believed


def _meta_bytes(fd: int) -> bytes:
    """The bytes of both meta pages as they are now (what a commit rewrites):
    the first one, and the second at the page size the first names (or at
    every size LMDB allows, when that is not one)."""
    first = os.pread(fd, HEADER + 144, 0)
    psize = _DB.unpack_from(first, HEADER + 24)[0] if len(first) == HEADER + 144 else 0
    spots = (
        [psize]
        if 512 <= psize <= 65536 and not psize & (psize - 1)
        else [1 << k for k in range(9, 17)]
    )
    return first + b"".join(os.pread(fd, HEADER + 144, at) for at in spots)


def check_data_file(
    path: str,
    tables: tuple[str, ...],
    *,
    tree: bool = True,
) -> DataFile | None:
    """Check ``path`` (a ``data.mdb``) as the module docstring says (``tree``
    False: the meta pages alone); None when there is no file or it is empty
    (a new cabinet, which LMDB creates). A check that fails while the meta
    pages change under it (another process committing) is run again."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        for attempt in range(1, ATTEMPTS + 1):
            before = _meta_bytes(fd)
            size = os.fstat(fd).st_size  # after the meta pages: it holds what they name
            if size == 0:
                return None
            seen = _seen(path, fd, before) if tree else None
            if seen is not None and _memo_says(seen):
                return _check(_File(path, fd, size), tables, False)
            try:
                found = _check(_File(path, fd, size), tables, tree)
                if seen is not None and _meta_bytes(fd) == before:
                    _remember(seen)
                return found
            except CabinetCorrupt as e:
                if _meta_bytes(fd) == before:
                    raise  # the file stood still: the damage is in it
                if attempt == ATTEMPTS:
                    raise CabinetCorrupt(
                        f"{e} (found in each of {ATTEMPTS} checks while "
                        "another process was writing the file)",
                        path=path,
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        os.close(fd)


def _seen(path: str, fd: int, meta: bytes) -> tuple[str, str] | None:
    """Where the memo of a whole check of ``path`` lives in the per-user
    cache, and what it must say for the file to be the one checked: its
    inode, size, modification and change times and meta pages. Any write to
    the file moves its change time, which no user tool can set back, so a
    file damaged after its check is checked again (D105). None without a
    cache directory."""
    where = cache_dir()
    if not where:
        return None
    st = os.fstat(fd)
    real = os.path.realpath(path).encode("utf-8", "surrogateescape")
    name = hashlib.blake2b(real, digest_size=12).hexdigest()
    state = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    mark = hashlib.blake2b(repr(state).encode() + meta, digest_size=16).hexdigest()
    return os.path.join(where, "checked", name), mark


def _memo_says(seen: tuple[str, str]) -> bool:
    try:
        with open(seen[0], encoding="ascii") as f:
            return f.read() == seen[1]
    except (OSError, ValueError):
        return False


def _remember(seen: tuple[str, str]) -> None:
    try:
        write_file(seen[0], seen[1].encode("ascii"))
    except OSError:  # a cache that cannot be written only costs the next check
        pass


def _check(f: _File, tables: tuple[str, ...], tree: bool) -> DataFile:
    """One check of the file (see check_data_file): meta pages, free list,
    main table, then the tables."""
    free, main = _check_metas(f)
    if not tree:
        return DataFile(f.psize, f.next, frozenset())
    pages = f.size // f.psize
    _check_free_list(f, free, pages)
    names = _check_main(f, main, tables)
    psize = f.psize
    tail = max(0, pages - (2 * 65536 + 2 * NODE + psize) // psize - 2)
    for name, rec in sorted(names.items()):
        if rec is None or len(rec) != _DB.size:
            raise f.fail(f"the record of table {name} is malformed")
        db = _Db(rec, 0)
        if db.flags:
            raise f.fail(f"table {name} has the wrong flags")
        leaves = f.tree(db, f"table {name}")
        whole = name == "meta"
        seen = f.leaves(
            leaves if whole else [p for p in leaves if p >= tail],
            f"table {name}",
            whole=whole,
            flags_ok=F_BIGDATA,
        )
        if whole and len(seen) != db.entries:
            raise f.fail(f"table {name} does not hold the entries it counts")
    return DataFile(psize, f.next, frozenset(names))


def _check_metas(f: _File) -> tuple[_Db, _Db]:
    """Check both meta pages (setting ``f.psize`` and ``f.next``): the free
    list and the main table of the newer one."""
    if f.size < 2 * 256:
        raise f.fail("it is too short to hold LMDB's two meta pages")
    m0 = _meta(f, 0)
    psize = m0[3].pad  # the free table's pad field holds the page size
    if psize < 512 or psize > 65536 or psize & (psize - 1):
        raise f.fail(f"its first meta page gives an impossible page size {psize}")
    f.psize = psize
    m1 = _meta(f, psize)
    metas = (m0, m1)
    if any(m[0] != MAGIC for m in metas) or any(not m[2] & P_META for m in metas):
        raise f.fail("a meta page is not an LMDB meta page")
    versions = {m[1] for m in metas}
    if versions != {DATA_VERSION}:
        if len(versions) == 1:  # both agree: a file of another LMDB, not damage
            raise CabinetFormat(
                f"{f.path} was written by an LMDB with data version "
                f"{m0[1]}; this one reads version {DATA_VERSION}"
            )
        raise f.fail("its meta pages disagree on the data version")
    t0, t1 = m0[6], m1[6]
    if t0 & 1 or (t1 and not t1 & 1) or abs(t0 - t1) != 1 and not t0 == t1 == 0:
        raise f.fail(
            f"its meta pages name transactions {t0} and {t1}, which cannot follow each other"
        )
    _magic, _v, _fl, free, main, last, _txnid = m1 if t1 > t0 else m0
    f.next = last + 1
    if f.next < 2 or f.next > (1 << 40):
        raise f.fail(f"its meta page counts an impossible {f.next} pages")
    pages = f.size // psize
    if f.next > pages + max(pages, 1 << 20):
        raise f.fail(f"it holds {pages} pages but its meta page counts {f.next}")
    return free, main


def _check_free_list(f: _File, free: _Db, pages: int) -> None:
    """Walk the free list (marking its pages in ``f.free``): every page in use
    must be in the file's ``pages``."""
    f.free = bytearray(f.next)
    f.seen = bytearray(f.next)
    if free.flags != INTEGERKEY and free.root != INVALID:
        raise f.fail("its free list has the wrong flags")
    for _key, idl, _fl in f.leaves(
        f.tree(free, "the free list", intkey=True),
        "the free list",
        whole=True,
        flags_ok=F_BIGDATA,
        intkey=True,
    ):
        assert idl is not None
        if len(idl) < 8 or len(idl) & 7 or _U64.unpack_from(idl)[0] != len(idl) // 8 - 1:
            raise f.fail("a record of its free list is malformed")
        for (pgno,) in struct.iter_unpack(_E + "Q", idl[8:]):
            if not 2 <= pgno < f.next or f.seen[pgno] or f.free[pgno]:
                raise f.fail(f"its free list names page {pgno} wrongly")
            f.free[pgno] = 1
    short = [p for p in range(pages, f.next) if not f.free[p]]
    if short:
        raise f.fail(
            f"it ends at page {pages} but page {short[0]} is in use "
            f"({f.next - pages} pages missing: truncated?)"
        )


def _check_main(f: _File, main: _Db, tables: tuple[str, ...]) -> dict[str, bytes | None]:
    """The records of the main table: exactly the cabinet's tables, by name."""
    if main.flags:
        raise f.fail("its main table has the wrong flags")
    records = f.leaves(
        f.tree(main, "the main table"), "the main table", whole=True, flags_ok=F_SUBDATA
    )
    names = {key.decode("latin-1"): rec for key, rec, fl in records if fl & F_SUBDATA}
    if len(names) != len(records) or len(records) != main.entries:
        raise f.fail("its main table holds something besides the tables")
    if names and set(names) != set(tables):
        lost = sorted(set(tables) - set(names))
        extra = sorted(set(names) - set(tables))
        raise f.fail(
            "its tables are not the cabinet's"
            + (f"; missing: {', '.join(lost)}" if lost else "")
            + (f"; unknown: {', '.join(map(repr, extra))}" if extra else "")
        )
    return names


__all__ = ["ATTEMPTS", "DataFile", "check_data_file"]
