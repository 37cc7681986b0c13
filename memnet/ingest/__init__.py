"""Ingest: artefacts (source trees, markdown, SysML) into sessions with locator ids.

An ingester turns files into :class:`Artefacts` (elements keyed by a
deterministic locator, links between locators); :func:`sync` writes the
difference between those and what a session holds as one Commit. For source
trees, :func:`ingest` does both: ``ingest(session, 'path/to/pkg')`` reads
Python modules and markdown files (see :mod:`memnet.ingest.source`), and a
second call on an unchanged tree writes nothing. :func:`ingest_path` is what
``memnet ingest`` runs: a source tree, a SysML v2 model (a ``.sysml`` file, or
the ``.sysml`` files of a tree; see :mod:`memnet.ingest.sysml`), or both.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import PathNotFound
from .model import Artefacts, Element, Link, Warning_
from .source import HANDLERS, Handler, Unit, ingest, path_kind, register, scan, text_name, tree_root
from .sync import LOCATOR, SyncResult, snapshot, sync


def check_ingest_path(path: str | os.PathLike[str]) -> Path:
    """``path`` when ingest can read it (a directory, or a ``.sysml`` file),
    else a ``path_not_found`` error; the faces call it before they touch a
    cabinet."""
    p, kind = path_kind(path)
    if kind == "file":
        if p.suffix == ".sysml" and text_name(p.name):
            return p
        raise PathNotFound(
            f"{os.fspath(path)!r} is neither a directory nor a .sysml file with a UTF-8 name",
            path=os.fspath(path),
        )
    return tree_root(p)


class IngestResult(tuple[SyncResult, ...]):
    """What :func:`ingest_path` did: ``tree`` (the source tree's sync, None for a
    model file) and ``model`` (the model's sync, None when the directory holds
    no model and none was removed). Iterating gives the results present, tree
    first."""

    tree: SyncResult | None
    model: SyncResult | None

    def __new__(cls, tree: SyncResult | None, model: SyncResult | None) -> IngestResult:
        self = super().__new__(cls, tuple(r for r in (tree, model) if r is not None))
        self.tree = tree
        self.model = model
        return self

    @property
    def changed(self) -> bool:
        """Whether any part committed."""
        return any(r.changed for r in self)


def ingest_path(
    session: object,
    path: str | os.PathLike[str],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> IngestResult:
    """Ingest a source tree, a SysML model, or a tree holding both.

    A ``.sysml`` file is one model (its root is the file's name). A directory
    is ingested as a source tree (Python and markdown; no Commit when it holds
    none or nothing changed) and as a model (its ``.sysml`` files; when it has
    none left, the model scope is synced empty, so a model ingested from it
    before is recycled like any deleted file): one Commit each, in that order.
    A ``.sysml`` entry that is not a regular file (a FIFO, a socket, a device)
    is never opened: it is skipped with a warning in the model's result.
    A statement of the model that does not parse is skipped with a warning
    naming its line and column, and the rest of its file is read; a file whose
    brackets, strings or comments do not close is an error. The model is parsed
    before anything is written, so such an error leaves the session unchanged.
    Returns an :class:`IngestResult`.
    """
    from .sysml import parse_files, to_artefacts

    p = check_ingest_path(path)
    skipped: list[Warning_] = []
    root, docs, _failed = parse_files(p, recover=True, warn=skipped)
    model = to_artefacts(docs, root)
    model.warnings[:0] = skipped
    if p.is_file():
        return IngestResult(None, sync(session, model))
    tree = ingest(session, p, progress=progress)
    res = sync(session, model)
    return IngestResult(tree, res if docs or res.changed or skipped else None)


def ingest_new(
    cabinet: Any,
    sid: str,
    path: str | os.PathLike[str],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Any, IngestResult]:
    """Ingest ``path`` into a new session ``sid`` of ``cabinet`` (what ``memnet
    ingest --create`` does when the session does not exist yet).

    The session is built in memory and stored with ``cabinet.adopt`` (one
    transaction, its log included) only once the ingest has succeeded, so a
    failed ingest leaves no empty session behind. Returns the stored session
    and the results of :func:`ingest_path`.
    """
    from ..session import Session

    check_ingest_path(path)
    s = Session(sid)
    results = ingest_path(s, path, progress=progress)
    cabinet.adopt(s)
    return s, results


__all__ = [
    "HANDLERS",
    "LOCATOR",
    "Artefacts",
    "Element",
    "Handler",
    "IngestResult",
    "Link",
    "SyncResult",
    "Unit",
    "Warning_",
    "check_ingest_path",
    "ingest",
    "ingest_new",
    "ingest_path",
    "register",
    "scan",
    "snapshot",
    "sync",
]
