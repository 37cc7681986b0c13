"""The MCP face: MemNet's verbs as MCP tools, through the official ``mcp`` SDK (2.x).

In process through the SDK's client (in-memory transport and direct dispatch),
as a real ``memnet mcp`` stdio subprocess, and without the SDK installed.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the mcp extra (mcp>=2)")

import anyio  # comes with the SDK
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from memnet import Cabinet
from memnet.faces.mcp import MISSING_EXTRA, MemNetTools, build_server, sdk_tool_list
from memnet.faces.mcp_stdio import PROTOCOL_VERSIONS, StdioServer, load_tools, read_lines
from memnet.faces.roots import Roots

ROOT = Path(__file__).resolve().parents[2]

TOOLS = {"memnet_recall", "memnet_outline", "memnet_commit", "memnet_sessions",
         "memnet_create_session", "memnet_absorb", "memnet_ingest", "memnet_snap",
         "memnet_host_search", "memnet_host_snap"}
DELTA = ("INSERT (t:TSK {title: 'Fix rounding in the pricing page', status: 'open'}), "
         "(m:MOD {path: 'shop/pricing.py', name: 'pricing'}), "
         "(l:LAW {text: 'Never change a price without a recorded decision'}), "
         "(t)-[:TOUCHES]->(m)")


def text_of(res: Any) -> str:
    return "".join(getattr(c, "text", "") for c in res.content)


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


# -- in process ------------------------------------------------------------------
@pytest.mark.req("MN-REQ-13.1", "MN-REQ-15", "MN-REQ-19")
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tools_in_process(tmp_path, mode):
    """legacy: JSON-RPC over the SDK's in-memory transport; auto: the SDK's
    in-process direct dispatch (the 2026 protocol)."""
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab)

    async def main() -> None:
        async with Client(server, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for name in ("memnet_recall", "memnet_outline", "memnet_sessions"):
                a = tools[name].annotations
                assert (a.read_only_hint, a.idempotent_hint, a.destructive_hint,
                        a.open_world_hint) == (True, True, False, False), name
            a = tools["memnet_commit"].annotations
            assert a.read_only_hint is False and a.idempotent_hint is False
            props = tools["memnet_recall"].input_schema["properties"]
            assert list(props) == ["session", "q", "k", "max_rows", "limit", "fanout",
                                   "view", "laws", "since", "max_tokens"]
            assert props["k"]["default"] == 2 and props["laws"]["default"] is True
            assert tools["memnet_recall"].input_schema["required"] == ["session"]
            assert "TSK status:open pricing" in tools["memnet_recall"].description
            assert "MATCH (n:TSK)" in tools["memnet_recall"].description

            res = await call(client, "memnet_create_session", session="work")
            assert not res.is_error, text_of(res)
            res = await call(client, "memnet_create_session", session="work")
            assert res.is_error and text_of(res).startswith("session_exists:")

            res = await call(client, "memnet_commit", session="work", delta=DELTA)
            assert not res.is_error, text_of(res)
            out = res.structured_content
            assert out["version"] == 1 and out["changed"] is True
            assert set(out["ids"]) == {"t", "m", "l"}
            assert all(isinstance(h, str) and h for h in out["ids"].values())
            assert "version 1" in text_of(res)

            res = await call(client, "memnet_recall", session="work",
                             q="TSK status:open pricing")
            assert not res.is_error, text_of(res)
            assert "Fix rounding in the pricing page" in text_of(res)
            rec = res.structured_content
            assert rec["seed_mode"] == "match" and rec["rows"] >= 1
            assert rec["tokens"] > 0 and rec["etag"] and rec["version"] == 1
            assert out["ids"]["t"] in rec["seeds"]

            res = await call(client, "memnet_recall", session="work",
                             q="MATCH (n:TSK) WHERE n.title CONTAINS 'rounding' LIMIT 3",
                             k=1, max_rows=10, view="shell", laws=False)
            assert not res.is_error, text_of(res)
            assert res.structured_content["view"] == "shell"
            assert res.structured_content["laws"] == 0

            res = await call(client, "memnet_outline", session="work")
            assert not res.is_error, text_of(res)
            assert res.structured_content["seed_mode"] == "outline"
            assert res.structured_content["census"]["TSK"] == 1

            res = await call(client, "memnet_sessions")
            assert not res.is_error
            (row,) = res.structured_content["sessions"]
            assert row["id"] == "work" and row["version"] == 1 and row["nodes"] == 3

            # errors are tool results with the stable code, never protocol errors
            res = await call(client, "memnet_recall", session="nope", q="TSK")
            assert res.is_error
            assert text_of(res).startswith("session_not_found: no session 'nope'")
            assert "memnet_create_session" in text_of(res)
            assert res.structured_content["error"]["code"] == "session_not_found"

            res = await call(client, "memnet_recall", session="work",
                             q="MATCH (n:TSK WHERE")
            assert res.is_error and text_of(res).startswith("gql_syntax:")
            assert res.structured_content["error"]["code"] == "gql_syntax"

            res = await call(client, "memnet_commit", session="work", delta="INSERT (t:TSK")
            assert res.is_error and text_of(res).startswith("gql_syntax:")

            res = await call(client, "memnet_recall", session="work", q="TSK", k=99)
            assert res.is_error and text_of(res).startswith("bad_query:")

            res = await call(client, "memnet_create_session", session="Bad Id")
            assert res.is_error and text_of(res).startswith("invalid_session_id:")

            # a failed commit changed nothing
            res = await call(client, "memnet_sessions")
            assert res.structured_content["sessions"][0]["version"] == 1

            # Path-B Absorb: a bounded slice of `work` joins `lead` as one version
            await call(client, "memnet_commit", session="work",
                       delta="INSERT (far:DOC {title: 'not near the anchor'})")
            await call(client, "memnet_create_session", session="lead")
            anchor = "na1"  # the task of DELTA, minted first
            res = await call(client, "memnet_absorb", lead="lead", member="work",
                             anchors=[anchor], id_policy="remint", hops=1)
            assert not res.is_error, text_of(res)
            assert res.structured_content["version"] == 1
            assert res.structured_content["ids"][anchor].startswith("n")
            res = await call(client, "memnet_recall", session="lead", q="TSK pricing")
            assert "origin: 'work/na1'" in text_of(res)
            res = await call(client, "memnet_absorb", lead="lead", member="work",
                             anchors=[anchor], id_policy="reject")
            assert res.is_error and text_of(res).startswith("absorb_rejected:")
            assert tools["memnet_absorb"].annotations.read_only_hint is False

    try:
        anyio.run(main)
    finally:
        cab.close()
    # what the server committed is in the cabinet for the next process
    with Cabinet.open(tmp_path / "cab") as again:
        assert again.open("work").version == 2   # the first commit and the far DOC
        assert again.open("lead").version == 1   # the absorbed slice


@pytest.mark.req("MN-REQ-00.1", "MN-REQ-19")
def test_recall_since_answers_what_changed(tmp_path):
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab)

    async def main() -> None:
        async with Client(server, mode="auto") as client:
            await call(client, "memnet_create_session", session="work")
            await call(client, "memnet_commit", session="work", delta=DELTA)
            first = await call(client, "memnet_recall", session="work", q="TSK pricing")
            etag = first.structured_content["etag"]
            res = await call(client, "memnet_recall", session="work", q="TSK pricing",
                             since=etag)
            assert text_of(res).startswith("// unchanged v=1 ")
            assert res.structured_content["answer"] == "unchanged"
            await call(client, "memnet_commit", session="work", delta="SET na1.status = 'review'")
            res = await call(client, "memnet_recall", session="work", q="TSK pricing",
                             since=etag)
            assert text_of(res).splitlines()[1:] == ["SET na1.status = 'review'"]
            rec = res.structured_content
            assert rec["answer"] == "delta" and rec["since"] == etag and rec["changed"] == 1
            assert "read_first" not in rec  # the structured receipt is as short as the line
            # another writer moves the session on: the server reopens it and walks the log
            with Cabinet.open(tmp_path / "cab") as other:
                s = other.open("work")
                s.commit("SET na1.prio = 1")
                other.flush(s)
            res = await call(client, "memnet_recall", session="work", q="TSK pricing",
                             since=etag)
            assert text_of(res).splitlines()[1:] == ["SET na1.prio = 1, na1.status = 'review'"]
            res = await call(client, "memnet_recall", session="work", q="TSK", since="x")
            assert res.is_error and text_of(res).startswith("bad_query: since must be")

    try:
        anyio.run(main)
    finally:
        cab.close()


@pytest.mark.req("MN-REQ-13.1", "MN-REQ-15", "MN-REQ-19")
def test_other_writers_are_seen_and_conflicts_reported(tmp_path):
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab)
    tools = server.memnet_tools

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            await call(client, "memnet_create_session", session="work")
            res = await call(client, "memnet_commit", session="work", delta=DELTA)
            assert res.structured_content["version"] == 1

            # another writer (another process would do the same) commits version 2
            with Cabinet.open(tmp_path / "cab") as other:
                s = other.open("work")
                s.commit("INSERT (d:DEC {title: 'Round half to even'})")
                other.flush(s)
            res = await call(client, "memnet_recall", session="work", q="DEC")
            assert "Round half to even" in text_of(res)  # the cached copy was refreshed
            assert res.structured_content["version"] == 2

            # lose the race: the copy is stale when the flush happens
            stale = tools._session("work")
            with Cabinet.open(tmp_path / "cab") as other:
                s = other.open("work")
                s.commit("INSERT (x:TSK {title: 'Written by the other writer'})")
                other.flush(s)
            real = tools._session
            tools._session = lambda sid: stale
            try:
                res = await call(client, "memnet_commit", session="work",
                                 delta="INSERT (y:TSK {title: 'Mine'})")
            finally:
                tools._session = real
            assert res.is_error and text_of(res).startswith("conflict:")
            assert res.structured_content["error"]["code"] == "conflict"
            assert "work" not in tools._cache  # dropped: the next call reloads

            res = await call(client, "memnet_commit", session="work",
                             delta="INSERT (y:TSK {title: 'Mine'})")
            assert not res.is_error, text_of(res)
            assert res.structured_content["version"] == 4
            res = await call(client, "memnet_recall", session="work", q="TSK", limit=10)
            assert "Written by the other writer" in text_of(res) and "Mine" in text_of(res)

    try:
        anyio.run(main)
    finally:
        cab.close()


# -- a real stdio subprocess ---------------------------------------------------------------
@pytest.mark.req("MN-REQ-13.1", "MN-REQ-15", "MN-REQ-19")
def test_stdio_subprocess(tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memnet", "--home", str(tmp_path / "cab"), "mcp"],
        env={"PYTHONPATH": str(ROOT)}, cwd=str(tmp_path))
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        with anyio.fail_after(30):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names == TOOLS
                res = await call(client, "memnet_create_session", session="work")
                assert not res.is_error, text_of(res)
                res = await call(client, "memnet_commit", session="work", delta=DELTA)
                assert not res.is_error, text_of(res)
                assert set(res.structured_content["ids"]) == {"t", "m", "l"}
                res = await call(client, "memnet_recall", session="work",
                                 q="TSK status:open pricing")
                assert not res.is_error, text_of(res)
                assert "Fix rounding in the pricing page" in text_of(res)
                assert res.structured_content["seed_mode"] == "match"
                res = await call(client, "memnet_outline", session="ghost")
                assert res.is_error
                assert text_of(res).startswith("session_not_found:")

    try:
        anyio.run(main)
    finally:
        errlog.close()
    # the commit reached the cabinet on disk
    with Cabinet.open(tmp_path / "cab") as cab:
        assert cab.open("work").recall("TSK").receipt.rows >= 1


# -- without the extra ----------------------------------------------------------------------
BLOCK_MCP = textwrap.dedent("""
    import sys

    class BlockMCP:
        def find_spec(self, name, path=None, target=None):
            if name == "mcp" or name.startswith("mcp.") or name.startswith("mcp_types"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, BlockMCP())
    from memnet.faces.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def run_blocked(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", BLOCK_MCP, *args], text=True, input=stdin,
                          capture_output=True, env=env, cwd=cwd, timeout=60, check=False)


