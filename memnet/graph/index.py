"""Seed indexes: kind, property value and word postings.

Postings are compact ``array('I')`` lists of node ids, kept exact on write: a
changed property leaves its old postings at once, and a recycled node leaves
all of its postings (readers still check the recycled flag, cheaply, as a
guard).

Only *short* scalar values get a property-value posting (numbers, booleans,
strings up to ``SHORT_VALUE`` characters, and the elements of lists of those):
long text is found through the word index and then checked, which keeps the
index small on sessions full of prose.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Mapping

from ..gql.ast import Value

SHORT_VALUE = 32
_WORD = re.compile(r"\w+")


def words_of_text(text: str) -> list[str]:
    """The index words of one string: case-folded runs of word characters."""
    return _WORD.findall(text.casefold())


def words_of_props(props: Mapping[str, Value] | None) -> set[str]:
    """Every index word found in a property map's string values."""
    out: set[str] = set()
    if not props:
        return out
    for v in props.values():
        if isinstance(v, str):
            out.update(_WORD.findall(v.casefold()))
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, str):
                    out.update(_WORD.findall(x.casefold()))
    return out


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


def _remove(posting: array, nid: int) -> None:
    try:
        posting.remove(nid)
    except ValueError:  # pragma: no cover - postings are kept exact
        pass


class Index:
    """Postings from observables to node ids."""

    def __init__(self) -> None:
        self.by_kind: dict[str, array] = {}
        self.by_label: dict[str, array] = {}
        self.by_prop: dict[tuple[str, str, object], array] = {}
        self.by_word: dict[str, array] = {}

    # -- write ---------------------------------------------------------------
    @staticmethod
    def _add(table: dict, key: object, nid: int) -> None:
        p = table.get(key)
        if p is None:
            table[key] = p = array("I")
        p.append(nid)

    def add_node(self, nid: int, kind: str, labels: tuple[str, ...],
                 props: Mapping[str, Value] | None) -> None:
        # The hot path of hydrate and bulk commits: one pass over the props,
        # no helper calls. Must agree with prop_keys() and words_of_props().
        add = self._add
        add(self.by_kind, kind, nid)
        for lab in labels:
            add(self.by_label, lab, nid)
        if not props:
            return
        by_prop, by_word = self.by_prop, self.by_word
        findall = _WORD.findall
        words: set[str] = set()
        for k, v in props.items():
            t = type(v)
            if t is str:
                if len(v) <= SHORT_VALUE:  # type: ignore[arg-type]
                    add(by_prop, (k, "s", v), nid)
                words.update(findall(v.casefold()))  # type: ignore[union-attr]
            elif t is tuple:
                for pk in prop_keys({k: v}):
                    add(by_prop, pk, nid)
                for x in v:  # type: ignore[union-attr]
                    if isinstance(x, str):
                        words.update(findall(x.casefold()))
            else:
                vk = value_key(v)
                if vk is not None:
                    add(by_prop, (k, vk[0], vk[1]), nid)
        for w in words:
            p = by_word.get(w)
            if p is None:
                by_word[w] = p = array("I")
            p.append(nid)

    def change_labels(self, nid: int, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        for lab in set(old) - set(new):
            _remove(self.by_label[lab], nid)
        for lab in set(new) - set(old):
            self._add(self.by_label, lab, nid)

    def change_props(self, nid: int, old: Mapping[str, Value] | None,
                     new: Mapping[str, Value] | None) -> None:
        ok, nk = prop_keys(old), prop_keys(new)
        for pk in ok - nk:
            _remove(self.by_prop[pk], nid)
        for pk in nk - ok:
            self._add(self.by_prop, pk, nid)
        ow, nw = words_of_props(old), words_of_props(new)
        for w in ow - nw:
            _remove(self.by_word[w], nid)
        for w in nw - ow:
            self._add(self.by_word, w, nid)

    def remove_nodes(self, items: Iterable[tuple[int, str, tuple[str, ...],
                                                 Mapping[str, Value] | None]]) -> None:
        """Take recycled nodes out of their postings, filtering each touched
        posting once."""
        drop: dict[tuple[int, object], set[int]] = {}
        for nid, kind, labels, props in items:
            drop.setdefault((0, kind), set()).add(nid)
            for lab in labels:
                drop.setdefault((1, lab), set()).add(nid)
            for pk in prop_keys(props):
                drop.setdefault((2, pk), set()).add(nid)
            for w in words_of_props(props):
                drop.setdefault((3, w), set()).add(nid)
        tables = (self.by_kind, self.by_label, self.by_prop, self.by_word)
        for (t, key), nids in drop.items():
            table: dict = tables[t]
            p = table.get(key)
            if p is None:  # pragma: no cover - postings are kept exact
                continue
            if len(nids) <= 4:
                for nid in nids:
                    _remove(p, nid)
            else:
                p = array("I", [x for x in p if x not in nids])
            if p:
                table[key] = p
            else:
                del table[key]  # no empty postings left behind

    # -- read ----------------------------------------------------------------
    def kind(self, kind: str) -> array:
        return self.by_kind.get(kind) or array("I")

    def label(self, label: str) -> array:
        return self.by_label.get(label) or array("I")

    def word(self, word: str) -> array:
        return self.by_word.get(word) or array("I")

    def prop(self, key: str, v: Value) -> array | None:
        """Posting for ``key = v``, or None when ``v`` is not indexed."""
        vk = value_key(v)
        if vk is None:
            return None
        return self.by_prop.get((key, vk[0], vk[1])) or array("I")

    def kinds(self) -> Iterator[str]:
        return iter(self.by_kind)


__all__ = ["Index", "SHORT_VALUE", "prop_keys", "value_key", "words_of_props",
           "words_of_text"]
