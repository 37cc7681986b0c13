"""memnet snap and memnet ingest of a SysML model, through the installed script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.req("MN-REQ-17", "MN-REQ-19", "MN-REQ-21")

SCRIPT = Path(sys.executable).parent / "memnet"
MODELS = Path(__file__).resolve().parents[2] / "sysml-models"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.exists(), "the memnet command is not installed: pip install -e '.[dev]'"
    return subprocess.run(
        [str(SCRIPT), "--home", str(home), *args],
        text=True,
        capture_output=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


def test_snap_then_recall_the_catalog_then_the_interior(tmp_path: Path) -> None:
    home = tmp_path / "cab"
    out = cli(home, "snap", str(MODELS), "--prefix", "mn", "--format", "json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["catalog"] == "mn-cat" and len(res["interiors"]) >= 3
    assert max(res["rows"].values()) <= 50 and res["dropped"] == []
    listed = json.loads(cli(home, "session", "list", "--format", "json").stdout)
    assert {r["id"] for r in listed} == {"mn-cat", *res["interiors"]}
    rec = cli(home, "recall", "mn-cat", "REQ rid:MN-REQ-19", "--format", "json")
    assert rec.returncode == 0, rec.stderr
    text = json.loads(rec.stdout)["text"]
    sessions = {sid for sid in res["interiors"] if f"session: '{sid}'" in text}
    assert sessions, text
    sid = sorted(sessions)[0]
    inner = cli(home, "recall", sid, "", "--format", "json")
    assert inner.returncode == 0 and json.loads(inner.stdout)["receipt"]["rows"] <= 50
    again = cli(home, "snap", str(MODELS), "--prefix", "mn")
    assert again.returncode == 0 and "0 session(s) changed" in again.stdout
    # errors carry their codes like every command
    bad = cli(home, "snap", str(MODELS), "--prefix", "Bad Prefix")
    assert bad.returncode == 1 and bad.stderr.startswith("memnet: error: invalid_session_id:")
    tiny = cli(home, "snap", str(MODELS), "--prefix", "x", "--budget", "2")
    assert tiny.returncode == 1 and "bad_query" in tiny.stderr
    nowhere = cli(home, "snap", str(tmp_path / "nope"), "--prefix", "x")
    assert nowhere.returncode == 1 and "path_not_found" in nowhere.stderr
    # one file that does not parse: its model_syntax error (issue 34: bad_query)
    broken = tmp_path / "broken.sysml"
    broken.write_text("package Q { part def B { ")
    one = cli(home, "snap", str(broken), "--prefix", "by")
    assert one.returncode == 1, one.stdout
    assert one.stderr.startswith("memnet: error: model_syntax: broken.sysml:"), one.stderr
    assert "line 1" in one.stderr and "never closed" in one.stderr


def test_ingest_a_sysml_file_and_a_broken_model(tmp_path: Path) -> None:
    home = tmp_path / "cab"
    one = cli(home, "ingest", "req", str(MODELS / "models" / "requirements.sysml"), "--create")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("ingested model ")
    again = json.loads(
        cli(
            home, "ingest", "req", str(MODELS / "models" / "requirements.sysml"), "--format", "json"
        ).stdout
    )
    assert again["changed"] is False and again["version"] == 1
    tree = tmp_path / "proj"
    tree.mkdir()
    shutil.copy(MODELS / "models" / "requirements.sysml", tree)
    (tree / "tool.py").write_text("def main():\n    pass\n")
    both = cli(home, "ingest", "mix", str(tree), "--create", "--format", "json")
    assert both.returncode == 0, both.stderr
    out = json.loads(both.stdout)
    assert out["created"] >= 2 and out["model"]["created"] > 20 and out["version"] == 2
    (tree / "broken.sysml").write_text("package P {\n  part def 'A;\n}\n")  # never closes
    bad = cli(home, "ingest", "mix", str(tree))
    assert bad.returncode == 1 and bad.stderr.startswith("memnet: error: model_syntax:")
    assert "line 2" in bad.stderr
    info = json.loads(cli(home, "session", "list", "--format", "json").stdout)
    assert {r["id"]: r["version"] for r in info}["mix"] == 2


def test_snap_in_process_counts_warnings_lists_failures_and_strict_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memnet.faces.cli import main

    model = tmp_path / "model"
    shutil.copytree(MODELS / "models", model)
    (model / "views.sysml").write_text("package Views { view def V :> Gone; }\n")
    (model / "broken.sysml").write_text("package P {\n  part x : 'T;\n}\n")  # never closes
    home = str(tmp_path / "cab")
    assert main(["--home", home, "snap", str(model), "--prefix", "mn", "--strict"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memnet: error: model_syntax: broken.sysml:") and "line 2" in err
    assert main(["--home", home, "session", "list", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # nothing was written
    assert main(["--home", home, "snap", str(model), "--prefix", "mn"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        "memnet: warning: broken.sysml:2: not ingested (model_syntax, column 12): "
        "unterminated string or name (no closing ' on its line)\n"
    )
    assert "; 1 warning(s), 1 file(s) not ingested" in out.splitlines()[0]
    assert main(["--home", home, "snap", str(model), "--prefix", "mn", "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["warnings"] == [
        "views.sysml:1: unresolved supertype 'Gone' of VIEWDEF 'V': no "
        "element named 'Gone' is visible"
    ]
    assert res["failed"] == [
        "broken.sysml:2: not ingested (model_syntax, column 12): "
        "unterminated string or name (no closing ' on its line)"
    ]
    assert res["changed"] == []  # the same model again changes nothing