def _rpc_lines(*messages: dict[str, Any]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}}


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_server_runs_without_the_sdk(tmp_path):
    """`memnet mcp` answers with the SDK unimportable; only build_server needs it."""
    home = tmp_path / "cab"
    stdin = _rpc_lines(
        INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memnet_create_session", "arguments": {"session": "work"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "memnet_commit", "arguments": {"session": "work", "delta": DELTA}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "memnet_recall", "arguments": {"session": "work", "q": "TSK",
                                                          "k": "1"}}})
    p = run_blocked("--home", str(home), "mcp", cwd=tmp_path, stdin=stdin)
    assert p.returncode == 0, p.stderr
    replies = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5]  # the notification got no answer
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[0]["result"]["serverInfo"]["name"] == "memnet"
    assert {t["name"] for t in replies[1]["result"]["tools"]} == TOOLS
    for r in replies[2:]:
        assert r["result"]["isError"] is False, r
    assert "Fix rounding" in replies[4]["result"]["content"][0]["text"]
    assert replies[4]["result"]["structuredContent"]["rows"] >= 1
    # the SDK's server object is what needs the extra
    code = BLOCK_MCP.replace("from memnet.faces.cli import main\nsys.exit(main(sys.argv[1:]))",
                             "")
    code += ("from memnet import Cabinet\nfrom memnet.faces.mcp import build_server\n"
             "from memnet.errors import DependencyMissing\n"
             "try:\n    build_server(Cabinet.open(backend='memory'))\n"
             "except DependencyMissing as e:\n    print(e.code, e.message)\n")
    p = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60, check=False)
    assert p.stdout.strip() == f"dependency_missing {MISSING_EXTRA}", p.stderr
    p = run_blocked("mcp", "--help", cwd=tmp_path)
    assert p.returncode == 0 and "MCP server" in p.stdout, p.stderr


