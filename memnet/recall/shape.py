"""The Shape: the bounded answer of a Recall, as shaped GQL text.

A Shape's text is one leading ``//`` receipt line (:mod:`memnet.recall.receipt`)
followed by an ``INSERT`` graph literal, one element per line: seeds and rules
on lines of their own, every other node on the line of the edge that reached
it, then the edges between nodes already printed. Parsing the text gives back
the Shape's graph (``Shape.insert``). :func:`build_body` fills the body in the
walk's rank order from the lines of :mod:`memnet.recall.lines` and stops at
the rows or the tokens asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any

from ..gql.ast import EdgePattern, Insert, NodePattern
from ..gql.emit import format_value
from ..graph.store import Store
from ..tokens import count_tokens
from .lines import (
    LineCache,
    edge_line,
    edge_pattern_of,
    new_edge_entry,
    new_node_entry,
    node_pattern_of,
    node_tokens,
)
from .receipt import Receipt


class Shape:
    """The bounded neighbourhood a Recall returns.

    ``text`` is what a harness pastes into a prompt; ``receipt`` describes it;
    ``nodes`` and ``edges`` are the emitted graph as syntax-tree patterns
    (handles as variables), equal to ``parse(text)``. A delta answer
    (``receipt.answer`` ``delta`` or ``unchanged``) has none: its text is read
    with ``memnet.parse`` or ``memnet.apply_delta``.

    A Recall builds the text from lines the store already holds in printed
    form; ``nodes`` is built from the rows' property maps as they were at
    that Recall (maps are replaced, never changed, so a later Commit does not
    reach them) when first read. Frozen, compared and hashed like a record.
    """

    __slots__ = ("_edges", "_nodes", "receipt", "seed_handles", "text")
    __match_args__ = ("text", "receipt", "nodes", "edges", "seed_handles")

    text: str
    receipt: Receipt
    _nodes: tuple[NodePattern, ...] | Rows
    _edges: tuple[EdgePattern, ...] | Rows
    seed_handles: tuple[str, ...]

    def __init__(
        self,
        text: str,
        receipt: Receipt,
        nodes: tuple[NodePattern, ...] | Rows = (),
        edges: tuple[EdgePattern, ...] | Rows = (),
        seed_handles: tuple[str, ...] = (),
    ) -> None:
        _set = object.__setattr__
        _set(self, "text", text)
        _set(self, "receipt", receipt)
        _set(self, "_nodes", nodes)
        _set(self, "_edges", edges)
        _set(self, "seed_handles", seed_handles)

    def _built(self, slot: str) -> Any:
        got = getattr(self, slot)
        if isinstance(got, Rows):
            got = got.patterns()
            object.__setattr__(self, slot, got)
        return got

    @property
    def nodes(self) -> tuple[NodePattern, ...]:
        return self._built("_nodes")  # type: ignore[no-any-return]

    @property
    def edges(self) -> tuple[EdgePattern, ...]:
        return self._built("_edges")  # type: ignore[no-any-return]

    @property
    def insert(self) -> Insert:
        return Insert(self.nodes, self.edges)

    def _fields(self) -> tuple[Any, ...]:
        return (self.text, self.receipt, self.nodes, self.edges, self.seed_handles)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Shape:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        # the text says all the rest does (the receipt is not hashable: it
        # is filled in two steps)
        return hash((self.text, self.seed_handles))

    def __repr__(self) -> str:
        return (
            f"Shape(text={self.text!r}, receipt={self.receipt!r}, nodes={self.nodes!r}, "
            f"edges={self.edges!r})"
        )

    def __str__(self) -> str:
        return self.text

    def __getstate__(self) -> tuple[Any, ...]:
        return self._fields()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for n, v in zip(
            ("text", "receipt", "_nodes", "_edges", "seed_handles"), state, strict=True
        ):
            object.__setattr__(self, n, v)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Rows:
    """A Shape's node or edge patterns, built when first asked for from its
    entries of a :class:`LineCache` (``build`` is :func:`node_pattern_of` or
    :func:`edge_pattern_of`)."""

    __slots__ = ("build", "entries")

    def __init__(self, entries: list[list[Any]], build: Callable[[list[Any]], Any]) -> None:
        self.entries = entries
        self.build = build

    def patterns(self) -> tuple[Any, ...]:
        return tuple(map(self.build, self.entries))


def build_body(
    store: Store,
    items: list[tuple[int, int, int]],
    view: str,
    cache: LineCache,
    budget: int | None = None,
) -> tuple[Rows | tuple[()], Rows | tuple[()], str, int, int]:
    """The INSERT literal of a walk's rows (``WalkResult.items``, in order),
    its patterns (built when first read), its exact token count, and how many
    of ``items`` it holds. A root prints on a line of its own, a node the walk
    reached after the edge from its parent (``(na4)-[ea7:NEXT]->(na5:TURN
    {…})``: one line, two rows), an edge between two printed nodes on its own
    line. With ``budget``, it stops before the first line that would take it
    past that many tokens."""
    if not items:
        return (), (), "", 0, 0
    lines = ["INSERT\n"]
    tokens = cache.count("INSERT\n")
    cols = store.view()
    keys, nicks, nbucket = cols.keys, cols.nicks, cache.nodes[view]
    eprops, ebucket = cols.edge_props, cache.edges[view]
    ltok, interior = cols.line_tokens, view == "interior"
    fast = cache.pieces
    lead = cache.count(" ") + cache.count(" (")  # "  (" starting a node's line
    ends: dict[int, list[Any]] = {}  # the entries of the nodes printed so far
    nentries: list[list[Any]] = []
    eentries: list[list[Any]] = []
    counts: list[int] = []  # the tokens of each line taken
    e: list[Any] = []
    ee: list[Any] = []
    for nid, eid, parent in items:
        if nid:
            got = nbucket.get(nid)
            key, nick = keys[nid], nicks.get(nid)
            e = (
                got
                if got is not None and got[0] is key and got[1] == nick
                else new_node_entry(store, nid, view, nbucket, key, nick)
            )
            if e[4] < 0:  # the store keeps an interior line's count
                e[4] = (ltok[nid] if interior else 0) or node_tokens(store, nid, e[5], view, cache)
            ends[nid] = e
        if eid:
            egot = ebucket.get(eid)
            raw = eprops.get(eid)
            ee = (
                egot
                if egot is not None and egot[0] is raw
                else new_edge_entry(store, eid, view, ebucket, raw, ends)
            )
        if not nid:  # an edge between two nodes printed before
            line = ee[5] or edge_line(ee)
            n = ee[3] if ee[3] >= 0 else _edge_row_tokens(ee, eid, line, cache)
        elif not eid:  # a root: a seed or a rule
            line, n = e[5], e[4]
        else:  # reached from ``parent`` by edge ``eid``
            prefix, ptok = _prefix(ee, ee[1][2] == ends[parent][6], ends[parent], eid, cache)
            line = prefix + e[5][3:]
            n = ptok - lead + e[4] if fast else count_tokens(line, cache.tokenizer)
        if budget is not None and tokens + n > budget:
            break
        tokens += n
        lines.append(line)
        counts.append(n)
        if nid:
            nentries.append(e)
        if eid:
            eentries.append(ee)
    kept = len(counts)
    tokens, taken = _close(lines, counts, tokens, budget, cache)
    _drop(items[taken:kept], nentries, eentries)
    if not taken:
        return (), (), "", 0, 0
    return (
        Rows(nentries, node_pattern_of),
        Rows(eentries, edge_pattern_of),
        "".join(lines),
        tokens,
        taken,
    )


def _edge_row_tokens(ee: list[Any], eid: int, line: str, cache: LineCache) -> int:
    """The tokens of an edge's own line (between two nodes printed before),
    kept in its entry: counted from its parts when it has no properties."""
    f = ee[1]  # (var, type, src, dst, props)
    ee[3] = (
        cache.edge_count(cache.node_count(ee[7]) + cache.node_count(ee[8]), eid, f[1], False)
        if cache.pieces and not f[4]
        else count_tokens(line, cache.tokenizer)
    )
    n: int = ee[3]
    return n


def _drop(
    dropped: list[tuple[int, int, int]], nentries: list[list[Any]], eentries: list[list[Any]]
) -> None:
    """Take off the entries of the rows :func:`_close` dropped from the end."""
    for nid, eid, _p in dropped:
        if nid:
            nentries.pop()
        if eid:
            eentries.pop()


def _close(
    lines: list[str], counts: list[int], tokens: int, budget: int | None, cache: LineCache
) -> tuple[int, int]:
    """End the literal at its last line (no comma, no line break), dropping
    lines from the end while that still leaves it over ``budget``; the
    literal's tokens and the count of lines kept."""
    taken = len(counts)
    fast = cache.pieces
    while taken:
        last = lines[taken][:-2]
        run = _end_run(last) if fast else None
        if run is not None:  # only its last piece changes
            total = tokens - cache.count(run + ",\n") + cache.count(run)
        else:
            total = tokens - counts[-1] + cache.count(last)
        if budget is None or total <= budget:
            lines[taken] = last
            return total, taken
        tokens -= counts.pop()
        del lines[taken]
        taken -= 1
    return tokens, taken


