"""Name resolution across the files of one model: :class:`Scope`.

A reference is resolved from the namespace it is written in, as SysML scopes
names. Its first name is looked up in that namespace and then in each
enclosing one: owned members, inherited members (when asked: through typing,
specialisation, subsetting and redefinition, breadth first), aliases, then
that namespace's imports. Above a file's top-level elements is the file's own
root namespace (its top-level imports and aliases count for that file only),
and above that the global namespace: the top-level elements of every file.

An import brings what the imported namespace makes visible: its members and
aliases, and what its own public imports bring (an import without
``private`` is public), transitively; ``A::**`` brings ``A`` and everything
below it, ``A::*::**`` everything below ``A``. The target of an import is
resolved in the enclosing namespaces, with their imports, but not with the
imports of the namespace that holds it.

A name no scope holds falls back, last, to an element of the same file that
carries it alone, else to the one element of the model that carries it; two
unrelated files that declare the same name never make a name of a third file
ambiguous when that file's scope settles it. Each further name (``::`` or
``.``) is a member, owned or inherited, of the element found so far. Names of
the SysML standard library (:data:`LIBRARY_NAMES`, or anything a wildcard
import of a library package may bring) resolve to nothing, quietly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .clauses import unquote
from .doc import Alias, Import, SysmlElement

#: Packages of the SysML v2 standard library (kernel, systems and domain
#: libraries). A reference that starts with one of them, or that may come
#: through a wildcard import of one, is left unresolved without a warning.
LIBRARY_NAMES = frozenset(
    {
        # kernel and data types
        "Base",
        "Anything",
        "DataValue",
        "Occurrences",
        "Objects",
        "Performances",
        "Transfers",
        "Links",
        "Clocks",
        "Observation",
        "Triggers",
        "SpatialFrames",
        "KerML",
        "Metaobjects",
        "ControlPerformances",
        "TransitionPerformances",
        "StatePerformances",
        "FeatureReferencingPerformances",
        "ScalarValues",
        "Boolean",
        "String",
        "Integer",
        "Natural",
        "Positive",
        "Real",
        "Rational",
        "Complex",
        "Number",
        "NumericalValue",
        "ScalarValue",
        "Collections",
        "VectorValues",
        # functions
        "BaseFunctions",
        "DataFunctions",
        "ScalarFunctions",
        "BooleanFunctions",
        "StringFunctions",
        "NumericalFunctions",
        "IntegerFunctions",
        "NaturalFunctions",
        "RationalFunctions",
        "RealFunctions",
        "ComplexFunctions",
        "TrigFunctions",
        "ControlFunctions",
        "SequenceFunctions",
        "CollectionFunctions",
        "VectorFunctions",
        "OccurrenceFunctions",
        # systems library
        "SysML",
        "Items",
        "Parts",
        "Ports",
        "Connections",
        "Interfaces",
        "Allocations",
        "Actions",
        "Calculations",
        "Constraints",
        "Requirements",
        "Cases",
        "AnalysisCases",
        "VerificationCases",
        "UseCases",
        "Views",
        "StandardViewDefinitions",
        "Metadata",
        "Attributes",
        "Flows",
        "States",
        # quantities, units and the domain libraries
        "ISQ",
        "ISQBase",
        "ISQSpaceTime",
        "ISQMechanics",
        "ISQThermodynamics",
        "ISQElectromagnetism",
        "ISQLight",
        "ISQAcoustics",
        "ISQAtomicNuclear",
        "ISQCharacteristicNumbers",
        "ISQChemistryMolecular",
        "ISQCondensedMatter",
        "ISQInformation",
        "ISQRadiation",
        "SI",
        "SIPrefixes",
        "USCustomaryUnits",
        "Quantities",
        "Units",
        "MeasurementReferences",
        "MeasurementRefCalculations",
        "QuantityCalculations",
        "TensorCalculations",
        "VectorCalculations",
        "Time",
        "ModelingMetadata",
        "RiskMetadata",
        "ImageMetadata",
        "ParametersOfInterestMetadata",
        "AnalysisTooling",
        "SampledFunctions",
        "StateSpaceRepresentation",
        "TradeStudies",
        "ShapeItems",
        "SpatialItems",
        "CauseAndEffect",
        "RequirementDerivation",
        "Trig",
    }
)

#: Features every occurrence, action, state, flow or message has from the
#: library's base definitions (``start``, ``done``, ``localClock``, a message's
#: ``sourceEvent`` ...); a reference to one that the model does not declare is
#: a reference into the library.
IMPLICIT_FEATURES = frozenset(
    {
        "self",
        "that",
        "this",
        "start",
        "done",
        "result",
        "subject",
        "localClock",
        "startShot",
        "endShot",
        "portionOfLife",
        "suboccurrences",
        "timeSlices",
        "snapshots",
        "source",
        "target",
        "sourceEvent",
        "targetEvent",
        "payload",
        "sentMessage",
        "receivedMessage",
        "sender",
        "receiver",
        "participant",
        "performedActions",
        "exhibitedStates",
        "annotatedElement",
        "elements",
        "dimensions",
        "isMandatory",
    }
)

_REF_PART = re.compile(r"(::|\.)?('(?:[^'\\]|\\.)*'|[^:.']+)")


def split_ref(ref: str) -> list[str]:
    """``A::'b c'.d`` → ``['A', 'b c', 'd']`` (both separators walk into members)."""
    return [unquote(m.group(2)) for m in _REF_PART.finditer(ref)]


#: aliases (and imports) followed one inside another at most; a longer chain
#: resolves to nothing, like a cycle
MAX_CHAIN = 100


@dataclass(slots=True)
class Rec:
    """One element placed in the model: its locator, owner and source."""

    loc: str
    el: SysmlElement
    owner: str  # "" = the root namespace
    file: str


def file_root(file: str) -> str:
    """The key of a file's root namespace (never a locator: it starts with NUL)."""
    return "\0" + file


