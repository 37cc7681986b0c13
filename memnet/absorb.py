"""Absorb (Path-B): export a bounded slice of a member session, join it into a lead.

Absorb is a join between sessions, kept apart from Commit on purpose: a
member's slice goes through :class:`ImportGuard` and :func:`import_slice`,
never through ``Session.commit``, and ``import_slice`` refuses a goldfish Δ.

* :func:`export_working_memory_slice` walks from the anchors (the same bounded
  walk as Recall, without the LAW rules) with a budget of ``M × |anchors|``
  rows by default - the one place that budget is allowed - and refuses to
  export a whole session.
* :class:`WorkingMemorySlice` is plain JSON (``model_dump_json``), so two
  machines can exchange it.
* :func:`import_slice` joins a slice atomically - one new version of the lead,
  or nothing - under an ``id_policy``:

  ``keep``    handles kept; any handle already minted in the lead refuses all;
  ``reject``  new handles, but the import is refused if any incoming node is
              already in the lead (same ``locator`` property, or imported before
              from the same member handle);
  ``remint``  new handles, edges rewritten; every imported node carries its
              origin (``origin: 'member/handle'``);
  ``merge``   (the default) a node the lead already holds - same ``locator``,
              imported before from the same member handle (``origin``), or,
              without a locator, the only node of its kind with the same
              name-like value - is updated in place; the rest is added as under
              ``remint``; edges between held nodes are matched by type and ends.
              Absorbing the same slice again changes nothing (no new version).
              The policy lives in :mod:`memnet.absorb_merge`.

Example::

    >>> import memnet
    >>> member = memnet.Session("member")
    >>> ids = member.commit("INSERT (a:TSK {title: 'found it'})-[:TOUCHES]->"
    ...                     "(b:MOD {path: 'x.py'}), (c:DEC {title: 'elsewhere'})").ids
    >>> sl = memnet.export_working_memory_slice(member, [ids["a"]])
    >>> lead = memnet.Session("lead")
    >>> memnet.import_slice(lead, sl).created
    3
    >>> memnet.import_slice(lead, sl).changed   # merge: the second time, nothing
    False
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._version import __version__
from .absorb_merge import MERGE_KEYS, AbsorbResult, engine_props, merge, origin
from .errors import AbsorbRejected, InputTooLarge, InvalidArgument, MemNetError
from .gql import ast
from .graph.store import edge_handle, node_handle, parse_handle
from .ids import check_session_id
from .recall.seed import match
from .recall.walk import shape_walk
from .session import LIMITS, Session

FORMAT: Final = "memnet.slice/1"
MAX_SLICE_ROWS = 5_000  # nodes + edges in one slice
MAX_SLICE_BYTES = 4 * 1024 * 1024
#: The ids a ``keep`` slice may ask for past the lead's next ones: each id
#: skipped costs a placeholder (see :func:`memnet.commit.import_elements`).
MAX_KEEP_GAP = 4 * MAX_SLICE_ROWS
POLICIES = ("keep", "reject", "remint", "merge")
DEFAULT_POLICY = "merge"

Scalar = bool | int | float | str  # bool first: pydantic keeps true as bool


class SliceNode(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    handle: str
    kind: str
    labels: list[str] = Field(default_factory=list)
    props: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    nick: str | None = None
    recycled: bool = False


class SliceEdge(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    handle: str
    type: str
    src: str
    dst: str
    props: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    recycled: bool = False


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    session: str
    version: int
    anchors: list[str]
    hops: int
    budget: int
    exported_at: float
    memnet: str = __version__


class WorkingMemorySlice(BaseModel):
    """A bounded slice of one member session, with its provenance."""

    model_config = ConfigDict(extra="forbid", strict=True)
    format: Literal["memnet.slice/1"] = FORMAT
    provenance: Provenance
    nodes: list[SliceNode]
    edges: list[SliceEdge]

    def to_json(self) -> str:
        return self.model_dump_json(indent=1)

    @classmethod
    def from_json(cls, text: str | bytes) -> WorkingMemorySlice:
        """Parse and validate a slice file (strict types; see ImportGuard)."""
        if len(text) > MAX_SLICE_BYTES:
            raise InputTooLarge(
                f"the slice is {len(text)} bytes; the cap is {MAX_SLICE_BYTES}",
                length=len(text),
                cap=MAX_SLICE_BYTES,
            )
        try:
            data = json.loads(text)
        except ValueError as e:
            raise AbsorbRejected(f"the slice is not JSON: {e}") from None
        except RecursionError:
            raise AbsorbRejected(_TOO_DEEP) from None
        return _validate(data)


_TOO_DEEP = "the slice nests lists or objects too deeply to be a slice (a slice nests four levels)"


def _validate(data: Any) -> WorkingMemorySlice:
    try:
        # JSON has no tuples and no int/float distinction beyond the literal,
        # so validate in JSON mode: 1 stays int, 1.0 stays float, true stays bool
        return WorkingMemorySlice.model_validate_json(json.dumps(data, allow_nan=False))
    except (ValidationError, ValueError, TypeError) as e:
        first = str(e).splitlines()
        raise AbsorbRejected(
            "the slice does not match the slice schema: " + " ".join(first[:3])
        ) from None
    except RecursionError:
        raise AbsorbRejected(_TOO_DEEP) from None


def _json_value(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


# -- export ------------------------------------------------------------------------
def export_working_memory_slice(
    member: Session,
    anchors: list[str],
    *,
    hops: int = 2,
    budget: int | None = None,
    fanout: int = LIMITS.fanout,
) -> WorkingMemorySlice:
    """A bounded slice of ``member`` around ``anchors`` (live node handles).

    ``budget`` (rows) defaults to ``M × |anchors|`` with M = 50; a slice that
    would hold every live node of the member is refused (never absorb a whole
    session).
    """
    if not isinstance(member, Session):
        raise InvalidArgument(f"the member must be a memnet.Session, not {type(member).__name__}")
    if isinstance(anchors, str):  # one handle, not its letters
        raise InvalidArgument(f"anchors is a list of handles: [{anchors!r}], not {anchors!r}")
    if not anchors:
        raise AbsorbRejected("a slice needs at least one anchor handle")
    for what, v in (("budget", budget), ("hops", hops), ("fanout", fanout)):
        if v is not None and type(v) is not int:
            raise InvalidArgument(f"{what} must be a whole number, not {v!r}")
    if budget is None:
        budget = LIMITS.max_rows * len(anchors)
    if not 1 <= budget <= MAX_SLICE_ROWS:
        raise AbsorbRejected(f"budget must be 1 to {MAX_SLICE_ROWS} rows, got {budget}")
    if not 0 <= hops <= LIMITS.k_max:
        raise AbsorbRejected(f"hops must be 0 to {LIMITS.k_max}, got {hops}")
    if not 1 <= fanout <= LIMITS.fanout_max:
        raise AbsorbRejected(f"fanout must be 1 to {LIMITS.fanout_max}, got {fanout}")
    st = member.store
    ids: list[int] = []
    for h in anchors:
        ref = st.resolve(h) if isinstance(h, str) else None
        if ref is None or ref[0] != "n" or st.node_recycled(ref[1]):
            raise AbsorbRejected(f"anchor {h!r} is not a live node of session {member.name!r}")
        if ref[1] not in ids:
            ids.append(ref[1])
    with member.lock:
        walk = shape_walk(st, tuple(ids), k=hops, max_rows=budget, fanout=fanout, laws=False)
        if len(walk.nodes) >= st.live_nodes:
            raise AbsorbRejected(
                f"the slice would cover the whole of session {member.name!r} "
                f"({st.live_nodes} nodes); Absorb takes a bounded slice, never a whole session"
            )
        nodes = [
            SliceNode(
                handle=node_handle(n),
                kind=st.node_kind(n),
                labels=list(st.extra_labels(n)),
                props={k: _json_value(v) for k, v in st.node_props(n).items()},
                nick=st.node_nick(n),
            )
            for n in walk.nodes
        ]
        edges = [
            SliceEdge(
                handle=edge_handle(e),
                type=st.edge_type(e),
                src=node_handle(st.edge_ends(e)[0]),
                dst=node_handle(st.edge_ends(e)[1]),
                props={k: _json_value(v) for k, v in st.edge_props(e).items()},
            )
            for e in walk.edges
        ]
        prov = Provenance(
            session=member.name,
            version=member.version,
            anchors=[node_handle(n) for n in ids],
            hops=hops,
            budget=budget,
            exported_at=time.time(),
        )
    return WorkingMemorySlice(provenance=prov, nodes=nodes, edges=edges)


# -- the guard ---------------------------------------------------------------------
class ImportGuard:
    """Checks a slice before anything is written: schema and value types, size
    caps, no dangling edge, no recycled element, provenance present, and id
    collisions judged by the policy. Raises :class:`AbsorbRejected`."""

    def __init__(self, *, max_rows: int = MAX_SLICE_ROWS) -> None:
        if type(max_rows) is not int or not 1 <= max_rows <= MAX_SLICE_ROWS:
            raise InvalidArgument(
                f"max_rows must be a whole number from 1 to {MAX_SLICE_ROWS}, not {max_rows!r}"
            )
        self.max_rows = max_rows

    def check(self, lead: Session, slc: Any, id_policy: str) -> WorkingMemorySlice:
        if isinstance(slc, (ast.Delta, str)) and not (
            isinstance(slc, str) and slc.lstrip().startswith("{")
        ):
            raise AbsorbRejected(
                "Absorb joins a working-memory slice; a goldfish Δ goes through Session.commit"
            )
        if id_policy not in POLICIES:
            raise AbsorbRejected(
                f"id_policy must be one of {', '.join(POLICIES)}, got {id_policy!r}"
            )
        checked: WorkingMemorySlice
        if isinstance(slc, (str, bytes)):
            checked = WorkingMemorySlice.from_json(slc)
        elif isinstance(slc, WorkingMemorySlice):
            checked = _validate(slc.model_dump(mode="json"))
        else:
            checked = _validate(slc)
        slc = checked
        prov = slc.provenance
        try:
            check_session_id(prov.session)
        except MemNetError:
            raise AbsorbRejected(f"provenance names a bad session id {prov.session!r}") from None
        rows = len(slc.nodes) + len(slc.edges)
        if rows > self.max_rows:
            raise AbsorbRejected(f"the slice holds {rows} rows; the cap is {self.max_rows}")
        if not slc.nodes:
            raise AbsorbRejected("the slice holds no nodes")
        handles: set[str] = set()
        for n in slc.nodes:
            _check_element(n, "n", "node", handles)
        if not prov.anchors or not set(prov.anchors) <= handles:
            raise AbsorbRejected("the provenance anchors must be nodes of the slice")
        seen_edges: set[str] = set()
        for e in slc.edges:
            _check_element(e, "e", "edge", seen_edges)
            if e.src not in handles or e.dst not in handles:
                raise AbsorbRejected(
                    f"edge {e.handle} dangles: {e.src} or {e.dst} is not in the slice"
                )
        st = lead.store
        if id_policy == "keep":
            taken = [h for h in list(handles) + list(seen_edges) if st.resolve(h) is not None]
            if taken:
                raise AbsorbRejected(
                    f"id_policy keep: {len(taken)} handle(s) already exist in "
                    f"{lead.name!r} (e.g. {sorted(taken)[0]}); nothing imported"
                )
            for what, kept, nxt in (
                ("node", handles, st.next_node),
                ("edge", seen_edges, st.next_edge),
            ):
                _check_gap(lead, what, kept, nxt)
        elif id_policy == "reject":
            dup = _already_there(lead, slc)
            if dup:
                raise AbsorbRejected(
                    f"id_policy reject: {dup} is already in {lead.name!r}; nothing imported"
                )
        return checked


def _check_gap(lead: Session, what: str, kept: set[str], nxt: int) -> None:
    """Refuse a keep slice whose ids would leave more than MAX_KEEP_GAP ids of
    ``what`` to fill with placeholders past the lead's next id ``nxt``."""
    if not kept:
        return
    top = max(parse_handle(h)[1] for h in kept)  # type: ignore[index]  # checked handles
    gap = top + 1 - nxt - len(kept)
    if gap > MAX_KEEP_GAP:
        raise AbsorbRejected(
            f"id_policy keep: the slice's {what} handles run to id {top}, which would leave "
            f"{gap} ids of {lead.name!r} to fill with placeholders (at most {MAX_KEEP_GAP}); "
            "import it with id_policy remint instead",
            gap=gap,
            cap=MAX_KEEP_GAP,
        )


