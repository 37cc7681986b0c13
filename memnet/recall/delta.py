"""Delta recall: what changed in a Shape since the caller last read it.

``Session.recall(q, since=ETAG)`` recalls q as usual, then compares the new
Shape with the Shape whose etag is ETAG and answers only the difference, as
shaped GQL that :func:`memnet.parse` reads::

    // delta v=9 rows=13/50 added=2 changed=1 gone=1 since=… etag=…
    INSERT
      (nab:TSK {status: 'open', title: 'Cache the cart total'}),
      (nab)-[eac:TOUCHES]->(na4)
    SET na5.status = 'review'
    REMOVE na5.prio
    GONE na7, ea3

Rows that entered the Shape are an ``INSERT`` (edges name their ends by
handle), each changed row is one ``SET`` line and one ``REMOVE`` line
(properties, extra labels, nickname), and the rows that left the Shape are one
``GONE`` list of handles: gone from *this Shape*, not necessarily from the
session. ``GONE`` is not a Commit statement: a Commit refuses it
(``echo_refused``), so a delta answer pasted into a Commit recycles nothing.
:func:`apply_delta` turns the old Shape and the delta into the new Shape's
graph. When nothing changed the answer is the ``// unchanged`` line
alone. When ETAG cannot be resolved, or the delta would not be smaller, the
answer is the whole Shape and its receipt says why (``since=… why=…``).

Which Shapes ETAG may name (docs/decisions.md, D45): the Shapes this q gave,
with the same knobs, at the current version or one of the :data:`WINDOW`
versions before it. The session looks first among the Shapes it served lately
(:class:`Memo`, no cost); otherwise, when it was opened from a cabinet, it
takes a fresh copy of the stored version and walks it back one commit at a
time (:func:`memnet.commit.rewind`, the states before each commit read from
the log), recalling q at each version, newest first, until the etag turns up.
Walking back reads at most :data:`REWIND_READ` recorded changes and undoes at
most :data:`REWIND_UNDO`. Any version holding that etag had the very same
text, so the delta does not depend on which one is found, nor on whether the
memory or the log found it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..commit import StoredChange, rewind
from ..errors import DeltaMismatch, InvalidArgument, MemNetError, QueryError
from ..gql import ast
from ..gql.emit import format_edge, format_query, format_value, node_text
from ..gql.parse import parse_delta
from .lines import LineCache
from .receipt import ALARM_ADVICE, ALARM_TOKENS, RECEIPT_FIELDS, Receipt, answer_line, finish
from .shape import Shape

if TYPE_CHECKING:
    from ..graph.store import Store

#: Versions before the current one whose Shapes an etag may name.
WINDOW = 16
#: Recorded changes a rebuild of past versions may read, and undo, before it gives up.
REWIND_READ = 100_000
REWIND_UNDO = 2_000
#: Shapes a session remembers (by recall key and etag).
MEMO_SIZE = 128
KNOBS = ("k", "max_rows", "limit", "fanout", "view", "laws", "max_tokens")

_ETAG = re.compile(r"[0-9]{12}")
_CARRIED = tuple(
    f for f in RECEIPT_FIELDS if f not in ("etag", "tokens", "bytes", "alarm", "body_tokens")
)

Graph = tuple[tuple[ast.NodePattern, ...], tuple[ast.EdgePattern, ...]]


def check_etag(since: object) -> str:
    if not isinstance(since, str) or _ETAG.fullmatch(since) is None:
        raise QueryError(
            f"since must be the etag of a Shape (12 digits from its receipt line), got {since!r}"
        )
    return since


class Memo:
    """The Shapes a session served lately: ``(key, etag)`` → ``(version,
    shape)``, the latest version kept, least recently served dropped first.
    A Shape's graph is built from the rows as they were when it was served
    (:class:`~memnet.recall.shape.Shape`), so it is read only when a delta
    needs it."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self.size = size
        self._d: OrderedDict[tuple[Any, str], tuple[int, Shape]] = OrderedDict()

    def put(self, key: tuple[Any, ...], version: int, shape: Shape) -> None:
        k = (key, shape.receipt.etag)
        self._d[k] = (version, shape)
        self._d.move_to_end(k)
        if len(self._d) > self.size:
            self._d.popitem(last=False)

    def get(self, key: tuple[Any, ...], etag: str) -> tuple[int, Shape] | None:
        return self._d.get((key, etag))


