"""The file readers of source-tree ingest: what a handler is and sees, and the
two built in, Python (MOD, SYM, the imports) and markdown (DOC, SEC).

What each reads and the IMPORTS rule are told in :mod:`memnet.ingest.source`,
which walks the tree and hands the files to these.
"""

from __future__ import annotations

import ast as pyast
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidArgument
from .model import Artefacts, Element, Warning_

DOC_MAX = 160
MAX_IMPORTS = 4096  # the engine's cap on list items


# -- what a handler sees ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Unit:
    """One file handed to a handler.

    ``root`` is the root's name, ``rel`` the path below the root
    (``classes/graph.py``), ``path`` the path from the root's parent
    (``networkx/classes/graph.py``), ``file`` the absolute path and
    ``locator`` the locator the file's own element must have.
    """

    root: str
    rel: str
    path: str
    file: Path
    locator: str


class Handler(Protocol):
    """What a file handler offers; see :class:`PythonHandler` for one.

    ``parse`` adds the file's own element (kind ``kind``, locator
    ``unit.locator``, with ``base`` - ``path``, ``lines``, ``hash`` - among its
    properties), the elements below it (locators ``unit.locator + '::...'`` or
    ``+ '#...'``), the links among those, and warnings; it must never raise
    on bad content. ``finish`` runs once after every file, parsed or copied,
    and adds links that span files. ``reuse`` is called for a file copied from
    the snapshot (e.g. to repeat a stored warning).
    """

    suffix: str
    scheme: str
    kind: str

    def parse(self, unit: Unit, data: bytes, base: dict[str, Any], art: Artefacts) -> None: ...

    def finish(self, art: Artefacts) -> None: ...

    def reuse(self, unit: Unit, element: Element, art: Artefacts) -> None: ...


def _first_line(doc: str | None) -> str | None:
    if not doc:
        return None
    for line in doc.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= DOC_MAX else line[: DOC_MAX - 1] + "…"
    return None


def _error_props(
    props: dict[str, Any], unit: Unit, line: int, message: str, art: Artefacts
) -> None:
    props["error"] = message
    props["error_line"] = line
    art.warnings.append(Warning_(unit.path, line, message))


def _repeat_error(element: Element, unit: Unit, art: Artefacts) -> None:
    msg = element.props.get("error")
    if isinstance(msg, str):
        line = element.props.get("error_line")
        art.warnings.append(Warning_(unit.path, line if isinstance(line, int) else 0, msg))


# -- Python -------------------------------------------------------------------------
Symbol = pyast.ClassDef | pyast.FunctionDef | pyast.AsyncFunctionDef


def top_symbols(tree: pyast.Module) -> dict[str, tuple[Symbol, int]]:
    """The SYMs of a module: each top-level ``class``, ``def`` or ``async def``
    name with its first definition and how many times it is defined at the top,
    in order of first definition."""
    seen: dict[str, tuple[Symbol, int]] = {}
    for node in tree.body:
        if isinstance(node, (pyast.ClassDef, pyast.FunctionDef, pyast.AsyncFunctionDef)):
            first, defs = seen.get(node.name, (node, 0))
            seen[node.name] = (first, defs + 1)
    return seen


def module_name(root: str, rel: str) -> str:
    """The dotted name of the module at ``rel`` (below the root): the root is
    the top package, ``__init__.py`` names its package."""
    parts = [root, *rel[: -len(".py")].split("/")] if rel else [root]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_statements(tree: pyast.Module) -> list[pyast.Import | pyast.ImportFrom]:
    """Every ``import`` statement of a module, at any depth. An import is a
    statement, so only statement blocks are visited (bodies, ``else`` and
    ``finally`` blocks, ``except`` handlers, ``match`` cases), never the
    expressions that make up most of a tree."""
    out: list[pyast.Import | pyast.ImportFrom] = []
    stack: list[Any] = list(tree.body)
    imp, imp_from = pyast.Import, pyast.ImportFrom
    while stack:
        node = stack.pop()
        t = type(node)
        if t is imp or t is imp_from:
            out.append(node)
            continue
        for name in _BLOCKS:
            block = getattr(node, name, None)
            if block:
                stack.extend(block)
    return out


