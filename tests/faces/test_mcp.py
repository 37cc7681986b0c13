"""The MCP face: MemNet's verbs as MCP tools, served by the official ``mcp`` SDK (2.x).

In process through the SDK's client (in-memory transport and direct dispatch),
as a real ``memnet mcp`` stdio subprocess driven by the SDK's client and by raw
JSON-RPC lines, and without the SDK installed.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.lowlevel", reason="needs the mcp extra (mcp>=2)")

import anyio  # comes with the SDK
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from memnet import Cabinet, count_tokens
from memnet.faces.mcp import MAX_MESSAGE, MISSING_EXTRA, CappedLines, build_server
from memnet.faces.mcp_tools import INSTRUCTIONS, listing
from memnet.faces.mcp_tools import TOOLS as TABLE
from memnet.faces.roots import Roots

ROOT = Path(__file__).resolve().parents[2]

TOOLS = {
    "memnet_recall",
    "memnet_outline",
    "memnet_commit",
    "memnet_sessions",
    "memnet_create_session",
    "memnet_absorb",
    "memnet_ingest",
    "memnet_snap",
    "memnet_host_search",
    "memnet_host_snap",
}
DELTA = (
    "INSERT (t:TSK {title: 'Fix rounding in the pricing page', status: 'open'}), "
    "(m:MOD {path: 'shop/pricing.py', name: 'pricing'}), "
    "(l:LAW {text: 'Never change a price without a recorded decision'}), "
    "(t)-[:TOUCHES]->(m)"
)


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
            # annotations say what differs from the protocol's defaults (not read-only,
            # destructive, not idempotent, open world)
            for name in ("memnet_recall", "memnet_outline", "memnet_sessions"):
                a = tools[name].annotations
                assert (a.read_only_hint, a.open_world_hint) == (True, False), name
            a = tools["memnet_commit"].annotations
            assert not a.read_only_hint and not a.idempotent_hint and a.open_world_hint is False
            props = tools["memnet_recall"].input_schema["properties"]
            assert list(props) == [
                "session",
                "q",
                "k",
                "max_rows",
                "limit",
                "fanout",
                "view",
                "laws",
                "since",
                "max_tokens",
            ]
            assert props["k"]["default"] == 2 and props["laws"]["default"] is True
            assert tools["memnet_recall"].input_schema["required"] == ["session"]
            assert props["view"]["enum"] == ["interior", "shell"]
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

            res = await call(client, "memnet_recall", session="work", q="TSK status:open pricing")
            assert not res.is_error, text_of(res)
            assert "Fix rounding in the pricing page" in text_of(res)
            rec = res.structured_content
            assert rec["seed_mode"] == "match" and rec["rows"] >= 1
            assert rec["tokens"] > 0 and rec["etag"] and rec["version"] == 1
            assert out["ids"]["t"] in rec["seeds"]

            res = await call(
                client,
                "memnet_recall",
                session="work",
                q="MATCH (n:TSK) WHERE n.title CONTAINS 'rounding' LIMIT 3",
                k=1,
                max_rows=10,
                view="shell",
                laws=False,
            )
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

            res = await call(client, "memnet_recall", session="work", q="MATCH (n:TSK WHERE")
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
            await call(
                client,
                "memnet_commit",
                session="work",
                delta="INSERT (far:DOC {title: 'not near the anchor'})",
            )
            await call(client, "memnet_create_session", session="lead")
            anchor = "na1"  # the task of DELTA, minted first
            res = await call(
                client,
                "memnet_absorb",
                lead="lead",
                member="work",
                anchors=[anchor],
                id_policy="remint",
                hops=1,
            )
            assert not res.is_error, text_of(res)
            assert res.structured_content["version"] == 1
            assert res.structured_content["ids"][anchor].startswith("n")
            res = await call(client, "memnet_recall", session="lead", q="TSK pricing")
            assert "origin: 'work/na1'" in text_of(res)
            res = await call(
                client,
                "memnet_absorb",
                lead="lead",
                member="work",
                anchors=[anchor],
                id_policy="reject",
            )
            assert res.is_error and text_of(res).startswith("absorb_rejected:")
            assert not tools["memnet_absorb"].annotations.read_only_hint
            # the default policy (merge) joins what lead holds: twice is once
            await call(client, "memnet_create_session", session="lead2")
            for version, changed in ((1, True), (1, False)):
                res = await call(
                    client, "memnet_absorb", lead="lead2", member="work", anchors=[anchor], hops=1
                )
                assert not res.is_error, text_of(res)
                got = res.structured_content
                assert (got["version"], got["changed"]) == (version, changed)
            assert "already holds" in text_of(res)

    try:
        anyio.run(main)
    finally:
        cab.close()
    # what the server committed is in the cabinet for the next process
    with Cabinet.open(tmp_path / "cab") as again:
        assert again.open("work").version == 2  # the first commit and the far DOC
        assert again.open("lead").version == 1  # the absorbed slice


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
            res = await call(client, "memnet_recall", session="work", q="TSK pricing", since=etag)
            assert text_of(res).startswith("// unchanged v=1 ")
            assert res.structured_content["answer"] == "unchanged"
            await call(client, "memnet_commit", session="work", delta="SET na1.status = 'review'")
            res = await call(client, "memnet_recall", session="work", q="TSK pricing", since=etag)
            assert text_of(res).splitlines()[1:] == ["SET na1.status = 'review'"]
            rec = res.structured_content
            assert rec["answer"] == "delta" and rec["since"] == etag and rec["changed"] == 1
            assert "read_first" not in rec  # the structured receipt is as short as the line
            # another writer moves the session on: the server reopens it and walks the log
            with Cabinet.open(tmp_path / "cab") as other:
                s = other.open("work")
                s.commit("SET na1.prio = 1")
                other.flush(s)
            res = await call(client, "memnet_recall", session="work", q="TSK pricing", since=etag)
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
                res = await call(
                    client, "memnet_commit", session="work", delta="INSERT (y:TSK {title: 'Mine'})"
                )
            finally:
                tools._session = real
            assert res.is_error and text_of(res).startswith("conflict:")
            assert res.structured_content["error"]["code"] == "conflict"
            assert "work" not in tools._cache  # dropped: the next call reloads

            res = await call(
                client, "memnet_commit", session="work", delta="INSERT (y:TSK {title: 'Mine'})"
            )
            assert not res.is_error, text_of(res)
            assert res.structured_content["version"] == 4
            res = await call(client, "memnet_recall", session="work", q="TSK", limit=10)
            assert "Written by the other writer" in text_of(res) and "Mine" in text_of(res)

    try:
        anyio.run(main)
    finally:
        cab.close()


# -- a real stdio subprocess ---------------------------------------------------------------
def _params(tmp_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memnet", "--home", str(tmp_path / "cab"), "mcp", *args],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )


@pytest.mark.req("MN-REQ-13.1", "MN-REQ-15", "MN-REQ-19")
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_subprocess(tmp_path, mode):
    """`memnet mcp` is the SDK's server: a 2026-07-28 client (auto) and a
    handshake client (legacy) both get the table's listing and the tools."""
    errlog = (tmp_path / "server.err").open("w")

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(stdio_client(_params(tmp_path), errlog=errlog), mode=mode) as client:
                assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
                assert client.instructions == INSTRUCTIONS
                listed = (await client.list_tools()).tools
                assert {t.name for t in listed} == TOOLS
                served = [
                    t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed
                ]
                assert served == listing()  # what the table declares, nothing added
                res = await call(client, "memnet_create_session", session="work")
                assert not res.is_error, text_of(res)
                res = await call(client, "memnet_commit", session="work", delta=DELTA)
                assert not res.is_error, text_of(res)
                assert set(res.structured_content["ids"]) == {"t", "m", "l"}
                res = await call(
                    client, "memnet_recall", session="work", q="TSK status:open pricing"
                )
                assert not res.is_error, text_of(res)
                assert "Fix rounding in the pricing page" in text_of(res)
                assert res.structured_content["seed_mode"] == "match"
                res = await call(client, "memnet_outline", session="ghost")
                assert res.is_error
                assert text_of(res).startswith("session_not_found:")
                res = await call(client, "memnet_recall", session="work", q="TSK", k="x")
                assert text_of(res).startswith(
                    "invalid_argument: memnet_recall: argument 'k' must be integer"
                )

    try:
        anyio.run(main)
    finally:
        errlog.close()
    # the commit reached the cabinet on disk
    with Cabinet.open(tmp_path / "cab") as cab:
        assert cab.open("work").recall("TSK").receipt.rows >= 1


