"""Pictures of a Shape: DOT and Mermaid text, a real Graphviz run, ``memnet show``.

Graphviz is required here (CI installs it): a missing ``dot`` fails these tests
with a clear message instead of skipping them.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from memnet import MemNetError, Session
from memnet.faces import render
from memnet.faces.cli import DEMO_DELTA

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def require_dot() -> str:
    exe = shutil.which("dot")
    if exe is None:
        pytest.fail(
            "Graphviz (dot) is required by these tests and is not on PATH: "
            "apt-get install graphviz / brew install graphviz"
        )
    return exe


@pytest.fixture(scope="module")
def shape():
    s = Session("pics")
    s.commit(DEMO_DELTA)
    sh = s.recall("TSK status:open pricing")
    assert sh.nodes and sh.edges and sh.seed_handles
    return sh


def cli(*args: str, home: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MEMNET_HOME=str(home), PYTHONPATH=str(ROOT))
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "memnet", *args],
        text=True,
        capture_output=True,
        env=env,
        timeout=120,
        cwd=home.parent,
        check=False,
    )


def check_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, "not a PNG file"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert 50 < width < 10_000 and 50 < height < 10_000, (width, height)
    assert len(data) > 1024


@pytest.mark.req("MN-REQ-13.1")
def test_dot_is_deterministic_and_complete(shape):
    dot = render.to_dot(shape)
    assert dot == render.to_dot(shape)
    assert dot.startswith("digraph shape {") and dot.rstrip().endswith("}")
    for n in shape.nodes:
        assert re.search(rf'^  "{n.var}" \[label="{n.var}  {n.labels[0]}', dot, re.MULTILINE), n.var
    for e in shape.edges:
        assert f'"{e.src}" -> "{e.dst}" [label="{e.type}"];' in dot
    for line in dot.splitlines():
        m = re.match(r'  "(\w+)" \[label', line)
        if m:  # seeds and only seeds have the double, bold border
            assert ('peripheries="2"' in line) == (m.group(1) in shape.seed_handles)
    laws = [n.var for n in shape.nodes if n.labels[0] == "LAW"]
    assert laws
    for v in laws:
        assert re.search(rf'^  "{v}" \[.*shape="note"', dot, re.MULTILINE)
    # a kind always gets the same style
    assert render.kind_style("TSK") == render.kind_style("TSK")


@pytest.mark.req("MN-REQ-13.1")
def test_mermaid_is_deterministic_escaped_and_complete(shape):
    mm = render.to_mermaid(shape)
    assert mm == render.to_mermaid(shape)
    assert mm.splitlines()[0] == "graph LR"
    for n in shape.nodes:
        assert re.search(rf"^  n_{n.var}\W", mm, re.MULTILINE), n.var
    for e in shape.edges:
        assert f'n_{e.src} -->|"{e.type}"| n_{e.dst}' in mm
    for v in shape.seed_handles:
        assert f"class n_{v} seed" in mm
    # hostile titles are escaped, ids stay safe
    s = Session("esc")
    s.commit("INSERT (t:TSK {title: 'say \"hi\" <b>|x|</b> #1', status: 'open'})")
    tricky = render.to_mermaid(s.recall("TSK status:open"))
    label_line = next(x for x in tricky.splitlines() if "TSK" in x and "class" not in x)
    inner = label_line.split('"', 1)[1].rsplit('"', 1)[0]
    assert '"' not in inner and "<b>" not in inner and "|" not in inner
    assert "#quot;hi#quot;" in inner


@pytest.mark.req("MN-REQ-13.1")
def test_real_dot_writes_a_png_and_an_svg(shape, tmp_path):
    require_dot()
    png = render.render(render.to_dot(shape), tmp_path / "shape.png")
    check_png(png)
    svg = render.render(render.to_dot(shape), tmp_path / "shape.svg")
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text
    for n in shape.nodes:
        assert n.var in text


@pytest.mark.req("MN-REQ-15")
def test_unknown_picture_suffix_is_refused(shape, tmp_path):
    with pytest.raises(MemNetError) as e:
        render.render(render.to_dot(shape), tmp_path / "shape.gif")
    assert e.value.code == "bad_query"
    assert ".svg or .png" in e.value.message


@pytest.mark.req("MN-REQ-13.1")
def test_memnet_show_writes_png_and_svg(tmp_path):
    require_dot()
    home = tmp_path / "cab"
    assert cli("demo", home=home).returncode == 0
    png = tmp_path / "out.png"
    r = cli("show", "demo", "TSK status:open pricing", "-o", str(png), "--hops", "1", home=home)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(png)
    check_png(png)
    svg = tmp_path / "out.svg"
    r = cli("show", "demo", "-o", str(svg), "--view", "shell", home=home)
    assert r.returncode == 0, r.stderr
    assert "<svg" in svg.read_text(encoding="utf-8")
    # `memnet recall --format dot|mermaid` prints the same text as the library
    r = cli("recall", "demo", "TSK status:open pricing", "--format", "dot", home=home)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("digraph shape {")
    r = cli("recall", "demo", "TSK status:open pricing", "--format", "mermaid", home=home)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("graph LR\n")


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_memnet_show_without_graphviz_is_dependency_missing(tmp_path):
    home = tmp_path / "cab"
    assert cli("demo", home=home).returncode == 0
    empty = tmp_path / "bin"
    empty.mkdir()
    out = tmp_path / "nodot.png"
    r = cli("show", "demo", "-o", str(out), home=home, path=str(empty))
    assert r.returncode == 1
    assert r.stderr.startswith(
        "memnet: error: dependency_missing: Graphviz (dot) is not installed"
    ), r.stderr
    assert "apt-get install graphviz" in r.stderr
    assert not out.exists()
