"""The parsed form of one SysML file: frozen records, plain data.

:func:`~memnet.ingest.sysml.parse_sysml` returns a :class:`SysmlDoc`: a tree of
:class:`SysmlElement` records, each holding the relations written directly
inside it (:class:`Import`, :class:`Alias`, :class:`Satisfy`, :class:`Connect`,
:class:`Reference`, :class:`Tag`), and the warnings met on the way. References are kept as
written: qualified names joined by ``::``, feature chains by ``.``,
unrestricted names with their quotes, a conjugated port type with its ``~``.
Nothing here is resolved; :func:`~memnet.ingest.sysml.to_artefacts` does that
across the files of a model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...gql.ast import Value
from ..model import Warning_

#: Element kinds by the keyword of their definition (``part def``) and usage
#: (``part``). A keyword missing here is recognised and skipped with a warning.
DEF_KIND = {
    "part": "PARTDEF",
    "port": "PORTDEF",
    "attribute": "ATTRDEF",
    "requirement": "REQDEF",
    "concern": "REQDEF",
    "viewpoint": "REQDEF",
    "constraint": "CONSTRAINT",
    "item": "ITEMDEF",
    "action": "ACTDEF",
    "state": "STATEDEF",
    "interface": "IFACEDEF",
    "enum": "ENUMDEF",
    "calc": "CALCDEF",
    "occurrence": "OCCDEF",
    "individual": "OCCDEF",
    "connection": "CONNDEF",
    "flow": "FLOWDEF",
    "allocation": "ALLOCDEF",
    "case": "CASEDEF",
    "analysis": "CASEDEF",
    "verification": "CASEDEF",
    "use case": "CASEDEF",
    "metadata": "METADEF",
    "view": "VIEWDEF",
    "rendering": "RENDERDEF",
}
#: The kind of an extended definition (``#Kw def X``): a definition of a user keyword.
EXT_DEF_KIND = "DEF"
USAGE_KIND = {
    "part": "PART",
    "port": "PORT",
    "attribute": "ATTR",
    "requirement": "REQ",
    "concern": "REQ",
    "viewpoint": "REQ",
    "constraint": "CONSTRAINT",
    "item": "ITEM",
    "action": "ACT",
    "state": "STATE",
    "interface": "IFACE",
    "enum": "ENUM",
    "calc": "CALC",
    "occurrence": "OCC",
    "connection": "CONN",
    "flow": "FLOW",
    "message": "FLOW",
    "allocation": "ALLOC",
    "case": "CASE",
    "analysis": "CASE",
    "verification": "CASE",
    "use case": "CASE",
    "ref": "REF",
    "view": "VIEW",
    "rendering": "RENDER",
    "metadata": "META",
}
#: Every element kind the SysML ingester produces.
KINDS = tuple(dict.fromkeys(["PKG", *DEF_KIND.values(), EXT_DEF_KIND, *USAGE_KIND.values()]))
#: The definition kinds (the skeleton of a model; Model Snap keeps them in its catalog).
DEF_KINDS = frozenset(DEF_KIND.values()) - {"CONSTRAINT"} | {EXT_DEF_KIND}
REQ_KINDS = frozenset({"REQ", "REQDEF"})
#: Edge types the SysML ingester owns in a session.
MANAGED_TYPES = (
    "CONTAINS",
    "TYPED",
    "SPECIALIZES",
    "SATISFIES",
    "CONNECTS",
    "IMPORTS",
    "SUBSETS",
    "REDEFINES",
    "REFERENCES",
    "PERFORMS",
    "EXHIBITS",
    "INCLUDES",
    "REQUIRES",
    "ASSUMES",
    "ASSERTS",
    "VERIFIES",
    "FRAMES",
    "FLOWS",
    "BINDS",
    "ALLOCATES",
    "THEN",
    "TRANSITION",
    "DEPENDS",
    "TAGGED",
    "ANNOTATES",
    "EXPOSES",
    "RENDERS",
)


@dataclass(frozen=True, slots=True)
class Import:
    """``import Target;``; ``wildcard`` is ``"*"``, ``"**"`` or ``"*::**"`` for
    ``Target::*``, ``Target::**``, ``Target::*::**``; ``filter`` the text of the
    conditions in brackets (``import A::**[@Safety];``), ``"; "``-joined."""

    target: str
    wildcard: str = ""
    visibility: str | None = None
    line: int = 0
    column: int = 0
    filter: str | None = None


@dataclass(frozen=True, slots=True)
class Alias:
    """``alias Name for Target;``: ``Name`` stands for ``Target`` in its namespace."""

    name: str
    target: str
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True)
class Satisfy:
    """``satisfy Requirement by Satisfier;`` (``by`` is None: the enclosing element).

    ``negated`` for ``not satisfy``; ``own`` is the name of the element the
    statement declared for its body (its name never stands for the requirement).
    """

    requirement: str
    by: str | None = None
    line: int = 0
    column: int = 0
    negated: bool = False
    own: str | None = None


@dataclass(frozen=True, slots=True)
class Connect:
    """An edge written between two ends: ``connect src to dst``, a named or
    typed ``connection``/``interface`` (``name``, ``type``), and with ``edge``
    set, ``flow`` (FLOWS), ``allocate`` (ALLOCATES), ``bind`` (BINDS), a
    succession (THEN), a transition (TRANSITION) or a ``dependency``
    (DEPENDS). An end named ``start`` stands for the enclosing behaviour, so
    ``first start then a;`` reads: the behaviour begins with ``a``."""

    src: str
    dst: str
    name: str | None = None
    type: str | None = None
    line: int = 0
    column: int = 0
    edge: str = "CONNECTS"
    props: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True, slots=True)
class Reference:
    """An edge from the enclosing element to ``target``, from a statement that
    names an existing feature: ``perform a;`` (PERFORMS), ``exhibit s;``,
    ``include u;``, ``assert c;``, ``require r;``, ``assume c;``, ``verify r;``,
    ``frame c;``, ``expose p;`` (EXPOSES), ``render r;`` (RENDERS), and a
    metadata usage's ``about x`` (ANNOTATES). ``own`` is the name of the element
    the statement declared for its body (``perform a { in x = y; }``): the
    target is looked up past it."""

    edge: str
    target: str
    line: int = 0
    column: int = 0
    props: tuple[tuple[str, Value], ...] = ()
    own: str | None = None


@dataclass(frozen=True, slots=True)
class Tag:
    """Metadata ``tag`` applied to ``target`` (None: the enclosing element), from
    a ``#Tag`` prefix, ``@Tag;`` or ``metadata Tag about target;``."""

    tag: str
    target: str | None = None
    line: int = 0
    column: int = 0


