"""Recall at scale: is a Recall bounded by the ask, never by the memory?

Builds deterministic synthetic sessions (``bench/synth.py``) of 1k, 10k, 100k
and 1M nodes, each in a fresh subprocess, and prints for each size: build
time, size, RSS per node, Recall latency (match-seeded, peak-seeded,
outline), commit throughput, tokens per Shape and the tokens of the unbounded
2-hop neighbourhood of the same seeds. A summary compares the figures with
the targets of SPEC §1/§3. The benchmark prints; it never asserts.

Run::

    cd /work/main && PYTHONPATH=. python bench/recall_scale.py            # all four sizes
    PYTHONPATH=. python bench/recall_scale.py --quick                    # 1k and 10k
    PYTHONPATH=. python bench/recall_scale.py --sizes 1000,100000 --repeat 500

See ``bench/README.md`` for what each figure means.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000)
COMMIT_BUDGET_S = 600.0  # build through Commit only when projected under this
PROBE_NODES = 20_000
TARGET_P50_MS = 0.5
TARGET_RATIO = 1.5
TARGET_PEAK_MS = 2.0
TARGET_TOKENS = 4_000
TARGET_RSS_B = 2_048
REF_N = 1_000
SMALL_COMMITS = 300
BATCH_COMMITS = 5
AFTER_COMMITS = 20  # one-node commits, each followed by a first Peak_L or outline
TARGET_AFTER_MS = 5.0
BATCH_NODES = 1_000


# ---------------------------------------------------------------- helpers


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def pct(samples: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of ``samples``."""
    xs = sorted(samples)
    if not xs:
        return float("nan")
    i = max(0, min(len(xs) - 1, int(round(p / 100 * len(xs) + 0.5)) - 1))
    return xs[i]


def ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def fmt_n(n: float) -> str:
    return f"{n:,.0f}"


def timed(fn: Any, *a: Any, **kw: Any) -> tuple[int, Any]:
    t0 = time.perf_counter_ns()
    out = fn(*a, **kw)
    return time.perf_counter_ns() - t0, out


def timed2(fn: Any, *a: Any) -> tuple[int, int]:
    """(wall ns, this thread's CPU ns) of one call. CPU time leaves out the
    time the process waits while other processes run on the shared cores."""
    c0 = time.thread_time_ns()
    t0 = time.perf_counter_ns()
    fn(*a)
    t1 = time.perf_counter_ns()
    return t1 - t0, time.thread_time_ns() - c0


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


# ---------------------------------------------------------------- 2-hop comparison


def two_hop(store: Any, seeds: list[int]) -> tuple[dict[int, int], set[int]]:
    """Every live node within 2 hops of ``seeds`` (both directions) and every
    live edge on a path of at most 2 hops from a seed (edges at distance-0 and
    distance-1 nodes)."""
    dist = {s: 0 for s in seeds if store.node_live(s)}
    frontier = list(dist)
    edges: set[int] = set()
    for d in (1, 2):
        nxt: list[int] = []
        for u in frontier:
            for e, _dir, v in store.live_entries(u):
                edges.add(e)
                if v not in dist:
                    dist[v] = d
                    nxt.append(v)
        frontier = nxt
    return dist, edges


def two_hop_tokens(store: Any, seeds: list[int]) -> tuple[int, int, int]:
    """(nodes, edges, tokens) of the unbounded 2-hop neighbourhood, printed
    as one INSERT literal with full properties (no excerpts)."""
    from memnet.gql.emit import format_edge, format_node
    from memnet.graph.store import edge_handle, node_handle

    dist, edges = two_hop(store, seeds)
    lines = []
    for n in sorted(dist, key=lambda x: (dist[x], x)):
        props = store.node_props(n)
        lines.append(
            format_node(
                node_handle(n),
                store.node_labels(n),
                [(k, props[k]) for k in sorted(props)],
                store.node_nick(n),
            )
        )
    for e in sorted(edges):
        ep = store.edge_props(e)
        src, dst = store.edge_ends(e)
        lines.append(
            format_edge(
                edge_handle(e),
                store.edge_type(e),
                node_handle(src),
                node_handle(dst),
                [(k, ep[k]) for k in sorted(ep)],
            )
        )
    return len(dist), len(edges), count_insert_tokens(lines)


