"""Model Snap: one model partitioned into a catalog session and interior sessions.

A big model (a SysML v2 model, or any ingested artefacts with a ``CONTAINS``
ownership tree) does not fit one Shape-sized session, and it should not be
one session per element either. :func:`plan_snap` cuts the ownership tree:

* the **catalog** ``<prefix>-cat`` holds the skeleton: packages, definitions
  (part, port, attribute and requirement definitions), requirements with their
  short ids, and any element whose subtree is too big to be an interior (or
  that owns something the catalog must hold); plus one ``SES`` node per
  interior session (``sid``, ``rows``, ``holds``), as in :mod:`memnet.strata`;
* each **interior** ``<prefix>-1`` … ``<prefix>-k`` holds whole ownership
  subtrees (a subtree is never split across sessions), packed in model order
  while the session's rows (nodes + edges, stubs included) stay within the
  budget - by default ``M``, so a default Recall can hold a whole interior;
* a link whose two ends live in different sessions is kept on both sides,
  each pointing at a ``STUB`` node that stands for the far end: ``ref`` (its
  locator), ``of`` (its kind), ``name`` and ``session`` (where it lives). In the
  catalog every stub is also linked ``-[:IN]->`` to the ``SES`` node of its
  session, so a Recall on a requirement walks ``REQ <-SATISFIES- STUB -IN->
  SES`` and names the interior that holds what satisfies it.

Nothing is lost: the elements of the catalog and the interiors, minus stubs
and ``SES`` nodes, are exactly the model's elements, and their links with each
stub read as its ``ref`` (``IN`` links dropped) are exactly the model's links
(:func:`unsnap` computes that union).

:func:`snap` writes a plan into a cabinet through :func:`memnet.ingest.sync`,
one Commit and one flush per session: snapping an unchanged model again
changes nothing, and a changed model changes only what moved. Interiors left
over from an earlier, bigger snap are dropped.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .cabinet import Cabinet
from .errors import InvalidArgument, MemNetError, PathNotFound, QueryError, SessionExists
from .ids import check_session_id
from .ingest.model import Artefacts, Element, Link, Warning_
from .ingest.sync import SyncResult, sync
from .ingest.sysml.doc import DEF_KINDS
from .session import LIMITS, Session
from .strata import catalog_id

#: kinds that always stay in the catalog (the skeleton a reader navigates by):
#: packages, every kind of definition, and requirements
CATALOG_KINDS = frozenset({"PKG", "REQ", *DEF_KINDS})
STUB_KIND = "STUB"
SES_KIND = "SES"
IN_TYPE = "IN"
OWNS = "CONTAINS"
#: the smallest budget a plan accepts: a unit and a stub with their links
MIN_BUDGET = 4
#: how many unit roots a SES node names in ``holds``
HOLDS_SHOWN = 8


@dataclass
class SnapPlan:
    """Where every element of a model goes, and each session's artefacts."""

    prefix: str
    budget: int
    catalog: Artefacts
    interiors: list[tuple[str, Artefacts]]
    home: dict[str, str]  # element locator -> session id
    rows: dict[str, int]  # interior session id -> its rows (nodes + edges)
    warnings: list[str] = field(default_factory=list)

    @property
    def catalog_id(self) -> str:
        return catalog_id(self.prefix)

    def sessions(self) -> list[tuple[str, Artefacts]]:
        """Interiors first, then the catalog (the order :func:`snap` writes)."""
        return [*self.interiors, (self.catalog_id, self.catalog)]