class PythonHandler:
    """``.py`` files: a MOD each, a SYM per top-level class or function, imports."""

    suffix = ".py"
    scheme = "py"
    kind = "MOD"

    def parse(self, unit: Unit, data: bytes, base: dict[str, Any], art: Artefacts) -> None:
        props = dict(base)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes and the like
                tree = pyast.parse(data, filename=unit.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            line = getattr(e, "lineno", None)
            if not isinstance(line, int):
                nul = data.find(b"\0")
                line = data.count(b"\n", 0, nul) + 1 if nul >= 0 else 1
            msg = getattr(e, "msg", None) or str(e) or type(e).__name__
            _error_props(props, unit, line, f"not parsed: {msg}", art)
            art.add(Element(unit.locator, self.kind, props, unit=unit.locator))
            return
        doc = _first_line(pyast.get_docstring(tree))
        if doc:
            props["doc"] = doc
        imports = self._imports(tree, unit)
        if len(imports) > MAX_IMPORTS:
            art.warnings.append(
                Warning_(unit.path, 1, f"{len(imports)} imports; the first {MAX_IMPORTS} are kept")
            )
            imports = imports[:MAX_IMPORTS]
        if imports:
            props["imports"] = imports
        art.add(Element(unit.locator, self.kind, props, unit=unit.locator))
        for name, (node, defs) in top_symbols(tree).items():
            sp: dict[str, Any] = {
                "name": name,
                "line": node.lineno,
                "sym": "class" if isinstance(node, pyast.ClassDef) else "def",
            }
            sdoc = _first_line(pyast.get_docstring(node))
            if sdoc:
                sp["doc"] = sdoc
            if defs > 1:
                sp["defs"] = defs
            loc = f"{unit.locator}::{name}"
            art.add(Element(loc, "SYM", sp, unit=unit.locator))
            art.link("CONTAINS", unit.locator, loc)

    @staticmethod
    def _imports(tree: pyast.Module, unit: Unit) -> tuple[str, ...]:
        """Absolute dotted names this module imports that lie in the top package."""
        me = module_name(unit.root, unit.rel)
        package = me if unit.rel.endswith("__init__.py") or not unit.rel else me.rpartition(".")[0]
        names: set[str] = set()
        for node in _import_statements(tree):
            if isinstance(node, pyast.Import):
                names.update(a.name for a in node.names)
            else:
                if node.level:
                    parts = package.split(".") if package else []
                    up = node.level - 1
                    if up >= len(parts):
                        continue  # climbs above the root
                    base = ".".join(parts[: len(parts) - up])
                    if node.module:
                        base = f"{base}.{node.module}"
                elif node.module:
                    base = node.module
                else:  # pragma: no cover - `from import x` does not parse
                    continue
                for a in node.names:
                    names.add(base if a.name == "*" else f"{base}.{a.name}")
        top = unit.root
        return tuple(sorted(n for n in names if n == top or n.startswith(top + ".")))

    def finish(self, art: Artefacts) -> None:
        """IMPORTS edges from every MOD's ``imports`` (the rule is told in
        :mod:`memnet.ingest.source`)."""
        mods: dict[str, str] = {}
        prefix = f"{self.scheme}:"
        for loc, el in art.elements.items():
            if el.kind != self.kind or not loc.startswith(prefix) or not loc.endswith(".py"):
                continue
            rel = loc[len(prefix) + len(art.root) + 1 :]
            name = module_name(art.root, rel)
            # pkg/__init__.py wins over a pkg.py beside it, as in Python
            if name not in mods or rel.endswith("__init__.py"):
                mods[name] = loc
        for loc in sorted(mods.values()):
            imports = art.elements[loc].props.get("imports", ())
            if not isinstance(imports, tuple):
                continue
            for n in imports:
                if not isinstance(n, str):
                    continue
                parts = n.split(".")
                for i in range(len(parts), 0, -1):
                    dst = mods.get(".".join(parts[:i]))
                    if dst is not None:
                        if dst != loc:
                            art.link("IMPORTS", loc, dst)
                        break

    def reuse(self, unit: Unit, element: Element, art: Artefacts) -> None:
        _repeat_error(element, unit, art)


# -- markdown -----------------------------------------------------------------------
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*\Z")
_CLOSING = re.compile(r"(?:\A|[ \t]+)#+\Z")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)\Z")
_SLUG_DROP = re.compile(r"[^\w\- ]")


