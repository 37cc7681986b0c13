"""Roots of the MCP server (issue 36): the tools that read files a call names
(``memnet_ingest``, ``memnet_snap``, the host tools' ``index``) read only
inside the operator's ``--root`` directories and the roots the client lists;
with neither, they are off. Tested with the SDK's client talking to a real
``memnet mcp`` subprocess over stdio (a 2026-07-28 client, which is asked for
its roots by an ``InputRequiredResult``, and a handshake client, asked by a
``roots/list`` request), and in process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.lowlevel", reason="needs the mcp extra (mcp>=2)")

import anyio  # comes with the SDK
import mcp.types as mtypes
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from memnet import Cabinet
from memnet.errors import MemNetError
from memnet.faces import mcp as mcp_face
from memnet.faces.mcp import build_server
from memnet.faces.mcp_tools import FILE_TOOLS
from memnet.faces.roots import Roots

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("memnet")
ISOLATION, FACES = "MN-REQ-10", "MN-REQ-19"


def text_of(res: Any) -> str:
    return "".join(getattr(c, "text", "") for c in res.content)


def _code(res: Any) -> str | None:
    return res.structured_content["error"]["code"] if res.is_error else None


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """``allowed/shop`` (a tree), ``allowed/sub/model.sysml``, ``secret/keys.py``
    and a link ``allowed/leak`` to ``secret``."""
    for rel, text in (
        ("allowed/shop/__init__.py", '"""Shop."""\n'),
        ("allowed/shop/pricing.py", "def price():\n    pass\n"),
        ("allowed/sub/model.sysml", "package M { part def A; }\n"),
        ("secret/keys.py", 'TOKEN = "do not read me"\n'),
        ("secret/model.sysml", "package S { part def B; }\n"),
    ):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    os.symlink(tmp_path / "secret", tmp_path / "allowed" / "leak")
    return tmp_path


def _serve(
    place: Path,
    *roots: Path,
    client_roots: list[Path] | None = None,
    calls: list[tuple[str, dict[str, Any]]],
    mode: str = "auto",
) -> list[Any]:
    """Start ``memnet mcp`` with ``--root`` for each of ``roots``, talk to it
    with the SDK's client in ``mode`` (listing ``client_roots`` when given),
    make the ``calls`` and return their results."""
    args = ["-m", "memnet", "--home", str(place / "cab"), "mcp"]
    for r in roots:
        args += ["--root", str(r)]
    params = StdioServerParameters(
        command=sys.executable, args=args, env={"PYTHONPATH": str(ROOT)}, cwd=str(place)
    )

    async def list_roots(context: Any) -> mtypes.ListRootsResult:
        return mtypes.ListRootsResult(
            roots=[mtypes.Root(uri=p.as_uri(), name=p.name) for p in client_roots or ()]
        )

    out: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(60), open(place / "server.err", "w") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog),
                mode=mode,
                list_roots_callback=list_roots if client_roots is not None else None,
            ) as client:
                await client.call_tool("memnet_create_session", {"session": "code"})
                for name, arguments in calls:
                    out.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return out


@pytest.mark.req(ISOLATION, FACES)
def test_operator_roots_confine_every_file_tool(place: Path) -> None:
    allowed, secret = place / "allowed", place / "secret"
    results = _serve(
        place,
        allowed,
        calls=[
            ("memnet_ingest", {"session": "code", "path": str(allowed / "shop")}),
            ("memnet_ingest", {"session": "code", "path": str(secret)}),
            ("memnet_ingest", {"session": "code", "path": str(allowed / ".." / "secret")}),
            ("memnet_ingest", {"session": "code", "path": str(allowed / "leak")}),
            ("memnet_ingest", {"session": "code", "path": "secret"}),  # relative to the server
            ("memnet_snap", {"model": str(allowed / "sub"), "prefix": "m"}),
            ("memnet_snap", {"model": str(secret / "model.sysml"), "prefix": "s"}),
            ("memnet_host_search", {"q": "price", "index": str(secret)}),
            ("memnet_host_snap", {"session": "code", "q": "price", "index": "/"}),
            ("memnet_recall", {"session": "code", "q": "MOD pricing"}),
            ("memnet_recall", {"session": "code", "q": "do not read me"}),
        ],
    )
    ok_ingest, *outside, ok_snap, bad_snap, search, hsnap, rec, leak = results
    assert not ok_ingest.is_error, text_of(ok_ingest)
    for res in outside + [bad_snap, search, hsnap]:
        assert _code(res) == "path_outside_root", text_of(res)
        assert "outside the roots this server may read" in text_of(res)
        assert str(allowed) in text_of(res)
    assert not ok_snap.is_error, text_of(ok_snap)
    assert "shop/pricing.py" in text_of(rec)
    assert leak.structured_content["seed_mode"] == "skip"  # nothing of secret/ was read
    with Cabinet.open(place / "cab") as cab:
        ids = {i.id for i in cab.sessions()}
        assert "m-cat" in ids and not any(i.startswith("s-") for i in ids)


@pytest.mark.req(ISOLATION, FACES)
def test_without_roots_the_file_tools_are_off(place: Path) -> None:
    (res, snap, search, rec) = _serve(
        place,
        calls=[
            ("memnet_ingest", {"session": "code", "path": str(place / "allowed" / "shop")}),
            ("memnet_snap", {"model": str(place / "allowed" / "sub"), "prefix": "m"}),
            ("memnet_host_search", {"q": "price", "index": str(place / "allowed")}),
            ("memnet_recall", {"session": "code", "q": ""}),
        ],
    )
    for r in (res, snap, search):
        assert _code(r) == "path_outside_root", text_of(r)
        assert "reads no files" in text_of(r) and "--root" in text_of(r)
    assert not rec.is_error  # the other tools work as ever


@pytest.mark.req(ISOLATION, FACES)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_clients_roots_are_the_roots_when_the_operator_gave_none(
    place: Path, mode: str
) -> None:
    allowed = place / "allowed"
    ok, outside, link = _serve(
        place,
        client_roots=[allowed / "shop"],
        mode=mode,
        calls=[
            ("memnet_ingest", {"session": "code", "path": str(allowed / "shop")}),
            ("memnet_ingest", {"session": "code", "path": str(allowed)}),
            ("memnet_snap", {"model": str(allowed / "leak" / "model.sysml"), "prefix": "s"}),
        ],
    )
    assert not ok.is_error, text_of(ok)
    assert _code(outside) == "path_outside_root" and _code(link) == "path_outside_root"


@pytest.mark.req(ISOLATION, FACES)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_clients_roots_narrow_the_operators_never_widen_them(place: Path, mode: str) -> None:
    allowed, secret = place / "allowed", place / "secret"
    inside, narrowed, widened = _serve(
        place,
        allowed,
        client_roots=[allowed / "sub", secret],
        mode=mode,
        calls=[
            ("memnet_snap", {"model": str(allowed / "sub"), "prefix": "m"}),
            ("memnet_ingest", {"session": "code", "path": str(allowed / "shop")}),
            ("memnet_ingest", {"session": "code", "path": str(secret)}),
        ],
    )
    assert not inside.is_error, text_of(inside)
    assert _code(narrowed) == "path_outside_root" and _code(widened) == "path_outside_root"


@pytest.mark.req(FACES)
def test_a_root_that_is_not_a_directory_stops_the_server_before_it_starts(place: Path) -> None:
    for bad in (place / "missing", place / "secret" / "keys.py", ""):
        p = subprocess.run(
            [
                str(SCRIPT),
                "--home",
                str(place / "cab"),
                "mcp",
                "--root",
                str(bad) if bad != "" else "",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert p.returncode == 1, p.stderr
        assert p.stderr.startswith("memnet: error: path_not_found: --root"), p.stderr
    assert not (place / "cab").exists()


# -- in process --------------------------------------------------------------------------
@pytest.mark.req(ISOLATION, FACES)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_each_file_call_asks_for_the_roots_so_a_change_is_seen(place: Path, mode: str) -> None:
    """The client's roots are asked for at each call of a file tool (and
    never for another tool): the list the client holds then is the one that
    counts."""
    allowed, secret = place / "allowed", place / "secret"
    listed = [allowed]
    asked: list[int] = []

    async def list_roots(context: Any) -> mtypes.ListRootsResult:
        asked.append(1)
        return mtypes.ListRootsResult(roots=[mtypes.Root(uri=p.as_uri()) for p in listed])

    cab = Cabinet.open(place / "cab")
    server = build_server(cab)

    async def main() -> list[Any]:
        async with Client(server, mode=mode, list_roots_callback=list_roots) as client:
            out = [await client.call_tool("memnet_create_session", {"session": "code"})]
            out.append(
                await client.call_tool(
                    "memnet_ingest", {"session": "code", "path": str(allowed / "shop")}
                )
            )
            listed[:] = [secret]
            out.append(await client.call_tool("memnet_recall", {"session": "code", "q": "MOD"}))
            out.append(
                await client.call_tool(
                    "memnet_ingest", {"session": "code", "path": str(allowed / "shop")}
                )
            )
            out.append(
                await client.call_tool("memnet_ingest", {"session": "code", "path": str(secret)})
            )
            return out

    try:
        created, first, rec, moved, now_in = anyio.run(main)
    finally:
        cab.close()
    assert not created.is_error and not first.is_error, text_of(first)
    assert not rec.is_error and len(asked) == 3  # the recall asked nothing
    assert _code(moved) == "path_outside_root"
    assert not now_in.is_error, text_of(now_in)


@pytest.mark.req(ISOLATION, FACES)
def test_a_client_that_does_not_answer_leaves_the_operators_roots(
    place: Path, monkeypatch: Any
) -> None:
    """A handshake client that never answers (or answers with an error) is
    read as naming no roots: after ROOTS_WAIT the call goes on with the
    operator's roots alone, and with none it reads nothing."""
    monkeypatch.setattr(mcp_face, "ROOTS_WAIT", 0.3)
    allowed = place / "allowed"

    async def silent(context: Any) -> mtypes.ListRootsResult:
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def refuses(context: Any) -> mtypes.ErrorData:
        return mtypes.ErrorData(code=-32603, message="no roots here")

    results = []
    for roots, callback in (([allowed], silent), ([], silent), ([allowed], refuses)):
        cab = Cabinet.open(place / f"cab{len(results)}")
        server = build_server(cab, roots=Roots(roots))

        async def main(server: Any, callback: Any) -> Any:
            with anyio.fail_after(30):
                async with Client(server, mode="legacy", list_roots_callback=callback) as client:
                    await client.call_tool("memnet_create_session", {"session": "code"})
                    return await client.call_tool(
                        "memnet_ingest", {"session": "code", "path": str(allowed / "shop")}
                    )

        try:
            results.append(anyio.run(main, server, callback))
        finally:
            cab.close()
    operator_only, nothing, after_error = results
    assert not operator_only.is_error, text_of(operator_only)
    assert _code(nothing) == "path_outside_root" and "reads no files" in text_of(nothing)
    assert not after_error.is_error, text_of(after_error)


