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

import os
from collections.abc import Callable
from pathlib import Path

from .model import Artefacts, Element, Link, Warning_
from .source import HANDLERS, Handler, Unit, ingest, register, scan, tree_root
from .sync import LOCATOR, SyncResult, snapshot, sync



def _has_sysml(top: Path) -> bool:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(f.endswith(".sysml") and not f.startswith(".") for f in filenames):
            return True
    return False


def ingest_path(session: object, path: str | os.PathLike[str], *,
                progress: Callable[[int, int], None] | None = None) -> list[SyncResult]:
    """Ingest a source tree, a SysML model, or a tree holding both.

    A ``.sysml`` file is one model (its root is the file's name). A directory
    is ingested as a source tree (Python and markdown; no Commit when it holds
    none or nothing changed) and, when it holds ``.sysml`` files, as a model
    too: one Commit each, in that order. The model is parsed before anything
    is written, so a syntax error in it leaves the session unchanged.
    Returns the sync results (one or two).
    """
    from .sysml import scan_sysml

    p = Path(path)
    if p.is_file() and p.suffix == ".sysml":
        return [sync(session, scan_sysml(p))]
    top = tree_root(p)
    model = scan_sysml(top) if _has_sysml(top) else None
    out = [ingest(session, top, progress=progress)]
    if model is not None:
        out.append(sync(session, model))
    return out


__all__ = [
    "HANDLERS",
    "LOCATOR",
    "Artefacts",
    "Element",
    "Handler",
    "Link",
    "SyncResult",
    "Unit",
    "Warning_",
    "ingest",
    "ingest_path",
    "register",
    "scan",
    "snapshot",
    "sync",
]
