"""The artefact graph every ingester produces, before it meets a session.

An ingester (source tree, markdown, SysML) reads files and returns an
:class:`Artefacts`: elements keyed by a deterministic *locator* (the id of the
thing in the artefact, e.g. ``py:pkg/mod.py::Class``), and links between
locators. The same input always gives the same locators, so syncing the
artefacts into a session (``memnet.ingest.sync``) can tell new, changed and
gone elements apart, and a second ingest of an unchanged tree writes nothing.

Locator shape: ``<scheme>:<root>/<relative path>[<suffix>]`` where scheme is
``py``, ``md`` or ``sysml``; suffixes are ``::Qual.Name`` for symbols and
``#slug`` for markdown sections. The ingest *scope* is every locator of the
given schemes under one root: only elements in scope are ever changed or
recycled by a sync, so hand-written nodes and other trees are left alone.

This module holds plain data only; it imports nothing from the rest of
MemNet except the value types.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidArgument
from ..gql.ast import Value


@dataclass(frozen=True, slots=True)
class Element:
    """One node to be: kind (upper-case code), extra labels and properties.

    ``unit`` is the locator of the file the element came from (a file's own
    element has ``unit == locator``); it is not stored. The ``locator``
    property is added by the sync; do not put it in ``props``.
    """

    locator: str
    kind: str
    props: dict[str, Value] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    unit: str = ""


@dataclass(frozen=True, slots=True)
class Link:
    """One edge to be, between two element locators (``src -[type]-> dst``)."""

    type: str
    src: str
    dst: str
    props: dict[str, Value] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.type, self.src, self.dst)


@dataclass(frozen=True, slots=True)
class Warning_:
    """A construct an ingester skipped: where and why (never a crash)."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class Artefacts:
    """Elements by locator, links, and the warnings met on the way.

    ``schemes`` and ``root`` define the scope a sync reconciles (see the module
    doc); ``managed_types`` are the edge types the ingester owns: a sync adds
    and removes only edges of those types between two in-scope nodes, so an
    edge an agent drew by hand (any other type, or to a node out of scope)
    survives a re-ingest. The artefacts are always the complete desired state
    of the scope (an ingester that skips an unchanged file copies that file's
    elements and links from the session's snapshot). ``files`` and ``parsed``
    let a file ingester say how many files it saw and how many it read afresh;
    ``failed`` lists the files a lenient ingester could not read (where and why),
    whose elements are therefore missing. ``outside`` names locators out of the
    scope that links may still point at: nodes the session already holds (an
    ingester's links to another ingester's nodes, such as a test's ``VERIFIES``
    link to a requirement of the model); the sync finds them by locator and
    never changes them, and it owns the managed links from its scope to them.
    """

    root: str
    schemes: tuple[str, ...]
    elements: dict[str, Element] = field(default_factory=dict)
    links: dict[tuple[str, str, str], Link] = field(default_factory=dict)
    managed_types: tuple[str, ...] = ("CONTAINS",)
    warnings: list[Warning_] = field(default_factory=list)
    files: int = 0  # files the ingester looked at
    parsed: int = 0  # of those, files it read afresh (the rest came from the snapshot)
    failed: list[Warning_] = field(default_factory=list)
    outside: frozenset[str] = frozenset()

    def add(self, element: Element) -> Element:
        if element.locator in self.elements:
            raise InvalidArgument(f"duplicate locator {element.locator!r}")
        self.elements[element.locator] = element
        return element

    def link(self, type_: str, src: str, dst: str, **props: Value) -> Link:
        lk = Link(type_, src, dst, dict(props))
        self.links.setdefault(lk.key, lk)
        return lk

    def in_scope(self, locator: str) -> bool:
        return any(
            locator == f"{s}:{self.root}" or locator.startswith(f"{s}:{self.root}/")
            for s in self.schemes
        )


__all__ = ["Artefacts", "Element", "Link", "Warning_"]
