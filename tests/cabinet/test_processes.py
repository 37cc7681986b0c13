"""Real processes against one cabinet, on LMDB and on PostgreSQL: eight writers
racing on one session through compare-and-swap; on PostgreSQL also writers
killed with SIGKILL and the server crashed (``pg_ctl stop -m immediate``)
during flushes, in loops.

The counts are modest so the suite stays fast (8 writers x 50 commits, 20
kill rounds, 6 server crashes); ``MEMNET_RACE_COMMITS``, ``MEMNET_KILL_ROUNDS``
and ``MEMNET_CRASH_ROUNDS`` raise them: ``bench/cabinet_crash.py`` runs the
issue's 8 x 200 race and long loops and prints the figures these tests also
report (``pytest -s``, or JSON lines in ``$MEMNET_CRASH_REPORT``).

Cabinet locations reach the child processes in ``MEMNET_HOME`` (or on the
zygote's stdin), never in their arguments: a URL carries a password.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memnet import Cabinet

from ..pgserver import PgServer
from ._support import finish, kill, spawn
from .test_lmdb_processes import STEP, _check_content, kill_loop

ATOMIC, HISTORY = "MN-REQ-03", "MN-REQ-13"
KILL_ROUNDS = int(os.environ.get("MEMNET_KILL_ROUNDS", "20"))
CRASH_ROUNDS = int(os.environ.get("MEMNET_CRASH_ROUNDS", "6"))
REPORT = os.environ.get("MEMNET_CRASH_REPORT")  # a file the figures are appended to (JSON lines)


def report(name: str, **figures: Any) -> None:
    """Print the figures of a loop (seen with ``pytest -s``), and append them to
    ``$MEMNET_CRASH_REPORT`` when set."""
    print(f"\n{name}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as f:
            f.write(json.dumps({"test": name, **figures}) + "\n")


@pytest.fixture(params=["lmdb", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh cabinet location: an LMDB directory or a PostgreSQL URL."""
    if request.param == "lmdb":
        yield str(tmp_path / "cabinet")
        return
    server: PgServer = request.getfixturevalue("pg_server")
    db = f"p{os.getpid()}_{time.monotonic_ns()}"
    yield server.create_database(db)
    server.sql(f'DROP DATABASE "{db}" WITH (FORCE)')


# =========================================================================== CAS race

PROCS = 8
COMMITS = int(os.environ.get("MEMNET_RACE_COMMITS", "50"))  # the figure: 200

RACER = r"""
import json, random, sys, time
import memnet
sid, me, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cab = memnet.Cabinet.open()  # MEMNET_HOME
memnet.parse_delta("INSERT (w:TSK {x: 1})")
print("ready", flush=True)
sys.stdin.readline()
acks, conflicts = [], 0
for i in range(n):
    while True:
        s = cab.open(sid)
        base = s.version
        s.commit(f"INSERT (x:TSK {{proc: '{me}', n: {i}, tag: '{me}-{i}'}})")
        try:
            acks.append(cab.flush(s))
            break
        except memnet.ConflictError as e:
            assert e.code == "conflict" and e.details["expected"] == base, e.details
            assert e.details["stored"] > base, e.details
            conflicts += 1
            time.sleep(random.random() * 0.004)  # a little jitter: fewer wasted hydrates
print(json.dumps({"acks": acks, "conflicts": conflicts}), flush=True)
"""


