"""Hints the CLI prints are commands that run as given, through a real shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.req("MN-REQ-15", "MN-REQ-19")

BIN = Path(sys.executable).parent


def sh(command: str) -> subprocess.CompletedProcess[str]:
    """``command`` run by /bin/sh with the installed ``memnet`` first on PATH."""
    assert (BIN / "memnet").exists(), "the memnet command is not installed: pip install -e '.[dev]'"
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(
        command, shell=True, text=True, capture_output=True, env=env, timeout=120, check=False
    )


def test_ingest_into_a_missing_session_hints_create_and_the_hint_runs(tmp_path: Path) -> None:
    # issue 34: `memnet ingest` said session_not_found with no word of --create
    tree = tmp_path / "my pkg"
    tree.mkdir()
    (tree / "a.py").write_text('"""A module."""\n\ndef f():\n    return 1\n')
    home = tmp_path / "cab"
    for made in (False, True):  # no cabinet at all, then a cabinet without the session
        if made:
            assert sh(f"memnet --home '{home}' session create other").returncode == 0
        r = sh(f"memnet --home '{home}' ingest code '{tree}' --format json")
        assert r.returncode == 1 and r.stdout == ""
        assert r.stderr.startswith("memnet: error: session_not_found: no session 'code'"), r.stderr
        assert home.exists() is made  # a mistyped home is never made on the way
        hint = r.stderr.split("run: ", 1)[1].strip()
        assert hint == f"memnet --home {home} ingest code '{tree}' --create --format json"
    ok = sh(hint)  # the hint, as given
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert out["version"] == 1 and out["created"] >= 2
    again = json.loads(sh(hint).stdout)  # and again: nothing to do
    assert again["changed"] is False and again["version"] == 1
    # without --home the hint names none either (the same $MEMNET_HOME applies)
    r = sh(f"cd '{tmp_path}' && memnet ingest code2 '{tree}'")
    assert r.stderr.strip().endswith(f"run: memnet ingest code2 '{tree}' --create"), r.stderr
