"""The public surface: names, error codes, docstring examples."""

from __future__ import annotations

import doctest

import pytest

import memnet
from memnet import errors


@pytest.mark.req("MN-REQ-13.1", "MN-REQ-15")
def test_all_names_exist_and_are_documented():
    assert len(set(memnet.__all__)) == len(memnet.__all__)
    for name in memnet.__all__:
        obj = getattr(memnet, name)
        if callable(obj) and not isinstance(obj, type(len)):
            assert obj.__doc__, f"memnet.{name} has no docstring"


@pytest.mark.req("MN-REQ-15")
def test_every_error_is_a_memnet_error_with_a_known_code():
    classes = [getattr(errors, n) for n in errors.__all__ if n[0].isupper() and n != "CODES"]
    for cls in classes:
        assert issubclass(cls, memnet.MemNetError)
        assert cls.code in memnet.CODES, cls
    # the family roots carry a member's code; every other class has its own
    codes = [c.code for c in classes if c not in (errors.CabinetError, errors.HostError)]
    assert len(codes) == len(set(codes)), "two error classes share a code"


@pytest.mark.req("MN-REQ-13.1")
def test_two_verbs_and_their_results():
    s = memnet.Session("api")
    r = s.commit("INSERT (t:TSK {title: 'Write the API test', status: 'open'})")
    assert isinstance(r, memnet.CommitResult) and set(r.ids) == {"t"} and r.version == 1
    shape = s.recall("TSK status:open")
    assert isinstance(shape, memnet.Shape)
    rc = shape.receipt
    for field in (
        "rows",
        "max_rows",
        "seed_mode",
        "seeds",
        "tokens",
        "etag",
        "holds_answer",
        "periphery",
    ):
        assert hasattr(rc, field)
    assert rc.seeds == (r.ids["t"],) and rc.rows == 1 and rc.holds_answer


@pytest.mark.parametrize(
    "module",
    [
        "memnet",
        "memnet.session",
        "memnet.errors",
        "memnet.tokens",
        "memnet.cabinet.base",
        "memnet.recall.delta",
        "memnet.gql.build",
        "memnet.gql.failure",
        "memnet.gql.literals",
        "memnet.gql.names",
    ],
)
@pytest.mark.req("MN-REQ-15")
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    import importlib

    monkeypatch.chdir(tmp_path)
    mod = importlib.import_module(module)
    failed, _ = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert failed == 0


def test_a_shape_keeps_the_graph_it_was_served_with(tmp_path):
    """A Shape's node patterns are built when first read, from the rows as the
    Recall saw them: a later Commit (or a hydrate's stored bytes) changes
    nothing in them, and they equal the parse of the Shape's text."""
    cab = memnet.Cabinet.open(str(tmp_path / "cab"))
    s = cab.create("keep")
    ids = s.commit(
        "INSERT (t:TSK {title: 'Keep the graph', status: 'open', n: 1}), "
        "(d:DEC {title: 'Lazy rows', tags: ['a', 'b']}), (t)-[r:IMPLEMENTS {w: 1}]->(d)"
    ).ids
    cab.flush(s)
    s = memnet.Cabinet.open(str(tmp_path / "cab")).open("keep")  # props still stored bytes
    first = s.recall("TSK")
    s.commit(
        f"SET {ids['t']}.title = 'Changed', {ids['t']}.n = 2 "
        f"SET {ids['d']}.tags = ['c'] SET {ids['r']}.w = 2"
    )
    second = s.recall("TSK")
    assert first.text != second.text
    want = memnet.parse(first.text).statements[0]
    assert first.insert == want and first.nodes[0].props == (
        ("n", 1),
        ("status", "open"),
        ("title", "Keep the graph"),
    )
    assert first.edges[0].props == (("w", 1),) and second.edges[0].props == (("w", 2),)
    assert second.insert == memnet.parse(second.text).statements[0]
    assert first == first and first != second and hash(first) == hash(first)
    with pytest.raises(AttributeError):
        first.text = "x"  # type: ignore[misc]
