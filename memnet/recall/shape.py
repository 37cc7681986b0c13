"""Shape and Receipt: the bounded answer of a Recall, as shaped GQL text.

A Shape's text is one leading ``//`` receipt line followed by an ``INSERT``
graph literal, one element per line: nodes in walk order, then edges in walk
order. Parsing the text gives back the Shape's graph (``Shape.insert``).

Views decide how much of each node is printed: ``interior`` prints every
property (very long strings and lists are excerpted and marked), ``shell``
prints the kind and the key properties only (title, name, path, status), or
the ``text`` of a node that has none of them (a LAW rule, say).

Token counts are exact. The text is built so that no pre-token of the BPE
tokenizer crosses a line break (every line ends in punctuation or a letter,
lines after the first never start with ``/``), so the count of the text is the
sum of the counts of its lines, and lines are counted once and remembered.
``tests/ver`` checks that sum against a count of the whole text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..gql.ast import EdgePattern, Insert, NodePattern, Value
from ..gql.emit import format_edge, format_node
from ..graph.store import Store, edge_handle, node_handle
from ..errors import MemNetError
from ..tokens import count_tokens

VIEWS = ("interior", "shell")
SHELL_KEYS = ("title", "name", "path", "status")
EXCERPT_OVER = {"interior": 480, "shell": 160}
EXCERPT_KEEP = {"interior": 400, "shell": 120}
EXCERPT_ITEMS = {"interior": 32, "shell": 8}   # items of a list value
ALARM_TOKENS = 8000


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a Recall did and what its Shape costs.

    Every field is also printed, in this order, on the Shape's first line.
    """

    session: str
    version: int
    q: str
    seed_mode: str
    seeds: tuple[str, ...]
    matched: int
    rows: int
    max_rows: int
    hops: int
    k: int
    clamped: int
    hidden: int
    laws: int
    laws_cut: int
    periphery: tuple[str, ...]
    view: str
    tokens: int
    tokenizer: str
    bytes: int
    alarm: bool
    holds_answer: bool
    etag: str
    read_first: str
    advice: tuple[str, ...] = ()
    census: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        d["periphery"] = list(self.periphery)
        d["advice"] = list(self.advice)
        d["census"] = {k: c for k, c in self.census}
        return d

    def line(self) -> str:
        """The receipt as one ``//`` comment line."""
        parts = [
            f"// shape session={self.session} v={self.version} q={json.dumps(self.q)}",
            f"mode={self.seed_mode} seeds={','.join(self.seeds) or '-'} matched={self.matched}",
            f"rows={self.rows}/{self.max_rows} hops={self.hops}/{self.k}",
            f"clamped={self.clamped} hidden={self.hidden} laws={self.laws}",
        ]
        if self.laws_cut:
            parts.append(f"laws_cut={self.laws_cut}")
        parts.append(f"periphery={','.join(self.periphery) or '-'} view={self.view}")
        parts.append(f"tokens={self.tokens} tokenizer={self.tokenizer} bytes={self.bytes}")
        parts.append(f"alarm={str(self.alarm).lower()} "
                     f"holds_answer={str(self.holds_answer).lower()} etag={self.etag}")
        if self.census:
            parts.append("census=" + ",".join(f"{k}:{c}" for k, c in self.census))
        parts.append(f"read_first={json.dumps(self.read_first, ensure_ascii=False)}")
        if self.advice:
            parts.append(f"advice={json.dumps(' | '.join(self.advice), ensure_ascii=False)}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Shape:
    """The bounded neighbourhood a Recall returns.

    ``text`` is what a harness pastes into a prompt; ``receipt`` describes it;
    ``nodes`` and ``edges`` are the emitted graph as syntax-tree patterns
    (handles as variables), equal to ``parse(text)``.
    """

    text: str
    receipt: Receipt
    nodes: tuple[NodePattern, ...] = ()
    edges: tuple[EdgePattern, ...] = ()
    seed_handles: tuple[str, ...] = field(default=(), repr=False)

    @property
    def insert(self) -> Insert:
        return Insert(self.nodes, self.edges)

    def __str__(self) -> str:
        return self.text


class LineCache:
    """Remembers formatted node lines and per-line token counts.

    A node line is reused while the node's key string (replaced on every
    change) and nickname are the same objects as when it was built; an edge
    line while its property dict is the same object (edge endpoints and types
    never change).
    """

    MAX = 200_000

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer
        self.nodes: dict[tuple[int, str], tuple[str, str | None, NodePattern, str]] = {}
        self.edges: dict[tuple[int, str], tuple[object, EdgePattern, str]] = {}
        self.tokens: dict[str, int] = {}

    def count(self, line: str) -> int:
        n = self.tokens.get(line)
        if n is None:
            if len(self.tokens) >= self.MAX:
                self.tokens.clear()
            n = self.tokens[line] = count_tokens(line, self.tokenizer)
        return n


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


def node_line(store: Store, nid: int, view: str, cache: LineCache) -> tuple[NodePattern, str]:
    key = store.key[nid]
    nick = store.nick.get(nid)
    hit = cache.nodes.get((nid, view))
    if hit is not None and hit[0] is key and hit[1] == nick:
        return hit[2], hit[3]
    pat = NodePattern(node_handle(nid), store.node_labels(nid),
                      view_props(store.props[nid], view), nick)
    text = format_node(pat.var, pat.labels, pat.props, pat.nick)
    if len(cache.nodes) >= LineCache.MAX:
        cache.nodes.clear()
    cache.nodes[(nid, view)] = (key, nick, pat, text)
    return pat, text


def edge_line(store: Store, eid: int, view: str, cache: LineCache) -> tuple[EdgePattern, str]:
    raw = store.eprops.get(eid)
    hit = cache.edges.get((eid, view))
    if hit is not None and hit[0] is raw:
        return hit[1], hit[2]
    props = view_props(raw, view) if view == "interior" else ()
    pat = EdgePattern(edge_handle(eid), store.etype[eid], node_handle(store.esrc[eid]),
                      node_handle(store.edst[eid]), props)
    text = format_edge(pat.var, pat.type, pat.src, pat.dst, pat.props)
    if len(cache.edges) >= LineCache.MAX:
        cache.edges.clear()
    cache.edges[(eid, view)] = (raw, pat, text)
    return pat, text


def build_body(store: Store, nodes: list[int], edges: list[int], view: str,
               cache: LineCache) -> tuple[tuple[NodePattern, ...], tuple[EdgePattern, ...], str, int]:
    """The INSERT literal, its patterns and its exact token count."""
    if not nodes:
        return (), (), "", 0
    npats: list[NodePattern] = []
    elines: list[str] = []
    for nid in nodes:
        pat, text = node_line(store, nid, view, cache)
        npats.append(pat)
        elines.append(text)
    epats: list[EdgePattern] = []
    for eid in edges:
        pat, text = edge_line(store, eid, view, cache)
        epats.append(pat)
        elines.append(text)
    lines = ["INSERT\n"]
    last = len(elines) - 1
    for i, t in enumerate(elines):
        lines.append(f"  {t},\n" if i < last else f"  {t}")
    tokens = sum(cache.count(x) for x in lines)
    return tuple(npats), tuple(epats), "".join(lines), tokens


def finish(receipt_fields: dict[str, Any], body: str, body_tokens: int,
           cache: LineCache) -> tuple[str, Receipt]:
    """Add the receipt line to ``body`` with an exact total token count.

    The receipt prints the token count and byte size of the whole text, itself
    included, so the line is rebuilt until the numbers it prints are the
    numbers it has (two rounds in practice).
    """
    etag = hashlib.blake2b(body.encode(), digest_size=8).hexdigest()
    base_advice = tuple(receipt_fields.pop("advice", ()))
    body_bytes = len(body.encode())
    tok, nbytes = body_tokens, body_bytes
    for _ in range(8):
        alarm = tok > ALARM_TOKENS
        advice = base_advice + ((ALARM_ADVICE,) if alarm else ())
        receipt = Receipt(**receipt_fields, etag=etag, tokens=tok, bytes=nbytes, alarm=alarm,
                          advice=advice)
        head = receipt.line() + ("\n" if body else "")
        new_tok = cache.count(head) + body_tokens
        new_bytes = len(head.encode()) + body_bytes
        if new_tok == tok and new_bytes == nbytes:
            return head + body, receipt
        tok, nbytes = new_tok, new_bytes
    raise MemNetError("receipt token count did not settle", code="internal")  # pragma: no cover


ALARM_ADVICE = "over 8k tokens: narrow q or recall with view=shell"


__all__ = ["ALARM_TOKENS", "LineCache", "Receipt", "SHELL_KEYS", "Shape", "VIEWS",
           "build_body", "finish", "view_props"]
