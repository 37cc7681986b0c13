"""Syntax tree of the shaped GQL dialect.

The parser turns text into these plain, frozen records (``memnet/record.py``);
Commit and Recall consume them and never see lark trees. Positions are 1-based
(line, column).

A *value* is a scalar (``str``, ``int``, ``float``, ``bool``) or a tuple of
scalars (a GQL list). Property maps are tuples of ``(key, value)`` pairs in the
order written; duplicate keys are a syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..values import Props, Scalar, Value


@dataclass(frozen=True, slots=True)
class Pos:
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class NodePattern:
    """``(var:KIND&LABEL #nick {k: v})``.

    ``labels[0]`` is the kind. A pattern with no labels, no nick and no props is
    *bare*: a reference to a variable bound earlier in the Δ or to an existing
    handle. Anonymous node patterns get ``var=None``.
    """

    var: str | None
    labels: tuple[str, ...] = ()
    props: Props = ()
    nick: str | None = None
    pos: Pos = field(default=Pos(1, 1), compare=False)

    @property
    def bare(self) -> bool:
        return not self.labels and not self.props and self.nick is None


@dataclass(frozen=True, slots=True)
class EdgePattern:
    """``(src)-[var:TYPE {k: v}]->(dst)``, direction already resolved.

    ``src``/``dst`` name node variables (or handles). For an anonymous node
    pattern inside a path the parser invents a variable ``_anonN`` that cannot
    be written by a user (it starts with an underscore and a digit follows).
    """

    var: str | None
    type: str
    src: str
    dst: str
    props: Props = ()
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class Insert:
    """``INSERT`` graph literal: node patterns (in order of first appearance,
    each variable once, the defining pattern kept) and edge patterns."""

    nodes: tuple[NodePattern, ...]
    edges: tuple[EdgePattern, ...]
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class SetProp:
    """``SET var.key = value``"""

    var: str
    key: str
    value: Value
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class SetLabel:
    """``SET var:LABEL``"""

    var: str
    label: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class SetNick:
    """``SET var #nick``"""

    var: str
    nick: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class RemoveProp:
    """``REMOVE var.key``"""

    var: str
    key: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class RemoveLabel:
    """``REMOVE var:LABEL``"""

    var: str
    label: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class RemoveNick:
    """``REMOVE var #nick`` (the nick named must be the current one)."""

    var: str
    nick: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class Delete:
    """``DELETE a, b`` - recycle nodes (with their edges) or edges."""

    var: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class Gone:
    """``GONE a, b`` - rows that left a Shape, in a delta Recall answer. Only
    :func:`~memnet.recall.delta.apply_delta` reads it; a Commit refuses it
    (``echo_refused``), so a delta answer pasted into a Commit recycles
    nothing."""

    var: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


@dataclass(frozen=True, slots=True)
class Settle:
    """``SETTLE t`` - end a task."""

    var: str
    pos: Pos = field(default=Pos(1, 1), compare=False)


Statement = (
    Insert
    | SetProp
    | SetLabel
    | SetNick
    | RemoveProp
    | RemoveLabel
    | RemoveNick
    | Delete
    | Settle
    | Gone
)


@dataclass(frozen=True, slots=True)
class Delta:
    """A mutation batch: statements in the order written.

    ``SET a.x = 1, b.y = 2`` yields two SetProp statements; ``DELETE a, b`` two
    Delete statements.
    """

    statements: tuple[Statement, ...]


@dataclass(frozen=True, slots=True)
class SeedQuery:
    """The seed part of a Recall, from either surface form.

    MATCH form: ``MATCH (n:TSK&URGENT {status: 'open'}) WHERE n.title CONTAINS
    'pricing' AND n.prio = 2 LIMIT 3 [RETURN n]``.
    Codebook form: ``TSK URGENT status:open pricing #nick``.

    ``keywords`` match words in any string property (codebook form only);
    ``contains`` are ``(key, needle)`` pairs from ``WHERE n.key CONTAINS``;
    equality conditions from WHERE are folded into ``props``. In the codebook
    form a bare number or ``true``/``false`` also matches a string property
    holding the text as written (``rid:1.1`` finds ``rid: '1.1'``); ``bare``
    keeps ``(key, text)`` where that text is not the value's canonical
    spelling (``rid:1.10``).
    """

    kind: str | None = None
    labels: tuple[str, ...] = ()
    props: Props = ()
    keywords: tuple[str, ...] = ()
    contains: tuple[tuple[str, str], ...] = ()
    nick: str | None = None
    limit: int | None = None
    form: str = "codebook"
    bare: tuple[tuple[str, str], ...] = ()
    # codebook form: where the kind and each label stood among the keywords
    # (a Recall may read a capital word that names no kind as a keyword)
    upper_at: tuple[int, ...] = field(default=(), compare=False)

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


__all__ = [
    "Delete",
    "Delta",
    "EdgePattern",
    "Gone",
    "Insert",
    "NodePattern",
    "Pos",
    "Props",
    "RemoveLabel",
    "RemoveNick",
    "RemoveProp",
    "Scalar",
    "SeedQuery",
    "SetLabel",
    "SetNick",
    "SetProp",
    "Settle",
    "Statement",
    "Value",
]
