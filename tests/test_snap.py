"""Model Snap: a model cut into a catalog session and interior sessions."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memnet import Cabinet, Session
from memnet.errors import MemNetError, QueryError
from memnet.ingest.model import Artefacts, Element
from memnet.ingest.sync import snapshot, sync
from memnet.ingest.sysml import scan_sysml
from memnet.snap import CATALOG_KINDS, SES_KIND, STUB_KIND, plan_snap, snap, unsnap

pytestmark = pytest.mark.req("MN-REQ-17")

MODELS = Path(__file__).resolve().parent.parent / "sysml-models"


@pytest.fixture(scope="module")
def model() -> Artefacts:
    return scan_sysml(MODELS)


def _held(cab: Cabinet, sid: str, scope: Artefacts) -> Artefacts:
    """What a session of the cabinet holds in the snap's scope, as artefacts."""
    s = cab.open(sid)
    els, links = snapshot(s, scope)
    out = Artefacts(root=scope.root, schemes=scope.schemes, managed_types=scope.managed_types)
    for loc, (_h, kind, labels, props) in els.items():
        out.add(Element(loc, kind, dict(props), tuple(labels)))
    for (t, a, b), (_h, props) in links.items():
        out.link(t, a, b, **props)
    return out


def _flat(model: Artefacts) -> tuple[dict[str, Any], set[tuple[str, str, str]]]:
    """The un-snapped ingest: the model synced into one session, read back."""
    s = Session("flat")
    sync(s, model)
    els, links = snapshot(s, model)
    return ({loc: (k, tuple(lb), dict(p)) for loc, (_h, k, lb, p) in els.items()}, set(links))


def test_the_union_of_catalog_and_interiors_is_the_unsnapped_ingest(
    tmp_path: Path, model: Artefacts
) -> None:
    cab = Cabinet.open(tmp_path / "cab")
    res = snap(cab, MODELS, "mn")
    assert res.catalog == "mn-cat" and len(res.interiors) >= 3
    plan = plan_snap(model, "mn")
    scope = plan.catalog  # same root, schemes (stub, snap) and managed types
    parts = [_held(cab, sid, scope) for sid in (*res.interiors, res.catalog)]
    els, links = unsnap(parts)
    flat_els, flat_links = _flat(model)
    assert {loc: (e.kind, e.labels, e.props) for loc, e in els.items()} == flat_els
    assert links == flat_links
    # every model element lives in exactly one session
    seen: dict[str, str] = {}
    for sid, part in zip((*res.interiors, res.catalog), parts, strict=True):
        for loc, el in part.elements.items():
            if el.kind not in (STUB_KIND, SES_KIND):
                assert loc not in seen, f"{loc} in {seen.get(loc)} and {sid}"
                seen[loc] = sid
    assert set(seen) == set(model.elements)


def test_no_interior_exceeds_its_budget_and_a_default_recall_holds_it(tmp_path: Path) -> None:
    cab = Cabinet.open(tmp_path / "cab")
    for budget, prefix in ((50, "a"), (20, "b")):
        res = snap(cab, MODELS, prefix, budget=budget)
        assert res.rows and max(res.rows.values()) <= budget
        for sid in res.interiors:
            s = cab.open(sid)
            rows = s.store.live_nodes + s.store.live_edges
            assert 0 < rows == res.rows[sid] <= budget
            if budget == 50:  # the default M: one default Recall holds the whole interior
                shape = s.recall("")
                assert shape.receipt.rows <= 50 and shape.receipt.tokens < 4000
    smaller = snap(cab, MODELS, "b", budget=20)
    assert not smaller.changed  # snapping again with the same budget writes nothing