CHUNK_LINES = 4_096


def count_insert_tokens(lines: list[str]) -> int:
    """Exact token count of ``"INSERT\\n  " + ",\\n  ".join(lines)``, counted in
    chunks of whole lines so that a multi-megabyte neighbourhood never becomes
    one giant token list. The chunks are cut just after a ``,\\n``: under the
    o200k/cl100k pre-tokenisers no pre-token crosses that point, so the sum of
    the chunk counts is the count of the whole text (checked by ``--selftest``)."""
    from memnet import count_tokens

    if not lines:
        return 0
    total = 0
    last = len(lines) - 1
    for i in range(0, len(lines), CHUNK_LINES):
        part = lines[i : i + CHUNK_LINES]
        head = "INSERT\n  " if i == 0 else "  "
        tail = "" if i + len(part) - 1 == last else ",\n"
        total += count_tokens(head + ",\n  ".join(part) + tail)
    return total


def selftest() -> None:
    """Check chunked counting against one count of the whole text."""
    import synth

    from memnet import count_tokens

    s, _meta = synth.build(20_000, 3, via="store")
    st = s.store
    from memnet.gql.emit import format_edge, format_node
    from memnet.graph.store import edge_handle, node_handle

    lines = [
        format_node(node_handle(n), st.node_labels(n), sorted(st.node_props(n).items()))
        for n in range(1, st.next_node)
    ]
    lines += [
        format_edge(edge_handle(e), st.edge_type(e), *map(node_handle, st.edge_ends(e)))
        for e in range(1, st.next_edge)
    ]
    for cut in (len(lines), 1, 2, 4_097, 9_000):
        ls = lines[:cut]
        whole = count_tokens("INSERT\n  " + ",\n  ".join(ls))
        chunked = count_insert_tokens(ls)
        print(
            f"selftest {cut:>6} lines: whole {whole:,} chunked {chunked:,} "
            f"{'ok' if whole == chunked else 'DIFFERENT'}"
        )


# ---------------------------------------------------------------- one size (child process)


