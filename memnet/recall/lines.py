"""The lines of a Shape: how a node or an edge is printed, and what it costs.

A Shape's body is built from lines the :class:`LineCache` keeps in printed
form with their exact token counts. Views decide how much of each node is
printed: ``interior`` prints every property (very long strings and lists are
excerpted and marked), ``shell`` prints the kind and the key properties only
(title, name, path, status, sid), or the ``text`` of a node that has none of
them (a LAW rule, say), and of an edge only its ``rank``.

No pre-token of the BPE tokenizer crosses a line break (every line ends in
punctuation or a letter, lines after the first never start with ``/``), so
the count of a text is the sum of the counts of its lines, and lines are
counted once and remembered. ``tests/ver`` checks that sum against a count of
the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..gql.ast import EdgePattern, NodePattern, Value
from ..gql.emit import format_value, node_text
from ..graph.handles import HANDLE_HEADS, HANDLE_TAILS
from ..graph.store import Store, edge_handle, node_handle
from ..tokens import count_tokens, piece_tokens
from ..values import SEP

VIEWS = ("interior", "shell")
SHELL_KEYS = ("title", "name", "path", "status", "sid")
SHELL_EDGE_KEYS = ("rank",)  # an edge's place among its siblings (Host Snap's HIT)
EXCERPT_OVER = {"interior": 480, "shell": 160}
EXCERPT_KEEP = {"interior": 400, "shell": 120}
EXCERPT_ITEMS = {"interior": 32, "shell": 8}  # items of a list value


class LineCache:
    """Remembers formatted node lines and per-line token counts.

    A node line is reused while the node's key string (replaced on every
    change) and nickname are the same objects as when it was built; an edge
    line while its property dict is the same object (edge endpoints and types
    never change).

    An edge line without properties is counted without the tokenizer's full
    pass: under o200k_base it splits into fixed pieces (the leading blank,
    ``" ("``, ``")-["``, ``":TYPE]->("`` and the closing punctuation) and the
    letter and digit runs of its three handles, each of which is a
    pre-token of its own, so its count is the sum of the remembered counts of
    those pieces (tests/ver/test_tokens.py checks this against the tokenizer).
    """

    MAX = 200_000

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer
        # per view: id -> entry (see _node_entry, new_edge_entry)
        self.nodes: dict[str, dict[int, list[Any]]] = {v: {} for v in VIEWS}
        self.edges: dict[str, dict[int, list[Any]]] = {v: {} for v in VIEWS}
        self.tokens: dict[str, int] = {}
        self.pieces = tokenizer == "o200k_base"
        # an edge line (type, last) or a line start (type, False, out) but
        # its handles
        self.fixed: dict[tuple[str, bool] | tuple[str, bool, bool], int] = {}
        # the two parts of a handle (see id_count), cut into runs once each:
        # heads by prefix and the id's high part, tails by its low part
        self.heads: dict[str, list[tuple[int, str, bool, int] | None]] = {
            "n": [None] * 1296,
            "e": [None] * 1296,
        }
        self.tails: list[tuple[int, str, bool, int] | None] = [None] * 1296

    def count(self, line: str) -> int:
        n = self.tokens.get(line)
        if n is None:
            if len(self.tokens) >= self.MAX:
                self.tokens.clear()
            n = self.tokens[line] = count_tokens(line, self.tokenizer)
        return n

    def piece(self, run: str) -> int:
        """Tokens of one letter or digit run of a handle (a piece of its
        own), remembered like :meth:`count`'s lines (written out twice: both
        misses are on every fresh Recall's path)."""
        n = self.tokens.get(run)
        if n is None:
            if len(self.tokens) >= self.MAX:
                self.tokens.clear()
            n = self.tokens[run] = piece_tokens(run, self.tokenizer)
        return n

    def edge_count(self, ends: int, eid: int, etype: str, last: bool) -> int:
        """Tokens of the body line of property-less edge ``eid`` whose two
        node handles count ``ends`` tokens (see :meth:`node_count`)."""
        fixed = self.fixed.get((etype, last))
        if fixed is None:
            c = self.count
            fixed = self.fixed[(etype, last)] = (
                c(" ") + c(" (") + c(")-[") + c(f":{etype}]->(") + c(")" if last else "),\n")
            )
        return fixed + ends + self.id_count("e", eid)

    def prefix_count(self, parent: int, eid: int, etype: str, out: bool) -> int:
        """Tokens of ``"  (parent)-[edge:TYPE]->("`` (``out``) or
        ``"  (parent)<-[edge:TYPE]-("`` for a property-less edge ``eid``,
        whose parent handle counts ``parent`` tokens: fixed pieces and the
        runs of the two handles, as :meth:`edge_count`."""
        fixed = self.fixed.get((etype, not out, out))
        if fixed is None:
            c = self.count
            fixed = self.fixed[(etype, not out, out)] = (
                c(" ")
                + c(" (")
                + (c(")-[") + c(f":{etype}]->(") if out else c(")<-[") + c(f":{etype}]-("))
            )
        return fixed + parent + self.id_count("e", eid)

    def node_count(self, entry: list[Any]) -> int:
        """Tokens of the handle of a node entry, kept in the entry."""
        n: int = entry[7]
        if n < 0:
            n = entry[7] = self.id_count("n", entry[8])
        return n

    def id_count(self, prefix: str, i: int) -> int:
        """Tokens of the handle of element ``i`` (``prefix`` n or e).

        A handle of an id from 1,296 to 36**4 is a head (the prefix, the
        length letter, the id's high base-36 digits: ``HANDLE_HEADS``) and a
        tail (its two low digits: ``HANDLE_TAILS``). Each head and
        tail is cut into runs once; only the runs where they meet are joined:
        two letter runs into one piece (looked up), two digit runs into one
        run cut every three digits (a token each). Other ids are cut whole."""
        if not 1296 <= i < 1679616:
            return self.run_count(node_handle(i) if prefix == "n" else edge_handle(i))
        hi, lo = divmod(i, 1296)
        head = self.heads[prefix][hi]
        if head is None:
            head = self.heads[prefix][hi] = self._cut(HANDLE_HEADS[prefix][hi], True)
        tail = self.tails[lo]
        if tail is None:
            tail = self.tails[lo] = self._cut(HANDLE_TAILS[lo], False)
        if head[2] is not tail[2]:
            return head[0] + head[3] + tail[3] + tail[0]
        if head[2]:
            return head[0] + digit_run_tokens(len(head[1]) + len(tail[1])) + tail[0]
        return head[0] + self.piece(head[1] + tail[1]) + tail[0]

    def _cut(self, text: str, head: bool) -> tuple[int, str, bool, int]:
        """``(tokens of the other runs, the run at the cut, whether it is
        digits, its tokens)`` of a head (the cut after it) or a tail (the
        cut before it; its leading digits whole, as a head's digits may
        join them)."""
        runs = _HANDLE_RUNS.findall(text)
        if head:
            edge, others = runs[-1], runs[:-1]
        else:
            edge, others = runs[0], runs[1:]
            while edge.isdigit() and others and others[0].isdigit():
                edge += others.pop(0)
        digits = edge.isdigit()
        return (
            sum(map(self.piece, others)),
            edge,
            digits,
            digit_run_tokens(len(edge)) if digits else self.piece(edge),
        )

    def run_count(self, handle: str) -> int:
        """Tokens of a handle: the sum over its letter and digit runs (each
        a piece of its own, counted as one)."""
        get = self.tokens.get
        n = 0
        for run in _HANDLE_RUNS.findall(handle):
            c = get(run)
            n += c if c is not None else self.piece(run)
        return n


