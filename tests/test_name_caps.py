"""The caps on names: labels on one node, and distinct kinds, labels and edge
types in one session (docs/gql-wire-profile.md §6). A Δ past one is refused
whole with ``commit_rejected`` before anything is written, and the store's
coded columns hold any number of distinct values (the 65,536th used to
overflow a 16-bit code array half-way through a write)."""

from __future__ import annotations

import pickle

import pytest

import memnet
from memnet.commit import MAX_EDGE_TYPES, MAX_KINDS, MAX_LABEL_NAMES, MAX_LABELS
from memnet.graph.columns import CodedColumn


def _state(s: memnet.Session) -> bytes:
    return pickle.dumps((s.version, s.store, s.history(), s.journal()))


def _refused(s: memnet.Session, delta: str | memnet.Bulk) -> memnet.MemNetError:
    before = _state(s)
    with pytest.raises(memnet.MemNetError) as info:
        if isinstance(delta, memnet.Bulk):
            s.commit_bulk(delta)
        else:
            s.commit(delta)
    assert _state(s) == before
    return info.value


def test_a_coded_column_widens_past_65536_values_on_append_and_extend() -> None:
    col: CodedColumn[str] = CodedColumn("")
    for i in range(70_000):
        col.append(f"v{i}")
    assert col.codes.typecode == "I" and len(col) == 70_001
    assert col[65_537] == "v65536" and col[70_000] == "v69999"
    other: CodedColumn[str] = CodedColumn("")
    other.extend([f"w{i}" for i in range(70_000)])
    assert other[70_000] == "w69999"
    other[1] = "v3"
    assert other[1] == "v3"


@pytest.mark.req("MN-REQ-03")
def test_70000_distinct_label_sets_commit_and_the_session_stays_usable() -> None:
    """The repro of issue 36 within the caps: distinct label *sets* past
    65,536 raised OverflowError half-way through the write, and every later
    Commit raised IndexError."""
    s = memnet.Session("sets")
    labs = [f"L{i}" for i in range(400)]
    pairs = [(a, b) for i, a in enumerate(labs) for b in labs[i + 1 :]][:70_000]
    b = memnet.Bulk()
    for a, c in pairs:
        b.node("K", labels=(a, c))
    assert s.commit_bulk(b).version == 1
    r = s.commit("INSERT (t:TSK&L0 {title: 'after'})")
    assert r.version == 2
    assert s.recall("TSK after").receipt.seed_mode == "match"
    assert s.store.extra_labels(70_000) == pairs[-1]


@pytest.mark.req("MN-REQ-03", "MN-REQ-08")
def test_more_labels_on_one_node_than_the_cap_are_refused() -> None:
    s = memnet.Session("labels")
    ok = "&".join(f"L{i}" for i in range(MAX_LABELS - 1))
    r = s.commit(f"INSERT (a:TSK&{ok} {{title: 'full'}})")
    h = r.ids["a"]
    e = _refused(s, f"INSERT (b:TSK&{ok}&ONE_MORE)")
    assert e.code == "commit_rejected" and (e.line, e.column) == (1, 8)
    assert f"at most {MAX_LABELS} labels" in e.message
    # the same through SET: the 65th label is refused at its statement
    e = _refused(s, f"SET {h}.x = 1\nSET {h}:ONE_MORE")
    assert e.code == "commit_rejected" and e.line == 2
    # a label the node carries already, or its kind, adds nothing
    assert s.commit(f"SET {h}:L0 SET {h}:TSK").changed is False
    # 200,000 labels on one node (the repro) are refused the same way
    e = _refused(s, "INSERT (c:TSK&" + "&".join(f"X{i}" for i in range(200_000)) + ")")
    assert e.code == "commit_rejected"
    b = memnet.Bulk()
    b.node("TSK", labels=tuple(f"B{i}" for i in range(MAX_LABELS)))
    assert _refused(s, b).code == "commit_rejected"