def run_size(n: int, *, seed: int, repeat: int, via: str, note: str) -> dict[str, Any]:
    import synth

    import memnet
    from memnet.graph.store import parse_handle

    out: dict[str, Any] = {"n": n}

    def say(line: str = "") -> None:
        print(line, flush=True)

    # baseline: engine imported, tokenizer and grammar loaded
    memnet.count_tokens("warm up the tokenizer")
    memnet.parse_query("TSK status:open warm")
    memnet.parse_delta("INSERT (a:TSK {title: 'warm'})")
    gc.collect()
    rss0 = rss_bytes()

    last = [time.perf_counter(), 0]
    rates: list[float] = []

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if done >= total // 2:  # rate over the second half of the build
            rates.append((done - last[1]) / max(now - last[0], 1e-9))
        last[0], last[1] = now, done

    say(f"== {n:,} nodes (seed {seed}) ==")
    s, meta = synth.build(n, seed, via=via, progress=progress)
    gc.collect()
    rss1 = rss_bytes()
    st = s.store
    nodes, edges = st.live_nodes, st.live_edges
    out.update(
        nodes=nodes,
        edges=edges,
        via=via,
        build_s=meta["build_s"],
        gen_s=meta["gen_s"],
        rss0=rss0,
        rss1=rss1,
        rss_per_node=(rss1 - rss0) / nodes,
        peak_rss=peak_rss_bytes(),
    )
    if via == "commit" and rates:
        out["late_rate"] = statistics.median(rates)
    adjacency = st.view().adjacency
    degs = sorted((len(adjacency[i]) for i in range(1, st.next_node)), reverse=True)
    hubs = sum(1 for d in degs if d >= 1_000)

    how = (
        f"through Session.commit, {nodes // meta['batch'] + (nodes % meta['batch'] > 0)} "
        f"commits of {meta['batch']:,} nodes with their edges (GQL text; text generation "
        f"included; {meta['splits']} batches split for the Δ cap)"
        if via == "commit"
        else "straight into Session.store (bypasses parse/plan/caps/history)"
    )
    say(
        f"build          {meta['build_s']:.1f} s {how}; generator {meta['gen_s']:.1f} s of it"
        + (f"; {note}" if note else "")
    )
    if via == "commit":
        say(
            f"               {nodes / meta['build_s']:,.0f} nodes/s overall"
            + (f", {out['late_rate']:,.0f} nodes/s over the second half" if rates else "")
        )
    say(
        f"size           {nodes:,} nodes, {edges:,} edges ({edges / nodes:.2f}/node); "
        f"max degree {degs[0]:,}; top-5 degrees {', '.join(f'{d:,}' for d in degs[:5])}; "
        f"nodes with >= 1,000 edges: {hubs}"
    )
    say(
        f"RSS            {(rss1 - rss0) / 2**20:,.1f} MiB added by the build = "
        f"{(rss1 - rss0) / nodes:,.0f} B/node (its edges, indexes and history included; "
        f"history_limit={meta['history_limit']}); baseline {rss0 / 2**20:,.0f} MiB, "
        f"peak RSS {out['peak_rss'] / 2**20:,.0f} MiB"
    )

    match_q = meta["match"]
    miss_q = meta["miss"]

    # a 1k reference session in this same process (built after the RSS figure),
    # timed interleaved with this one, so that both see the same machine noise
    ref = ref_q = None
    if n > REF_N:
        ref, ref_meta = synth.build(REF_N, seed, via="store")
        ref_q = ref_meta["match"]
        for _label, q in ref_q:
            ref.recall(q)

    # ---- warm-up: code paths and allocator, on queries that are not measured
    for q in ("PKG", "LAW", "SYM role:class", "MOD lang:py"):
        s.recall(q)

    # ---- match-seeded
    cold: list[int] = []
    receipts: dict[str, Any] = {}
    for label, q in match_q:
        dt, shape = timed(s.recall, q)
        cold.append(dt)
        receipts[label] = shape.receipt
    match_ns: list[int] = []
    match_cpu: list[int] = []
    ref_ns: list[int] = []
    for _ in range(repeat):
        for _label, q in match_q:
            dt, dc = timed2(s.recall, q)
            match_ns.append(dt)
            match_cpu.append(dc)
        if ref is not None:
            for _label, q in ref_q:
                ref_ns.append(timed2(ref.recall, q)[0])
    bad = [lab for lab, r in receipts.items() if r.seed_mode != "match"]
    out.update(
        match_p50=pct(match_ns, 50),
        match_p99=pct(match_ns, 99),
        match_cpu_p50=pct(match_cpu, 50),
        match_cpu_p99=pct(match_cpu, 99),
        match_cold=statistics.median(cold),
        match_bad=bad,
    )
    say(
        f"recall match   p50 {ms(out['match_p50'])}  p99 {ms(out['match_p99'])}  "
        f"(CPU time p50 {ms(out['match_cpu_p50'])}  p99 {ms(out['match_cpu_p99'])}; "
        f"{len(match_q)} queries x {repeat} reps = {len(match_ns):,} calls); "
        f"first call per query (cold line cache, query parse) median {ms(out['match_cold'])}, "
        f"max {ms(max(cold))}" + (f"; NOT match-seeded: {', '.join(bad)}" if bad else "")
    )
    if ref_ns:
        out.update(ref_p50=pct(ref_ns, 50), ref_p99=pct(ref_ns, 99))
        say(
            f"               interleaved in this process with a {REF_N:,}-node reference session "
            f"(same queries drawn from it): reference p50 {ms(out['ref_p50'])}  p99 "
            f"{ms(out['ref_p99'])}; this size / reference p50 = "
            f"{out['match_p50'] / out['ref_p50']:.2f}x"
        )

    # ---- peak-seeded (codebook miss)
    first_ns, shape = timed(s.recall, miss_q[0][1])
    receipts[miss_q[0][0]] = shape.receipt
    for label, q in miss_q[1:]:
        receipts[label] = s.recall(q).receipt
    peak_ns: list[int] = []
    peak_cpu: list[int] = []
    for _ in range(repeat):
        for _label, q in miss_q:
            dt, dc = timed2(s.recall, q)
            peak_ns.append(dt)
            peak_cpu.append(dc)
    out.update(
        peak_first=first_ns,
        peak_p50=pct(peak_ns, 50),
        peak_p99=pct(peak_ns, 99),
        peak_cpu_p99=pct(peak_cpu, 99),
    )
    say(
        f"recall peak    first call {ms(first_ns)} (Peak_L over the whole session, then cached "
        f"per version); later p50 {ms(out['peak_p50'])}  p99 {ms(out['peak_p99'])} "
        f"(CPU p50 {ms(pct(peak_cpu, 50))}  p99 {ms(out['peak_cpu_p99'])}; "
        f"{len(miss_q)} miss queries x {repeat} = {len(peak_ns):,} calls)"
    )

    # ---- outline
    first_ns, oshape = timed(s.outline)
    out_ns: list[int] = []
    out_cpu: list[int] = []
    for _ in range(max(repeat, 50)):
        dt, dc = timed2(s.outline)
        out_ns.append(dt)
        out_cpu.append(dc)
    out.update(
        outline_first=first_ns,
        outline_p50=pct(out_ns, 50),
        outline_p99=pct(out_ns, 99),
        outline_tokens=oshape.receipt.tokens,
    )
    say(
        f"outline        first call {ms(first_ns)} (exemplars over the whole session, then "
        f"cached per version); later p50 {ms(out['outline_p50'])}  p99 "
        f"{ms(out['outline_p99'])} (CPU p99 {ms(pct(out_cpu, 99))}); "
        f"{oshape.receipt.tokens:,} tokens (Session.outline(), view=shell)"
    )

    # ---- tokens per Shape and the unbounded 2-hop neighbourhood of the same seeds
    rows = []
    t2 = time.perf_counter()
    hop_cache: dict[tuple[str, ...], tuple[int, int, int]] = {}
    for label, _q in [*match_q, *miss_q]:
        r = receipts[label]
        if r.seeds not in hop_cache:
            hop_cache[r.seeds] = two_hop_tokens(st, [parse_handle(h)[1] for h in r.seeds])
        hn, he, htok = hop_cache[r.seeds]
        rows.append((label, r.seed_mode, r.matched, len(r.seeds), r.rows, r.tokens, hn, he, htok))
    t2 = time.perf_counter() - t2
    toks = [x[5] for x in rows]
    ratios = [x[8] / x[5] for x in rows]
    out.update(
        tok_median=statistics.median(toks),
        tok_max=max(toks),
        hop_median=statistics.median(x[8] for x in rows),
        hop_max=max(x[8] for x in rows),
        ratio_median=statistics.median(ratios),
        ratio_max=max(ratios),
        ratio_min=min(ratios),
    )
    say(
        f"tokens/Shape   median {out['tok_median']:,.0f}, max {out['tok_max']:,} over "
        f"{len(rows)} sample queries (default knobs k=2 M=50 L=5 F=8, view=interior, laws on)"
    )
    say(
        f"2-hop          unbounded 2-hop neighbourhood of the same seeds, full props: median "
        f"{out['hop_median']:,.0f} tokens, max {out['hop_max']:,}; 2-hop/Shape ratio median "
        f"{out['ratio_median']:,.1f}x, min {out['ratio_min']:,.1f}x, max "
        f"{out['ratio_max']:,.1f}x ({t2:.1f} s to compute)"
    )
    say(
        "  query               mode   matched seeds rows tokens |  2hop nodes   edges     tokens"
        "   ratio"
    )
    for label, mode, matched, nseeds, nrows, tok, hn, he, htok in rows:
        say(
            f"  {label:<19} {mode:<6} {matched:>7} {nseeds:>5} {nrows:>4} {tok:>6} | "
            f"{hn:>11,} {he:>7,} {htok:>10,} {htok / tok:>7.1f}x"
        )

    # ---- commit throughput on top of the built session (changes it: last)
    rng = random.Random(seed + 1)
    smalls = [synth.small_delta(s, rng) for _ in range(SMALL_COMMITS)]
    small_ns: list[int] = []
    t0 = time.perf_counter_ns()
    for text in smalls:
        dt, _ = timed(s.commit, text)
        small_ns.append(dt)
    small_total = time.perf_counter_ns() - t0
    batch_ns: list[int] = []
    batch_edges = 0
    bnodes = BATCH_NODES
    refused = []
    while len(batch_ns) < BATCH_COMMITS:
        text = synth.batch_delta(s, bnodes, rng)
        e0 = st.live_edges
        try:
            dt, _ = timed(s.commit, text)
        except memnet.InputTooLarge as exc:  # refused whole; the session is unchanged
            refused.append(f"{bnodes:,}-node Δ refused ({exc})")
            bnodes = bnodes * 4 // 5
            continue
        batch_edges += st.live_edges - e0
        batch_ns.append(dt)
    out.update(
        small_per_s=SMALL_COMMITS / (small_total / 1e9),
        small_p50=pct(small_ns, 50),
        batch_nodes_per_s=bnodes / (statistics.median(batch_ns) / 1e9),
        batch_nodes=bnodes,
    )
    say(
        f"commit small   {out['small_per_s']:,.0f} commits/s ({SMALL_COMMITS} commits of 1 node "
        f"+ 2 edges to existing nodes; p50 {ms(out['small_p50'])}, p99 "
        f"{ms(pct(small_ns, 99))}; parse included)"
    )
    # ---- Peak_L and outline right after a one-node commit (kept up to date incrementally)
    after_peak: list[int] = []
    after_outline: list[int] = []
    for _ in range(AFTER_COMMITS):
        s.commit(synth.small_delta(s, rng))
        after_peak.append(timed(s.recall, miss_q[0][1])[0])
        s.commit(synth.small_delta(s, rng))
        after_outline.append(timed(s.outline)[0])
    out.update(
        after_peak_p50=pct(after_peak, 50),
        after_peak_max=max(after_peak),
        after_outline_p50=pct(after_outline, 50),
        after_outline_max=max(after_outline),
    )
    say(
        f"after commit   first peak-seeded recall after a one-node commit p50 "
        f"{ms(out['after_peak_p50'])} max {ms(out['after_peak_max'])}; first outline p50 "
        f"{ms(out['after_outline_p50'])} max {ms(out['after_outline_max'])} "
        f"({AFTER_COMMITS} commits each; Shape building included)"
    )
    say(
        f"commit batch   {out['batch_nodes_per_s']:,.0f} nodes/s (median of {BATCH_COMMITS} "
        f"commits of {bnodes:,} nodes + ~{batch_edges // BATCH_COMMITS:,} edges; "
        f"median {statistics.median(batch_ns) / 1e9:.3f} s per commit; parse included)"
    )
    if refused:
        say(f"               {refused[0]}; measured with {bnodes:,}-node commits instead")
    say(f"               load average now {loadavg()}")
    say()
    return out


