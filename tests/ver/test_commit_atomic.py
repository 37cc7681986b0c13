"""MN-VER: Commit is atomic. A Δ with an error anywhere is refused whole, with a
stable code (and the line and column where it applies), and leaves the session
exactly as it was: same version, history, graph, indexes and handle counter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet.commit import MAX_EDGE_TYPES, MAX_KINDS, MAX_LABEL_NAMES, MAX_LABELS
from tests.ver.strategies import (
    VER,
    Built,
    build,
    graph_data,
    graph_specs,
)

MARK = "zebracorn"  # a word only refused Δs ever write
PROBES = ("", "TSK", "DEC", f"{MARK}", "MATCH (n:DEC) LIMIT 3", "LAW")


def _snapshot(s: memnet.Session) -> tuple[Any, ...]:
    return (
        s.version,
        len(s.history()),
        graph_data(s.to_networkx()),
        s.stats(),
        tuple(s.recall(q).text for q in PROBES),
        s.recall("", view="shell", max_rows=80).text,
    )


def _live(b: Built) -> dict[str, list[str]]:
    g = b.session.to_networkx()
    nodes = list(g.nodes)
    return {
        "nodes": nodes,
        "tsk": [h for h, a in g.nodes(data=True) if a["kind"] == "TSK"],
        "non_tsk": [
            h for h, a in g.nodes(data=True) if a["kind"] != "TSK" and "TSK" not in a["labels"]
        ],
        "edges": [k for _u, _v, k in g.edges(keys=True)],
        "nicks": [a["nick"] for _h, a in g.nodes(data=True) if a["nick"]],
        "recycled_nodes": [n.handle for n in b.model.nodes if not n.live],
        "kinds": {h: a["kind"] for h, a in g.nodes(data=True)},
    }


def _prefix(draw: Callable[..., Any], live: dict[str, list[str]]) -> list[str]:
    """Valid statements that would change the session if the Δ landed."""
    out: list[str] = []
    deleted: set[str] = set()
    for i in range(draw(st.integers(0, 3))):
        choice = draw(st.integers(0, 4))
        if choice == 0 or not live["nodes"]:
            out.append(f"INSERT (p{i}:DEC {{title: '{MARK} prefix {i}'}})")
        elif choice == 1:
            out.append(f"SET {draw(st.sampled_from(live['nodes']))}.status = '{MARK}'")
        elif choice == 2 and set(live["edges"]) - deleted:
            e = draw(st.sampled_from(sorted(set(live["edges"]) - deleted)))
            deleted.add(e)
            out.append(f"DELETE {e}")
        elif choice == 3:
            out.append(f"SET {draw(st.sampled_from(live['nodes']))}:URGENT")
        else:
            out.append(f"REMOVE {draw(st.sampled_from(live['nodes']))}.title")
    return out


def _col(line: str, needle: str) -> int:
    return line.index(needle) + 1


# Each maker returns (lines of the bad part, expected code, (line offset, column)
# or None); the line offset counts from the first bad line.
Made = tuple[list[str], str, tuple[int, int] | None]


def _unknown_handle(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    # white box: a well-formed handle that was never minted
    from memnet.graph.store import node_handle

    h = draw(st.sampled_from([node_handle(b.session.store.next_node + 7), "nqq9", "task1"]))
    line = f"SET {h}.status = 'x'"
    return [line], "commit_rejected", (0, 5)


def _echo(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    pool = live["nodes"] + live["recycled_nodes"]
    if not pool:
        return _unknown_handle(draw, b, live)
    h = draw(st.sampled_from(pool))
    return (
        [f"INSERT (x1:DEC {{title: 'ok'}}), ({h}:TSK {{title: '{MARK} echo'}})"],
        "echo_refused",
        (0, len("INSERT (x1:DEC {title: 'ok'}), ") + 1),
    )


def _echo_shape(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    sh = b.session.recall("", laws=True)
    if sh.receipt.rows == 0:
        return _echo(draw, b, live)
    return sh.text.split("\n"), "echo_refused", None


def _recycled_end(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    if live["recycled_nodes"] and draw(st.booleans()):
        h = draw(st.sampled_from(live["recycled_nodes"]))
        lines = []
    elif live["nodes"]:
        h = draw(st.sampled_from(live["nodes"]))
        lines = [f"DELETE {h}"]
    else:
        return _unknown_handle(draw, b, live)
    edge = f"INSERT (z:DEC {{title: '{MARK}'}})-[:TOUCHES]->({h})"
    return lines + [edge], "commit_rejected", (len(lines), _col(edge, f"({h})"))


def _bad_float(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    num = draw(st.sampled_from(("1e999", "-1e999", "1.5e400")))
    if live["nodes"]:
        line = f"SET {draw(st.sampled_from(live['nodes']))}.score = {num}"
    else:
        line = f"INSERT (z:DEC {{score: {num}}})"
    return [line], "gql_syntax", (0, _col(line, num))


def _big_int(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    num = draw(st.sampled_from((2**63, -(2**63) - 1, 10**30)))
    line = f"INSERT (z:DEC {{score: {num}}})"
    return [line], "commit_rejected", (0, 8)


def _settle_non_task(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    if live["non_tsk"] and draw(st.booleans()):
        return [f"SETTLE {draw(st.sampled_from(live['non_tsk']))}"], "commit_rejected", (0, 8)
    return [f"INSERT (m:MOD {{path: '{MARK}'}})", "SETTLE m"], "commit_rejected", (1, 8)


def _cap(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    s = b.session
    room = s.caps.rows - (s.store.live_nodes + s.store.live_edges)
    n = room + 4 + draw(st.integers(0, 3))  # the prefix may free up to 3 rows
    return (
        ["INSERT " + ", ".join(f"(c{i}:DEC {{title: '{MARK} {i}'}})" for i in range(n))],
        "cap_exceeded",
        None,
    )


def _syntax_after_long_prefix(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    n = draw(st.integers(10, 40))
    lines = [f"INSERT (q{i}:TSK {{title: '{MARK} task {i}', status: 'open'}})" for i in range(n)]
    last = draw(
        st.sampled_from(
            (
                "INSERT (zz:TSK {title: 'x', prio: })",
                "SET zz.title = ",
                "INSERT (zz:TSK {title: 'x'})-[:touches]->(q0)",
                "INSERT (zz:TSK {title: 'unterminated",
                "INSERT (zz:TSK {tags: [[1]]})",
                "INSERT (zz:TSK {title: 'bad \\q escape'})",
                "INSERT (zz:TSK {title: null})",
                "DELETE",
            )
        )
    )
    where = {
        "INSERT (zz:TSK {title: 'x', prio: })": "})",
        "SET zz.title = ": None,  # end of input
        "INSERT (zz:TSK {title: 'x'})-[:touches]->(q0)": "touches",
        "INSERT (zz:TSK {title: 'unterminated": "'unterminated",
        "INSERT (zz:TSK {tags: [[1]]})": "[1]",
        "INSERT (zz:TSK {title: 'bad \\q escape'})": "\\q",
        "INSERT (zz:TSK {title: null})": "null",
        "DELETE": None,
    }[last]
    col = _col(last, where) if where else len(last) + 1
    return lines + [last], "gql_syntax", (n, col)


def _delete_new(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    return [f"INSERT (t9:DEC {{title: '{MARK}'}})", "DELETE t9"], "commit_rejected", (1, 8)


def _twice_bound(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    line = f"INSERT (a9:DEC {{x: 1}}), (a9:DEC {{x: 2, t: '{MARK}'}})"
    return [line], "gql_syntax", (0, _col(line, "(a9:DEC {x: 2"))


def _nick_taken(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    if live["nicks"] and draw(st.booleans()):
        nick = draw(st.sampled_from(live["nicks"]))
        return [f"INSERT (z:DEC #{nick} {{title: '{MARK}'}})"], "commit_rejected", (0, 8)
    line = f"INSERT (z1:DEC #dupe {{title: '{MARK}'}}), (z2:DEC #dupe)"
    return [line], "commit_rejected", (0, _col(line, "(z2"))


def _remove_kind(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    if not live["nodes"]:
        return _delete_new(draw, b, live)
    h = draw(st.sampled_from(live["nodes"]))
    return [f"REMOVE {h}:{live['kinds'][h]}"], "commit_rejected", (0, 8)


def _edge_as_node(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    if not live["edges"]:
        return _delete_new(draw, b, live)
    e = draw(st.sampled_from(live["edges"]))
    return [f"SET {e}:URGENT"], "commit_rejected", (0, 5)


def _too_deep(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    depth = draw(st.integers(17, 40))
    return ["INSERT " + "(" * depth + ")" * depth], "input_too_large", None


def _many_kinds(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    # one kind past the session's cap on distinct kinds (the prefix may add DEC)
    n = MAX_KINDS - b.session.store.kinds_known() + 1 + draw(st.integers(0, 3))
    return (
        ["INSERT " + ", ".join(f"(k{i}:KX{i} {{title: '{MARK}'}})" for i in range(n))],
        "commit_rejected",
        None,
    )


def _labels_on_node(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    n = MAX_LABELS + draw(st.integers(0, 3))  # with the kind, one label too many or more
    labels = "&".join(f"LX{i}" for i in range(n))
    return [f"INSERT (z:DEC&{labels} {{title: '{MARK}'}})"], "commit_rejected", (0, 8)


def _many_edge_types(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    n = MAX_EDGE_TYPES - b.session.store.edge_types_known() + 1 + draw(st.integers(0, 2))
    edges = ", ".join(f"(z)-[:TX{i}]->(z)" for i in range(n))
    return [f"INSERT (z:DEC {{title: '{MARK}'}}), {edges}"], "commit_rejected", None


def _many_label_names(draw, b, live) -> Made:  # type: ignore[no-untyped-def]
    # one extra label past the session's cap (the prefix may add URGENT)
    need = MAX_LABEL_NAMES - len(b.session.store.label_use()) + 1 + draw(st.integers(0, 2))
    per = MAX_LABELS - 1
    nodes = [
        f"(l{j}:DEC&"
        + "&".join(f"LN{j}_{i}" for i in range(min(per, need - j * per)))
        + f" {{title: '{MARK}'}})"
        for j in range(-(-need // per))
    ]
    return ["INSERT " + ", ".join(nodes)], "commit_rejected", None


KINDS: dict[str, tuple[Callable[..., Made], str]] = {
    "unknown_handle": (_unknown_handle, "MN-REQ-03"),
    "echo": (_echo, "MN-REQ-04"),
    "echo_shape": (_echo_shape, "MN-REQ-04"),
    "recycled_end": (_recycled_end, "MN-REQ-05"),
    "bad_float": (_bad_float, "MN-REQ-08"),
    "big_int": (_big_int, "MN-REQ-03"),
    "settle_non_task": (_settle_non_task, "MN-REQ-12"),
    "cap": (_cap, "MN-REQ-09"),
    "syntax_after_long_prefix": (_syntax_after_long_prefix, "MN-REQ-08"),
    "delete_new": (_delete_new, "MN-REQ-03"),
    "twice_bound": (_twice_bound, "MN-REQ-08"),
    "nick_taken": (_nick_taken, "MN-REQ-03"),
    "remove_kind": (_remove_kind, "MN-REQ-03"),
    "edge_as_node": (_edge_as_node, "MN-REQ-03"),
    "too_deep": (_too_deep, "MN-REQ-08"),
    "many_kinds": (_many_kinds, "MN-REQ-08"),
    "labels_on_node": (_labels_on_node, "MN-REQ-08"),
    "many_edge_types": (_many_edge_types, "MN-REQ-08"),
    "many_label_names": (_many_label_names, "MN-REQ-08"),
}


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.req("MN-REQ-03", "MN-REQ-15", r), id=k)
        for k, (_f, r) in KINDS.items()
    ],
)
@settings(VER, max_examples=12)
@given(spec=graph_specs(max_nodes=20, max_edges=30), data=st.data())
def test_refused_delta_leaves_the_session_unchanged(kind: str, spec, data) -> None:  # type: ignore[no-untyped-def]
    caps = memnet.Caps(rows=spec.rows + 10)
    b = build(spec, caps=caps)
    twin = build(spec, caps=caps)
    s = b.session
    live = _live(b)
    before = _snapshot(s)
    prefix = _prefix(data.draw, live)
    bad, code, where = KINDS[kind][0](data.draw, b, live)
    suffix = []
    if code != "gql_syntax" and data.draw(st.booleans()):
        suffix = [f"INSERT (after:DEC {{title: '{MARK} suffix'}})"]
    text = "\n".join(prefix + bad + suffix)
    with pytest.raises(memnet.MemNetError) as info:
        s.commit(text)
    err = info.value
    assert err.code == code, (kind, err.code, str(err), text)
    assert err.to_dict()["code"] == code
    if where is not None:
        line, column = where
        assert (err.line, err.column) == (len(prefix) + 1 + line, column), (str(err), text)
    # nothing moved
    assert _snapshot(s) == before, text
    assert s.recall(MARK).receipt.seed_mode != "match"
    # and nothing leaked: the next good commit mints what the twin mints
    anchor = live["nodes"][0] if live["nodes"] else None
    good = "INSERT (g:DEC {title: 'after the refusal'})" + (
        f", (g)-[:TOUCHES]->({anchor})" if anchor else ""
    )
    r1, r2 = s.commit(good), twin.session.commit(good)
    assert (r1.ids, r1.version) == (r2.ids, r2.version)
    for q in PROBES + ("after refusal",):
        assert s.recall(q).text == twin.session.recall(q).text
