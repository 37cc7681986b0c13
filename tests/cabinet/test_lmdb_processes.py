"""Real processes against one LMDB cabinet: a writer killed with SIGKILL at
random moments (100 rounds). The loop (:func:`kill_loop`) takes any cabinet
location, so ``test_processes.py`` runs it on PostgreSQL too, beside the race
of eight writers on one session on both back ends.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memnet import Cabinet

from ._support import finish, kill, spawn

ATOMIC, HISTORY = "MN-REQ-03", "MN-REQ-13"

# =========================================================================== kill -9

ROUNDS = 100
SEED = 20240607

# The writers are forked from a "zygote": a small script started once with
# ``sys.executable -c`` that imports memnet and then, per round, forks a fresh
# process that opens the cabinet itself (the zygote never opens it, so no
# LMDB handle crosses a fork). That keeps a round at a few milliseconds of
# start-up instead of a full interpreter start and import.
#
# Each commit of version v inserts a TSK tagged c<v> and a MOD p<v> joined by a
# TOUCHES edge. The first commit of a round makes its TSK the round's root
# (with last: v); every later commit of the round also joins its TSK to the
# root (PART_OF) and sets root.last = v, so one commit both creates and
# updates records.
# The commit of version v (root: None for the first of a round, which creates
# it); shared with the server-crash writer of test_processes.py.
STEP = r"""
def step(s, root, v, rnd):
    if root is None:
        r = s.commit(f"INSERT (t:TSK {{tag: 'c{v}', round: {rnd}, last: {v}}}), "
                     f"(m:MOD {{path: 'p{v}'}}), (t)-[:TOUCHES]->(m)")
        root = r.ids["t"]
    else:
        r = s.commit(f"INSERT (t:TSK {{tag: 'c{v}', round: {rnd}}}), "
                     f"(m:MOD {{path: 'p{v}'}}), (t)-[:TOUCHES]->(m), "
                     f"(t)-[:PART_OF]->({root}) SET {root}.last = {v}")
    assert r.version == v
    return root
"""

ZYGOTE = (
    STEP
    + r"""
import json, os, sys, traceback
import memnet
memnet.parse_delta("INSERT (w:TSK {x: 1})")  # warm the parser before the clock starts


def say(line):
    os.write(1, (line + "\n").encode())  # unbuffered: what is said is in the pipe


def writer(path, sid, rnd, limit):
    me = os.getpid()
    cab = memnet.Cabinet.open(path)
    s = cab.open(sid)
    say(f"ready {me} {s.version}")
    root = None
    done = 0
    while limit == 0 or done < limit:
        v = s.version + 1
        root = step(s, root, v, rnd)
        assert cab.flush(s) == v
        say(f"ack {me} {v}")
        done += 1
    cab.close()


say("zygote")
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd[0] == "run":
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                writer(*cmd[1:])
            except BaseException:
                say(f"error {os.getpid()} " + json.dumps(traceback.format_exc()))
                code = 1
            os._exit(code)
        say(f"child {pid}")
    elif cmd[0] == "wait":
        _, status = os.waitpid(cmd[1], 0)
        say(f"dead {cmd[1]} {status}")
