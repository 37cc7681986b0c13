"""Absorb through the CLI, between two cabinets (two LMDB directories)."""

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
    )


@pytest.mark.req("MN-REQ-03", "MN-REQ-10", "MN-REQ-16", "MN-REQ-19")
def test_export_from_one_cabinet_absorb_into_another(tmp_path: Path) -> None:
    a, b = tmp_path / "machine-a", tmp_path / "machine-b"
    assert run(a, "session", "create", "member").returncode == 0
    c = run(
        a,
        "commit",
        "member",
        "-",
        stdin=(
            "INSERT (t:TSK {title: 'Fix rounding', status: 'open'})-[:TOUCHES]->"
            "(m:MOD {path: 'shop/pricing.py'}), (far:DOC {title: 'far away'})"
        ),
    )
    assert c.returncode == 0, c.stderr
    anchor = json.loads(c.stdout)["ids"]["t"]
    slice_file = tmp_path / "slice.json"
    e = run(a, "export", "member", "--anchor", anchor, "-o", str(slice_file))
    assert e.returncode == 0, e.stderr
    data = json.loads(slice_file.read_text())
    assert data["provenance"]["session"] == "member" and data["provenance"]["anchors"] == [anchor]
    assert len(data["nodes"]) == 2 and len(data["edges"]) == 1  # not the far DOC

    assert run(b, "session", "create", "lead").returncode == 0
    r = run(b, "absorb", "lead", "--slice", str(slice_file), "--id-policy", "remint")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["version"] == 1 and out["created"] == 3
    shape = run(b, "recall", "lead", "TSK status:open", "--format", "json")
    text = json.loads(shape.stdout)["text"]
    assert "Fix rounding" in text and f"origin: 'member/{anchor}'" in text
    assert "shop/pricing.py" in text

    # the same slice again under reject: refused whole, lead unchanged
    again = run(b, "absorb", "lead", "--slice", str(slice_file), "--id-policy", "reject")
    assert again.returncode == 1
    assert again.stderr.startswith("memnet: error: absorb_rejected:")
    log = json.loads(run(b, "session", "log", "lead", "--format", "json").stdout)
    assert [e["version"] for e in log] == [1]

    # a tampered file (dangling edge) is refused with a clear error
    data["edges"][0]["dst"] = "nzz9"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    t = run(b, "absorb", "lead", "--slice", str(bad))
    assert t.returncode == 1 and "dangles" in t.stderr

    # --from does export and absorb in one go within one cabinet
    assert run(a, "session", "create", "lead2").returncode == 0
    k = run(a, "absorb", "lead2", "--from", "member", "--anchor", anchor, "--id-policy", "keep")
    assert k.returncode == 0, k.stderr
    assert json.loads(k.stdout)["ids"][anchor] == anchor
    # and the members are never given as a whole
    whole = run(a, "export", "lead2", "--anchor", anchor, "-o", str(tmp_path / "w.json"))
    assert whole.returncode == 1 and "whole" in whole.stderr