_HANDLE_RUNS = re.compile(r"[a-z]+|[0-9]{1,3}")


def _excerpt(v: Value, view: str) -> Value:
    if isinstance(v, str):
        if len(v) > EXCERPT_OVER[view]:
            keep = EXCERPT_KEEP[view]
            return f"{v[:keep]}… [excerpt: {keep} of {len(v)} chars]"
        return v
    if isinstance(v, tuple):
        keep_items = EXCERPT_ITEMS[view]
        items = tuple(_excerpt(x, view) for x in v[:keep_items])
        if len(v) > keep_items:
            items += (f"… [excerpt: {keep_items} of {len(v)} items]",)
        return items  # type: ignore[return-value]
    return v


def view_props(props: Mapping[str, Value] | None, view: str) -> tuple[tuple[str, Value], ...]:
    if not props:
        return ()
    if view == "shell":
        keys = sorted(k for k in SHELL_KEYS if k in props)
        if not keys and isinstance(props.get("text"), str):
            keys = ["text"]  # a rule or note with no title: its text is its name
    else:
        keys = sorted(props)
    return tuple((k, _excerpt(props[k], view)) for k in keys)


def edge_view_props(props: Mapping[str, Value] | None, view: str) -> tuple[tuple[str, Value], ...]:
    """An edge's properties in ``view``: every one in ``interior``, only the
    ``SHELL_EDGE_KEYS`` (its rank) in ``shell``."""
    if not props:
        return ()
    if view == "shell":
        return tuple((k, props[k]) for k in SHELL_EDGE_KEYS if k in props)
    return view_props(props, view)