def test_served_tool_list_is_the_sdks():
    """mcp_tools.json (served without the SDK) is what the SDK's server lists;
    after changing a tool, write it again with memnet.faces.mcp.write_tool_list."""
    with Cabinet.open(backend="memory") as cab:
        assert load_tools() == sdk_tool_list(cab)


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_protocol_errors_and_argument_checks(tmp_path):
    with Cabinet.open(tmp_path / "cab") as cab:
        out = io.BytesIO()
        msgs = [INIT,
                {"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {}},
                {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                 "params": {"name": "nope", "arguments": {}}},
                {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                 "params": {"name": "memnet_recall", "arguments": {"session": "s", "k": "x"}}},
                {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                 "params": {"name": "memnet_recall", "arguments": {}}},
                {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                 "params": {"name": "memnet_recall", "arguments": {"session": "s",
                                                                  "max_row": 3}}},
                {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                 "params": {"name": "memnet_outline", "arguments": {"session": "ghost"}}},
                {"jsonrpc": "2.0", "id": 13, "method": "tools/call",
                 "params": {"name": "memnet_recall", "arguments": {"session": "s",
                                                                  "k": "--5"}}},
                {"jsonrpc": "2.0", "id": 14, "method": "tools/call",
                 "params": {"name": "memnet_recall", "arguments": {"session": "s",
                                                                  "k": "9" * 25}}},
                {"jsonrpc": "2.0", "id": 9, "method": "initialize",
                 "params": {"protocolVersion": "1999-01-01"}}]
        lines = [json.dumps(m) for m in msgs] + ["{not json", "[1, 2]", ""]
        raw = b"".join(x.encode() + b"\n" for x in lines)
        raw += b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"x": "\xff"}}\n'
        raw += b'{"jsonrpc": "2.0", "id": 11, "method": "ping", "pad": "' + b"x" * 300 + b'"}\n'
        raw += b'{"jsonrpc": "2.0", "id": 12, "method": "ping"}'  # no final newline
        StdioServer(MemNetTools(cab)).serve(read_lines(io.BytesIO(raw), limit=200), out)
    replies = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    by_id = {r["id"]: r for r in replies if r["id"] is not None}
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["result"] == {}
    assert by_id[4]["error"]["code"] == -32602
    for i, words in ((5, "'k' must be integer"), (6, "'session' is required"),
                     (7, "unknown argument 'max_row'"), (13, "'k' must be integer"),
                     (14, "'k' must be integer")):
        res = by_id[i]["result"]
        assert res["isError"] and res["structuredContent"]["error"]["code"] == "invalid_argument"
        assert words in res["content"][0]["text"], res
    assert by_id[8]["result"]["content"][0]["text"].startswith("session_not_found:")
    assert by_id[9]["result"]["protocolVersion"] == PROTOCOL_VERSIONS[-1]
    anonymous = [r["error"]["code"] for r in replies if r["id"] is None]
    # bad JSON, a batch (not spoken), bytes that are not UTF-8, a line over the
    # cap (read to its end and dropped); the blank line is skipped
    assert anonymous == [-32700, -32600, -32700, -32600]
    assert by_id[12]["result"] == {}  # the line after the long one is read whole