"""
)


class Zygote:
    """The parent's side of the zygote: start writers, reap them."""

    def __init__(self) -> None:
        self.p = spawn(ZYGOTE, stdin=True)
        assert self._line() == ["zygote"]

    def _line(self) -> list[str]:
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError(f"the zygote died: {self.p.stderr.read()}")
        words = line.split(" ", 2)
        if words[0] == "error":
            raise AssertionError(f"writer {words[1]} failed: {json.loads(words[2])}")
        return line.split()

    def _send(self, *cmd: object) -> None:
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()

    def start(self, path: Path, sid: str, rnd: int, limit: int, *, ready: bool) -> int:
        """Fork a writer; returns its pid as soon as it exists, or (``ready``)
        once it has hydrated the session and is about to commit."""
        self._send("run", str(path), sid, rnd, limit)
        self.ready: int | None = None
        pid = None
        while pid is None or (ready and self.ready is None):
            words = self._line()
            if words[0] == "child":
                pid = int(words[1])
            elif words[0] == "ready":  # the child may speak before the zygote does
                self.ready = int(words[2])
            else:
                raise AssertionError(f"unexpected {words}")
        return pid

    def reap(self, pid: int) -> tuple[int | None, list[int], int]:
        """Wait for the writer to be gone; returns the version it hydrated (None
        when it died before), its acknowledged versions and its wait status.
        Everything it said is read before its death notice."""
        self._send("wait", pid)
        acks = []
        while True:
            words = self._line()
            if words[0] == "ready":
                self.ready = int(words[2])
            elif words[0] == "ack":
                assert int(words[1]) == pid and self.ready is not None
                acks.append(int(words[2]))
            elif words[0] == "dead":
                assert int(words[1]) == pid
                return self.ready, acks, int(words[2])
            else:
                raise AssertionError(f"unexpected {words}")

    def close(self) -> None:
        try:
            finish(self.p, timeout=30)
        finally:
            kill(self.p)


def _check_content(s: Any, rounds: dict[int, int]) -> None:
    """The hydrated session ``s`` holds exactly versions 1..s.version, each
    complete, and each round root's ``last`` is in ``rounds``."""
    version = s.version
    g = s.to_networkx()
    tags: Counter[str] = Counter()
    paths: dict[str, str] = {}
    for h, a in g.nodes(data=True):
        if a["kind"] == "TSK":
            tags[a["props"]["tag"]] += 1
        else:
            assert a["kind"] == "MOD"
            paths[h] = a["props"]["path"]
    assert sorted(paths.values()) == sorted(f"p{v}" for v in range(1, version + 1))
    assert tags == Counter(f"c{v}" for v in range(1, version + 1)), "a commit is half there"
    touches = {}
    last_by_round: dict[int, int] = {}
    for u, w, a in g.edges(data=True):
        if a["type"] == "TOUCHES":
            touches[g.nodes[u]["props"]["tag"]] = paths[w]
        else:
            assert a["type"] == "PART_OF" and "last" in g.nodes[w]["props"]
    assert touches == {f"c{v}": f"p{v}" for v in range(1, version + 1)}
    for _h, a in g.nodes(data=True):
        if "last" in a["props"]:
            last_by_round[a["props"]["round"]] = a["props"]["last"]
    # every round root's `last` is the last version that round stored
    assert last_by_round == rounds


@pytest.mark.req("MN-REQ-14", ATOMIC, HISTORY)
def test_kill_9_at_random_moments_loses_nothing_acknowledged(lmdb_path: Path) -> None:
    kill_loop(str(lmdb_path), ROUNDS)


def kill_loop(lmdb_path: str, rounds_wanted: int, max_delay: float = 0.05) -> dict[str, Any]:
    """``rounds_wanted`` rounds of: fork a writer, SIGKILL it at a random moment
    (up to ``max_delay`` seconds in), reopen the cabinet and check every
    acknowledged version; then a last writer runs to its end. Returns the
    figures of the loop."""
    ROUNDS = rounds_wanted  # noqa: N806 - the loop reads as it did with the constant
    rng = random.Random(SEED)
    sid = "crash"
    with Cabinet.open(lmdb_path) as cab:
        cab.create(sid)
    stored = 0
    rounds: dict[int, int] = {}  # round -> last version it stored
    total_acks = 0
    reopen_times = []
    killed_before_ready = 0
    zyg = Zygote()
    try:
        for rnd in range(ROUNDS):
            # one round in four counts the delay from the fork, so the kill may
            # land while the child opens the cabinet or hydrates; the others
            # count it from the first commit, so it lands in commits and flushes
            pid = zyg.start(lmdb_path, sid, rnd, 0, ready=rnd % 4 != 0)
            time.sleep(rng.uniform(0, max_delay))
            os.kill(pid, signal.SIGKILL)
            ready, acks, status = zyg.reap(pid)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
                f"round {rnd}: the child ended by itself (status {status})"
            )
            assert ready in (None, stored), "the child did not see the stored version"
            killed_before_ready += ready is None
            assert acks == list(range(stored + 1, stored + 1 + len(acks)))
            total_acks += len(acks)
            stored, reopen = _check_round(lmdb_path, sid, rnd, stored, acks, rounds, rng)
            reopen_times.append(reopen)

        # the loop did real work (a sanity floor, far below the usual count)
        assert total_acks >= ROUNDS // 4, f"only {total_acks} acknowledged commits"
        assert killed_before_ready <= ROUNDS // 4
        # the writer lock and the reader table survived the kills: a last writer runs to the end
        pid = zyg.start(lmdb_path, sid, ROUNDS, 5, ready=True)
        ready, acks, status = zyg.reap(pid)
        assert ready == stored
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert acks == list(range(stored + 1, stored + 6))
    finally:
        zyg.close()
    with Cabinet.open(lmdb_path) as cab:
        assert cab.verify()["log"] == stored + 5
        assert cab.open(sid).version == stored + 5
    assert max(reopen_times) < 5
    return {
        "rounds": ROUNDS,
        "acknowledged": total_acks,
        "final_version": stored + 5,
        "killed_before_hydrate": killed_before_ready,
        "max_reopen_s": round(max(reopen_times), 3),
    }


