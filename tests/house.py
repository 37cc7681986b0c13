"""What the house rules of issue 38 count, read from the source with ``ast``.

Run ``python -m tests.house [PREFIX]`` to print the findings (all of them, or
those in modules whose dotted name starts with PREFIX); ``tests/test_house.py``
holds the whole package to none.

- a *private crossing*: a module takes a ``_name`` another module defines, by
  ``from m import _name``, ``m._name`` on an imported module, or
  ``obj._name`` on anything but ``self``/``cls`` (a private attribute of an
  object of another class);
- an *import circle*: modules of ``memnet`` that import each other, directly or
  round a loop, counting imports inside functions (they still run) and not
  those under ``if TYPE_CHECKING:`` (they never run);
- a *long module* (over 600 lines) or a *long function* (over 80 lines, its
  decorators and docstring included); a function that is a table says so with
  ``# house: table`` on its ``def`` line;
- a *trick*: a CPython-private helper (``_count_elements``), ``exec``/``eval``
  of generated code, or a subclass of ``dict`` (a cache should be a plain
  dict or ``functools.lru_cache``), outside the hot modules that say
  ``Hot module:`` in their docstring.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "memnet"
MAX_MODULE = 600
MAX_FUNCTION = 80
PRIVATE_HELPERS = {"_count_elements"}


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    module: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.module}:{self.line}: {self.what}"


def modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    base = module.split(".")
    if not is_pkg:
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            name = (
                t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            )
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    for x in ast.walk(sub):
                        if hasattr(x, "lineno"):
                            lines.add(x.lineno)
    return lines


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (run-time imports only)."""
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_lines(tree)
        is_pkg = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", 0) in skip:
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods:
                        deps.add(a.name)
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(mod, is_pkg, node.level, node.module)
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in mods:
                        deps.add(sub)
                    elif target in mods:
                        deps.add(target)
        deps.discard(mod)
        graph[mod] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_table(path_lines: list[str], node: ast.AST) -> bool:
    return "# house: table" in path_lines[node.lineno - 1]


def _hot(tree: ast.Module) -> bool:
    doc = ast.get_docstring(tree) or ""
    return "Hot module:" in doc


def findings(prefix: str = "") -> Iterator[Finding]:
    mods = modules()
    for mod, path in mods.items():
        if not mod.startswith(prefix):
            continue
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text, str(path))
        is_pkg = path.name == "__init__.py"
        if len(lines) > MAX_MODULE:
            yield Finding("long-module", mod, 1, f"{len(lines)} lines")
        module_aliases: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods:
                        module_aliases.add(a.asname or a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(mod, is_pkg, node.level, node.module)
                for a in node.names:
                    if f"{target}.{a.name}" in mods:
                        module_aliases.add(a.asname or a.name)
                    elif (target in mods or target.startswith("memnet")) and _private(a.name):
                        yield Finding("private", mod, node.lineno, f"from {target} import {a.name}")
        hot = _hot(tree)
        own = _own_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                v = node.value
                if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                    continue
                if isinstance(v, ast.Name) and v.id in module_aliases:
                    yield Finding("private", mod, node.lineno, f"{v.id}.{node.attr}")
                elif node.attr not in own:
                    yield Finding("private", mod, node.lineno, f"{ast.unparse(v)}.{node.attr}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                n = (node.end_lineno or node.lineno) - start + 1
                if n > MAX_FUNCTION and not _is_table(lines, node):
                    yield Finding("long-function", mod, node.lineno, f"{node.name}: {n} lines")
            if hot:
                continue
            if isinstance(node, ast.Name) and node.id in PRIVATE_HELPERS:
                yield Finding("trick", mod, node.lineno, node.id)
            elif isinstance(node, ast.alias) and node.name in PRIVATE_HELPERS:
                yield Finding("trick", mod, getattr(node, "lineno", 1), node.name)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("exec", "eval")
            ):
                yield Finding("trick", mod, node.lineno, f"{node.func.id}()")
            elif isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id == "dict" for b in node.bases
            ):
                yield Finding("trick", mod, node.lineno, f"class {node.name}(dict)")
    graph = imports(mods)
    for part in circles(graph):
        if part[0].startswith(prefix) or any(p.startswith(prefix) for p in part):
            yield Finding("circle", part[0], 1, " <-> ".join(part))


def _own_names(tree: ast.Module) -> set[str]:
    """The names this module defines: functions, classes, globals, class
    attributes and the attributes its code sets on ``self``/``cls`` (a
    private one read here, on any object, stays inside the module)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    for node in ast.walk(tree):  # names a class declares in __slots__
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("_")
        ):
            own.add(node.value)
    return own


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else ""
    got = list(findings(prefix))
    for f in got:
        print(f)
    counts: dict[str, int] = {}
    for f in got:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "clean")
    return 1 if got else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
