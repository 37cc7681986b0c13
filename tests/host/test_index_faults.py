"""Faults of the host index's own files (issue 36): a full disk while the
index is built or refreshed is ``disk_full`` (was ``internal`` ValueError)
and leaves no partial file behind; a manifest nested beyond any sense is
``index_corrupt`` (was ``internal`` RecursionError)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memnet.errors import MemNetError
from memnet.host import index as hindex
from memnet.host import index_tree, open_index

from .conftest import needs_tantivy

needs_tantivy()

SCRIPT = Path(sys.executable).with_name("memnet")
FAULTS, ERRORS = "MN-REQ-14.3", "MN-REQ-15"

# `memnet host index` under a file size limit: every write past it fails with
# EFBIG, as a full file system fails it with ENOSPC (both are disk_full)
UNDER_LIMIT = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from memnet.faces.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _index_under(limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", UNDER_LIMIT, str(limit), "host", "index", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _files(d: Path) -> dict[str, bytes]:
    return {
        p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()
    }


@pytest.mark.req(FAULTS, ERRORS)
@pytest.mark.parametrize("limit", [200, 3000])
def test_no_room_for_a_new_index_is_disk_full_and_leaves_nothing(
    tree: Path, tmp_path: Path, limit: int
) -> None:
    p = _index_under(limit, str(tree), "--index", str(tmp_path / "ix"))
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("memnet: error: disk_full: no room to write the host index"), (
        p.stderr
    )
    assert sorted(x.name for x in tmp_path.iterdir()) == ["lib"]  # no index, no temporary
    # with room, the same command builds it
    assert index_tree(tree, tmp_path / "ix").created


@pytest.mark.req(FAULTS, ERRORS)
def test_no_room_for_a_refresh_is_disk_full_and_the_index_stays_as_it_was(
    tree: Path, tmp_path: Path
) -> None:
    where = tmp_path / "ix"
    index_tree(tree, where)
    before = _files(where)
    for i in range(60):
        (tree / "shop" / f"more{i}.py").write_text(
            f'def extra_{i}():\n    """Another function about parsing widgets {i}."""\n'
        )
    p = _index_under(2000, str(tree), "--index", str(where))
    assert p.returncode == 1 and "disk_full" in p.stderr, p.stderr
    after = _files(where)
    # the library's own bookkeeping files (dot files) may be touched; the
    # segments, its meta and MemNet's header and manifest are as they were
    assert {k: v for k, v in after.items() if not k.startswith(".")} == {
        k: v for k, v in before.items() if not k.startswith(".")
    }
    assert [h.locator for h in open_index(where).search("parsing widgets")] == []
    res = index_tree(tree, where)
    assert res.parsed == 60 and open_index(where).search("parsing widgets", 3)


@pytest.mark.req(FAULTS, ERRORS)
@pytest.mark.parametrize("name", [hindex.MANIFEST, hindex.META])
def test_a_file_of_the_index_nested_too_deeply_is_index_corrupt(
    tree: Path, tmp_path: Path, name: str
) -> None:
    where = tmp_path / "ix"
    index_tree(tree, where)
    (where / name).write_text("[" * 100_000)
    with pytest.raises(MemNetError) as e:
        index_tree(tree, where)
    assert e.value.code == "index_corrupt" and "nests" in e.value.message
    assert (where / name).read_text() == "[" * 100_000  # left alone


@pytest.mark.req(ERRORS)
def test_an_index_name_too_long_for_the_file_system_is_a_coded_error(
    tree: Path, tmp_path: Path
) -> None:
    """Found by bench/fuzz.py: open_index and index_tree let the OS's
    'File name too long' out as an OSError."""
    from memnet.host import open_index

    long = tmp_path / ("y" * 300)
    with pytest.raises(MemNetError) as e:
        open_index(long)
    assert e.value.code == "index_not_found"
    with pytest.raises(MemNetError) as e:
        index_tree(tree, long)
    assert e.value.code == "path_not_found"