def test_hostile_messages_are_answered_and_the_server_serves_on(tmp_path, monkeypatch):
    """Deep nesting, lone surrogates (echoed back), ids JSON-RPC does not allow
    and a fault inside a tool each get an error reply; every ping after them is
    answered, and every reply is strict UTF-8 JSON."""
    raw = b"".join([
        b"[" * 5000 + b"]" * 5000 + b"\n",                                   # too deep
        b'{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}\n',            # unknown, lone
        b'{"jsonrpc": "2.0", "id": "\\udcff", "method": "ping"}\n',       # lone in the id
        b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": {"a": [1]}, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": 2.5, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": '
        b'"memnet_ingest", "arguments": {"session": "w", "path": "'
        + json.dumps(str(tmp_path))[1:-1].encode() + b'/nowhere/x\\udcff"}}}\n',
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": '
        b'"memnet_sessions", "arguments": {}}}\n',
        b'{"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {}}\n',
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}\n',
    ])
    with Cabinet.open(tmp_path / "cab") as cab:
        tools = MemNetTools(cab, roots=Roots([tmp_path]))
        monkeypatch.setattr(tools, "sessions", lambda *a, **k: 1 / 0)   # a fault of ours
        server = StdioServer(tools)
        monkeypatch.setattr(server, "initialize", lambda params: [][1])  # outside any tool
        out = io.BytesIO()
        server.serve(read_lines(io.BytesIO(raw)), out)
    text = out.getvalue().decode("utf-8")          # strict: no lone surrogate written
    replies = [json.loads(line, parse_constant=lambda c: pytest.fail(c)) for line in
               text.splitlines()]
    assert len(replies) == 10
    assert replies[0] == {"jsonrpc": "2.0", "id": None,
                          "error": {"code": -32700, "message": "Parse error"}}
    assert replies[1]["id"] == 1 and replies[1]["error"]["code"] == -32601
    assert replies[2] == {"jsonrpc": "2.0", "id": "\udcff", "result": {}}
    assert [r["error"]["code"] for r in replies[3:6]] == [-32600] * 3
    assert all(r["id"] is None for r in replies[3:6])
    res = replies[6]["result"]
    assert res["isError"] and res["structuredContent"]["error"]["code"] == "path_not_found"
    res = replies[7]["result"]      # a fault inside a tool: an error result
    assert res["isError"] and res["structuredContent"]["error"]["code"] == "internal"
    assert replies[8]["id"] == 6 and replies[8]["error"]["code"] == -32603
    assert replies[9] == {"jsonrpc": "2.0", "id": 5, "result": {}}