def _rpc(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_lines_that_are_no_message_are_dropped_and_the_server_serves_on(tmp_path):
    """Raw lines on the real server's stdin: bad JSON, bytes that are not
    UTF-8, nesting past any parser, ids JSON-RPC does not allow and a lone
    surrogate are dropped; every request after them is answered, in strict
    UTF-8 JSON, and an unknown tool is a protocol error."""
    raw = b"".join(
        [
            b"{not json\n",
            b"\xff\xfe\n",
            b"[" * 5000 + b"]" * 5000 + b"\n",
            b'{"jsonrpc": "2.0", "id": 2.5, "method": "ping"}\n',
            b'{"jsonrpc": "2.0", "id": {"a": [1]}, "method": "ping"}\n',
            b'{"jsonrpc": "2.0", "id": "\\udcff", "method": "ping"}\n',
            _rpc(
                INIT,
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "nope", "arguments": {}},
                },
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "memnet_sessions", "arguments": {}},
                },
            ),
        ]
    )
    replies: dict[Any, Any] = {}
    with subprocess.Popen(
        [sys.executable, "-m", "memnet", "--home", str(tmp_path / "cab"), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=tmp_path,
    ) as p:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(raw)
        p.stdin.flush()
        with _deadline(60):
            while set(replies) != {1, 2, 3, 4, 5}:
                line = p.stdout.readline()
                assert line, f"the server stopped; answered {sorted(map(str, replies))}"
                reply = json.loads(line.decode("utf-8"))  # strict: no lone surrogate
                replies[reply.get("id")] = reply
        p.stdin.close()
        assert p.wait(timeout=30) == 0
    assert replies[1]["result"]["serverInfo"]["name"] == "memnet"
    assert len(replies[2]["result"]["tools"]) == len(TOOLS)
    assert replies[3]["result"] == {}
    assert replies[4]["error"]["code"] == -32602
    assert replies[5]["result"]["structuredContent"] == {"sessions": []}


class _deadline:
    """Fail a blocking read loop that outlives ``seconds`` (an alarm signal)."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        import signal

        def boom(*_: Any) -> None:
            raise TimeoutError(f"no answer within {self.seconds} s")

        signal.signal(signal.SIGALRM, boom)
        signal.alarm(self.seconds)

    def __exit__(self, *exc: Any) -> None:
        import signal

        signal.alarm(0)


def test_a_line_over_the_cap_is_read_to_its_end_and_dropped():
    raw = b'{"a": 1}\n' + b"x" * 450 + b"\n" + '{"b": "\u00e9"}\n'.encode() + b"\xff\n" + b"tail"
    lines = CappedLines(io.BytesIO(raw), limit=200)
    assert [lines.readline() for _ in range(6)] == [
        '{"a": 1}\n',
        "\n",
        '{"b": "\u00e9"}\n',
        "\ufffd\n",
        "tail",
        "",
    ]
    assert MAX_MESSAGE == 16 << 20


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_a_root_whose_name_is_not_utf8_is_shown_escaped(tmp_path):
    """A --root named by bytes that are not UTF-8 is held as a lone surrogate,
    which the wire cannot carry: a message (and its structured content) that
    names it shows its escape, and the server serves on."""
    os.mkdir(os.fsencode(tmp_path) + b"/r\xffoot")
    root = os.fsdecode(os.fsencode(tmp_path) + b"/r\xffoot")

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(stdio_client(_params(tmp_path, "--root", root))) as client:
                res = await call(client, "memnet_ingest", session="s", path=str(ROOT))
                assert res.is_error and text_of(res).startswith("path_outside_root:")
                assert "r\\udcffoot" in text_of(res)
                assert res.structured_content["error"]["roots"] == [
                    root.replace("\udcff", "\\udcff")
                ]
                res = await call(client, "memnet_sessions")
                assert not res.is_error, text_of(res)

    anyio.run(main)


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


def run_blocked(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", BLOCK_MCP, *args],
        text=True,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_without_the_sdk_memnet_mcp_says_how_to_install_it(tmp_path):
    home = tmp_path / "cab"
    p = run_blocked("--home", str(home), "mcp", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip() == f"memnet: error: dependency_missing: {MISSING_EXTRA}"
    assert "pip install 'memnet[mcp]'" in MISSING_EXTRA
    assert not home.exists()  # refused before the cabinet is opened
    p = run_blocked("mcp", "--help", cwd=tmp_path)
    assert p.returncode == 0 and "MCP server" in p.stdout, p.stderr
    assert "memnet_recall" in p.stdout and "memnet[mcp]" in p.stdout
    code = BLOCK_MCP.replace("from memnet.faces.cli import main\nsys.exit(main(sys.argv[1:]))", "")
    code += (
        "from memnet import Cabinet\nfrom memnet.faces.mcp import build_server\n"
        "from memnet.errors import DependencyMissing\n"
        "try:\n    build_server(Cabinet.open(backend='memory'))\n"
        "except DependencyMissing as e:\n    print(e.code, e.message)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        text=True,
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=60,
        check=False,
    )
    assert p.stdout.strip() == f"dependency_missing {MISSING_EXTRA}", p.stderr


# -- the tool list -----------------------------------------------------------------------------
def _tokens(value: Any) -> int:
    return count_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@pytest.mark.req("MN-REQ-00", "MN-REQ-19")
def test_the_tool_list_costs_at_most_1500_tokens_and_says_how_to_read_a_shape(tmp_path):
    """SPEC §7: the tool list as the server sends it (names, descriptions,
    input schemas, and the annotations clients read) ≤ 1,500 o200k tokens;
    the server's instructions are short too. The descriptions say what the
    text is: the receipt line first, then the INSERT literal."""
    from memnet.absorb import POLICIES
    from memnet.recall.lines import VIEWS

    cab = Cabinet.open(backend="memory")
    work = cab.create("work")
    work.commit(DELTA)

    async def main() -> list[Any]:
        async with Client(build_server(cab)) as client:
            return list((await client.list_tools()).tools)

    listed = anyio.run(main)
    whole = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
    assert whole == listing() and _tokens(whole) <= 1500, _tokens(whole)
    assert count_tokens(INSTRUCTIONS) <= 50

    tools = {t.name: t for t in listed}
    recall = tools["memnet_recall"].description
    lines = recall.splitlines()
    # the receipt line as described is the receipt line a Shape starts with
    template = recall[recall.index("`// shape") : recall.index("`", recall.index("`// shape") + 1)]
    shape = work.recall("TSK status:open pricing", limit=1)
    first = shape.text.splitlines()[0]
    keys = re.findall(r" (\w+)=", template)
    assert keys == ["v", "q", "rows", "holds_answer", "etag"]
    assert first.startswith("// shape ") and re.findall(r" (\w+)=", first)[: len(keys)] == keys
    assert shape.text.splitlines()[1] == "INSERT"
    assert recall.index("// shape") < recall.index("INSERT literal")
    assert "`note=`" in recall and "`more=`" in recall
    kinds = [x for x in lines if x.startswith("Usual kinds:")]
    assert len(kinds) == 1 and all(
        k in kinds[0] for k in ("TSK", "LAW", "DEC", "MOD", "REQ", "PKG")
    )
    q_line = [x for x in lines if x.startswith("q: ")]
    assert len(q_line) == 1 and "`TSK status:open pricing`" in q_line[0]
    assert "`MATCH (n:TSK) WHERE n.title CONTAINS" in q_line[0]
    # the since etag: twelve digits, as the description says
    assert len(shape.receipt.etag) == 12 and shape.receipt.etag.isdigit()
    assert "12 digits" in tools["memnet_recall"].input_schema["properties"]["since"]["description"]
    # the fixed choices are enums, the engine's own
    props = tools["memnet_recall"].input_schema["properties"]
    assert props["view"]["enum"] == list(VIEWS)
    assert set(tools["memnet_outline"].input_schema["properties"]["view"]["enum"]) == set(VIEWS)
    absorb = tools["memnet_absorb"].input_schema["properties"]["id_policy"]
    assert set(absorb["enum"]) == set(POLICIES) and absorb["default"] in POLICIES
    # one table: every argument a tool takes is a parameter of its body
    import inspect

    from memnet.faces.mcp import MemNetTools

    for spec in TABLE:
        params = inspect.signature(getattr(MemNetTools, spec.method)).parameters
        assert {a.name for a in spec.args} <= set(params), spec.name
        assert ("roots" in params) == (spec.path_arg is not None), spec.name
        assert ("progress" in params) == spec.reports_progress, spec.name
    cab.close()


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_arguments_are_read_by_the_table(tmp_path, mode):
    """A wrong type, a choice not offered, a missing or an unknown argument is
    an `invalid_argument` result naming it; digits sent as text and
    "true"/"false" are read as what they spell; null is the default."""
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab)

    async def main() -> None:
        async with Client(server, mode=mode) as client:
            await call(client, "memnet_create_session", session="s")
            await call(client, "memnet_commit", session="s", delta=DELTA)
            for args, words in (
                ({"session": "s", "k": "x"}, "'k' must be integer"),
                ({}, "'session' is required"),
                ({"session": "s", "max_row": 3}, "unknown argument 'max_row'"),
                ({"session": "s", "k": "--5"}, "'k' must be integer"),
                ({"session": "s", "k": "9" * 25}, "'k' must be integer"),
                ({"session": "s", "k": 1.5}, "'k' must be integer"),
                ({"session": "s", "laws": "yes"}, "'laws' must be boolean"),
                ({"session": "s", "view": "wide"}, "'view' must be one of interior, shell"),
            ):
                res = await client.call_tool("memnet_recall", args)
                assert res.is_error and text_of(res).startswith(
                    "invalid_argument: memnet_recall: "
                ), text_of(res)
                assert words in text_of(res)
                assert res.structured_content["error"]["code"] == "invalid_argument"
            res = await client.call_tool(
                "memnet_absorb", {"lead": "s", "member": "s", "anchors": "na1"}
            )
            assert "'anchors' must be a list of strings" in text_of(res)
            res = await call(
                client,
                "memnet_recall",
                session="s",
                q="TSK",
                k="1",
                laws="false",
                max_rows=None,
                view="shell",
            )
            assert not res.is_error, text_of(res)
            rec = res.structured_content
            assert (rec["k"], rec["laws"], rec["max_rows"], rec["view"]) == (1, 0, 50, "shell")
            with pytest.raises(MCPError) as e:
                await client.call_tool("memnet_nope", {})
            assert e.value.error.code == -32602 and "unknown tool" in e.value.error.message

    try:
        anyio.run(main)
    finally:
        cab.close()


def test_a_fault_of_ours_is_an_internal_result_and_the_server_serves_on(tmp_path, monkeypatch):
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab)
    monkeypatch.setattr(server.memnet_tools, "sessions", lambda: 1 / 0)

    async def main() -> None:
        async with Client(server) as client:
            res = await call(client, "memnet_sessions")
            assert res.is_error and text_of(res).startswith(
                "internal: unexpected failure: ZeroDivisionError"
            )
            assert res.structured_content["error"]["code"] == "internal"
            res = await call(client, "memnet_create_session", session="s")
            assert not res.is_error, text_of(res)

    try:
        anyio.run(main)
    finally:
        cab.close()


@pytest.mark.req("MN-REQ-19")
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_long_tools_report_progress(tmp_path, mode):
    """memnet_ingest and memnet_snap report progress to a client that asks for
    it (a progress token), ending at done == total."""
    tree = tmp_path / "shop"
    tree.mkdir()
    for i in range(30):
        (tree / f"m{i}.py").write_text(f"def f{i}():\n    pass\n")
    cab = Cabinet.open(tmp_path / "cab")
    server = build_server(cab, roots=Roots([tmp_path, ROOT]))
    seen: dict[str, list[tuple[float, float | None]]] = {"ingest": [], "snap": []}

    async def main() -> None:
        async with Client(server, mode=mode) as client:
            for tool, args, key in (
                ("memnet_ingest", {"session": "code", "path": str(tree), "create": True}, "ingest"),
                ("memnet_snap", {"model": str(ROOT / "sysml-models"), "prefix": "mn"}, "snap"),
            ):

                async def note(
                    done: float, total: float | None, message: str | None, key: str = key
                ) -> None:
                    seen[key].append((done, total))

                res = await client.call_tool(tool, args, progress_callback=note)
                assert not res.is_error, text_of(res)
            res = await client.call_tool("memnet_recall", {"session": "code", "q": "MOD m1"})
            assert not res.is_error

    try:
        anyio.run(main)
    finally:
        cab.close()
    for key, notes in seen.items():
        assert notes, key
        assert notes[-1][0] == notes[-1][1], (key, notes[-1])
        assert [d for d, _ in notes] == sorted(d for d, _ in notes), key


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
            res = await call(client, "memnet_ingest", session="code", path=str(tree), create=True)
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
            tiny = await call(
                client, "memnet_snap", model=str(ROOT / "sysml-models"), prefix="x", budget=2
            )
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
            strict = await call(client, "memnet_snap", model=str(model), prefix="m", strict=True)
            assert strict.is_error and text_of(strict).startswith("model_syntax:")
            assert cab.sessions() == []
            sn = await call(client, "memnet_snap", model=str(model), prefix="m")
            assert not sn.is_error, text_of(sn)
            out = sn.structured_content
            assert out["failed"] == [
                "bad.sysml:2: not ingested (model_syntax, column 12): "
                "unterminated string or name (no closing ' on its line)"
            ]
            assert out["warnings"] == [
                "good.sysml:1: unresolved type 'Gone' of PART 'b': no "
                "element named 'Gone' is visible"
            ]
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
            assert (a.read_only_hint, a.open_world_hint) == (True, False)
            a = tools["memnet_host_snap"].annotations
            assert (a.read_only_hint, a.idempotent_hint) == (None, True)
            assert tools["memnet_host_snap"].input_schema["required"] == ["session", "q"]
            res = await call(client, "memnet_host_search", q="round a price", top=2)
            assert not res.is_error, text_of(res)
            hits = res.structured_content["hits"]
            assert len(hits) == 2 and hits[0]["locator"] == "py:lib/shop/pricing.py::round_price"
            assert "py:lib/shop/pricing.py::round_price" in text_of(res)
            await call(client, "memnet_create_session", session="work")
            res = await call(client, "memnet_host_snap", session="work", q="round a price", top=3)
            assert not res.is_error, text_of(res)
            out = res.structured_content
            assert (out["version"], out["changed"], out["created"]) == (1, True, 3)
            assert "QRY round a price" in text_of(res)
            again = await call(client, "memnet_host_snap", session="work", q="round a price", top=3)
            assert again.structured_content["changed"] is False
            rec = await call(client, "memnet_recall", session="work", q="QRY round price")
            assert "py:lib/shop/pricing.py::round_price" in text_of(rec)
            # a refresh of the index is seen by the next call
            (lib / "docs" / "notes.txt").write_text("Inventory counts every Friday.\n")
            index_tree(lib, tmp_path / "cab" / "host-index")
            res = await call(client, "memnet_host_search", q="inventory Friday", top=1)
            assert res.structured_content["hits"][0]["locator"] == "txt:lib/docs/notes.txt"
            # errors come back as tool results with their codes
            for args, code in (
                ({"q": ""}, "bad_query"),
                ({"q": "x", "top": 0}, "bad_query"),
                ({"q": "x", "index": str(tmp_path / "none")}, "index_not_found"),
            ):
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


def test_docs_list_every_tool_with_its_arguments_and_choices():
    """docs/mcp.md has a row per tool of the table naming each of its
    arguments and each fixed choice."""
    doc = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in doc.splitlines()
        if line.startswith("| `memnet_")
    }
    assert set(rows) == TOOLS
    for spec in TABLE:
        for arg in spec.args:
            assert f"`{arg.name}" in rows[spec.name], (spec.name, arg.name)
            for choice in arg.choices:
                assert f"`{choice}`" in rows[spec.name], (spec.name, choice)
