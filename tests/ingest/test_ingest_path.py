"""memnet ingest of SysML models and mixed trees (ingest_path)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memnet import Session
from memnet.errors import MemNetError
from memnet.ingest import ingest_path

pytestmark = pytest.mark.req("MN-REQ-18", "MN-REQ-21")

MODELS = Path(__file__).resolve().parents[2] / "sysml-models"


def test_a_model_directory_becomes_typed_nodes_and_edges_once(tmp_path: Path) -> None:
    s = Session("m")
    res = ingest_path(s, MODELS)
    assert len(res) == 2 and all(r.changed for r in res)  # the README, then the model
    kinds = s.store.live_kinds()
    assert kinds["DOC"] == 1
    assert kinds["REQ"] >= 20 and kinds["PART"] > 10 and kinds["PKG"] >= 2
    st = s.store
    types = {st.edge_type(e) for e in st.live_edge_ids()}
    assert {"CONTAINS", "TYPED", "SATISFIES", "CONNECTS"} <= types
    v = s.version
    assert not any(r.changed for r in ingest_path(s, MODELS))
    assert s.version == v
    shape = s.recall("REQ rid:MN-REQ-13.1")
    assert shape.receipt.matched == 1 and "SATISFIES" in shape.text


def test_one_sysml_file_and_a_mixed_tree(tmp_path: Path) -> None:
    s = Session("m")
    one = ingest_path(s, MODELS / "models" / "requirements.sysml")
    assert len(one) == 1 and one[0].created > 20
    assert one.tree is None and one.model is one[0] and one.changed
    tree = tmp_path / "proj"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text('"""A package."""\n')
    (tree / "pkg" / "core.py").write_text("import pkg\n\ndef run():\n    pass\n")
    shutil.copy(MODELS / "models" / "deploy.sysml", tree / "deploy.sysml")
    shutil.copy(MODELS / "models" / "requirements.sysml", tree / "requirements.sysml")
    t = Session("t")
    both = ingest_path(t, tree)
    assert len(both) == 2 and all(r.changed for r in both)
    assert (both.tree, both.model) == (both[0], both[1])
    assert both.tree.created >= 2 and both.model.created > both.tree.created
    kinds = t.store.live_kinds()
    assert kinds["MOD"] == 2 and kinds["PARTDEF"] > 5
    again = ingest_path(t, tree)
    assert not again.changed and again.model is not None


def test_a_statement_that_does_not_parse_costs_only_itself(tmp_path: Path) -> None:
    model = tmp_path / "m.sysml"
    model.write_text("package P {\n  part def A;\n  part x : ;\n  part def B { part y : A; }\n}\n")
    s = Session("m")
    res = ingest_path(s, model).model
    assert res is not None
    assert [str(w) for w in res.warnings] == [
        "m.sysml:3: syntax error at line 3, column 12: unexpected ';'; expected '~' or a name; "
        "the statement at line 3 is skipped"
    ]
    names = {p.get("name") for p in (s.store.node_props(n) for n in s.store.live_node_ids())}
    assert names == {"P", "A", "B", "y"}  # everything before and after the bad statement
    assert s.recall("PART y").receipt.seed_mode == "match"


def test_a_broken_model_writes_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n")
    (tree / "bad.sysml").write_text("package P { part def A;\n")  # the { never closes
    s = Session("m")
    with pytest.raises(MemNetError) as info:
        ingest_path(s, tree)
    assert info.value.code == "model_syntax"
    assert s.version == 0 and s.store.live_nodes == 0
    with pytest.raises(MemNetError) as info:
        ingest_path(s, tmp_path / "nowhere")
    assert info.value.code == "path_not_found"


def test_removing_the_last_model_file_recycles_the_model(tmp_path: Path) -> None:
    tree = tmp_path / "mix"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n")
    (tree / "m.sysml").write_text("package P { part def X; part x : X; }\n")
    s = Session("m")
    ingest_path(s, tree)
    assert s.store.live_kinds()["PART"] == 1
    (tree / "m.sysml").unlink()
    res = ingest_path(s, tree)
    assert len(res) == 2 and res[1].recycled == 3  # P, X and x
    assert s.store.live_kinds()["MOD"] == 1 and "PART" not in s.store.live_kinds()
    assert len(ingest_path(s, tree)) == 1  # nothing model-like left to mention


def test_model_walks_skip_symlinks_and_warn_on_twice_given_short_ids(tmp_path: Path) -> None:
    tree = tmp_path / "m"
    tree.mkdir()
    (tree / "a.sysml").write_text(
        "package P { requirement <'X-1'> a; requirement <'X-1'> b; part q { satisfy 'X-1'; } }\n"
    )
    (tree / "gone.sysml").symlink_to(tmp_path / "nowhere.sysml")
    s = Session("m")
    res = ingest_path(s, tree)
    warns = [str(w) for r in res for w in r.warnings]
    assert any("short id 'X-1' is given twice" in w for w in warns)
    assert s.store.live_kinds()["REQ"] == 2


def test_a_definition_may_be_named_by_its_short_id_alone(tmp_path: Path) -> None:
    from memnet.ingest.sysml import parse_sysml, to_artefacts

    doc = parse_sysml("package P { part def <'X1'>; part x : X1; }", "t.sysml")
    art = to_artefacts([("t.sysml", doc)], "m")
    assert art.elements["sysml:m/P::X1"].kind == "PARTDEF"
    assert ("TYPED", "sysml:m/P::x", "sysml:m/P::X1") in art.links
    with pytest.raises(MemNetError) as info:  # neither a short id nor a name
        parse_sysml("package P {\n  part def ;\n}", "t.sysml")
    assert info.value.code == "model_syntax" and "line 2" in str(info.value)
