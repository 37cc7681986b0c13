"""Documents → :class:`~memnet.ingest.model.Artefacts`: :func:`to_artefacts`.

Every element of every file is placed under its owner (locator
``sysml:<root>/<Qualified::Name>``), then links are drawn in three passes:

1. typing and specialisation (``TYPED``, ``SPECIALIZES``), resolved in lexical
   scope only;
2. subsetting, redefinition and reference subsetting (``SUBSETS``,
   ``REDEFINES``, ``REFERENCES``), in document order with inherited members,
   each link adding to what the element inherits members from (so
   ``vehicle_design.engine`` finds the ``engine`` of the part it subsets);
3. the relations written in each namespace: imports, ``satisfy``, edges
   between written ends (``CONNECTS``, ``FLOWS``, ``BINDS``, ``ALLOCATES``,
   ``THEN``, ``TRANSITION``, ``DEPENDS``) and edges from the enclosing element
   to a named feature (``PERFORMS``, ``REQUIRES`` ...).

A requirement satisfied by ``X`` passes the satisfaction on to the
requirements it groups (its nested requirements, and those it requires by
name): ``X`` gets a ``SATISFIES`` link to each, with ``via`` naming the group.
"""

from __future__ import annotations

import re

from ...gql.ast import Value
from ..model import Artefacts, Element, Warning_
from .clauses import last_name
from .doc import (
    MANAGED_TYPES,
    REQ_KINDS,
    Alias,
    Connect,
    Import,
    Reference,
    Relation,
    Satisfy,
    SysmlDoc,
    SysmlElement,
    Tag,
)
from .resolve import Rec, Scope, file_root, split_ref

SCHEME = "sysml"
#: the feature a semantic metadata's ``baseType`` names (``failures meta SysML::Usage``)
_BASE = re.compile(
    r"\s*((?:'(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*)(?:(?:::|\.)"
    r"(?:'(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*))*)\s+meta\b"
)
#: links to a feature that becomes a feature of the element too (``perform a.b;``)
_FEATURES = frozenset({"PERFORMS", "EXHIBITS", "INCLUDES"})


