"""The host index: BM25 search over a tree, refreshed in proportion to the
change, with a coded error and nothing written for every bad input."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memnet.errors import MemNetError
from memnet.host import HostIndex, index_tree, open_index, search, units
from memnet.host import disk as hdisk
from memnet.host import index as hindex

from .conftest import needs_tantivy

needs_tantivy()

ROOT = Path(__file__).resolve().parents[2]


def listing(d: Path) -> dict[str, tuple[int, int]]:
    """Every file below d with its size and modification time."""
    return {
        p.relative_to(d).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


def code_of(call) -> str:
    with pytest.raises(MemNetError) as e:
        call()
    return e.value.code


def locators(ix: HostIndex, q: str, top: int = 10) -> list[str]:
    return [h.locator for h in ix.search(q, top)]


@pytest.fixture
def where(tree, tmp_path) -> Path:
    """The directory of an index of the tree, built."""
    index_tree(tree, tmp_path / "ix")
    return tmp_path / "ix"


@pytest.mark.req("MN-REQ-22")
def test_build_and_search(tree, tmp_path):
    res = index_tree(tree, tmp_path / "ix")
    assert res.created and res.changed and res.files == 6 and res.parsed == 6
    assert res.root == os.fspath(tree.resolve()) and res.warnings == ()
    ix = open_index(tmp_path / "ix")
    assert len(ix) == res.docs == 14  # 3 MOD, 3 SYM, a DOC with 3 SEC, a text, 3 SysML
    (best, *_rest) = ix.search("round a price half to even", 5)
    assert best.locator == "py:lib/shop/pricing.py::round_price" and best.kind == "SYM"
    assert best.path == "lib/shop/pricing.py" and best.line == 6 and best.score > 0
    assert (
        best.title == "round_price(amount, places=2): Round a price half to even, the way "
        "the accounting system does."
    )
    # every kind of unit is found by its own words
    assert locators(ix, "warehouse Leeds parcels")[0] == "txt:lib/docs/notes.txt"
    assert locators(ix, "refund restocks")[0] == "md:lib/docs/guide.md#refunds"
    assert locators(ix, "second heading same title")[0] == "md:lib/docs/guide.md#refunds-2"
    assert locators(ix, "checkout two seconds")[0] == "sysml:lib/ShopModel::fastCheckout"
    assert locators(ix, "SHOP-1")[0] == "sysml:lib/ShopModel::fastCheckout"
    assert locators(ix, "shopping cart tax")[0] in (
        "py:lib/shop/cart.py::total",
        "py:lib/shop/cart.py",
    )
    assert "py:lib/shop/pricing.py::PriceList.lookup" not in locators(ix, "methods units", 20)
    # the same query gives the same list; top bounds it
    assert ix.search("price cart", 3) == ix.search("price cart", 3)
    assert len(ix.search("price cart shop", 2)) == 2
    assert search("price", tmp_path / "ix", top=1) == ix.search("price", 1)
    assert [h.to_dict() for h in ix.search("warehouse", 1)] == [
        {
            "locator": "txt:lib/docs/notes.txt",
            "title": "notes.txt: Warehouse notes",
            "score": round(ix.search("warehouse", 1)[0].score, 4),
            "kind": "DOC",
            "path": "lib/docs/notes.txt",
            "line": 1,
        }
    ]


@pytest.mark.req("MN-REQ-22")
def test_an_unchanged_tree_does_no_work(tree, tmp_path, where, monkeypatch):
    before = listing(where)
    read = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self) or real(self))
    real_regular = hindex.read_regular
    monkeypatch.setattr(
        hindex, "read_regular", lambda path, cap: read.append(path) or real_regular(path, cap)
    )
    res = index_tree(tree, where)
    assert (res.changed, res.parsed, res.removed, res.files) == (False, 0, 0, 6)
    assert read == [] and listing(where) == before  # no file read, nothing written
    # a touched file is read and hashed, but not parsed again
    os.utime(tree / "shop" / "cart.py", ns=(1, 1))
    res = index_tree(tree, where)
    assert (res.changed, res.parsed) == (False, 0) and len(read) == 1
    manifest = json.loads((where / hindex.MANIFEST).read_text())
    assert manifest["shop/cart.py"][1] == 1
    read.clear()
    assert index_tree(tree, where).parsed == 0 and read == []


@pytest.mark.req("MN-REQ-22")
def test_a_refresh_replaces_what_changed_and_drops_what_went(tree, tmp_path, where):
    (tree / "shop" / "pricing.py").write_text(
        '"""Prices."""\ndef discount(amount):\n    """Take ten percent off a basket."""\n'
    )
    (tree / "docs" / "notes.txt").unlink()
    (tree / "docs" / "new.md").write_text("# Returns\n\nParcels come back to Leeds.\n")
    res = index_tree(tree, where)
    assert (res.changed, res.parsed, res.removed, res.files) == (True, 2, 1, 6)
    ix = open_index(where)
    assert locators(ix, "ten percent basket")[0] == "py:lib/shop/pricing.py::discount"
    assert "py:lib/shop/pricing.py::round_price" not in locators(ix, "round price half even")
    assert "txt:lib/docs/notes.txt" not in locators(ix, "warehouse Tuesdays Leeds")
    assert locators(ix, "parcels come back")[0] == "md:lib/docs/new.md#returns"
    # the model is one unit: a changed .sysml file re-reads the model
    (tree / "model" / "more.sysml").write_text(
        "package More { part def Scanner { doc /* Reads barcodes at the till. */ } }\n"
    )
    res = index_tree(tree, where)
    assert res.parsed == 2  # both model files
    assert locators(ix, "barcodes till")[0] == "sysml:lib/More::Scanner"
    assert locators(ix, "checkout two seconds")[0] == "sysml:lib/ShopModel::fastCheckout"
    (tree / "model" / "more.sysml").unlink()
    res = index_tree(tree, where)
    assert res.removed == 1 and "sysml:lib/More::Scanner" not in locators(ix, "barcodes till")
    # no locator is ever indexed twice
    every = [h.locator for h in ix.search("the a of lib shop docs model price", 100)]
    assert len(every) == len(set(every)) == len(ix)


@pytest.mark.req("MN-REQ-22")
def test_a_subtree_refreshes_only_itself(tree, tmp_path, where):
    (tree / "shop" / "cart.py").write_text(
        '"""Carts."""\ndef empty():\n    """Drop every item."""\n'
    )
    (tree / "docs" / "notes.txt").write_text("Changed but outside the subtree.\n")
    res = index_tree(tree / "shop", where)
    assert (res.files, res.parsed, res.root) == (3, 1, os.fspath(tree.resolve()))
    ix = open_index(where)
    assert locators(ix, "drop every item")[0] == "py:lib/shop/cart.py::empty"
    assert locators(ix, "warehouse Leeds")[0] == "txt:lib/docs/notes.txt"  # not refreshed
    assert index_tree(tree, where).parsed == 1  # the rest, later


@pytest.mark.req("MN-REQ-22")
def test_an_open_index_follows_a_rebuild_and_a_removal(tree, tmp_path):
    where = tmp_path / "ix"
    index_tree(tree / "shop", where)
    ix = open_index(where)
    assert locators(ix, "shopping cart")[0].startswith("py:shop/")
    _remove(where)
    index_tree(tree / "docs", where)
    assert locators(ix, "warehouse Leeds") == ["txt:docs/notes.txt"]
    assert locators(ix, "shopping cart") == [] and ix.name == "docs"
    _remove(where)
    assert code_of(lambda: ix.search("warehouse")) == "index_not_found"


@pytest.mark.req("MN-REQ-22", "MN-REQ-15")
def test_bad_input_gets_a_code_and_writes_nothing(tree, tmp_path):
    where = tmp_path / "ix"
    assert code_of(lambda: index_tree(tmp_path / "missing", where)) == "path_not_found"
    assert code_of(lambda: index_tree(tree / "shop" / "cart.py", where)) == "path_not_found"
    assert not where.exists()
    assert code_of(lambda: open_index(where)) == "index_not_found"
    assert code_of(lambda: search("price", where)) == "index_not_found"
    index_tree(tree, where)
    before = listing(where)
    other = tmp_path / "other"
    other.mkdir()
    assert code_of(lambda: index_tree(other, where)) == "path_outside_root"
    assert code_of(lambda: index_tree(tree.parent, where)) == "path_outside_root"
    ix = open_index(where)
    for q in ("", "   ", "?!", 42, "x" * (hindex.MAX_QUERY + 1)):
        assert code_of(lambda q=q: ix.search(q)) == "bad_query"
        assert code_of(lambda q=q: search(q, tmp_path / "nowhere")) == "bad_query"
    for top in (0, 101, -1, True, "3"):
        assert code_of(lambda top=top: ix.search("price", top)) == "bad_query"
    assert listing(where) == before
    # a directory that holds something else is not taken over
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    assert code_of(lambda: index_tree(tree, busy)) == "index_corrupt"
    assert listing(busy) == {"keep.txt": listing(busy)["keep.txt"]}
    assert code_of(lambda: index_tree(tree, busy / "keep.txt")) == "path_not_found"


@pytest.mark.req("MN-REQ-22", "MN-REQ-14.3")
@pytest.mark.parametrize("damage", ["header", "manifest", "tantivy meta", "segment"])
def test_a_corrupt_index_is_reported_and_left_alone(tree, tmp_path, where, damage):
    if damage == "header":
        (where / hindex.META).write_text("{not json")
    elif damage == "manifest":
        (where / hindex.MANIFEST).write_text("[1, 2]")
    elif damage == "tantivy meta":
        (where / "meta.json").write_text("{garbage")
    else:
        seg = next(p for p in where.iterdir() if p.suffix == ".term")
        with open(seg, "r+b") as f:
            f.truncate(10)
    before = listing(where)
    assert code_of(lambda: index_tree(tree, where)) == "index_corrupt"
    if damage != "manifest":  # search needs no manifest
        assert code_of(lambda: search("price", where)) == "index_corrupt"
    assert listing(where) == before


@pytest.mark.req("MN-REQ-22", "MN-REQ-14")
def test_a_failed_refresh_leaves_the_index_as_it_was(tree, tmp_path, where, monkeypatch):
    before = listing(where)
    (tree / "shop" / "cart.py").write_text('"""Carts."""\ndef empty():\n    """Drop all."""\n')
    (tree / "shop" / "pricing.py").write_text('"""Prices."""\n')

    def boom(root, rel, data):
        if rel.endswith("pricing.py"):
            raise RuntimeError("disk on fire")
        return real(root, rel, data)

    real = units.READERS["py"]
    monkeypatch.setitem(units.READERS, "py", boom)
    with pytest.raises(RuntimeError):
        index_tree(tree, where)
    monkeypatch.setitem(units.READERS, "py", real)
    after = listing(where)
    assert set(after) == set(before)  # the segments written on the way are gone again
    for name in ("meta.json", hindex.META, hindex.MANIFEST):
        assert after[name] == before[name]
    ix = open_index(where)
    assert "py:lib/shop/cart.py::empty" not in locators(ix, "drop all")
    assert locators(ix, "round price half even")[0] == "py:lib/shop/pricing.py::round_price"
    # a first build that fails leaves no directory behind
    monkeypatch.setitem(units.READERS, "py", boom)
    with pytest.raises(RuntimeError):
        index_tree(tree, tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".fresh")] == []


@pytest.mark.req("MN-REQ-22", "MN-REQ-14")
def test_a_manifest_left_behind_by_a_crash_is_caught_up(tree, tmp_path, monkeypatch):
    """The commit lands, the process dies before the manifest is written: the next
    refresh redoes those files and no document is doubled."""
    where = tmp_path / "ix"
    index_tree(tree, where)
    (tree / "shop" / "cart.py").write_text('"""Carts."""\ndef empty():\n    """Drop all."""\n')
    real = hdisk.write_json

    def die(path, data):
        raise KeyboardInterrupt

    monkeypatch.setattr(hdisk, "write_json", die)
    with pytest.raises(KeyboardInterrupt):
        index_tree(tree, where)
    monkeypatch.setattr(hdisk, "write_json", real)
    res = index_tree(tree, where)
    assert res.parsed == 1 and res.changed
    fresh = index_tree(tree, tmp_path / "fresh")
    assert res.docs == fresh.docs == len(open_index(where))
    assert locators(open_index(where), "drop all")[0] == "py:lib/shop/cart.py::empty"


@pytest.mark.req("MN-REQ-22")
def test_one_writer_at_a_time(tree, tmp_path, where):
    (tree / "docs" / "notes.txt").write_text("changed\n")
    fd = os.open(where / hindex.LOCK, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert code_of(lambda: index_tree(tree, where)) == "index_busy"
        assert [h.locator for h in search("warehouse", where)] == ["txt:lib/docs/notes.txt"]
    finally:
        os.close(fd)
    assert index_tree(tree, where).parsed == 1


@pytest.mark.req("MN-REQ-22", "MN-REQ-15")
def test_without_the_extra_the_error_says_how_to_install_it(tree, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tantivy", None)  # import tantivy raises ImportError
    with pytest.raises(MemNetError) as e:
        index_tree(tree, tmp_path / "ix")
    assert e.value.code == "dependency_missing"
    assert "pip install 'memnet[host]'" in e.value.message
    assert not (tmp_path / "ix").exists()


def test_importing_memnet_and_its_faces_does_not_load_the_search_library():
    code = (
        "import sys, memnet, memnet.host, memnet.faces.cli, memnet.faces.mcp; "
        "memnet.faces.cli.build_parser(); assert 'tantivy' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def _remove(where):  # type: ignore[no-untyped-def]
    """``rm -rf`` of an index directory that an open index may still touch:
    the search library can put a lock file back while the tree goes, so the
    removal is tried again (a few times, then it fails)."""
    for attempt in range(5):
        try:
            shutil.rmtree(where)
            return
        except OSError:
            if attempt == 4:
                raise


@pytest.mark.req("MN-REQ-22")
def test_a_file_over_the_cap_is_a_warning_and_never_read(tree, tmp_path, monkeypatch):
    big = tree / "shop" / "huge.py"
    with open(big, "wb") as f:
        f.truncate(hindex.MAX_FILE + 1)  # sparse: no disk, and no memory if unread
    read = []
    real_regular = hindex.read_regular
    monkeypatch.setattr(
        hindex, "read_regular", lambda path, cap: read.append(path) or real_regular(path, cap)
    )
    res = index_tree(tree, tmp_path / "ix")
    assert [w.message for w in res.warnings if w.path.endswith("huge.py")] == [
        f"not indexed: {hindex.MAX_FILE + 1:,} bytes, over the cap of {hindex.MAX_FILE:,} "
        "bytes a file may have"
    ]
    assert big not in read
    assert index_tree(tree, tmp_path / "ix").parsed == 0  # and no work the next time


@pytest.mark.req("MN-REQ-22")
def test_an_empty_file_is_indexed_without_a_warning(tree, tmp_path):
    # issue 34: every empty file (networkx has 24 empty __init__.py) was warned
    # about as "larger than 16777216 bytes" and left out of the index
    (tree / "shop" / "empty").mkdir()
    (tree / "shop" / "empty" / "__init__.py").write_bytes(b"")
    (tree / "docs" / "blank.md").write_bytes(b"")
    res = index_tree(tree, tmp_path / "ix")
    assert not [w for w in res.warnings if "empty" in w.path or "blank" in w.path]
    assert "py:lib/shop/empty/__init__.py" in {
        h.locator for h in search("empty", tmp_path / "ix", top=10)
    }


@pytest.mark.req("MN-REQ-22")
def test_a_directory_that_is_not_an_index_is_never_advised_away(tree, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's own files")
    with pytest.raises(MemNetError) as e:
        index_tree(tree, mine)
    assert e.value.code == "index_corrupt" and "not a host index" in e.value.message
    assert "delete" not in e.value.message
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


@pytest.mark.req("MN-REQ-22")
def test_paths_of_the_wrong_kind_are_path_not_found(tree, tmp_path):
    for call in (
        lambda: index_tree(None),
        lambda: index_tree(5),
        lambda: index_tree(tree, 5),
        lambda: index_tree(tree, "ix\x00A"),
        lambda: index_tree(tree, ""),
        lambda: open_index(5),
        lambda: search("round", 5),
        lambda: hindex.default_index_dir(5),
    ):
        assert code_of(call) == "path_not_found"
    assert code_of(lambda: index_tree(tree, tmp_path / "ix", progress=5)) == "invalid_argument"
    assert not (tmp_path / "ix").exists()


@pytest.mark.req("MN-REQ-22")
def test_a_tree_whose_path_is_not_utf8_indexes_and_refreshes(tmp_path):
    """A directory named with bytes that are not UTF-8 (kept as surrogates by
    Python) is indexed, searched and refreshed, not an internal error."""
    top = Path(os.fsdecode(os.fsencode(tmp_path) + b"/t\xffree/pkg"))
    top.mkdir(parents=True)
    (top / "m.py").write_text('def f():\n    """find me"""\n')
    first = index_tree(top, tmp_path / "ix")
    again = index_tree(top, tmp_path / "ix")
    assert first.parsed == 1 and again.parsed == 0
    assert any("m.py" in loc for loc in locators(open_index(tmp_path / "ix"), "find"))