class Scope:
    """The name tables of a model and :meth:`resolve` over them.

    Namespaces are keyed by locator; ``""`` is the global namespace (every
    file's top-level elements) and :func:`file_root` keys each file's root
    namespace (its top-level elements, imports and aliases).
    """

    def __init__(self) -> None:
        self.recs: dict[str, Rec] = {}
        self.members: dict[str, dict[str, str]] = {"": {}}  # namespace → name → locator
        self.by_name: dict[str, list[str]] = {}  # simple name or short id → locators
        self.imports: dict[str, list[tuple[Import, str]]] = {}  # namespace → (import, file)
        self.aliases: dict[str, dict[str, Alias]] = {}  # namespace → name → alias
        self.import_target: dict[tuple[str, int], str | None] = {}
        self.alias_target: dict[tuple[str, str], str | None] = {}
        self._chain = 0  # aliases and imports being followed now, one inside the other
        self.library_alias: set[tuple[str, str]] = set()
        self._quiet = False  # set when a lookup met an alias of a library element
        self.types: dict[str, list[str]] = {}  # locator → what it inherits members from
        self.from_library: set[str] = set()  # elements that inherit from the library
        # import lookups done: what was found, and whether an alias of the library was met
        self._visible: dict[tuple[str, str, bool], tuple[str | None, bool]] = {}
        self._open: set[tuple[str, bool]] = set()  # import lookups under way (cycles)
        # features an element has by performing, exhibiting or including one by name
        # (`perform a.b;` gives it a feature `b`)
        self.featured: dict[str, dict[str, str]] = {}

    # -- namespaces -------------------------------------------------------------------

    def parent(self, ns: str) -> str | None:
        """The namespace enclosing ``ns`` (None above the global one)."""
        rec = self.recs.get(ns)
        if rec is not None:
            return rec.owner or file_root(rec.file)
        return "" if ns else None

    def scope_of(self, rec: Rec) -> str:
        """The namespace an element's own references are written in."""
        return rec.owner or file_root(rec.file)

    def file_of(self, ns: str) -> str | None:
        rec = self.recs.get(ns)
        if rec is not None:
            return rec.file
        return ns[1:] if ns.startswith("\0") else None

    def member(self, ns: str, name: str, inherit: bool, own: bool = True) -> str | None:
        """``name`` owned by ``ns`` (unless not ``own``), or (``inherit``) by what
        ``ns`` inherits from, breadth first; an alias of ``ns`` counts as owned."""
        if own:
            loc = (
                self.members.get(ns, {}).get(name)
                or self._alias(ns, name)
                or self.featured.get(ns, {}).get(name)
            )
            if loc is not None or not inherit:
                return loc
        seen = {ns}
        queue = list(self.types.get(ns, ()))
        while queue:
            t = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            loc = self.members.get(t, {}).get(name) or self.featured.get(t, {}).get(name)
            if loc is not None:
                return loc
            queue.extend(self.types.get(t, ()))
        return None

    def _alias(self, ns: str, name: str) -> str | None:
        alias = self.aliases.get(ns, {}).get(name)
        if alias is None:
            return None
        key = (ns, name)
        if key not in self.alias_target:
            self.alias_target[key] = None  # a cycle resolves to nothing
            if self._chain >= MAX_CHAIN:  # so does a chain this long (not a stack overflow)
                return None
            quiet = self._quiet
            self._chain += 1
            try:
                target, why = self.resolve(alias.target, ns, False)
            finally:
                self._chain -= 1
            self._quiet = quiet
            self.alias_target[key] = target
            if why == "library":
                self.library_alias.add(key)
        if key in self.library_alias:
            self._quiet = True  # the name stands for an element of the library
        return self.alias_target[key]

    def _target(self, ns: str, i: int, imp: Import) -> str | None:
        """What import ``i`` of ``ns`` names (resolved without ``ns``'s own imports)."""
        key = (ns, i)
        if key not in self.import_target:
            self.import_target[key] = None  # a cycle resolves to nothing
            if self._chain >= MAX_CHAIN:
                return None
            quiet = self._quiet
            self._chain += 1
            try:
                self.import_target[key] = self.resolve(imp.target, ns, False, own_imports=False)[0]
            finally:
                self._chain -= 1
                self._quiet = quiet
        return self.import_target[key]

    def _below(self, top: str, name: str) -> str | None:
        """The first element named ``name`` anywhere below ``top``, in pre-order."""
        stack = list(reversed(self.members.get(top, {}).values()))
        while stack:
            cur = stack.pop()
            loc = self.members.get(cur, {}).get(name)
            if loc is not None:
                return loc
            stack.extend(reversed(self.members.get(cur, {}).values()))
        return None

    def _via_imports(self, ns: str, name: str, public: bool = False) -> str | None:
        """``name`` as the imports of ``ns`` bring it (only its public ones when
        ``public``: what ``ns`` passes on to a namespace that imports it)."""
        key = (ns, name, public)
        done = self._visible.get(key)
        if done is not None:
            found, quiet = done
            self._quiet = self._quiet or quiet
            return found
        if (ns, public) in self._open or self._chain >= MAX_CHAIN:
            return None  # an import cycle: nothing new down this way
        before, self._quiet = self._quiet, False
        self._open.add((ns, public))
        self._chain += 1
        try:
            found = self._import_lookup(ns, name, public)
        finally:
            self._chain -= 1
            self._open.discard((ns, public))
            quiet, self._quiet = self._quiet, before or self._quiet
        if not self._open:  # a result met inside a cycle may be partial: keep only whole ones
            self._visible[key] = (found, quiet and found is None)
        return found

    def _import_lookup(self, ns: str, name: str, public: bool) -> str | None:
        for i, (imp, _file) in enumerate(self.imports.get(ns, ())):
            if public and imp.visibility in ("private", "protected"):
                continue
            target = self._target(ns, i, imp)
            if target is None:
                continue
            el = self.recs[target].el if target in self.recs else None
            named = el is not None and name in (el.name, el.short_id)
            if not imp.wildcard:  # A::B brings B
                if named:
                    return target
                continue
            if imp.wildcard == "**" and named:  # A::** brings A ...
                return target
            loc = self.members.get(target, {}).get(name) or self._alias(target, name)
            if loc is None and imp.wildcard != "*":  # ... and everything below it
                loc = self._below(target, name)
            if loc is None:
                loc = self._via_imports(target, name, public=True)
            if loc is not None:
                return loc
        return None

    def _inherits_library(self, loc: str) -> bool:
        """True when ``loc`` or what it inherits from is typed by, or specialises,
        an element of the standard library (its members may come from there)."""
        seen: set[str] = set()
        todo = [loc]
        while todo:
            cur = todo.pop()
            if cur in self.from_library:
                return True
            if cur not in seen:
                seen.add(cur)
                todo.extend(self.types.get(cur, ()))
        return False

    def _library_in_scope(self, ns: str | None, name: str) -> bool:
        """True when a wildcard import of a library package, or an alias of a
        library element, may bring ``name`` into ``ns``."""
        while ns is not None:
            for imp, _ in self.imports.get(ns, ()):
                segs = split_ref(imp.target)
                if segs[0] in LIBRARY_NAMES and (imp.wildcard or segs[-1] == name):
                    return True
            ns = self.parent(ns)
        return False

    def _fallback(self, first: str, ns: str, avoid: str | None) -> list[str]:
        """The elements a name no scope holds may mean: the file's own when it
        declares the name, else every element of the model that carries it."""
        cands = [c for c in dict.fromkeys(self.by_name.get(first, [])) if c != avoid]
        file = self.file_of(ns)
        own = [c for c in cands if self.recs[c].file == file]
        return own if len(own) == 1 else cands

    def resolve(
        self,
        ref: str,
        ns: str,
        inherit: bool,
        use_imports: bool = True,
        avoid: str | None = None,
        own_imports: bool = True,
    ) -> tuple[str | None, str]:
        """The locator ``ref`` names seen from namespace ``ns``, or None and why
        (``"library"`` for a name of the standard library). ``avoid`` is an
        element the first name must not resolve to (a feature that redefines
        another of the same name looks past itself); ``own_imports=False``
        leaves out the imports of ``ns`` itself (an import's own target)."""
        segs = split_ref(ref)
        cur: str | None = ns
        if segs[:1] == ["$"]:  # `$::A::B`: from the global namespace
            segs, cur = segs[1:], ""
        if not segs:
            return None, "empty reference"
        first = segs[0]
        self._quiet = False
        found: str | None = None
        while cur is not None:
            found = self.member(cur, first, inherit)
            if found is not None and found == avoid:
                found = self.member(cur, first, True, own=False)
            if found is None and use_imports and (own_imports or cur != ns):
                found = self._via_imports(cur, first)
                if found == avoid:
                    found = None
            if found is not None:
                break
            cur = self.parent(cur)
        if found is None and (self._quiet or (inherit and self._inherits_library(ns))):
            return None, "library"  # an alias of, or a feature inherited from, the library
        if found is None:
            cands = self._fallback(first, ns, avoid)
            if len(cands) != 1:
                if (
                    first in LIBRARY_NAMES
                    or first in IMPLICIT_FEATURES
                    or (use_imports and self._library_in_scope(ns, first))
                ):
                    return None, "library"
                if cands:
                    return None, f"{first!r} is ambiguous ({len(cands)} elements carry it)"
                return None, f"no element named {first!r} is visible"
            found = cands[0]
        for seg in segs[1:]:
            # a member, owned or inherited, or one a public import of ``found`` brings
            nxt = self.member(found, seg, True) or self._via_imports(found, seg, public=True)
            if nxt is None:
                if seg in IMPLICIT_FEATURES or self._inherits_library(found):
                    return None, "library"
                return None, f"{self.recs[found].el.name or found!r} has no member {seg!r}"
            found = nxt
        return found, ""


__all__ = ["IMPLICIT_FEATURES", "LIBRARY_NAMES", "Rec", "Scope", "file_root", "split_ref"]
