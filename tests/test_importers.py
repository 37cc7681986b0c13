"""Import of the reference MCP memory server's JSONL file (issue 34, item 6):
the mapping, one Commit, the same file again writes nothing, a damaged line
is a coded error naming it and nothing is written."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

import memnet
from memnet.errors import MemNetError
from memnet.importers import (
    McpMemory,
    code_of,
    import_mcp_memory,
    import_mcp_memory_new,
    parse_mcp_memory,
    read_mcp_memory,
    session_for,
)

pytestmark = pytest.mark.req("MN-REQ-18", "MN-REQ-15")


def ent(name: str, etype: str = "person", *obs: str) -> str:
    return json.dumps(
        {"type": "entity", "name": name, "entityType": etype, "observations": list(obs)}
    )


def rel(a: str, b: str, rtype: str = "knows") -> str:
    return json.dumps({"type": "relation", "from": a, "to": b, "relationType": rtype})


FILE = [
    ent("John_Smith", "person", "Speaks fluent Spanish", "Graduated in 2019"),
    ent("Anthropic", "organization", "Makes AI models"),
    ent("Old rule", "law", "Predates the company"),
    ent("Tōkyō office", "拠点"),
    ent("3D printer", "3d device"),
    rel("John_Smith", "Anthropic", "works_at"),
    rel("John_Smith", "Anthropic", "works_at"),  # a repeat: one edge
    rel("Anthropic", "Tōkyō office", "runs an office!"),
    rel("John_Smith", "Jane", "knows"),
]  # Jane: no entity


def write(tmp_path: Path, lines: list[str], name: str = "memory.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def nodes(s: memnet.Session) -> dict[str, tuple[str, dict[str, object]]]:
    st = s.store
    return {
        st.node_props(n)["name"]: (st.node_kind(n), dict(st.node_props(n)))
        for n in st.live_node_ids()
        if "name" in st.node_props(n)
    }


def edges(s: memnet.Session) -> set[tuple[str, str, str, tuple[object, ...]]]:
    st = s.store
    out = set()
    for e in st.live_edge_ids():
        a, b = st.edge_ends(e)
        if "name" in st.node_props(a) and "name" in st.node_props(b):
            out.add(
                (
                    st.node_props(a)["name"],
                    st.edge_type(e),
                    st.node_props(b)["name"],
                    tuple(sorted(st.edge_props(e).items())),
                )
            )
    return out


def test_the_module_example_runs() -> None:
    import memnet.importers as mod

    assert doctest.testmod(mod, optionflags=doctest.ELLIPSIS).failed == 0


def test_codes_for_kinds_and_edge_types() -> None:
    assert code_of("person") == "PERSON" and code_of("Software Project") == "SOFTWARE_PROJECT"
    assert code_of("works-at / since") == "WORKS_AT_SINCE"
    assert code_of("") == "ENTITY" and code_of("拠点") == "ENTITY"
    assert code_of("3d device") == "X_3D_DEVICE"
    assert code_of("law", reserved=frozenset({"LAW"})) == "MEM_LAW"
    assert len(code_of("a" * 200)) == 64


def test_one_file_into_one_commit_with_the_mapping(tmp_path: Path) -> None:
    s = memnet.Session("mem")
    res = import_mcp_memory(s, write(tmp_path, FILE))
    assert (res.version, res.changed, s.version) == (1, True, 1)
    assert (res.entities, res.relations, res.created, res.placeholders, res.edges) == (
        5,
        3,
        6,
        1,
        3,
    )
    got = nodes(s)
    assert got["John_Smith"] == (
        "PERSON",
        {
            "name": "John_Smith",
            "locator": "mem:John_Smith",
            "observations": ("Speaks fluent Spanish", "Graduated in 2019"),
        },
    )
    # a kind the engine gives a meaning, one with no ASCII letter, a leading
    # digit: the kind is changed and the type kept as written
    assert got["Old rule"] == (
        "MEM_LAW",
        {
            "name": "Old rule",
            "locator": "mem:Old rule",
            "observations": ("Predates the company",),
            "type": "law",
        },
    )
    assert got["Tōkyō office"][0] == "ENTITY" and got["Tōkyō office"][1]["type"] == "拠点"
    assert "observations" not in got["Tōkyō office"][1]  # an empty list is left out
    assert got["3D printer"][0] == "X_3D_DEVICE" and got["3D printer"][1]["type"] == "3d device"
    assert got["Jane"] == ("ENTITY", {"name": "Jane", "locator": "mem:Jane"})  # placeholder
    assert edges(s) == {
        ("John_Smith", "WORKS_AT", "Anthropic", ()),
        ("John_Smith", "KNOWS", "Jane", ()),
        ("Anthropic", "RUNS_AN_OFFICE", "Tōkyō office", (("type", "runs an office!"),)),
    }
    assert not s.store.live_count("LAW")  # no standing rule was made
    # an agent finds what it knew by name and by a word of an observation
    assert s.recall("John Smith").receipt.seeds == (s.recall("PERSON").receipt.seeds[0],)
    assert "Speaks fluent Spanish" in s.recall("spanish").text


def test_the_same_file_again_writes_nothing_and_a_changed_file_only_its_change(
    tmp_path: Path,
) -> None:
    cab = memnet.Cabinet.open(tmp_path / "cab")
    path = write(tmp_path, FILE)
    s, first = import_mcp_memory_new(cab, "mem", path)
    assert first.version == 1 and [e.version for e in cab.log("mem")] == [1]
    s = cab.open("mem")
    before = (nodes(s), edges(s))
    again = import_mcp_memory(s, path)
    assert (again.changed, again.version, again.created, again.updated, again.edges) == (
        False,
        1,
        0,
        0,
        0,
    )
    cab.flush(s)
    assert [e.version for e in cab.log("mem")] == [1] and (nodes(s), edges(s)) == before
    # the agent's own property and edge, and what the file drops, stay
    h = s.recall("PERSON").receipt.seeds[0]
    s.commit(f"SET {h}.mood = 'busy' INSERT (t:TSK {{title: 'call John'}})-[:ABOUT]->({h})")
    changed = [
        ent("John_Smith", "person", "Speaks fluent Spanish", "Moved to Lisbon"),
        ent("Anthropic", "company", "Makes AI models"),  # kind changed
        ent("Jane", "person", "Joined in 2024"),  # was a placeholder
        rel("John_Smith", "Anthropic", "works_at"),
        rel("Jane", "Anthropic", "works_at"),
    ]
    r = import_mcp_memory(s, write(tmp_path, changed, "v2.jsonl"))
    assert (r.changed, r.version) == (True, 3)
    assert (r.created, r.updated, r.recycled, r.edges) == (2, 1, 2, 2)
    got = nodes(s)
    assert got["John_Smith"][1]["observations"] == ("Speaks fluent Spanish", "Moved to Lisbon")
    assert got["John_Smith"][1]["mood"] == "busy"
    assert got["Anthropic"][0] == "COMPANY" and got["Jane"][0] == "PERSON"
    assert "Old rule" in got and "3D printer" in got  # never removed
    assert (
        "call John" in s.recall("TSK call").text and "John_Smith" in s.recall("TSK call").text
    )  # the agent's edge stays
    assert ("Jane", "WORKS_AT", "Anthropic", ()) in edges(s)
    assert not import_mcp_memory(s, write(tmp_path, changed, "v2.jsonl")).changed


DAMAGED = [
    ("{not json", "not JSON"),
    ("[1, 2]", "a JSON object"),
    ('{"name": "x"}', "'type'"),
    ('{"type": "entity", "entityType": "person", "observations": []}', "'name'"),
    ('{"type": "entity", "name": "", "entityType": "person", "observations": []}', "'name'"),
    ('{"type": "entity", "name": "x", "entityType": 3, "observations": []}', "'entityType'"),
    ('{"type": "entity", "name": "x", "entityType": "p", "observations": "one"}', "observations"),
    ('{"type": "entity", "name": "x", "entityType": "p", "observations": [1]}', "observations"),
    ('{"type": "relation", "from": "a", "relationType": "r"}', "'to'"),
    ('{"type": "entity", "name": "\\ud800", "entityType": "p", "observations": []}', "surrogate"),
    (ent("John_Smith", "person"), "already defined at line 1"),
]


@pytest.mark.parametrize("line,what", DAMAGED, ids=[w for _l, w in DAMAGED])
def test_a_damaged_line_is_import_syntax_naming_it_and_nothing_is_written(
    tmp_path: Path, line: str, what: str
) -> None:
    s = memnet.Session("mem")
    s.commit("INSERT (t:TSK {title: 'mine'})")
    path = write(tmp_path, [FILE[0], "", FILE[1], line, FILE[5]])
    with pytest.raises(MemNetError) as e:
        import_mcp_memory(s, path)
    assert e.value.code == "import_syntax" and e.value.line == 4, e.value.message
    assert e.value.message.startswith("memory.jsonl:4: ") and what in e.value.message
    assert s.version == 1 and s.stats()["nodes"] == 1


def test_bytes_that_are_not_utf8_and_values_too_large(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(FILE[0].encode() + b"\n" + b'{"type": "entity", "name": "\xff"}\n')
    with pytest.raises(MemNetError) as e:
        read_mcp_memory(p)
    assert e.value.code == "import_syntax" and e.value.line == 2 and "UTF-8" in e.value.message
    many = json.dumps(
        {"type": "entity", "name": "x", "entityType": "p", "observations": ["o"] * 5000}
    )
    with pytest.raises(MemNetError) as e:
        read_mcp_memory(write(tmp_path, [FILE[0], many]))
    assert e.value.code == "input_too_large" and "memory.jsonl:2:" in e.value.message
    with pytest.raises(MemNetError) as e:
        read_mcp_memory(tmp_path / "nope.jsonl")
    assert e.value.code == "path_not_found"
    with pytest.raises(MemNetError) as e:
        read_mcp_memory(tmp_path)
    assert e.value.code == "path_not_found"


def test_records_of_another_type_blank_lines_and_a_bom_are_taken_as_the_server_takes_them(
    tmp_path: Path,
) -> None:
    p = tmp_path / "m.jsonl"
    p.write_bytes(
        b"\xef\xbb\xbf"
        + FILE[0].encode()
        + b"\r\n\r\n   \n"
        + b'{"type": "note", "text": "a newer record"}\n'
        + FILE[1].encode()
    )
    mem = read_mcp_memory(p)
    assert list(mem.entities) == ["John_Smith", "Anthropic"] and mem.lines == 5
    s = memnet.Session("mem")
    res = import_mcp_memory(s, mem)
    assert res.warnings == (
        "m.jsonl:4: skipped: a record of type 'note' (neither entity nor relation)",
    )


def test_the_rate_cap_refuses_the_whole_import_and_a_new_session_is_sized_to_the_file(
    tmp_path: Path,
) -> None:
    lines = [ent(f"e{i}", "thing", f"observation {i}") for i in range(300)]
    lines += [rel(f"e{i}", f"e{i + 1}", "next") for i in range(299)]
    mem = parse_mcp_memory(lines)
    small = memnet.Session("small", caps=memnet.Caps(rows=500))
    with pytest.raises(MemNetError) as e:
        import_mcp_memory(small, mem)
    assert e.value.code == "cap_exceeded" and small.version == 0
    assert session_for(mem, "x").caps == memnet.Caps()  # the default is enough
    big = McpMemory(entities={f"e{i}": mem.entities["e1"] for i in range(250_000)})
    big.relations = mem.relations * 200  # 299 distinct
    sized = session_for(big, "x").caps
    assert sized.rows == 2 * (250_000 + 299) and sized.bytes >= memnet.Caps().bytes


def test_handles_are_the_same_for_the_same_file(tmp_path: Path) -> None:
    path = write(tmp_path, FILE)
    a, b = memnet.Session("a"), memnet.Session("a")
    import_mcp_memory(a, path)
    import_mcp_memory(b, path)
    assert a.recall("").text == b.recall("").text
    assert a.recall("John Smith").text == b.recall("John Smith").text
