"""The Host Snap hook: what a corpus retriever hands MemNet.

A retriever is anything with ``search(q, top) -> list[Hit]``
(:class:`RagHostHook`): the default BM25 index of this package
(:class:`~memnet.host.index.HostIndex`), or a user's own (an embedding store,
a web search, a grep). MemNet never looks inside the corpus: a :class:`Hit`
is a locator, a short title and a score, which :func:`memnet.host.snap`
commits into a session as a node keyed by the locator.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import BadHit
from ..values import has_lone_surrogate

#: Longest locator a hit may carry (characters).
LOCATOR_MAX = 1024
#: Titles are cut to this many characters (an ellipsis marks the cut).
TITLE_MAX = 120
#: The node kind of a hit whose retriever names none.
DEFAULT_KIND = "DOC"
_KIND = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


def short(text: str, limit: int = TITLE_MAX) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: where it is (``locator``), what it is (``title``,
    ``kind``) and how well it matched (``score``, higher is better).

    ``kind`` is the node kind a snap gives the hit when the session does not
    hold its locator yet (the kinds ingest uses for the same locators: ``MOD``,
    ``SYM``, ``DOC``, ``SEC``, the SysML kinds). ``path`` and ``line`` say where
    to read it (relative to the indexed root's parent, 1-based; 0 when not
    known).
    """

    locator: str
    title: str
    score: float
    kind: str = DEFAULT_KIND
    path: str = ""
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The hit as plain data (what the CLI's and MCP's JSON carry)."""
        return {
            "locator": self.locator,
            "title": self.title,
            "score": round(self.score, 4),
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
        }


@runtime_checkable
class RagHostHook(Protocol):
    """A corpus retriever: the best ``top`` hits for ``q``, best first."""

    def search(self, q: str, top: int = 10) -> list[Hit]: ...


def _finite(x: float) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an int past the float range
        return False


def check_hit(hit: object) -> Hit:
    """``hit`` when it is a well-formed :class:`Hit`, else a ``bad_hit`` error
    (a snap checks every hit of a retriever before it writes anything)."""
    if not isinstance(hit, Hit):
        raise BadHit(f"a retriever returned {type(hit).__name__}, not a Hit")
    problem = None
    if (
        not isinstance(hit.locator, str)
        or not hit.locator.strip()
        or len(hit.locator) > LOCATOR_MAX
        or hit.locator != hit.locator.strip()
    ):
        problem = f"locator must be 1-{LOCATOR_MAX} characters without surrounding blanks"
    elif has_lone_surrogate(hit.locator) or (
        isinstance(hit.title, str) and has_lone_surrogate(hit.title)
    ):
        problem = "locator and title must be valid Unicode (a lone surrogate is not)"
    elif not isinstance(hit.title, str):
        problem = "title must be a string"
    elif (
        isinstance(hit.score, bool)
        or not isinstance(hit.score, (int, float))
        or not _finite(hit.score)
    ):
        problem = "score must be a finite number"
    elif not isinstance(hit.kind, str) or _KIND.fullmatch(hit.kind) is None:
        problem = "kind must be an upper-case code ([A-Z][A-Z0-9_]*)"
    if problem is not None:
        raise BadHit(f"bad hit {hit.locator!r}: {problem}", locator=str(hit.locator)[:LOCATOR_MAX])
    return hit


__all__ = ["DEFAULT_KIND", "LOCATOR_MAX", "TITLE_MAX", "Hit", "RagHostHook", "check_hit", "short"]
