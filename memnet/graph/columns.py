"""The store's column types, and the read-only view of its columns.

The lazy columns hold entries as a hydrate read them (bytes) until first
read. :class:`StoreView` is what code outside the graph reads many elements
through on a hot path (a walk, a Shape, a seed): the columns, bound once,
typed read-only; every write goes through a :class:`~memnet.graph.store.Store`
method.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import MemNetError
from ..values import Value
from .index import le_array, le_bytes

T = TypeVar("T")


def _no_decoder(raw: bytes) -> dict[str, Value] | None:
    raise MemNetError(
        "a stored property map was read by a store that no storage loaded", code="internal"
    )


class _Stored(list[Any]):
    """A column whose entries a hydrate leaves as the bytes they were stored
    as: the first read of an entry decodes it (``_decode``) and keeps the
    result, so opening a large session does not build a million objects
    nobody reads. Iterating the list gives the entries as held."""

    __slots__ = ()
    _decode: Any = None

    def __getitem__(self, i: Any) -> Any:
        v = list.__getitem__(self, i)
        if v.__class__ is bytes:
            v = self._decode(v)
            list.__setitem__(self, i, v)
        return v


class PropsList(_Stored):
    """The nodes' property maps, by id (stored bytes until first read, decoded
    by the function the storage handed :meth:`Store.load`). :meth:`raw` gives
    an entry as stored, without decoding it."""

    _decode: Callable[[bytes], dict[str, Value] | None] = staticmethod(_no_decoder)

    def raw(self, i: int) -> dict[str, Value] | bytes | None:
        return list.__getitem__(self, i)  # type: ignore[no-any-return]

    def decoded(self, raw: dict[str, Value] | bytes | None) -> dict[str, Value] | None:
        """An entry :meth:`raw` gave, decoded (without keeping the result)."""
        return self._decode(raw) if isinstance(raw, bytes) else raw


class AdjList(_Stored):
    """The nodes' adjacency arrays, by id (little-endian u32 bytes until first
    read, see :func:`~memnet.graph.index.le_array`). Bytes cost less memory
    than an array and, unlike arrays, are not tracked by the cyclic garbage
    collector, so a million loaded nodes do not make every collection after a
    hydrate walk a million objects. :meth:`raw` gives an entry's stored bytes
    without converting it."""

    __slots__ = ()
    _decode = staticmethod(le_array)

    def raw(self, i: int) -> bytes:
        v = list.__getitem__(self, i)
        return v if v.__class__ is bytes else le_bytes(v)


class CodedColumn(Generic[T]):
    """A column of values drawn from few distinct ones (edge types, label
    sets): each element holds a code (an ``array('H')``, widened to ``'I'``
    when a 65,537th value arrives) into :attr:`names`. Two bytes an element
    instead of an eight-byte reference; reading an element gives the value
    (the same object for equal values). Hot loops compare :attr:`codes`
    against :meth:`code_of` instead."""

    __slots__ = ("codes", "names", "_code")

    def __init__(self, first: T) -> None:
        self.names: list[T] = [first]
        self._code: dict[T, int] = {first: 0}
        self.codes: array[int] = array("H", [0])

    def code(self, v: T) -> int:
        """The code of ``v``, given one if it has none yet."""
        c = self._code.get(v)
        if c is None:
            c = len(self.names)
            if c > 0xFFFF and self.codes.typecode == "H":
                self.codes = array("I", self.codes)
            self._code[v] = c
            self.names.append(v)
        return c

    def code_of(self, v: T) -> int:
        """The code of ``v``; -1 when it has none."""
        return self._code.get(v, -1)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: int) -> T:
        return self.names[self.codes[i]]

    def __setitem__(self, i: int, v: T) -> None:
        self.codes[i] = self.code(v)

    def __iter__(self) -> Iterator[T]:
        return map(self.names.__getitem__, self.codes)

    def take(self, lo: int, hi: int) -> list[T]:
        """Elements ``lo`` to ``hi - 1``."""
        names = self.names
        return [names[c] for c in self.codes[lo:hi]]

    def append(self, v: T) -> None:
        c = self.code(v)  # first: it may widen the codes (a new array)
        self.codes.append(c)

    def extend(self, values: Iterable[T]) -> None:
        vals = values if isinstance(values, (list, tuple)) else list(values)
        known = self._code
        for v in dict.fromkeys(vals):  # new values coded in order of first appearance
            if v not in known:
                self.code(v)
        self.codes.extend(map(known.__getitem__, vals))


@dataclass(frozen=True, slots=True)
class StoreView:
    """The store's columns by element id, read-only (:meth:`Store.view`).

    Index 0 of every sequence is unused. ``node_recycled`` and
    ``edge_recycled`` are flags (non-zero: recycled); ``adjacency`` gives a
    node's entries ``edge << 1 | dir`` (dir 0: the node is the source) in
    observable order, live edges only; ``line_tokens`` the tokens of a node's
    line in an interior Shape (0: not known yet); ``hidden_edges`` the
    recycled edges per node. The view stays valid as the store grows.
    """

    kinds: CodedColumn[str]
    extra_labels: CodedColumn[tuple[str, ...]]
    prop_maps: PropsList
    keys: Sequence[str]
    adjacency: Sequence[array[int]]
    node_recycled: Sequence[int]
    line_tokens: Sequence[int]
    nicks: Mapping[int, str]
    nick_owners: Mapping[str, int]
    edge_types: CodedColumn[str]
    sources: Sequence[int]
    targets: Sequence[int]
    edge_props: Mapping[int, dict[str, Value]]
    edge_recycled: Sequence[int]
    hidden_edges: Mapping[int, int]


__all__ = ["AdjList", "CodedColumn", "PropsList", "StoreView"]
