"""Hostile arguments through the command line (in process, ``main(argv)``) and
the MCP tools: one coded error each, a code that is in ``CODES``, and nothing
half-written (issue 11)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memnet import CODES, Cabinet
from memnet.faces.cli import main

ERRORS, FACES = "MN-REQ-15", "MN-REQ-19"


def cli(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, str, str]:
    rc = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    if rc == 1:  # one line, with a code every face shares
        (line,) = err.splitlines()
        assert line.startswith("memnet: error: ")
        code = line.split(": ")[2]
        assert code in CODES, line
        return rc, out, code
    return rc, out, err


def _tree(tmp_path: Path, *, broken: bool) -> Path:
    tree = tmp_path / "shop"
    tree.mkdir(exist_ok=True)
    (tree / "pricing.py").write_text("def price():\n    pass\n")
    if broken:
        (tree / "bad.sysml").write_text("package P { part def 'A; }\n")  # never closes
    return tree


@pytest.mark.req(ERRORS, FACES)
def test_cli_bad_paths_and_failed_create_leave_nothing(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "cab"
    tree = _tree(tmp_path, broken=True)
    monkeypatch.chdir(tree)
    assert cli(capsys, home, "ingest", "--create", "code", str(tree)) == (1, "", "model_syntax")
    assert cli(capsys, home, "session", "create", "s1")[0] == 0
    for bad in ("", "x" * 5000, "missing"):
        assert cli(capsys, home, "ingest", "--create", "code", bad)[2] == "path_not_found", bad
        assert cli(capsys, home, "ingest", "s1", bad)[2] == "path_not_found", bad
    assert cli(capsys, home, "commit", "s1", str(tmp_path / "no.gql"))[2] == "path_not_found"
    assert cli(capsys, home, "absorb", "s1", "--slice", str(tmp_path))[2] == "path_not_found"
    rc, out, _ = cli(capsys, home, "session", "list", "--format", "json")
    assert [r["id"] for r in json.loads(out)] == ["s1"]  # no empty "code" left behind
    assert cli(capsys, home, "recall", "s1", r"TSK status:'\uD800'")[2] == "gql_syntax"
    (tree / "bad.sysml").unlink()
    rc, out, _ = cli(capsys, home, "ingest", "--create", "code", str(tree))
    assert rc == 0 and "ingested" in out
    with Cabinet.open(home) as cab:
        assert cab.session_info("code").version == 1 and cab.verify()["sessions"] == 2


@pytest.mark.req(ERRORS, FACES, "MN-REQ-16")
def test_cli_export_never_overwrites_without_force_and_absorb_refuses_deep_json(
    tmp_path: Path, capsys: Any
) -> None:
    home = tmp_path / "cab"
    assert cli(capsys, home, "session", "create", "m")[0] == 0
    main(
        [
            "--home",
            str(home),
            "commit",
            "m",
            str(
                _write(
                    tmp_path / "d.gql",
                    "INSERT (a:TSK {title: 'a'})-[:TOUCHES]->(b:MOD {path: 'b.py'})",
                )
            ),
        ]
    )
    capsys.readouterr()
    out = tmp_path / "slice.json"
    out.write_text("precious")
    args = ("export", "m", "--anchor", "na1", "--hops", "0", "-o", str(out))
    assert cli(capsys, home, *args)[2] == "output_exists"
    assert out.read_text() == "precious"
    assert cli(capsys, home, *args, "--force")[0] == 0
    assert json.loads(out.read_text())["nodes"][0]["handle"] == "na1"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".memnet-")] == []
    deep = _write(tmp_path / "deep.json", "[" * 100_000)
    assert cli(capsys, home, "absorb", "m", "--slice", str(deep))[2] == "absorb_rejected"


@pytest.mark.req(FACES)
def test_session_list_sorts_numbers_as_numbers(tmp_path: Path, capsys: Any) -> None:
    home = tmp_path / "cab"
    for sid in ("ok-10", "ok-2", "ok-1", "a-100", "a-20"):
        assert cli(capsys, home, "session", "create", sid)[0] == 0
    rc, out, _ = cli(capsys, home, "session", "list")
    assert [line.split()[0] for line in out.splitlines()[1:]] == [
        "a-20",
        "a-100",
        "ok-1",
        "ok-2",
        "ok-10",
    ]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.req(ERRORS, FACES)
def test_mcp_ingest_bad_paths_and_failed_create_leave_nothing(tmp_path: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the mcp extra (mcp>=2)")
    import anyio
    from mcp import Client

    from memnet.faces.mcp import build_server
    from memnet.faces.roots import Roots

    cab = Cabinet.open(tmp_path / "cab")
    tree = _tree(tmp_path, broken=True)
    server = build_server(cab, roots=Roots([tmp_path]))
    cwd = os.getcwd()

    async def run() -> None:
        async with Client(server, mode="legacy") as client:

            async def code(**kw: Any) -> str:
                res = await client.call_tool("memnet_ingest", kw)
                text = "".join(getattr(c, "text", "") for c in res.content)
                assert res.is_error, text
                return text.split(":", 1)[0]

            assert await code(session="code", path=str(tree), create=True) == "model_syntax"
            for bad in ("", str(tmp_path / ("x" * 5000)), str(tmp_path / "missing")):
                assert await code(session="code", path=bad, create=True) == "path_not_found"
            assert cab.sessions() == []
            (tree / "bad.sysml").unlink()
            res = await client.call_tool(
                "memnet_ingest", {"session": "code", "path": str(tree), "create": True}
            )
            assert not res.is_error and res.structured_content["version"] == 1

    try:
        anyio.run(run)
    finally:
        os.chdir(cwd)
        cab.close()


@pytest.mark.req(FACES)
def test_a_wire_statement_of_unicode_spaces_is_blank_like_one_of_ascii_spaces() -> None:
    import io

    from memnet.faces.wire import Splitter, Wire

    out = io.BytesIO()
    wire = Wire(Cabinet.open(backend="memory"), out)
    split = Splitter()
    for item in split.feed("\u2028\u00a0 ;  ;PING;".encode()) + split.finish():
        wire.answer(item)
    assert out.getvalue() == b"ok 4\npong\n"