class _Model(Scope):
    """The elements of all files with the tables reference resolution needs."""

    def __init__(self, root: str) -> None:
        super().__init__()
        self.root = root
        self.art = Artefacts(root=root, schemes=(SCHEME,), managed_types=MANAGED_TYPES)
        # (namespace, short id) -> the first element that has it there
        self.short_ids: dict[tuple[str, str], str] = {}
        self.relations: list[tuple[str, Relation, str]] = []  # (namespace, relation, file)
        self.order: list[str] = []  # locators in document order
        self._next_suffix: dict[str, int] = {}  # a duplicated locator -> its next -n to try
        # requirement → what it requires or references by name
        self.required: dict[str, list[str]] = {}
        # (owner, line, column) → an element the reader named itself, so the statement
        # that declared it (`perform a { ... }`) can look past it
        self.derived_at: dict[tuple[str, int, int], str] = {}

    # -- placing ---------------------------------------------------------------------------

    def place(
        self, file: str, elements: tuple[SysmlElement, ...], relations: tuple[Relation, ...]
    ) -> None:
        unit = f"{SCHEME}:{self.root}/{file}"
        top = file_root(file)
        self.members.setdefault(top, {})
        self._relations(top, relations, file)
        # iterative pre-order walk: (owner locator, owner qualified name, element)
        stack: list[tuple[str, str, SysmlElement]] = [("", "", e) for e in reversed(elements)]
        while stack:
            owner, owner_q, el = stack.pop()
            name = el.name or el.short_id
            if name is None and el.redefines:  # `port :>> recall;` is named recall
                name = split_ref(el.redefines[0])[-1]
            if name is None:  # the reader names every usage; a record built by hand may not
                self.warn(file, el.line, f"anonymous {el.kind} skipped (give it a name)")
                continue
            qual = f"{owner_q}::{name}" if owner_q else name
            loc = f"{SCHEME}:{self.root}/{qual}"
            declared = name
            if loc in self.recs:
                # the next free suffix, remembered per name (counting from 2 for
                # each duplicate took time quadratic in their number)
                n = self._next_suffix.get(loc, 2)
                while f"{loc}-{n}" in self.recs:
                    n += 1
                self._next_suffix[loc] = n + 1
                # quiet for a name the reader derived (not the modeller's to fix), and for
                # top-level elements of two files: each file's root namespace is its own
                other_file = not owner and self.recs[loc].file != file
                if not (el.derived or other_file):
                    self.warn(
                        file,
                        el.line,
                        f"duplicate qualified name {qual!r}; this one is kept as {qual}-{n}",
                    )
                name, qual, loc = f"{name}-{n}", f"{qual}-{n}", f"{loc}-{n}"
            self.recs[loc] = Rec(loc, el, owner, file)
            self.order.append(loc)
            if el.derived:
                self.derived_at.setdefault((owner or top, el.line, el.column), loc)
            self.art.add(Element(loc, el.kind, self._props(el, name, file), unit=unit))
            if owner:
                self.art.link("CONTAINS", owner, loc)
            # a top-level element is global, and a member of its file's root namespace
            tables = [self.members.setdefault(owner, {})] + ([] if owner else [self.members[top]])
            if el.short_id is not None:  # short ids are names: one per namespace
                first = self.short_ids.setdefault((owner or top, el.short_id), loc)
                if first != loc:
                    self.warn(
                        file,
                        el.line,
                        f"short id {el.short_id!r} is given twice in one "
                        f"namespace (first on {first}); references to it "
                        f"mean the first",
                    )
            for alias in (name, el.short_id):
                if alias is not None:
                    for names in tables:
                        names.setdefault(alias, loc)
                    self.by_name.setdefault(alias, []).append(loc)
            if not owner and declared != name:  # in its own file it goes by its own name
                self.members[top].setdefault(declared, loc)
            self.members.setdefault(loc, {})
            self._relations(loc, el.relations, file)
            stack.extend((loc, qual, c) for c in reversed(el.children))

    def _relations(self, ns: str, relations: tuple[Relation, ...], file: str) -> None:
        for r in relations:
            if isinstance(r, Import):
                self.imports.setdefault(ns, []).append((r, file))
            elif isinstance(r, Alias):
                self.aliases.setdefault(ns, {}).setdefault(r.name, r)
                continue
            self.relations.append((ns, r, file))

    @staticmethod
    def _props(el: SysmlElement, name: str, file: str) -> dict[str, Value]:
        props: dict[str, Value] = (
            {"name": name} if el.name is not None or el.short_id is None else {}
        )
        if el.short_id is not None:
            props["rid"] = el.short_id
        if el.doc:
            props["doc"] = el.doc
        if el.types:
            props["type"] = ", ".join(el.types)
        for key, refs in (("subsets", el.subsets), ("references", el.references)):
            if refs:
                props[key] = ", ".join(refs)
        if el.redefines and el.redefines != (name,) and split_ref(el.redefines[0])[-1] != name:
            props["redefines"] = ", ".join(el.redefines)
        if el.multiplicity is not None:
            props["mult"] = el.multiplicity
        if el.value is not None:
            props["value"] = el.value
        if el.direction is not None:
            props["dir"] = el.direction
        if el.abstract:
            props["abstract"] = True
        if el.role is not None:
            props["role"] = el.role
        if el.text is not None:
            props["text"] = el.text
        props.update(el.props)
        props["file"] = file
        props["line"] = el.line
        return props

    def warn(self, file: str, line: int, message: str) -> None:
        self.art.warnings.append(Warning_(file, line, message))

    # -- linking ---------------------------------------------------------------------------

    def _link_refs(
        self, loc: str, rec: Rec, refs: tuple[str, ...], etype: str, what: str, inherit: bool
    ) -> None:
        el = rec.el
        for ref in refs:
            target, why = self.resolve(
                ref.lstrip("~"), self.scope_of(rec), inherit, avoid=loc if inherit else None
            )
            if target is None:
                if why == "library":
                    self.from_library.add(loc)
                else:
                    self.warn(
                        rec.file,
                        el.line,
                        f"unresolved {what} {ref!r} of "
                        f"{el.kind} {el.name or loc.rpartition('/')[2]!r}"
                        f": {why}",
                    )
                continue
            if target == loc:
                self.warn(rec.file, el.line, f"{el.kind} {el.name!r} names itself as its {what}")
                continue
            self.art.link(etype, loc, target)
            self.types.setdefault(loc, []).append(target)
            if etype == "REFERENCES":
                self.required.setdefault(loc, []).append(target)

    def link_all(self) -> None:
        for loc in self.order:  # 1. typing and specialisation, lexical scope only
            rec = self.recs[loc]
            self._link_refs(loc, rec, rec.el.types, "TYPED", "type", False)
            self._link_refs(loc, rec, rec.el.supertypes, "SPECIALIZES", "supertype", False)
        metas: dict[str, list[str]] = {}  # 1b. metadata, and what user keywords add
        for ns, r, file in self.relations:
            if isinstance(r, Tag):
                self._tag(ns, r, file, metas)
        for loc in self.order:  # 2. features of features, with inherited members
            rec = self.recs[loc]
            self._link_refs(loc, rec, rec.el.subsets, "SUBSETS", "subsetted feature", True)
            self._link_refs(loc, rec, rec.el.redefines, "REDEFINES", "redefined feature", True)
            self._link_refs(loc, rec, rec.el.references, "REFERENCES", "referenced feature", True)
        # 3. what each namespace says; first the features an element performs,
        # exhibits or includes, which its name then reaches (`engine.generateTorque`)
        rest = []
        for ns, r, file in self.relations:
            if isinstance(r, Reference) and r.edge in _FEATURES:
                self._reference(ns, r, file)
            else:
                rest.append((ns, r, file))
        satisfied: list[tuple[str, str]] = []
        for ns, r, file in rest:
            if isinstance(r, Import):
                target, why = self.resolve(r.target, ns, False, own_imports=False)
                if target is None:
                    if why != "library":
                        self.warn(file, r.line, f"unresolved import {r.target!r}: {why}")
                elif ns in self.recs:
                    self.art.link(
                        "IMPORTS", ns, target, **({"filter": r.filter} if r.filter else {})
                    )
            elif isinstance(r, Satisfy):
                pair = self._satisfy(ns, r, file)
                if pair is not None:
                    satisfied.append(pair)
            elif isinstance(r, Connect):
                self._connect(ns, r, file)
            elif isinstance(r, Reference):
                self._reference(ns, r, file)
        for by, req in satisfied:
            self._pass_on(by, req)
        for loc, names in metas.items():
            self.art.elements[loc].props["meta"] = ", ".join(dict.fromkeys(names))

    def _find(
        self,
        ns: str,
        ref: str,
        file: str,
        line: int,
        what: str,
        where: str = "",
        own: str | None = None,
        column: int = 0,
    ) -> str | None:
        """What ``ref`` names from ``ns`` (a warning when nothing); with ``own``,
        the element the same statement declared (at ``line`` and ``column``) is
        looked past."""
        avoid = None
        if own is not None:
            avoid = self.derived_at.get((ns, line, column)) or self.members.get(ns, {}).get(own)
        loc, why = self.resolve(ref, ns, True, avoid=avoid)
        if loc is None and why != "library":
            self.warn(file, line, f"unresolved {what} {ref!r}{where}: {why}")
        return loc

    def _tag(self, ns: str, r: Tag, file: str, metas: dict[str, list[str]]) -> None:
        """Metadata applied to an element: its name in the element's ``meta``, and a
        TAGGED link to the metadata definition when the model holds it."""
        if r.target is None:
            if ns not in self.recs:
                return  # metadata of a file's root namespace: no element to carry it
            target: str | None = ns
        else:
            target = self._find(ns, r.target, file, r.line, "annotated element")
        if target is None:
            return
        metas.setdefault(target, []).append(last_name(r.tag))
        found = self._find(ns, r.tag, file, r.line, "metadata")
        if found is not None and found != target:
            self.art.link("TAGGED", target, found)
            self._base_type(target, found)

    def _base_type(self, target: str, meta: str) -> None:
        """Semantic metadata (a user keyword, ``#failure x``): the element tagged
        inherits the members of the metadata's ``baseType`` (``:>> baseType =
        failures meta SysML::Usage;``), as the keyword makes it a kind of that."""
        base = self.member(meta, "baseType", True)
        if base is None:
            return
        value = self.recs[base].el.value
        m = _BASE.match(value) if isinstance(value, str) else None
        if m is None:
            return
        found, why = self.resolve(m.group(1), self.recs[base].owner, True)
        if found is not None and found != target:
            self.types.setdefault(target, []).append(found)
        elif why == "library":
            self.from_library.add(target)

    def _satisfy(self, ns: str, r: Satisfy, file: str) -> tuple[str, str] | None:
        req = self._find(
            ns,
            r.requirement,
            file,
            r.line,
            "requirement",
            " in satisfy",
            own=r.own,
            column=r.column,
        )
        if req is None:
            return None
        if self.recs[req].el.kind not in REQ_KINDS:
            self.warn(
                file,
                r.line,
                f"satisfy names {r.requirement!r}, which is a "
                f"{self.recs[req].el.kind}, not a requirement",
            )
            return None
        if r.by is None:
            if ns not in self.recs:
                self.warn(file, r.line, "satisfy outside any element needs 'by'")
                return None
            by = ns
        else:
            found = self._find(ns, r.by, file, r.line, "satisfier")
            if found is None:
                return None
            by = found
        if r.negated:  # `not satisfy`: kept, marked, and never passed on to a group
            self.art.link("SATISFIES", by, req, negated=True)
            return None
        self.art.link("SATISFIES", by, req)
        return by, req

    def _pass_on(self, by: str, group: str) -> None:
        """``by`` satisfies the requirements ``group`` holds, requires or references
        (``requirement references r``), transitively."""
        via = self.recs[group].loc.partition("/")[2]
        seen = {group}
        todo = [group]
        while todo:
            cur = todo.pop()
            grouped = [
                loc for loc in self.members.get(cur, {}).values() if self.recs[loc].owner == cur
            ]
            grouped += self.required.get(cur, ())
            for loc in grouped:
                if loc in seen or self.recs[loc].el.kind != "REQ":
                    continue
                seen.add(loc)
                self.art.link("SATISFIES", by, loc, via=via)
                todo.append(loc)

    def _connect(self, ns: str, r: Connect, file: str) -> None:
        ends = []
        for n, ref in enumerate((r.src, r.dst)):
            if r.edge in ("THEN", "TRANSITION") and ref in ("start", "done"):
                if ref == "done" or n == 1:
                    return  # the end of the enclosing behaviour: no element to link
                if ns not in self.recs:
                    return
                ends.append(ns)  # `start`: the enclosing behaviour itself
                continue
            loc = self._find(
                ns,
                ref,
                file,
                r.line,
                "connection end" if r.edge == "CONNECTS" else f"end of {r.edge}",
            )
            if loc is None:
                return
            ends.append(loc)
        props = dict(r.props)
        if r.name is not None:
            props["name"] = r.name
        if r.type is not None:
            props["type"] = r.type
        key = (r.edge, ends[0], ends[1])
        if r.edge == "TRANSITION" and key in self.art.links and self.art.links[key].props != props:
            self.warn(
                file,
                r.line,
                f"a second transition between the same states is "
                f"merged into the first ({ends[0].partition('/')[2]} "
                f"to {ends[1].partition('/')[2]})",
            )
        self.art.link(r.edge, ends[0], ends[1], **props)

    def _reference(self, ns: str, r: Reference, file: str) -> None:
        if ns not in self.recs:
            self.warn(
                file, r.line, f"{r.edge} at the top of a file has no element to start from: no link"
            )
            return
        target = self._find(
            ns, r.target, file, r.line, f"target of {r.edge}", own=r.own, column=r.column
        )
        if target is None:
            return
        if r.edge in _FEATURES and r.own is None:  # `perform a.b;`: ns now has a feature b
            self.featured.setdefault(ns, {}).setdefault(
                str(dict(r.props).get("as") or last_name(r.target)), target
            )
        src = ns
        if r.edge == "VERIFIES" and self.recs[ns].el.role == "objective" and self.recs[ns].owner:
            src = self.recs[ns].owner  # the case verifies what its objective names
        self.art.link(r.edge, src, target, **dict(r.props))
        if r.edge == "REQUIRES":
            self.required.setdefault(ns, []).append(target)


