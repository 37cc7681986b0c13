"""Inputs a careless user or a confused agent gives the command line: each is
one coded error line and exit 1, never a Python traceback, and nothing is
created where nothing was asked for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memnet import Cabinet
from memnet.faces.cli import main

SCRIPT = Path(sys.executable).with_name("memnet")
ERRORS = "MN-REQ-15"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


@pytest.mark.req(ERRORS)
def test_a_delta_file_that_is_not_utf8_is_gql_syntax_and_a_bom_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "cab")
    assert _cli(capsys, "--home", home, "session", "create", "s")[0] == 0
    bad = tmp_path / "bad.gql"
    bad.write_bytes(b"INSERT (a:TSK {x: '\xff'})")
    rc, err = _cli(capsys, "--home", home, "commit", "s", str(bad))
    assert rc == 1 and err.startswith("memnet: error: gql_syntax:") and "column 20" in err
    bom = tmp_path / "bom.gql"
    bom.write_bytes("\ufeffINSERT (a:TSK {title: 'from an editor that writes a BOM'})".encode())
    assert _cli(capsys, "--home", home, "commit", "s", str(bom))[0] == 0
    with Cabinet.open(home) as cab:
        assert cab.open("s").version == 1


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("argv", [["commit", "s"], ["wire"], ["mcp"]])
def test_commands_that_read_stdin_refuse_a_closed_one(tmp_path: Path, argv: list[str]) -> None:
    home = tmp_path / "cab"
    Cabinet.open(home).create("s")
    cmd = " ".join([str(SCRIPT), "--home", str(home), *argv]) + " <&-"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("memnet: error: invalid_argument:") and "closed" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("value", ["abc", "1e9", "0", "-5"])
def test_a_bad_memnet_max_size_is_invalid_argument(
    tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMNET_MAX_SIZE", value)
    rc, err = _cli(capsys, "--home", str(tmp_path / "cab"), "init")
    assert rc == 1 and err.startswith("memnet: error: invalid_argument: ")
    assert not (tmp_path / "cab" / "data.mdb").exists()


@pytest.mark.req(ERRORS)
def test_an_empty_home_is_refused_and_an_empty_memnet_home_is_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = _cli(capsys, "--home=", "session", "list")
    assert rc == 1 and err.startswith("memnet: error: invalid_argument:")
    for bad in ("", 5, b"/tmp/x", "a\x00b"):
        with pytest.raises(Exception) as e:
            Cabinet.open(bad)  # type: ignore[arg-type]
        assert getattr(e.value, "code", None) == "invalid_argument"
    monkeypatch.setenv("MEMNET_HOME", "")
    assert _cli(capsys, "init")[0] == 0
    assert sorted(os.listdir(tmp_path)) == [".memnet"]  # not data.mdb in the work directory


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "argv,code",
    [
        (["recall", "s", "x"], "session_not_found"),
        (["outline", "s"], "session_not_found"),
        (["commit", "s", "-"], "session_not_found"),
        (["session", "log", "s"], "session_not_found"),
        (["session", "drop", "s"], "session_not_found"),
        (["export", "s", "--anchor", "na1", "-o", "x.json"], "session_not_found"),
        (["session", "list"], "path_not_found"),
        (["backup", "dest"], "path_not_found"),
        (["cabinet", "upgrade"], "path_not_found"),
        (["show", "s", "x", "-o", "x.svg"], "session_not_found"),
    ],
)
def test_commands_that_make_nothing_leave_no_cabinet_at_a_mistyped_home(
    tmp_path: Path,
    argv: list[str],
    code: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "typo" / "deep"
    rc, err = _cli(capsys, "--home", str(home), *argv)
    assert rc == 1 and err.startswith(f"memnet: error: {code}:"), err
    assert str(home) in err
    assert os.listdir(tmp_path) == []


@pytest.mark.req(ERRORS)
def test_outputs_that_cannot_be_written_are_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    home = str(tmp_path / "cab")
    assert _cli(capsys, "--home", home, "demo")[0] == 0
    capsys.readouterr()
    (tmp_path / "d.svg").mkdir()
    (tmp_path / "d.json").mkdir()
    cases = [
        (
            ["export", "demo", "--anchor", "na1", "-o", str(tmp_path / "d.json"), "--force"],
            "is a directory",
        ),
        (
            ["export", "demo", "--anchor", "na1", "-o", str(tmp_path / "no" / "x.json")],
            "there is no directory",
        ),
        (["export", "demo", "--anchor", "na1", "-o", ""], "empty path"),
        (["show", "demo", "TSK", "-o", str(tmp_path / "d.svg")], "is a directory"),
        (["show", "demo", "TSK", "-o", str(tmp_path / "no" / "x.svg")], "there is no directory"),
    ]
    for argv, words in cases:
        rc, err = _cli(capsys, "--home", home, *argv)
        assert rc == 1 and err.startswith("memnet: error: path_not_found:"), (argv, err)
        assert words in err and ".memnet-" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["cab", "d.json", "d.svg"]
    assert os.listdir(tmp_path / "d.json") == []


@pytest.mark.req(ERRORS)
def test_a_progress_function_that_fails_is_not_reported_as_damage(tmp_path: Path) -> None:
    with Cabinet.open(tmp_path / "cab") as cab:
        s = cab.create("a")
        s.commit("INSERT (t:TSK {title: 'x'})")
        cab.flush(s)
        with pytest.raises(Exception) as e:
            cab.open("a", progress=5)  # type: ignore[arg-type]
        assert getattr(e.value, "code", None) == "invalid_argument"

        def broken(done: int, total: int) -> None:
            raise ValueError("the caller's own bug")

        with pytest.raises(ValueError, match="the caller's own bug") as e:
            cab.open("a", progress=broken)
        assert getattr(e.value, "code", None) is None  # not cabinet_corrupt
        assert cab.open("a", progress=lambda d, t: None).version == 1


@pytest.mark.req(ERRORS)
def test_a_group_without_an_action_prints_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    for group, actions in (
        ("session", ("create", "list", "drop", "log")),
        ("cabinet", ("upgrade", "copy")),
    ):
        rc, err = _cli(capsys, group)
        assert rc == 2 and err.startswith(f"usage: memnet {group}")
        assert all(a in err for a in actions), err


@pytest.mark.req(ERRORS)
def test_demo_with_a_bad_query_makes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, err = _cli(capsys, "--home", str(tmp_path / "cab"), "demo", "-q", "MATCH (")
    assert rc == 1 and err.startswith("memnet: error: gql_syntax:")
    assert not (tmp_path / "cab").exists()


@pytest.mark.req(ERRORS)
def test_ver_refuses_empty_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = _cli(capsys, "ver", "--models", "", "--tests", "")
    assert rc == 1 and err.startswith("memnet: error: path_not_found:") and "empty" in err


@pytest.mark.req(ERRORS)
def test_a_fault_of_memnet_is_one_internal_line_and_a_traceback_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memnet.faces import commands

    monkeypatch.setattr(commands, "session_list", lambda args: {}["boom"])
    home = str(tmp_path / "cab")
    assert _cli(capsys, "--home", home, "init")[0] == 0
    rc, err = _cli(capsys, "--home", home, "session", "list")
    assert rc == 1 and err.startswith("memnet: error: internal: KeyError: 'boom'")
    monkeypatch.setenv("MEMNET_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["--home", home, "session", "list"])
