"""Hints an agent can run as given: a q that seeds one node.

A receipt names nodes just past the cut (the periphery). A handle is never a
q (SPEC §3), so each such node comes with a q in codebook tokens that seeds
it: its nickname when it has one, else its kind and one ``key:value`` of a
name-like property (``TURN id:'D1:5'``, ``MOD path:shop/pricing.py``) that no
other live node of that kind shares, else a second such pair, else (the node
is not told apart by one or two name-like values) its kind and every short
scalar property it has. MN-VER checks that recalling the q seeds the node.
"""

from __future__ import annotations

from itertools import combinations

from ..gql.ast import SeedQuery
from ..gql.emit import format_query
from ..graph.index import SHORT_VALUE, prop_term, value_key
from ..graph.store import Store
from ..values import Value
from .relevance import has

#: name-like keys, in the order a hint tries them
HINT_KEYS = ("name", "title", "lemma", "path", "rid", "id", "locator", "alias")


def _pairs(store: Store, nid: int) -> list[tuple[str, Value]]:
    """The node's short scalar properties, name-like keys first."""
    props = store.node_props(nid)
    first = [k for k in HINT_KEYS if k in props]
    keys = first + sorted(k for k in props if k not in first)
    return [(k, v) for k in keys if (v := props[k]) is not None and not isinstance(v, tuple)
            and (not isinstance(v, str) or 0 < len(v) <= SHORT_VALUE)]


#: a pair held by more nodes than this is not looked at for a hint
FEW = 16


def _holders(store: Store, kind: str, pairs: tuple[tuple[str, Value], ...]) -> int:
    """How many live nodes of ``kind`` hold every pair, or 2 (not told
    apart) when the index does not hold a value or a pair is held by more
    than ``FEW`` nodes: a hint reads a few short postings, never a long one."""
    idx = store.index
    ids: set[int] | None = None
    for k, v in pairs:
        vk = value_key(v)
        if vk is None:
            return 2
        term = prop_term(k, vk[0], vk[1])
        if idx.posting_size(term) > FEW:
            return 2
        got = set(idx.posting(term) or ())
        ids = got if ids is None else ids & got
    if not ids:
        return 0 if ids is not None else 2
    if len(ids) == 1:
        return 1
    kind_ids = idx.kind(kind)
    return sum(1 for n in ids if not store.node_recycled(n) and has(kind_ids, n))


def seed_q(store: Store, nid: int) -> str:
    """A q in codebook tokens whose Recall seeds node ``nid``."""
    nick = store.node_nick(nid)
    if nick is not None:
        return f"#{nick}"
    kind = store.node_kind(nid)
    pairs = _pairs(store, nid)
    for size in (1, 2):
        for combo in combinations(pairs[:6], size):
            if _holders(store, kind, combo) == 1:
                return format_query(SeedQuery(kind=kind, props=combo, form="codebook"))
    return format_query(SeedQuery(kind=kind, props=tuple(pairs), form="codebook"))


__all__ = ["FEW", "HINT_KEYS", "seed_q"]
