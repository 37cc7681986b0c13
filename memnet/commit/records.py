"""What a Commit returns and what history keeps of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Caps:
    """The rate cap R of a session: live rows (nodes + edges) and bytes."""

    rows: int = 200_000
    bytes: int = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What a Commit returns.

    ``ids`` maps each client variable to its minted handle; ``version`` is the
    session version after the Commit (unchanged when the Δ changed nothing);
    ``changed`` says whether anything was written; ``advice`` is set when the
    session is close to its cap.
    """

    ids: dict[str, str]
    version: int
    changed: bool = True
    created: int = 0
    updated: int = 0
    recycled: int = 0
    advice: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One element's change inside a commit record (used by history and flush).

    ``op`` is ``'N+'`` (node created), ``'E+'`` (edge created), ``'N~'`` (node
    changed) or ``'E~'`` (edge changed). ``state`` is the element's full state
    after the change: for nodes ``(kind, labels, props, nick, recycled)``, for
    edges ``(type, src, dst, props, recycled)``. Property dicts are shared with
    the store and never mutated in place.
    """

    op: str
    id: int
    state: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """One version in a session's history."""

    version: int
    time: float
    changes: tuple[Change, ...]
    summary: dict[str, int] = field(default_factory=dict)


StoredChange = tuple[str, int, tuple[Any, ...]]  # (op, id, state after) as a log stores it
