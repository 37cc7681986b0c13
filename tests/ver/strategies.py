"""Hypothesis strategies and independent oracles for the MN-VER suite.

Nothing here imports MemNet's emitter or parser: Δ text and query text are written
by this module's own formatter, and expectations (what the session holds, what a
query matches, where the peaks are) come from a plain-Python model of the
session and from ``networkx``, never from the engine's own helpers.

Main pieces
-----------
* :func:`graph_specs` draws a random session description (:class:`GraphSpec`):
  nodes of several kinds with labels, nicks and properties (unicode strings
  with quotes, backslashes and newlines, ints, floats, bools, lists), typed
  edges (``CONTAINS`` among them), then a few batches of SET / REMOVE / label /
  DELETE / SETTLE operations.
* :func:`build` turns a spec into a live :class:`memnet.Session` through
  ``Session.commit`` only, and keeps a :class:`Model` of what the session must
  hold afterwards (props, labels, nicks, which handles were recycled, which
  commits had to bump the version).
* :func:`queries` draws Recall queries (codebook and MATCH forms, empty q,
  nick queries) from words, kinds and values that exist in a spec and from some
  that do not, each with a structured :class:`QuerySpec` for the oracle.
* :func:`knobs` draws Recall knobs.
* Oracles: :func:`oracle_matches`, :func:`rho_star`, :func:`peak_set`,
  :func:`live_census`, :func:`emitted_distances`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from hypothesis import Phase, settings
from hypothesis import strategies as st

import memnet
from memnet.graph.words import parts_of, stem, token_words, tokens
from memnet.graph.words import words_of as all_words

#: Settings for every property test of MN-VER: the loaded profile's example
#: count, no example database, and no shrinking. A failing property prints its
#: first counterexample at once; shrinking a session-sized example can run for
#: minutes, and the minimal repro of every engine bug found is written down as
#: an example-based test next to the property.
VER = settings(database=None, phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target))

# --------------------------------------------------------------------------- vocabulary

KINDS = ("TSK", "LAW", "MOD", "DEC", "PKG", "REQ")
EXTRA_LABELS = ("URGENT", "CORE", "X2")
EDGE_TYPES = ("TOUCHES", "IMPORTS", "CONTAINS", "SATISFIES")
# No vocabulary word starts with 'n' or 'e', so no word can be mistaken for a
# handle (n<base36> / e<base36>) when texts are renamed canonically.
WORDS = (
    "pricing",
    "cache",
    "login",
    "parser",
    "ledger",
    "quota",
    "report",
    "billing",
    "schema",
    "token",
    "graph",
    "widget",
    "rounding",
    "invoice",
    "tax",
    "page",
)
MISSING_WORDS = ("zqxv", "quuxish", "wibblewobble")
STATUSES = ("open", "done", "blocked", "in progress")
# property keys, a few of them keywords of the dialect on purpose
PROP_KEYS = (
    "title",
    "status",
    "path",
    "prio",
    "score",
    "flag",
    "tags",
    "note",
    "text",
    "limit",
    "set",
    "sid",
)
SET_KEYS = ("status", "prio", "note", "score", "tags", "flag")
NICKS = ("alpha", "beta", "core-1", "x_2", "gamma9")
TRICKY = (
    "it's",
    "back\\slash",
    "two\nlines",
    "tab\there",
    "quote '' twice",
    "ünïcødé ✓",
    "// not a comment",
    "/* nor this */",
    "MATCH (n) LIMIT 3",
    "INSERT (x:TSK)",
    "carriage\rreturn",
    "bell\x07",
    "del\x7f",
    "{braces} [brackets] (parens)",
    "日本語のテキスト",
    "emoji 🧠 memory",
    "#notanick",
    "a:b",
    "   padded   ",
    "",
)

HANDLE_RE = re.compile(r"(?<![0-9A-Za-z_])([ne][1-9a-z][0-9a-z]*)(?![0-9A-Za-z_])")
WORD_RE = re.compile(r"\w+")


# ------------------------------------------------------------------------ GQL text (own formatter)


def gql_string(s: str, style: int = 0) -> str:
    """A single-quoted GQL string literal.

    style 0 escapes quotes as ``\\'`` and newlines/tabs as ``\\n``/``\\t``;
    style 1 doubles quotes (``''``) and leaves newlines and tabs raw, which the
    grammar also accepts.
    """
    out = []
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("''" if style else "\\'")
        elif ch == "\n":
            out.append("\n" if style else "\\n")
        elif ch == "\t":
            out.append("\t" if style else "\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def gql_scalar(v: Any, style: int = 0) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        assert math.isfinite(v)
        return repr(v)
    if isinstance(v, str):
        return gql_string(v, style)
    raise TypeError(type(v))


def gql_value(v: Any, style: int = 0) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(gql_scalar(x, style) for x in v) + "]"
    return gql_scalar(v, style)


def gql_props(props: Iterable[tuple[str, Any]], style: int = 0) -> str:
    items = [f"{k}: {gql_value(v, style)}" for k, v in props]
    return "{" + ", ".join(items) + "}" if items else ""


def gql_node(
    var: str,
    kind: str,
    labels: Iterable[str],
    props: Iterable[tuple[str, Any]],
    nick: str | None = None,
    style: int = 0,
) -> str:
    head = var + ":" + "&".join((kind, *labels))
    parts = [head]
    if nick is not None:
        parts.append("#" + nick)
    body = gql_props(props, style)
    if body:
        parts.append(body)
    return "(" + " ".join(parts) + ")"


def gql_edge(
    var: str | None,
    etype: str,
    src: str,
    dst: str,
    props: Iterable[tuple[str, Any]] = (),
    left: bool = False,
    style: int = 0,
) -> str:
    inner = (var or "") + ":" + etype
    body = gql_props(props, style)
    if body:
        inner += " " + body
    if left:
        return f"({dst})<-[{inner}]-({src})"
    return f"({src})-[{inner}]->({dst})"


# --------------------------------------------------------------------------- strict equality


def strict_eq(a: Any, b: Any) -> bool:
    """Equality that keeps ``1``, ``1.0``, ``True`` and ``'1'`` apart (also in lists)."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        if not (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))):
            return False
        return len(a) == len(b) and all(strict_eq(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def typed(v: Any) -> Any:
    """A value with its type spelled out, for comparisons that keep types apart."""
    if isinstance(v, tuple):
        return ("tuple", tuple(typed(x) for x in v))
    return (type(v).__name__, repr(v))


def strict_props_eq(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return set(a) == set(b) and all(strict_eq(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------- values


_PHRASE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
_UNICODE = st.text(st.characters(exclude_categories=("Cs",)), max_size=16)
_TEXT = {
    True: _PHRASE,
    False: st.one_of(
        _PHRASE, _PHRASE, st.sampled_from(TRICKY), _UNICODE, st.sampled_from(STATUSES)
    ),
}


def _make_scalars(simple: bool) -> st.SearchStrategy[Any]:
    return st.one_of(
        _TEXT[simple],
        st.integers(-1000, 1000),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(allow_nan=False, allow_infinity=False, width=64),
        st.booleans(),
    )


_SCALARS = {b: _make_scalars(b) for b in (True, False)}
_VALUES = {
    b: st.one_of(_SCALARS[b], _SCALARS[b], st.lists(_SCALARS[b], max_size=3).map(tuple))
    for b in (True, False)
}


def text_values(simple: bool = False) -> st.SearchStrategy[str]:
    return _TEXT[simple]


def scalars(simple: bool = False) -> st.SearchStrategy[Any]:
    return _SCALARS[simple]


def values(simple: bool = False) -> st.SearchStrategy[Any]:
    return _VALUES[simple]


_PRIO = st.integers(0, 4)
_STATUS = st.sampled_from(STATUSES)
_KEYSETS: dict[tuple[str, ...], st.SearchStrategy[list[str]]] = {}


@st.composite
def _prop_maps(draw: Any, simple: bool, keys: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    chosen = draw(_KEYSETS[keys])
    out: list[tuple[str, Any]] = []
    for k in chosen:
        if k == "status":
            v = draw(_STATUS)
        elif k in ("title", "path", "note", "text"):
            v = draw(_TEXT[simple])
        elif k == "prio":
            v = draw(_PRIO)
        else:
            v = draw(_VALUES[simple])
        out.append((k, v))
    return tuple(out)


_PROP_MAPS: dict[tuple[bool, tuple[str, ...]], st.SearchStrategy[Any]] = {}


def prop_maps(
    simple: bool = False, keys: tuple[str, ...] = PROP_KEYS
) -> st.SearchStrategy[tuple[tuple[str, Any], ...]]:
    """Property maps: up to four distinct keys from ``keys`` with fitting values."""
    got = _PROP_MAPS.get((simple, keys))
    if got is None:
        if keys not in _KEYSETS:
            _KEYSETS[keys] = st.lists(st.sampled_from(keys), unique=True, max_size=4)
        got = _PROP_MAPS[(simple, keys)] = _prop_maps(simple, keys)
    return got


# --------------------------------------------------------------------------- graph specs


@dataclass(frozen=True)
class NodeSpec:
    kind: str
    labels: tuple[str, ...]
    props: tuple[tuple[str, Any], ...]
    nick: str | None = None


@dataclass(frozen=True)
class EdgeSpec:
    src: int
    dst: int
    type: str
    props: tuple[tuple[str, Any], ...] = ()
    left: bool = False


# operations: ("delete_node", i) ("delete_edge", j) ("settle", i) ("set", i, key, value)
#             ("remove", i, key) ("label", i, LABEL)
Op = tuple[Any, ...]


@dataclass(frozen=True)
class GraphSpec:
    nodes: tuple[NodeSpec, ...]
    edges: tuple[EdgeSpec, ...]
    batches: tuple[tuple[Op, ...], ...] = ()
    delete_on_settle: bool = False
    chunks: int = 1  # commits used to insert the nodes
    style: int = 0  # string escaping style of the Δ text

    @property
    def rows(self) -> int:
        return len(self.nodes) + len(self.edges)


_KIND = st.sampled_from(KINDS)
_LABELS = st.lists(st.sampled_from(EXTRA_LABELS), unique=True, max_size=2).map(tuple)


@st.composite
def _node_specs(draw: Any, simple: bool) -> NodeSpec:
    return NodeSpec(draw(_KIND), draw(_LABELS), draw(prop_maps(simple)), None)


_NODE_SPECS = {b: _node_specs(b) for b in (True, False)}
_NODE_LISTS: dict[tuple[bool, int], st.SearchStrategy[Any]] = {}


def node_specs(simple: bool = False) -> st.SearchStrategy[NodeSpec]:
    return _NODE_SPECS[simple]


@functools.cache
def _edge_lists(n: int, simple: bool, m: int) -> st.SearchStrategy[Any]:
    idx = st.integers(0, n - 1)
    return st.lists(
        st.tuples(
            idx,
            idx,
            st.sampled_from(EDGE_TYPES),
            st.one_of(st.just(()), st.just(()), prop_maps(simple, ("w", "why", "rank"))),
            st.booleans(),
        ),
        min_size=m,
        max_size=m,
    )


@functools.cache
def _op_batches(n: int, m: int, simple: bool) -> st.SearchStrategy[Any]:
    ni = st.integers(0, n - 1)
    op = st.one_of(
        st.tuples(st.just("delete_node"), ni),
        st.tuples(st.just("settle"), ni),
        st.tuples(st.just("set"), ni, st.sampled_from(SET_KEYS), values(simple)),
        st.tuples(st.just("remove"), ni, st.sampled_from(PROP_KEYS)),
        st.tuples(st.just("label"), ni, st.sampled_from(EXTRA_LABELS)),
        *([st.tuples(st.just("delete_edge"), st.integers(0, m - 1))] if m else []),
    )
    return st.lists(st.lists(op, min_size=1, max_size=4).map(tuple), max_size=4)


@functools.cache
def _nick_owners(n: int) -> st.SearchStrategy[Any]:
    return st.lists(st.integers(0, n - 1), max_size=len(NICKS), unique=True)


_CHUNKS = st.integers(1, 3)
_STYLE = st.integers(0, 1)


@st.composite
def graph_specs(
    draw: Any,
    max_nodes: int = 40,
    max_edges: int = 60,
    simple: bool = False,
    unique_names: bool = False,
    ops: bool = True,
    nicks: bool = True,
    min_nodes: int = 0,
) -> GraphSpec:
    """A random session description (see the module docstring)."""
    # sizes are drawn first so that generated sessions are not all tiny
    size = draw(st.integers(min_nodes, max_nodes))
    if (simple, size) not in _NODE_LISTS:
        _NODE_LISTS[(simple, size)] = st.lists(_NODE_SPECS[simple], min_size=size, max_size=size)
    nodes = list(draw(_NODE_LISTS[(simple, size)]))
    if unique_names:
        # a unique ``name`` makes every node's observables distinct
        nodes = [
            NodeSpec(
                n.kind,
                n.labels,
                tuple(p for p in n.props if p[0] != "name") + (("name", f"u{i:03d}"),),
                n.nick,
            )
            for i, n in enumerate(nodes)
        ]
    if nicks and nodes:
        for nick, i in zip(NICKS, draw(_nick_owners(len(nodes))), strict=False):
            n = nodes[i]
            nodes[i] = NodeSpec(n.kind, n.labels, n.props, nick)
    edges: list[EdgeSpec] = []
    if nodes:
        seen: set[tuple[int, int, str]] = set()
        m = draw(st.integers(0, max_edges))
        for a, b, t, p, left in draw(_edge_lists(len(nodes), simple, m)):
            if unique_names and (a, b, t) in seen:
                continue  # parallel twins are told apart by insertion order only
            seen.add((a, b, t))
            edges.append(EdgeSpec(a, b, t, p, left))
    batches: list[tuple[Op, ...]] = []
    if ops and nodes:
        batches = list(draw(_op_batches(len(nodes), len(edges), simple)))
    return GraphSpec(
        tuple(nodes),
        tuple(edges),
        tuple(batches),
        delete_on_settle=draw(st.booleans()),
        chunks=draw(_CHUNKS),
        style=draw(_STYLE),
    )


# --------------------------------------------------------------------------- the model


@dataclass
class MNode:
    kind: str
    labels: set[str]
    props: dict[str, Any]
    nick: str | None
    handle: str = ""
    live: bool = True


@dataclass
class MEdge:
    src: int
    dst: int
    type: str
    props: dict[str, Any]
    handle: str = ""
    live: bool = True


@dataclass
class Model:
    """What the session must hold, computed without the engine."""

    nodes: list[MNode] = field(default_factory=list)
    edges: list[MEdge] = field(default_factory=list)
    delete_on_settle: bool = False

    def snapshot(self) -> tuple[Any, ...]:
        """A comparable state; values compare with their types (1, 1.0, True differ)."""
        return (
            tuple(
                (
                    n.kind,
                    frozenset(n.labels),
                    tuple(sorted((k, typed(v)) for k, v in n.props.items())),
                    n.nick,
                    n.live,
                )
                for n in self.nodes
            ),
            tuple((e.live,) for e in self.edges),
        )

    def recycle_node(self, i: int) -> None:
        n = self.nodes[i]
        n.live = False
        for e in self.edges:
            if e.live and i in (e.src, e.dst):
                e.live = False

    def recycled_handles(self) -> set[str]:
        return {n.handle for n in self.nodes if not n.live} | {
            e.handle for e in self.edges if not e.live
        }

    def live_node(self, handle: str) -> MNode | None:
        for n in self.nodes:
            if n.handle == handle and n.live:
                return n
        return None

    def by_handle(self) -> dict[str, MNode]:
        return {n.handle: n for n in self.nodes}

    def edges_by_handle(self) -> dict[str, MEdge]:
        return {e.handle: e for e in self.edges}


@dataclass
class Built:
    session: memnet.Session
    model: Model
    spec: GraphSpec
    commits: list[tuple[bool, Any, int]] = field(
        default_factory=list
    )  # (expected change, result, version before)

    @property
    def node_handles(self) -> list[str]:
        return [n.handle for n in self.model.nodes]

    @property
    def edge_handles(self) -> list[str]:
        return [e.handle for e in self.model.edges]


def _insert_text(
    spec: GraphSpec,
    order: list[int],
    known: dict[int, str],
    edges: list[tuple[int, EdgeSpec]],
    tmp: set[int],
) -> str:
    style = spec.style
    parts = []
    for i in order:
        n = spec.nodes[i]
        props = n.props + ((("tmpmark", 1),) if i in tmp else ())
        parts.append(gql_node(f"v{i}", n.kind, n.labels, props, n.nick, style))
    for j, e in edges:
        src = known.get(e.src, f"v{e.src}")
        dst = known.get(e.dst, f"v{e.dst}")
        parts.append(gql_edge(f"r{j}", e.type, src, dst, e.props, e.left, style))
    return "INSERT " + ",\n  ".join(parts)


def _op_text(op: Op, model: Model, style: int) -> str | None:
    """Apply ``op`` to the model and return its Δ text, or None when it is not valid."""
    kind = op[0]
    if kind == "delete_edge":
        e = model.edges[op[1]]
        if not e.live:
            return None
        e.live = False
        return f"DELETE {e.handle}"
    n = model.nodes[op[1]]
    if not n.live:
        return None
    if kind == "delete_node":
        model.recycle_node(op[1])
        return f"DELETE {n.handle}"
    if kind == "settle":
        if n.kind != "TSK" and "TSK" not in n.labels:
            return None
        n.props["settled"] = True
        if "status" in n.props:  # a settled task's status says so
            n.props["status"] = "settled"
        if model.delete_on_settle or n.props.get("delete_on_settle") is True:
            model.recycle_node(op[1])
        return f"SETTLE {n.handle}"
    if kind == "set":
        n.props[op[2]] = op[3]
        return f"SET {n.handle}.{op[2]} = {gql_value(op[3], style)}"
    if kind == "remove":
        n.props.pop(op[2], None)
        return f"REMOVE {n.handle}.{op[2]}"
    if kind == "label":
        if op[2] != n.kind:
            n.labels.add(op[2])
        return f"SET {n.handle}:{op[2]}"
    raise AssertionError(op)


def _commit(b: Built, text: str, changed: bool) -> Any:
    before = b.session.version
    r = b.session.commit(text)
    b.commits.append((changed, r, before))
    return r


def commit_batch(b: Built, batch: tuple[Op, ...]) -> Any:
    """Commit one batch of operations of a spec (None when none of them applies)."""
    before = b.model.snapshot()
    lines = [t for t in (_op_text(op, b.model, b.spec.style) for op in batch) if t is not None]
    if not lines:
        return None
    return _commit(b, "\n".join(lines), b.model.snapshot() != before)


def build(
    spec: GraphSpec,
    *,
    name: str = "ver",
    caps: memnet.Caps | None = None,
    node_order: list[int] | None = None,
    edge_order: list[int] | None = None,
    tmp: Iterable[int] = (),
    session: memnet.Session | None = None,
) -> Built:
    """Build a session from ``spec`` through Commit only.

    ``node_order``/``edge_order`` change the insertion order (the observable
    graph stays the same); nodes in ``tmp`` are inserted with an extra property
    that a later commit removes again. ``session`` is an empty session to
    build in (one made by a cabinet, say) instead of a new one.
    """
    s = session or memnet.Session(name, caps=caps, delete_on_settle=spec.delete_on_settle)
    model = Model(delete_on_settle=spec.delete_on_settle)
    model.nodes = [
        MNode(n.kind, set(n.labels) - {n.kind}, dict(n.props), n.nick) for n in spec.nodes
    ]
    model.edges = [MEdge(e.src, e.dst, e.type, dict(e.props)) for e in spec.edges]
    b = Built(s, model, spec)
    order = list(node_order) if node_order is not None else list(range(len(spec.nodes)))
    eorder = list(edge_order) if edge_order is not None else list(range(len(spec.edges)))
    tmp = set(tmp)
    chunks = max(1, spec.chunks)
    size = max(1, -(-len(order) // chunks))
    groups = [order[i : i + size] for i in range(0, len(order), size)] or [[]]
    known: dict[int, str] = {}
    placed: set[int] = set()
    for gi, group in enumerate(groups):
        avail = set(known) | set(group)
        last = gi == len(groups) - 1
        # an edge goes in with the group that completes its ends; edges are
        # written in ``eorder``
        mine = [
            (j, spec.edges[j])
            for j in eorder
            if j not in placed and spec.edges[j].src in avail and spec.edges[j].dst in avail
        ]
        if not group and not mine:
            continue
        if not last and mine and len(mine) > 1:
            # keep some of them for a later, edge-only commit
            mine = mine[: len(mine) // 2]
        text = _insert_text(spec, group, known, mine, tmp)
        r = _commit(b, text, True)
        for i in group:
            known[i] = r.ids[f"v{i}"]
            model.nodes[i].handle = known[i]
        for j, _e in mine:
            model.edges[j].handle = r.ids[f"r{j}"]
            placed.add(j)
    rest = [(j, spec.edges[j]) for j in eorder if j not in placed]
    if rest:
        text = _insert_text(spec, [], known, rest, set())
        r = _commit(b, text, True)
        for j, _e in rest:
            model.edges[j].handle = r.ids[f"r{j}"]
    if tmp:
        text = "\n".join(f"REMOVE {model.nodes[i].handle}.tmpmark" for i in sorted(tmp))
        _commit(b, text, True)
    for batch in spec.batches:
        commit_batch(b, batch)
    return b


# --------------------------------------------------------------------------- queries


@dataclass(frozen=True)
class QuerySpec:
    """A Recall query and its structure, for the oracle."""

    text: str
    kind: str | None = None
    labels: tuple[str, ...] = ()
    props: tuple[tuple[str, Any], ...] = ()
    keywords: tuple[str, ...] = ()
    contains: tuple[tuple[str, str], ...] = ()
    nick: str | None = None
    limit: int | None = None
    form: str = "codebook"

    @property
    def empty(self) -> bool:
        return (
            self.kind is None
            and not self.labels
            and not self.props
            and not self.keywords
            and not self.contains
            and self.nick is None
        )


_NUMBERISH = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)?")


def _cb_value(v: Any) -> str:
    if isinstance(v, str):
        if (
            re.fullmatch(r"[A-Za-z_\-./]+", v)
            and not _NUMBERISH.fullmatch(v)
            and v.lower() not in ("true", "false")
        ):
            return v
        return gql_string(v)
    return gql_scalar(v)


def _values_of(nodes: Iterable[NodeSpec]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for n in nodes:
        for k, v in n.props:
            if isinstance(v, tuple):
                out.extend((k, x) for x in v)
            else:
                out.append((k, v))
    return out


def _words_of(nodes: Iterable[NodeSpec]) -> list[str]:
    words: set[str] = set()
    for n in nodes:
        for _k, v in n.props:
            for s in v if isinstance(v, tuple) else (v,):
                if isinstance(s, str):
                    words.update(
                        w
                        for w in WORD_RE.findall(s)
                        if w.isascii() and w.islower() and w.isalpha() and w != "match"
                    )
    return sorted(words)


def _string_props(n: NodeSpec) -> list[tuple[str, str]]:
    out = []
    for k, v in n.props:
        for x in v if isinstance(v, tuple) else (v,):
            if isinstance(x, str) and _words_of([NodeSpec("X", (), ((k, x),))]):
                out.append((k, x))
    return out


_FORMS = st.sampled_from(
    ("codebook", "empty", "codebook", "codebook", "match", "match", "match", "nick")
)
_BLANK = st.sampled_from(("", "   ", "\n"))
_MATCH_KW = st.sampled_from(("MATCH", "match", "Match"))
_CONTAINS_KEYS = st.sampled_from(("title", "note", "path", "tags"))
_RANDOM_KEYS = st.sampled_from(("status", "prio", "flag", "limit"))


@st.composite
def queries(draw: Any, spec: GraphSpec) -> QuerySpec:
    """A Recall query for a session built from ``spec``.

    Two in three are built around one node of the spec (its kind, some of its
    values, words from its strings), so that many of them match; the rest mix
    kinds, values and words from anywhere, plus some that exist nowhere.
    """
    form = draw(_FORMS)
    if form == "empty":
        return QuerySpec(draw(_BLANK), form="codebook")
    anchored = bool(spec.nodes) and draw(st.integers(0, 2)) > 0
    pool: tuple[NodeSpec, ...] = spec.nodes
    nicked = [n for n in spec.nodes if n.nick]
    if anchored and form == "nick" and nicked and draw(st.booleans()):
        pool = (draw(st.sampled_from(nicked)),)  # q names a node's nick and describes it
    elif anchored:
        pool = (draw(st.sampled_from(spec.nodes)),)
    kinds = sorted({n.kind for n in pool}) or ["TSK"]
    pairs = _values_of(pool)
    words = _words_of(pool) or list(WORDS)
    strings = [kv for n in pool for kv in _string_props(n)]
    if anchored:
        kind = draw(st.one_of(st.none(), st.just(kinds[0]), st.just(kinds[0])))
        labels: tuple[str, ...] = ()
        if kind is not None and pool[0].labels and draw(st.booleans()):
            labels = (draw(st.sampled_from(pool[0].labels)),)
    else:
        kind = draw(st.one_of(st.none(), st.sampled_from(kinds), st.just("ZZZ")))
        labels = ()
        if kind is not None and draw(st.integers(0, 3)) == 0:
            labels = (draw(st.sampled_from(EXTRA_LABELS)),)
    props: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 2 if form == "match" else 1))):
        if pairs and (anchored or draw(st.booleans())):
            k, v = draw(st.sampled_from(pairs))
        else:
            k, v = draw(_RANDOM_KEYS), draw(scalars())
        if k in {p[0] for p in props}:
            continue
        props.append((k, v))
    if form == "match":
        contains: list[tuple[str, str]] = []
        if draw(st.booleans()):
            if strings and draw(st.integers(0, 3)):
                key, value = draw(st.sampled_from(strings))
                vw = words_of(value)
                i = draw(st.integers(0, len(vw) - 1))
                needle = " ".join(vw[i : i + draw(st.integers(1, 2))])
            else:
                key = draw(_CONTAINS_KEYS)
                needle = draw(st.sampled_from(words + list(MISSING_WORDS)))
            contains.append((key, needle))
        limit = draw(st.one_of(st.none(), st.integers(1, 8)))
        where_eq: list[tuple[str, Any]] = []
        node_props = list(props)
        if node_props and draw(st.booleans()):
            where_eq = [node_props.pop()]
        kw = draw(_MATCH_KW)
        var = "n"
        head = f"({var}" + (":" + "&".join((kind, *labels)) if kind else "")
        body = gql_props(node_props)
        head += (" " + body if body else "") + ")"
        conds = [f"{var}.{k} CONTAINS {gql_string(nd)}" for k, nd in contains]
        conds += [f"{var}.{k} = {gql_value(v)}" for k, v in where_eq]
        text = f"{kw} {head}"
        if conds:
            text += " WHERE " + " AND ".join(conds)
        if limit is not None:
            text += f" LIMIT {limit}"
        if draw(st.booleans()):
            text += f" RETURN {var}"
        return QuerySpec(
            text,
            kind,
            labels if kind else (),
            tuple(node_props + where_eq),
            (),
            tuple(contains),
            None,
            limit,
            "match",
        )
    # codebook (and nick)
    keywords: list[str] = []
    for _ in range(draw(st.integers(0, 2))):
        keywords.append(
            draw(
                st.one_of(
                    st.sampled_from(words), st.sampled_from(words), st.sampled_from(MISSING_WORDS)
                )
            )
        )
    if strings and draw(st.integers(0, 4)) == 0:
        _k, value = draw(st.sampled_from(strings))
        vw = words_of(value)
        if len(vw) >= 2:
            i = draw(st.integers(0, len(vw) - 2))
            keywords.append(" ".join(vw[i : i + 2]))
    cb_contains: list[tuple[str, str]] = []
    if strings and draw(st.integers(0, 4)) == 0:
        key, value = draw(st.sampled_from(strings))
        vw = words_of(value)
        i = draw(st.integers(0, len(vw) - 1))
        cb_contains.append((key, " ".join(vw[i : i + draw(st.integers(1, 2))])))
    if kind is None and not props and not keywords and not cb_contains:
        keywords.append(draw(st.sampled_from(words)))
    nick = None
    if form == "nick":
        present = [n.nick for n in spec.nodes if n.nick]
        nick = draw(st.sampled_from(present + ["nobody"]))
        if anchored and pool[0].nick and draw(st.booleans()):
            nick = pool[0].nick  # the nick of the node the rest of q describes
        if draw(st.booleans()):
            kind, labels, props, keywords, cb_contains = None, (), [], [], []
    tokens: list[str] = []
    if kind:
        tokens.append(kind)
        tokens.extend(labels)
    tokens.extend(f"{k}:{_cb_value(v)}" for k, v in props)
    tokens.extend(f"{k}~{_cb_value(nd)}" for k, nd in cb_contains)
    tokens.extend(gql_string(w) if not re.fullmatch(r"[a-z]+", w) else w for w in keywords)
    if nick:
        tokens.append("#" + nick)
    return QuerySpec(
        " ".join(tokens),
        kind,
        labels if kind else (),
        tuple(props),
        tuple(keywords),
        tuple(cb_contains),
        nick,
        None,
        "codebook",
    )


@dataclass(frozen=True)
class Knobs:
    k: int = 2
    max_rows: int = 50
    limit: int = 5
    fanout: int = 8
    view: str = "interior"
    laws: bool = True

    def kwargs(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "max_rows": self.max_rows,
            "limit": self.limit,
            "fanout": self.fanout,
            "view": self.view,
            "laws": self.laws,
        }


def knobs() -> st.SearchStrategy[Knobs]:
    return st.builds(
        Knobs,
        k=st.integers(0, 4),
        max_rows=st.integers(1, 80),
        limit=st.integers(1, 8),
        fanout=st.integers(1, 10),
        view=st.sampled_from(("interior", "shell")),
        laws=st.booleans(),
    )


@st.composite
def scenarios(
    draw: Any, n_queries: int = 3, **spec_kw: Any
) -> tuple[GraphSpec, list[tuple[QuerySpec, Knobs]]]:
    spec = draw(graph_specs(**spec_kw))
    qs = [(draw(queries(spec)), draw(knobs())) for _ in range(n_queries)]
    return spec, qs


# --------------------------------------------------------------------------- oracles


def words_of(s: str) -> list[str]:
    """Parts (the phrase sequence) of a text, as the engine splits it. The
    splitter and stemmer are MemNet's own (tests/ver/test_words.py checks them
    against written expectations and checks that index and query agree); the
    rules for which node matches which query are written out here."""
    return parts_of(s)


def _strings(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, tuple):
        return [x for x in v if isinstance(x, str)]
    return []


def _phrase_in(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def _contains(props: Mapping[str, Any], key: str | None, needle: str) -> bool:
    nw = words_of(needle)
    vals = (
        [props[key]]
        if key is not None and key in props
        else ([] if key is not None else list(props.values()))
    )
    return any(_phrase_in(words_of(s), nw) for v in vals for s in _strings(v))


def _eq_matches(stored: Any, wanted: Any) -> bool:
    if stored is None:
        return False
    if isinstance(stored, tuple) and not isinstance(wanted, tuple):
        return any(strict_eq(x, wanted) for x in stored)
    return strict_eq(stored, wanted)


def live_task(attrs: Mapping[str, Any]) -> bool:
    return (attrs["kind"] == "TSK" or "TSK" in attrs["labels"]) and attrs["props"].get(
        "settled"
    ) is not True


def node_words(props: Mapping[str, Any]) -> set[str]:
    """Every index word of a node's string properties."""
    return {w for v in props.values() for s in _strings(v) for w in all_words(s)}


def _holds(words: set[str], u: str) -> bool:
    """A node with ``words`` holds query word ``u``: exactly, or by stem."""
    su = stem(u)
    if su is None:
        return u in words
    return any(stem(x) == su for x in words)


NAME_KEYS = (
    "name",
    "names",
    "title",
    "lemma",
    "lemmas",
    "alias",
    "aliases",
    "path",
    "rid",
    "id",
    "locator",
)


def name_values(key: str, s: str) -> list[str]:
    """What a name-like value offers for equality (docs/math/seeding.md)."""
    out = [s]
    if key == "path":
        last = s.rstrip("/").split("/")[-1]
        if "." in last[1:]:
            last = last[: last.rindex(".")]
        if last and last != s:
            out.append(last)
    elif key == "locator":
        cut = max(s.rfind("::") + 1, s.rfind("#"), s.rfind("/"))
        tail = s[cut + 1 :] if cut >= 0 else ""
        for ext in (".py", ".md"):
            if tail.endswith(ext):
                tail = tail[: -len(ext)]
        if tail and tail != s:
            out.append(tail)
    return out


def name_equal(props: Mapping[str, Any], qparts: list[str]) -> bool:
    if not 1 <= len(qparts) <= 6:
        return False
    return any(
        words_of(nv) == qparts
        for k in NAME_KEYS
        if k in props
        for s in _strings(props[k])
        for nv in name_values(k, s)
    )


def oracle_matches(g: nx.MultiDiGraph, q: QuerySpec) -> dict[str, int]:
    """Live nodes passing every hard filter of ``q`` → keywords matched.

    With keywords, a node must match at least one of them or have a name-like
    value equal to the whole keyword phrase. A keyword is split into tokens; a
    token matches a node holding its whole word (exactly or by stem) or, when
    no live node holds that word, one holding all its parts; a keyword
    matches when all its tokens do. A codebook pair with a bare number or
    boolean also matches a string with that text; a settled node passes no
    ``status`` filter but ``status:settled``.
    """
    words_by = {h: node_words(a["props"]) for h, a in g.nodes(data=True)}
    kw_tokens = [[token_words(t) for t in tokens(kw)] for kw in q.keywords]
    kw_tokens = [t for t in kw_tokens if t]
    qparts = [p for toks in kw_tokens for _w, parts in toks for p in parts]
    whole_held = {
        ws[0]: any(_holds(w, ws[0]) for w in words_by.values())
        for toks in kw_tokens
        for ws, _p in toks
    }

    def token_match(words: set[str], ws: tuple[str, ...], parts: tuple[str, ...]) -> bool:
        if whole_held[ws[0]] or len(parts) < 2:
            return _holds(words, ws[0])
        return all(_holds(words, p) for p in parts)

    out: dict[str, int] = {}
    for h, a in g.nodes(data=True):
        if q.kind is not None and a["kind"] != q.kind:
            continue
        labels = (a["kind"], *a["labels"])
        if any(lab not in labels for lab in q.labels):
            continue
        props = a["props"]
        ok = True
        for k, v in q.props:
            alt = (
                gql_scalar(v) if q.form == "codebook" and not isinstance(v, (str, tuple)) else None
            )
            if not (
                _eq_matches(props.get(k), v) or (alt is not None and _eq_matches(props.get(k), alt))
            ):
                ok = False
            elif k == "status" and v != "settled" and props.get("settled") is True:
                ok = False
        if not ok:
            continue
        if not all(_contains(props, k, nd) for k, nd in q.contains):
            continue
        words = words_by[h]
        count = sum(
            1 for toks in kw_tokens if all(token_match(words, ws, parts) for ws, parts in toks)
        )
        if kw_tokens and count == 0 and not name_equal(props, qparts):
            continue
        out[h] = count
    return out


def rho_star(g: nx.MultiDiGraph) -> tuple[dict[str, int], dict[str, set[str]]]:
    """ρ*(v): live non-CONTAINS edges at v to another live node; and those neighbours."""
    rho = {h: 0 for h in g.nodes}
    nbrs: dict[str, set[str]] = {h: set() for h in g.nodes}
    for u, v, _k, a in g.edges(keys=True, data=True):
        if a["type"] == "CONTAINS" or u == v:
            continue
        rho[u] += 1
        rho[v] += 1
        nbrs[u].add(v)
        nbrs[v].add(u)
    return rho, nbrs


def peak_set(g: nx.MultiDiGraph) -> dict[str, int]:
    rho, nbrs = rho_star(g)
    return {v: r for v, r in rho.items() if r > 0 and all(r >= rho[u] for u in nbrs[v])}


def live_census(g: nx.MultiDiGraph) -> list[tuple[str, int]]:
    c = Counter(a["kind"] for _h, a in g.nodes(data=True))
    return sorted(c.items(), key=lambda kc: (-kc[1], kc[0]))


def emitted_distances(shape: Any, seeds: Iterable[str], skip: set[str]) -> dict[str, int]:
    """BFS distance from the seeds over the emitted edges only (undirected),
    never passing through the nodes in ``skip``."""
    adj: dict[str, set[str]] = {}
    for e in shape.edges:
        adj.setdefault(e.src, set()).add(e.dst)
        adj.setdefault(e.dst, set()).add(e.src)
    emitted = {n.var for n in shape.nodes}
    dist = {s: 0 for s in seeds if s in emitted}
    frontier = list(dist)
    while frontier:
        nxt = []
        for u in frontier:
            if u in skip and dist[u] > 0:
                continue
            for v in adj.get(u, ()):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    nxt.append(v)
        frontier = nxt
    return dist


def rule_nodes(shape: Any) -> set[str]:
    """Emitted LAW nodes that are not seeds: the standing rules riding along."""
    seeds = set(shape.receipt.seeds)
    return {n.var for n in shape.nodes if n.labels[0] == "LAW" and n.var not in seeds}


# --------------------------------------------------------------------------- canonical text


_MASK = re.compile(r"(?<= )(v|tokens|bytes|etag)=\S+")


def canonical_text(text: str, known: set[str], mask: bool = True) -> str:
    """Rename the minted handles in ``text`` (n… and e… separately) in order of
    first appearance; optionally mask the receipt fields that depend on handle
    spelling or on the number of commits."""
    mapping: dict[str, str] = {}
    counts = {"n": 0, "e": 0}

    def sub(m: re.Match[str]) -> str:
        h = m.group(1)
        if h not in known:
            return h
        if h not in mapping:
            counts[h[0]] += 1
            mapping[h] = f"{h[0]}_{counts[h[0]]}"
        return mapping[h]

    out = HANDLE_RE.sub(sub, text)
    if mask:
        head, sep, body = out.partition("\n")
        head = _MASK.sub(lambda m: f"{m.group(1)}=*", head)
        out = head + sep + body
    return out


def graph_data(g: nx.MultiDiGraph) -> tuple[Any, ...]:
    """A comparable dump of a networkx export."""
    nodes = sorted(
        (h, a["kind"], tuple(a["labels"]), repr(sorted(a["props"].items())), a["nick"])
        for h, a in g.nodes(data=True)
    )
    edges = sorted(
        (u, v, k, a["type"], repr(sorted(a["props"].items())))
        for u, v, k, a in g.edges(keys=True, data=True)
    )
    return tuple(nodes), tuple(edges)


def as_read(g: nx.MultiDiGraph, q: QuerySpec) -> QuerySpec:
    """``q`` as a session holding ``g`` reads it: in the codebook form a
    capital word that names no kind of a live node (nor, for a label, a label
    of one) is a keyword, where it stood among the keywords; a label that
    names a kind present takes the place of an absent kind."""
    if q.form != "codebook" or (q.kind is None and not q.labels):
        return q
    kinds = {a["kind"] for _h, a in g.nodes(data=True)}
    labels = {lab for _h, a in g.nodes(data=True) for lab in a["labels"]}
    caps = ([q.kind] if q.kind is not None else []) + list(q.labels)
    absent = [c not in kinds and c not in labels for c in caps]
    if not any(absent) and (q.kind is None or q.kind in kinds):
        return q
    at = memnet.parse_query(q.text).upper_at or (0,) * len(caps)
    keywords = list(q.keywords)
    for j in sorted(range(len(caps)), key=lambda j: (-at[j], -j)):
        if absent[j]:
            keywords.insert(at[j], caps[j])
    kept = [c for c, gone in zip(caps, absent, strict=True) if not gone]
    kind = kept[0] if kept and kept[0] in kinds else None
    rest = kept[1:] if kind is not None else kept
    return dataclasses.replace(q, kind=kind, labels=tuple(rest), keywords=tuple(keywords))
