"""Source-tree ingest on real trees: lark and networkx as installed, and small
trees written here. Edges and symbols are checked against a scan written in
this file with the standard ``ast`` module, independent of memnet.ingest."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import memnet
from memnet.ingest import Artefacts, ingest, scan, snapshot
from memnet.ingest.source import headings, slugify

SCRIPT = Path(sys.executable).with_name("memnet")

# every test here checks artefacts keyed by locator and re-ingest in proportion to change
pytestmark = pytest.mark.req("MN-REQ-18")


# -- an independent reading of a package with the standard library ---------------------
def reference(top: Path) -> tuple[set[str], set[tuple[str, str]], int]:
    """(module paths, IMPORTS as (src path, dst path), top-level def/class names)."""
    files = sorted(p for p in top.rglob("*.py") if "__pycache__" not in p.parts)
    by_name: dict[str, str] = {}
    for f in files:
        rel = f.relative_to(top.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        by_name[".".join(parts)] = f.relative_to(top.parent).as_posix()
    edges: set[tuple[str, str]] = set()
    symbols = 0
    for f in files:
        src = f.relative_to(top.parent).as_posix()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(f.read_bytes())
        symbols += len(
            {
                n.name
                for n in tree.body
                if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            }
        )
        here = src[:-3].replace("/", ".")
        pkg = here[: -len(".__init__")] if here.endswith(".__init__") else here.rsplit(".", 1)[0]
        wanted: list[str] = []
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                wanted += [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    up = pkg.split(".")
                    if n.level - 1 >= len(up):
                        continue
                    origin = ".".join(up[: len(up) - (n.level - 1)])
                    origin = origin + "." + n.module if n.module else origin
                else:
                    origin = n.module or ""
                wanted += [origin if a.name == "*" else origin + "." + a.name for a in n.names]
        for name in wanted:
            while name and name not in by_name:
                name = name.rpartition(".")[0]
            if name and by_name[name] != src:
                edges.add((src, by_name[name]))
    return {f.relative_to(top.parent).as_posix() for f in files}, edges, symbols


def graph(s: memnet.Session) -> dict[str, object]:
    """What the session holds, by path: modules, import pairs, symbols."""
    st = s.store
    mods = {n: st.node_props(n)["path"] for n in st.live_node_ids() if st.node_kind(n) == "MOD"}
    ends = (st.edge_ends(e) for e in st.live_edge_ids() if st.edge_type(e) == "IMPORTS")
    imports = {(mods[a], mods[b]) for a, b in ends}
    syms = sum(1 for n in st.live_node_ids() if st.node_kind(n) == "SYM")
    return {"mods": sorted(mods.values()), "imports": imports, "syms": syms}


def copy_of(module: object, tmp_path: Path) -> Path:
    src = Path(module.__file__).parent  # type: ignore[attr-defined]
    dst = tmp_path / src.name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def touched(s: memnet.Session) -> tuple[set[str], set[tuple[str, str, str]]]:
    """Locators of the nodes, and (type, src, dst) locators of the edges, that the
    last commit changed."""
    st = s.store

    def loc(n: int) -> str:
        return str(st.node_props(n).get("locator"))

    nodes, edges = set(), set()
    for ch in s.history()[-1].changes:
        if ch.op in ("N+", "N~"):
            nodes.add(loc(ch.id))
        else:
            edges.add((ch.state[0], loc(ch.state[1]), loc(ch.state[2])))
    return nodes, edges


# -- real packages nobody here wrote ----------------------------------------------------
def test_lark_matches_an_independent_scan(tmp_path):
    import lark

    top = copy_of(lark, tmp_path)
    s = memnet.Session("lark")
    t0 = time.perf_counter()
    r = ingest(s, top)
    took = time.perf_counter() - t0
    mods, edges, symbols = reference(top)
    got = graph(s)
    assert got["mods"] == sorted(mods)  # one MOD per .py file
    assert got["imports"] == edges  # IMPORTS as the ast scan says
    assert got["syms"] == symbols
    assert r.files == r.parsed == len(mods) and r.created == s.store.live_nodes
    assert not r.warnings
    assert len(mods) >= 30 and len(edges) >= 60 and symbols >= 150
    assert took < 5, took


def test_networkx_matches_an_independent_scan_and_recall_works():
    import networkx

    top = Path(networkx.__file__).parent  # read in place: ingest never writes to it
    s = memnet.Session("nx")
    r = ingest(s, top)
    mods, edges, symbols = reference(top)
    got = graph(s)
    assert got["mods"] == sorted(mods)
    assert got["imports"] == edges
    assert got["syms"] == symbols
    assert r.parsed == len(mods) > 300
    # recall on the result
    shape = s.recall("MOD graph")
    assert shape.receipt.seed_mode == "match" and shape.receipt.rows > 0
    assert "networkx/classes/graph.py" in s.recall("MOD path:'networkx/classes/graph.py'").text
    # nothing changed: nothing parsed, nothing written
    v = s.version
    again = ingest(s, top)
    assert (again.changed, again.parsed, s.version) == (False, 0, v)


# -- re-ingest does work in proportion to the change ------------------------------------
@pytest.fixture()
def lark_session(tmp_path):
    import lark

    top = copy_of(lark, tmp_path)
    s = memnet.Session("lark")
    ingest(s, top)
    return s, top


def test_second_ingest_changes_nothing_and_parses_nothing(lark_session):
    s, top = lark_session
    v, hist = s.version, len(s.history())
    r = ingest(s, top)
    assert not r.changed and r.parsed == 0 and r.files > 30
    assert s.version == v and len(s.history()) == hist


def test_copied_files_give_the_same_artefacts_as_parsed_ones(lark_session):
    s, top = lark_session
    fresh, reused = scan(top), scan(top, session=s)
    assert reused.parsed == 0 and fresh.parsed == fresh.files == reused.files
    assert fresh.elements == reused.elements
    assert fresh.links == reused.links
    assert scan(top).elements == fresh.elements  # deterministic


def test_editing_one_file_touches_only_that_file(lark_session):
    s, top = lark_session
    utils = "py:lark/utils.py"
    pairs = graph(s)["imports"]
    assert ("lark/utils.py", "lark/grammar.py") not in pairs
    f = top / "utils.py"
    f.write_text(
        f.read_text() + '\n\ndef added_helper():\n    """Added by the test."""\n'
        "    from .grammar import Rule\n    return Rule\n"
    )
    r = ingest(s, top)
    assert r.parsed == 1 and r.changed
    assert (r.created, r.updated, r.recycled, r.links_added, r.links_removed) == (1, 1, 0, 2, 0)
    nodes, edges = touched(s)
    assert nodes == {utils, f"{utils}::added_helper"}
    assert edges == {
        ("CONTAINS", utils, f"{utils}::added_helper"),
        ("IMPORTS", utils, "py:lark/grammar.py"),
    }
    assert ("lark/utils.py", "lark/grammar.py") in graph(s)["imports"]
    assert graph(s)["imports"] == reference(top)[1]


def test_deleting_then_restoring_a_file(lark_session, tmp_path):
    s, top = lark_session
    gone = "py:lark/grammar.py"
    before = snapshot(s, Artefacts("lark", ("py", "md")))[0]
    importers = {a for a, b in graph(s)["imports"] if b == "lark/grammar.py"}
    assert len(importers) >= 5
    saved = (top / "grammar.py").read_bytes()
    (top / "grammar.py").unlink()
    r = ingest(s, top)
    assert r.parsed == 0 and r.created == 0
    after = snapshot(s, Artefacts("lark", ("py", "md")))[0]
    dropped = {loc for loc in before if loc == gone or loc.startswith(gone + "::")}
    assert len(dropped) > 3 and r.recycled == len(dropped)
    assert set(after) == set(before) - dropped
    assert all(after[loc] == before[loc] for loc in after)  # the rest is untouched
    assert graph(s)["imports"] == reference(top)[1]  # importers now reach lark/__init__

    (top / "grammar.py").write_bytes(saved)  # a file appears again
    r = ingest(s, top)
    assert r.parsed == 1 and r.created == len(dropped)
    back = {a for a, b in graph(s)["imports"] if b == "lark/grammar.py"}
    assert back == importers  # edges from unchanged files
    assert graph(s)["imports"] == reference(top)[1]


def test_hand_written_nodes_and_edges_survive_reingest(lark_session):
    s, top = lark_session
    mod = snapshot(s, Artefacts("lark", ("py",)))[0]["py:lark/lexer.py"][0]
    ids = s.commit(
        f"INSERT (t:TSK {{title: 'speed up the lexer', status: 'open'}})"
        f"-[:TOUCHES]->({mod}), (d:DEC {{title: 'keep it'}})-[:GOVERNS]->({mod})"
    ).ids
    f = top / "lexer.py"
    f.write_text(f.read_text() + "\n# a comment changes the hash\n")
    r = ingest(s, top)
    assert r.parsed == 1 and r.updated == 1 and r.recycled == 0
    shape = s.recall("TSK lexer")
    for h in (ids["t"], mod):
        assert h in shape.text
    assert "TOUCHES" in shape.text
    assert s.stats()["nodes"] == graph_nodes(s) + 2


def graph_nodes(s: memnet.Session) -> int:
    st = s.store
    return sum(1 for n in st.live_node_ids() if "locator" in st.node_props(n))


# -- small trees: the rules one by one ---------------------------------------------------
def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, body in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body, encoding="utf-8")
    return root


def test_the_imports_rule(tmp_path):
    top = write(
        tmp_path / "pkg",
        {
            "__init__.py": "from . import sub\nfrom .sub.leaf import thing\n",
            "a.py": (
                "import os\nimport pkg.sub.leaf\nimport pkg.sub.nothere.deep\n"
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n"
                "def f():\n    from .sub import leaf\n    from . import a\n"
            ),
            "b.py": "from .. import outside\nfrom .sub import *\nfrom pkg.a import f\n",
            "sub/__init__.py": "from . import leaf\nfrom .. import a\n",
            "sub/leaf.py": "from ..b import x\nfrom ...way import up\n",
        },
    )
    a = scan(top)
    got = {(k[1].split(":", 1)[1], k[2].split(":", 1)[1]) for k in a.links if k[0] == "IMPORTS"}
    assert got == {
        ("pkg/__init__.py", "pkg/sub/__init__.py"),
        ("pkg/__init__.py", "pkg/sub/leaf.py"),
        ("pkg/a.py", "pkg/sub/leaf.py"),  # import pkg.sub.leaf / from .sub import leaf
        ("pkg/a.py", "pkg/sub/__init__.py"),  # pkg.sub.nothere.deep -> longest prefix
        ("pkg/a.py", "pkg/b.py"),  # under TYPE_CHECKING
        ("pkg/b.py", "pkg/sub/__init__.py"),  # star import; `from ..` climbs out
        ("pkg/b.py", "pkg/a.py"),
        ("pkg/sub/__init__.py", "pkg/sub/leaf.py"),
        ("pkg/sub/__init__.py", "pkg/a.py"),
        ("pkg/sub/leaf.py", "pkg/b.py"),
    }
    assert a.elements["py:pkg/a.py"].props["imports"] == (
        "pkg.a",
        "pkg.b",
        "pkg.sub.leaf",
        "pkg.sub.nothere.deep",
    )  # no self edge from pkg.a
    assert (
        "imports"
        not in scan(write(tmp_path / "solo", {"x.py": "import os\n"}))
        .elements["py:solo/x.py"]
        .props
    )


def test_modules_symbols_and_containment(tmp_path):
    top = write(
        tmp_path / "proj",
        {
            "m.py": (
                '"""\n\n  First line of the doc.\nMore."""\nimport os\n\n'
                "class A:\n    'A class.'\n    def inner(self): ...\n\n"
                "async def run():\n    pass\n\ndef f(): ...\n\ndef f(x): ...\n"
                "if True:\n    def nested(): ...\n"
            ),
            "deep/er/x.py": "",
            "docs/only.md": "# Only\n",
            "data/skip.txt": "not read",
        },
    )
    a = scan(top)
    assert a.root == "proj" and a.files == 3
    kinds = {loc: el.kind for loc, el in a.elements.items()}
    assert kinds == {
        "py:proj": "PKG",
        "py:proj/deep": "PKG",
        "py:proj/deep/er": "PKG",
        "py:proj/docs": "PKG",
        "py:proj/m.py": "MOD",
        "py:proj/deep/er/x.py": "MOD",
        "py:proj/m.py::A": "SYM",
        "py:proj/m.py::run": "SYM",
        "py:proj/m.py::f": "SYM",
        "md:proj/docs/only.md": "DOC",
        "md:proj/docs/only.md#only": "SEC",
    }
    m = a.elements["py:proj/m.py"].props
    assert m["doc"] == "First line of the doc." and m["path"] == "proj/m.py"
    assert m["lines"] == 18 and len(m["hash"]) == 16
    assert a.elements["py:proj/m.py::A"].props == {
        "name": "A",
        "line": 7,
        "sym": "class",
        "doc": "A class.",
    }
    assert a.elements["py:proj/m.py::run"].props["sym"] == "def"
    assert a.elements["py:proj/m.py::f"].props["defs"] == 2
    assert a.elements["py:proj/deep/er"].props == {"path": "proj/deep/er", "name": "er"}
    assert a.elements["py:proj/deep/er/x.py"].props["lines"] == 0
    contains = {(s, d) for t, s, d in a.links if t == "CONTAINS"}
    assert contains == {
        ("py:proj", "py:proj/deep"),
        ("py:proj/deep", "py:proj/deep/er"),
        ("py:proj/deep/er", "py:proj/deep/er/x.py"),
        ("py:proj", "py:proj/docs"),
        ("py:proj/docs", "md:proj/docs/only.md"),
        ("md:proj/docs/only.md", "md:proj/docs/only.md#only"),
        ("py:proj", "py:proj/m.py"),
        ("py:proj/m.py", "py:proj/m.py::A"),
        ("py:proj/m.py", "py:proj/m.py::run"),
        ("py:proj/m.py", "py:proj/m.py::f"),
    }
    long_doc = scan(write(tmp_path / "l", {"x.py": f'"""{"w" * 400}"""\n'}))
    assert len(long_doc.elements["py:l/x.py"].props["doc"]) == 160


def test_markdown_sections(tmp_path):
    text = (
        "Intro line\n# Title\n\ntext\n## Part one ##\n### Deep: detail!\n"
        "```python\n# not a heading\n```\n## Part one\n####### seven is text\n"
        "#tag is text\n   # Indented three\n    # indented four is code\n"
        "~~~~\n## fenced\n~~~\n~~~~\n# Über & Co.\n#\n"
    )
    assert [(lvl, t) for _, lvl, t in headings(text)] == [
        (1, "Title"),
        (2, "Part one"),
        (3, "Deep: detail!"),
        (2, "Part one"),
        (1, "Indented three"),
        (1, "Über & Co."),
        (1, ""),
    ]
    assert slugify("Deep: detail!") == "deep-detail" and slugify("Über & Co.") == "über--co"
    a = scan(write(tmp_path / "d", {"README.md": text}))
    doc = "md:d/README.md"
    assert a.elements[doc].props["title"] == "Title"
    assert a.elements[doc].props["lines"] == 20
    secs = {loc.split("#", 1)[1]: el.props for loc, el in a.elements.items() if el.kind == "SEC"}
    assert list(secs) == [
        "title",
        "part-one",
        "deep-detail",
        "part-one-2",
        "indented-three",
        "über--co",
        "section",
    ]
    assert secs["part-one-2"] == {"title": "Part one", "level": 2, "line": 10}
    contains = {
        (s.split("#")[-1], d.split("#")[-1])
        for t, s, d in a.links
        if t == "CONTAINS" and s.startswith("md:")
    }
    assert contains == {
        ("md:d/README.md", "title"),
        ("title", "part-one"),
        ("part-one", "deep-detail"),
        ("title", "part-one-2"),
        ("md:d/README.md", "indented-three"),
        ("md:d/README.md", "über--co"),
        ("md:d/README.md", "section"),
    }


def test_files_that_do_not_parse_are_warnings_not_crashes(tmp_path):
    top = write(
        tmp_path / "bad",
        {
            "good.py": "def ok(): ...\n",
            "syntax.py": "x = 1\ndef broken(:\n    pass\n",
            "latin.py": b"a = 1\nb = '\xe9t\xe9'\n",
            "nul.py": b"a = 1\n\x00\n",
            "escape.py": "p = '\\d'\ndef fine(): ...\n",  # a SyntaxWarning only
            "bad.md": b"# ok\n\xff\n",
        },
    )
    s = memnet.Session("bad")
    r = ingest(s, top)
    where = {(w.path, w.line) for w in r.warnings}
    assert where == {
        ("bad/syntax.py", 2),
        ("bad/latin.py", 2),
        ("bad/nul.py", 2),
        ("bad/bad.md", 2),
    }
    el = snapshot(s, scan(top))[0]
    assert {loc for loc in el if "::" in loc} == {"py:bad/good.py::ok", "py:bad/escape.py::fine"}
    assert el["py:bad/syntax.py"][3]["error_line"] == 2
    again = ingest(s, top)
    assert again.parsed == 0 and not again.changed
    assert {(w.path, w.line) for w in again.warnings} == where  # said again, still true


def test_the_walk_skips_hidden_cache_vendor_and_links(tmp_path):
    top = write(
        tmp_path / "w",
        {
            "a.py": "",
            ".hidden/b.py": "",
            "__pycache__/c.py": "",
            "node_modules/d.py": "",
            "w.egg-info/e.py": "",
            "sub/.f.py": "",
            "empty/readme.txt": "",
        },
    )
    (top / "link").symlink_to(top / "sub", target_is_directory=True)
    (top / "alias.py").symlink_to(top / "a.py")
    a = scan(top)
    assert set(a.elements) == {"py:w", "py:w/a.py"}


def test_progress_is_called_per_file(tmp_path):
    top = write(tmp_path / "p", {f"m{i}.py": "" for i in range(4)})
    calls: list[tuple[int, int]] = []
    scan(top, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]


def test_a_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(memnet.MemNetError) as e:
        scan(tmp_path / "nope")
    assert e.value.code == "path_not_found" and "path_not_found" in memnet.CODES
    (tmp_path / "file.py").write_text("")
    with pytest.raises(memnet.MemNetError):
        ingest(memnet.Session("x"), tmp_path / "file.py")


# -- the command line --------------------------------------------------------------------
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


def test_memnet_ingest_on_a_cabinet(tmp_path):
    home = tmp_path / "cab"
    top = write(
        tmp_path / "shop",
        {
            "__init__.py": "",
            "pricing.py": "def price(): ...\n",
            "cart.py": "from .pricing import price\n",
            "broken.py": "def (\n",
            "README.md": "# Shop\n",
        },
    )
    missing = cli(home, "ingest", "code", str(top))
    assert missing.returncode == 1 and "session_not_found" in missing.stderr
    first = cli(home, "ingest", "code", str(top), "--create")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("ingested ") and "version 1" in first.stdout
    assert "5/5 files parsed" in first.stdout
    assert "memnet: warning: shop/broken.py:1:" in first.stderr
    again = cli(home, "ingest", "code", str(top), "--format", "json")
    out = json.loads(again.stdout)
    assert out["version"] == 1 and not out["changed"] and out["parsed"] == 0
    assert out["files"] == 5 and len(out["warnings"]) == 1
    (top / "cart.py").write_text("from .pricing import price\n\ndef total(): ...\n")
    third = json.loads(cli(home, "ingest", "code", str(top), "--format", "json").stdout)
    assert (third["version"], third["parsed"], third["created"], third["updated"]) == (2, 1, 1, 1)
    rec = cli(home, "recall", "code", "MOD cart", "--format", "json")
    assert rec.returncode == 0 and "shop/cart.py" in json.loads(rec.stdout)["text"]
    nope = cli(home, "ingest", "code", str(tmp_path / "nowhere"))
    assert nope.returncode == 1
    assert nope.stderr.startswith("memnet: error: path_not_found:")
