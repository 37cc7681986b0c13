"""Helpers the SysML tests share: an artefact graph read back by qualified names."""

from __future__ import annotations

from memnet.ingest.model import Artefacts


def links(art: Artefacts, type_: str) -> dict[tuple[str, str], dict[str, object]]:
    """``(src, dst)`` qualified names → properties of every link of one type."""
    cut = len(f"sysml:{art.root}/")
    return {(lk.src[cut:], lk.dst[cut:]): lk.props for lk in art.links.values() if lk.type == type_}


def element(art: Artefacts, qual: str) -> tuple[str, dict[str, object]]:
    """The kind and properties (without ``file`` and ``line``) of one element."""
    el = art.elements[f"sysml:{art.root}/{qual}"]
    return el.kind, {k: v for k, v in el.props.items() if k not in ("file", "line")}