def memo_key(shape: Shape, sq: ast.SeedQuery, knobs: tuple[Any, ...]) -> tuple[Any, ...]:
    """What makes two Recalls the same ask: the normalised q as asked (not as
    read: a capital word read as a keyword at one version may be a kind at
    the next) and the knobs."""
    return (format_query(sq), sq.form, sq.limit, *knobs)


class Recaller(Protocol):
    """A graph that recalls at its version (:class:`memnet.Session` is one):
    what a copy walked back to a past version must offer."""

    version: int

    @property
    def store(self) -> Store: ...

    def recall_checked(
        self,
        sq: ast.SeedQuery,
        *,
        k: int,
        max_rows: int,
        limit: int | None,
        fanout: int,
        view: str,
        laws: bool,
        max_tokens: int | None = None,
    ) -> Shape:
        """Recall ``sq`` with checked knobs, remembering nothing."""


class Archive(Protocol):
    """Where a session's past versions come from: the cabinet it was opened
    from (``Session.archive``; a session made in memory has none)."""

    def copy(self) -> Recaller:
        """A fresh copy of the session at its stored version."""

    def changes(self, version: int) -> Sequence[StoredChange]:
        """The changes of one stored commit, as the log keeps them."""


class Recalling(Recaller, Protocol):
    """What delta recall needs of the session asked (:class:`memnet.Session`)."""

    @property
    def memo(self) -> Memo: ...

    @property
    def line_cache(self) -> LineCache: ...

    @property
    def archive(self) -> Archive | None: ...


def recall_since(
    session: Recalling, sq: ast.SeedQuery, knobs: tuple[Any, ...], since: str
) -> Shape:
    """The answer to ``session.recall(sq, since=since)`` (the session's lock held)."""
    kw = dict(zip(KNOBS, knobs, strict=False))
    new = session.recall_checked(sq, **kw)
    key = memo_key(new, sq, knobs)
    session.memo.put(key, session.version, new)
    cache = session.line_cache
    if new.receipt.etag == since:
        return _answer(new, "unchanged", since, "", 0, (0, 0, 0), cache)
    lo = max(0, session.version - WINDOW)
    hit = session.memo.get(key, since)
    if hit is not None and hit[0] >= lo:
        old: Graph | str = (hit[1].nodes, hit[1].edges)
    else:
        old = _search(session, sq, kw, key, since, lo)
    if isinstance(old, str):
        return _whole(new, since, old, cache)
    body, tokens, counts = diff_text(old, (new.nodes, new.edges), cache)
    out = _answer(new, "delta", since, body, tokens, counts, cache)
    if out.receipt.tokens >= new.receipt.tokens:
        return _whole(new, since, "the delta would cost as many tokens as the Shape or more", cache)
    return out


# -- finding the old Shape -------------------------------------------------------------
def _search(
    session: Recalling,
    sq: ast.SeedQuery,
    kw: dict[str, Any],
    key: tuple[Any, ...],
    since: str,
    lo: int,
) -> Graph | str:
    """Recall q at versions V-1 down to ``lo`` on a copy of the session walked
    back one commit at a time; the graph of the Shape with etag ``since``, or
    why there is none."""
    hi = session.version - 1
    span = f"versions {lo}-{hi}" if lo < hi else f"version {hi}"
    if hi < lo:
        return "no earlier version to compare with"
    archive = session.archive
    if archive is None:
        return (
            f"not one of the Shapes this session served lately, and a session that is "
            f"not in a cabinet cannot rebuild {span}"
        )
    try:
        past = archive.copy()
        stored = past.version
        for v in rewind(
            past.store,
            stored,
            archive.changes,
            lo,
            max_read=REWIND_READ,
            max_undo=REWIND_UNDO,
        ):
            past.version = v
            if v <= hi:
                sh = past.recall_checked(sq, **kw)
                if sh.receipt.etag == since:
                    session.memo.put(key, v, sh)
                    return sh.nodes, sh.edges
    except MemNetError as e:
        return f"{span} cannot be rebuilt: {e.message}"
    unstored = f" (versions after {stored} are not flushed yet)" if stored < hi else ""
    return f"no Shape of this q and knobs had that etag at {span}{unstored}"


# -- the difference -----------------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    """Equal as printed (``1``, ``1.0``, ``true`` and ``-0.0`` kept apart)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b and (type(a) is not float or repr(a) == repr(b))