@pytest.mark.req("MN-REQ-14.1", ATOMIC, HISTORY)
def test_eight_processes_racing_on_one_session_lose_nothing(where: str) -> None:
    sid = "race"
    with Cabinet.open(where) as cab:
        cab.create(sid)
    procs = [
        spawn(RACER, sid, f"p{k}", COMMITS, stdin=True, env={"MEMNET_HOME": where})
        for k in range(PROCS)
    ]
    results = []
    t0 = time.monotonic()
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, err = finish(p, timeout=120 + 6 * COMMITS)
            assert p.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            kill(p)
    seconds = time.monotonic() - t0

    total = PROCS * COMMITS
    acked = sorted(v for r in results for v in r["acks"])
    assert acked == list(range(1, total + 1)), "two flushes acknowledged the same version"
    assert all(r["acks"] == sorted(r["acks"]) for r in results)
    conflicts = sum(r["conflicts"] for r in results)
    assert conflicts > 0, "no race happened: the test proves nothing"

    with Cabinet.open(where) as cab:
        assert cab.verify() == {"sessions": 1, "nodes": total, "edges": 0, "log": total}
        (info,) = cab.sessions()
        assert info.version == total and info.nodes == total
        log = cab.log(sid)
        assert [e.version for e in log] == list(range(1, total + 1))
        assert all((e.created, e.updated, e.recycled) == (1, 0, 0) for e in log)
        assert len({e.changed for e in log}) == total
        g = cab.open(sid).to_networkx()
        seen = Counter((a["props"]["proc"], a["props"]["n"]) for _h, a in g.nodes(data=True))
        want = Counter((f"p{k}", i) for k in range(PROCS) for i in range(COMMITS))
        assert seen == want, "an insert is missing or stored twice"
        # each process's commits appear in its own order, at the versions it was told
        order = {a["props"]["tag"]: h for h, a in g.nodes(data=True)}
        by_version = {e.changed[0]: e.version for e in log}
        for k in range(PROCS):
            vs = [by_version[order[f"p{k}-{i}"]] for i in range(COMMITS)]
            assert vs == results[k]["acks"]
    backend = "postgres" if "://" in where else "lmdb"
    report(
        f"cas_race_{backend}",
        processes=PROCS,
        commits_each=COMMITS,
        final_version=total,
        conflicts=conflicts,
        seconds=round(seconds, 1),
    )


# =========================================================================== kill -9 (PostgreSQL)


@pytest.mark.req("MN-REQ-14", ATOMIC, HISTORY)
def test_kill_9_of_flushing_clients_loses_nothing_acknowledged_on_postgres(
    pg_server: PgServer,
) -> None:
    """The LMDB kill loop (test_lmdb_processes.kill_loop) on a PostgreSQL cabinet:
    a writer killed at a random moment holds a transaction (and the session's
    catalog row lock) the server then rolls back; every acknowledged version
    is there, whole, and nothing of the killed flush is."""
    url = pg_server.create_database(f"kill{os.getpid()}")
    figures = kill_loop(url, KILL_ROUNDS, max_delay=0.15)  # a flush takes longer here
    report("kill_9_postgres", **figures)


# =========================================================================== server crash

WRITER = (
    STEP
    + r"""
import json, os, sys, time
from collections import Counter
import memnet
sid, stop = sys.argv[1], sys.argv[2]
said = lambda line: os.write(1, (line + "\n").encode())
errors = Counter()
while True:
    try:
        cab = memnet.Cabinet.open()  # MEMNET_HOME
        s = cab.open(sid)
        break
    except memnet.CabinetUnavailable:
        time.sleep(0.05)
said(f"ready {s.version}")
root = None
while not os.path.exists(stop):
    v = s.version + 1
    root = step(s, root, v, 0)
    while True:  # the same session, flushed again until it lands: never reopened
        try:
            assert cab.flush(s) == v
            break
        except memnet.CabinetUnavailable as e:
            assert s.dirty and s.journal() and s.journal()[-1].version == v
            assert "Traceback" not in e.message
            errors[e.details.get("outcome", "?")] += 1
            time.sleep(0.02)
    said(f"ack {v}")
said("done " + json.dumps(errors))
"""
)


