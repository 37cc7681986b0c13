"""Source-tree ingest: Python packages and markdown files as a graph of locators.

:func:`scan` walks one directory and returns the :class:`Artefacts` of it;
:func:`ingest` scans and syncs the result into a session in one Commit
(:mod:`memnet.ingest.sync`). The directory's own name is the *root* of every
locator, so a tree ingested twice, from anywhere, gets the same locators.

What is read
------------
The walk goes in sorted order and skips hidden entries (a leading dot),
``__pycache__``, ``node_modules``, ``*.egg-info`` and symbolic links. Files
are handed to a handler by suffix (:data:`HANDLERS`; ``.py`` and ``.md`` come
built in, and :func:`register` adds another, e.g. ``.sysml``).

======  =====================================  =====================================
kind    locator                                properties
======  =====================================  =====================================
PKG     ``py:<root>`` / ``py:<root>/<dir>``    ``path``, ``name``
MOD     ``py:<root>/<rel>.py``                 ``path``, ``lines``, ``hash``, ``doc``,
                                               ``imports``
SYM     ``py:<root>/<rel>.py::<name>``         ``name``, ``line``, ``sym``, ``doc``
DOC     ``md:<root>/<rel>.md``                 ``path``, ``title``, ``lines``, ``hash``
SEC     ``md:<root>/<rel>.md#<slug>``          ``title``, ``level``, ``line``
======  =====================================  =====================================

A PKG is made for every directory that holds, at any depth, a file some handler
reads. ``path`` is relative to the root's parent, in posix form
(``networkx/classes/graph.py``); ``hash`` is the first 16 hex digits of the
SHA-256 of the file's bytes; ``doc`` is the first non-empty line of a
docstring, cut at 160 characters, and left out when there is none. A SYM is
a top-level ``class``, ``def`` or ``async def``; a name defined more than once
at the top (``@overload`` stubs, a ``try``/``except`` fallback does not count
as it is nested) gives one SYM at its first definition with ``defs`` set to
the number of definitions. A SEC is an ATX heading (``#`` to ``######``)
outside fenced code blocks; its slug is the heading text lower-cased, with
punctuation dropped and spaces turned into ``-``, and ``-2``, ``-3`` ... for
repeats within one file.

``CONTAINS`` joins PKG to sub-PKG, PKG to MOD and DOC, MOD to SYM, and DOC (or
the nearest earlier SEC of a lower level) to SEC.

The IMPORTS rule
----------------
A module's dotted name is its path from the root with ``/`` read as ``.``:
the root directory is the top package, so ``networkx/classes/graph.py`` is
``networkx.classes.graph`` and ``networkx/classes/__init__.py`` is
``networkx.classes``. Every ``import`` statement in a module counts, wherever
it stands (inside functions, under ``if TYPE_CHECKING:``, in ``try`` blocks):

* ``import a.b.c`` names ``a.b.c``;
* ``from X import n`` names ``X.n`` (``from X import *`` names ``X``);
* a relative ``from .X import n`` is made absolute against the importing
  module's package (a module's package is its parent; an ``__init__.py`` is its
  own package); one that climbs above the root names nothing.

Each name leads to the longest prefix of it (the whole name first) that is a
module of the tree, giving ``MOD -[IMPORTS]-> MOD``; a name with no such
prefix gives no edge, and a module never imports itself. So ``from X import
n`` lands on module ``X.n`` when there is one, else on ``X``.

The names inside the top package are kept on the MOD as its ``imports``
property (sorted, absolute, left out when empty). The edges are recomputed
from those properties on every ingest, so an unchanged module that imports a
module added since still gets its edge without being read again.

Work in proportion to the change
--------------------------------
With a ``session`` (``ingest`` always passes it), the session's snapshot of the
scope is taken first. A file whose ``hash`` matches the one its stored MOD or
DOC carries is not parsed: its element, the elements below it (locators that
continue with ``::`` or ``#``) and the links among them are copied from the
snapshot. ``Artefacts.files`` counts the files seen and ``Artefacts.parsed``
the ones parsed. A file that does not parse (bad syntax, not UTF-8, NUL bytes)
becomes a MOD without SYMs, with ``error`` / ``error_line`` properties and a
warning naming the file and line; the warning is given again while the file
stays the same.
"""

