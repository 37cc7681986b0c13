"""A damaged cabinet is ``cabinet_corrupt``, never a signal and never silently
different data (issue 11): a renamed or lost catalog, a truncated file, a page
past the end, a damaged length or key; and a cabinet that cannot be created
for want of room is ``disk_full``.

Every read of a damaged LMDB file runs in a forked child, so a SIGBUS shows as
the child's death instead of killing the test run.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memnet
from memnet import Cabinet
from memnet.cabinet import lmdb_file as F
from memnet.cabinet import records as R
from memnet.errors import MemNetError
from memnet.faces.cli import main

ERRORS, DURABLE = "MN-REQ-15", "MN-REQ-14.3"
OK, CORRUPT, DIFFERENT = 0, 10, 12


@pytest.fixture(scope="module")
def fill(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., None]:
    """``fill(path, sessions, versions, rows)`` puts a cabinet of that shape at
    ``path``: built once per shape and copied, so each test damages its own."""
    built: dict[tuple[int, int, int], Path] = {}

    def fill(path: Path, sessions: int = 3, versions: int = 4, rows: int = 20) -> None:
        shape = (sessions, versions, rows)
        if shape not in built:
            built[shape] = tmp_path_factory.mktemp("built") / "cab"
            _build(built[shape], *shape)
        shutil.copytree(built[shape], path)
        (path / "lock.mdb").unlink()

    return fill


def _build(path: Path, sessions: int, versions: int, rows: int) -> None:
    with Cabinet.open(path) as cab:
        for k in range(sessions):
            s = cab.create(f"ok-{k}")
            for v in range(versions):
                s.commit(
                    "INSERT "
                    + ", ".join(
                        f"(t{i}:TSK {{title: 'task {k} {v} {i} pricing', status: 'open', n: {i}}})"
                        for i in range(rows)
                    )
                )
                cab.flush(s)


def _digest(cab: Cabinet) -> str:
    """What a user reads from every session: its version, a Recall, its log
    and a past version."""
    out = []
    for info in cab.sessions():
        s = cab.open(info.id)
        out += [
            info.id,
            str(s.version),
            s.recall("TSK status:open pricing").text,
            repr([e.to_dict()["changed"] for e in cab.log(info.id)]),
            cab.open(info.id, at=1).recall("TSK").text,
        ]
    return "\n".join(out)


def _read_all(path: Path, expect: str | None = None) -> None:
    """Open the cabinet and read everything a user can; exit OK or CORRUPT
    (DIFFERENT when what was read is not ``expect``)."""
    try:
        with Cabinet.open(path) as cab:
            got = _digest(cab)
        os._exit(OK if expect is None or got == expect else DIFFERENT)
    except MemNetError as e:
        os._exit(CORRUPT if e.code == "cabinet_corrupt" else 20)
    except BaseException:  # noqa: BLE001 - the kind of failure is the finding
        os._exit(30)


def _verify_only(path: Path) -> None:
    try:
        with Cabinet.open(path) as cab:
            cab.verify()
        os._exit(OK)
    except MemNetError as e:
        os._exit(CORRUPT if e.code == "cabinet_corrupt" else 20)


def in_child(fn: Callable[[], None]) -> int:
    """Run ``fn`` in a forked child; its exit code, or minus the signal."""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(31)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _layout(data: Path) -> tuple[F._File, dict[str, Any], Any]:
    """The checked file's facts: the pages of the main table and of each table."""
    fd = os.open(data, os.O_RDONLY)
    f = F._File(str(data), fd, os.fstat(fd).st_size)
    m0 = F._meta(f, 0)
    f.psize = m0[3].pad
    m1 = F._meta(f, f.psize)
    meta = m1 if m1[6] > m0[6] else m0
    f.next = meta[5] + 1
    f.free = bytearray(f.next)
    f.seen = bytearray(f.next)
    main = meta[4]
    tables = {}
    for key, rec, _fl in f.leaves(f.tree(main, "main"), "main", whole=True, flags_ok=2):
        tables[key.decode()] = F._Db(rec, 0)
    os.close(fd)
    return f, tables, main