def to_artefacts(files: list[tuple[str, SysmlDoc]], root: str) -> Artefacts:
    """The elements and links of one model made of ``(relative path, document)`` pairs.

    Files are taken in path order, so the result does not depend on the order
    given. Each element's locator is ``sysml:<root>/<Qualified::Name>`` (the
    names of its owners and its own, ``::``-joined; a usage without a name goes
    by the feature it redefines, a requirement by its short id, an unnamed
    constraint or action node by its role and a number, e.g. ``require1``); its
    unit is ``sysml:<root>/<relative path>``. A second element with a qualified
    name already taken is kept under ``<name>-2`` (``-3``, ...) with a warning.
    Links (see the module doc): ``CONTAINS`` owner → owned, ``TYPED``,
    ``SPECIALIZES``, ``SUBSETS``, ``REDEFINES``, ``REFERENCES`` from the
    feature, ``SATISFIES`` satisfier → requirement, ``IMPORTS`` importing
    namespace → the imported element, edges between written ends, and edges
    from an element to the features it performs, requires, asserts ... A
    reference that resolves to nothing leaves its link out and adds a warning
    (names of the SysML standard library excepted).
    """
    model = _Model(root)
    ordered = sorted(files, key=lambda f: f[0])
    for _path, doc in ordered:
        model.art.warnings.extend(doc.warnings)
    for path, doc in ordered:
        model.place(path, doc.elements, doc.relations)
    model.link_all()
    return model.art


__all__ = ["SCHEME", "to_artefacts"]
