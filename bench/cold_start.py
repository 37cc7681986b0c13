"""Cold start: what a fresh process costs for each face, against `python -c pass`.

Every figure is the median wall time of ``--runs`` fresh processes, run
round-robin so that load on the machine hits all of them alike, and each is
printed with its ratio to ``python -c pass`` measured in the same run.

* ``memnet --version``
* ``memnet recall SID Q`` on a small session in an LMDB cabinet, and
  (``recall-u``) on one whose titles hold accents, typographic quotes and
  dashes, Cyrillic and CJK (their lines are counted without the tokenizer)
* ``memnet commit SID`` of one small Δ (read from stdin, then flushed)
* ``memnet wire`` answering one ``RECALL`` statement
* MCP: ``memnet mcp`` (the SDK's server) started, the ``initialize`` request
  answered, then the first ``tools/list``

A private cabinet and a private per-user cache directory (``MEMNET_CACHE_DIR``)
are made in a temporary directory. One warm-up run of each command goes first,
as it would on a user's machine after the first use: it fills the token-piece
cache (see ``memnet/tokens/``), so the timed runs show the steady cold start.

The rows marked ``full cache`` run the same commands with a second cache
directory whose piece cache is full, as on the machine of a user who has
counted a lot of text (``PIECES_FILL`` distinct pieces, counted by the engine
under test before the runs): opening the piece cache must not cost more for
that. The benchmark prints; it never asserts.

Run::

    python bench/cold_start.py               # 15 runs each
    python bench/cold_start.py --runs 31
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS = {
    "version": 2.0,
    "recall": 4.0,
    "recall-u": 4.0,
    "commit": 4.0,
    "wire": 4.0,
    "recall*": 4.0,
    "commit*": 4.0,
}
PIECES_FILL = 250_000
# fills a cache directory's piece cache with PIECES_FILL distinct pieces
_FILL = """
import random, sys
import memnet.tokens as T
rng = random.Random(1)
on, nu = "bcdfghjklmnprstvwxz", "aeiouy"
seen = set()
while len(seen) < int(sys.argv[1]):
    seen.add("".join(rng.choice(on) + rng.choice(nu) for _ in range(rng.randint(2, 5))))
words = sorted(seen)
for i in range(0, len(words), 5000):
    T.count_tokens(" " + " ".join(words[i:i + 5000]))
