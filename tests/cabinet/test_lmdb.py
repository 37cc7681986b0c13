"""LMDB-only promises: persistence across processes, backup, the map-size cap,
a full disk, fork safety, stale readers and the engine header.

Everything runs on real LMDB directories under ``tmp_path`` and real child
processes (``sys.executable -c``); nothing of LMDB is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest

from memnet import (
    Cabinet,
    CabinetError,
    CabinetForked,
    CabinetFormat,
    CabinetFull,
    ConflictError,
    MemNetError,
)
from memnet.cabinet.binding import binding_of

from ._support import dump, finish, graph_of, kill, run, spawn

ATOMIC, HISTORY, ERRORS = "MN-REQ-03", "MN-REQ-13", "MN-REQ-15"
QUERIES = ["", "TSK", "MOD", "TSK status:open", "pricing"]


def _fill(cab: Cabinet) -> dict[str, list[dict[str, str]]]:
    """Two sessions with a few versions each; returns recall texts per version."""
    texts: dict[str, list[dict[str, str]]] = {}
    for sid, n in (("alpha", 4), ("beta", 2)):
        s = cab.create(sid)
        texts[sid] = [{q: s.recall(q).text for q in QUERIES}]
        ids: dict[str, str] = {}
        for i in range(n):
            if i == 0:
                r = s.commit(
                    f"INSERT (t:TSK {{title: 'pricing {sid}', status: 'open'}}), "
                    f"(m:MOD {{path: '{sid}.py'}}), (t)-[:TOUCHES]->(m)"
                )
                ids.update(r.ids)
            elif i == 2:
                r = s.commit(f"DELETE {ids['m']}")
            else:
                r = s.commit(f"SET {ids['t']}.step = {i}, {ids['t']}.status = 'open'")
            texts[sid].append({q: s.recall(q).text for q in QUERIES})
            cab.flush(s)
    return texts


# =========================================================================== persistence


@pytest.mark.req("MN-REQ-14", HISTORY)
def test_another_process_reads_what_was_flushed(lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    texts = _fill(cab)
    cab.close()
    script = (
        "import sys, json, memnet\n"
        "cab = memnet.Cabinet.open(sys.argv[1])\n"
        "out = {i.id: [cab.open(i.id, at=v).recall(q).text for v in range(i.version + 1)"
        " for q in json.loads(sys.argv[2])] for i in cab.sessions()}\n"
        "print(json.dumps(out))\n"
    )
    res = run(script, lmdb_path, json.dumps(QUERIES))
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    want = {sid: [t[q] for t in per for q in QUERIES] for sid, per in texts.items()}
    assert got == want


# =========================================================================== backup


@pytest.mark.req("MN-REQ-14", HISTORY)
def test_backup_is_a_complete_consistent_copy(tmp_path: Path, lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    texts = _fill(cab)
    infos_then = cab.sessions()
    logs_then = {sid: cab.log(sid) for sid in texts}
    dest = tmp_path / "backup"
    cab.backup(dest)
    # the original moves on; the backup must not
    s = cab.open("alpha")
    s.commit("INSERT (x:TSK {title: 'after the backup'})")
    cab.flush(s)

    bk = Cabinet.open(dest)
    try:
        infos = bk.sessions()
        assert [(i.id, i.version) for i in infos] == [("alpha", 4), ("beta", 2)]
        assert infos == infos_then
        assert cab.open("alpha").version == 5
        for sid, per in texts.items():
            assert bk.log(sid) == logs_then[sid]
            for v, t in enumerate(per):
                past = bk.open(sid, at=v)
                assert {q: past.recall(q).text for q in QUERIES} == t, (sid, v)
            live = bk.open(sid)
            assert {q: live.recall(q).text for q in QUERIES} == per[-1]
        assert bk.verify() == {"sessions": 2, "nodes": 4, "edges": 2, "log": 6}
        # the backup is a working cabinet of its own
        b = bk.open("beta")
        b.commit("INSERT (y:TSK {title: 'in the backup'})")
        assert bk.flush(b) == 3
    finally:
        bk.close()
    assert cab.open("beta").version == 2
    cab.close()


@pytest.mark.req(ATOMIC)
def test_backup_into_an_existing_cabinet_is_refused(tmp_path: Path, lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    _fill(cab)
    other_path = tmp_path / "other"
    other = Cabinet.open(other_path)
    s = other.create("mine")
    s.commit("INSERT (t:TSK {title: 'do not overwrite me'})")
    other.flush(s)
    before = dump(other)
    other.close()
    data_before = (other_path / "data.mdb").read_bytes()

    with pytest.raises(MemNetError):
        cab.backup(other_path)
    with pytest.raises(MemNetError):
        cab.backup(lmdb_path)  # onto itself
    assert (other_path / "data.mdb").read_bytes() == data_before
    other = Cabinet.open(other_path)
    assert dump(other) == before
    other.close()
    # an existing but empty directory is fine
    empty = tmp_path / "empty"
    empty.mkdir()
    cab.backup(empty)
    cab.close()
    with Cabinet.open(empty) as bk:
        assert [i.id for i in bk.sessions()] == ["alpha", "beta"]
        bk.verify()


# =========================================================================== size cap


def _big_batch(s: Any, n: int, width: int = 300, tag: str = "big") -> None:
    """Commit ``n`` wide nodes in commits of at most 1,000 (the Δ token cap)."""
    pad = "p" * width
    for lo in range(0, n, 1000):
        s.commit(
            "INSERT "
            + ", ".join(
                f"(b{i}:TSK {{title: '{tag} {i}', pad: '{pad}'}})"
                for i in range(lo, min(n, lo + 1000))
            )
        )


@pytest.mark.req("MN-REQ-14.3", ATOMIC, ERRORS)
def test_map_full_is_cabinet_full_then_a_larger_cap_takes_the_same_session(lmdb_path: Path) -> None:
    small = 1 << 20
    cab = Cabinet.open(lmdb_path, max_size=small)
    assert cab.info()["max_size"] == small
    s = cab.create("x")
    s.commit("INSERT (t:TSK {title: 'before'})")
    cab.flush(s)
    text = cab.open("x").recall("TSK").text
    before = dump(cab)

    _big_batch(s, 3000, width=400)
    pending, version = len(s.journal()), s.version
    with pytest.raises(CabinetFull) as info:
        cab.flush(s)
    err = info.value
    assert err.code == "cabinet_full"
    assert err.details["max_size"] == small
    assert s.dirty and len(s.journal()) == pending and s.version == version
    assert binding_of(s).version == 1
    assert dump(cab) == before
    assert [i.version for i in cab.sessions()] == [1]
    assert cab.verify() == {"sessions": 1, "nodes": 1, "edges": 0, "log": 1}
    assert cab.open("x").recall("TSK").text == text
    # still usable for what fits
    y = cab.create("y")
    y.commit("INSERT (t:TSK {title: 'small'})")
    assert cab.flush(y) == 1
    cab.close()

    big = Cabinet.open(lmdb_path, max_size=64 << 20)
    try:
        assert big.flush(s) == version
        assert not s.dirty
        back = big.open("x")
        assert back.version == version and back.stats()["nodes"] == 3001
        assert graph_of(back) == graph_of(s)
        assert [e.version for e in big.log("x")] == list(range(1, version + 1))
        assert big.verify()["nodes"] == 3002
    finally:
        big.close()


# =========================================================================== disk full

DISK_FULL_CHILD = r"""
import json, os, resource, signal, sys
import memnet
path, sid, extra = sys.argv[1], sys.argv[2], int(sys.argv[3])
cab = memnet.Cabinet.open(path)
s = cab.open(sid)
pad = "q" * 400
for lo in range(0, 3000, 1000):
    s.commit("INSERT " + ", ".join(f"(b{i}:TSK {{title: 'big {i}', pad: '{pad}'}})"
                                   for i in range(lo, lo + 1000)))