def _end_run(line: str) -> str | None:
    """The last piece of ``line`` for the o200k pre-tokeniser, when it is
    the run of ASCII punctuation after an ASCII letter or digit (``'})`` of
    ``…title: 'Done'})``): the line with ``",\n"`` after it is the same
    pieces but that one, which becomes ``run + ",\n"``. None otherwise."""
    i = len(line)
    while i and line[i - 1] in _PUNCT:
        i -= 1
    if i == len(line) or not i or not line[i - 1].isascii() or not line[i - 1].isalnum():
        return None
    return line[i:]


_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _prefix(
    ee: list[Any], out: bool, parent: list[Any], eid: int, cache: LineCache
) -> tuple[str, int]:
    """The start of the line of a node reached by edge entry ``ee`` from the
    node of entry ``parent``: ``"  (parent)-[edge:TYPE]->("`` when the parent
    is the edge's source (``out``), ``"  (parent)<-[edge:TYPE]-("`` when it is
    its target, and its tokens (kept in the edge entry)."""
    slot = 9 if out else 11
    got = ee[slot]
    if got is not None:
        return got, ee[slot + 1]
    var, etype, src, dst, props = ee[1]
    body = " {" + ", ".join(f"{k}: {format_value(v)}" for k, v in props) + "}" if props else ""
    if out:
        text = f"  ({src})-[{var}:{etype}{body}]->("
    else:
        text = f"  ({dst})<-[{var}:{etype}{body}]-("
    if cache.pieces and not props:
        n = cache.prefix_count(cache.node_count(parent), eid, etype, out)
    else:
        n = cache.count(text)
    ee[slot], ee[slot + 1] = text, n
    return text, n


__all__ = ["Rows", "Shape", "build_body"]
