"""Ingest: artefacts (source trees, markdown, SysML) into sessions with locator ids.

An ingester turns files into :class:`Artefacts` (elements keyed by a
deterministic locator, links between locators); :func:`sync` writes the
difference between those and what a session holds as one Commit. For source
trees, :func:`ingest` does both: ``ingest(session, 'path/to/pkg')`` reads
Python modules and markdown files (see :mod:`memnet.ingest.source`), and a
second call on an unchanged tree writes nothing.
"""

from .model import Artefacts, Element, Link, Warning_
from .source import HANDLERS, Handler, Unit, ingest, register, scan
from .sync import LOCATOR, SyncResult, snapshot, sync

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
    "register",
    "scan",
    "snapshot",
    "sync",
]