def test_the_catalog_holds_the_skeleton_and_one_ses_per_interior(
    tmp_path: Path, model: Artefacts
) -> None:
    plan = plan_snap(model, "mn")
    kinds = {loc: el.kind for loc, el in plan.catalog.elements.items()}
    for loc, el in model.elements.items():
        if el.kind in CATALOG_KINDS:
            assert kinds.get(loc) == el.kind, loc
    ses = {el.props["sid"] for el in plan.catalog.elements.values() if el.kind == SES_KIND}
    assert ses == {sid for sid, _ in plan.interiors}
    # ownership subtrees are never split: an interior element's owner is in the
    # same interior unless the element is the root of a unit
    owner = {lk.dst: lk.src for lk in model.links.values() if lk.type == "CONTAINS"}
    for sid, part in plan.interiors:
        roots = [
            loc
            for loc in part.elements
            if part.elements[loc].kind != STUB_KIND and plan.home.get(owner.get(loc, "")) != sid
        ]
        for r in roots:  # a unit root's owner is in the catalog, never in another interior
            assert plan.home.get(owner.get(r, ""), "mn-cat") == "mn-cat"


def test_the_shell_view_names_each_ses_node_by_its_sid(tmp_path: Path) -> None:
    # issue 34: read_first says to start at an SES node, and the shell view
    # printed it bare (`(nac:SES)`), without the session id to open
    cab = Cabinet.open(tmp_path / "cab")
    res = snap(cab, MODELS, "mn")
    cat = cab.open("mn-cat")
    shape = cat.recall("SES", view="shell")
    sids = [dict(n.props).get("sid") for n in shape.nodes if n.labels[0] == SES_KIND]
    assert sids and all(sid in res.interiors for sid in sids), shape.text
    first = shape.receipt.seeds[0]
    sid = next(dict(n.props)["sid"] for n in shape.nodes if n.var == first)
    assert cab.open(sid).recall("").receipt.rows > 0  # the sid it names opens
    outline = cat.outline()  # the shell view by default
    assert all("sid" in dict(n.props) for n in outline.nodes if n.labels[0] == SES_KIND)


def test_a_recall_for_a_requirement_id_leads_to_the_interior_that_satisfies_it(
    tmp_path: Path, model: Artefacts
) -> None:
    cab = Cabinet.open(tmp_path / "cab")
    snap(cab, MODELS, "mn")
    plan = plan_snap(model, "mn")
    cat = cab.open("mn-cat")
    checked = 0
    for lk in model.links.values():
        if lk.type != "SATISFIES":
            continue
        rid = model.elements[lk.dst].props["rid"]
        home = plan.home[lk.src]
        text = cat.recall(f"REQ rid:{rid}").text
        assert f"rid: '{rid}'" in text
        if home == "mn-cat":
            assert f"locator: '{lk.src}'" in text
            continue
        # the stub of the satisfier names its session, and the SES node is there
        assert f"ref: '{lk.src}'" in text and f"session: '{home}'" in text, rid
        assert f"sid: '{home}'" in text, rid
        interior = cab.open(home)
        hit = interior.recall(f"MATCH (n {{locator: '{lk.src}'}})")
        assert hit.receipt.matched == 1, (rid, home)
        checked += 1
    assert checked >= 10


def test_resnap_after_a_change_touches_only_what_moved(tmp_path: Path) -> None:
    src = tmp_path / "models"
    shutil.copytree(MODELS, src)
    cab = Cabinet.open(tmp_path / "cab")
    first = snap(cab, src, "mn")
    versions = {sid: cab.session_info(sid).version for sid in (*first.interiors, first.catalog)}
    again = snap(cab, src, "mn")
    assert not again.changed
    assert {sid: cab.session_info(sid).version for sid in versions} == versions
    deploy = src / "models" / "deploy.sysml"
    text = deploy.read_text()
    assert "doc /*" in text
    deploy.write_text(text.replace("doc /*", "doc /* Edited.", 1))
    third = snap(cab, src, "mn")
    moved = [sid for sid, r in third.results.items() if r.changed]
    assert len(moved) == 1


def test_a_smaller_model_drops_the_interiors_it_no_longer_needs(
    tmp_path: Path, model: Artefacts
) -> None:
    cab = Cabinet.open(tmp_path / "cab")
    big = snap(cab, MODELS, "mn", budget=20)
    cab.create("mn-notes")  # not a snap session: never touched
    small = scan_sysml(MODELS / "models" / "requirements.sysml")
    res = snap(cab, small, "mn", budget=20)
    assert res.dropped and set(res.dropped) <= set(big.interiors)
    for sid in res.dropped:
        assert not cab.exists(sid)
    assert cab.exists("mn-notes")