def _leaf_pages(data: Path, table: str) -> list[int]:
    f, tables, _main = _layout(data)
    fd = os.open(data, os.O_RDONLY)
    f.fd = fd
    f.seen = bytearray(f.next)
    try:
        return f.tree(tables[table], table)
    finally:
        os.close(fd)


def _key_at(data: Path, table: str, key: bytes) -> int:
    """Where ``key`` is in the live nodes of ``table`` (stale copies in free
    pages or in the unused middle of a page do not count)."""
    f = _layout(data)[0]
    raw = data.read_bytes()
    for pgno in _leaf_pages(data, table):
        buf = raw[pgno * f.psize : (pgno + 1) * f.psize]
        n = (struct.unpack_from("<H", buf, 12)[0] - F.HEADER) // 2
        for _size, _fl, ksize, k, at in f.nodes(buf, n, pgno, table, leaf=True):
            if k == key:
                return pgno * f.psize + at - ksize
    raise AssertionError(f"{key!r} is not in {table}")


def _patch(data: Path, off: int, new: bytes) -> None:
    with open(data, "r+b") as fh:
        fh.seek(off)
        fh.write(new)


# ----------------------------------------------------------------------------- LMDB files


@pytest.mark.req(DURABLE, ERRORS)
def test_a_renamed_catalog_is_cabinet_corrupt_not_an_empty_cabinet(
    fill: Callable[..., None], lmdb_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(lmdb_path)
    data = lmdb_path / "data.mdb"
    f, _tables, root = _layout(data)
    page = root.root * f.psize
    raw = data.read_bytes()[page : page + f.psize]
    _patch(data, page + raw.index(b"catalog"), b"cAtalog")
    assert in_child(lambda: _read_all(lmdb_path)) == CORRUPT
    assert main(["--home", str(lmdb_path), "session", "list"]) == 1
    assert "cabinet_corrupt" in capsys.readouterr().err
    assert data.read_bytes()[page : page + f.psize].count(b"cAtalog") == 1  # nothing created


@pytest.mark.req(DURABLE, ERRORS)
def test_a_listing_that_reads_fewer_rows_than_lmdb_counts_is_cabinet_corrupt(
    fill: Callable[..., None], lmdb_path: Path
) -> None:
    """The catalog's leaves are not read at open (that grew with the number
    of sessions); a listing compares the rows it read with the entries
    LMDB's own record of the table counts."""
    fill(lmdb_path)
    data = lmdb_path / "data.mdb"
    f, tables, root = _layout(data)
    page = root.root * f.psize
    buf = data.read_bytes()[page : page + f.psize]
    n = (struct.unpack_from("<H", buf, 12)[0] - F.HEADER) // 2
    (at,) = [
        a
        for _s, _fl, _k, key, a in f.nodes(buf, n, root.root, "main", leaf=True)
        if key == b"catalog"
    ]
    entries = page + at + 32  # pad, flags, depth, then branch, leaf, overflow pages
    assert struct.unpack_from("<Q", data.read_bytes(), entries)[0] == tables["catalog"].entries
    _patch(data, entries, struct.pack("<Q", tables["catalog"].entries + 1))

    def listing() -> None:
        try:
            with Cabinet.open(lmdb_path) as cab:
                cab.open("ok-1")  # a session is read as before
                cab.sessions()
            os._exit(OK)
        except MemNetError as e:
            os._exit(CORRUPT if e.code == "cabinet_corrupt" else 20)

    assert in_child(listing) == CORRUPT


@pytest.mark.req(DURABLE, ERRORS)
@pytest.mark.parametrize("keep", [0.5, 0.9, 8192, 100])
def test_a_truncated_file_is_cabinet_corrupt_not_sigbus(
    fill: Callable[..., None], lmdb_path: Path, keep: float
) -> None:
    fill(lmdb_path)
    data = lmdb_path / "data.mdb"
    size = data.stat().st_size
    os.truncate(data, int(size * keep) if keep < 1 else int(keep))
    assert in_child(lambda: _read_all(lmdb_path)) == CORRUPT
    assert data.stat().st_size == (int(size * keep) if keep < 1 else int(keep))  # untouched


@pytest.mark.req(DURABLE, ERRORS)
def test_a_page_named_past_the_end_is_cabinet_corrupt(
    fill: Callable[..., None], lmdb_path: Path
) -> None:
    fill(lmdb_path)
    data = lmdb_path / "data.mdb"
    f, tables, _root = _layout(data)
    raw = data.read_bytes()
    t0, t1 = (struct.unpack_from("<Q", raw, slot * f.psize + F.HEADER + 128)[0] for slot in (0, 1))
    last_at = (1 if t1 > t0 else 0) * f.psize + F.HEADER + 120
    nodes = tables["nodes"]
    assert nodes.depth >= 2
    (ptr,) = struct.unpack_from("<H", raw, nodes.root * f.psize + F.HEADER)
    for at, new in (
        (last_at, struct.pack("<Q", f.next - 1 + 1000)),  # the meta page's count
        (nodes.root * f.psize + ptr, struct.pack("<HHH", 0xFFF0, 0x0F, 0)),
    ):
        shutil.copy(data, data.with_suffix(".bak"))
        _patch(data, at, new)
        assert in_child(lambda: _read_all(lmdb_path)) == CORRUPT, at
        shutil.copy(data.with_suffix(".bak"), data)
    assert in_child(lambda: _read_all(lmdb_path)) == OK


@pytest.mark.req(DURABLE, ERRORS)
def test_a_damaged_value_length_is_cabinet_corrupt_not_sigbus(
    fill: Callable[..., None], lmdb_path: Path
) -> None:
    fill(lmdb_path, sessions=2, versions=30, rows=40)  # leaves far from the end of the file
    data = lmdb_path / "data.mdb"
    psize = _layout(data)[0].psize
    pages = data.stat().st_size // psize
    leaf = min(_leaf_pages(data, "nodes"))
    assert leaf < pages - 40
    buf = data.read_bytes()[leaf * psize : (leaf + 1) * psize]
    (ptr,) = struct.unpack_from("<H", buf, F.HEADER)  # the page's first node
    for size in (0x00FFFFF0, 0x7FFFFFF0, 3000):
        shutil.copy(data, data.with_suffix(".bak"))
        _patch(data, leaf * psize + ptr, struct.pack("<HH", size & 0xFFFF, size >> 16))
        assert in_child(lambda: _read_all(lmdb_path)) == CORRUPT, size
        shutil.copy(data.with_suffix(".bak"), data)


@pytest.mark.req(DURABLE, ERRORS)
def test_verify_finds_a_damaged_length_of_a_value_on_overflow_pages(
    fill: Callable[..., None], lmdb_path: Path
) -> None:
    """The one damage reads do not catch before py-lmdb touches the value
    (docs/cabinet.md): verify(), which reads the file itself, reports it."""
    fill(lmdb_path, sessions=2, versions=30, rows=40)
    data = lmdb_path / "data.mdb"
    f = _layout(data)[0]
    raw = data.read_bytes()
    for pgno in _leaf_pages(data, "postings"):
        buf = raw[pgno * f.psize : (pgno + 1) * f.psize]
        n = (struct.unpack_from("<H", buf, 12)[0] - F.HEADER) // 2
        big = [
            node for node in f.nodes(buf, n, pgno, "postings", leaf=True) if node[1] & F.F_BIGDATA
        ]
        if big:
            ptr = big[0][4] - big[0][2] - F.NODE
            break
    _patch(data, pgno * f.psize + ptr, struct.pack("<HH", 0xFFF0, 0x7F))

    def verify() -> None:
        try:
            Cabinet.open(lmdb_path).verify()
        except MemNetError as e:
            os._exit(CORRUPT if e.code == "cabinet_corrupt" else 20)
        os._exit(OK)

    assert in_child(verify) == CORRUPT


@pytest.mark.req(DURABLE, ERRORS)
def test_a_damaged_key_cannot_hide_a_record(fill: Callable[..., None], lmdb_path: Path) -> None:
    fill(lmdb_path)
    data = lmdb_path / "data.mdb"
    raw = data.read_bytes()
    with Cabinet.open(lmdb_path) as cab:
        expect = _digest(cab)
    (lmdb_path / "lock.mdb").unlink()
    for table, key in (
        ("log", R.element_key("ok-1", 2)),
        ("nodes", R.element_key("ok-1", 7)),
        ("catalog", b"ok-1"),
        ("postings", R.delta_key("ok-1", 3)),
    ):
        at = _key_at(data, table, key)
        for pos in (len(key) - 1, 2, len(key) - 9):  # the id, the session id, the separator
            shutil.copy(data, data.with_suffix(".bak"))
            _patch(data, at + pos, bytes([raw[at + pos] ^ 0x01]))
            got = in_child(lambda: _read_all(lmdb_path, expect))
            if table == "nodes":
                # node records are read in a row, each checked against the key
                # it should have: a damaged key is found by a scan (near the end
                # of the file, or by verify) or changes nothing read
                assert got in (CORRUPT, OK), (table, pos, got)
                assert in_child(lambda: _verify_only(lmdb_path)) == CORRUPT, (table, pos)
            else:
                assert got == CORRUPT, (table, pos, got)
            shutil.copy(data.with_suffix(".bak"), data)
    assert in_child(lambda: _read_all(lmdb_path, expect)) == OK


@pytest.mark.req(DURABLE)
def test_a_long_lived_cabinet_passes_the_checks(lmdb_path: Path) -> None:
    """The free list is keyed by transaction ids as native integers: with a
    reader pinning old pages, hundreds of transactions leave keys on both sides
    of 255 and 256, which sort as integers, not as bytes."""
    cab = Cabinet.open(lmdb_path, sync=False)
    s = cab.create("long")
    with cab.kv.read():  # keeps every page freed from now on in the free list
        for v in range(300):
            s.commit(f"INSERT (t:TSK {{n: {v}}})")
            cab.flush(s)
    cab.close()
    f, _tables, _root = _layout(lmdb_path / "data.mdb")
    assert f.next > 300
    assert in_child(lambda: _read_all(lmdb_path)) == OK


@pytest.mark.req(DURABLE, ERRORS)
def test_a_new_cabinet_reserves_its_lock_file_and_no_room_is_disk_full(tmp_path: Path) -> None:
    home = tmp_path / "cab"
    Cabinet.open(home).close()
    lock = os.stat(home / "lock.mdb")
    # no holes: LMDB's first write into the mapped lock file needs no new block
    assert lock.st_blocks * 512 >= lock.st_size > 0

    def create_with_no_room() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            Cabinet.open(tmp_path / "full")
        except MemNetError as e:
            os._exit(40 if e.code == "disk_full" else 41)
        os._exit(42)

    assert in_child(create_with_no_room) == 40
    assert not (tmp_path / "full").exists()  # nothing half-made is left


@pytest.mark.req(DURABLE, ERRORS)
def test_a_full_file_system_at_creation_is_disk_full_not_sigbus(tmp_path: Path) -> None:
    """On a real full file system (a 64 KiB tmpfs, in a private mount
    namespace) where that can be made; else (no privilege to mount) under a
    file size limit, which fails the same writes with EFBIG."""
    script = (
        "import sys, memnet\n"
        "try:\n"
        "    memnet.Cabinet.open(sys.argv[1])\n"
        "except memnet.MemNetError as e:\n"
        "    print(e.code); sys.exit(0)\n"
        "print('opened')\n"
    )
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    shell = (
        f"mount -t tmpfs -o size=64k tmpfs {mnt} && "
        f"(dd if=/dev/zero of={mnt}/fill bs=4k count=64 2>/dev/null; true) && "
        f'{sys.executable} -c "$0" {mnt}/cab; echo rc=$?; ls {mnt}'
    )
    for prefix in (["unshare", "--mount"], ["unshare", "--mount", "--map-root-user"]):
        if shutil.which("unshare") is None:
            break
        p = subprocess.run(
            [*prefix, "sh", "-c", shell, script], capture_output=True, text=True, timeout=60
        )
        if "rc=" in p.stdout:
            lines = p.stdout.split()
            assert lines[0] == "disk_full" and "rc=0" in lines, (p.stdout, p.stderr)
            assert "cab" not in lines  # the half-made cabinet is gone
            return
    test_a_new_cabinet_reserves_its_lock_file_and_no_room_is_disk_full(tmp_path / "fsize")


# ----------------------------------------------------------------------------- any backend


def _corrupt(call: Callable[[], object]) -> str:
    with pytest.raises(MemNetError) as e:
        call()
    return e.value.code


@pytest.mark.req(DURABLE, ERRORS)
def test_a_catalog_row_lost_on_its_own_is_cabinet_corrupt_where_the_session_is_named(
    place: Any, cabinet: Any
) -> None:
    for sid in ("a", "b", "c"):
        cabinet.create(sid)
    s = cabinet.open("c")
    s.commit("INSERT (t:TSK {title: 'kept'})")
    cabinet.flush(s)
    cabinet.drop("b")
    cabinet = place.reopen(cabinet)
    assert [i.id for i in cabinet.sessions()] == ["a", "c"]
    # the catalog row of c lost behind the cabinet's back; its birth record stays
    cabinet.kv.run_write(lambda t: t.delete(R.CATALOG, b"c"))
    for call in (
        lambda: cabinet.open("c"),
        lambda: cabinet.exists("c"),
        lambda: cabinet.session_info("c"),
        lambda: cabinet.create("c"),
        lambda: cabinet.log("c"),
        cabinet.verify,
    ):
        assert _corrupt(call) == "cabinet_corrupt"
    # a session dropped is gone whole: nothing of it is taken for damage
    assert not cabinet.exists("b")
    cabinet.create("b")


@pytest.mark.req(DURABLE, ERRORS)
def test_a_catalog_lost_or_emptied_is_cabinet_corrupt_on_open_never_an_empty_list(
    place: Any, cabinet: Any
) -> None:
    for sid in ("a", "b"):
        cabinet.create(sid)
    cabinet = place.reopen(cabinet)
    cabinet.kv.run_write(lambda t: [t.delete(R.CATALOG, k) for k, _v in list(t.scan(R.CATALOG))])
    assert _corrupt(lambda: place.reopen(cabinet)) == "cabinet_corrupt"


@pytest.mark.req(DURABLE)
def test_creating_and_dropping_sessions_never_write_the_header(
    place: Any, cabinet: Any, tmp_path: Path
) -> None:
    """No record that every create would rewrite (a hot row: concurrent
    creates on PostgreSQL failed on it); each session is written down by
    records of its own."""

    def header() -> bytes:
        with cabinet.kv.read() as t:
            raw = t.get(R.META, b"format")
        assert raw is not None
        return bytes(raw)

    before = header()
    for sid in ("a", "b", "c"):
        cabinet.create(sid)
    s = memnet.Session("d")
    s.commit("INSERT (t:TSK {title: 'adopted'})")
    cabinet.adopt(s)
    cabinet.drop("b")
    from memnet.cabinet.copy import copy_sessions

    other = Cabinet.open(backend="memory")
    other.create("e")
    copy_sessions(other, cabinet)
    assert header() == before
    assert [i.id for i in cabinet.sessions()] == ["a", "c", "d", "e"]
    assert cabinet.verify()["sessions"] == 4
    with cabinet.kv.read() as t:
        assert [R.key_id(k) for k, _v in t.scan(R.LOG, R.prefix("a"))] == [0]


@pytest.mark.req(DURABLE, ERRORS)
def test_records_without_a_header_are_cabinet_corrupt(place: Any, cabinet: Any) -> None:
    cabinet.create("a")
    cabinet.kv.run_write(lambda t: t.delete(R.META, b"format"))
    with pytest.raises(MemNetError) as e:
        place.reopen(cabinet)
    assert e.value.code == "cabinet_corrupt"