def _check_element(el: SliceNode | SliceEdge, prefix: str, what: str, seen: set[str]) -> None:
    """A well-formed, unique, live handle with finite numbers; adds it to ``seen``."""
    h = parse_handle(el.handle)
    if h is None or h[0] != prefix or el.handle in seen:
        raise AbsorbRejected(f"bad or repeated {what} handle {el.handle!r}")
    seen.add(el.handle)
    if el.recycled:
        raise AbsorbRejected(f"{what} {el.handle} is recycled; slices carry live elements")
    _check_values(el.props, el.handle)


def _check_values(props: dict[str, Any], where: str) -> None:
    for k, v in props.items():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, float) and not math.isfinite(x):
                raise AbsorbRejected(f"{where}.{k} is not a finite number")


def _already_there(lead: Session, slc: WorkingMemorySlice) -> str | None:
    """The first incoming node the lead already holds, by locator or origin."""
    st = lead.store
    for n in slc.nodes:
        for key, value in (("locator", n.props.get("locator")), ("origin", origin(slc, n.handle))):
            if not isinstance(value, str):
                continue
            if match(st, ast.SeedQuery(props=((key, value),)), 1).seeds:  # index, no scan
                return f"node {n.handle} ({key} {value!r})"
    return None


# -- import ------------------------------------------------------------------------
def import_slice(
    lead: Session, slc: Any, id_policy: str = DEFAULT_POLICY, *, guard: ImportGuard | None = None
) -> AbsorbResult:
    """Join a slice into ``lead`` atomically: one new version, or nothing.

    ``slc`` is a :class:`WorkingMemorySlice`, its JSON text, or the parsed
    JSON. See the module docstring for the policies (``merge`` by default,
    see :func:`memnet.absorb_merge.merge` and ``docs/absorb.md``).
    """
    if not isinstance(lead, Session):
        raise InvalidArgument(f"the lead must be a memnet.Session, not {type(lead).__name__}")
    if guard is not None and not isinstance(guard, ImportGuard):
        raise InvalidArgument(f"guard must be a memnet.ImportGuard, not {type(guard).__name__}")
    slc = (guard or ImportGuard()).check(lead, slc, id_policy)
    if id_policy == "merge":
        with lead.lock:
            return merge(lead, slc)
    index = {n.handle: i for i, n in enumerate(slc.nodes)}
    keep = id_policy == "keep"
    nodes = []
    for n in slc.nodes:
        props = engine_props(n.props)
        if not keep:
            props["origin"] = origin(slc, n.handle)
        ref = parse_handle(n.handle)
        nodes.append((ref[1] if keep and ref else None, n.kind, tuple(n.labels), props, n.nick))
    edges = []
    for e in slc.edges:
        props = engine_props(e.props)
        ref = parse_handle(e.handle)
        edges.append((ref[1] if keep and ref else None, e.type, index[e.src], index[e.dst], props))
    result, nids, eids = lead.import_batch(nodes, edges)
    ids = {n.handle: node_handle(nid) for n, nid in zip(slc.nodes, nids, strict=True)}
    ids.update({e.handle: edge_handle(eid) for e, eid in zip(slc.edges, eids, strict=True)})
    return AbsorbResult(ids=ids, version=result.version, created=len(slc.nodes) + len(slc.edges))


__all__ = [
    "AbsorbRejected",
    "AbsorbResult",
    "DEFAULT_POLICY",
    "ImportGuard",
    "MERGE_KEYS",
    "POLICIES",
    "Provenance",
    "SliceEdge",
    "SliceNode",
    "WorkingMemorySlice",
    "export_working_memory_slice",
    "import_slice",
]
