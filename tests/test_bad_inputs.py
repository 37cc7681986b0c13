"""Bad inputs through the Python API: each one a coded MemNetError, the session
unchanged (issue 11: lone surrogate escapes, q of the wrong type, a list value
over the text cap, a slice file nested without end)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import memnet
from memnet import MemNetError, Session, export_working_memory_slice, import_slice
from memnet.commit import MAX_STRING

ERRORS = "MN-REQ-15"


def _session() -> Session:
    s = Session("bad")
    s.commit(
        "INSERT (t:TSK {title: 'fix pricing', status: 'open'})-[:TOUCHES]->"
        "(m:MOD {path: 'shop/pricing.py'})"
    )
    return s


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "q",
    [
        r"TSK status:'\uD800'",
        r"MATCH (n {a:'\uDFFF'})",
        r"TSK 'x\uD83Dy'",
        r"TSK title~'\uDE00'",
        r"MATCH (n:TSK) WHERE n.title CONTAINS '\uDBFF' LIMIT 2",
    ],
)
def test_a_lone_surrogate_escape_in_q_is_gql_syntax(q: str) -> None:
    s = _session()
    with pytest.raises(MemNetError) as e:
        s.recall(q)
    assert e.value.code == "gql_syntax" and "surrogate" in e.value.message
    assert e.value.details["line"] == 1 and q[e.value.details["column"] - 1] == "\\"


@pytest.mark.req(ERRORS)
def test_a_lone_surrogate_escape_in_a_delta_is_gql_syntax_and_a_pair_is_one_character() -> None:
    s = _session()
    for delta in (
        r"INSERT (t:TSK {title: 'a\uD800'})",
        r"SET na1.title = '\uDFFF\uD800'",
        r"SET na1.tags = ['ok', '\uD83D x']",
    ):
        with pytest.raises(MemNetError) as e:
            s.commit(delta)
        assert e.value.code == "gql_syntax", delta
    assert s.version == 1
    s.commit(r"SET na1.title = 'fix \uD83D\uDE00 pricing'")
    assert s.store.node_props(1)["title"] == "fix \U0001f600 pricing"
    assert s.recall(r"TSK title:'fix \uD83D\uDE00 pricing'").receipt.matched == 1


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("q", [None, 123, b"TSK", 1.5, ["TSK"], object()])
def test_recall_of_something_that_is_not_text_is_bad_query(q: object) -> None:
    with pytest.raises(MemNetError) as e:
        _session().recall(q)  # type: ignore[arg-type]
    assert e.value.code == "bad_query" and type(q).__name__ in e.value.message


@pytest.mark.req(ERRORS)
def test_a_list_value_holds_no_more_text_than_a_string_value() -> None:
    s = _session()
    chunk = "x" * (MAX_STRING // 4)
    with pytest.raises(MemNetError) as e:
        s.commit("SET na1.big = [" + ", ".join([f"'{chunk}'"] * 5) + "]")
    assert e.value.code == "commit_rejected" and "list" in e.value.message
    with pytest.raises(MemNetError):
        s.commit(f"SET na1.big = '{chunk * 5}'")
    assert s.version == 1
    s.commit("SET na1.big = [" + ", ".join([f"'{chunk}'"] * 4) + "]")  # at the cap: fine
    assert s.version == 2


@pytest.mark.req(ERRORS, "MN-REQ-16")
@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"a":' * 100_000, '{"format": "memnet.slice/1", "nodes": ' + "[" * 50_000],
)
def test_a_slice_nested_without_end_is_absorb_rejected(text: str) -> None:
    lead = _session()
    for slc in (text.encode(), text if text.startswith("{") else None):
        if slc is None:
            continue
        with pytest.raises(MemNetError) as e:
            import_slice(lead, slc)
        assert e.value.code == "absorb_rejected" and "deeply" in e.value.message
    deep: list = []
    cur = deep
    for _ in range(20_000):
        cur.append([])
        cur = cur[0]
    good = export_working_memory_slice(_session(), ["na1"], hops=0).model_dump(mode="json")
    good["nodes"][0]["props"]["x"] = deep
    with pytest.raises(MemNetError) as e:
        import_slice(lead, good)
    assert e.value.code == "absorb_rejected"
    assert lead.version == 1 and memnet.CODES["absorb_rejected"]


# -- memnet.Bulk: a bad argument is invalid_argument when the call is made -------------------

_STATEMENTS = {
    "set": ("k", 1),
    "remove": ("k",),
    "label": ("CORE",),
    "unlabel": ("CORE",),
    "nick": ("nk",),
    "unnick": ("nk",),
    "delete": (),
    "settle": (),
}


def _bulk_outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        r = fn()
    except MemNetError as e:
        return ("error", e.code, e.message)
    return ("ok", r.ids, r.version, r.changed, r.created, r.updated, r.recycled)


def _refused_and_unchanged(b: memnet.Bulk, call: Callable[[], Any], *in_message: str) -> None:
    """``call`` raises invalid_argument (a ValueError too), the Bulk is as it was,
    and ``commit_bulk(b)`` and ``commit(b.text())`` still agree."""
    before = (len(b), b.text())
    with pytest.raises(MemNetError) as e:
        call()
    assert e.value.code == "invalid_argument" and isinstance(e.value, ValueError)
    for part in in_message:
        assert part in e.value.message, (part, e.value.message)
    assert (len(b), b.text()) == before
    by_text = _bulk_outcome(lambda: _session().commit(b.text()))
    assert _bulk_outcome(lambda: _session().commit_bulk(b)) == by_text


def _one_line() -> memnet.Bulk:
    b = memnet.Bulk()
    b.set("na1", "status", "review")
    return b


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("method", sorted(_STATEMENTS))
@pytest.mark.parametrize("ref", [None, 5, 1.5, b"na1", ["na1"], "bad ref", "_anon1", ""])
def test_a_bulk_statement_on_a_ref_that_is_not_a_name_is_invalid_argument(
    method: str, ref: Any
) -> None:
    b = _one_line()
    _refused_and_unchanged(
        b, lambda: getattr(b, method)(ref, *_STATEMENTS[method]), "variable", repr(ref)
    )


_KEY = " is not a name ([A-Za-z_][A-Za-z0-9_]*)"
_LABEL = " is not upper case ([A-Z][A-Z0-9_]*)"
_NICK = " is not [a-z0-9][a-z0-9_-]*"


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    ("method", "name", "message"),
    [
        # the messages b.text() gives for the same line
        ("remove", None, "property key None" + _KEY),
        ("remove", "bad key", "property key 'bad key'" + _KEY),
        ("remove", 5, "property key 5" + _KEY),
        ("set", "bad key", "property key 'bad key'" + _KEY),
        ("set", None, "property key None" + _KEY),
        ("unlabel", None, "label None" + _LABEL),
        ("unlabel", "low", "label 'low'" + _LABEL),
        ("unlabel", 5, "label 5" + _LABEL),
        ("label", "low", "label 'low'" + _LABEL),
        ("unnick", None, "nick None" + _NICK),
        ("unnick", "Bad", "nick 'Bad'" + _NICK),
        ("nick", None, "nick None" + _NICK),
        ("nick", 5, "nick 5" + _NICK),
    ],
)
def test_a_bulk_statement_with_a_bad_key_label_or_nick_is_invalid_argument(
    method: str, name: Any, message: str
) -> None:
    b = _one_line()
    args = (name, 1) if method == "set" else (name,)
    _refused_and_unchanged(b, lambda: getattr(b, method)("na1", *args), message)


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("labels", [None, "ABC", "A", b"AB", 5])
def test_bulk_node_labels_that_are_not_a_list_of_names_are_invalid_argument(labels: Any) -> None:
    b = _one_line()
    _refused_and_unchanged(b, lambda: b.node("TSK", labels=labels), "labels", repr(labels))
    good = memnet.Bulk()
    good.node("TSK", {"title": "x"}, labels=["URGENT", "CORE"])
    good.node("TSK", {"title": "y"}, labels=("URGENT",))
    r = _session().commit_bulk(good)
    assert _bulk_outcome(lambda: _session().commit(good.text()))[:2] == ("ok", r.ids)
    assert _session().commit_bulk(good).created == 2


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("props", [[("a", 1)], "abc", 5, ["a"], ("a", 1)])
def test_bulk_props_that_are_not_a_mapping_are_invalid_argument(props: Any) -> None:
    b = _one_line()
    _refused_and_unchanged(b, lambda: b.node("TSK", props), "props", type(props).__name__)
    b = _one_line()
    _refused_and_unchanged(
        b, lambda: b.edge("na1", "TOUCHES", "na2", props), "props", type(props).__name__
    )


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("var", [None, 5, "two words", "_anon3", ["x"]])
def test_a_bad_variable_of_a_bulk_node_or_edge_is_invalid_argument(var: Any) -> None:
    calls: list[Callable[[memnet.Bulk], Any]] = [
        lambda b: b.edge(var, "TOUCHES", "na2"),
        lambda b: b.edge("na1", "TOUCHES", var),
    ]
    if var is not None:  # None is no variable: node() names it _1, an edge has none
        calls += [
            lambda b: b.node("TSK", var=var),
            lambda b: b.edge("na1", "TOUCHES", "na2", var=var),
        ]
    for call in calls:
        b = _one_line()
        _refused_and_unchanged(b, lambda: call(b), "variable", repr(var))  # noqa: B023


@pytest.mark.req(ERRORS)
def test_adding_to_a_committed_bulk_is_invalid_argument() -> None:
    b = _one_line()
    b.node("TSK", {"title": "x"}, var="x")
    _session().commit_bulk(b)
    text = b.text()
    calls: list[Callable[[], Any]] = [lambda: b.node("TSK"), lambda: b.edge("x", "TOUCHES", "na1")]
    for m in _STATEMENTS:
        calls.append(lambda m=m: getattr(b, m)("na1", *_STATEMENTS[m]))  # type: ignore[misc]
    for call in calls:
        _refused_and_unchanged(b, call, "already")
    assert b.text() == text and _session().commit_bulk(b).ids == {"x": "na3"}
