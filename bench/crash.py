"""Crash and damage campaigns against the LMDB cabinet.

Part 1, kill -9: a writer process commits and flushes in a loop and reports
the start of each flush and each flush acknowledged; a random moment after
the start of its 1st to 4th flush the parent kills it with SIGKILL (most kills
land inside the flush, which fsyncs), until ``--kills`` kills have landed
inside a flush. The parent then
opens the cabinet and checks that no acknowledged version was lost (the stored
version is the last acknowledged one or the one in flight), that the session
holds exactly the versions stored, each whole, and that ``verify()`` is clean.
A cabinet is retired every ``--per-cabinet`` rounds so verify stays cheap.

Part 2, damage: a reference cabinet (sessions with edges, updates and a drop,
so the file has branch, leaf, overflow and free pages) is copied, and each
round either changes one byte at a random offset to another value (flip) or
cuts the file at a random length (truncation). A forked child opens the copy
and reads everything a user can (the catalog, every session hydrated and
compared with the reference, its log, a past version, a Recall), then runs
``verify()``. Each round ends as: unchanged data, ``cabinet_corrupt``, another
error, different data (silent damage) or a signal.

    python bench/crash.py [--kills 2000] [--flips 2000] [--truncations 500] [--seed 1]

Run it under ``nice``: it keeps one core busy for a while.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import random
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import memnet  # noqa: E402
from memnet import Cabinet, MemNetError  # noqa: E402

SID = "crash"


# -- part 1: kill -9 ----------------------------------------------------------------------
def _writer(path: str, out: int) -> None:
    """Commit and flush until killed; write ``b`` before each flush and
    ``a<version>`` once it is acknowledged."""
    cab = Cabinet.open(path)
    s = cab.open(SID)
    root = None
    os.write(out, b"r%d\n" % s.version)
    while True:
        v = s.version + 1
        if root is None:
            r = s.commit(
                f"INSERT (t:TSK {{tag: 'c{v}', last: {v}}}), (m:MOD {{path: 'p{v}'}}), "
                f"(t)-[:TOUCHES]->(m)"
            )
            root = r.ids["t"]
        else:
            s.commit(
                f"INSERT (t:TSK {{tag: 'c{v}'}}), (m:MOD {{path: 'p{v}'}}), "
                f"(t)-[:TOUCHES]->(m), (t)-[:PART_OF]->({root}) SET {root}.last = {v}"
            )
        os.write(out, b"b\n")
        cab.flush(s)
        os.write(out, b"a%d\n" % v)


def _check_stored(path: str, acked: int) -> tuple[int, str]:
    """The stored version, and what is wrong with the cabinet ('' if nothing)."""
    with Cabinet.open(path) as cab:
        try:
            cab.verify()
        except MemNetError as e:
            return -1, f"verify: {e.code}: {e}"
        s = cab.open(SID)
        v = s.version
        if not acked <= v <= acked + 1:
            return v, f"stored version {v}, last acknowledged {acked}"
        st = s.store
        live = list(st.live_node_ids())
        tags = sorted(st.node_props(n)["tag"] for n in live if st.node_kind(n) == "TSK")
        paths = sorted(st.node_props(n)["path"] for n in live if st.node_kind(n) == "MOD")
        if (
            tags != sorted(f"c{i}" for i in range(1, v + 1))
            or paths != sorted(f"p{i}" for i in range(1, v + 1))
            or st.live_edges < v
        ):
            return v, f"version {v} is not whole"
        if [e.version for e in cab.log(SID)] != list(range(1, v + 1)):
            return v, "the log has a gap"
    return v, ""


def kills(target: int, per_cabinet: int, rng: random.Random, work: str) -> dict[str, float]:
    """Kill writers until ``target`` kills have landed inside a flush (a flush
    begun and not acknowledged); each kill comes a random moment after the
    writer announced the start of its 1st to 4th flush."""
    out: collections.Counter[str] = collections.Counter()
    stored = 0
    path = ""
    t0 = time.monotonic()
    rnd = 0
    while out["killed in a flush"] < target and rnd < 3 * target:
        if rnd % per_cabinet == 0:
            path = os.path.join(work, f"kill-{rnd // per_cabinet}")
            with Cabinet.open(path) as cab:
                cab.create(SID)
            stored = 0
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                _writer(path, w)
            finally:
                os._exit(1)
        os.close(w)
        with os.fdopen(r, "rb", buffering=0) as pipe:
            said: list[bytes] = []
            starts = rng.randint(1, 4)
            while starts:
                line = pipe.readline()
                if not line:
                    break
                said.append(line.strip())
                starts -= line == b"b\n"
            time.sleep(rng.uniform(0.0, 0.006))  # fsync takes a few ms: most kills land in it
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            said += pipe.read().split()
        if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
            out["writer died by itself"] += 1
        acks = [int(x[1:]) for x in said if x.startswith(b"a")]
        out["acknowledged"] += len(acks)
        out["killed in a flush"] += said[-1:] == [b"b"]
        acked = acks[-1] if acks else stored
        if acks and acks != list(range(stored + 1, acked + 1)):
            out["acknowledgements out of order"] += 1
        version, wrong = _check_stored(path, acked)
        if wrong:
            out["lost or damaged"] += 1
            print(f"round {rnd}: {wrong}", flush=True)
        else:
            out["verify clean"] += 1
            out["stored in flight, unacknowledged"] += version > acked
            stored = version
        rnd += 1
        out["rounds"] += 1
        if rnd % 250 == 0:
            print(
                f"  kill rounds: {rnd} ({out['killed in a flush']} in a flush, "
                f"{time.monotonic() - t0:.0f} s)",
                flush=True,
            )
    return dict(out, seconds=time.monotonic() - t0)


# -- part 2: damage -----------------------------------------------------------------------
def _build_reference(path: str, rng: random.Random) -> None:
    with Cabinet.open(path) as cab:
        for k in range(5):
            s = cab.create(f"ok-{k}")
            for v in range(3):
                s.commit(
                    "INSERT "
                    + ", ".join(
                        f"(t{i}:TSK {{title: 'task {k} {v} {i} pricing', "
                        f"status: 'open', n: {i}}}), "
                        f"(m{i}:MOD {{path: 'm{k}/{v}/{i}.py'}}), (t{i})-[:TOUCHES]->(m{i})"
                        for i in range(40)
                    )
                )
                cab.flush(s)
            # a hub (a long node record), long edge chunks and postings: overflow pages
            hub = s.commit("INSERT (h:MOD {path: 'hub.py'})").ids["h"]
            s.commit(
                "INSERT "
                + ", ".join(
                    f"(x{i}:TSK {{title: 'spoke {i}'}})-[:USES]->({hub})" for i in range(600)
                )
            )
            s.commit(f"SET {hub}.note = '{'long text ' * 300}'")
            for h in rng.sample(sorted(s.handles()), 20):
                s.commit(f"SET {h}.status = 'done'")
            cab.flush(s)
        cab.drop("ok-4")  # free pages


def _digest(cab: Cabinet) -> dict[str, str]:
    """A fingerprint of everything a user can read from the cabinet."""
    out = {}
    for info in cab.sessions():
        s = cab.open(info.id)
        st = s.store
        adjacency = st.view().adjacency
        h = hashlib.sha256()
        for n in range(1, st.next_node):
            kind, labels, props, nick, recycled = st.node_state(n)
            h.update(
                repr(
                    (
                        kind,
                        labels,
                        sorted((props or {}).items()),
                        nick,
                        recycled,
                        adjacency[n].tobytes(),
                    )
                ).encode()
            )
        for e in range(1, st.next_edge):
            h.update(repr(st.edge_state(e)).encode())
        h.update(s.recall("TSK status:open pricing").text.encode())
        h.update(repr([e.to_dict() for e in cab.log(info.id)]).encode())
        h.update(cab.open(info.id, at=1).recall("MOD").text.encode())
        out[info.id] = f"{info.version}:{h.hexdigest()}"
    return out


OUTCOMES = {
    0: "unchanged",
    1: "unchanged, verify cabinet_corrupt",
    10: "cabinet_corrupt",
    11: "other MemNetError",
    12: "DIFFERENT DATA",
    13: "other exception",
}


def _reader(path: str, expected: dict[str, str]) -> None:
    try:
        cab = Cabinet.open(path)
        got = _digest(cab)
    except MemNetError as e:
        os._exit(10 if e.code == "cabinet_corrupt" else 11)
    except BaseException:  # noqa: BLE001 - the kind of failure is the finding
        os._exit(13)
    if got != expected:
        os._exit(12)
    try:
        cab.verify()
    except MemNetError:
        os._exit(1)
    os._exit(0)


def damage(flips: int, truncations: int, rng: random.Random, work: str) -> dict[str, object]:
    ref = os.path.join(work, "reference")
    _build_reference(ref, rng)
    with Cabinet.open(ref) as cab:
        expected = _digest(cab)
    data = open(os.path.join(ref, "data.mdb"), "rb").read()
    copy = os.path.join(work, "damaged")
    results: dict[str, collections.Counter] = {
        "flip": collections.Counter(),
        "truncation": collections.Counter(),
    }
    bad: list[str] = []
    t0 = time.monotonic()
    plan = ["flip"] * flips + ["truncation"] * truncations
    for i, kind in enumerate(plan):
        shutil.rmtree(copy, ignore_errors=True)
        os.makedirs(copy)
        b = bytearray(data)
        if kind == "flip":
            at = rng.randrange(len(b))
            b[at] = (b[at] + rng.randrange(1, 256)) % 256
        else:
            at = rng.randrange(len(b))
            del b[at:]
        with open(os.path.join(copy, "data.mdb"), "wb") as f:
            f.write(b)
        pid = os.fork()
        if pid == 0:
            _reader(copy, expected)
            os._exit(14)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            what = f"SIGNAL {signal.Signals(os.WTERMSIG(status)).name}"
        else:
            what = OUTCOMES.get(os.WEXITSTATUS(status), f"exit {os.WEXITSTATUS(status)}")
        results[kind][what] += 1
        if what.startswith(("SIGNAL", "DIFFERENT", "other")):
            bad.append(f"{kind} at byte {at} (page {at // 4096}, offset {at % 4096}): {what}")
        if (i + 1) % 250 == 0:
            print(
                f"  damage rounds: {i + 1}/{len(plan)} ({time.monotonic() - t0:.0f} s)", flush=True
            )
    return {
        "file_bytes": len(data),
        "sessions": len(expected),
        "results": results,
        "bad": bad,
        "seconds": time.monotonic() - t0,
    }


def main() -> None:
    memnet.parse_delta("INSERT (w:TSK {x: 1})")  # the parser is built once, before any fork
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--kills",
        type=int,
        default=2000,
        help="kill -9 rounds that land inside a flush (default 2000)",
    )
    ap.add_argument(
        "--per-cabinet",
        type=int,
        default=200,
        help="kill rounds on one cabinet before a fresh one (default 200)",
    )
    ap.add_argument("--flips", type=int, default=2000, help="byte-flip rounds (default 2000)")
    ap.add_argument("--truncations", type=int, default=500, help="truncation rounds (default 500)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="memnet-crash-")
    print(
        f"memnet {memnet.__version__}, LMDB {'.'.join(map(str, __import__('lmdb').version()))}, "
        f"seed {args.seed}, in {work}",
        flush=True,
    )
    try:
        if args.kills:
            print(f"== kill -9 until {args.kills} kills have landed inside a flush", flush=True)
            k = kills(args.kills, args.per_cabinet, rng, work)
            for name in (
                "rounds",
                "killed in a flush",
                "acknowledged",
                "stored in flight, unacknowledged",
                "verify clean",
                "lost or damaged",
                "acknowledgements out of order",
                "writer died by itself",
            ):
                print(f"   {name:36} {int(k.get(name, 0)):>8}")
            print(f"   {'seconds':36} {k['seconds']:>8.0f}")
            verdict = (
                "PASS"
                if not k.get("lost or damaged")
                and k.get("killed in a flush", 0) >= 2000
                and not k.get("acknowledgements out of order")
                else "MISS"
            )
            print(
                f"{verdict} {int(k['rounds'])} kill -9 rounds, "
                f"{int(k.get('killed in a flush', 0))} of them inside a flush, "
                f"{int(k['acknowledged'])} acknowledged versions: "
                f"{int(k.get('lost or damaged', 0))} lost or damaged, verify clean "
                f"{int(k.get('verify clean', 0))}",
                flush=True,
            )
        if args.flips or args.truncations:
            print(f"== damage: {args.flips} flips, {args.truncations} truncations", flush=True)
            d = damage(args.flips, args.truncations, rng, work)
            print(
                f"   reference data.mdb {d['file_bytes']:,} bytes, {d['sessions']} sessions, "
                f"{d['seconds']:.0f} s"
            )
            results = d["results"]
            assert isinstance(results, dict)
            for kind, counts in results.items():
                for what, n in sorted(counts.items()):
                    print(f"   {kind:10} {what:36} {n:>6}")
            for line in d["bad"]:  # type: ignore[union-attr]
                print(f"   ! {line}")
            signals = sum(
                n for c in results.values() for w, n in c.items() if w.startswith("SIGNAL")
            )
            wrong = sum(c.get("DIFFERENT DATA", 0) for c in results.values())
            other = sum(n for c in results.values() for w, n in c.items() if w.startswith("other"))
            verdict = "PASS" if not (signals or wrong or other) else "MISS"
            print(
                f"{verdict} damage rounds: {signals} signals, {wrong} silently different, "
                f"{other} other errors; the rest cabinet_corrupt or unchanged"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
