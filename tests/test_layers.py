"""SPEC §8: layers depend downward only; the engine core imports nothing from
storage or faces. Checked on the source with ``ast`` (imports inside functions
count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "memnet"

# layer of each module (by path below memnet/), lower numbers below
LAYERS = {
    "errors": 0,
    "ids": 0,
    "tokens": 0,
    "_version": 0,
    "limits": 0,
    # what a property holds, its text and its order: every layer shares it
    "values": 0,
    "graph": 1,
    "gql": 2,
    "recall": 3,
    "commit": 3,
    "session": 4,
    # what a session refuses before any work (its argument checks)
    "session_args": 4,
    "cabinet": 5,
    "absorb": 5,
    # the merge policy of Absorb, and what every policy returns
    "absorb_merge": 5,
    "strata": 5,
    "ingest": 5,
    "host": 5,
    "importers": 5,
    "snap": 6,
    "ver": 6,
    "faces": 7,
    "__main__": 7,
    "__init__": 8,
}
CORE = {"graph", "gql", "recall", "commit", "session", "session_args"}
OUTSIDE = {
    "cabinet",
    "faces",
    "ingest",
    "absorb",
    "absorb_merge",
    "strata",
    "snap",
    "ver",
    "host",
    "importers",
}


def _top(module: str) -> str:
    return module.split(".")[0]


def _imports(path: Path) -> set[str]:
    """memnet modules a file imports (top-level names below memnet)."""
    rel = path.relative_to(PKG).with_suffix("")
    parts = list(rel.parts)
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("memnet."):
                    out.add(_top(a.name.removeprefix("memnet.")))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith("memnet."):
                    out.add(_top(node.module.removeprefix("memnet.")))
                continue
            base = parts[: len(parts) - node.level]
            target = [*base, *(node.module.split(".") if node.module else [])]
            if target:
                out.add(_top(".".join(target)))
            else:  # "from . import x" at the top of the package
                out.update(a.name for a in node.names)
    return out


FILES = sorted(PKG.rglob("*.py"))


@pytest.mark.req("MN-REQ-10")
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PKG)) for p in FILES])
def test_layers_depend_downward_only(path: Path) -> None:
    me = path.relative_to(PKG).parts[0].removesuffix(".py")
    for dep in _imports(path) - {me}:
        assert dep in LAYERS, f"{path}: unknown module memnet.{dep}"
        if me in CORE:
            assert dep not in OUTSIDE, f"engine core {me} imports {dep}"
        assert LAYERS[dep] <= LAYERS[me], (
            f"{me} (layer {LAYERS[me]}) imports {dep} (layer {LAYERS[dep]})"
        )


def test_the_value_model_stands_alone() -> None:
    assert _imports(PKG / "values.py") <= {"errors"}


def _third_party(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def _error_names(path: Path) -> set[str]:
    """Names a file imports from memnet's errors module."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("errors"):
            out.update(a.name for a in node.names)
    return out


STORAGE = {"msgpack", "lmdb", "psycopg", "psycopg_pool"}
CORE_FILES = [
    p
    for p in FILES
    if p.relative_to(PKG).parts[0].removesuffix(".py")
    in {"graph", "recall", "commit", "session", "session_args"}
]


@pytest.mark.req("MN-REQ-10")
@pytest.mark.parametrize("path", CORE_FILES, ids=[str(p.relative_to(PKG)) for p in CORE_FILES])
def test_the_engine_core_knows_no_codec_and_no_storage_error(path: Path) -> None:
    """The graph, recall, commit and session read no stored bytes themselves:
    the cabinet hands the store a decoder and its own error for damage."""
    assert not (_third_party(path) & STORAGE), path
    assert not {n for n in _error_names(path) if n.startswith("Cabinet")}, path


def test_the_graph_knows_no_language() -> None:
    for p in (PKG / "graph").rglob("*.py"):
        assert "gql" not in _imports(p), p


def test_the_check_sees_imports() -> None:
    assert "session" in _imports(PKG / "cabinet" / "base.py")
    assert "gql" in _imports(PKG / "recall" / "seed.py") or "graph" in _imports(
        PKG / "recall" / "seed.py"
    )


@pytest.mark.req("MN-REQ-22")
def test_only_the_faces_reach_the_host_hook() -> None:
    """Host Snap sits outside the engine: the core and recall never import it,
    and of the rest only the faces do."""
    users = {
        p.relative_to(PKG).as_posix()
        for p in FILES
        if "host" in _imports(p) and p.relative_to(PKG).parts[0] != "host"
    }
    assert users and all(u.startswith("faces/") for u in users), users
    for p in (PKG / "host").rglob("*.py"):
        assert not (_imports(p) & (OUTSIDE - {"host", "ingest"})), p