# ---------------------------------------------------------------- parent


def child_cmd(n: int, args: argparse.Namespace, via: str, note: str) -> list[str]:
    return [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        str(n),
        "--seed",
        str(args.seed),
        "--repeat",
        str(args.repeat),
        "--via",
        via,
        "--note",
        note,
    ]


def run_child(cmd: list[str]) -> dict[str, Any] | None:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    result = None
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
        else:
            print(line, end="", flush=True)
    proc.wait()
    if proc.returncode != 0:
        print(f"!! child {' '.join(cmd[-8:])} exited with {proc.returncode}", flush=True)
    return result


def probe_rate(args: argparse.Namespace) -> float:
    """Commit-path build rate (nodes/s) measured on a throwaway session."""
    code = (
        f"import sys, time; sys.path.insert(0, {HERE!r}); import synth; "
        f"s, m = synth.build({PROBE_NODES:d}, {args.seed:d}, via='commit'); "
        "print(m['nodes'] / m['build_s'])"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ.copy(),
    )
    return float(res.stdout.strip().splitlines()[-1])


def choose_via(n: int, args: argparse.Namespace, rate: float | None) -> tuple[str, str, float]:
    if args.via != "auto":
        return args.via, "", rate or 0.0
    if n <= 100_000 and rate is None:
        return "commit", "", 0.0
    if rate is None:
        rate = probe_rate(args)
        src = f"probe of {PROBE_NODES:,} nodes"
    else:
        src = "measured on the previous size"
    projected = n / rate
    if projected <= args.commit_budget:
        return (
            "commit",
            (
                f"commit path projected {projected:.0f} s at {rate:,.0f} nodes/s "
                f"({src}) <= {args.commit_budget:.0f} s budget"
            ),
            rate,
        )
    return (
        "store",
        (
            f"built through the store because the commit path was projected at "
            f"{projected:.0f} s ({rate:,.0f} nodes/s, {src}) > "
            f"{args.commit_budget:.0f} s budget; commit throughput is measured "
            "separately below"
        ),
        rate,
    )


