"""Canonical ordering of observables.

Everything MemNet emits is ordered by what a reader can observe - kind,
labels, properties, edge types - and never by handles, nicknames or creation
order. This module turns an element's observables into a string key whose
plain ``<`` comparison is that order.

The key of a node is ``KIND\\x1fLABEL&LABEL\\x1f{props}`` where the props are the
canonical GQL text of the property map with keys sorted, so two nodes that
print the same sort the same.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..gql.ast import Value
from ..gql.emit import format_value

SEP = "\x1f"


def props_text(props: Mapping[str, Value] | None) -> str:
    """Canonical text of a property map: keys sorted, GQL value syntax."""
    if not props:
        return ""
    return ", ".join(f"{k}: {format_value(props[k])}" for k in sorted(props))


def node_key(kind: str, labels: tuple[str, ...], props: Mapping[str, Value] | None) -> str:
    """The observable sort key of a node (nickname and handle excluded)."""
    return f"{kind}{SEP}{'&'.join(labels)}{SEP}{props_text(props)}"


__all__ = ["SEP", "node_key", "props_text"]