# -- the store's columns --------------------------------------------------------------
# The store keeps its columns to itself: outside graph/, code reads an element
# through the store's named methods and, on a hot path, the columns through
# Store.view(); writes go through methods. The old column names are gone, and
# no module of memnet, graph/ included, reads another object's private column.
RAW_COLUMNS = {
    "kind",
    "labels",
    "props",
    "key",
    "adj",
    "nrec",
    "ltok",
    "nick",
    "etype",
    "esrc",
    "edst",
    "eprops",
    "erec",
    "kind_live",
}
PRIVATE_COLUMNS = {"_" + c for c in RAW_COLUMNS | {"nick_owner", "hidden", "view"}}
# names no other object in memnet uses: a read of them on anything is a read of the store
ONLY_STORE = {"adj", "nrec", "ltok", "etype", "esrc", "edst", "eprops", "erec", "kind_live"}
RAW_EXCEPTIONS: set[str] = set()  # top-level modules allowed to read raw columns: none


def _store_exprs(fn: ast.AST) -> set[str]:
    """Source text of the expressions that hold a Store inside one function or
    module body: ``store``, ``st``, anything ending ``.store``, ``self.s``, and
    names bound from those or annotated ``Store``."""
    held = {"store", "self.s", "self.store"}
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.arg)
            and node.annotation is not None
            and ast.unparse(node.annotation).strip("'\"") in ("Store", "Store | None")
        ):
            held.add(node.arg)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            src = ast.unparse(node.value)
            if src in held or src.endswith(".store") or src.endswith("Store()"):
                held.add(ast.unparse(node.targets[0]))
    return held


def raw_column_reads(source: str) -> list[str]:
    """``line: expression`` for every read or write of a store's raw column."""
    tree = ast.parse(source)
    out = []
    scopes = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
    ]
    seen: set[int] = set()
    for scope in reversed(scopes):  # innermost functions first
        held = _store_exprs(scope)
        for node in ast.walk(scope):
            if not isinstance(node, ast.Attribute) or id(node) in seen:
                continue
            seen.add(id(node))
            if node.attr in PRIVATE_COLUMNS and ast.unparse(node.value) != "self":
                out.append(f"{node.lineno}: {ast.unparse(node)}")
            elif node.attr in ONLY_STORE:
                out.append(f"{node.lineno}: {ast.unparse(node)}")
            elif node.attr in RAW_COLUMNS:
                recv = ast.unparse(node.value)
                if recv in held or recv.endswith(".store"):
                    out.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(out)


SCANNED = [p for p in FILES if p.relative_to(PKG).parts[0] not in RAW_EXCEPTIONS]


def test_the_column_scan_covers_all_of_memnet() -> None:
    assert SCANNED == FILES and len(FILES) > 50
    assert PKG / "graph" / "store.py" in SCANNED and PKG / "cabinet" / "base.py" in SCANNED


@pytest.mark.req("MN-REQ-10")
@pytest.mark.parametrize("path", SCANNED, ids=[str(p.relative_to(PKG)) for p in SCANNED])
def test_only_the_store_touches_its_columns(path: Path) -> None:
    assert raw_column_reads(path.read_text()) == [], path


def test_the_old_column_names_are_gone() -> None:
    from memnet.graph.store import Store

    st = Store()
    assert not [c for c in RAW_COLUMNS if hasattr(st, c)]


def test_the_column_check_sees_reads() -> None:
    src = (
        "def f(store, session, cols, node, x: Store):\n"
        "    a = store.kind[1]\n"
        "    b = session.store.esrc[2]\n"
        "    s = session.store\n"
        "    c = s.props[3]\n"
        "    d = session.store._nrec\n"
        "    x.ltok[1] = 2\n"
        "    e = cols.keys[1]\n"  # a view: allowed
        "    f = store.node_kind(1)\n"  # a named method: allowed
        "    g = node.kind\n"
    )  # not a store: allowed
    assert raw_column_reads(src) == [
        "2: store.kind",
        "3: session.store.esrc",
        "5: s.props",
        "6: session.store._nrec",
        "7: x.ltok",
    ]
    # a column read by a method of another object is a read too; the store's own is not
    src = "class C:\n    def f(self, other):\n        return self._kind[1], other._kind[1]\n"
    assert raw_column_reads(src) == ["3: other._kind"]