@pytest.mark.req("MN-REQ-03", "MN-REQ-08")
def test_the_kinds_of_a_session_are_capped_per_delta_and_per_session() -> None:
    s = memnet.Session("kinds")
    # one Δ bringing a kind too many is refused whole, at the node past the cap
    e = _refused(s, "INSERT " + ", ".join(f"(b{i}:K{i})" for i in range(70_000)))
    assert e.code == "commit_rejected"
    assert f"at most {MAX_KINDS} distinct kinds" in e.message
    assert e.details["cap"] == MAX_KINDS and e.details["held"] == 0
    assert s.version == 0 and s.store.kinds_known() == 0
    # up to the cap is fine, in several Δs
    half = MAX_KINDS // 2
    s.commit("INSERT " + ", ".join(f"(b{i}:K{i})" for i in range(half)))
    s.commit("INSERT " + ", ".join(f"(b{i}:K{i})" for i in range(half, MAX_KINDS)))
    assert s.store.kinds_known() == MAX_KINDS
    e = _refused(s, "INSERT (x:K0), (y:NEW_KIND)")
    assert e.code == "commit_rejected" and e.details["held"] == MAX_KINDS
    # a recycled node keeps its kind: deleting does not make room
    s.commit("DELETE na1")
    assert _refused(s, "INSERT (y:NEW_KIND)").code == "commit_rejected"
    # kinds the session holds stay welcome
    assert s.commit("INSERT (x:K0), (y:K1)").changed


@pytest.mark.req("MN-REQ-03", "MN-REQ-08")
def test_the_edge_types_of_a_session_are_capped() -> None:
    s = memnet.Session("types")
    h = s.commit("INSERT (a:TSK)").ids["a"]
    edges = ", ".join(f"({h})-[:T{i}]->({h})" for i in range(MAX_EDGE_TYPES))
    s.commit(f"INSERT {edges}")
    assert s.store.edge_types_known() == MAX_EDGE_TYPES
    text = f"INSERT ({h})-[:T0]->({h}), ({h})-[:NEW_TYPE]->({h})"
    e = _refused(s, text)
    assert e.code == "commit_rejected" and "distinct edge types" in e.message
    assert (e.line, e.column) == (1, text.index("-[:NEW_TYPE") + 1)


@pytest.mark.req("MN-REQ-03", "MN-REQ-08")
def test_the_labels_of_a_session_are_capped_and_counted_exactly() -> None:
    s = memnet.Session("names")
    per = MAX_LABELS - 1
    nodes = []
    for n in range(MAX_LABEL_NAMES // per):
        nodes.append(f"(n{n}:TSK&" + "&".join(f"L{n}_{i}" for i in range(per)) + ")")
    s.commit("INSERT " + ", ".join(nodes))
    held = len(s.store.label_use())
    assert held == (MAX_LABEL_NAMES // per) * per
    room = MAX_LABEL_NAMES - held
    fill = "&".join(f"F{i}" for i in range(room))
    r = s.commit(f"INSERT (f:TSK&{fill})")
    assert len(s.store.label_use()) == MAX_LABEL_NAMES
    e = _refused(s, "INSERT (g:TSK&BRAND_NEW)")
    assert e.code == "commit_rejected" and "distinct labels" in e.message
    assert _refused(s, f"SET {r.ids['f']}:BRAND_NEW").code == "commit_rejected"
    # a label that leaves its last node makes room (labels are counted on the
    # nodes that carry them, recycled ones included)
    s.commit(f"REMOVE {r.ids['f']}:F0")
    assert len(s.store.label_use()) == MAX_LABEL_NAMES - 1
    s.commit("INSERT (g:TSK&BRAND_NEW)")
    # the count kept by the writes is the count a fresh store builds
    again = memnet.Session("names")
    for rec in s.history():
        from memnet.commit import replay

        replay(again.store, list(rec.changes))
    assert dict(again.store.label_use()) == dict(s.store.label_use())


def test_the_label_count_survives_a_cabinet_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with memnet.Cabinet.open(tmp_path / "cab") as cab:
        s = cab.create("w")
        r = s.commit("INSERT (a:TSK&A&B), (b:TSK&B&C), (c:MOD&C)")
        s.commit(f"DELETE {r.ids['c']}\nREMOVE {r.ids['a']}:A")
        cab.flush(s)
        want = dict(s.store.label_use())
        assert want == {"B": 2, "C": 2}
        assert dict(cab.open("w").store.label_use()) == want
