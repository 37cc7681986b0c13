"""The CLI progress line: silent off a terminal, ``\\r`` updates on one."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memnet import Session
from memnet.cabinet import Cabinet
from memnet.faces.progress import Progress

ROOT = Path(__file__).resolve().parents[2]
BIG_NODES = 30_000


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.req("MN-REQ-15")
def test_silent_when_not_a_tty():
    out = io.StringIO()
    clock = Clock()
    with Progress("hydrate", stream=out, delay=0, interval=0, clock=clock) as bar:
        for i in range(0, 101, 10):
            clock.t += 1
            bar(i, 100)
        bar.phase("flushing")
        bar.spin_while(lambda: time.sleep(0.05))
    assert out.getvalue() == ""


@pytest.mark.req("MN-REQ-15")
def test_carriage_return_updates_on_a_tty():
    out = FakeTTY()
    clock = Clock()
    with Progress("hydrate s", stream=out, delay=0.5, interval=0.1, clock=clock) as bar:
        bar(10, 100)  # too early: nothing yet
        assert out.getvalue() == ""
        clock.t = 1.0
        bar(50, 100)
        bar(51, 100)  # throttled: same instant
        clock.t = 2.0
        bar(100, 100)
    text = out.getvalue()
    assert text.count("\r") >= 3 and text.endswith("\n")
    frames = [f for f in text.rstrip("\n").split("\r") if f]
    assert "50.0%" in frames[0] and "50/100" in frames[0] and "0:01" in frames[0]
    assert not any("51/100" in f for f in frames)
    assert "100.0%" in frames[-1] and "0:02" in frames[-1]
    assert frames[0].startswith("hydrate s: [")


@pytest.mark.req("MN-REQ-15")
def test_quick_work_shows_nothing_even_on_a_tty():
    out = FakeTTY()
    with Progress("quick", stream=out, delay=5.0) as bar:
        bar(1, 2)
        bar(2, 2)
    assert out.getvalue() == ""


@pytest.mark.req("MN-REQ-15")
def test_indeterminate_spinner_and_phases():
    out = FakeTTY()
    with Progress("backup", stream=out, delay=0, interval=0.01) as bar:
        bar.phase("copying")
        assert bar.spin_while(lambda: (time.sleep(0.15), 42)[1]) == 42
    frames = [f for f in out.getvalue().rstrip("\n").split("\r") if f]
    assert len(frames) >= 3
    assert frames[0].startswith("backup copying: ")
    assert frames[-1].startswith("backup copying: done")
    # errors cross the thread and clear the line
    with pytest.raises(ZeroDivisionError), Progress("x", stream=FakeTTY(), delay=0) as bar:
        bar.spin_while(lambda: 1 / 0)


@pytest.fixture(scope="module")
def big_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("big") / "cab"
    s = Session("big")
    st = s.store
    for i in range(BIG_NODES):
        nid = st.add_node("TSK", (), {"title": f"task {i}", "status": "open"})
        if i % 2:
            st.add_edge("NEXT", nid - 1, nid)
    with Cabinet.open(home) as cab:
        cab.adopt(s)
    return home


def cli_env(home: Path) -> dict[str, str]:
    # a zero delay keeps the test fast; the 0.5 s default is checked above
    return dict(os.environ, MEMNET_HOME=str(home), PYTHONPATH=str(ROOT), MEMNET_PROGRESS_DELAY="0")


ARGS = ("recall", "big", "TSK", "--rows", "5")


def on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes, str]:
    """Run ``python -m memnet ARGS`` with stderr on a pseudo-terminal: the exit
    code, stdout and what the terminal showed."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "memnet", *args], stdout=subprocess.PIPE, stderr=slave, env=env
        )
        os.close(slave)
        slave = -1
        chunks: list[bytes] = []
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        out, _ = p.communicate(timeout=60)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    return p.returncode, out, b"".join(chunks).decode()


@pytest.mark.req("MN-REQ-15")
def test_cli_shows_a_bar_on_a_terminal(big_home):
    code, out, err = on_terminal(list(ARGS), cli_env(big_home))
    assert code == 0
    assert "\r" in err and "hydrate big: [" in err and "100.0%" in err, err
    total = BIG_NODES + BIG_NODES // 2  # records read: nodes and edges
    assert f"{total:,}/{total:,}" in err, err
    assert b"// shape v=" in out


@pytest.mark.req("MN-REQ-15")
def test_cli_is_silent_on_a_pipe(big_home):
    r = subprocess.run(
        [sys.executable, "-m", "memnet", *ARGS],
        capture_output=True,
        env=cli_env(big_home),
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert r.stdout.startswith(b"// shape v=")
