"""Shape and Receipt: the bounded answer of a Recall, as shaped GQL text.

A Shape's text is one leading ``//`` receipt line followed by an ``INSERT``
graph literal, one element per line: nodes in walk order, then edges in walk
order. Parsing the text gives back the Shape's graph (``Shape.insert``).

Views decide how much of each node is printed: ``interior`` prints every
property (very long strings and lists are excerpted and marked), ``shell``
prints the kind and the key properties only (title, name, path, status, sid),
or the ``text`` of a node that has none of them (a LAW rule, say), and of an
edge only its ``rank``.

Token counts are exact. The text is built so that no pre-token of the BPE
tokenizer crosses a line break (every line ends in punctuation or a letter,
lines after the first never start with ``/``), so the count of the text is the
sum of the counts of its lines, and lines are counted once and remembered.
``tests/ver`` checks that sum against a count of the whole text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..gql.ast import EdgePattern, Insert, NodePattern, Value
from ..gql.emit import format_value, node_text
from ..graph.handles import HANDLE_HEADS, HANDLE_TAILS
from ..graph.store import Store, edge_handle, node_handle
from ..record import FrozenInstanceError, as_dict, record, replace
from ..tokens import count_tokens, piece_tokens
from ..values import SEP

VIEWS = ("interior", "shell")
SHELL_KEYS = ("title", "name", "path", "status", "sid")
SHELL_EDGE_KEYS = ("rank",)  # an edge's place among its siblings (Host Snap's HIT)
EXCERPT_OVER = {"interior": 480, "shell": 160}
EXCERPT_KEEP = {"interior": 400, "shell": 120}
EXCERPT_ITEMS = {"interior": 32, "shell": 8}  # items of a list value
ALARM_TOKENS = 8000


@record
class Receipt:
    """What a Recall did and what its Shape costs.

    The Shape's first line prints the few fields an agent acts on
    (:meth:`line`); every field is here, and in ``to_dict()``. A Recall given
    ``since`` (``memnet/recall/delta.py``) fills the last fields: ``answer`` is
    ``delta`` or ``unchanged`` when the text is the difference from the Shape
    with etag ``since`` (``added``, ``changed`` and ``gone`` rows), and stays
    ``shape`` with ``why`` set when it could not be.

    ``periphery`` names a few nodes just past the cut, and ``periphery_q``
    for each a q that seeds it; ``body_tokens`` are the tokens of the text
    after the receipt line. ``note`` says how q was read when that may
    surprise (a capital word that names no kind was read as a keyword).
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
    periphery_q: Sequence[str] = ()
    note: str = ""
    max_tokens: int | None = None
    body_tokens: int = 0
    since: str | None = None
    answer: str = "shape"
    why: str = ""
    added: int = 0
    changed: int = 0
    gone: int = 0

    def to_dict(self) -> dict[str, Any]:
        if self.answer != "shape":
            return {k: getattr(self, k) for k in _DELTA_KEYS[self.answer]}
        d = as_dict(self)
        d["seeds"] = list(self.seeds)
        d["periphery"] = list(self.periphery)
        d["periphery_q"] = list(self.periphery_q)
        d["advice"] = list(self.advice)
        d["census"] = {k: c for k, c in self.census}
        for k in _SINCE_KEYS if self.since is None else _SINCE_KEYS[3:]:
            del d[k]
        return d

    def line(self) -> str:
        """The receipt as the one ``//`` comment line a Shape starts with."""
        if self.answer != "shape":
            return answer_line(
                self.answer,
                self.version,
                self.rows,
                self.max_rows,
                self.etag,
                self.since,
                (self.added, self.changed, self.gone),
            )
        cap = None if self.max_tokens is None else self.max_tokens - self.body_tokens
        return receipt_line(self, count_tokens, cap)


#: the tokens a Shape's receipt line may cost (SPEC §3); q is shortened, and
#: the periphery cue left out, to keep it there
LINE_TOKENS = 40
_NEW_NEWS = ("peak", "skip")  # seed modes whose read_first says something new


def receipt_line(r: Receipt, count: Callable[[str], int], cap: int | None = None) -> str:
    """The line an agent reads first (see :func:`receipt_parts`)."""
    return "".join(receipt_parts(r, count, cap))