def test_bad_budgets_and_prefixes_are_refused(model: Artefacts) -> None:
    with pytest.raises(QueryError):
        plan_snap(model, "mn", budget=3)
    with pytest.raises(QueryError):
        plan_snap(model, "mn", budget=True)  # type: ignore[arg-type]
    with pytest.raises(MemNetError) as info:
        plan_snap(model, "Bad Prefix")
    assert info.value.code == "invalid_session_id"


# -- any ownership tree with any links ----------------------------------------------
@st.composite
def trees(draw: Any) -> Artefacts:
    n = draw(st.integers(1, 120))
    kinds = ("PKG", "PART", "PORT", "ATTR", "PARTDEF", "REQ")
    art = Artefacts(
        root="m", schemes=("sysml",), managed_types=("CONTAINS", "TYPED", "SATISFIES", "CONNECTS")
    )
    locs = []
    for i in range(n):
        kind = draw(st.sampled_from(kinds)) if i else "PKG"
        loc = f"sysml:m/e{i:03d}"
        art.add(Element(loc, kind, {"name": f"e{i}"}))
        if i:
            art.link("CONTAINS", locs[draw(st.integers(0, i - 1))], loc)
        locs.append(loc)
    for _ in range(draw(st.integers(0, 2 * n))):
        a, b = draw(st.sampled_from(locs)), draw(st.sampled_from(locs))
        art.link(draw(st.sampled_from(("TYPED", "SATISFIES", "CONNECTS"))), a, b)
    return art


@settings(max_examples=60, deadline=None)
@given(trees(), st.integers(4, 60))
def test_any_model_snaps_into_a_partition_within_the_budget(art: Artefacts, budget: int) -> None:
    plan = plan_snap(art, "p", budget=budget)
    for _sid, part in plan.interiors:
        assert len(part.elements) + len(part.links) <= budget
        assert all(el.kind != "PKG" for el in part.elements.values())
    els, links = unsnap([plan.catalog, *(p for _s, p in plan.interiors)])
    assert set(els) == set(art.elements)
    assert links == set(art.links)
    assert set(plan.home) == set(art.elements)


def test_a_model_from_another_root_replaces_the_earlier_one(tmp_path: Path) -> None:
    cab = Cabinet.open(tmp_path / "cab")
    snap(cab, MODELS, "q")
    single = MODELS / "models" / "requirements.sysml"  # root 'requirements.sysml'
    res = snap(cab, single, "q")
    assert res.replaced_roots == ("sysml-models",) and res.changed
    model = scan_sysml(single)
    plan = plan_snap(model, "q")
    parts = [_held(cab, sid, plan.catalog) for sid in (*res.interiors, res.catalog)]
    els, links = unsnap(parts)
    assert set(els) == set(model.elements) and links == set(model.links)
    for sid in (*res.interiors, res.catalog):  # nothing of the old root is left anywhere
        s = cab.open(sid)
        locs = [str(s.store.node_props(n).get("locator", "")) for n in s.store.live_node_ids()]
        assert not [x for x in locs if "sysml-models" in x], sid
        assert s.store.live_nodes + s.store.live_edges <= (50 if sid != res.catalog else 10**6)
    assert set(cab_ids(cab)) == {"q-cat", *res.interiors}


def cab_ids(cab: Cabinet) -> list[str]:
    return [i.id for i in cab.sessions()]


def test_an_empty_model_or_an_impossible_id_writes_nothing(tmp_path: Path) -> None:
    cab = Cabinet.open(tmp_path / "cab")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(QueryError):
        snap(cab, empty, "p")
    many = Artefacts(root="m", schemes=("sysml",), managed_types=("CONTAINS",))
    many.add(Element("sysml:m/P", "PKG", {"name": "P"}))
    for i in range(1100):  # one part per interior at budget 4: interiors P-1 .. P-1100
        many.add(Element(f"sysml:m/P::p{i}", "PART", {"name": f"p{i}"}))
        many.link("CONTAINS", "sysml:m/P", f"sysml:m/P::p{i}")
    with pytest.raises(MemNetError) as info:  # a prefix that fits '-cat' but not '-1000'
        snap(cab, many, "x" * 60, budget=4)
    assert info.value.code == "invalid_session_id"
    with pytest.raises(MemNetError) as info:
        snap(cab, Path(__file__), "p")  # not a .sysml file
    assert info.value.code == "path_not_found"
    assert cab.sessions() == []


