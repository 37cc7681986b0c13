"""Paths given to ingest: every bad one a ``path_not_found`` naming the path,
file names that are not UTF-8 skipped with a warning (a tree) or refused by
name (a model), and ``ingest_new`` storing nothing when the ingest fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memnet import Cabinet, Session
from memnet.errors import MemNetError
from memnet.ingest import check_ingest_path, ingest, ingest_new, ingest_path

pytestmark = pytest.mark.req("MN-REQ-18", "MN-REQ-15")


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "shop"
    tree.mkdir()
    (tree / "pricing.py").write_text("def price():\n    pass\n")
    return tree


@pytest.mark.parametrize(
    "bad",
    ["", "a" * 5000, "no/such/dir", "nul\x00byte", b""],
    ids=["empty", "5000-chars", "missing", "nul", "empty-bytes"],
)
def test_a_path_that_names_nothing_is_path_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str | bytes
) -> None:
    monkeypatch.chdir(_tree(tmp_path))  # "" must not mean the working directory
    for call in (
        check_ingest_path,
        lambda p: ingest_path(Session("x"), p),
        lambda p: ingest(Session("x"), p),
    ):
        with pytest.raises(MemNetError) as e:
            call(bad)
        assert e.value.code == "path_not_found"
        assert len(e.value.message) < 400  # a 5,000-character path is cut short


def test_a_file_name_that_is_not_utf8_is_skipped_with_a_warning(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tree / "sub").mkdir()
    (tree / "sub" / "ok.py").write_text("x = 1\n")
    (tree / os.fsdecode(b"bad\xff.py")).write_bytes(b"y = 2\n")
    (tree / os.fsdecode(b"dir\xfe")).mkdir()
    s = Session("x")
    (res,) = ingest_path(s, tree)
    assert res.changed and res.files == 2
    assert sorted(str(w) for w in res.warnings) == [
        "shop:0: skipped b'bad\\xff.py': the name is not UTF-8",
        "shop:0: skipped b'dir\\xfe': the name is not UTF-8",
    ]
    assert s.recall("MOD").receipt.matched == 2


def test_a_model_file_name_that_is_not_utf8_is_refused_by_name(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tree / os.fsdecode(b"m\xfe.sysml")).write_bytes(b"package P;\n")
    s = Session("x")
    with pytest.raises(MemNetError) as e:
        ingest_path(s, tree)
    assert e.value.code == "model_syntax" and "m\\xfe.sysml" in e.value.message
    assert s.version == 0
    one = tmp_path / os.fsdecode(b"one\xfe.sysml")
    one.write_bytes(b"package P;\n")
    with pytest.raises(MemNetError) as e:
        check_ingest_path(one)
    assert e.value.code == "path_not_found"


def test_a_directory_whose_name_is_not_utf8_is_refused(tmp_path: Path) -> None:
    top = tmp_path / os.fsdecode(b"tree\xff")
    top.mkdir()
    (top / "a.py").write_bytes(b"x = 1\n")
    with pytest.raises(MemNetError) as e:
        ingest(Session("x"), top)
    assert e.value.code == "path_not_found" and "tree\\xff" in e.value.message


def test_ingest_new_stores_the_session_only_when_the_ingest_succeeds(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    with Cabinet.open(tmp_path / "cab") as cab:
        (tree / "bad.sysml").write_text("package P { part def 'A; }\n")  # never closes
        with pytest.raises(MemNetError) as e:
            ingest_new(cab, "code", tree)
        assert e.value.code == "model_syntax"
        assert not cab.exists("code") and cab.sessions() == []
        (tree / "bad.sysml").unlink()
        s, results = ingest_new(cab, "code", tree)
        assert results[0].changed and cab.session_info("code").version == s.version == 1
        # stored with its log, as if created here and flushed
        assert [e.version for e in cab.log("code")] == [1]
        assert cab.open("code", at=0).stats()["nodes"] == 0
        assert cab.verify()["log"] == 1
        with pytest.raises(MemNetError) as e:
            ingest_new(cab, "code", tree)
        assert e.value.code == "session_exists"
