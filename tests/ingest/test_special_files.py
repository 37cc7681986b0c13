"""Files ingest must not read: FIFOs (and other non-regular files) inside a model
or source tree, and files past a size cap. Real FIFOs (``os.mkfifo``) and real
sparse files (``truncate``); every test that meets a FIFO runs under a deadline,
so a reader that blocks on one fails here instead of hanging the suite."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memnet import Session
from memnet.errors import InputTooLarge, MemNetError, PathNotFound
from memnet.ingest import Warning_, ingest_path, scan, source, sysml
from memnet.ingest.sysml import parse_files, scan_sysml
from memnet.ingest.walk import read_regular, walk_tree

pytestmark = [
    pytest.mark.req("MN-REQ-18", "MN-REQ-21"),
    pytest.mark.skipif(
        not hasattr(os, "mkfifo") or not hasattr(signal, "setitimer"),
        reason="needs FIFOs and SIGALRM",
    ),
]

FIX = Path(__file__).resolve().parent / "fixtures"
SCRIPT = Path(sys.executable).with_name("memnet")
BIG = 64 * 1024 * 1024  # past both caps: 16 MiB (+3) for a model, 16 MiB for a source file
LOW = 8 * 1024 * 1024  # what the Python heap may grow by while such a file is refused


class Blocked(Exception):
    """Not an ``OSError``, so no ``except OSError`` in the code under test hides it."""


@contextmanager
def deadline(seconds: float = 20.0) -> Iterator[None]:
    """Fail (not hang) when the body blocks, e.g. in open() or read() of a FIFO."""

    def fire(signum: int, frame: object) -> None:
        raise Blocked(f"blocked for {seconds} s (a FIFO was opened or read)")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _model_with_fifo(tmp_path: Path) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(FIX / "parts.sysml", d / "parts.sysml")
    os.mkfifo(d / "x.sysml")
    return d


def _sparse(path: Path, size: int = BIG) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


@contextmanager
def _no_big_read(tmp: Path) -> Iterator[None]:
    """The Python heap must not grow by anything near the big file's size, and
    ``Path.read_bytes`` must not be called on a file under ``tmp``."""
    real = Path.read_bytes

    def guarded(self: Path) -> bytes:
        if tmp in self.parents:
            raise AssertionError(f"{self} read whole")
        return real(self)

    Path.read_bytes = guarded  # type: ignore[method-assign]
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
        assert peak < LOW, f"the heap grew by {peak} bytes while refusing a {BIG}-byte file"
    finally:
        tracemalloc.stop()
        Path.read_bytes = real  # type: ignore[method-assign]


# -- FIFOs ----------------------------------------------------------------------------
def test_a_fifo_in_a_model_directory_is_skipped_with_a_warning(tmp_path: Path) -> None:
    d = _model_with_fifo(tmp_path)
    plain = tmp_path / "plain" / "model"
    plain.mkdir(parents=True)
    shutil.copy(FIX / "parts.sysml", plain / "parts.sysml")
    with deadline():
        art = scan_sysml(d)
        lenient = scan_sysml(d, strict=False)
    want = scan_sysml(plain)
    assert art.elements and set(art.elements) == set(want.elements)
    assert set(art.links) == set(want.links)
    skipped = [w for w in art.warnings if w.path == "x.sysml"]
    assert [str(w) for w in skipped] == ["x.sysml:0: skipped: not a regular file (a FIFO)"]
    assert not art.failed and not lenient.failed
    assert [str(w) for w in lenient.warnings if w.path == "x.sysml"] == [str(skipped[0])]


def test_ingest_of_a_tree_with_a_fifo_model_file_warns_and_ingests_the_rest(tmp_path: Path) -> None:
    d = _model_with_fifo(tmp_path)
    (d / "notes.md").write_text("# Notes\n")
    s = Session("m")
    with deadline():
        res = ingest_path(s, d)
    assert res.tree is not None and res.tree.changed
    assert res.model is not None and res.model.created > 0
    assert "x.sysml:0: skipped: not a regular file (a FIFO)" in [str(w) for w in res.model.warnings]
    assert s.store.live_kinds()["PARTDEF"] > 0


def test_a_directory_holding_only_a_fifo_model_file_still_warns(tmp_path: Path) -> None:
    d = tmp_path / "only"
    d.mkdir()
    os.mkfifo(d / "x.sysml")
    with deadline():
        res = ingest_path(Session("m"), d)
    assert res.model is not None
    assert [str(w) for w in res.model.warnings] == [
        "x.sysml:0: skipped: not a regular file (a FIFO)"
    ]


def test_a_fifo_named_as_the_model_is_path_not_found(tmp_path: Path) -> None:
    fifo = _model_with_fifo(tmp_path) / "x.sysml"
    with deadline():
        with pytest.raises(MemNetError) as info:
            scan_sysml(fifo)
        with pytest.raises(MemNetError) as ingested:
            ingest_path(Session("m"), fifo)
    assert info.value.code == "path_not_found"
    assert "is a FIFO, not a .sysml file or a directory" in info.value.message
    assert ingested.value.code == "path_not_found"


def test_a_model_file_swapped_for_a_fifo_after_the_walk_is_not_opened_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _model_with_fifo(tmp_path)
    # the walk saw two regular files; by the time they are read one is a FIFO
    monkeypatch.setattr(
        sysml,
        "model_files",
        lambda path, warn=None: (
            "model",
            [("parts.sysml", d / "parts.sysml"), ("x.sysml", d / "x.sysml")],
        ),
    )
    warn: list[Warning_] = []
    with deadline():
        root, docs, failed = parse_files(d, warn=warn)
        with pytest.raises(PathNotFound) as info:
            read_regular(d / "x.sysml", 1024)
    assert [rel for rel, _doc in docs] == ["parts.sysml"] and not failed
    assert [str(w) for w in warn] == ["x.sysml:0: skipped: not a regular file (a FIFO)"]
    assert info.value.code == "path_not_found"


def test_a_source_file_swapped_for_a_fifo_after_the_walk_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = tmp_path / "pkg"
    top.mkdir()
    (top / "a.py").write_text("def f():\n    pass\n")
    os.mkfifo(top / "b.py")

    def walk_saw_a_file(top_: Path, handlers, warn, root):  # type: ignore[no-untyped-def]
        dirs, files = walk_tree(top_, handlers, [], root)  # (it saw b.py as a file: no warning)
        return dirs, sorted([*files, ("b.py", handlers[".py"])])

    monkeypatch.setattr(source, "walk_tree", walk_saw_a_file)
    with deadline():
        art = scan(top)
    assert "py:pkg/a.py::f" in art.elements and "py:pkg/b.py" not in art.elements
    assert [str(w) for w in art.warnings] == ["pkg/b.py:0: not read: not a regular file (a FIFO)"]


def test_a_fifo_named_as_a_source_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    top = tmp_path / "pkg"
    (top / "sub").mkdir(parents=True)
    (top / "a.py").write_text("def f():\n    pass\n")
    os.mkfifo(top / "sub" / "b.py")
    os.mkfifo(top / "c.txt")  # a name no handler takes: passed over quietly
    s = Session("t")
    with deadline():
        art = scan(top)
        res = ingest_path(s, top)
    assert "py:pkg/a.py::f" in art.elements and "py:pkg/sub/b.py" not in art.elements
    assert [str(w) for w in art.warnings] == [
        "pkg/sub/b.py:0: skipped: not a regular file (a FIFO)"
    ]
    assert res.tree is not None and [str(w) for w in res.tree.warnings] == [
        str(w) for w in art.warnings
    ]


def test_memnet_snap_of_a_directory_with_a_fifo_answers(tmp_path: Path) -> None:
    d = _model_with_fifo(tmp_path)
    try:
        out = subprocess.run(
            [
                str(SCRIPT),
                "--home",
                str(tmp_path / "cab"),
                "snap",
                str(d),
                "--prefix",
                "p",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("memnet snap blocked on the FIFO")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert "x.sysml:0: skipped: not a regular file (a FIFO)" in res["warnings"]
    assert res["interiors"] and not res["failed"]


# -- files past the caps ----------------------------------------------------------------
def test_an_oversized_model_file_is_refused_without_being_read(tmp_path: Path) -> None:
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(FIX / "parts.sysml", d / "parts.sysml")
    big = _sparse(d / "big.sysml")
    with _no_big_read(tmp_path):
        with pytest.raises(InputTooLarge) as strict:
            scan_sysml(d)
        with pytest.raises(InputTooLarge) as alone:
            scan_sysml(big)
        lenient = scan_sysml(d, strict=False)
    for e in (strict.value, alone.value):
        assert e.code == "input_too_large"
        assert e.message.startswith(f"big.sysml: model file is {BIG} bytes")
    assert [w.path for w in lenient.failed] == ["big.sysml"]
    assert "not ingested (input_too_large)" in lenient.failed[0].message
    assert lenient.elements  # parts.sysml still ingests


def test_an_oversized_source_file_is_a_warning_without_being_read(tmp_path: Path) -> None:
    top = tmp_path / "pkg"
    top.mkdir()
    (top / "a.py").write_text("def f():\n    pass\n")
    _sparse(top / "big.py")
    _sparse(top / "big.md")
    with _no_big_read(tmp_path):
        art = scan(top)
    assert "py:pkg/a.py::f" in art.elements
    assert "py:pkg/big.py" not in art.elements and "md:pkg/big.md" not in art.elements
    cap = source.MAX_FILE
    assert sorted(str(w) for w in art.warnings) == [
        f"pkg/big.md:0: not read: the file is {BIG} bytes; the cap is {cap}",
        f"pkg/big.py:0: not read: the file is {BIG} bytes; the cap is {cap}",
    ]
    assert art.files == 3 and art.parsed == 1


def test_read_regular_reads_at_most_one_byte_past_the_cap(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(b"x" * 100)
    assert read_regular(f, 100) == b"x" * 100
    with pytest.raises(InputTooLarge) as info:
        read_regular(f, 99)
    assert info.value.code == "input_too_large" and info.value.details["length"] == 100
    proc = Path("/proc/self/maps")  # a regular file whose size says 0: read on, to the cap
    if proc.exists() and proc.stat().st_size == 0:
        assert len(read_regular(proc, 1 << 20)) > 10
        with pytest.raises(InputTooLarge):
            read_regular(proc, 10)
