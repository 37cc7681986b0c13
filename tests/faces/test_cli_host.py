"""memnet host index|search|snap, in process through main(argv), and the
progress bar through a real terminal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memnet.faces.cli import main
from tests.faces.test_progress import on_terminal
from tests.host.conftest import needs_tantivy, write_tree

needs_tantivy()

pytestmark = pytest.mark.req("MN-REQ-19", "MN-REQ-22")
ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_search_snap_recall(tmp_path, capsys):
    lib = write_tree(tmp_path / "lib")
    home = str(tmp_path / "home")
    code, out, err = run(capsys, "--home", home, "host", "index", str(lib))
    assert code == 0, err
    assert out.startswith(f"indexed {lib} into {home}/host-index: built: 6/6 files parsed")
    code, out, _ = run(capsys, "--home", home, "host", "index", str(lib), "--format", "json")
    res = json.loads(out)
    assert (res["changed"], res["parsed"], res["files"], res["created"]) == (False, 0, 6, False)

    code, out, _ = run(
        capsys, "--home", home, "host", "search", "--top", "2", "round", "a", "price"
    )
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].split()[1] == "py:lib/shop/pricing.py::round_price"
    code, out, _ = run(
        capsys, "--home", home, "host", "search", "--format", "json", "warehouse in Leeds"
    )
    hits = json.loads(out)
    assert hits[0]["locator"] == "txt:lib/docs/notes.txt"
    assert all({"locator", "title", "score"} <= set(h) for h in hits)

    assert run(capsys, "--home", home, "session", "create", "work")[0] == 0
    code, out, err = run(
        capsys, "--home", home, "host", "snap", "work", "--top", "3", "round a price"
    )
    assert code == 0, err
    assert out.startswith("snapped 'round a price' into work: version 1: query na1 with 3 hit")
    assert "(new)  py:lib/shop/pricing.py::round_price" in out
    code, out, _ = run(
        capsys,
        "--home",
        home,
        "host",
        "snap",
        "work",
        "--top",
        "3",
        "--format",
        "json",
        "round a price",
    )
    res = json.loads(out)
    assert (res["version"], res["changed"], res["created"]) == (1, False, 0)
    code, out, _ = run(capsys, "--home", home, "recall", "work", "QRY round price")
    assert code == 0 and "py:lib/shop/pricing.py::round_price" in out
    assert "(na1:QRY {title: 'round a price'})" in out


def test_errors_have_codes_and_write_nothing(tmp_path, capsys):
    lib = write_tree(tmp_path / "lib")
    home = tmp_path / "home"
    ix = str(tmp_path / "ix")

    def error(*argv: str) -> str:
        code, out, err = run(capsys, "--home", str(home), *argv)
        assert code == 1 and out == "", (argv, out, err)
        assert err.startswith("memnet: error: "), err
        return err.split(":")[2].strip()

    assert error("host", "index", str(tmp_path / "nope"), "--index", ix) == "path_not_found"
    assert error("host", "search", "--index", ix, "price") == "index_not_found"
    assert error("host", "snap", "work", "--index", ix, "price") == "index_not_found"
    assert not Path(ix).exists() and not home.exists()
    run(capsys, "host", "index", str(lib), "--index", ix)
    assert error("host", "index", str(tmp_path), "--index", ix) == "path_outside_root"
    assert error("host", "search", "--index", ix, "") == "bad_query"
    assert error("host", "search", "--index", ix, "--top", "0", "price") == "bad_query"
    assert error("host", "snap", "work", "--index", ix, "price") == "session_not_found"
    assert error("host", "snap", "Bad Id", "--index", ix, "price") == "invalid_session_id"
    assert error("host", "snap", "work", "--index", ix, "?") == "bad_query"
    (Path(ix) / "meta.json").write_text("{broken")
    assert error("host", "search", "--index", ix, "price") == "index_corrupt"
    # usage errors exit 2
    assert main(["host"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["host", "search"])
    assert e.value.code == 2
    capsys.readouterr()


def test_indexing_shows_a_bar_on_a_terminal(tmp_path):
    lib = write_tree(tmp_path / "lib")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MEMNET_PROGRESS_DELAY="0")
    code, out, err = on_terminal(["host", "index", str(lib), "--index", str(tmp_path / "ix")], env)
    assert code == 0
    assert f"host index {lib} reading: [" in err and "100.0% 6/6" in err, err
    assert out.startswith(b"indexed ")


def test_snap_into_a_missing_session_hints_create_and_the_hint_runs(tmp_path, capsys):
    # issue 34: `host snap` said session_not_found with no word of --create,
    # and had no --create
    import shlex

    lib = write_tree(tmp_path / "lib")
    home = tmp_path / "home"
    ix = str(tmp_path / "ix")
    run(capsys, "host", "index", str(lib), "--index", ix)
    code, out, err = run(
        capsys,
        "--home",
        str(home),
        "host",
        "snap",
        "work",
        "--index",
        ix,
        "--top",
        "3",
        "round",
        "a price",
    )
    assert code == 1 and out == "" and not home.exists()  # nothing made on the way
    assert err.startswith("memnet: error: session_not_found: no session 'work'"), err
    hint = err.split("run: ", 1)[1].strip()
    assert hint == (
        f"memnet --home {home} host snap work round 'a price' --create --top 3 --index {ix}"
    )
    argv = shlex.split(hint)
    code, out, err = run(capsys, *argv[1:])  # the hint, as given
    assert code == 0, err
    assert out.startswith("snapped 'round a price' into work: version 1: query na1 with 3 hit")
    code, out, _ = run(capsys, *argv[1:], "--format", "json")  # again: nothing new
    assert json.loads(out)["changed"] is False
    code, out, _ = run(capsys, "--home", str(home), "session", "log", "work", "--format", "json")
    assert [e["version"] for e in json.loads(out)] == [1]
    # --create on a session that exists snaps into it
    code, out, err = run(
        capsys, "--home", str(home), "host", "snap", "work", "--index", ix, "--create", "warehouse"
    )
    assert code == 0 and "version 2" in out, err
