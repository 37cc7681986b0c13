"""`memnet import mcp-memory FILE SID`: in process through main(argv), and
the progress line through a real terminal."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from memnet.faces.cli import main
from tests.faces.test_progress import on_terminal

pytestmark = pytest.mark.req("MN-REQ-18", "MN-REQ-19")
ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def memory(path: Path, n: int = 3) -> Path:
    lines = [
        {
            "type": "entity",
            "name": f"Person {i}",
            "entityType": "person",
            "observations": [f"likes topic {i}", "lives in Leeds"],
        }
        for i in range(n)
    ]
    lines += [
        {
            "type": "relation",
            "from": f"Person {i}",
            "to": f"Person {i + 1}",
            "relationType": "knows",
        }
        for i in range(n - 1)
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_import_hint_create_again_and_recall(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = memory(tmp_path / "memory.jsonl")
    home = tmp_path / "home"
    code, out, err = run(capsys, "--home", str(home), "import", "mcp-memory", str(f), "people")
    assert code == 1 and out == "" and not home.exists()
    assert err.startswith("memnet: error: session_not_found: no session 'people'"), err
    hint = err.split("run: ", 1)[1].strip()
    assert hint == f"memnet --home {home} import mcp-memory {f} people --create"
    code, out, err = run(capsys, *shlex.split(hint)[1:])  # the hint, as given
    assert code == 0, err
    assert out == (
        f"imported {f} into people (a new session, cap 200,000 rows / 67,108,864 "
        "bytes): version 1: 3 entities, 2 relations: +3 nodes ~0 -0, +2 edges\n"
    )
    code, out, err = run(
        capsys, "--home", str(home), "import", "mcp-memory", str(f), "people", "--format", "json"
    )
    res = json.loads(out)
    assert (res["version"], res["changed"], res["created"], res["new_session"]) == (
        1,
        False,
        0,
        False,
    )
    code, out, _ = run(capsys, "--home", str(home), "session", "log", "people", "--format", "json")
    assert [e["version"] for e in json.loads(out)] == [1]
    code, out, _ = run(capsys, "--home", str(home), "recall", "people", "PERSON name:'Person 1'")
    assert (
        "(na2:PERSON {locator: 'mem:Person 1', name: 'Person 1', observations: "
        "['likes topic 1', 'lives in Leeds']})" in out
    )


def test_a_damaged_line_writes_nothing_not_even_a_cabinet(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = memory(tmp_path / "memory.jsonl")
    with open(f, "a", encoding="utf-8") as fh:
        fh.write('{"type": "relation", "from": "Person 0", "to": "Person 2"}\n')
    home = tmp_path / "home"
    code, out, err = run(
        capsys, "--home", str(home), "import", "mcp-memory", str(f), "people", "--create"
    )
    assert code == 1 and out == "" and not home.exists()
    assert err == (
        "memnet: error: import_syntax: memory.jsonl:6: relation needs "
        "'relationType' as a string, got missing\n"
    )
    code, _out, err = run(
        capsys,
        "--home",
        str(home),
        "import",
        "mcp-memory",
        str(tmp_path / "none.jsonl"),
        "people",
        "--create",
    )
    assert code == 1 and "path_not_found" in err and not home.exists()
    code, _out, err = run(capsys, "import", "mcp-memory", str(f), "Bad Id")
    assert code == 1 and "invalid_session_id" in err
    assert main(["import"]) == 2  # no format: the help of `memnet import`
    capsys.readouterr()


def test_a_large_file_shows_its_phases_on_a_terminal(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = memory(tmp_path / "memory.jsonl", 20_000)
    env = dict(
        os.environ,
        MEMNET_HOME=str(tmp_path / "home"),
        PYTHONPATH=str(ROOT),
        MEMNET_PROGRESS_DELAY="0",
    )
    code, out, err = on_terminal(["import", "mcp-memory", str(f), "big", "--create"], env)
    assert code == 0, err
    assert "import big reading: [" in err and "import big planning: [" in err, err
    assert out.startswith(b"imported ") and b"20000 entities, 19999 relations" in out