Relation = Import | Alias | Satisfy | Connect | Reference | Tag


@dataclass(frozen=True, slots=True)
class SysmlElement:
    """One package, definition or usage.

    ``kind`` is one of :data:`KINDS`. ``types`` (``:``), ``supertypes`` (``:>``
    on a definition), ``subsets`` (``:>`` on a usage), ``redefines`` (``:>>``)
    and ``references`` (``::>``) are kept as written. ``value`` is the bound
    value (``= expr``, ``:= expr``); a default value (``default = expr``) is in
    ``props`` as ``default``. ``role`` tells what a usage stands for beyond its
    kind (``require``, ``assume``, ``assert`` and ``def`` for constraints,
    ``subject``, ``actor``, ``objective``, ``perform``, ``return``, an action
    node's keyword such as ``decide`` ...). ``text`` is a constraint's or
    calculation's result expression. ``props`` holds the rest (``default``,
    ``variation``, ``end``, ``individual``, ``filter`` ...). ``relations`` are
    the relations written directly inside the element. ``derived`` tells that
    the element has no name of its own and ``name`` was derived from what it
    redefines or references, its role, or its keyword and position (``item1``).
    """

    kind: str
    name: str | None
    line: int
    column: int = 1
    short_id: str | None = None
    types: tuple[str, ...] = ()
    supertypes: tuple[str, ...] = ()
    subsets: tuple[str, ...] = ()
    redefines: tuple[str, ...] = ()
    multiplicity: str | None = None
    value: Value | None = None
    doc: str | None = None
    direction: str | None = None
    abstract: bool = False
    text: str | None = None
    role: str | None = None
    children: tuple[SysmlElement, ...] = ()
    relations: tuple[Relation, ...] = ()
    references: tuple[str, ...] = ()
    props: tuple[tuple[str, Value], ...] = ()
    derived: bool = False


@dataclass(frozen=True, slots=True)
class SysmlDoc:
    """One parsed file: top-level elements and relations, and the warnings."""

    path: str
    elements: tuple[SysmlElement, ...] = ()
    relations: tuple[Relation, ...] = ()
    warnings: list[Warning_] = field(default_factory=list)

    def walk(self) -> Iterator[tuple[tuple[SysmlElement, ...], SysmlElement]]:
        """Every element in document order, with its chain of owners (outermost first)."""
        stack: list[tuple[tuple[SysmlElement, ...], SysmlElement]] = [
            ((), e) for e in reversed(self.elements)
        ]
        while stack:
            owners, el = stack.pop()
            yield owners, el
            inner = owners + (el,)
            stack.extend((inner, c) for c in reversed(el.children))

    def _relations(self, cls: type) -> list[Any]:
        out = [r for r in self.relations if isinstance(r, cls)]
        for _, el in self.walk():
            out.extend(r for r in el.relations if isinstance(r, cls))
        return out

    @property
    def imports(self) -> list[Import]:
        """Every import in the file (top level first, then in document order)."""
        return self._relations(Import)

    @property
    def satisfies(self) -> list[Satisfy]:
        return self._relations(Satisfy)

    @property
    def connects(self) -> list[Connect]:
        """Every edge between two written ends (``connect``, ``flow``, ``bind`` ...)."""
        return self._relations(Connect)

    @property
    def references(self) -> list[Reference]:
        return self._relations(Reference)

    @property
    def tags(self) -> list[Tag]:
        """Every metadata tag applied in the file (prefixes, ``@T;``, ``about``)."""
        return self._relations(Tag)


__all__ = [
    "DEF_KIND",
    "DEF_KINDS",
    "EXT_DEF_KIND",
    "KINDS",
    "MANAGED_TYPES",
    "REQ_KINDS",
    "USAGE_KIND",
    "Alias",
    "Connect",
    "Import",
    "Reference",
    "Relation",
    "Satisfy",
    "SysmlDoc",
    "SysmlElement",
    "Tag",
]
