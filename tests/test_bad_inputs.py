"""Bad inputs through the Python API: each one a coded MemNetError, the session
unchanged (issue 11: lone surrogate escapes, q of the wrong type, a list value
over the text cap, a slice file nested without end)."""

from __future__ import annotations

import pytest

import memnet
from memnet import MemNetError, Session, export_working_memory_slice, import_slice
from memnet.commit import MAX_STRING

ERRORS = "MN-REQ-15"


def _session() -> Session:
    s = Session("bad")
    s.commit("INSERT (t:TSK {title: 'fix pricing', status: 'open'})-[:TOUCHES]->"
             "(m:MOD {path: 'shop/pricing.py'})")
    return s


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("q", [r"TSK status:'\uD800'", r"MATCH (n {a:'\uDFFF'})",
                               r"TSK 'x\uD83Dy'", r"TSK title~'\uDE00'",
                               r"MATCH (n:TSK) WHERE n.title CONTAINS '\uDBFF' LIMIT 2"])
def test_a_lone_surrogate_escape_in_q_is_gql_syntax(q: str) -> None:
    s = _session()
    with pytest.raises(MemNetError) as e:
        s.recall(q)
    assert e.value.code == "gql_syntax" and "surrogate" in e.value.message
    assert e.value.details["line"] == 1 and q[e.value.details["column"] - 1] == "\\"


@pytest.mark.req(ERRORS)
def test_a_lone_surrogate_escape_in_a_delta_is_gql_syntax_and_a_pair_is_one_character() -> None:
    s = _session()
    for delta in (r"INSERT (t:TSK {title: 'a\uD800'})", r"SET na1.title = '\uDFFF\uD800'",
                  r"SET na1.tags = ['ok', '\uD83D x']"):
        with pytest.raises(MemNetError) as e:
            s.commit(delta)
        assert e.value.code == "gql_syntax", delta
    assert s.version == 1
    s.commit(r"SET na1.title = 'fix \uD83D\uDE00 pricing'")
    assert s.store.node_props(1)["title"] == "fix \U0001F600 pricing"
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
@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000,
                                  '{"format": "memnet.slice/1", "nodes": ' + "[" * 50_000])
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