@pytest.mark.req("MN-REQ-17", "MN-REQ-18", "MN-REQ-19")
def test_ingest_and_snap_tools(tmp_path):
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab, roots=Roots([tmp_path, ROOT]))
    tree = tmp_path / "shop"
    tree.mkdir()
    (tree / "__init__.py").write_text('"""Shop."""\n')
    (tree / "pricing.py").write_text("def price():\n    pass\n")

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            res = await call(client, "memnet_ingest", session="code", path=str(tree),
                             create=True)
            assert not res.is_error, text_of(res)
            assert res.structured_content["parts"][0]["created"] >= 3
            again = await call(client, "memnet_ingest", session="code", path=str(tree))
            assert not again.structured_content["parts"][0]["changed"]
            rec = await call(client, "memnet_recall", session="code", q="MOD pricing")
            assert "shop/pricing.py" in text_of(rec)
            bad = await call(client, "memnet_ingest", session="code", path=str(tmp_path / "no"))
            assert bad.is_error and text_of(bad).startswith("path_not_found:")
            sn = await call(client, "memnet_snap", model=str(ROOT / "sysml-models"), prefix="mn")
            assert not sn.is_error, text_of(sn)
            assert sn.structured_content["catalog"] == "mn-cat"
            assert max(sn.structured_content["rows"].values()) <= 50
            req = await call(client, "memnet_recall", session="mn-cat", q="REQ rid:MN-REQ-19")
            assert "session: 'mn-" in text_of(req)
            tiny = await call(client, "memnet_snap", model=str(ROOT / "sysml-models"),
                              prefix="x", budget=2)
            assert tiny.is_error and text_of(tiny).startswith("bad_query:")

    anyio.run(main)