pending = len(s.journal())
size = os.path.getsize(os.path.join(path, "data.mdb"))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = size + extra
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
out = {"limit": limit, "size": size}
try:
    cab.flush(s)
    out["result"] = "flushed"
except memnet.MemNetError as e:
    out.update(result="refused", cls=type(e).__name__, code=e.code, message=str(e),
               dirty=s.dirty, pending_kept=len(s.journal()) == pending,
               disk_full=isinstance(e, memnet.DiskFull))
except Exception as e:
    out.update(result="raw", cls=type(e).__name__, message=str(e))
try:
    out["stored"] = [i.version for i in cab.sessions() if i.id == sid]
except Exception as e:
    out["stored"] = repr(e)
print(json.dumps(out), flush=True)
"""


@pytest.mark.req("MN-REQ-14.3", ATOMIC, ERRORS)
@pytest.mark.parametrize("extra", [64 * 1024, 64 * 1024 + 100], ids=["page-aligned", "unaligned"])
def test_disk_full_is_disk_full_and_the_previous_version_survives(
    lmdb_path: Path, extra: int
) -> None:
    cab = Cabinet.open(lmdb_path)
    s = cab.create("x")
    s.commit(
        "INSERT (t:TSK {title: 'before', status: 'open'}), (m:MOD {path: 'm.py'}), "
        "(t)-[:TOUCHES]->(m)"
    )
    cab.flush(s)
    texts = {q: s.recall(q).text for q in QUERIES}
    before = dump(cab)
    cab.close()

    res = run(DISK_FULL_CHILD, lmdb_path, "x", extra, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out.get("result") == "refused", out
    assert (out["cls"], out["code"], out["disk_full"]) == ("DiskFull", "disk_full", True), (
        f"LMDB reported: {out}"
    )
    assert out["dirty"] and out["pending_kept"], out
    assert out["stored"] == [1], out

    t0 = time.monotonic()
    cab = Cabinet.open(lmdb_path)
    try:
        assert time.monotonic() - t0 < 5
        assert cab.verify() == {"sessions": 1, "nodes": 2, "edges": 1, "log": 1}
        assert dump(cab) == before
        h = cab.open("x")
        assert h.version == 1
        assert {q: h.recall(q).text for q in QUERIES} == texts
        h.commit("INSERT (u:TSK {title: 'after'})")
        assert cab.flush(h) == 2
        cab.verify()
    finally:
        cab.close()


# =========================================================================== fork

CHILD_CHECKS = (
    "sessions",
    "exists",
    "open",
    "open_at",
    "log",
    "create",
    "flush",
    "drop",
    "verify",
    "backup",
    "info",
)


@pytest.mark.req("MN-REQ-14.3", ERRORS, ATOMIC)
def test_a_cabinet_used_across_fork_is_cabinet_forked(tmp_path: Path, lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    s = cab.create("x")
    s.commit("INSERT (t:TSK {title: 'parent'})")
    cab.flush(s)
    s.commit("INSERT (u:TSK {title: 'parent pending'})")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report through the pipe, never return into pytest
        report: dict[str, str] = {}
        try:
            os.close(r)
            calls = {
                "sessions": cab.sessions,
                "exists": lambda: cab.exists("x"),
                "open": lambda: cab.open("x"),
                "open_at": lambda: cab.open("x", at=1),
                "log": lambda: cab.log("x"),
                "create": lambda: cab.create("y"),
                "flush": lambda: cab.flush(s),
                "drop": lambda: cab.drop("x"),
                "verify": cab.verify,
                "backup": lambda: cab.backup(tmp_path / "bk"),
                "info": cab.info,
            }
            for name in CHILD_CHECKS:
                try:
                    calls[name]()
                    report[name] = "no error"
                except CabinetForked as e:
                    report[name] = "ok" if e.code == "cabinet_forked" else f"code {e.code}"
                except BaseException as e:  # noqa: BLE001
                    report[name] = f"{type(e).__name__}: {e}"
            try:
                cab.close()
                report["close"] = "ok"
            except BaseException as e:  # noqa: BLE001
                report["close"] = f"{type(e).__name__}: {e}"
        finally:
            os.write(w, json.dumps(report).encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    report = json.loads(data)
    assert report == {**{n: "ok" for n in CHILD_CHECKS}, "close": "ok"}

    # the parent is unharmed
    assert cab.flush(s) == 2
    t = cab.create("y")
    t.commit("INSERT (v:TSK {title: 'after fork'})")
    cab.flush(t)
    assert cab.verify() == {"sessions": 2, "nodes": 3, "edges": 0, "log": 3}
    assert not (tmp_path / "bk" / "data.mdb").exists()
    cab.close()


@pytest.mark.req(ERRORS)
def test_the_child_can_open_the_cabinet_again_as_cabinet_forked_advises(lmdb_path: Path) -> None:
    """CabinetForked says: "open it again in the child process". Do that."""
    cab = Cabinet.open(lmdb_path)
    s = cab.create("x")
    s.commit("INSERT (t:TSK {title: 'parent'})")
    cab.flush(s)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        result = "?"
        try:
            os.close(r)
            cab.close()
            with Cabinet.open(lmdb_path) as again:
                c = again.open("x")
                c.commit("INSERT (u:TSK {title: 'child'})")
                result = "ok" if again.flush(c) == 2 else "wrong version"
        except BaseException as e:  # noqa: BLE001
            result = f"{type(e).__name__}: {getattr(e, 'code', '')}: {e}"
        finally:
            os.write(w, result.encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        result = f.read().decode()
    os.waitpid(pid, 0)
    try:
        assert result == "ok"
        assert cab.open("x").version == 2
        cab.verify()
    finally:
        cab.close()


@pytest.mark.req(ERRORS)
def test_opening_an_open_cabinet_again_is_not_reported_as_corruption(lmdb_path: Path) -> None:
    """A second ``Cabinet.open`` of a directory this process holds open either
    works or is refused for what it is: never ``cabinet_corrupt``, which tells a
    harness the stored data is damaged."""
    cab = Cabinet.open(lmdb_path)
    try:
        try:
            second = Cabinet.open(lmdb_path)
        except MemNetError as e:
            assert e.code != "cabinet_corrupt", f"{type(e).__name__} {e.code}: {e}"
        else:
            second.close()
        assert cab.verify()["sessions"] == 0
    finally:
        cab.close()


# =========================================================================== stale readers

HOLDER = r"""
import sys, memnet
cab = memnet.Cabinet.open(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    print(cab.open(sys.argv[2]).version, flush=True)
"""

READER = r"""
import os, sys, time, memnet
cab = memnet.Cabinet.open(sys.argv[1])
with cab.kv.read() as txn:
    txn.get("catalog", sys.argv[2].encode())
    print("reading", os.getpid(), flush=True)
    time.sleep(120)
"""


@pytest.mark.req(ATOMIC)
def test_a_killed_reader_does_not_block_reopen_or_writes(lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    s = cab.create("x")
    s.commit("INSERT (t:TSK {title: 'a'})")
    cab.flush(s)
    cab.close()

    # a second process keeps the environment open, so the parent's open below
    # is not the first user of the lock file (which would reset it anyway)
    holder = spawn(HOLDER, lmdb_path, "x", stdin=True)
    reader = spawn(READER, lmdb_path, "x")
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        line = reader.stdout.readline().split()
        assert line and line[0] == "reading", reader.stderr.read()
        dead = int(line[1])
        reader.send_signal(signal.SIGKILL)
        finish(reader)
        assert reader.returncode == -signal.SIGKILL

        t0 = time.monotonic()
        cab = Cabinet.open(lmdb_path)
        assert time.monotonic() - t0 < 5
        try:
            table = cab.kv.env.readers()
            assert not any(row.split()[:1] == [str(dead)] for row in table.splitlines()[1:]), table
            assert cab.verify()["sessions"] == 1
            h = cab.open("x")
            for i in range(200):
                h.commit(f"INSERT (t{i}:TSK {{title: 'after the kill {i}'}})")
                cab.flush(h)
            assert cab.open("x").version == 201
            assert cab.verify()["log"] == 201
            holder.stdin.write("check\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "201"
        finally:
            cab.close()
    finally:
        for p in (holder, reader):
            kill(p)


# =========================================================================== engine header


@pytest.mark.req(ERRORS)
def test_a_cabinet_written_by_another_lmdb_major_is_cabinet_format(lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    with cab.kv.read() as txn:
        raw = txn.get("meta", b"format")
    header = msgpack.unpackb(raw[4:], raw=False)
    assert header["backend"] == "lmdb" and header["engine"].count(".") == 2
    header["engine"] = "0.8.0"
    body = msgpack.packb(header, use_bin_type=True)
    import zlib

    cab.kv.run_write(
        lambda t: t.put("meta", b"format", zlib.crc32(b"format" + body).to_bytes(4, "big") + body)
    )
    cab.close()
    with pytest.raises(CabinetFormat) as info:
        Cabinet.open(lmdb_path)
    assert info.value.code == "cabinet_format"


@pytest.mark.req("MN-REQ-14.1", ATOMIC)
def test_a_flush_in_another_process_makes_this_copy_stale(lmdb_path: Path) -> None:
    cab = Cabinet.open(lmdb_path)
    s = cab.create("x")
    s.commit("INSERT (t:TSK {title: 'a'})")
    cab.flush(s)
    script = (
        "import sys, memnet\n"
        "cab = memnet.Cabinet.open(sys.argv[1])\n"
        "s = cab.open('x')\n"
        "s.commit(\"INSERT (u:TSK {title: 'from the child'})\")\n"
        "print(cab.flush(s))\n"
    )
    res = run(script, lmdb_path)
    assert res.returncode == 0 and res.stdout.strip() == "2", res.stderr
    s.commit("INSERT (v:TSK {title: 'from the parent'})")
    before = dump(cab)
    with pytest.raises(ConflictError) as info:
        cab.flush(s)
    assert (info.value.details["stored"], info.value.details["expected"]) == (2, 1)
    assert dump(cab) == before
    assert "from the child" in cab.open("x").recall("TSK").text
    cab.close()


@pytest.mark.req(ERRORS)
def test_cabinet_errors_share_the_root() -> None:
    for cls in (CabinetFull, CabinetFormat, CabinetForked):
        assert issubclass(cls, CabinetError) and issubclass(cls, MemNetError)


@pytest.mark.req("MN-REQ-14", ERRORS)
@pytest.mark.parametrize("how", ["truncated", "deleted", "truncated, lock file deleted"])
def test_a_data_file_emptied_or_lost_is_cabinet_corrupt_not_a_new_cabinet(
    lmdb_path: Path, how: str
) -> None:
    """LMDB takes an empty or missing data.mdb for a new cabinet: beside the
    lock file of a cabinet that was opened before, or as an empty file of its
    own, that is lost data, and nothing (not even a listing) may write a
    fresh header over it, unless the caller asks to start over."""
    with Cabinet.open(lmdb_path) as cab:
        s = cab.create("kept")
        s.commit("INSERT (t:TSK {title: 'x'})")
        cab.flush(s)
    data = lmdb_path / "data.mdb"
    if how.startswith("truncated"):
        os.truncate(data, 0)
    else:
        data.unlink()
    if how.endswith("lock file deleted"):  # rm H/lock.mdb; : > H/data.mdb (issue 36)
        (lmdb_path / "lock.mdb").unlink()
    for _ in range(2):
        with pytest.raises(MemNetError) as e:
            Cabinet.open(lmdb_path)
        assert e.value.code == "cabinet_corrupt" and "data.mdb" in e.value.message
    assert (not data.exists()) or data.stat().st_size == 0  # nothing written over it
    # asked for, a new cabinet takes the place of the lost one
    with Cabinet.open(lmdb_path, start_over=True) as cab:
        assert cab.sessions() == []
        cab.create("again")
    with Cabinet.open(lmdb_path, start_over=True) as cab:  # never over a data file
        assert [i.id for i in cab.sessions()] == ["again"]


@pytest.mark.req("MN-REQ-14", ERRORS)
def test_only_a_directory_with_no_cabinet_files_becomes_a_new_cabinet(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a cabinet's\n")
    with Cabinet.open(empty) as cab:
        assert cab.sessions() == []
    with Cabinet.open(tmp_path / "new" / "deeper") as cab:
        assert cab.sessions() == []
    with pytest.raises(MemNetError) as e:
        Cabinet.open(tmp_path, start_over="yes")  # type: ignore[arg-type]
    assert e.value.code == "invalid_argument"
