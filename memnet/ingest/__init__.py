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
    none or nothing changed) and as a model (its ``.sysml`` files; when it has
    none left, a model ingested from it before is recycled): one Commit each,
    in that order. The model is parsed before anything
    is written, so a syntax error in it leaves the session unchanged.
    Returns the sync results (one or two).
    """
    from .sysml import scan_sysml

    p = Path(path)
    if p.is_file() and p.suffix == ".sysml":
        return [sync(session, scan_sysml(p))]
    top = tree_root(p)
    from .sysml import MANAGED_TYPES, SCHEME

    has_model = _has_sysml(top)
    # with no .sysml file left, the model scope is synced empty: a model
    # ingested before, now deleted, is recycled like any deleted file
    model = scan_sysml(top) if has_model else Artefacts(
        root=top.name, schemes=(SCHEME,), managed_types=MANAGED_TYPES)
    out = [ingest(session, top, progress=progress)]
    res = sync(session, model)
    if has_model or res.changed:
        out.append(res)
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
