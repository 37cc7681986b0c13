"""The Recall knobs: defaults and hard ceilings (SPEC §3).

A module of its own, with no imports, so that the faces can build their
argument parsers without loading the engine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """Defaults and hard ceilings of the Recall knobs (SPEC §3)."""

    k: int = 2
    max_rows: int = 50
    limit: int = 5
    fanout: int = 8
    k_max: int = 6
    max_rows_max: int = 500
    limit_max: int = 50
    fanout_max: int = 64
    max_tokens_min: int = 64
    max_tokens_max: int = 1_000_000


LIMITS = Limits()

__all__ = ["LIMITS", "Limits"]