def _node_entry(store: Store, nid: int, view: str, cache: LineCache) -> list[Any]:
    """``[key, nick, pattern, text, tokens of the line, the line, handle,
    tokens of the handle, id]`` of a node, cached while the node's key string
    and nick are the same objects; the line is ``"  text,\n"``, the token
    counts filled in when first needed."""
    cols = store.view()
    key = cols.keys[nid]
    nick = cols.nicks.get(nid)
    bucket = cache.nodes[view]
    hit = bucket.get(nid)
    if hit is not None and hit[0] is key and hit[1] == nick:
        return hit
    return new_node_entry(store, nid, view, bucket, key, nick)


def new_node_entry(
    store: Store, nid: int, view: str, bucket: dict[int, list[Any]], key: str, nick: str | None
) -> list[Any]:
    """A node's entry, built and put in its view's ``bucket``. An interior
    line is the node's stored key in another order when no value is long
    enough to be excerpted (see :func:`_key_line`); its pattern is then left
    as what :func:`node_pattern_of` needs to build it."""
    cols = store.view()
    handle = node_handle(nid)
    text = _key_line(handle, key, nick) if view == "interior" else None
    pat: Any
    if text is None:
        pat = NodePattern(
            handle, store.node_labels(nid), view_props(cols.prop_maps[nid], view), nick
        )
        text = node_text(pat.var, pat.labels, pat.props, pat.nick)
    else:  # the labels are read from the key when the pattern is built
        maps = cols.prop_maps
        pat = (handle, maps, maps.raw(nid), nick)
    entry = [key, nick, pat, text, -1, f"  {text},\n", handle, -1, nid]
    if len(bucket) >= LineCache.MAX:
        bucket.clear()
    bucket[nid] = entry
    return entry


def _key_line(handle: str, key: str, nick: str | None) -> str | None:
    """The interior line of a node from its observable key (kind, extra
    labels and the canonical text of its properties, in the print order of a
    line), or None when a value may be excerpted: a string over
    ``EXCERPT_OVER`` characters needs a text that long, a list over
    ``EXCERPT_ITEMS`` items that many commas."""
    kind, labels, body = key.split(SEP, 2)
    if len(body) > _LINE_OVER or body.count(",") >= _LINE_ITEMS:
        return None
    head = f"{handle}:{kind}&{labels}" if labels else f"{handle}:{kind}"
    if nick is not None:
        head = f"{head} #{nick}"
    return f"({head} {{{body}}})" if body else f"({head})"


_LINE_OVER = EXCERPT_OVER["interior"]
_LINE_ITEMS = EXCERPT_ITEMS["interior"]


def node_pattern_of(entry: list[Any]) -> NodePattern:
    """The pattern of a node entry, built now if it was left for later."""
    pat = entry[2]
    if pat.__class__ is not NodePattern:
        handle, maps, raw, nick = pat
        kind, labels, _body = entry[0].split(SEP, 2)
        props = maps.decoded(raw)
        pat = entry[2] = NodePattern(
            handle,
            (kind, *labels.split("&")) if labels else (kind,),
            view_props(props, "interior"),
            nick,
        )
    return pat