from __future__ import annotations

import ast as pyast
import hashlib
import os
import re
import stat
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import InvalidArgument, PathNotFound
from .model import Artefacts, Element, Warning_
from .sync import Snapshot, SyncResult, _read, _sync

SCHEMES = ("py", "md")
MANAGED_TYPES = ("CONTAINS", "IMPORTS")
DOC_MAX = 160
SKIP_DIRS = frozenset({"__pycache__", "node_modules"})
MAX_IMPORTS = 4096  # the engine's cap on list items

Progress = Callable[[int, int], None]
T = TypeVar("T")


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


def _error_props(props: dict[str, Any], unit: Unit, line: int, message: str,
                 art: Artefacts) -> None:
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
            art.warnings.append(Warning_(unit.path, 1, f"{len(imports)} imports; the first "
                                         f"{MAX_IMPORTS} are kept"))
            imports = imports[:MAX_IMPORTS]
        if imports:
            props["imports"] = imports
        art.add(Element(unit.locator, self.kind, props, unit=unit.locator))
        for name, (node, defs) in top_symbols(tree).items():
            sp: dict[str, Any] = {"name": name, "line": node.lineno,
                                  "sym": "class" if isinstance(node, pyast.ClassDef) else "def"}
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
        package = me if unit.rel.endswith("__init__.py") or not unit.rel else \
            me.rpartition(".")[0]
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
        """IMPORTS edges from every MOD's ``imports`` (see the module doc)."""
        mods: dict[str, str] = {}
        prefix = f"{self.scheme}:"
        for loc, el in art.elements.items():
            if el.kind != self.kind or not loc.startswith(prefix) or not loc.endswith(".py"):
                continue
            rel = loc[len(prefix) + len(art.root) + 1:]
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
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= fence[1] \
                    and not f.group(2).strip():
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
        stack: list[tuple[int, str]] = []   # (level, locator) of open sections
        for line, level, title, slug in heads:
            loc = f"{unit.locator}#{slug}"
            art.add(Element(loc, "SEC", {"title": title, "level": level, "line": line},
                            unit=unit.locator))
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