def summary(results: list[dict[str, Any]]) -> None:
    print("== summary: targets (SPEC §1/§3); printed figures, never asserted ==")
    if not results:
        print("no results")
        return
    by_n = {r["n"]: r for r in results}
    small, big = by_n[min(by_n)], by_n[max(by_n)]
    tag = "" if big["n"] == 1_000_000 else f" [largest size run: {big['n']:,}, not 1M]"

    def line(name: str, figure: str, ok: bool) -> None:
        print(f"{'PASS' if ok else 'MISS'}  {name:<46} {figure}")

    cross = big["match_p50"] / small["match_p50"]
    if "ref_p50" in big:
        ratio = big["match_p50"] / big["ref_p50"]
        line(
            f"match p50 at {big['n']:,} <= 1.5 x p50 at {REF_N:,}{tag}",
            f"same process, interleaved: {ms(big['match_p50'])} / {ms(big['ref_p50'])} = "
            f"{ratio:.2f}x; separate processes: {ms(big['match_p50'])} / "
            f"{ms(small['match_p50'])} = {cross:.2f}x (p99 {ms(big['match_p99'])} vs "
            f"{ms(big['ref_p99'])} interleaved)",
            ratio <= TARGET_RATIO,
        )
    else:
        line(
            f"match p50 at {big['n']:,} <= 1.5 x p50 at {small['n']:,}{tag}",
            f"{ms(big['match_p50'])} / {ms(small['match_p50'])} = {cross:.2f}x (separate "
            f"processes; p99 {ms(big['match_p99'])} / {ms(small['match_p99'])})",
            cross <= TARGET_RATIO,
        )
    line(
        f"match p50 at {big['n']:,} < 0.5 ms{tag}",
        f"{ms(big['match_p50'])} = {big['match_p50'] / 1e6 / TARGET_P50_MS:.2f}x the target",
        big["match_p50"] / 1e6 < TARGET_P50_MS,
    )
    worst = max(results, key=lambda r: r["peak_p50"])
    line(
        "peak-seeded after first call p50 < 2 ms (all)",
        f"worst p50 {ms(worst['peak_p50'])} at {worst['n']:,} = "
        f"{worst['peak_p50'] / 1e6 / TARGET_PEAK_MS:.2f}x the target (p99 "
        f"{ms(worst['peak_p99'])}); first calls "
        + ", ".join(f"{r['n']:,}: {ms(r['peak_first'])}" for r in results),
        worst["peak_p50"] / 1e6 < TARGET_PEAK_MS,
    )
    line(
        f"first Peak_L / outline after a 1-node commit p50 <= 5 ms at {big['n']:,}{tag}",
        f"peak-seeded recall max {ms(big['after_peak_max'])} (p50 {ms(big['after_peak_p50'])}), "
        f"outline max {ms(big['after_outline_max'])} (p50 {ms(big['after_outline_p50'])})",
        max(big["after_peak_p50"], big["after_outline_p50"]) / 1e6 <= TARGET_AFTER_MS,
    )
    worst = max(results, key=lambda r: r["tok_max"])
    line(
        "default Shape <= 4k tokens (max, all sizes)",
        f"max {worst['tok_max']:,} at {worst['n']:,} = {worst['tok_max'] / TARGET_TOKENS:.2f}x "
        "the target; medians " + ", ".join(f"{r['n']:,}: {r['tok_median']:,.0f}" for r in results),
        worst["tok_max"] <= TARGET_TOKENS,
    )
    line(
        f"RSS <= 2 KB/node at {big['n']:,}{tag}",
        f"{big['rss_per_node']:,.0f} B/node = {big['rss_per_node'] / TARGET_RSS_B:.2f}x the "
        f"target (built via {big['via']})",
        big["rss_per_node"] <= TARGET_RSS_B,
    )
    print()
    print(
        "size        via     build s  B/node  match p50/p99 ms  peak 1st ms  peak p50/p99 ms "
        " outline 1st/p50 ms  tok med/max  2hop/Shape med  commits/s  batch nodes/s"
    )
    for r in results:
        print(
            f"{r['n']:>9,}  {r['via']:<6} {r['build_s']:>8.1f} {r['rss_per_node']:>7,.0f}  "
            f"{r['match_p50'] / 1e6:>7.3f}/{r['match_p99'] / 1e6:<7.3f}  "
            f"{r['peak_first'] / 1e6:>11.1f}  "
            f"{r['peak_p50'] / 1e6:>6.3f}/{r['peak_p99'] / 1e6:<7.3f}"
            f"  {r['outline_first'] / 1e6:>9.1f}/{r['outline_p50'] / 1e6:<7.3f}  "
            f"{r['tok_median']:>5,.0f}/{r['tok_max']:<5,}  {r['ratio_median']:>13.1f}x  "
            f"{r['small_per_s']:>9,.0f}  {r['batch_nodes_per_s']:>13,.0f}"
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes",
        default=",".join(str(x) for x in DEFAULT_SIZES),
        help="comma-separated session sizes in nodes",
    )
    ap.add_argument("--quick", action="store_true", help="1k and 10k only")
    ap.add_argument(
        "--repeat",
        type=int,
        default=300,
        help="timed repetitions of each sample query (default 300)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--via",
        choices=("auto", "commit", "store"),
        default="auto",
        help="how to build: auto = through Commit unless projected over "
        "--commit-budget seconds, then through the store",
    )
    ap.add_argument("--commit-budget", type=float, default=COMMIT_BUDGET_S)
    ap.add_argument(
        "--selftest",
        action="store_true",
        help="check the chunked token count of the 2-hop figure and exit",
    )
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--note", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.selftest:
        selftest()
        return
    if args.child is not None:
        res = run_size(args.child, seed=args.seed, repeat=args.repeat, via=args.via, note=args.note)
        print("RESULT " + json.dumps(res), flush=True)
        return

    sizes = QUICK_SIZES if args.quick else tuple(int(x) for x in args.sizes.split(",") if x)
    print(
        f"# recall_scale: sizes {', '.join(f'{n:,}' for n in sizes)}; repeat {args.repeat}; "
        f"seed {args.seed}; via {args.via}"
    )
    try:
        head = subprocess.run(
            ["git", "-C", os.path.dirname(HERE), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", os.path.dirname(HERE), "status", "--short", "--", "memnet"],
            capture_output=True,
            text=True,
        ).stdout.split()
        dirty = [x for x in dirty if x.startswith("memnet")]
    except OSError:  # pragma: no cover
        head, dirty = "?", []
    import memnet

    where = os.path.dirname(os.path.dirname(os.path.abspath(memnet.__file__)))
    if where == os.path.dirname(HERE):
        print(
            f"# engine: memnet {memnet.__version__} from this checkout, git {head}"
            + (f" + uncommitted changes in {', '.join(dirty)}" if dirty else " (clean)")
        )
    else:
        print(
            f"# engine: memnet {memnet.__version__} from {where} (PYTHONPATH), not this "
            f"checkout (git {head})"
        )
    print(
        f"# python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cpus; load average {loadavg()}; each size in a fresh subprocess"
    )
    print()
    t0 = time.perf_counter()
    results = []
    rate: float | None = None
    for n in sorted(sizes):
        via, note, _ = choose_via(n, args, rate)
        res = run_child(child_cmd(n, args, via, note))
        if res is None:
            continue
        results.append(res)
        if res["via"] == "commit" and res["n"] >= 10_000:
            rate = min(res["nodes"] / res["build_s"], res.get("late_rate") or float("inf"))
    summary(results)
    print()
    print(f"# total wall time {time.perf_counter() - t0:.0f} s; load average {loadavg()}")


if __name__ == "__main__":
    main()