def new_edge_entry(
    store: Store,
    eid: int,
    view: str,
    bucket: dict[int, list[Any]],
    raw: dict[str, Value] | None,
    ends: dict[int, list[Any]],
) -> list[Any]:
    """``[props, fields, text, tokens as a middle line, tokens as the last,
    the middle line, pattern, entry of the source, entry of the target, the
    line start from the source and its tokens, the same from the target]`` of
    an edge (the ends' node entries hold their handles' token counts), built
    and put in its view's ``bucket`` (``build_body`` keeps it while the
    edge's property dict is the same object); ``fields`` are the pattern's
    ``(var, type, src, dst, props)``, and the pattern (None until then) is
    built from them by :func:`edge_pattern_of`. ``ends`` holds the entries of the
    Shape's nodes, among them the edge's two ends."""
    cols = store.view()
    props = edge_view_props(raw, view)
    types = cols.edge_types
    var, etype = edge_handle(eid), types.names[types.codes[eid]]
    a, b = ends[cols.sources[eid]], ends[cols.targets[eid]]
    # the text and the line of its own are built when first needed
    # (edge_line): an edge the walk took prints only its line start
    entry = [raw, (var, etype, a[6], b[6], props), None, -1, -1, None, None, a, b, None, 0, None, 0]
    if len(bucket) >= LineCache.MAX:
        bucket.clear()
    bucket[eid] = entry
    return entry


def edge_line(ee: list[Any]) -> str:
    """The text of edge entry ``ee`` and its line of its own (kept in it)."""
    var, etype, src, dst, props = ee[1]
    if props:
        body = ", ".join(f"{k}: {format_value(v)}" for k, v in props)
        text = f"({src})-[{var}:{etype} {{{body}}}]->({dst})"
    else:
        text = f"({src})-[{var}:{etype}]->({dst})"
    ee[2], ee[5] = text, f"  {text},\n"
    return ee[5]  # type: ignore[no-any-return]


def edge_pattern_of(entry: list[Any]) -> EdgePattern:
    """The pattern of an edge entry, built when first asked for."""
    pat = entry[6]
    if pat is None:
        pat = entry[6] = EdgePattern(*entry[1])
    return pat  # type: ignore[no-any-return]


def node_tokens(store: Store, nid: int, line: str, view: str, cache: LineCache) -> int:
    """Tokens of a node's (not last) body line; an interior line's count is
    kept by the store (its line tokens), where commits and hydrates put it."""
    if view != "interior":
        return count_tokens(line, cache.tokenizer)
    n = store.view().line_tokens[nid]
    if not n:
        n = count_tokens(line, cache.tokenizer)
        if n < 65536:
            store.set_line_tokens(nid, n)
    return n


def prime_lines(store: Store, nids: Iterable[int], cache: LineCache) -> None:
    """Count the interior lines of ``nids`` now (after a commit), so a Recall
    that reaches them later counts nothing."""
    cols = store.view()
    ltok, nrec = cols.line_tokens, cols.node_recycled
    for nid in nids:
        if not ltok[nid] and not nrec[nid]:
            e = _node_entry(store, nid, "interior", cache)
            node_tokens(store, nid, f"  {e[3]},\n", "interior", cache)


def digit_run_tokens(digits: int) -> int:
    """Tokens of a run of ``digits`` digits: the pre-tokenisers cut it into
    runs of up to three, and every such run is one token of each tokenizer
    (tests/ver/test_tokens.py checks all 1,110 of them)."""
    return (digits + 2) // 3


__all__ = [
    "EXCERPT_ITEMS",
    "EXCERPT_KEEP",
    "EXCERPT_OVER",
    "LineCache",
    "SHELL_EDGE_KEYS",
    "SHELL_KEYS",
    "VIEWS",
    "digit_run_tokens",
    "edge_line",
    "edge_pattern_of",
    "edge_view_props",
    "new_edge_entry",
    "new_node_entry",
    "node_pattern_of",
    "node_tokens",
    "prime_lines",
    "view_props",
]
