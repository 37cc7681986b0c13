"""Seed indexes: kind, property value and word postings.

Postings are compact ``array('I')`` lists of node ids, kept exact on write: a
changed property leaves its old postings at once, and a recycled node leaves
all of its postings (readers still check the recycled flag, cheaply, as a
guard).

Only *short* scalar values get a property-value posting (numbers, booleans,
strings up to ``SHORT_VALUE`` characters, and the elements of lists of those):
long text is found through the word index and then checked, which keeps the
index small on sessions full of prose.

Every posting is keyed by a *term*: bytes that name it (``k`` + kind, ``l`` +
label, ``p`` + key NUL type value, and the text terms of
:mod:`memnet.graph.words`: ``w`` + word NUL level, ``s`` + stem NUL level,
``n`` + name key). Bytes keys cost less memory
than tuples, and they are what a cabinet stores, so a hydrate can hand the
stored postings over as they are: a posting may be held as the raw bytes of its
ids (little-endian u32) until it is first read or written. A posting read as
an array is kept in ascending id order, so a reader may bisect it.
"""

from __future__ import annotations

import bisect
import sys
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from zlib import crc32

from ..errors import MemNetError
from ..values import Value
from .words import text_terms

SHORT_VALUE = 32
SET_CACHE_IDS = 1 << 21  # ids kept in the sets of recently used filter postings
SET_CACHE_MIN = 64  # shorter postings are not worth a cached set


def value_key(v: Value) -> tuple[str, object] | None:
    """The posting key of one scalar, or None when it is not indexed.

    The type tag keeps ``1``, ``1.0``, ``True`` and ``'1'`` apart, as equality
    in the query language does.
    """
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, float):
        return ("f", v)
    if isinstance(v, str) and len(v) <= SHORT_VALUE:
        return ("s", v)
    return None


def prop_keys(props: Mapping[str, Value] | None) -> set[tuple[str, str, object]]:
    """The (key, type, value) postings a property map belongs to."""
    out: set[tuple[str, str, object]] = set()
    if not props:
        return out
    for k, v in props.items():
        items: Iterable[Value] = v if isinstance(v, tuple) else (v,)
        for x in items:
            vk = value_key(x)
            if vk is not None:
                out.add((k, vk[0], vk[1]))
    return out


_LITTLE = sys.byteorder == "little"
IN_ARRAYS = b""  # in a loaded index's term table: the posting is an array kept aside

# The term table is cut into SHARDS dicts by the CRC-32 of the term without its
# last byte. The levels of one word (``w`` + word NUL level) then share a shard,
# so a query word's dozens of lookups touch one small dict; and a cabinet
# stores its postings in buckets by the same function (``records.bucket_of``),
# bucket by bucket, so a hydrate hands each bucket to its shard and merges a
# few maps of one shard while they are in cache, instead of filling one dict
# of millions of terms (on a million nodes that dict cost two seconds, most of
# it cache misses while it grew).
SHARDS = 4096
_SHARD_MASK = SHARDS - 1
_NO_TERMS: dict[bytes, bytes] = {}  # the shard of a term that no shard holds


def shard_of(term: bytes) -> int:
    """The shard of a term (and the cabinet bucket it is stored in). Index
    spells this out on its hot paths (a call per term lookup is measurable);
    tests/test_store_api.py loads maps placed by this function and reads
    every term back through those paths."""
    return crc32(term[:-1]) & _SHARD_MASK


def kind_term(kind: str) -> bytes:
    return ("k" + kind).encode()


def label_term(label: str) -> bytes:
    return ("l" + label).encode()


def prop_term(key: str, tag: str, value: object) -> bytes:
    """The term of ``key = value`` (``tag`` from :func:`value_key`); floats by
    repr, with -0.0 and 0.0 one term as they are one value."""
    if tag == "f":
        v = repr(value + 0.0)  # type: ignore[operator]
    elif tag == "b":
        v = "1" if value else "0"
    else:
        v = str(value)
    return f"p{key}\x00{tag}{v}".encode()


def le_array(raw: bytes, typecode: str = "I") -> array[int]:
    """An array from its stored little-endian bytes (postings, edge columns)."""
    a = array(typecode)
    a.frombytes(raw)
    if not _LITTLE:
        a.byteswap()
    return a