class _Lines:
    """A reader thread that keeps every line a child prints."""

    def __init__(self, p: Any) -> None:
        import threading

        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, args=(p,), daemon=True)
        self.thread.start()

    def _run(self, p: Any) -> None:
        for line in p.stdout:
            with self.cond:
                self.lines.append(line.strip())
                self.cond.notify_all()
        with self.cond:
            self.lines.append("<eof>")
            self.cond.notify_all()

    def acks(self) -> list[int]:
        with self.cond:
            return [int(x.split()[1]) for x in self.lines if x.startswith("ack ")]

    def wait(self, pred: Any, timeout: float = 120) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: pred(self.lines) or "<eof>" in self.lines, timeout):
                raise AssertionError(f"the writer stalled: {self.lines[-3:]}")
            if not pred(self.lines):
                raise AssertionError(f"the writer died: {self.lines[-3:]}")


@pytest.fixture(scope="module")
def crash_server() -> Iterator[PgServer]:
    """A server of its own (fsync on: the crash must not lose what it acknowledged)."""
    from .conftest import _pg_missing

    missing = _pg_missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {missing}")
        pytest.skip(missing)
    server = PgServer(fsync=True)
    try:
        server.start()
        yield server
    finally:
        server.cleanup()


@pytest.mark.req("MN-REQ-14", ATOMIC, HISTORY, "MN-REQ-14.3")
def test_server_crashes_during_flushes_lose_nothing_acknowledged(
    crash_server: PgServer, tmp_path: Path
) -> None:
    """``pg_ctl stop -m immediate`` at random moments while a writer commits and
    flushes: the writer sees ``cabinet_unavailable``, keeps its session dirty
    and flushes it again once the server is back (never a conflict with
    itself, even when the connection broke during COMMIT). After every crash
    each acknowledged version is stored, and what a reader sees is a whole
    version: every commit of it complete, none of a later one."""
    rounds = CRASH_ROUNDS
    rng = random.Random(20240611)
    url = crash_server.create_database("crash")
    sid = "crash"
    with Cabinet.open(url) as cab:
        cab.create(sid)
    stop = tmp_path / "stop"
    writer = spawn(WRITER, sid, stop, env={"MEMNET_HOME": url})
    lines = _Lines(writer)
    try:
        lines.wait(lambda ls: any(x.startswith("ready") for x in ls))
        for rnd in range(rounds):
            before = len(lines.acks())
            lines.wait(lambda ls, n=before: sum(x.startswith("ack ") for x in ls) > n)
            time.sleep(rng.uniform(0.0, 0.3))
            crash_server.stop("immediate")  # mid-flush, most of the time
            acked = max(lines.acks())
            time.sleep(rng.uniform(0.0, 0.2))
            crash_server.start()
            with Cabinet.open(url) as cab:
                counts = cab.verify()
                live = cab.open(sid)
                assert live.version >= acked, f"round {rnd}: acknowledged {acked} lost"
                assert counts["log"] >= acked
                _check_content(live, {0: live.version})
            # the writer carries on from where it was
            lines.wait(lambda ls, a=acked: any(x == f"ack {a + 1}" for x in ls))
        stop.touch()
        lines.wait(lambda ls: any(x.startswith("done") for x in ls))
        out, err = finish(writer, timeout=60)
        assert writer.returncode == 0, err
    finally:
        stop.touch()
        kill(writer)
    acks = lines.acks()
    assert acks == list(range(1, len(acks) + 1)), "a version was acknowledged twice or skipped"
    errors = json.loads(next(x for x in lines.lines if x.startswith("done"))[5:])
    with Cabinet.open(url) as cab:
        assert cab.verify()["log"] == acks[-1]
        final = cab.open(sid)
        assert final.version == acks[-1]
        _check_content(final, {0: acks[-1]})
        assert [e.version for e in cab.log(sid)] == acks
    report(
        "server_crash_postgres",
        crashes=rounds,
        acknowledged=len(acks),
        final_version=acks[-1],
        unavailable_not_written=errors.get("not written", 0),
        unavailable_outcome_unknown=errors.get("unknown", 0),
    )
