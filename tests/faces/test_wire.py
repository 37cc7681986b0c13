"""The framed GQL wire (`memnet wire`): a real subprocess through real pipes."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memnet import Cabinet
from memnet.faces.wire import MAX_FRAME, Splitter

ROOT = Path(__file__).resolve().parents[2]
HEADER = re.compile(rb"(?:ok|error ([a-z_]+)) ([0-9]+)\n\Z")


class WireProc:
    """``python -m memnet --home HOME wire`` with a reader thread that parses
    every response by its frame header."""

    def __init__(self, home: Path, *extra: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.p = subprocess.Popen(
            [sys.executable, "-m", "memnet", "--home", str(home), "wire", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.frames: list[tuple[str, str]] = []  # (status: "ok" or the error code, body)
        self.bad: list[bytes] = []  # anything that is not a well formed frame
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        out = self.p.stdout
        assert out is not None
        while True:
            head = out.readline()
            if not head:
                break
            m = HEADER.match(head)
            if m is None:
                self.bad.append(head)
                break
            n = int(m.group(2))
            body = out.read(n)
            nl = out.read(1)
            if len(body) != n or nl != b"\n":
                self.bad.append(head + body + nl)
                break
            with self.cond:
                self.frames.append(
                    (m.group(1).decode() if m.group(1) else "ok", body.decode("utf-8"))
                )
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def send(self, text: str | bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(text.encode("utf-8") if isinstance(text, str) else text)
        self.p.stdin.flush()

    def wait_frames(self, count: int, timeout: float = 60) -> list[tuple[str, str]]:
        end = time.monotonic() + timeout
        with self.cond:
            while len(self.frames) < count and not self.bad and self.reader.is_alive():
                left = end - time.monotonic()
                assert left > 0, f"only {len(self.frames)} of {count} responses came"
                self.cond.wait(left)
        assert not self.bad, self.bad
        assert len(self.frames) >= count, (len(self.frames), count)
        return self.frames[:count]

    def close(self, timeout: float = 60) -> int:
        assert self.p.stdin is not None
        self.p.stdin.close()
        rc = self.p.wait(timeout)
        self.reader.join(timeout)
        return rc

    def peak_rss_kib(self) -> int:
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.reader.join(10)
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            if f is not None:
                f.close()


@pytest.fixture
def wire_factory():
    procs: list[WireProc] = []

    def start(home: Path, *extra: str) -> WireProc:
        w = WireProc(home, *extra)
        procs.append(w)
        return w

    yield start
    for w in procs:
        w.kill()


def _stream(
    rng: random.Random, count: int, handles: list[str], state: dict[str, int]
) -> list[tuple[str, tuple[str, str | None] | None]]:
    """``count`` statements, each with its expected (status, check) or None when
    it is blank (no response). ``state`` counts open TSK nodes and commits."""
    out: list[tuple[str, tuple[str, str | None] | None]] = []
    kinds = (
        ["insert"] * 20
        + ["set"] * 12
        + ["recall"] * 12
        + ["match"] * 8
        + ["syntax"] * 10
        + ["use"] * 5
        + ["garbage"] * 6
        + ["ping"] * 12
        + ["blank"] * 7
        + ["outline"] * 4
        + ["sessions"] * 2
        + ["badopt"] * 2
    )
    for _ in range(count):
        i = state["seq"] = state["seq"] + 1
        kind = rng.choice(kinds)
        if kind == "insert":
            pre = rng.choice(["", "/* c; */ ", "// line; comment\n", "\n  "])
            stmt = (
                f"{pre}INSERT (t:TSK {{title: 'task {i}; it''s \\'q\\' // no /* no', "
                f"status: 'open', n: {i}}});"
            )
            out.append((stmt, ("ok", '"changed": true')))
            state["open"] += 1
            state["commits"] += 1
        elif kind == "set":
            h = rng.choice(handles)
            out.append((f"SET {h}.prio = {i} /* ; */;", ("ok", '"changed": true')))
            state["commits"] += 1
        elif kind == "recall":
            out.append(
                (
                    "recall TSK status:open WITH k=1, rows=10, limit=3, format=json;",
                    ("ok", f'"matched": {state["open"]},'),
                )
            )
        elif kind == "match":
            out.append(
                (
                    "MATCH (n:TSK {status: 'open'}) LIMIT 2;",
                    ("ok", f"rows={min(2, state['open'])}/50 "),
                )
            )
        elif kind == "syntax":
            out.append((f"INSERT (x:TSK {{title: 'oops {i};' );", ("gql_syntax", None)))
        elif kind == "use":
            out.append((f"USE nosuch-{i};", ("session_not_found", f"nosuch-{i}")))
        elif kind == "garbage":
            out.append((f"FROBNICATE {i} 'x;y' // ;\n;", ("bad_frame", "FROBNICATE")))
        elif kind == "ping":
            out.append(("// a; comment\nPING /* ; */;", ("ok", "pong")))
        elif kind == "blank":
            out.append((rng.choice(["  ;", "/* only; a comment */ ;", "// c;\n;", "\n;"]), None))
        elif kind == "outline":
            out.append(("OUTLINE WITH view=shell;", ("ok", " census=")))
        elif kind == "sessions":
            out.append(("SESSIONS;", ("ok", '"id": "work"')))
        else:
            out.append(("RECALL TSK WITH depth=3;", ("bad_query", "depth")))
    return out


def _check(frames: list[tuple[str, str]], expected: list[tuple[str, str | None]]) -> None:
    assert len(frames) == len(expected)
    for n, ((status, body), (want, needle)) in enumerate(zip(frames, expected, strict=True)):
        assert status == want, (n, status, body, want)
        if needle is not None:
            assert needle in body, (n, body, needle)


@pytest.mark.req("MN-REQ-08", "MN-REQ-14", "MN-REQ-15", "MN-REQ-19")
def test_ten_thousand_statements_framed_in_order(tmp_path, wire_factory):
    home = tmp_path / "cab"
    w = wire_factory(home)
    w.send(
        "RECALL TSK;  USE work CREATE;\n"
        "INSERT (a:TSK {title: 'seed a', status: 'open'}), (b:TSK {title: 'seed b', "
        "status: 'open'});"
    )
    first = w.wait_frames(3)
    assert first[0][0] == "bad_frame" and "USE a session first" in first[0][1]
    assert first[1] == ("ok", "using work (version 0)")
    ids = json.loads(first[2][1])
    assert ids["version"] == 1 and ids["changed"] is True
    handles = sorted(ids["ids"].values())
    state = {"open": 2, "commits": 1, "seq": 0}
    rng = random.Random(20261130)

    part1 = _stream(rng, 5000, handles, state)
    w.send("\n".join(s for s, _ in part1) + "\n")
    expected = [("bad_frame", None), ("ok", None), ("ok", None)]
    expected += [e for _, e in part1 if e is not None]
    _check(w.wait_frames(len(expected)), expected)

    # one statement of 5 MiB, full of ';' inside its string: refused unread
    before = w.peak_rss_kib()
    big = "INSERT (big:TSK {title: '" + "ab;" * (5 * 1024 * 1024 // 3) + "'});"
    assert len(big) > 5 * 1024 * 1024 > MAX_FRAME
    w.send(big)
    expected.append(("frame_too_large", "refused"))
    _check(w.wait_frames(len(expected)), expected)
    growth = w.peak_rss_kib() - before
    assert growth < 2 * 1024, f"peak RSS grew by {growth} KiB for a 5 MiB frame"

    part2 = _stream(rng, 4997, handles, state)
    # the last statement is split across writes, byte by byte around a ';' in a string
    tail = "INSERT (z:TSK {title: 'last; one', status: 'open'});"
    state["open"] += 1
    state["commits"] += 1
    w.send("\n".join(s for s, _ in part2) + "\n")
    for ch in tail.encode():
        w.send(bytes([ch]))
    expected += [e for _, e in part2 if e is not None]
    expected.append(("ok", '"changed": true'))
    assert len(part1) + 1 + len(part2) + 1 + 3 >= 10_000
    assert w.close() == 0, w.p.stderr.read().decode() if w.p.stderr else ""
    frames = w.wait_frames(len(expected))
    assert len(w.frames) == len(expected)  # nothing extra, nothing merged
    _check(frames, expected)

    with Cabinet.open(home) as cab:
        s = cab.open("work")
        assert s.version == state["commits"]
        assert s.store.live_nodes == state["open"]
        assert s.recall("TSK status:open", limit=3).receipt.matched == state["open"]


@pytest.mark.req("MN-REQ-08")
def test_oversized_frame_is_not_held_in_memory(tmp_path, wire_factory):
    # a fresh process, so that no earlier peak hides the growth
    w = wire_factory(tmp_path / "cab", "--session", "mem")
    w.send("PING; INSERT (t:TSK {title: 'small'});")
    assert [f[0] for f in w.wait_frames(2)] == ["ok", "ok"]
    before = w.peak_rss_kib()
    w.send("INSERT (big:TSK {title: '" + "x'';" * (5 * 1024 * 1024 // 4) + "'}); PING;")
    frames = w.wait_frames(4)
    assert frames[2][0] == "frame_too_large" and frames[3] == ("ok", "pong")
    growth = w.peak_rss_kib() - before
    assert growth < 2 * 1024, f"peak RSS grew by {growth} KiB for a 5 MiB frame"
    assert w.close() == 0


@pytest.mark.req("MN-REQ-14")
def test_eof_flushes_and_exits_0(tmp_path, wire_factory):
    home = tmp_path / "cab"
    w = wire_factory(home, "--session", "eof")
    w.send(
        "INSERT (t:TSK {title: 'kept', status: 'open'}); SET t.x = 1; PING;"
        "INSERT (u:TSK {title: 'also kept'});\n// trailing comment, no statement\n"
    )
    assert w.close() == 0
    frames = w.wait_frames(4)
    assert len(w.frames) == 4
    assert [f[0] for f in frames] == ["ok", "commit_rejected", "ok", "ok"]
    assert frames[2][1] == "pong"
    with Cabinet.open(home) as cab:
        s = cab.open("eof")
        assert s.version == 2 and s.store.live_nodes == 2


@pytest.mark.req("MN-REQ-14")
def test_unterminated_statement_at_eof_is_not_run(tmp_path, wire_factory):
    home = tmp_path / "cab"
    w = wire_factory(home, "--session", "cut")
    w.send("INSERT (t:TSK {title: 'whole'}); INSERT (u:TSK {title: 'cut off'})")
    assert w.close() == 0
    frames = w.wait_frames(2)
    assert frames[0][0] == "ok"
    assert frames[1][0] == "bad_frame" and "not run" in frames[1][1]
    with Cabinet.open(home) as cab:
        assert cab.open("cut").store.live_nodes == 1


@pytest.mark.req("MN-REQ-14")
def test_sigterm_while_idle_flushes_and_exits_0(tmp_path, wire_factory):
    home = tmp_path / "cab"
    w = wire_factory(home)
    w.send("USE term CREATE; INSERT (t:TSK {title: 'before the signal'}); PING;")
    frames = w.wait_frames(3)
    assert [f[0] for f in frames] == ["ok", "ok", "ok"]
    w.p.send_signal(signal.SIGTERM)
    assert w.p.wait(30) == 0
    w.reader.join(10)
    assert len(w.frames) == 3
    with Cabinet.open(home) as cab:
        s = cab.open("term")
        assert s.version == 1 and s.store.live_nodes == 1


@pytest.mark.req("MN-REQ-14.1", "MN-REQ-19")
def test_conflict_on_flush_then_fresh_state(tmp_path, wire_factory):
    home = tmp_path / "cab"
    w = wire_factory(home)
    w.send("USE shared CREATE; INSERT (t:TSK {title: 'from the wire'});")
    assert [f[0] for f in w.wait_frames(2)] == ["ok", "ok"]
    with Cabinet.open(home) as cab:  # another writer moves the session on
        s = cab.open("shared")
        s.commit("INSERT (o:TSK {title: 'from elsewhere'})")
        cab.flush(s)
    w.send("INSERT (x:TSK {title: 'stale'}); INSERT (y:TSK {title: 'fresh'});")
    frames = w.wait_frames(4)
    assert frames[2][0] == "conflict"
    assert frames[3][0] == "ok" and json.loads(frames[3][1])["version"] == 3
    assert w.close() == 0
    with Cabinet.open(home) as cab:
        s = cab.open("shared")
        titles = sorted(s.recall("TSK", limit=10).text.split("title: ")[1:])
        assert s.version == 3 and s.store.live_nodes == 3
        assert not any("stale" in t for t in titles)


def _split(data: bytes, step: int | None) -> list[tuple[str, object]]:
    sp = Splitter()
    out = []
    if step is None:
        out += sp.feed(data)
    else:
        for i in range(0, len(data), step):
            out += sp.feed(data[i : i + step])
    return out + sp.finish()


TRICKY = [
    (b"INSERT (a {t: 'x;y'});", [b"INSERT (a {t: 'x;y'})"]),
    (b"SET a.t = 'it''s;'';';", [b"SET a.t = 'it''s;'';'"]),
    (b"SET a.t = 'q\\';';", [b"SET a.t = 'q\\';'"]),
    (b"SET a.t = 'bs\\\\';PING;", [b"SET a.t = 'bs\\\\'", b"PING"]),
    (b"PING // c; 'x\n;", [b"PING // c; 'x\n"]),
    (b"PING /* ; ' */;", [b"PING /* ; ' */"]),
    (b"P /* x **/;Q /*/ ; */;", [b"P /* x **/", b"Q /*/ ; */"]),
    (b"a/b;c//d;\n;", [b"a/b", b"c//d;\n"]),
    (b"/* only; */ ;  ; // c;\n;\n", []),
    ("'é;ü'; 'な;';".encode(), ["'é;ü'".encode(), " 'な;'".encode()]),
    (b"x '/* ;' */ y;", [b"x '/* ;' */ y"]),
]


@pytest.mark.parametrize("data,want", TRICKY)
@pytest.mark.parametrize("step", [None, 1, 2, 3])
def test_splitter_on_tricky_input(data, want, step):
    assert _split(data, step) == [("stmt", w) for w in want]


def test_splitter_rest_and_oversize():
    assert _split(b"PING; PING", 1)[1][0] == "bad"
    assert "inside a string" in _split(b"P 'abc;", 1)[0][1]
    assert "comment" in _split(b"P /* abc;", None)[0][1]
    assert _split(b"PING; // no statement", 1) == [("stmt", b"PING")]
    sp = Splitter()
    out = []
    chunk = b"ab;" * 20_000
    out += sp.feed(b"INSERT (x {t: '")
    for _ in range(100):  # 6 MB of ';' inside one string
        out += sp.feed(chunk)
    out += sp.feed(b"'}); PING;")
    assert out[0][0] == "too_large" and out[0][1] > MAX_FRAME
    assert out[1:] == [("stmt", b" PING")]
    assert sp.body.size == 0 and sp.body.file is None


@pytest.mark.req("MN-REQ-15")
def test_recall_options_that_are_not_name_value_pairs_are_bad_query():
    from memnet.errors import QueryError
    from memnet.faces.wire import _options

    allowed = {"k", "hops", "rows", "limit", "fanout", "view", "laws", "since"}
    assert _options("TSK deal with rounding", allowed) == ("TSK deal with rounding", {})
    assert _options("TSK x WITH rows=3, view=shell", allowed) == (
        "TSK x",
        {"max_rows": 3, "view": "shell"},
    )
    for text, words in (
        ("TSK WITH rows", "name=value"),
        ("TSK WITH", "name=value"),
        ("TSK WITH rows=3, rows=4", "twice"),
        ("TSK WITH k=1, hops=2", "twice"),
    ):
        with pytest.raises(QueryError, match=words):
            _options(text, allowed)


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_a_storage_outage_does_not_unselect_the_session(tmp_path):
    """A Commit whose flush fails because the cabinet cannot be reached answers
    that error; the wire keeps the session and reads it again once the
    cabinet answers (before, every later statement said "USE a session
    first", a bad_frame, for a storage outage)."""
    import io

    from memnet.errors import CabinetError
    from memnet.faces.wire import Wire

    class Flaky:
        """A real cabinet that can be made unreachable."""

        def __init__(self, cab):
            self.cab, self.down = cab, False

        def __getattr__(self, name):
            attr = getattr(self.cab, name)
            if name in ("flush", "open", "is_stale", "exists", "create") and callable(attr):

                def call(*a, **k):
                    if self.down:
                        raise CabinetError("the server is away", code="cabinet_unavailable")
                    return attr(*a, **k)

                return call
            return attr

    with Cabinet.open(tmp_path / "cab") as real:
        cab = Flaky(real)
        out = io.BytesIO()
        w = Wire(cab, out)
        frames = []

        def say(stmt):
            out.seek(0)
            out.truncate()
            w.answer(("statement", stmt.encode()))
            head, _, body = out.getvalue().decode().partition("\n")
            frames.append(
                (head.split()[0] if head.startswith("ok") else head.split()[1], body.strip())
            )
            return frames[-1]

        assert say("USE w CREATE")[0] == "ok"
        assert say("INSERT (t:TSK {title: 'kept'})")[0] == "ok"
        cab.down = True
        assert say("INSERT (t:TSK {title: 'lost'})")[0] == "cabinet_unavailable"
        assert say("RECALL TSK")[0] == "cabinet_unavailable"  # not "USE a session"
        cab.down = False
        status, body = say("RECALL TSK")
        assert status == "ok" and "kept" in body and "lost" not in body
        assert say("INSERT (t:TSK {title: 'after'})")[0] == "ok"
        assert json.loads(say("SESSIONS")[1])[0]["version"] == 2