def le_bytes(a: array[int]) -> bytes:
    """The little-endian bytes an array is stored as."""
    if _LITTLE:
        return a.tobytes()
    b = array(a.typecode, a)
    b.byteswap()
    return b.tobytes()


def _remove(posting: array[int], nid: int) -> None:
    try:
        posting.remove(nid)
    except ValueError:  # pragma: no cover - postings are kept exact
        pass


def _internal(message: str) -> Exception:
    return MemNetError(message, code="internal")


class Index:
    """Postings from observables (terms) to node ids."""

    def __init__(self) -> None:
        # the term table: shard -> {term: posting}; a shard is made when its
        # first term comes and dropped with its last (a small session holds few)
        self.shards: dict[int, dict[bytes, array[int] | bytes]] = {}
        self.limit = 0  # loaded postings name no node above this (0: no check)
        self._damaged: Callable[[str], Exception] = _internal
        # A loaded index keeps its postings in use as arrays here, and
        # IN_ARRAYS in their place in the term table: a dict that holds only
        # bytes is not tracked by the cyclic garbage collector, and one array
        # in a shard would make every collection walk that shard (and the
        # table holds millions of terms). None: not loaded, arrays in the table.
        self._arrays: dict[bytes, array[int]] | None = None
        # sets of the postings recently used as filters, kept exact on write
        self._sets: OrderedDict[bytes, set[int]] = OrderedDict()

    # -- terms ---------------------------------------------------------------
    @staticmethod
    def terms(
        kind: str,
        labels: tuple[str, ...],
        props: Mapping[str, Value] | None,
    ) -> set[bytes]:
        """Every posting one node belongs to."""
        # The hot path of bulk commits: one pass over the props, few helper
        # calls. Must agree with prop_keys().
        out = {("k" + kind).encode()}
        for lab in labels:
            out.add(("l" + lab).encode())
        if not props:
            return out
        for k, v in props.items():
            t = type(v)
            if t is str:
                if len(v) <= SHORT_VALUE:  # type: ignore[arg-type]
                    out.add(f"p{k}\x00s{v}".encode())
            elif t is tuple:
                for pk in prop_keys({k: v}):
                    out.add(prop_term(*pk))
            else:
                vk = value_key(v)
                if vk is not None:
                    out.add(prop_term(k, vk[0], vk[1]))
        text_terms(props, out)
        return out

    # -- the term table ------------------------------------------------------
    def shard(self, group: bytes) -> Mapping[bytes, array[int] | bytes]:
        """The shard of the terms that are ``group`` and one more byte (the
        levels of one word or stem; read only)."""
        return self.shards.get(crc32(group) & _SHARD_MASK, _NO_TERMS)

    def has(self, term: bytes) -> bool:
        """Whether some node has the term."""
        return term in self.shards.get(crc32(term[:-1]) & _SHARD_MASK, _NO_TERMS)

    def term_count(self) -> int:
        """How many terms have postings."""
        return sum(map(len, self.shards.values()))

    # -- write ---------------------------------------------------------------
    def _posting(self, term: bytes) -> array[int] | None:
        """The posting of a term as an array (turning stored bytes into one)."""
        p = self.shards.get(crc32(term[:-1]) & _SHARD_MASK, _NO_TERMS).get(term)
        if p is None or type(p) is array:
            return p
        if p is IN_ARRAYS and self._arrays is not None:
            a = self._arrays.get(term)
            if a is not None:
                return a  # (else an empty stored posting: damage)
        if type(p) is not bytes or not p or len(p) & 3:
            raise self._damaged(f"a stored index posting for {term!r} is malformed")
        a = le_array(p)
        if self.limit and a and a[-1] > self.limit:  # ascending: the last id is the largest
            raise self._damaged(
                f"a stored index posting names node {a[-1]}, past the last node {self.limit}"
            )
        self._put(term, a)
        return a

    def _put(self, term: bytes, a: array[int]) -> None:
        i = crc32(term[:-1]) & _SHARD_MASK
        sh = self.shards.get(i)
        if sh is None:
            sh = self.shards[i] = {}
        if self._arrays is None:
            sh[term] = a
        else:
            self._arrays[term] = a
            sh[term] = IN_ARRAYS

    def _add(self, term: bytes, nid: int) -> None:
        p = self._posting(term)
        if p is None:
            self._put(term, p := array("I"))
        if p and nid < p[-1]:
            bisect.insort(p, nid)  # kept ascending (new ids come last anyway)
        else:
            p.append(nid)
        cached = self._sets.get(term)
        if cached is not None:
            cached.add(nid)

    def add_node(
        self, nid: int, kind: str, labels: tuple[str, ...], props: Mapping[str, Value] | None
    ) -> set[bytes]:
        """File a new node under its terms; returns them."""
        terms = self.terms(kind, labels, props)
        for t in terms:
            self._add(t, nid)
        return terms

    def add_nodes(
        self,
        items: Iterable[tuple[int, str, tuple[str, ...], Mapping[str, Value] | None]],
        keep: Callable[[int, set[bytes]], None] | None = None,
    ) -> None:
        """Put new nodes (ascending ids, each past every id already indexed)
        in their postings: the ids of one term are gathered first and each
        touched posting is extended once. ``keep(nid, terms)``, when given,
        is told each node's terms."""
        by_term: dict[bytes, list[int]] = {}
        terms = self.terms
        for nid, kind, labels, props in items:
            node_terms = terms(kind, labels, props)
            if keep is not None:
                keep(nid, node_terms)
            for t in node_terms:
                got = by_term.get(t)
                if got is None:
                    by_term[t] = [nid]
                else:
                    got.append(nid)
        sets, shards, arrays = self._sets, self.shards, self._arrays
        for t, nids in by_term.items():
            i = crc32(t[:-1]) & _SHARD_MASK  # (_posting and _put, the shard found once)
            sh = shards.get(i)
            if sh is None:
                sh = shards[i] = {}
            p = sh.get(t)
            if p is None:
                if arrays is None:
                    sh[t] = array("I", nids)
                else:  # beside a loaded table, as _add does
                    arrays[t] = array("I", nids)
                    sh[t] = IN_ARRAYS
                continue  # (no cached set: the posting is new)
            a = p if type(p) is array else self._posting(t)  # (stored bytes, or kept aside)
            if a is None:  # pragma: no cover - _posting found what sh.get found
                continue
            if not a or nids[0] > a[-1]:
                a.extend(nids)
            else:  # pragma: no cover - new ids come last
                for nid in nids:
                    bisect.insort(a, nid)
            cached = sets.get(t)
            if cached is not None:
                cached.update(nids)

    def change_labels(self, nid: int, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        for lab in set(old) - set(new):
            self._drop(label_term(lab), {nid})
        for lab in set(new) - set(old):
            self._add(label_term(lab), nid)

    def change_props(
        self, nid: int, old: Mapping[str, Value] | None, new: Mapping[str, Value] | None
    ) -> None:
        ot, nt = self.terms("", (), old), self.terms("", (), new)
        for t in ot - nt:
            self._drop(t, {nid})
        for t in nt - ot:
            self._add(t, nid)

    def _drop(self, term: bytes, nids: set[int]) -> None:
        p = self._posting(term)
        if p is None:  # pragma: no cover - postings are kept exact
            return
        if len(nids) <= 4:
            for nid in nids:
                _remove(p, nid)
        else:
            p = array("I", [x for x in p if x not in nids])
        if p:
            self._put(term, p)
            cached = self._sets.get(term)
            if cached is not None:
                cached.difference_update(nids)
        else:
            i = crc32(term[:-1]) & _SHARD_MASK
            sh = self.shards[i]
            del sh[term]  # no empty postings left behind
            if not sh:
                del self.shards[i]
            if self._arrays is not None:
                self._arrays.pop(term, None)
            self._sets.pop(term, None)

    def add_id(self, term: bytes, nid: int) -> None:
        """Put one node id in one posting (a stored delta being replayed)."""
        self._add(term, nid)

    def drop_ids(self, term: bytes, nids: set[int]) -> None:
        """Take node ids out of one posting (a stored delta being replayed)."""
        self._drop(term, nids)

    def remove_nodes(
        self, items: Iterable[tuple[int, str, tuple[str, ...], Mapping[str, Value] | None]]
    ) -> None:
        """Take recycled nodes out of their postings, filtering each touched
        posting once."""
        drop: dict[bytes, set[int]] = {}
        for nid, kind, labels, props in items:
            for t in self.terms(kind, labels, props):
                drop.setdefault(t, set()).add(nid)
        for t, nids in drop.items():
            self._drop(t, nids)

    # -- stored form -------------------------------------------------------------
    def postings(self) -> Iterator[tuple[bytes, array[int]]]:
        """Every (term, posting) pair (postings as arrays, in no set order)."""
        for t in [t for sh in list(self.shards.values()) for t in sh]:
            p = self._posting(t)
            if p:
                yield t, p

    def raw_postings(self) -> list[tuple[bytes, array[int] | bytes]]:
        """Every (term, posting) pair as held, without turning the stored bytes
        of a posting (little-endian ids, ascending) into an array."""
        arrays = self._arrays or {}
        return [
            (t, arrays.get(t, p) if p is IN_ARRAYS else p)
            for sh in self.shards.values()
            for t, p in sh.items()
        ]

    def load(
        self,
        maps: Iterable[tuple[int, dict[bytes, bytes]]],
        limit: int,
        damaged: Callable[[str], Exception] = _internal,
    ) -> None:
        """Fill an empty index from stored ``(shard, {term: id bytes})`` maps.
        Every term of a map is in that shard (:func:`shard_of`; the storage's
        verify checks it), and the maps of one term come in ascending id-range
        order (a term found again has its ids appended); the maps of one shard
        best come one after another, so its merging stays in cache. The maps
        become the index's. The postings stay bytes until first used; one
        found malformed then is reported by ``damaged(message)`` (the
        storage's own error)."""
        shards = self.shards
        self.limit = limit
        self._damaged = damaged
        self._arrays = {}
        for i, m in maps:
            sh = shards.get(i)
            if sh is None:
                shards[i] = m  # type: ignore[assignment]  # it holds only bytes
                continue
            if not sh.keys().isdisjoint(m):
                for t in m.keys() & sh.keys():
                    sh[t] = sh[t] + m.pop(t)  # type: ignore[operator]
            sh.update(m)

    # -- read ----------------------------------------------------------------
    def kind(self, kind: str) -> array[int]:
        return self._posting(kind_term(kind)) or array("I")

    def label(self, label: str) -> array[int]:
        return self._posting(label_term(label)) or array("I")

    def word_ids(self, word: str) -> array[int]:
        """The ascending ids of the nodes holding ``word`` exactly (at any
        impact level)."""
        from .words import present_terms

        parts = [self._posting(t) for _lv, t in present_terms(self.shard, word)[0]]
        if len(parts) == 1:
            return array("I", parts[0])  # type: ignore[arg-type]
        return (
            array("I", sorted(set().union(*(p for p in parts if p is not None))))
            if parts
            else array("I")
        )

    def posting(self, term: bytes) -> array[int] | None:
        """The posting of a term (ascending ids), or None when no node has it."""
        return self._posting(term)

    def posting_size(self, term: bytes) -> int:
        """How many ids the posting of a term holds, without reading a stored
        posting into an array (0 when no node has the term)."""
        p = self.shards.get(crc32(term[:-1]) & _SHARD_MASK, _NO_TERMS).get(term)
        if p is None:
            return 0
        if p is IN_ARRAYS and self._arrays is not None:
            a = self._arrays.get(term)
            if a is not None:
                return len(a)
        return len(p) if type(p) is array else len(p) >> 2  # stored: four bytes an id

    def id_set(self, term: bytes) -> set[int] | frozenset[int]:
        """The ids of a posting as a set, for membership tests. Sets of longer
        postings are kept (the last few used) and follow every write."""
        cached = self._sets.get(term)
        if cached is not None:
            self._sets.move_to_end(term)
            return cached
        p = self._posting(term)
        if not p:
            return frozenset()
        out = set(p)
        if SET_CACHE_MIN <= len(p) <= SET_CACHE_IDS:
            self._sets[term] = out
            total = sum(map(len, self._sets.values()))
            while total > SET_CACHE_IDS:
                total -= len(self._sets.popitem(last=False)[1])
        return out

    def prop(self, key: str, v: Value) -> array[int] | None:
        """Posting for ``key = v``, or None when ``v`` is not indexed."""
        vk = value_key(v)
        if vk is None:
            return None
        return self._posting(prop_term(key, vk[0], vk[1])) or array("I")


__all__ = [
    "SHARDS",
    "SHORT_VALUE",
    "Index",
    "kind_term",
    "label_term",
    "le_array",
    "le_bytes",
    "prop_keys",
    "prop_term",
    "shard_of",
    "value_key",
]