def slugify(text: str) -> str:
    """The anchor of a heading: lower case, punctuation dropped, spaces to ``-``."""
    s = _SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")
    return s or "section"


def headings(text: str) -> list[tuple[int, int, str]]:
    """``(line, level, title)`` of every ATX heading outside fenced code."""
    out: list[tuple[int, int, str]] = []
    fence: tuple[str, int] | None = None
    for no, line in enumerate(text.splitlines(), 1):
        f = _FENCE.match(line)
        if fence is not None:
            if (
                f
                and f.group(1)[0] == fence[0]
                and len(f.group(1)) >= fence[1]
                and not f.group(2).strip()
            ):
                fence = None
            continue
        if f and not (f.group(1)[0] == "`" and "`" in f.group(2)):
            fence = (f.group(1)[0], len(f.group(1)))
            continue
        m = _ATX.match(line)
        if m:
            title = _CLOSING.sub("", m.group(2) or "").strip()
            out.append((no, len(m.group(1)), title))
    return out


def sections(text: str) -> list[tuple[int, int, str, str]]:
    """``(line, level, title, slug)`` of every heading (see :func:`headings`);
    a slug repeated in the file gets ``-2``, ``-3`` ... (the SEC locators)."""
    used: set[str] = set()
    out: list[tuple[int, int, str, str]] = []
    for line, level, title in headings(text):
        slug = base = slugify(title)
        n = 1
        while slug in used:
            n += 1
            slug = f"{base}-{n}"
        used.add(slug)
        out.append((line, level, title, slug))
    return out


class MarkdownHandler:
    """``.md`` files: a DOC each and a SEC per heading, nested by level."""

    suffix = ".md"
    scheme = "md"
    kind = "DOC"

    def parse(self, unit: Unit, data: bytes, base: dict[str, Any], art: Artefacts) -> None:
        props = dict(base)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            _error_props(props, unit, line, f"not read: not UTF-8 ({e.reason})", art)
            art.add(Element(unit.locator, self.kind, props, unit=unit.locator))
            return
        heads = sections(text)
        if heads and heads[0][2]:
            props["title"] = heads[0][2]
        art.add(Element(unit.locator, self.kind, props, unit=unit.locator))
        stack: list[tuple[int, str]] = []  # (level, locator) of open sections
        for line, level, title, slug in heads:
            loc = f"{unit.locator}#{slug}"
            art.add(
                Element(
                    loc, "SEC", {"title": title, "level": level, "line": line}, unit=unit.locator
                )
            )
            while stack and stack[-1][0] >= level:
                stack.pop()
            art.link("CONTAINS", stack[-1][1] if stack else unit.locator, loc)
            stack.append((level, loc))

    def finish(self, art: Artefacts) -> None:
        return None

    def reuse(self, unit: Unit, element: Element, art: Artefacts) -> None:
        _repeat_error(element, unit, art)


#: The handlers by file suffix. Add one with :func:`register`.
HANDLERS: dict[str, Handler] = {".py": PythonHandler(), ".md": MarkdownHandler()}


def register(handler: Handler) -> None:
    """Read files ending in ``handler.suffix`` with ``handler`` from now on
    (the extension point for, e.g., ``.sysml``). Its scheme joins the scope."""
    if not handler.suffix.startswith(".") or handler.suffix in (".py", ".md"):
        raise InvalidArgument(f"bad or built-in suffix {handler.suffix!r}")
    HANDLERS[handler.suffix] = handler


__all__ = [
    "DOC_MAX",
    "HANDLERS",
    "MAX_IMPORTS",
    "Handler",
    "MarkdownHandler",
    "PythonHandler",
    "Unit",
    "headings",
    "module_name",
    "register",
    "sections",
    "slugify",
    "top_symbols",
]