@pytest.mark.req("MN-REQ-17")
def test_snap_tool_lists_files_it_left_out_and_strict_writes_nothing(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "good.sysml").write_text("package Good { part def A; part a : A; part b : Gone; }\n")
    (model / "bad.sysml").write_text("package Bad {\n  part def 'A;\n}\n")  # never closes
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab, roots=Roots([tmp_path, ROOT]))

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            strict = await call(client, "memnet_snap", model=str(model), prefix="m",
                                strict=True)
            assert strict.is_error and text_of(strict).startswith("model_syntax:")
            assert cab.sessions() == []
            sn = await call(client, "memnet_snap", model=str(model), prefix="m")
            assert not sn.is_error, text_of(sn)
            out = sn.structured_content
            assert out["failed"] == ["bad.sysml:2: not ingested (model_syntax, column 12): "
                                     "unterminated string or name (no closing ' on its line)"]
            assert out["warnings"] == ["good.sysml:1: unresolved type 'Gone' of PART 'b': no "
                                       "element named 'Gone' is visible"]
            assert "not ingested: bad.sysml:2" in text_of(sn)
            assert "1 warning(s), 1 file(s) not ingested" in text_of(sn)

    anyio.run(main)


@pytest.mark.req("MN-REQ-19", "MN-REQ-22")
def test_host_search_and_snap_tools(tmp_path):
    from memnet.host import index_tree
    from tests.host.conftest import needs_tantivy, write_tree

    needs_tantivy()
    lib = write_tree(tmp_path / "lib")
    index_tree(lib, tmp_path / "cab" / "host-index")  # the default place for this home
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab, roots=Roots([tmp_path, ROOT]))

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            a = tools["memnet_host_search"].annotations
            assert (a.read_only_hint, a.idempotent_hint) == (True, True)
            a = tools["memnet_host_snap"].annotations
            assert (a.read_only_hint, a.idempotent_hint) == (False, True)
            assert tools["memnet_host_snap"].input_schema["required"] == ["session", "q"]
            res = await call(client, "memnet_host_search", q="round a price", top=2)
            assert not res.is_error, text_of(res)
            hits = res.structured_content["hits"]
            assert len(hits) == 2 and hits[0]["locator"] == "py:lib/shop/pricing.py::round_price"
            assert "py:lib/shop/pricing.py::round_price" in text_of(res)
            await call(client, "memnet_create_session", session="work")
            res = await call(client, "memnet_host_snap", session="work", q="round a price",
                             top=3)
            assert not res.is_error, text_of(res)
            out = res.structured_content
            assert (out["version"], out["changed"], out["created"]) == (1, True, 3)
            assert "QRY round a price" in text_of(res)
            again = await call(client, "memnet_host_snap", session="work", q="round a price",
                               top=3)
            assert again.structured_content["changed"] is False
            rec = await call(client, "memnet_recall", session="work", q="QRY round price")
            assert "py:lib/shop/pricing.py::round_price" in text_of(rec)
            # a refresh of the index is seen by the next call
            (lib / "docs" / "notes.txt").write_text("Inventory counts every Friday.\n")
            index_tree(lib, tmp_path / "cab" / "host-index")
            res = await call(client, "memnet_host_search", q="inventory Friday", top=1)
            assert res.structured_content["hits"][0]["locator"] == "txt:lib/docs/notes.txt"
            # errors come back as tool results with their codes
            for args, code in (({"q": ""}, "bad_query"), ({"q": "x", "top": 0}, "bad_query"),
                               ({"q": "x", "index": str(tmp_path / "none")},
                                "index_not_found")):
                res = await call(client, "memnet_host_search", **args)
                assert res.is_error and text_of(res).startswith(f"{code}:"), text_of(res)
            res = await call(client, "memnet_host_snap", session="ghost", q="price")
            assert res.is_error and text_of(res).startswith("session_not_found:")

    try:
        anyio.run(main)
    finally:
        cab.close()
    with Cabinet.open(tmp_path / "cab") as again:
        assert again.open("work").version == 1
