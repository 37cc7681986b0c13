"""`memnet absorb` merges by default: the same slice file twice writes once
(issue 34), and a changed slice updates the lead in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("memnet")


def run(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.exists(), "the memnet command is not installed: pip install -e '.[dev]'"
    return subprocess.run(
        [str(SCRIPT), "--home", str(home), *args],
        input=stdin,
        text=True,
        capture_output=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


@pytest.mark.req("MN-REQ-16", "MN-REQ-19")
def test_absorbing_one_slice_file_twice_writes_once(tmp_path: Path) -> None:
    a, b = tmp_path / "machine-a", tmp_path / "machine-b"
    assert run(a, "session", "create", "member").returncode == 0
    c = run(
        a,
        "commit",
        "member",
        "-",
        stdin=(
            "INSERT (t:TSK {title: 'Fix rounding', status: 'open'})-[:TOUCHES]->"
            "(m:MOD {path: 'shop/pricing.py', locator: 'py:shop/pricing.py'}), "
            "(far:DOC {title: 'far away'})"
        ),
    )
    anchor = json.loads(c.stdout)["ids"]["t"]
    slice_file = tmp_path / "slice.json"
    assert run(a, "export", "member", "--anchor", anchor, "-o", str(slice_file)).returncode == 0
    assert run(b, "session", "create", "lead").returncode == 0
    assert (
        run(
            b,
            "commit",
            "lead",
            "-",
            stdin="INSERT (x:MOD {locator: 'py:shop/pricing.py', owner: 'lead'})",
        ).returncode
        == 0
    )
    outs = []
    for _ in range(2):
        r = run(b, "absorb", "lead", "--slice", str(slice_file))  # no --id-policy: merge
        assert r.returncode == 0, r.stderr
        outs.append(json.loads(r.stdout))
    assert (outs[0]["version"], outs[0]["changed"], outs[0]["created"], outs[0]["matched"]) == (
        2,
        True,
        2,
        1,
    )  # the TSK and the edge; the MOD was the lead's
    assert (outs[1]["version"], outs[1]["changed"], outs[1]["created"]) == (2, False, 0)
    assert outs[1]["ids"] == outs[0]["ids"]
    log = json.loads(run(b, "session", "log", "lead", "--format", "json").stdout)
    assert [e["version"] for e in log] == [1, 2]
    # the member moves on; its new slice updates the same nodes
    assert run(a, "commit", "member", "-", stdin=f"SET {anchor}.status = 'done'").returncode == 0
    assert (
        run(a, "export", "member", "--anchor", anchor, "-o", str(slice_file), "--force").returncode
        == 0
    )
    r = json.loads(run(b, "absorb", "lead", "--slice", str(slice_file)).stdout)
    assert (r["version"], r["created"], r["updated"]) == (3, 0, 1)
    text = json.loads(run(b, "recall", "lead", "TSK rounding", "--format", "json").stdout)["text"]
    assert "status: 'done'" in text and text.count("Fix rounding") == 1
    assert "owner: 'lead'" in text  # the lead's own property stays
