"""Commit(Δ): apply one mutation batch atomically.

A Commit runs in two phases. *Plan* reads the store and a private overlay of
what the Δ has done so far, checks every rule of SPEC §4 and builds the list
of changes; it never writes. *Apply* writes the planned changes, which have
all been checked, so a refused Δ leaves the session exactly as it was.

Rules, in short:

* a variable bound by a pattern with a kind is NEW and gets a minted handle;
* a bare ``(x)`` names a variable bound earlier in the Δ or an existing live
  node handle;
* a pattern whose variable is already a minted handle is an echo of a
  recalled row and is refused (writeback is NEW/SET only);
* unknown handles, recycled targets, dangling edges, bad values and a passed
  rate cap are refused with the line and column of the statement.

The package, by part: :mod:`.records` (what a Commit returns and history
keeps), :mod:`.checks` (names and values), :mod:`.plan` (plan and apply),
:mod:`.importing` (the elements Absorb adds), :mod:`.bulk` (a Δ built in
code), :mod:`.history` (replay and rewind) and :mod:`.gcpause` (the collector
pause writes share).
"""

from __future__ import annotations

from .bulk import Bulk
from .checks import (
    INT_MAX,
    INT_MIN,
    MAX_EDGE_TYPES,
    MAX_KINDS,
    MAX_LABEL_NAMES,
    MAX_LABELS,
    MAX_LIST,
    MAX_PROPS,
    MAX_STRING,
)
from .gcpause import gc_paused
from .history import replay, rewind
from .importing import import_elements
from .plan import plan_and_apply
from .records import Caps, Change, CommitRecord, CommitResult, StoredChange

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "MAX_EDGE_TYPES",
    "MAX_KINDS",
    "MAX_LABELS",
    "MAX_LABEL_NAMES",
    "MAX_LIST",
    "MAX_PROPS",
    "MAX_STRING",
    "Bulk",
    "Caps",
    "Change",
    "CommitRecord",
    "CommitResult",
    "StoredChange",
    "gc_paused",
    "import_elements",
    "plan_and_apply",
    "replay",
    "rewind",
]
