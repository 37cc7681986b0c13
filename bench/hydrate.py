"""Hydrate: time, resident memory per node, and the first Recalls after it.

Each engine is measured in a fresh process that imports MemNet, warms it (a
Recall on a tiny session and one encoding, so the tokenizer, its remembered
pieces and the parser are loaded), opens
the cabinet, and then:

* **hydrate**: ``Cabinet.open(sid)`` of the whole session, timed (wall, and
  the process's CPU time, which a busy machine inflates less);
* **RSS/node**: resident memory (``/proc/self/status``) after the hydrate
  minus before it, divided by the nodes; the whole figure and its two parts,
  anonymous memory (the session's objects) and file pages (the storage file
  mapped into the process);
* **first 100 Recalls**: 100 different one-keyword queries (``KIND word``:
  the kind and the longest word of a node drawn from the session with a
  fixed seed before the runs), each timed
  once, right after the hydrate; the largest is the figure (wall time, and
  the thread's CPU time: on a busy machine a wall time includes the slices
  the process waited for a core), and the pauses of the garbage collector
  during them are counted and timed in CPU time (``gc.callbacks``). As a
  control, the same queries are then asked again after one small commit, so
  each is again the first at its version but nothing of the hydrate is left
  to pay: what these queries cost on this session anyway.

Targets (issue 12, target 5): RSS ≤ 1,200 bytes per node, a hydrate of 1M
nodes ≤ 4 s, no Recall over 20 ms among the first 100.

The cabinet is given with ``--cabinet DIR`` (one ``bench/flush.py --keep``
left, say, for WordNet). With ``--synth N`` a synthetic session of N nodes is
built straight into the store (``bench/synth.py``, as ``bench/recall_scale.py``
does at 1M) and adopted into DIR first, unless DIR holds it already.

``--baseline DIR`` measures another engine first (a ``memnet`` package
exported under DIR), on the same cabinet and queries: before and after in
one run; ``--baseline-cabinet`` gives it a copy of the cabinet in its older
format (made before ``memnet cabinet upgrade``). ``--runs`` alternates the
engines that many times; the medians are printed.

    python bench/hydrate.py --cabinet /tmp/wn-cab --sid built
    python bench/hydrate.py --synth 1000000 --cabinet /tmp/synth-1m --baseline /tmp/old
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_RSS = 1_200
TARGET_HYDRATE_1M_S = 4.0
TARGET_RECALL_MS = 20.0
QUERIES = 100


def _memory() -> dict[str, int]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile"):
                out[name] = int(rest.split()[0]) * 1024
    return out


def _child(cabinet: str, sid: str, queries: list[str]) -> dict[str, Any]:
    import memnet
    import memnet.tokens

    warm = memnet.Session("warm")
    warm.commit("INSERT (t:TSK {title: 'warm the engine'})")
    warm.recall("TSK warm")
    memnet.tokens.encode("warm")  # the tokenizer itself, not only the remembered pieces
    cab = memnet.Cabinet.open(cabinet)
    del warm
    gc.collect()
    before = _memory()
    t, c = time.perf_counter(), time.process_time()
    s = cab.open(sid)
    hydrate_s, hydrate_cpu_s = time.perf_counter() - t, time.process_time() - c
    after = _memory()
    nodes = s.store.next_node - 1
    pauses: list[float] = []
    started: list[float] = []

    def watch(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.thread_time())
        elif started:
            pauses.append(time.thread_time() - started.pop())

    gc.callbacks.append(watch)
    lat, cpu = [], []
    for q in queries:
        t0, c0 = time.perf_counter(), time.thread_time()
        s.recall(q)
        lat.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.thread_time() - c0) * 1e3)
    gc.callbacks.remove(watch)
    # the control: the same queries, each again the first at its version (a
    # small commit in between empties the per-version caches), on the same
    # session without the hydrate behind it: what these queries cost anyway
    s.commit("INSERT (b:BENCH {title: 'control'})")
    again = []
    for q in queries:
        t0 = time.perf_counter()
        s.recall(q)
        again.append((time.perf_counter() - t0) * 1e3)
    per = {k: (after[k] - before[k]) / nodes for k in before}
    return {
        "engine": os.path.dirname(memnet.__file__),
        "nodes": nodes,
        "edges": s.store.next_edge - 1,
        "hydrate_s": hydrate_s,
        "hydrate_cpu_s": hydrate_cpu_s,
        "rss_b_node": per["VmRSS"],
        "anon_b_node": per["RssAnon"],
        "file_b_node": per["RssFile"],
        "recall_max_ms": max(lat),
        "recall_p50_ms": statistics.median(lat),
        "recall_over": sum(x > TARGET_RECALL_MS for x in lat),
        "recall_cpu_max_ms": max(cpu),
        "gc_pauses": len(pauses),
        "gc_max_ms": max(pauses, default=0.0) * 1e3,
        "control_max_ms": max(again),
        "control_p50_ms": statistics.median(again),
    }


def _pick_queries(cabinet: str, sid: str, n: int, seed: int) -> list[str]:
    """``n`` distinct ``KIND word`` queries from random live nodes of the session."""
    import re

    import memnet

    cab = memnet.Cabinet.open(cabinet)
    s = cab.open(sid)
    st = s.store
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        nid = rng.randrange(1, st.next_node)
        if st.node_recycled(nid):
            continue
        words = [
            w
            for v in st.node_props(nid).values()
            for x in (v if isinstance(v, tuple) else (v,))
            if isinstance(x, str)
            for w in re.findall(r"[a-z][a-z0-9_]{2,}", x.lower())
        ]
        if words:  # the longest word of the node: a rarer one, as an agent would ask
            out[f"{st.node_kind(nid)} {max(words, key=len)}"] = None
    cab.close()
    return list(out)


def _ensure_synth(n: int, cabinet: str, sid: str) -> None:
    import memnet

    if os.path.exists(os.path.join(cabinet, "data.mdb")):
        with memnet.Cabinet.open(cabinet) as cab:
            if cab.exists(sid):
                return
    sys.path.insert(0, HERE)
    import synth  # type: ignore[import-not-found]

    print(f"# building synth {n:,} into the store and adopting it into {cabinet} ...", flush=True)
    t = time.perf_counter()
    s, _meta = synth.build(n, via="store")
    with memnet.Cabinet.open(cabinet) as cab:
        cab.adopt(s)
    print(f"# built and adopted in {time.perf_counter() - t:.0f} s", flush=True)


def _run(engine: str | None, cabinet: str, sid: str, qfile: str) -> dict[str, Any]:
    env = dict(os.environ)
    root = engine or os.path.dirname(HERE)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "--cabinet",
            cabinet,
            "--sid",
            sid,
            "--queries",
            qfile,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        raise SystemExit(p.returncode)
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


KEYS = (
    ("hydrate_s", "hydrate s", ".2f"),
    ("hydrate_cpu_s", "cpu s", ".2f"),
    ("rss_b_node", "RSS B/node", ",.0f"),
    ("anon_b_node", "anon B/node", ",.0f"),
    ("file_b_node", "file B/node", ",.0f"),
    ("recall_max_ms", "max ms", ".1f"),
    ("recall_cpu_max_ms", "cpu max ms", ".1f"),
    ("recall_p50_ms", "p50 ms", ".2f"),
    ("recall_over", "over 20ms", "d"),
    ("gc_pauses", "gc runs", "d"),
    ("gc_max_ms", "gc max ms", ".1f"),
    ("control_max_ms", "ctrl max ms", ".1f"),
    ("control_p50_ms", "ctrl p50 ms", ".2f"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cabinet", required=True, help="LMDB cabinet directory")
    ap.add_argument("--sid", default=None, help="the session (default: built, or synth-N-0)")
    ap.add_argument(
        "--synth",
        type=int,
        default=None,
        help="build a synthetic session of this many nodes into --cabinet if needed",
    )
    ap.add_argument(
        "--baseline",
        default=None,
        help="a directory holding another engine's memnet package, measured too",
    )
    ap.add_argument(
        "--baseline-cabinet",
        default=None,
        help="the cabinet the baseline engine reads, when it reads an older "
        "format: a copy of --cabinet made before `memnet cabinet upgrade` "
        "(default: --cabinet)",
    )
    ap.add_argument("--runs", type=int, default=1, help="fresh processes per engine")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--queries", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    sid = args.sid or (f"synth-{args.synth}-0" if args.synth else "built")
    if args.child:
        with open(args.queries) as f:
            print(json.dumps(_child(args.cabinet, sid, json.load(f))))
        return
    if args.synth:
        _ensure_synth(args.synth, args.cabinet, sid)
    queries = _pick_queries(args.cabinet, sid, QUERIES, args.seed)
    fd, qfile = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(queries, f)
    print(
        f"# hydrate {args.cabinet} ({sid}); {len(queries)} queries like {queries[0]!r}, "
        f"{queries[1]!r}; load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    engines = (
        [("before", args.baseline, args.baseline_cabinet or args.cabinet)] if args.baseline else []
    )
    engines.append(("after", None, args.cabinet))
    results: dict[str, list[dict[str, Any]]] = {tag: [] for tag, _e, _c in engines}
    try:
        for _ in range(args.runs):
            for tag, engine, cabinet in engines:
                r = _run(engine, cabinet, sid, qfile)
                results[tag].append(r)
                print(f"# {tag}: " + "  ".join(f"{h} {r[k]:{f}}" for k, h, f in KEYS), flush=True)
    finally:
        os.unlink(qfile)
    med = {
        tag: {k: statistics.median(r[k] for r in rs) for k, _h, _f in KEYS}
        for tag, rs in results.items()
    }
    first = results["after"][0]
    print(
        f"\n{first['nodes']:,} nodes, {first['edges']:,} edges; medians of {args.runs} "
        f"run(s); load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'engine':<8}" + "".join(f"{h:>13}" for _k, h, _f in KEYS))
    for tag, m in med.items():
        print(f"{tag:<8}" + "".join(f"{m[k]:>13{'.0f' if f == 'd' else f}}" for k, _h, f in KEYS))
    m = med["after"]
    if "before" in med:
        b = med["before"]
        print(
            f"after/before: hydrate {m['hydrate_s'] / b['hydrate_s']:.2f}x, RSS/node "
            f"{m['rss_b_node'] / b['rss_b_node']:.2f}x, max of first {QUERIES} Recalls "
            f"{m['recall_max_ms'] / b['recall_max_ms']:.2f}x"
        )
    ok = m["rss_b_node"] <= TARGET_RSS
    print(
        f"{'PASS' if ok else 'MISS'} RSS <= {TARGET_RSS:,} B/node: {m['rss_b_node']:,.0f} "
        f"(anon {m['anon_b_node']:,.0f}, file {m['file_b_node']:,.0f})"
    )
    if first["nodes"] >= 1_000_000:
        ok = m["hydrate_s"] <= TARGET_HYDRATE_1M_S
        print(
            f"{'PASS' if ok else 'MISS'} hydrate of {first['nodes']:,} nodes <= "
            f"{TARGET_HYDRATE_1M_S:g} s: {m['hydrate_s']:.2f} s (CPU {m['hydrate_cpu_s']:.2f} s)"
        )
    ok = m["recall_max_ms"] <= TARGET_RECALL_MS
    print(
        f"{'PASS' if ok else 'MISS'} no Recall over {TARGET_RECALL_MS:g} ms among the first "
        f"{QUERIES} after a hydrate: max {m['recall_max_ms']:.1f} ms wall, "
        f"{m['recall_cpu_max_ms']:.1f} ms CPU"
    )


if __name__ == "__main__":
    main()
