"""Instructions per fresh Recall on WordNet, counted by valgrind's callgrind.

Wall and CPU times on a shared machine swing by half from one run to the
next, which hides a change of a few percent. Callgrind counts the
instructions a process executes instead: the same program on the same input
gives the same count whatever else the machine is doing. This benchmark uses
it to compare engines on the fresh-keyword loop of ``bench/wordnet.py``.

Each engine runs in child processes under ``valgrind --tool=callgrind
--instr-atstart=no``: the child hydrates the WordNet session from the
cabinet uninstrumented (a few times slower than native, not fifty), asks
the warm-up queries of ``bench/wordnet.py`` (a miss, then eight fresh lemmas
outside the set), turns the collector off (its schedule would move with
each engine's allocations), switches counting on with ``callgrind_control``,
asks ``--queries`` lemmas of the set once each, and switches it off. A second
child asks none, so what the switching itself costs is taken off. Every child
starts from a copy of one private cache directory, filled first by an
uncounted run of the same queries with that engine (the token ranks and the
counts of the pieces the queries meet, in the engine's own layout): the count
is that of a user's steady state, the same on every run. Printed:
instructions per fresh Recall for each engine, and their ratio.

Instruction counts do not see the processor's cache misses, which are much
of a fresh Recall's time on a large session (a word's index lookups miss the
caches): a change that only saves misses does not show here. Use it beside
``bench/wordnet.py``, not instead of it.

Needs valgrind (Debian package ``valgrind``) and a WordNet cabinet that
``bench/wordnet.py --cabinet DIR`` built::

    PYTHONPATH=. python bench/instructions.py --cabinet /tmp/wn
    PYTHONPATH=. python bench/instructions.py --cabinet /tmp/wn --baseline /tmp/old --queries 100

``--baseline DIR`` names a directory holding another engine's ``memnet``
package (a ``git worktree`` of an older commit, say); when that engine reads
an older cabinet format, ``--baseline-cabinet`` names a copy of the cabinet
made before ``memnet cabinet upgrade``. The benchmark prints; it never
asserts.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def child(args: argparse.Namespace) -> None:
    """Runs under callgrind: hydrate, warm, then the counted queries."""
    import memnet

    plan = json.loads(Path(args.plan).read_text())
    s = memnet.Cabinet.open(args.cabinet).open(plan["sid"])
    s.recall("zzzzqqq")
    for q in plan["warmup"]:
        s.recall(q)
    gc.collect()
    gc.disable()
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True, check=False)
    for q in plan["queries"][: args.queries]:
        s.recall(q)
    subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True, check=False)


def _child_cmd(args: argparse.Namespace, plan: str, n: int) -> list[str]:
    """The command of a child that asks ``n`` queries of ``plan``."""
    return [
        sys.executable,
        __file__,
        "--child",
        "--cabinet",
        args.cabinet,
        "--plan",
        plan,
        "--queries",
        str(n),
    ]


def prepare_cache(engine: str, args: argparse.Namespace, plan: str, into: str) -> None:
    """Fill a private cache directory the way ``engine`` keeps it (the token
    ranks, and the counts of every piece the queries meet), in one run of the
    child without callgrind: each counted child then starts from a copy of
    it, so every run sees the same cache, in its own engine's layout."""
    env = dict(os.environ, PYTHONPATH=engine, MEMNET_CACHE_DIR=into)
    p = subprocess.run(
        _child_cmd(args, plan, args.queries),
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=into,
    )
    if p.returncode:
        sys.exit(f"preparing the cache failed ({p.returncode}):\n{p.stderr[-2000:]}")


def counted(engine: str, args: argparse.Namespace, plan: str, n: int, cache: str) -> int:
    """Instructions callgrind counted in a child asking ``n`` queries."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(cache, f"{tmp}/cache")
        env = dict(os.environ, PYTHONPATH=engine, MEMNET_CACHE_DIR=f"{tmp}/cache")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={tmp}/out",
            *_child_cmd(args, plan, n),
        ]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=tmp)
        m = re.search(r"Collected : (\d+)", p.stderr)
        if p.returncode or m is None:
            sys.exit(f"callgrind run failed ({p.returncode}):\n{p.stderr[-2000:]}")
        return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cabinet", required=True, help="the WordNet cabinet bench/wordnet.py built")
    ap.add_argument("--sid", default="wordnet")
    ap.add_argument("--queries", type=int, default=50, help="fresh queries counted (default 50)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--baseline", default=None, help="another engine's package directory")
    ap.add_argument(
        "--baseline-cabinet",
        default=None,
        help="the cabinet the baseline reads, when it reads an older format: a copy "
        "of --cabinet made before `memnet cabinet upgrade` (default: --cabinet)",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed (Debian package valgrind)")
    if not Path(args.cabinet, "data.mdb").exists():
        sys.exit(f"no cabinet at {args.cabinet}: build one with bench/wordnet.py --cabinet DIR")
    sys.path.insert(0, str(HERE))
    import wordnet

    synsets, _ptr = wordnet.read_wordnet(wordnet.fetch())
    queries = wordnet.pick_queries(synsets, 200, args.seed)
    warmup = wordnet.pick_warmup(synsets, queries, wordnet.WARMUP, args.seed)
    del synsets, _ptr
    engines = (
        [("baseline", str(Path(args.baseline).resolve()), args.baseline_cabinet or args.cabinet)]
        if args.baseline
        else []
    ) + [("this", str(ROOT), args.cabinet)]
    per: dict[str, float] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"sid": args.sid, "warmup": warmup, "queries": queries}, f)
        plan = f.name
    try:
        for name, path, cabinet in engines:
            eargs = argparse.Namespace(**{**vars(args), "cabinet": cabinet})
            with tempfile.TemporaryDirectory() as cache:
                prepare_cache(path, eargs, plan, cache)
                full = counted(path, eargs, plan, args.queries, cache)
                base = counted(path, eargs, plan, 0, cache)
            per[name] = (full - base) / args.queries
            print(
                f"{name:9s} {per[name]:,.0f} instructions per fresh Recall "
                f"({args.queries} lemma queries; {path})",
                flush=True,
            )
    finally:
        os.unlink(plan)
    if "baseline" in per:
        print(f"this/baseline {per['this'] / per['baseline']:.3f}")


if __name__ == "__main__":
    main()