def receipt_parts(r: Receipt, count: Callable[[str], int], cap: int | None = None) -> list[str]:
    """The parts of the receipt line: version, q as read, rows, whether the
    memory holds an answer, the etag, in at most ``LINE_TOKENS`` tokens (a
    long q is shown by its start); then, when they say something new, a note
    on how q was read and what read_first or the advice say; then, while the
    line stays within ``LINE_TOKENS``, a q that seeds the first node past the
    cut (``more``). With ``cap`` (what a token budget leaves the line), the
    census and then the note are cut short to keep within it.

    Each part after the first starts with a blank and a lower-case letter,
    so the pre-tokenisers cut at every joining blank: the line's tokens are
    the sum of its parts' (:func:`parts_tokens`)."""
    head = f"// shape v={r.version}"
    rows = f" rows={r.rows}/{r.max_rows} holds_answer={str(r.holds_answer).lower()}"
    etag = f" etag={r.etag}"
    etag_tok = count(" etag=") + _digit_run_tokens(len(r.etag))
    extra = []
    if r.since is not None:  # asked for a delta, answered whole: say why
        extra.append(f" since={r.since} why={_json(r.why)}")
    if r.census:
        extra.append(" census=" + ",".join(f"{k}:{c}" for k, c in r.census[:6]))
    news = [r.note] if r.note else []
    if r.seed_mode in _NEW_NEWS:
        news.append(r.read_first)
    news += r.advice
    if news:
        extra.append(f" note={_json('; '.join(news))}")
    q = r.q
    room = LINE_TOKENS - count(head) - count(rows) - etag_tok - 1  # the line break
    qpart = f" q={_json(q, True)}"
    qtok = count(qpart)
    if qtok > room and len(q) > 1:  # a long q, shown by its start
        cut, short = len(q), q
        while cut > 1 and qtok > room:
            cut = max(1, min(cut - 1, cut * 3 // 4))
            short = q[:cut].rsplit(" ", 1)[0] if " " in q[:cut] else q[:cut]
            qpart = f" q={_json(short + '...', True)}"
            qtok = count(qpart)
    if cap is not None:  # what is left for the optional parts, last ones dropped first
        left = cap - (LINE_TOKENS - room) - qtok
        kept = []
        for part in extra:
            n = count(part)
            if n <= left:
                kept.append(part)
                left -= n
        extra = kept
    parts = [head, qpart, rows, etag, *extra]
    left = room - qtok - sum(map(count, extra))
    if r.periphery_q and left >= _MORE_MIN:  # (no hint is worked out for less room)
        more = f" more={_json(r.periphery_q[0])}"
        if count(more) <= left:
            parts.append(more)
    return parts


#: the fewest tokens a ``more=`` cue takes (``more="#x"``)
_MORE_MIN = 5


def parts_tokens(parts: list[str], count: Callable[[str], int], nl: str) -> int:
    """Tokens of ``"".join(parts) + nl``: the sum of the parts' (the etag's
    digits counted as runs of three), the line break with the last part
    when it ends in punctuation (a closing quote and the break are one
    piece)."""
    n = 0
    for part in parts[:-1]:
        n += (
            count(part)
            if not part.startswith(" etag=")
            else count(" etag=") + _digit_run_tokens(len(part) - 6)
        )
    last = parts[-1]
    if last.startswith(" etag="):
        return n + count(" etag=") + _digit_run_tokens(len(last) - 6) + (count(nl) if nl else 0)
    return n + count(last + nl)


def _json(s: str, ascii: bool = False) -> str:
    """``json.dumps(s, ensure_ascii=ascii)``; printable ASCII text with no
    quote or backslash (most receipts) is only put in quotes."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    return json.dumps(s, ensure_ascii=ascii)


def answer_line(
    answer: str,
    version: int,
    rows: int,
    max_rows: int,
    etag: str,
    since: str | None = None,
    counts: tuple[int, int, int] = (0, 0, 0),
) -> str:
    """The short receipt line of a delta answer (``answer`` is ``delta`` or
    ``unchanged``): what the caller needs to follow the Shape it holds."""
    if answer == "unchanged":
        return f"// unchanged v={version} rows={rows}/{max_rows} etag={etag}"
    return (
        f"// delta v={version} rows={rows}/{max_rows} added={counts[0]} "
        f"changed={counts[1]} gone={counts[2]} since={since} etag={etag}"
    )


# the fields a Recall with ``since`` fills, and what the receipt of a delta
# answer holds (its line prints the same facts)
_SINCE_KEYS = ("since", "answer", "why", "added", "changed", "gone")
_DELTA_KEYS = {
    "unchanged": (
        "answer",
        "session",
        "version",
        "rows",
        "max_rows",
        "tokens",
        "tokenizer",
        "bytes",
        "etag",
    ),
    "delta": (
        "answer",
        "session",
        "version",
        "rows",
        "max_rows",
        "tokens",
        "tokenizer",
        "bytes",
        "etag",
        "since",
        "added",
        "changed",
        "gone",
    ),
}


def etag_of(body: str) -> str:
    """The etag of a Shape's body: twelve decimal digits of its hash (about
    40 bits), four tokens where sixteen hex digits cost eight to eleven."""
    h = int.from_bytes(hashlib.blake2b(body.encode(), digest_size=8).digest(), "big")
    return f"{h % 10**12:012d}"


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
        return hash(self._fields())

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
    entries of a :class:`LineCache` (``build`` is :func:`_pattern` or
    :func:`_epattern`)."""

    __slots__ = ("build", "entries")

    def __init__(self, entries: list[list[Any]], build: Callable[[list[Any]], Any]) -> None:
        self.entries = entries
        self.build = build

    def patterns(self) -> tuple[Any, ...]:
        return tuple(map(self.build, self.entries))


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
        # per view: id -> entry (see _node_entry, _new_edge_entry)
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
            return head[0] + _digit_run_tokens(len(head[1]) + len(tail[1])) + tail[0]
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
            _digit_run_tokens(len(edge)) if digits else self.piece(edge),
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
    return _new_node_entry(store, nid, view, bucket, key, nick)


def _new_node_entry(
    store: Store, nid: int, view: str, bucket: dict[int, list[Any]], key: str, nick: str | None
) -> list[Any]:
    """A node's entry, built and put in its view's ``bucket``. An interior
    line is the node's stored key in another order when no value is long
    enough to be excerpted (see :func:`_key_line`); its pattern is then left
    as what :func:`_pattern` needs to build it."""
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


def _pattern(entry: list[Any]) -> NodePattern:
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


def _new_edge_entry(
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
    built from them by :func:`_epattern`. ``ends`` holds the entries of the
    Shape's nodes, among them the edge's two ends."""
    cols = store.view()
    props = edge_view_props(raw, view)
    types = cols.edge_types
    var, etype = edge_handle(eid), types.names[types.codes[eid]]
    a, b = ends[cols.sources[eid]], ends[cols.targets[eid]]
    # the text and the line of its own are built when first needed
    # (_edge_line): an edge the walk took prints only its line start
    entry = [raw, (var, etype, a[6], b[6], props), None, -1, -1, None, None, a, b, None, 0, None, 0]
    if len(bucket) >= LineCache.MAX:
        bucket.clear()
    bucket[eid] = entry
    return entry


def _edge_line(ee: list[Any]) -> str:
    """The text of edge entry ``ee`` and its line of its own (kept in it)."""
    var, etype, src, dst, props = ee[1]
    if props:
        body = ", ".join(f"{k}: {format_value(v)}" for k, v in props)
        text = f"({src})-[{var}:{etype} {{{body}}}]->({dst})"
    else:
        text = f"({src})-[{var}:{etype}]->({dst})"
    ee[2], ee[5] = text, f"  {text},\n"
    return ee[5]  # type: ignore[no-any-return]


def _epattern(entry: list[Any]) -> EdgePattern:
    """The pattern of an edge entry, built when first asked for."""
    pat = entry[6]
    if pat is None:
        pat = entry[6] = EdgePattern(*entry[1])
    return pat  # type: ignore[no-any-return]


def _node_tokens(store: Store, nid: int, line: str, view: str, cache: LineCache) -> int:
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
            _node_tokens(store, nid, f"  {e[3]},\n", "interior", cache)


def build_body(
    store: Store,
    items: list[tuple[int, int, int]],
    view: str,
    cache: LineCache,
    budget: int | None = None,
) -> tuple[Rows | tuple[()], Rows | tuple[()], str, int, int]:
    """The INSERT literal of a walk's rows, its patterns (built when first
    read), its exact token count, and how many of ``items`` it holds.

    ``items`` are the walk's rows in order (``WalkResult.items``): a root
    node prints on a line of its own, a node the walk reached prints after
    the edge from the node it came from (``(na4)-[ea7:NEXT]->(na5:TURN
    {…})``, one line and two rows), and an edge between two nodes already
    printed on a line of its own. With ``budget``, the literal stops before
    the first line that would take it past that many tokens."""
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
                else _new_node_entry(store, nid, view, nbucket, key, nick)
            )
            if e[4] < 0:  # the store keeps an interior line's count
                e[4] = (ltok[nid] if interior else 0) or _node_tokens(store, nid, e[5], view, cache)
            ends[nid] = e
        if eid:
            egot = ebucket.get(eid)
            raw = eprops.get(eid)
            ee = (
                egot
                if egot is not None and egot[0] is raw
                else _new_edge_entry(store, eid, view, ebucket, raw, ends)
            )
        if not nid:  # an edge between two nodes printed before
            line = ee[5] or _edge_line(ee)
            if ee[3] < 0:
                f = ee[1]  # (var, type, src, dst, props)
                ee[3] = (
                    cache.edge_count(
                        cache.node_count(ee[7]) + cache.node_count(ee[8]), eid, f[1], False
                    )
                    if fast and not f[4]
                    else count_tokens(line, cache.tokenizer)
                )
            n = ee[3]
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
    taken = len(counts)
    while taken:
        # the last line ends the literal: no comma, no line break
        last = lines[taken][:-2]
        run = _end_run(last) if fast else None
        if run is not None:  # only its last piece changes
            total = tokens - cache.count(run + ",\n") + cache.count(run)
        else:
            total = tokens - counts[-1] + cache.count(last)
        if budget is None or total <= budget:
            lines[taken] = last
            tokens = total
            break
        tokens -= counts.pop()
        nid, eid, _p = items[taken - 1]
        del lines[taken]
        if nid:
            nentries.pop()
        if eid:
            eentries.pop()
        taken -= 1
    if not taken:
        return (), (), "", 0, 0
    return (Rows(nentries, _pattern), Rows(eentries, _epattern), "".join(lines), tokens, taken)


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


def finish(
    receipt_fields: dict[str, Any],
    body: str,
    body_tokens: int,
    cache: LineCache,
    etag: str | None = None,
) -> tuple[str, Receipt]:
    """Put the receipt line before ``body`` and count the whole text.

    The line prints neither the token count nor the size (the receipt holds
    them), so the text is the line and the body, counted apart: no pre-token
    crosses the line break. The alarm (and its advice) is decided on the
    total. ``etag`` defaults to :func:`etag_of` the body (a delta answer
    passes the etag of the Shape it leads to).
    """
    if etag is None:
        etag = etag_of(body)
    advice = tuple(receipt_fields.pop("advice", ()))
    nl = "\n" if body else ""
    body_bytes = len(body.encode())
    receipt = Receipt(
        **receipt_fields,
        etag=etag,
        tokens=0,
        bytes=0,
        alarm=False,
        advice=advice,
        body_tokens=body_tokens,
    )
    cap = None if receipt.max_tokens is None else receipt.max_tokens - body_tokens
    for alarm in (False, True):
        if alarm:
            receipt = replace(receipt, alarm=True, advice=advice + (ALARM_ADVICE,))
        parts = receipt_parts(receipt, cache.count, cap)
        head = "".join(parts) + nl
        tokens = parts_tokens(parts, cache.count, nl) + body_tokens
        if tokens <= ALARM_TOKENS or alarm:
            break
    object.__setattr__(receipt, "tokens", tokens)
    object.__setattr__(receipt, "bytes", len(head.encode()) + body_bytes)
    return head + body, receipt


def _digit_run_tokens(digits: int) -> int:
    """Tokens of a run of ``digits`` digits: the pre-tokenisers cut it into
    runs of up to three, and every such run is one token of each tokenizer
    (tests/ver/test_tokens.py checks all 1,110 of them)."""
    return (digits + 2) // 3


ALARM_ADVICE = "over 8k tokens: narrow q or recall with view=shell"


__all__ = [
    "ALARM_TOKENS",
    "LineCache",
    "Receipt",
    "SHELL_EDGE_KEYS",
    "SHELL_KEYS",
    "Shape",
    "VIEWS",
    "answer_line",
    "build_body",
    "edge_view_props",
    "finish",
    "prime_lines",
    "view_props",
]