# -- the Roots object ----------------------------------------------------------------------
def test_roots_resolve_paths_before_comparing(place: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = place / "allowed"
    r = Roots([allowed, allowed / "sub"])  # a root inside another is one more name for it
    assert r.check(str(allowed / "shop")) == str(allowed / "shop")
    monkeypatch.chdir(allowed)
    assert r.check("shop/../sub") == str(allowed / "sub")
    for bad in (
        "..",
        str(allowed) + "-not",
        "/",
        str(allowed / "leak" / "keys.py"),
        str(allowed / "sub" / ".." / ".." / "secret"),
    ):
        with pytest.raises(MemNetError) as e:
            r.check(bad)
        assert e.value.code == "path_outside_root", bad
    for bad in ("", "a\x00b", None, 5):
        with pytest.raises(MemNetError) as e:
            r.check(bad)
        assert e.value.code == "path_not_found"
    # client roots: file URIs only (percent-escapes read), anything else ignored
    c = Roots().narrowed(
        {
            "roots": [
                {"uri": (place / "a b").as_uri()},
                {"uri": "https://x/y"},
                {"uri": "file://elsewhere/z"},
                {"name": "no uri"},
                7,
            ]
        }
    )
    assert c.client == (str(place / "a b"),) and c.dirs == c.client
    assert Roots().narrowed({"roots": []}).client is None
    assert Roots().narrowed({"roots": []}).dirs == ()
    narrowed = r.narrowed(None)
    assert narrowed.client is None and narrowed.dirs == r.dirs
    assert r.narrowed({"roots": [{"uri": allowed.as_uri()}]}).client == (str(allowed),)
    assert r.client is None  # narrowing makes new roots; the server's stay as they were
    assert set(FILE_TOOLS) == {
        "memnet_ingest",
        "memnet_snap",
        "memnet_host_search",
        "memnet_host_snap",
    }