# -- the walk -----------------------------------------------------------------------
def _skip(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info")


def _walk(top: Path, handlers: Mapping[str, T],
          warn: list[Warning_], root: str) -> tuple[list[str], list[tuple[str, T]]]:
    """Directories (relative, ``''`` for the root) that hold a handled file, and
    the handled files, both in sorted depth-first order."""
    dirs: list[str] = []
    files: list[tuple[str, T]] = []

    def visit(path: Path, rel: str) -> bool:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            warn.append(Warning_(f"{root}/{rel}" if rel else root, 0,
                                 f"not read: {err.strerror or err}"))
            return False
        mark = len(dirs)
        dirs.append(rel)
        found = False
        for e in entries:
            if _skip(e.name) or e.is_symlink():
                continue
            if not text_name(e.name):  # a locator is text: such a name cannot be one
                warn.append(Warning_(f"{root}/{rel}" if rel else root, 0,
                                     f"skipped {os.fsencode(e.name)!r}: the name is not UTF-8"))
                continue
            sub = f"{rel}/{e.name}" if rel else e.name
            if e.is_dir(follow_symlinks=False):
                found = visit(Path(e.path), sub) or found
            elif e.is_file(follow_symlinks=False):
                h = handlers.get(os.path.splitext(e.name)[1])
                if h is not None:
                    files.append((sub, h))
                    found = True
        if not found:
            del dirs[mark:]
        return found

    visit(top, "")
    return dirs, files


def text_name(name: str) -> bool:
    """Whether a file name as the OS gives it (bytes that are not UTF-8 come
    as lone surrogates) is UTF-8 text, so it can be part of a locator."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: str) -> str:
    return repr(path if len(path) <= 200 else path[:200] + "…")


def path_kind(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """``(path, kind)`` with kind ``dir``, ``file`` or ``other``; a path that
    names nothing (empty, missing, unreadable, too long, holding a NUL) is a
    ``path_not_found`` error, never the working directory or an ``OSError``."""
    where = os.fsdecode(path)
    if not where:
        raise PathNotFound("the path is empty (write . for the working directory)", path=where)
    p = Path(where)
    try:
        mode = p.stat().st_mode
    except (OSError, ValueError) as e:
        why = (e.strerror if isinstance(e, OSError) else None) or str(e)
        raise PathNotFound(f"no such file or directory: {_shown(where)} ({why})",
                           path=where[:200]) from None
    return p, "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def walk(top: Path, kinds: Mapping[str, T]) -> tuple[list[tuple[str, T]], list[Warning_]]:
    """The files below ``top`` whose suffix is a key of ``kinds`` (relative
    posix paths with their ``kinds`` value, sorted depth-first), walked with
    the rules of ingest (see the module doc), and the directories that could
    not be read."""
    warn: list[Warning_] = []
    return _walk(top, kinds, warn, top.name)[1], warn


def tree_root(path: str | os.PathLike[str]) -> Path:
    """``path`` resolved, or a ``path_not_found`` error when it is not a
    directory whose name is UTF-8 text (the name is the root of every locator)."""
    p, kind = path_kind(path)
    if kind != "dir":
        raise PathNotFound(f"{_shown(str(p))} is not a directory", path=str(p)[:200])
    top = p.resolve()
    if not text_name(top.name):
        raise PathNotFound(f"the directory name {os.fsencode(top.name)!r} is not UTF-8, so it "
                           "cannot be the root of a locator; rename it",
                           path=os.fsencode(top.name).decode("ascii", "backslashreplace"))
    return top


def _schemes(handlers: Mapping[str, Handler]) -> tuple[str, ...]:
    extra = sorted({h.scheme for h in handlers.values()} - set(SCHEMES))
    return (*SCHEMES, *extra)


def _empty(root: str, handlers: Mapping[str, Handler]) -> Artefacts:
    return Artefacts(root=root, schemes=_schemes(handlers), managed_types=MANAGED_TYPES)


def _file_of(loc: str, files: set[str]) -> str | None:
    """The file locator a sub-element locator belongs to (``::`` or ``#``)."""
    for m in re.finditer(r"::|#", loc):
        head = loc[: m.start()]
        if head in files:
            return head
    return None


def _scan(top: Path, snap: Snapshot | None, progress: Progress | None,
          handlers: Mapping[str, Handler]) -> Artefacts:
    root = top.name
    art = _empty(root, handlers)
    dirs, files = _walk(top, handlers, art.warnings, root)
    units = [(Unit(root, rel, f"{root}/{rel}", top / rel, f"{h.scheme}:{root}/{rel}"), h)
             for rel, h in files]
    total = len(units)
    art.files = total
    if progress is not None:
        progress(0, total)

    # the snapshot grouped by file: element locators and the links among them
    have_el, have_ln = snap if snap is not None else ({}, {})
    unit_locs = {u.locator for u, _ in units}
    below: dict[str, list[str]] = {}
    for loc in have_el:
        f = _file_of(loc, unit_locs) if ("::" in loc or "#" in loc) else None
        if f is not None:
            below.setdefault(f, []).append(loc)
    inner: dict[str, list[tuple[str, str, str]]] = {}
    for key in have_ln:
        fs = key[1] if key[1] in unit_locs else _file_of(key[1], unit_locs)
        fd = key[2] if key[2] in unit_locs else _file_of(key[2], unit_locs)
        if fs is not None and fs == fd:
            inner.setdefault(fs, []).append(key)

    for rel in dirs:
        loc = f"py:{root}/{rel}" if rel else f"py:{root}"
        art.add(Element(loc, "PKG", {"path": f"{root}/{rel}" if rel else root,
                                     "name": rel.rpartition("/")[2] if rel else root},
                        unit=loc))
        if rel:
            parent = rel.rpartition("/")[0]
            art.link("CONTAINS", f"py:{root}/{parent}" if parent else f"py:{root}", loc)

    for done, (unit, h) in enumerate(units, 1):
        try:
            data = unit.file.read_bytes()
        except OSError as e:
            art.warnings.append(Warning_(unit.path, 0, f"not read: {e.strerror or e}"))
            continue
        digest = hashlib.sha256(data).hexdigest()[:16]
        held = have_el.get(unit.locator)
        if held is not None and held[1] == h.kind and held[3].get("hash") == digest:
            _copy(art, unit, h, held, below.get(unit.locator, ()), have_el,
                  inner.get(unit.locator, ()), have_ln)
        else:
            lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            h.parse(unit, data, {"path": unit.path, "lines": lines, "hash": digest}, art)
            art.parsed += 1
        parent = unit.rel.rpartition("/")[0]
        if unit.locator in art.elements:
            art.link("CONTAINS", f"py:{root}/{parent}" if parent else f"py:{root}",
                     unit.locator)
        if progress is not None:
            progress(done, total)
    for h in sorted({id(h): h for h in handlers.values()}.values(), key=lambda h: h.suffix):
        h.finish(art)
    return art


def _copy(art: Artefacts, unit: Unit, h: Handler, held: Any, locs: Any, have_el: Any,
          keys: Any, have_ln: Any) -> None:
    """Take an unchanged file's elements and inner links from the snapshot."""
    _handle, kind, labels, props = held
    own = Element(unit.locator, kind, dict(props), tuple(labels), unit=unit.locator)
    art.add(own)
    for loc in sorted(locs):
        _h, k, lb, p = have_el[loc]
        art.add(Element(loc, k, dict(p), tuple(lb), unit=unit.locator))
    for key in sorted(keys):
        t, src, dst = key
        lk = art.link(t, src, dst)
        lk.props.update(have_ln[key][1])
    h.reuse(unit, own, art)


# -- the public face ----------------------------------------------------------------
def scan(path: str | os.PathLike[str], *, session: Any = None,
         progress: Progress | None = None,
         handlers: Mapping[str, Handler] | None = None) -> Artefacts:
    """The artefacts of the tree at ``path`` (a directory; its name is the root).

    With ``session``, files whose hash matches the session's copy are not
    parsed but copied from it. ``progress(done, total)`` is called as files
    are processed. A missing or non-directory ``path`` raises a
    :class:`~memnet.errors.MemNetError` with code ``path_not_found``.
    """
    top = tree_root(path)
    hs = HANDLERS if handlers is None else handlers
    snap = None
    if session is not None:
        with session._lock:
            snap = _read(session, _empty(top.name, hs))[0]
    return _scan(top, snap, progress, hs)


def ingest(session: Any, path: str | os.PathLike[str], *, progress: Progress | None = None,
           handlers: Mapping[str, Handler] | None = None) -> SyncResult:
    """Scan the tree at ``path`` and sync it into ``session`` as one Commit.

    Only files that changed since the last ingest are parsed; a tree that did
    not change commits nothing. Returns the :class:`SyncResult`, with
    ``files`` and ``parsed`` filled in.
    """
    top = tree_root(path)
    hs = HANDLERS if handlers is None else handlers
    with session._lock:
        read = _read(session, _empty(top.name, hs))
        art = _scan(top, read[0], progress, hs)
        return _sync(session, art, read)


__all__ = ["HANDLERS", "MANAGED_TYPES", "SCHEMES", "Handler", "MarkdownHandler",
           "PythonHandler", "Unit", "headings", "ingest", "module_name", "register", "scan",
           "path_kind", "sections", "slugify", "text_name", "top_symbols", "tree_root",
           "walk"]
