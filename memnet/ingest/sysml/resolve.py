"""Name resolution across the files of one model: :class:`Scope`.

A reference is resolved from the namespace it is written in. Its first name is
looked up in that namespace and then in each enclosing one: owned members,
inherited members (when asked: through typing, specialisation, subsetting and
redefinition, breadth first), aliases, then that namespace's imports; last, in
the whole model when exactly one element carries that name. Each further name
(``::`` or ``.``) is a member, owned or inherited, of the element found so far.
Names of the SysML standard library (:data:`LIBRARY_NAMES`, or anything a
wildcard import of a library package may bring) resolve to nothing, quietly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .clauses import unquote
from .doc import Alias, Import, SysmlElement

#: Packages of the SysML v2 standard library (kernel, systems and domain
#: libraries). A reference that starts with one of them, or that may come
#: through a wildcard import of one, is left unresolved without a warning.
LIBRARY_NAMES = frozenset({
    # kernel and data types
    "Base", "Anything", "DataValue", "Occurrences", "Objects", "Performances", "Transfers",
    "Links", "Clocks", "Observation", "Triggers", "SpatialFrames", "KerML", "Metaobjects",
    "ControlPerformances", "TransitionPerformances", "StatePerformances",
    "FeatureReferencingPerformances", "ScalarValues", "Boolean", "String", "Integer",
    "Natural", "Positive", "Real", "Rational", "Complex", "Number", "NumericalValue",
    "ScalarValue", "Collections", "VectorValues",
    # functions
    "BaseFunctions", "DataFunctions", "ScalarFunctions", "BooleanFunctions", "StringFunctions",
    "NumericalFunctions", "IntegerFunctions", "NaturalFunctions", "RationalFunctions",
    "RealFunctions", "ComplexFunctions", "TrigFunctions", "ControlFunctions",
    "SequenceFunctions", "CollectionFunctions", "VectorFunctions", "OccurrenceFunctions",
    # systems library
    "SysML", "Items", "Parts", "Ports", "Connections", "Interfaces", "Allocations", "Actions",
    "Calculations", "Constraints", "Requirements", "Cases", "AnalysisCases",
    "VerificationCases", "UseCases", "Views", "StandardViewDefinitions", "Metadata",
    "Attributes", "Flows", "States",
    # quantities, units and the domain libraries
    "ISQ", "ISQBase", "ISQSpaceTime", "ISQMechanics", "ISQThermodynamics",
    "ISQElectromagnetism", "ISQLight", "ISQAcoustics", "ISQAtomicNuclear",
    "ISQCharacteristicNumbers", "ISQChemistryMolecular", "ISQCondensedMatter",
    "ISQInformation", "ISQRadiation", "SI", "SIPrefixes", "USCustomaryUnits", "Quantities",
    "Units", "MeasurementReferences", "MeasurementRefCalculations", "QuantityCalculations",
    "TensorCalculations", "VectorCalculations", "Time", "ModelingMetadata", "RiskMetadata",
    "ImageMetadata", "ParametersOfInterestMetadata", "AnalysisTooling", "SampledFunctions",
    "StateSpaceRepresentation", "TradeStudies", "ShapeItems", "SpatialItems", "CauseAndEffect",
    "RequirementDerivation", "Trig",
})

#: Features every occurrence, action, state, flow or message has from the
#: library's base definitions (``start``, ``done``, ``localClock``, a message's
#: ``sourceEvent`` ...); a reference to one that the model does not declare is
#: a reference into the library.
IMPLICIT_FEATURES = frozenset({
    "self", "that", "this", "start", "done", "result", "subject", "localClock", "startShot",
    "endShot", "portionOfLife", "suboccurrences", "timeSlices", "snapshots", "source",
    "target", "sourceEvent", "targetEvent", "payload", "sentMessage", "receivedMessage",
    "sender", "receiver", "participant", "performedActions", "exhibitedStates",
    "annotatedElement", "elements", "dimensions", "isMandatory",
})

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


class Scope:
    """The name tables of a model and :meth:`resolve` over them."""

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

    def member(self, ns: str, name: str, inherit: bool, own: bool = True) -> str | None:
        """``name`` owned by ``ns`` (unless not ``own``), or (``inherit``) by what
        ``ns`` inherits from, breadth first; an alias of ``ns`` counts as owned."""
        if own:
            loc = self.members.get(ns, {}).get(name) or self._alias(ns, name)
            if loc is not None or not inherit:
                return loc
        seen = {ns}
        queue = list(self.types.get(ns, ()))
        while queue:
            t = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            loc = self.members.get(t, {}).get(name)
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
        key = (ns, i)
        if key not in self.import_target:
            self.import_target[key] = None  # a cycle resolves to nothing
            if self._chain >= MAX_CHAIN:
                return None
            self._chain += 1
            try:
                self.import_target[key] = self.resolve(imp.target, ns, False,
                                                       use_imports=False)[0]
            finally:
                self._chain -= 1
        return self.import_target[key]

    def _via_imports(self, ns: str, name: str) -> str | None:
        for i, (imp, _file) in enumerate(self.imports.get(ns, ())):
            target = self._target(ns, i, imp)
            if target is None:
                continue
            if not imp.wildcard:
                if name in (self.recs[target].el.name, self.recs[target].el.short_id):
                    return target
                continue
            loc = self.members.get(target, {}).get(name) or self._alias(target, name)
            if loc is not None:
                return loc
            if imp.wildcard == "**":  # any depth below the target, first in pre-order
                stack = list(reversed(self.members.get(target, {}).values()))
                while stack:
                    cur = stack.pop()
                    loc = self.members.get(cur, {}).get(name)
                    if loc is not None:
                        return loc
                    stack.extend(reversed(self.members.get(cur, {}).values()))
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

    def _library_in_scope(self, ns: str, name: str) -> bool:
        """True when a wildcard import of a library package, or an alias of a
        library element, may bring ``name`` into ``ns``."""
        while True:
            for imp, _ in self.imports.get(ns, ()):
                segs = split_ref(imp.target)
                if segs[0] in LIBRARY_NAMES and (imp.wildcard or segs[-1] == name):
                    return True
            if not ns:
                return False
            ns = self.recs[ns].owner

    def resolve(self, ref: str, ns: str, inherit: bool, use_imports: bool = True,
                avoid: str | None = None) -> tuple[str | None, str]:
        """The locator ``ref`` names seen from namespace ``ns``, or None and why
        (``"library"`` for a name of the standard library). ``avoid`` is an
        element the first name must not resolve to (a feature that redefines
        another of the same name looks past itself)."""
        segs = split_ref(ref)
        if not segs:
            return None, "empty reference"
        first = segs[0]
        self._quiet = False
        found: str | None = None
        cur = ns
        while True:
            found = self.member(cur, first, inherit)
            if found is not None and found == avoid:
                found = self.member(cur, first, True, own=False)
            if found is None and use_imports:
                found = self._via_imports(cur, first)
                if found == avoid:
                    found = None
            if found is not None or not cur:
                break
            cur = self.recs[cur].owner
        if found is None and (self._quiet or (inherit and self._inherits_library(ns))):
            return None, "library"  # an alias of, or a feature inherited from, the library
        if found is None:
            cands = [c for c in dict.fromkeys(self.by_name.get(first, [])) if c != avoid]
            if len(cands) != 1:
                if first in LIBRARY_NAMES or first in IMPLICIT_FEATURES or \
                        (use_imports and self._library_in_scope(ns, first)):
                    return None, "library"
                if cands:
                    return None, f"{first!r} is ambiguous ({len(cands)} elements carry it)"
                return None, f"no element named {first!r} is visible"
            found = cands[0]
        for seg in segs[1:]:
            nxt = self.member(found, seg, True)
            if nxt is None:
                if seg in IMPLICIT_FEATURES or self._inherits_library(found):
                    return None, "library"
                return None, f"{self.recs[found].el.name or found!r} has no member {seg!r}"
            found = nxt
        return found, ""


__all__ = ["IMPLICIT_FEATURES", "LIBRARY_NAMES", "Rec", "Scope", "split_ref"]
