"""Inputs without an end: a Δ on stdin, a device or a pipe named as a file, a
slice file far over its cap. Each is read in bounded chunks and refused with
``input_too_large`` at the cap; the process never holds more than the cap and
a chunk (checked under an address-space limit it would pass otherwise), and
the session is left as it was.

Also the issue 36 repro on the faces: a Δ of 70,000 kinds gives a coded error
on the wire and through MCP, and the session serves on."""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from memnet import Cabinet
from memnet.faces.wire import serve

SCRIPT = Path(sys.executable).with_name("memnet")
ERRORS, SAFETY = "MN-REQ-15", "MN-REQ-08"
LIMIT = 1 << 30  # bytes of address space: an input read whole passes it at once


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _run(home: Path, *args: str, stdin: object = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "--home", str(home), *args],
        stdin=stdin,  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "cab"
    with Cabinet.open(h) as cab:
        s = cab.create("work")
        s.commit("INSERT (t:TSK {title: 'before', status: 'open'})")
        cab.flush(s)
    return h


def _version(home: Path) -> int:
    with Cabinet.open(home) as cab:
        return cab.open("work").version


@pytest.mark.req(ERRORS, SAFETY)
@pytest.mark.parametrize("how", ["file", "stdin", "fifo"])
def test_an_endless_delta_is_refused_at_the_cap(home: Path, tmp_path: Path, how: str) -> None:
    if how == "file":
        p = _run(home, "commit", "work", "/dev/zero")
    elif how == "stdin":
        with open("/dev/zero", "rb") as zero:
            p = _run(home, "commit", "work", stdin=zero)
    else:  # a named pipe a writer keeps full
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        writer = subprocess.Popen(
            ["sh", "-c", f"yes 'INSERT (x:TSK)' > {fifo}"], stderr=subprocess.DEVNULL
        )
        try:
            p = _run(home, "commit", "work", str(fifo))
        finally:
            writer.kill()
            writer.wait()
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("memnet: error: input_too_large:"), p.stderr
    assert "4,194,304 characters" in p.stderr
    assert _version(home) == 1


@pytest.mark.req(ERRORS, SAFETY)
def test_a_large_delta_file_is_refused_before_it_is_read(home: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.gql"
    with open(big, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB, sparse: reading it whole would pass the limit
    p = _run(home, "commit", "work", str(big))
    assert p.returncode == 1 and "input_too_large" in p.stderr, p.stderr
    assert "1,073,741,824 bytes" in p.stderr
    assert _version(home) == 1


@pytest.mark.req(ERRORS, SAFETY)
@pytest.mark.parametrize("source", ["device", "big file"])
def test_a_slice_is_read_up_to_its_cap_only(home: Path, tmp_path: Path, source: str) -> None:
    if source == "device":
        path = "/dev/zero"
    else:
        path = str(tmp_path / "big.json")
        with open(path, "wb") as f:
            f.truncate(1 << 30)
    p = _run(home, "absorb", "work", "--slice", path)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("memnet: error: input_too_large:"), p.stderr
    assert "4,194,304" in p.stderr
    assert _version(home) == 1


def test_a_delta_within_the_cap_still_commits_from_a_pipe(home: Path) -> None:
    p = subprocess.run(
        [str(SCRIPT), "--home", str(home), "commit", "work"],
        input="INSERT (u:TSK {title: 'piped'})",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["version"] == 2


# -- the 65,536-kinds repro of issue 36 on the faces ---------------------------------------
KINDS_DELTA = "INSERT " + ", ".join(f"(b{i}:K{i})" for i in range(70_000))


@pytest.mark.req(ERRORS, "MN-REQ-03", "MN-REQ-19")
def test_a_delta_of_70000_kinds_is_refused_on_the_wire_and_the_session_serves_on(
    home: Path,
) -> None:
    stdin = home.parent / "wire.in"
    stdin.write_bytes(
        f"USE work; {KINDS_DELTA}; RECALL TSK; INSERT (a:TSK {{title: 'after'}}); "
        "RECALL TSK after;".encode()
    )
    out = io.BytesIO()
    with Cabinet.open(home) as cab, open(stdin, "rb") as f:
        serve(cab, f.fileno(), out)
    frames = out.getvalue().decode()
    assert "error commit_rejected" in frames and "at most 256 distinct kinds" in frames
    assert "Traceback" not in frames and "internal" not in frames
    assert "'after'" in frames
    assert _version(home) == 2


@pytest.mark.req(ERRORS, "MN-REQ-03", "MN-REQ-19")
def test_a_delta_of_70000_kinds_is_a_tool_error_and_the_session_serves_on(home: Path) -> None:
    pytest.importorskip("mcp.server.lowlevel", reason="needs the mcp extra (mcp>=2)")
    import anyio
    from mcp import Client

    from memnet.faces.mcp import build_server

    calls = [
        ("memnet_commit", {"session": "work", "delta": KINDS_DELTA}),
        ("memnet_recall", {"session": "work", "q": "TSK"}),
        ("memnet_commit", {"session": "work", "delta": "INSERT (a:TSK)"}),
        ("memnet_recall", {"session": "work", "q": "TSK"}),
    ]

    async def main(cab: Cabinet) -> list[dict[str, object]]:
        async with Client(build_server(cab)) as client:
            return [
                (await client.call_tool(name, args)).model_dump(by_alias=True)
                for name, args in calls
            ]

    with Cabinet.open(home) as cab:
        replies = anyio.run(main, cab)
    assert replies[0]["isError"]
    assert replies[0]["structuredContent"]["error"]["code"] == "commit_rejected"
    assert not any(r["isError"] for r in replies[1:]), replies[1:]
    assert replies[2]["structuredContent"]["version"] == 2
    assert replies[3]["structuredContent"]["rows"] == 2


@pytest.mark.req(ERRORS)
def test_a_file_name_holding_a_nul_is_path_not_found(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by bench/fuzz.py (the API and an embedding can pass what argv cannot)."""
    from memnet.faces.cli import main

    for argv in (
        ["commit", "work", "a\x00b"],
        ["absorb", "work", "--slice", "a\x00b"],
        ["commit", "work", ""],
    ):
        assert main(["--home", str(home), *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("memnet: error: path_not_found:"), err
    assert _version(home) == 1