# -- a model with a file that does not parse ------------------------------------------
def _model_with_a_broken_file(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    shutil.copytree(MODELS / "models", model)
    (model / "broken.sysml").write_text(
        "package Broken {\n  part def A {\n    part x : ;\n  }\n}\n", encoding="utf-8"
    )
    (model / "views.sysml").write_text(
        "package Views { view def V; part def Seen :> Gone; }\n", encoding="utf-8"
    )
    (model / "unclosed.sysml").write_text("package Unclosed {\n  part def B;\n", encoding="utf-8")
    return model


def test_a_file_that_does_not_parse_is_left_out_and_listed(tmp_path: Path) -> None:
    model = _model_with_a_broken_file(tmp_path)
    cab = Cabinet.open(tmp_path / "cab")
    res = snap(cab, model, "mn", strict=False)
    assert [str(w) for w in res.failed] == [
        "unclosed.sysml:1: not ingested (model_syntax, column 18): '{' is never closed"
    ]
    assert [str(w) for w in res.warnings] == [
        "broken.sysml:3: syntax error at line 3, column 14: unexpected ';'; expected '~' or a "
        "name; the statement at line 3 is skipped",
        "views.sysml:1: unresolved supertype 'Gone' of PARTDEF 'Seen': no element named 'Gone' "
        "is visible",
    ]
    assert res.to_dict()["failed"] == [str(w) for w in res.failed]
    assert res.to_dict()["warnings"] == [str(w) for w in res.warnings]
    assert "2 warning(s), 1 file(s) not ingested" in res.summary()
    scope = plan_snap(scan_sysml(model, strict=False), "mn").catalog
    held = [_held(cab, sid, scope) for sid in (*res.interiors, res.catalog)]
    els, _links = unsnap(held)
    # everything but the unclosed file and the one bad statement is there
    assert "sysml:model/Views::Seen" in els and not [e for e in els if "Unclosed" in e]
    assert "sysml:model/Broken::A" in els and "sysml:model/Broken::A::x" not in els
    assert all(e.startswith("sysml:model/") for e in els)


def test_strict_snap_and_a_failing_model_write_nothing(tmp_path: Path) -> None:
    model = _model_with_a_broken_file(tmp_path)
    cab = Cabinet.open(tmp_path / "cab")
    with pytest.raises(MemNetError) as info:
        snap(cab, model, "mn")  # strict is the default of the Python API
    assert info.value.code == "model_syntax" and info.value.line == 3
    assert cab.sessions() == []
    only_broken = tmp_path / "only"
    only_broken.mkdir()
    shutil.copy(model / "unclosed.sysml", only_broken)
    # a model none of whose files parses is that file's model_syntax error
    # (issue 34: it was bad_query, "no elements"), with its place
    with pytest.raises(MemNetError) as nothing:
        snap(cab, only_broken, "mn", strict=False)
    assert nothing.value.code == "model_syntax" and nothing.value.line == 1
    assert nothing.value.path.endswith("unclosed.sysml") and cab.sessions() == []
    with pytest.raises(MemNetError) as one:
        snap(cab, only_broken / "unclosed.sysml", "mn", strict=False)
    assert one.value.code == "model_syntax" and "never closed" in one.value.message
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(QueryError):  # no file at all stays "nothing to snap"
        snap(cab, empty, "mn", strict=False)
    assert cab.sessions() == []


def test_a_snap_that_fails_while_writing_drops_the_sessions_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-snap whose third sync fails: the session it created is dropped,
    and the sessions of the earlier snap, one of which it had already synced
    again, are as that snap left them (nothing is written before every
    session is synced)."""
    import memnet.snap as snap_module

    cab = Cabinet.open(tmp_path / "cab")
    snap(cab, MODELS, "mn", budget=500)  # an earlier snap: mn-1 and mn-cat exist before
    before = cab_ids(cab)
    assert before == ["mn-1", "mn-cat"]
    kept = {sid: (cab.session_info(sid).version, cab.open(sid).recall("").text) for sid in before}
    calls = []

    def failing_sync(session: Session, art: Artefacts) -> Any:
        calls.append(session.name)
        if len(calls) == 3:
            raise QueryError("the disk is full (simulated)")
        return sync(session, art)

    monkeypatch.setattr(snap_module, "sync", failing_sync)
    with pytest.raises(QueryError):
        snap(cab, MODELS, "mn")
    assert calls == ["mn-1", "mn-2", "mn-3"]  # mn-2 was built in memory, never stored
    assert cab_ids(cab) == before
    assert {
        sid: (cab.session_info(sid).version, cab.open(sid).recall("").text) for sid in before
    } == kept
    # the same re-snap, not failing, does change mn-1
    monkeypatch.undo()
    snap(cab, MODELS, "mn")
    assert cab.session_info("mn-1").version > kept["mn-1"][0]


def test_a_snap_whose_write_fails_part_way_drops_what_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every session synced, then the second write fails: the session the
    first write stored is dropped again, nothing else is left, and the same
    snap then runs through."""
    cab = Cabinet.open(tmp_path / "cab")
    real = Cabinet.adopt
    stored: list[str] = []

    def failing_adopt(self: Cabinet, session: Session) -> int:
        if len(stored) == 1:
            raise OSError(28, "No space left on device (simulated)")
        stored.append(session.name)
        return real(self, session)

    monkeypatch.setattr(Cabinet, "adopt", failing_adopt)
    steps: list[tuple[int, int]] = []
    with pytest.raises(OSError):
        snap(cab, MODELS, "mn", progress=lambda d, t: steps.append((d, t)))
    assert stored == ["mn-1"] and cab_ids(cab) == []
    n = steps[0][1] // 2  # every session was synced before the first write
    assert [d for d, _t in steps] == list(range(1, n + 2)) and n >= 2
    monkeypatch.undo()
    res = snap(cab, MODELS, "mn")
    assert set(cab_ids(cab)) == {*res.interiors, res.catalog}


@pytest.mark.req("MN-REQ-15")
def test_snap_never_takes_over_or_drops_a_session_it_did_not_make(tmp_path: Path) -> None:
    """A session named like an interior that no snap of the prefix made, a
    catalog that is some other session, and a catalog edited to list another
    session: snap refuses or leaves them alone, writing nothing."""
    cab = Cabinet.open(tmp_path / "cab")
    mine = cab.create("mn-2")
    mine.commit("INSERT (t:TSK {title: 'mine'})")
    cab.flush(mine)
    with pytest.raises(MemNetError) as e:
        snap(cab, MODELS, "mn")
    assert e.value.code == "session_exists" and "'mn-2'" in e.value.message
    assert cab_ids(cab) == ["mn-2"]
    other = cab.create("zz-cat")
    other.commit("INSERT (t:TSK {title: 'not a catalog'})")
    cab.flush(other)
    with pytest.raises(MemNetError) as e:
        snap(cab, MODELS, "zz")
    assert e.value.code == "session_exists" and cab_ids(cab) == ["mn-2", "zz-cat"]
    # a catalog edited by hand to list a session of the user's: never dropped
    snap(cab, MODELS, "pp", budget=500)
    work = cab.create("work")
    work.commit("INSERT (t:TSK {title: 'kept'})")
    cab.flush(work)
    cat = cab.open("pp-cat")
    cat.commit(
        "INSERT (s:SES {sid: 'work', locator: 'snap:x/work'}), "
        "(b:SES {sid: 'Bad Id', locator: 'snap:x/bad'})"
    )
    cab.flush(cat)
    snap(cab, MODELS, "pp", budget=500)
    assert "work" in cab_ids(cab) and cab.open("work").version == 1
    with pytest.raises(MemNetError) as e:
        snap(cab, "", "pp")
    assert e.value.code == "path_not_found"