@dataclass(frozen=True)
class SnapResult:
    """What :func:`snap` did: the sessions it wrote and what each sync did."""

    catalog: str
    interiors: tuple[str, ...]
    results: dict[str, SyncResult]
    dropped: tuple[str, ...]
    rows: dict[str, int]
    replaced_roots: tuple[str, ...] = ()  # roots of an earlier snap, cleared
    warnings: tuple[Warning_, ...] = ()  # what the model's reader and the planner skipped
    failed: tuple[Warning_, ...] = ()  # model files left out because they do not parse

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.replaced_roots) or any(
            r.changed for r in self.results.values()
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the CLI's and MCP's JSON."""
        return {
            "catalog": self.catalog,
            "interiors": list(self.interiors),
            "rows": self.rows,
            "dropped": list(self.dropped),
            "changed": [sid for sid, r in self.results.items() if r.changed],
            "warnings": [str(w) for w in self.warnings],
            "failed": [str(w) for w in self.failed],
        }

    def summary(self) -> str:
        changed = (
            sum(1 for r in self.results.values() if r.changed)
            if not self.replaced_roots
            else len(self.results)
        )
        return (
            f"catalog {self.catalog}, {len(self.interiors)} interior session(s) "
            f"(largest {max(self.rows.values(), default=0)} rows); {changed} session(s) "
            f"changed"
            + (f", {len(self.dropped)} dropped" if self.dropped else "")
            + f"; {len(self.warnings)} warning(s)"
            + (f", {len(self.failed)} file(s) not ingested" if self.failed else "")
        )


# -- planning ---------------------------------------------------------------------
def _stub_locator(root: str, ref: str) -> str:
    scheme, _, rest = ref.partition(":")
    return f"stub:{root}/{scheme}/{rest.partition('/')[2] or rest}"


def _links_of(art: Artefacts) -> dict[str, list[Link]]:
    by: dict[str, list[Link]] = {}
    for lk in art.links.values():
        by.setdefault(lk.src, []).append(lk)
        if lk.dst != lk.src:
            by.setdefault(lk.dst, []).append(lk)
    return by


def _rows(members: set[str], links: Iterable[Link]) -> int:
    """Rows of a session holding ``members``: its nodes, the stubs for far
    ends, and every link with an end inside."""
    n_links = 0
    stubs: set[str] = set()
    for lk in links:
        n_links += 1
        for end in (lk.src, lk.dst):
            if end not in members:
                stubs.add(end)
    return len(members) + len(stubs) + n_links


def plan_snap(
    art: Artefacts,
    prefix: str,
    *,
    budget: int = LIMITS.max_rows,
    catalog_kinds: Iterable[str] = CATALOG_KINDS,
) -> SnapPlan:
    """Cut a model into a catalog and interiors (see the module doc)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < MIN_BUDGET:
        raise QueryError(f"budget must be an integer of at least {MIN_BUDGET} rows, got {budget!r}")
    cat_id = catalog_id(prefix)  # validates the prefix
    warnings: list[str] = []
    parent, children, rank = _ownership(art, warnings)
    by_elem = _links_of(art)
    roots = [loc for loc in sorted(art.elements) if loc not in parent]
    subtree, has_head = _subtrees(art, roots, children, frozenset(catalog_kinds), warnings)

    def cost(members: list[str]) -> int:
        ms = set(members)
        links = {lk.key: lk for m in members for lk in by_elem.get(m, ())}
        return _rows(ms, links.values())

    catalog: set[str] = set()
    units: list[list[str]] = []
    todo = list(reversed(roots))
    while todo:
        loc = todo.pop()
        members = subtree[loc]
        if has_head[loc] or cost(members) > budget:
            catalog.add(loc)
            todo.extend(reversed(children.get(loc, ())))
        else:
            units.append(members)
    groups = _pack(units, by_elem, budget)
    home = {loc: cat_id for loc in catalog}
    sids = []
    for i, g in enumerate(groups, 1):
        sid = check_session_id(f"{prefix}-{i}")  # every id checked before anything is written
        sids.append(sid)
        for loc in g:
            home[loc] = sid
    parts = _Parts(art, home, by_elem)
    interiors = []
    rows: dict[str, int] = {}
    for sid, g in zip(sids, groups, strict=True):
        out = parts.part(g, sid)
        interiors.append((sid, out))
        rows[sid] = len(out.elements) + len(out.links)
    cat = parts.part(sorted(catalog, key=rank.__getitem__), cat_id)
    for sid, g in zip(sids, groups, strict=True):
        unit_roots = [loc for loc in g if home.get(parent.get(loc, ""), "") != sid]
        names = [str(art.elements[r].props.get("name") or r.rpartition("/")[2]) for r in unit_roots]
        holds = ", ".join(names[:HOLDS_SHOWN]) + (" ..." if len(names) > HOLDS_SHOWN else "")
        cat.add(
            Element(
                f"snap:{art.root}/{sid}", SES_KIND, {"sid": sid, "rows": rows[sid], "holds": holds}
            )
        )
    for loc in sorted(e for e in cat.elements if cat.elements[e].kind == STUB_KIND):
        cat.link(IN_TYPE, loc, f"snap:{art.root}/{cat.elements[loc].props['session']}")
    return SnapPlan(prefix, budget, cat, interiors, home, rows, warnings)


def _ownership(
    art: Artefacts, warnings: list[str]
) -> tuple[dict[str, str], dict[str, list[str]], dict[str, int]]:
    """``(parent, children, rank)``: each element's owner (the first
    ``OWNS`` link to it; a second is warned about), each owner's children in
    model order, and each element's place in that order."""
    parent: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    for lk in sorted(art.links.values(), key=lambda x: x.key):
        if lk.type != OWNS:
            continue
        if lk.dst in parent:
            warnings.append(f"{lk.dst} has two owners; {parent[lk.dst]} kept")
            continue
        parent[lk.dst] = lk.src
        children.setdefault(lk.src, []).append(lk.dst)
    rank = {loc: i for i, loc in enumerate(sorted(art.elements))}
    for kids in children.values():
        kids.sort(key=rank.__getitem__)
    return parent, children, rank


def _subtrees(
    art: Artefacts,
    roots: list[str],
    children: dict[str, list[str]],
    heads: frozenset[str],
    warnings: list[str],
) -> tuple[dict[str, list[str]], dict[str, bool]]:
    """Each element's subtree members and whether one of them is of a
    catalog kind, bottom-up (iterative: ownership can be deep)."""
    subtree: dict[str, list[str]] = {}
    has_head: dict[str, bool] = {}
    seen: set[str] = set()
    stack: list[tuple[str, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        loc, done = stack.pop()
        if done:
            members = [loc]
            head = art.elements[loc].kind in heads
            for c in children.get(loc, ()):
                members.extend(subtree[c])
                head = head or has_head[c]
            subtree[loc] = members
            has_head[loc] = head
            continue
        if loc in seen:  # a cycle of CONTAINS: break it here
            warnings.append(f"{loc} owns itself through CONTAINS; cut there")
            subtree[loc], has_head[loc] = [loc], art.elements[loc].kind in heads
            continue
        seen.add(loc)
        stack.append((loc, True))
        stack.extend((c, False) for c in reversed(children.get(loc, ())) if c not in subtree)
    return subtree, has_head


def _pack(
    units: list[list[str]], by_elem: Mapping[str, Iterable[Link]], budget: int
) -> list[list[str]]:
    """Whole units packed into interiors, in model order, within the budget."""
    groups: list[list[str]] = []
    cur: list[str] = []
    cur_links: dict[tuple[str, str, str], Link] = {}
    for unit in units:
        trial = dict(cur_links)
        for m in unit:
            for lk in by_elem.get(m, ()):
                trial[lk.key] = lk
        if cur and _rows(set(cur) | set(unit), trial.values()) > budget:
            groups.append(cur)
            cur, trial = list(unit), {lk.key: lk for m in unit for lk in by_elem.get(m, ())}
        else:
            cur = cur + unit
        cur_links = trial
    if cur:
        groups.append(cur)
    return groups


class _Parts:
    """Builds the artefacts of one part of a snap (the catalog or an
    interior): its members, and their links with each end in another part
    read as a stub of it."""

    def __init__(
        self, art: Artefacts, home: Mapping[str, str], by_elem: Mapping[str, Iterable[Link]]
    ) -> None:
        self.art, self.home, self.by_elem = art, home, by_elem
        self.managed = tuple(sorted({lk.type for lk in art.links.values()} | {IN_TYPE}))
        self.schemes = tuple(sorted({*art.schemes, "stub", "snap"}))

    def stub(self, out: Artefacts, ref: str) -> str:
        loc = _stub_locator(self.art.root, ref)
        if loc not in out.elements:
            el = self.art.elements[ref]
            props: dict[str, Any] = {"ref": ref, "of": el.kind, "session": self.home[ref]}
            name = el.props.get("name")
            if isinstance(name, str):
                props["name"] = name
            out.add(Element(loc, STUB_KIND, props))
        return loc

    def part(self, members: Iterable[str], sid: str) -> Artefacts:
        art, home, by_elem = self.art, self.home, self.by_elem
        out = Artefacts(root=art.root, schemes=self.schemes, managed_types=self.managed)
        members = list(members)
        for loc in members:
            out.add(art.elements[loc])
        for lk in sorted(
            {lk.key: lk for m in members for lk in by_elem.get(m, ())}.values(), key=lambda x: x.key
        ):
            src = lk.src if home[lk.src] == sid else self.stub(out, lk.src)
            dst = lk.dst if home[lk.dst] == sid else self.stub(out, lk.dst)
            out.link(lk.type, src, dst, **lk.props)
        return out


def unsnap(parts: Iterable[Artefacts]) -> tuple[dict[str, Element], set[tuple[str, str, str]]]:
    """The model a set of snapped sessions holds: elements without stubs and
    ``SES`` nodes, and link keys with each stub read as its ``ref``."""
    parts = list(parts)
    ref: dict[str, str] = {}
    elements: dict[str, Element] = {}
    for p in parts:
        for loc, el in p.elements.items():
            if el.kind == STUB_KIND:
                ref[loc] = str(el.props["ref"])
            elif el.kind != SES_KIND:
                elements[loc] = el
    links = set()
    for p in parts:
        for t, s, d in p.links:
            if t == IN_TYPE and d.startswith("snap:"):
                continue
            links.add((t, ref.get(s, s), ref.get(d, d)))
    return elements, links


# -- writing ----------------------------------------------------------------------
def _foreign_catalog(st: Any) -> bool:
    """Whether a catalog session's store holds live nodes and none of them is
    a snapped element (a ``sysml:`` or ``snap:`` locator): not a snap's catalog."""
    live = list(st.live_node_ids())
    return bool(live) and not any(
        str(st.node_props(n).get("locator", "")).startswith(("sysml:", "snap:")) for n in live
    )


def load_model(model: str | os.PathLike[str] | Artefacts, *, strict: bool = True) -> Artefacts:
    """A model from a ``.sysml`` file or directory, or artefacts given as they are.

    With ``strict=False`` a file that does not parse is left out and listed in
    ``Artefacts.failed``; with ``strict`` it raises its error."""
    if isinstance(model, Artefacts):
        return model
    if not isinstance(model, (str, os.PathLike)):
        raise InvalidArgument(
            f"a model is a .sysml file or directory path, not {type(model).__name__}"
        )
    if not os.fspath(model):  # Path("") would be the working directory
        raise PathNotFound("the model path is empty", path="")
    from .ingest.sysml import scan_sysml

    return scan_sysml(model, strict=strict)


def _read_model(model: str | os.PathLike[str] | Artefacts, strict: bool) -> Artefacts:
    """The model, read; ``model_syntax`` when no file of it parses,
    ``bad_query`` when it has no elements at all."""
    art = load_model(model, strict=strict)
    if not art.elements:
        if art.failed and not isinstance(model, Artefacts):
            # nothing parsed: the first file's own error (model_syntax, with its
            # path, line and column) says more than "no elements"
            load_model(model, strict=True)
        failed = "; ".join(str(w) for w in art.failed[:3])
        raise QueryError(
            f"the model at {model!r} has no elements (no .sysml files, or "
            "nothing in them): nothing to snap" + (f" (not ingested: {failed})" if failed else "")
        )
    return art


def _earlier_snap(cabinet: Cabinet, plan: SnapPlan, prefix: str) -> tuple[set[str], set[str]]:
    """``(interiors, roots)`` of an earlier snap with this prefix, from its
    catalog; ``session_exists`` when a session the plan would write is not
    one of that snap's."""
    # only sessions this prefix's snaps made are synced or dropped: the
    # interiors its catalog lists, named <prefix>-<n> (a catalog edited by
    # hand could name any session)
    ours = re.compile(re.escape(prefix) + r"-[1-9][0-9]*")
    before: set[str] = set()
    old_roots: set[str] = set()
    foreign = False
    if cabinet.exists(plan.catalog_id):
        st = cabinet.open(plan.catalog_id).store
        for n in st.index.kind(SES_KIND):
            props = st.node_props(n) if not st.node_recycled(n) else None
            loc = str((props or {}).get("locator", ""))
            if props and "sid" in props and loc.startswith("snap:"):
                if ours.fullmatch(str(props["sid"])):
                    before.add(str(props["sid"]))
                old_roots.add(loc[len("snap:") :].rpartition("/")[0])
        foreign = not before and _foreign_catalog(st)
    if foreign:
        raise SessionExists(
            f"session {plan.catalog_id!r} exists and is not the catalog of a "
            f"snap with prefix {prefix!r}: nothing was written (choose another "
            "prefix)"
        )
    for sid, _part in plan.interiors:
        if sid not in before and cabinet.exists(sid):
            raise SessionExists(
                f"session {sid!r} exists and was not made by a snap with "
                f"prefix {prefix!r} (its catalog does not list it): nothing was "
                "written (choose another prefix, or drop that session)"
            )
    return before, old_roots


def _sync_all(
    cabinet: Cabinet,
    todo: list[tuple[str, Artefacts]],
    stale: list[str],
    progress: Callable[[int, int], None] | None,
) -> dict[str, SyncResult]:
    """Sync every session of the plan in memory, then write them all."""
    results: dict[str, SyncResult] = {}
    created: list[str] = []
    steps = 2 * len(todo)
    try:
        # every session is synced in memory first, and written only once all
        # are: a sync that fails (a cap, a bad model) leaves the sessions of
        # an earlier snap as they were
        synced = []
        for done, (sid, part) in enumerate(todo, 1):
            # a new session is built in memory and stored whole (adopt) with
            # the others: until then the cabinet holds no trace of it
            s = cabinet.open(sid) if cabinet.exists(sid) else Session(sid)
            for root in stale:  # an earlier snap of a model with another root: clear it
                sync(
                    s, Artefacts(root=root, schemes=part.schemes, managed_types=part.managed_types)
                )
            results[sid] = sync(s, part)
            synced.append(s)
            if progress is not None:
                progress(done, steps)
        for done, s in enumerate(synced, len(todo) + 1):
            if not s.journaling:  # built here: no cabinet keeps it yet
                cabinet.adopt(s)
                created.append(s.name)
            elif s.dirty:
                cabinet.flush(s)
            if progress is not None:
                progress(done, steps)
    except BaseException:
        for sid in created:  # leave no half-made snap behind (the first error is the one)
            with contextlib.suppress(MemNetError, OSError):
                cabinet.drop(sid)
        raise
    return results


def snap(
    cabinet: Cabinet,
    model: str | os.PathLike[str] | Artefacts,
    prefix: str,
    *,
    budget: int = LIMITS.max_rows,
    strict: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> SnapResult:
    """Partition ``model`` into ``<prefix>-cat`` and ``<prefix>-1..k`` in ``cabinet``.

    The model is read and planned before anything is written: a model that
    does not parse (``strict``), has no elements, or cannot be planned writes
    nothing (``model_syntax`` when no file of it parses, even without
    ``strict``; ``bad_query`` when it has no elements at all). With
    ``strict=False`` files that do not parse are left out and listed in
    ``SnapResult.failed`` (their elements are then absent from the sessions).
    Each session is synced (one Commit) in memory, a missing one built there;
    once every session is synced, they are written (a new one
    stored whole with ``Cabinet.adopt``), so a sync that fails (a cap
    exceeded, say) writes nothing and leaves the sessions of an earlier snap
    as they were. ``progress(done, total)`` counts steps, two a session (its
    sync, then its write). If a write fails part way, the sessions this call
    created are dropped again; the sessions it had already written keep
    their new state. Interiors of an
    earlier snap with the same prefix that this plan no longer needs are
    dropped (only ones the catalog lists, so nothing else is ever touched).
    A ``<prefix>-cat`` that is not a snap's catalog, or a ``<prefix>-<n>``
    the catalog does not list, is ``session_exists`` before anything is written.
    """
    if not isinstance(cabinet, Cabinet):
        raise InvalidArgument(f"snap needs a memnet.Cabinet, not {type(cabinet).__name__}")
    if progress is not None and not callable(progress):
        raise InvalidArgument("progress must be a function (done, total)")
    art = _read_model(model, strict)
    plan = plan_snap(art, prefix, budget=budget)
    before, old_roots = _earlier_snap(cabinet, plan, prefix)
    stale = sorted(old_roots - {art.root})
    results = _sync_all(cabinet, plan.sessions(), stale, progress)
    keep = {sid for sid, _ in plan.interiors}
    dropped = []
    for sid in sorted(before - keep):
        if sid != plan.catalog_id and cabinet.exists(sid):
            cabinet.drop(sid)
            dropped.append(sid)
    warnings = (*art.warnings, *(Warning_(art.root, 0, w) for w in plan.warnings))
    return SnapResult(
        plan.catalog_id,
        tuple(sid for sid, _ in plan.interiors),
        results,
        tuple(dropped),
        plan.rows,
        tuple(stale),
        warnings,
        tuple(art.failed),
    )


__all__ = [
    "CATALOG_KINDS",
    "SES_KIND",
    "STUB_KIND",
    "SnapPlan",
    "SnapResult",
    "load_model",
    "plan_snap",
    "snap",
    "unsnap",
]