def _check_round(
    lmdb_path: str,
    sid: str,
    rnd: int,
    stored: int,
    acks: list[int],
    rounds: dict[int, int],
    rng: random.Random,
) -> tuple[int, float]:
    """Reopen after a kill and check everything; returns the stored version and
    the time the reopen took."""
    last_ack = acks[-1] if acks else stored
    t0 = time.monotonic()
    cab = Cabinet.open(lmdb_path)
    reopen = time.monotonic() - t0
    try:
        assert reopen < 5, f"round {rnd}: reopening took {reopen:.2f}s"
        counts = cab.verify()
        (info,) = cab.sessions()
        version = info.version
        # at most the one commit in flight when the kill came is stored unacknowledged
        assert last_ack <= version <= last_ack + 1, (rnd, acks, version)
        assert counts["log"] == version
        assert (info.nodes, counts["nodes"]) == (2 * version, 2 * version)
        log = cab.log(sid, since=stored)
        assert [e.version for e in log] == list(range(stored + 1, version + 1))
        for i, e in enumerate(log):
            assert (e.created, e.updated, e.recycled) == ((3, 0, 0) if i == 0 else (4, 1, 0)), (
                rnd,
                e,
            )
        if version > stored:
            rounds[rnd] = version
        # this round's versions are all there, whole, in the live session
        live = cab.open(sid)
        assert live.version == version
        for v in range(stored + 1, version + 1):
            shape = live.recall(f"TSK tag:c{v}")
            assert shape.receipt.seed_mode == "match" and shape.receipt.matched == 1, v
            assert f"tag: 'c{v}'" in shape.text, v
            mod = live.recall(f"MOD path:p{v}", k=1)  # the MOD's one neighbour is its TSK
            assert mod.receipt.matched == 1 and f"tag: 'c{v}'" in mod.text, v
        if version > stored:
            root = live.recall(f"TSK tag:c{stored + 1}").text
            assert f"last: {version}," in root or f"last: {version}}}" in root, root
        # every tenth round (and the last), the whole session, element by element
        if rnd % 10 == 9:
            _check_content(live, rounds)
        # an acknowledged version reads back as it was, and no later commit shows in it
        for v in ({last_ack, rng.choice(acks)} if rnd % 5 == 0 else {last_ack}) if acks else ():
            past = cab.open(sid, at=v)
            assert past.version == v
            shape = past.recall(f"TSK tag:c{v}")
            assert shape.receipt.seed_mode == "match" and f"tag: 'c{v}'" in shape.text
            assert f"tag: 'c{v}'" in past.recall(f"MOD path:p{v}", k=1).text
            assert past.recall(f"TSK tag:c{v + 1}").receipt.seed_mode != "match"
            assert past.stats()["nodes"] == 2 * v
        return version, reopen
    finally:
        cab.close()
