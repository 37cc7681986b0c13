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
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
        tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEMNET_MAX_SIZE", value)
    rc, err = _cli(capsys, "--home", str(tmp_path / "cab"), "init")
    assert rc == 1 and err.startswith("memnet: error: invalid_argument: ")
    assert not (tmp_path / "cab" / "data.mdb").exists()


@pytest.mark.req(ERRORS)
def test_an_empty_home_is_refused_and_an_empty_memnet_home_is_unset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = _cli(capsys, "--home=", "session", "list")
    assert rc == 1 and err.startswith("memnet: error: invalid_argument:")
    for bad in ("", 5, b"/tmp/x", "a\x00b"):
        with pytest.raises(Exception) as e:
            Cabinet.open(bad)  # type: ignore[arg-type]
        assert getattr(e.value, "code", None) == "invalid_argument"
    monkeypatch.setenv("MEMNET_HOME", "")
    assert _cli(capsys, "init")[0] == 0
    assert sorted(os.listdir(tmp_path)) == [".memnet"]   # not data.mdb in the work directory
