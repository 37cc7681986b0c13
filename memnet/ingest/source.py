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
built in, and :func:`register` adds another, e.g. ``.sysml``). Only regular
files are read: a FIFO, socket or device is never opened, and one whose name
a handler takes gives a warning ``skipped: not a regular file (a FIFO)``. A
file larger than :data:`MAX_FILE` bytes (16 MiB) is not read (its size is
checked first) and gives a warning ``not read: the file is N bytes; the cap is
16777216``; so does a file that cannot be read, and neither gets an element.

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

import hashlib
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputTooLarge, PathNotFound
from .handlers import (
    HANDLERS,
    Handler,
    MarkdownHandler,
    PythonHandler,
    Unit,
    headings,
    module_name,
    register,
    sections,
    slugify,
    top_symbols,
)
from .model import Artefacts, Element, Warning_
from .sync import Snapshot, SyncResult, read_session, sync_read
from .walk import path_kind, read_regular, text_name, tree_root, walk, walk_tree

SCHEMES = ("py", "md")
#: Largest file read (bytes); a larger one is not read, only warned about.
MAX_FILE = 16 * 1024 * 1024
MANAGED_TYPES = ("CONTAINS", "IMPORTS")

Progress = Callable[[int, int], None]


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


def _by_file(
    have_el: Mapping[str, Any], have_ln: Mapping[tuple[str, str, str], Any], unit_locs: set[str]
) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str, str]]]]:
    """The snapshot grouped by file: the locators of the elements below each
    file, and the links among a file's own elements."""
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
    return below, inner


def _add_dirs(art: Artefacts, root: str, dirs: list[str]) -> None:
    """A ``PKG`` element for each directory, contained in its parent's."""
    for rel in dirs:
        loc = f"py:{root}/{rel}" if rel else f"py:{root}"
        art.add(
            Element(
                loc,
                "PKG",
                {
                    "path": f"{root}/{rel}" if rel else root,
                    "name": rel.rpartition("/")[2] if rel else root,
                },
                unit=loc,
            )
        )
        if rel:
            parent = rel.rpartition("/")[0]
            art.link("CONTAINS", f"py:{root}/{parent}" if parent else f"py:{root}", loc)


def _scan(
    top: Path, snap: Snapshot | None, progress: Progress | None, handlers: Mapping[str, Handler]
) -> Artefacts:
    root = top.name
    art = _empty(root, handlers)
    dirs, files = walk_tree(top, handlers, art.warnings, root)
    units = [
        (Unit(root, rel, f"{root}/{rel}", top / rel, f"{h.scheme}:{root}/{rel}"), h)
        for rel, h in files
    ]
    total = len(units)
    art.files = total
    if progress is not None:
        progress(0, total)

    have_el, have_ln = snap if snap is not None else ({}, {})
    below, inner = _by_file(have_el, have_ln, {u.locator for u, _ in units})
    _add_dirs(art, root, dirs)
    for done, (unit, h) in enumerate(units, 1):
        try:
            data = read_regular(unit.file, MAX_FILE)
        except OSError as e:
            art.warnings.append(Warning_(unit.path, 0, f"not read: {e.strerror or e}"))
            continue
        except (PathNotFound, InputTooLarge) as e:  # checked before a byte is read
            art.warnings.append(Warning_(unit.path, 0, f"not read: {e.message}"))
            continue
        digest = hashlib.sha256(data).hexdigest()[:16]
        held = have_el.get(unit.locator)
        if held is not None and held[1] == h.kind and held[3].get("hash") == digest:
            _copy(
                art,
                unit,
                h,
                held,
                below.get(unit.locator, ()),
                have_el,
                inner.get(unit.locator, ()),
                have_ln,
            )
        else:
            lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            h.parse(unit, data, {"path": unit.path, "lines": lines, "hash": digest}, art)
            art.parsed += 1
        parent = unit.rel.rpartition("/")[0]
        if unit.locator in art.elements:
            art.link("CONTAINS", f"py:{root}/{parent}" if parent else f"py:{root}", unit.locator)
        if progress is not None:
            progress(done, total)
    for h in sorted({id(h): h for h in handlers.values()}.values(), key=lambda h: h.suffix):
        h.finish(art)
    return art


def _copy(
    art: Artefacts,
    unit: Unit,
    h: Handler,
    held: Any,
    locs: Any,
    have_el: Any,
    keys: Any,
    have_ln: Any,
) -> None:
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
def scan(
    path: str | os.PathLike[str],
    *,
    session: Any = None,
    progress: Progress | None = None,
    handlers: Mapping[str, Handler] | None = None,
) -> Artefacts:
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
        with session.lock:
            snap = read_session(session, _empty(top.name, hs))[0]
    return _scan(top, snap, progress, hs)


def ingest(
    session: Any,
    path: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    handlers: Mapping[str, Handler] | None = None,
) -> SyncResult:
    """Scan the tree at ``path`` and sync it into ``session`` as one Commit.

    Only files that changed since the last ingest are parsed; a tree that did
    not change commits nothing. Returns the :class:`SyncResult`, with
    ``files`` and ``parsed`` filled in.
    """
    top = tree_root(path)
    hs = HANDLERS if handlers is None else handlers
    with session.lock:
        read = read_session(session, _empty(top.name, hs))
        art = _scan(top, read[0], progress, hs)
        return sync_read(session, art, read)


__all__ = [
    "HANDLERS",
    "MANAGED_TYPES",
    "MAX_FILE",
    "SCHEMES",
    "Handler",
    "MarkdownHandler",
    "PythonHandler",
    "Unit",
    "headings",
    "ingest",
    "module_name",
    "register",
    "scan",
    "path_kind",
    "sections",
    "slugify",
    "text_name",
    "top_symbols",
    "tree_root",
    "walk",
]