def _changes(var: str, old: ast.Props, new: ast.Props) -> tuple[list[str], list[str]]:
    """``SET`` and ``REMOVE`` items turning property map ``old`` into ``new``."""
    was = dict(old)
    sets = []
    for k, v in new:
        if k not in was or not _same(was.pop(k), v):
            sets.append(f"{var}.{k} = {format_value(v)}")
    return sets, [f"{var}.{k}" for k in was]


def diff_text(old: Graph, new: Graph, cache: LineCache) -> tuple[str, int, tuple[int, int, int]]:
    """The delta body turning graph ``old`` into ``new``, its exact token
    count, and the rows added, changed and gone.

    Like a Shape, the text is built so that no pre-token of the tokenizer
    crosses a line break, and counted line by line."""
    old_nodes = {p.var: p for p in old[0]}
    old_edges = {p.var: p for p in old[1]}
    items: list[str] = []
    lines: list[str] = []
    changed = 0
    for p in new[0]:
        q = old_nodes.pop(p.var, None)
        if q is None:
            items.append(node_text(p.var, p.labels, p.props, p.nick))
        elif q is not p:
            sets, removes = _changes(p.var, q.props, p.props)  # type: ignore[arg-type]
            sets += [f"{p.var}:{x}" for x in p.labels[1:] if x not in q.labels]
            removes += [f"{p.var}:{x}" for x in q.labels[1:] if x not in p.labels]
            if p.nick is not None and p.nick != q.nick:
                sets.append(f"{p.var} #{p.nick}")
            elif p.nick is None and q.nick is not None:
                removes.append(f"{p.var} #{q.nick}")
            changed += _change_lines(lines, sets, removes)
    for e in new[1]:
        f = old_edges.pop(e.var, None)
        if f is None:
            items.append(format_edge(e.var, e.type, e.src, e.dst, e.props))
        elif f is not e:
            sets, removes = _changes(e.var, f.props, e.props)  # type: ignore[arg-type]
            changed += _change_lines(lines, sets, removes)
    gone = [*old_nodes, *old_edges]
    if gone:
        lines.append("GONE " + ", ".join(gone))  # type: ignore[arg-type]
    if items:
        head = ["INSERT\n", *(f"  {x},\n" for x in items[:-1]), f"  {items[-1]}"]
        lines[:0] = head
    for i in range(len(lines) - 1):
        if not lines[i].endswith("\n"):
            lines[i] += "\n"
    return "".join(lines), sum(map(cache.count, lines)), (len(items), changed, len(gone))


def _change_lines(lines: list[str], sets: list[str], removes: list[str]) -> int:
    if sets:
        lines.append("SET " + ", ".join(sets))
    if removes:
        lines.append("REMOVE " + ", ".join(removes))
    return 1 if sets or removes else 0


# -- the answers -----------------------------------------------------------------------
def _answer(
    new: Shape,
    answer: str,
    since: str,
    body: str,
    body_tokens: int,
    counts: tuple[int, int, int],
    cache: LineCache,
) -> Shape:
    """``new`` answered as ``delta`` (``body``) or ``unchanged`` (no body),
    with a short receipt line that counts its own tokens."""
    r = new.receipt
    nl = "\n" if body else ""
    head = answer_line(answer, r.version, r.rows, r.max_rows, r.etag, since, counts) + nl
    tok = cache.count(head) + body_tokens
    text = head + body
    alarm = tok > ALARM_TOKENS
    advice = tuple(a for a in r.advice if a != ALARM_ADVICE) + ((ALARM_ADVICE,) if alarm else ())
    # dataclasses.replace() costs three times this
    receipt = Receipt(
        **{
            **{name: getattr(r, name) for name in RECEIPT_FIELDS},
            "since": since,
            "answer": answer,
            "added": counts[0],
            "changed": counts[1],
            "gone": counts[2],
            "tokens": tok,
            "bytes": len(text.encode()),
            "alarm": alarm,
            "advice": advice,
        }
    )
    return Shape(text, receipt, seed_handles=new.seed_handles)


def _whole(new: Shape, since: str, why: str, cache: LineCache) -> Shape:
    """``new`` whole, its receipt line saying which etag was asked for and why
    it could not be answered with a delta."""
    r = new.receipt
    head, nl, body = new.text.partition("\n")
    # the receipt line was just counted by finish(), so this is a lookup
    body_tokens = r.tokens - cache.count(head + nl)
    carried = {name: getattr(r, name) for name in _CARRIED}
    carried.update(since=since, why=why, advice=tuple(a for a in r.advice if a != ALARM_ADVICE))
    text, receipt = finish(carried, body, body_tokens, cache, etag=r.etag)
    return Shape(text, receipt, new.nodes, new.edges, new.seed_handles)


