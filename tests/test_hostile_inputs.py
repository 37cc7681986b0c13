"""Inputs of issue 36 given to the Python API: each gets its proper code, is
refused before the work it would cause, and changes nothing.

* ``commit(None)``, ``commit(b'...')``: ``invalid_argument`` saying what Commit
  takes (a slice is still ``not_a_delta``);
* an etag is twelve decimal digits; anything else is bad_query;
* a ``keep`` slice whose handles run far past the lead's ids
  (``ne10000``) is refused before a placeholder is made;
* a slice text over its byte cap is ``input_too_large``.
"""

from __future__ import annotations

import json
import pickle
import resource

import pytest

import memnet
from memnet.absorb import MAX_KEEP_GAP, MAX_SLICE_BYTES
from memnet.graph.store import edge_handle, node_handle

ERRORS = "MN-REQ-15"


def _state(s: memnet.Session) -> bytes:
    return pickle.dumps((s.version, s.store, s.history(), s.journal()))


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize("bad", [None, b"INSERT (t:TSK)", bytearray(b"x"), 5, ["INSERT"], object()])
def test_commit_of_something_that_is_not_text_says_what_commit_takes(bad: object) -> None:
    s = memnet.Session("args")
    s.commit("INSERT (t:TSK {title: 'x'})")
    before = _state(s)
    with pytest.raises(memnet.MemNetError) as e:
        s.commit(bad)  # type: ignore[arg-type]
    assert e.value.code == "invalid_argument" and isinstance(e.value, ValueError)
    assert "slice" not in e.value.message
    want = "not bytes" if isinstance(bad, (bytes, bytearray)) else type(bad).__name__
    assert want in e.value.message
    assert _state(s) == before


@pytest.mark.req(ERRORS)
def test_a_slice_given_to_commit_is_still_not_a_delta() -> None:
    s = memnet.Session("args")
    for bad in ({"format": "memnet.slice/1"}, '  {"nodes": []}'):
        with pytest.raises(memnet.MemNetError) as e:
            s.commit(bad)  # type: ignore[arg-type]
        assert e.value.code == "not_a_delta" and "import_slice" in e.value.message


@pytest.mark.req("MN-REQ-00.1", ERRORS)
def test_an_etag_is_twelve_digits_and_nothing_else_is_one() -> None:
    """An etag is twelve decimal digits (no case to get wrong); what is not
    one, a hex etag of the older receipts included, is bad_query."""
    s = memnet.Session("etag")
    s.commit("INSERT (t:TSK {title: 'pricing page', status: 'open'})")
    shape = s.recall("TSK pricing")
    tag = shape.receipt.etag
    assert len(tag) == 12 and tag.isdigit()
    again = s.recall("TSK pricing", since=tag)
    assert again.receipt.answer == "unchanged" and again.receipt.since == tag
    s.commit("SET na1.status = 'review'")
    delta = s.recall("TSK pricing", since=tag)
    assert delta.receipt.answer == "delta" and "SET na1.status = 'review'" in delta.text
    for bad in ("G" * 12, tag + "0", " " + tag, "０" * 12, "0123456789abcdef", "0123456789ABCDEF"):
        with pytest.raises(memnet.MemNetError) as e:
            s.recall("TSK pricing", since=bad)
        assert e.value.code == "bad_query"


def _keep_slice(node_ids: list[int], edge: tuple[int, int, int] | None = None) -> str:
    nodes = [
        {"handle": node_handle(i), "kind": "TSK", "props": {"title": f"t{i}"}} for i in node_ids
    ]
    edges = []
    if edge is not None:
        eid, a, b = edge
        edges.append(
            {"handle": edge_handle(eid), "type": "R", "src": node_handle(a), "dst": node_handle(b)}
        )
    return json.dumps(
        {
            "format": "memnet.slice/1",
            "provenance": {
                "session": "member",
                "version": 1,
                "anchors": [node_handle(node_ids[0])],
                "hops": 1,
                "budget": 50,
                "exported_at": 0.0,
            },
            "nodes": nodes,
            "edges": edges,
        }
    )


@pytest.mark.req("MN-REQ-16", ERRORS)
@pytest.mark.parametrize("handle", ["ne10000", "nf100000", "ni" + "z" * 9])
def test_a_keep_slice_with_a_far_handle_is_refused_before_any_placeholder(handle: str) -> None:
    """Issue 36: a 330-byte slice holding ``ne10000`` made Absorb fill 1.7
    million placeholder ids (14.5 s, 1.6 GB). Checked under an address-space
    limit such a fill would pass."""
    from memnet.graph.handles import parse_handle

    nid = parse_handle(handle)[1]  # type: ignore[index]
    lead = memnet.Session("lead")
    lead.commit("INSERT (own:TSK {title: 'lead own'})")
    before = _state(lead)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    resource.setrlimit(resource.RLIMIT_AS, (max(rss * 4, 1 << 30), hard))
    try:
        with pytest.raises(memnet.MemNetError) as e:
            memnet.import_slice(lead, _keep_slice([nid]), "keep")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert e.value.code == "absorb_rejected"
    assert "remint" in e.value.message and e.value.details["cap"] == MAX_KEEP_GAP
    assert _state(lead) == before


@pytest.mark.req("MN-REQ-16")
def test_a_keep_slice_within_the_gap_keeps_its_handles() -> None:
    lead = memnet.Session("lead")
    lead.commit("INSERT (own:TSK {title: 'lead own'})")  # na1; the next id is 2
    top = 2 + MAX_KEEP_GAP  # a gap of exactly MAX_KEEP_GAP ids below it
    res = memnet.import_slice(lead, _keep_slice([top]), "keep")
    assert res.ids == {node_handle(top): node_handle(top)}
    assert lead.recall(f"TSK t{top}").receipt.seeds == (node_handle(top),)
    # one id further is refused, for nodes and for edges alike
    lead2 = memnet.Session("lead")
    lead2.commit("INSERT (own:TSK {title: 'lead own'})")
    with pytest.raises(memnet.MemNetError) as e:
        memnet.import_slice(lead2, _keep_slice([top + 1]), "keep")
    assert e.value.code == "absorb_rejected"
    with pytest.raises(memnet.MemNetError) as e:
        memnet.import_slice(lead2, _keep_slice([2, 3], (2 + MAX_KEEP_GAP, 2, 3)), "keep")
    assert e.value.code == "absorb_rejected" and "edge handles" in e.value.message
    assert lead2.version == 1


@pytest.mark.req("MN-REQ-16", ERRORS)
def test_a_slice_text_over_the_byte_cap_is_input_too_large() -> None:
    lead = memnet.Session("lead")
    text = _keep_slice([5]).replace('"t5"', '"' + "x" * MAX_SLICE_BYTES + '"')
    for form in (text, text.encode()):
        with pytest.raises(memnet.MemNetError) as e:
            memnet.import_slice(lead, form, "remint")
        assert e.value.code == "input_too_large"
        assert e.value.details["cap"] == MAX_SLICE_BYTES
    assert lead.version == 0


def test_a_backup_path_with_a_nul_is_invalid_argument_and_writes_nothing(tmp_path) -> None:
    from memnet import Cabinet
    from memnet.errors import InvalidArgument

    with Cabinet.open(str(tmp_path / "h")) as cab:
        with pytest.raises(InvalidArgument):
            cab.backup(str(tmp_path / "a\x00b"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h"]