T.save_pieces()
"""
MCP_TARGET_S = 1.5  # the SDK's start, once per client session (docs/decisions.md, D140)


def memnet_cmd() -> list[str]:
    exe = shutil.which("memnet", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "memnet"]


def timed(cmd: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(
        cmd,
        env=env,
        input=stdin,
        text=True,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return time.perf_counter() - t


def mcp_start(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``memnet mcp`` to its answer to ``initialize``,
    and to its answer to the first ``tools/list``."""
    req = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "cold-start-bench", "version": "1"},
        },
    }
    t = time.perf_counter()
    p = subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(json.dumps(req) + "\n")
    p.stdin.flush()
    line = p.stdout.readline()
    took = time.perf_counter() - t
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")
    p.stdin.flush()
    listed = p.stdout.readline()
    took_list = time.perf_counter() - t
    p.stdin.close()
    p.wait(timeout=30)
    if '"result"' not in line or '"tools"' not in listed:
        raise RuntimeError(f"no initialize or tools/list result: {(line + listed)[:300]!r}")
    return took, took_list


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    mem = memnet_cmd()
    # measure the package as an installed wheel leaves it: byte-compiled (an
    # editable checkout run with PYTHONDONTWRITEBYTECODE would compile every
    # module in every process, which no installed copy does)
    import memnet

    compileall.compile_dir(os.path.dirname(memnet.__file__), quiet=1)
    tmp = tempfile.mkdtemp(prefix="memnet-cold-")
    env = dict(
        os.environ,
        MEMNET_HOME=os.path.join(tmp, "cabinet"),
        MEMNET_CACHE_DIR=os.path.join(tmp, "cache"),
    )
    try:
        subprocess.run([*mem, "demo"], env=env, check=True, stdout=subprocess.DEVNULL)
        delta = "INSERT (t:TSK {title: 'cold start probe', status: 'open'})"
        subprocess.run(
            [*mem, "session", "create", "intl"], env=env, check=True, stdout=subprocess.DEVNULL
        )
        subprocess.run(
            [*mem, "commit", "intl", "-"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            text=True,
            input="INSERT (t:TSK {title: 'Café pricing – “naïve” résumé', "
            "status: 'open'}), (d:DEC {title: 'Цена: округление — 価格'}), "
            "(t)-[:NEEDS]->(d)",
        )
        full = dict(env, MEMNET_CACHE_DIR=os.path.join(tmp, "cache-full"))
        t = time.perf_counter()
        # run from tmp: "python -c" puts the working directory first on the
        # path, which must not shadow the engine PYTHONPATH names
        subprocess.run(
            [sys.executable, "-c", _FILL, str(PIECES_FILL)], env=full, check=True, cwd=tmp
        )
        print(
            f"# a full piece cache: {PIECES_FILL:,} pieces counted in "
            f"{time.perf_counter() - t:.1f} s"
        )
        cases: dict[str, tuple[list[str], str | None, dict[str, str]]] = {
            "pass": ([sys.executable, "-c", "pass"], None, env),
            "version": ([*mem, "--version"], None, env),
            "recall": ([*mem, "recall", "demo", "TSK status:open pricing"], None, env),
            "recall-u": ([*mem, "recall", "intl", "TSK status:open pricing"], None, env),
            "commit": ([*mem, "commit", "demo", "-"], delta, env),
            "wire": ([*mem, "wire"], "USE demo; RECALL TSK status:open pricing;", env),
            "recall*": ([*mem, "recall", "demo", "TSK status:open pricing"], None, full),
            "commit*": ([*mem, "commit", "demo", "-"], delta, full),
        }
        for cmd, stdin, e in cases.values():  # warm-up: page cache, piece cache
            timed(cmd, e, stdin)
        mcp_ok = True
        try:
            mcp_start([*mem, "mcp"], env)
        except Exception as e:  # noqa: BLE001 - the extra may be missing
            print(f"# MCP not measured: {e}")
            mcp_ok = False
        times: dict[str, list[float]] = {name: [] for name in cases}
        mcp_times: list[tuple[float, float]] = []
        for _ in range(args.runs):
            for name, (cmd, stdin, e) in cases.items():
                times[name].append(timed(cmd, e, stdin))
            if mcp_ok:
                mcp_times.append(mcp_start([*mem, "mcp"], env))
        base = statistics.median(times["pass"])
        print(f"# {args.runs} runs each, round-robin; python {sys.version.split()[0]}")
        print(f"{'command':<28} {'median':>9} {'× pass':>8} {'target':>8}")
        for name, ts in times.items():
            med = statistics.median(ts)
            label = " ".join(cases[name][0][1:] if name != "pass" else ["python", "-c", "pass"])
            if name.endswith("*"):
                label = "full cache: " + label
            target = f"≤ {TARGETS[name]:.0f}×" if name in TARGETS else ""
            verdict = (
                "" if name not in TARGETS else (" PASS" if med / base <= TARGETS[name] else " MISS")
            )
            print(
                f"{name:<10} {med * 1000:>14.1f} ms {med / base:>7.2f}× {target:>8}{verdict}"
                f"   ({label[:40]})"
            )
        for i, name in enumerate(("mcp init", "mcp list") if mcp_times else ()):
            med = statistics.median(t[i] for t in mcp_times)
            verdict = "PASS" if med <= MCP_TARGET_S else "MISS"
            print(
                f"{name:<10} {med * 1000:>14.1f} ms {med / base:>7.2f}× "
                f"≤ {MCP_TARGET_S} s {verdict}"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
