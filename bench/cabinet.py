"""Cabinet figures at 1k, 100k and 1M nodes (LMDB, the embedded default).

For each size, on a synthetic session from ``synth.py`` (built straight into
the store, then adopted by a new cabinet in one write, in one process; the
rest is measured in a second, fresh process, as a user opening the cabinet
later would see it):

* adopt: the first write of the whole session;
* hydrate: ``Cabinet.open(sid)`` of the whole session (records → memory), in a
  process that has done nothing else;
* flush of a one-node change: ``SET`` on one node, then ``flush`` (median of
  many), for a random node and for a node whose neighbours are all small (a
  change next to a hub rewrites the hub's adjacency record, because the
  order of its neighbours moved);
* flush of a 1,000-element change: about 250 nodes with their ~750 edges;
* bytes on disk per node: pages LMDB uses (last page number × page size) and
  the size of ``data.mdb``, divided by the nodes.

The ratios at the end compare against the 1k figures of the same run.

    python bench/cabinet.py [--sizes 1000,100000,1000000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _build(n: int, d: str) -> dict[str, float]:
    """Build the synthetic session and adopt it into a new cabinet at ``d``."""
    sys.path.insert(0, HERE)
    import synth  # type: ignore[import-not-found]

    from memnet import Cabinet

    out: dict[str, float] = {"nodes": n}
    t = time.perf_counter()
    s, meta = synth.build(n, via="store")
    out["build_s"] = time.perf_counter() - t
    out["edges"] = s.store.live_edges
    cab = Cabinet.open(d, sync=True)
    t = time.perf_counter()
    cab.adopt(s)
    out["adopt_s"] = time.perf_counter() - t
    cab.close()
    return out


def _one_size(n: int, repeat: int, d: str) -> dict[str, float]:
    sys.path.insert(0, HERE)
    import synth  # type: ignore[import-not-found]

    from memnet import Cabinet
    from memnet.graph.store import node_handle

    out: dict[str, float] = {}
    cab = Cabinet.open(d, sync=True)
    t = time.perf_counter()
    s = cab.open(meta_sid(n))
    out["hydrate_s"] = time.perf_counter() - t
    st = s.store
    rng = random.Random(7)

    def degree(nid: int) -> int:
        return len(st.adj[nid])

    def flush_one(pick) -> float:
        times = []
        for i in range(repeat):
            nid = pick()
            s.commit(f"SET {node_handle(nid)}.bench = {i}")
            t0 = time.perf_counter()
            cab.flush(s)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def random_node() -> int:
        while True:
            nid = rng.randrange(1, st.next_node)
            if not st.nrec[nid]:
                return nid

    def quiet_node() -> int:
        while True:
            nid = random_node()
            if all(degree(o) < 64 for _e, _d, o in st.live_entries(nid)):
                return nid

    out["flush1_random_ms"] = flush_one(random_node) * 1e3
    out["flush1_quiet_ms"] = flush_one(quiet_node) * 1e3
    times = []
    for _ in range(max(3, repeat // 10)):
        s.commit(synth.batch_delta(s, 250, rng))
        t0 = time.perf_counter()
        cab.flush(s)
        times.append(time.perf_counter() - t0)
    out["flush1000_ms"] = statistics.median(times) * 1e3
    info = cab.kv.env.info()  # type: ignore[attr-defined]
    stat = cab.kv.env.stat()  # type: ignore[attr-defined]
    out["disk_used_b_per_node"] = (info["last_pgno"] + 1) * stat["psize"] / n
    out["disk_file_b_per_node"] = os.path.getsize(os.path.join(d, "data.mdb")) / n
    t = time.perf_counter()
    cab.verify()
    out["verify_s"] = time.perf_counter() - t
    cab.close()
    return out


def meta_sid(n: int) -> str:
    return f"synth-{n}-0"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,100000,1000000",
                    help="comma-separated node counts (default 1000,100000,1000000)")
    ap.add_argument("--repeat", type=int, default=60, help="one-node flushes per figure")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--build", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build:
        print(json.dumps(_build(args.build, args.dir)))
        return
    if args.one:
        print(json.dumps(_one_size(args.one, args.repeat, args.dir)))
        return
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        print(f"== {n:,} nodes ...", flush=True)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE) + os.pathsep
                   + os.environ.get("PYTHONPATH", ""))
        d = tempfile.mkdtemp(prefix="memnet-bench-cab-")
        r: dict[str, float] = {}
        try:
            for step in (["--build", str(n)], ["--one", str(n), "--repeat", str(args.repeat)]):
                p = subprocess.run([sys.executable, __file__, *step, "--dir", d],
                                   capture_output=True, text=True, env=env)
                if p.returncode != 0:
                    print(p.stderr)
                    raise SystemExit(p.returncode)
                r.update(json.loads(p.stdout.strip().splitlines()[-1]))
        finally:
            shutil.rmtree(d, ignore_errors=True)
        rows.append(r)
        print(f"   {int(r['edges']):,} edges; build {r['build_s']:.1f} s (store); "
              f"adopt {r['adopt_s']:.2f} s; hydrate {r['hydrate_s']:.2f} s; "
              f"verify {r['verify_s']:.2f} s")
        print(f"   flush one-node change: random node {r['flush1_random_ms']:.2f} ms, "
              f"node with small neighbours {r['flush1_quiet_ms']:.2f} ms; "
              f"1,000-element change {r['flush1000_ms']:.1f} ms")
        print(f"   disk per node: {r['disk_used_b_per_node']:,.0f} B used, "
              f"{r['disk_file_b_per_node']:,.0f} B file", flush=True)
    base = rows[0]
    print("\n== summary (ratios against the first size of this run) ==")
    for r in rows:
        print(f"{int(r['nodes']):>10,}  hydrate {r['hydrate_s']:7.2f} s  "
              f"flush1 random {r['flush1_random_ms'] / base['flush1_random_ms']:6.2f}x  "
              f"flush1 quiet {r['flush1_quiet_ms'] / base['flush1_quiet_ms']:6.2f}x  "
              f"flush1000 {r['flush1000_ms'] / base['flush1000_ms']:6.2f}x")
    big = rows[-1]
    if big["nodes"] >= 1_000_000:
        verdict = "PASS" if big["hydrate_s"] < 10 else "MISS"
        print(f"{verdict} hydrate of {int(big['nodes']):,} nodes under 10 s: "
              f"{big['hydrate_s']:.2f} s = {big['hydrate_s'] / 10:.2f}x the target")
        ratio = big["flush1_quiet_ms"] / base["flush1_quiet_ms"]
        verdict = "PASS" if ratio <= 2 else "MISS"
        print(f"{verdict} one-node flush at {int(big['nodes']):,} within 2x of "
              f"{int(base['nodes']):,}: {ratio:.2f}x (node with small neighbours); random node "
              f"{big['flush1_random_ms'] / base['flush1_random_ms']:.2f}x")


if __name__ == "__main__":
    main()
