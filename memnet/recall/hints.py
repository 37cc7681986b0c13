"""Hints an agent can run as given: a q that seeds one node.

A receipt names nodes just past the cut (the periphery). A handle is never a
q (SPEC §3), so each such node comes with a q in codebook tokens that seeds
it: its nickname when it has one; else its kind and one ``key:value`` of a
name-like property (``TURN id:'D1:5'``, ``MOD path:shop/pricing.py``), then
of another short scalar, that no other live node holds; else a pair of them
that no other live node of that kind holds; else its kind, its labels and
every property it has (in the MATCH form when one of them is a list, which the codebook
cannot write). Uniqueness is read from posting sizes, so a hint costs a few
index lookups. MN-VER checks that recalling the q seeds the node.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any, overload

from ..gql.ast import SeedQuery
from ..gql.emit import codebook_value, format_query
from ..graph.index import SHORT_VALUE, prop_term, value_key
from ..graph.store import Store
from ..values import Value
from .relevance import has

#: name-like keys, in the order a hint tries them
HINT_KEYS = ("name", "title", "lemma", "path", "rid", "id", "locator", "alias")
#: a pair held by more nodes than this is not looked at for a pair hint
FEW = 16


def seed_q(store: Store, nid: int) -> str:
    """A q whose Recall seeds node ``nid`` (codebook tokens; the MATCH form
    only for a node told apart by nothing but a list value)."""
    nick = store.node_nick(nid)
    if nick is not None:
        return f"#{nick}"
    kind = store.node_kind(nid)
    props = store.node_props(nid)
    idx = store.index
    first = [k for k in HINT_KEYS if k in props]
    pairs: list[tuple[str, Value, bytes]] = []
    for k in (*first, *sorted(k for k in props if k not in first)):
        v = props[k]
        if (
            v is None
            or isinstance(v, tuple)
            or (isinstance(v, str) and not 0 < len(v) <= SHORT_VALUE)
        ):
            continue
        vk = value_key(v)
        if vk is None:
            continue
        term = prop_term(k, vk[0], vk[1])
        if idx.posting_size(term) == 1 and not kind.startswith(("MATCH", "match")):
            return f"{kind} {k}:{codebook_value(v)}"  # no other node holds it
        pairs.append((k, v, term))
    for a, b in combinations(pairs[:6], 2):
        if _only(store, kind, nid, a[2], b[2]):
            return format_query(
                SeedQuery(kind=kind, props=((a[0], a[1]), (b[0], b[1])), form="codebook")
            )
    # every property (a settled task's status left out: it passes no status
    # filter but status:settled); a list is said only by the MATCH form
    every = tuple(
        (k, v)
        for k, v in sorted(props.items())
        if not (k == "status" and props.get("settled") is True)
    )
    form = "match" if any(isinstance(v, tuple) for _k, v in every) else "codebook"
    return format_query(
        SeedQuery(kind=kind, labels=store.extra_labels(nid), props=every, form=form)
    )


def _only(store: Store, kind: str, nid: int, a: bytes, b: bytes) -> bool:
    """Whether ``nid`` is the only live node of ``kind`` under both terms
    (each held by at most ``FEW`` nodes)."""
    idx = store.index
    if idx.posting_size(a) > FEW or idx.posting_size(b) > FEW:
        return False
    both = set(idx.posting(a) or ()) & set(idx.posting(b) or ())
    kind_ids = idx.kind(kind)
    return [n for n in both if not store.node_recycled(n) and has(kind_ids, n)] == [nid]


class Hints(Sequence[str]):
    """The qs of a receipt's periphery, each worked out when first read (an
    agent reads the first on the receipt line; most receipts are never asked
    for the rest). Reads the session as it is then; pickles, compares and
    hashes as the tuple of its qs."""

    __slots__ = ("_got", "_nids", "_store")

    def __init__(self, store: Store, nids: Sequence[int]) -> None:
        self._store: Store | None = store
        self._nids = tuple(nids)
        self._got: list[str | None] = [None] * len(self._nids)

    def _q(self, i: int) -> str:
        got = self._got[i]
        if got is None:
            assert self._store is not None
            got = self._got[i] = seed_q(self._store, self._nids[i])
            if all(g is not None for g in self._got):
                self._store = None  # every q is known: the store is not kept
        return got

    def __len__(self) -> int:
        return len(self._nids)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...

    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            return tuple(self._q(j) for j in range(len(self._nids))[i])
        return self._q(range(len(self._nids))[i])

    def __iter__(self) -> Iterator[str]:
        return (self._q(i) for i in range(len(self._nids)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Hints, tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))


__all__ = ["FEW", "HINT_KEYS", "Hints", "seed_q"]