# -- applying a delta ----------------------------------------------------------------------
def _parsed(text: str | ast.Delta | ast.Insert | Shape) -> tuple[ast.Statement, ...]:
    if isinstance(text, Shape):
        text = text.text
    if isinstance(text, str):
        text = parse_delta(text)
    if isinstance(text, ast.Insert):
        return (text,)
    if not isinstance(text, ast.Delta):
        raise InvalidArgument(
            f"a Shape or a delta answer is text, a Shape or a parsed Δ, not {type(text).__name__}"
        )
    return text.statements


def apply_delta(old: str | ast.Insert | Shape, delta: str | ast.Delta | Shape) -> ast.Insert:
    """The graph of the Shape that a delta answer leads to, from the Shape it
    was taken against.

    ``old`` is that Shape (its text, or its parsed ``Insert``); ``delta`` is the
    delta answer (text or parsed). The result holds the new Shape's rows, as
    graphs: the old rows in their order with their changes, then the rows
    added. An ``unchanged`` answer gives the old graph back. Raises
    :class:`~memnet.errors.DeltaMismatch` when the delta names rows ``old``
    does not hold (it was taken against another Shape).

    Example::

        >>> import memnet
        >>> s = memnet.Session("d")
        >>> t = s.commit("INSERT (t:TSK {title: 'a', status: 'open'})").ids["t"]
        >>> first = s.recall("TSK")
        >>> _ = s.commit(f"SET {t}.status = 'done'")
        >>> d = s.recall("TSK", since=first.receipt.etag)
        >>> d.text.splitlines()[1]
        "SET na1.status = 'done'"
        >>> memnet.apply_delta(first.text, d.text).nodes[0].props
        (('status', 'done'), ('title', 'a'))
    """
    olds = _parsed(old)
    first = olds[0] if olds else None
    if len(olds) > 1 or not (first is None or isinstance(first, ast.Insert)):
        raise DeltaMismatch("the old Shape must be one INSERT graph literal (a Shape's text)")
    nodes = {p.var: p for p in first.nodes} if first is not None else {}
    edges = {e.var: e for e in first.edges} if first is not None else {}

    def target(var: str, what: str, node_only: bool = False) -> Any:
        if var in nodes:
            return nodes
        if var in edges and not node_only:
            return edges
        raise DeltaMismatch(
            f"the delta {what} {var}, which the old Shape does not hold: it "
            "was taken against another Shape"
        )

    for st in _parsed(delta):
        if isinstance(st, ast.Insert):
            for p in st.nodes:
                if not p.bare:
                    nodes[p.var] = p
                elif p.var not in nodes:
                    target(p.var, "joins an edge to", True)  # type: ignore[arg-type]
            edges.update((e.var, e) for e in st.edges)
        elif isinstance(st, ast.Gone):
            del target(st.var, "drops")[st.var]
        elif isinstance(st, (ast.SetProp, ast.RemoveProp)):
            d = target(st.var, "changes")
            props = dict(d[st.var].props)
            if isinstance(st, ast.SetProp):
                props[st.key] = st.value
            else:
                props.pop(st.key, None)
            d[st.var] = replace(d[st.var], props=tuple(sorted(props.items())))
        elif isinstance(st, (ast.SetLabel, ast.RemoveLabel, ast.SetNick, ast.RemoveNick)):
            p = target(st.var, "changes", True)[st.var]
            labels, nick = p.labels, p.nick
            if isinstance(st, ast.SetLabel) and st.label not in labels:
                labels = (labels[0], *sorted((*labels[1:], st.label)))
            elif isinstance(st, ast.RemoveLabel):
                labels = tuple(x for x in labels if x != st.label or x == labels[0])
            elif isinstance(st, ast.SetNick):
                nick = st.nick
            elif isinstance(st, ast.RemoveNick):
                nick = None
            nodes[st.var] = ast.NodePattern(p.var, labels, p.props, nick)
        else:
            raise DeltaMismatch(
                f"a delta answer holds no {type(st).__name__.upper()} "
                "statement: this text is a Commit, not a delta"
            )
    return ast.Insert(tuple(nodes.values()), tuple(edges.values()))


__all__ = [
    "Archive",
    "MEMO_SIZE",
    "Memo",
    "REWIND_READ",
    "REWIND_UNDO",
    "WINDOW",
    "apply_delta",
    "check_etag",
    "diff_text",
    "memo_key",
    "recall_since",
]
