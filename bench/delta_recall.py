"""Delta recall in an agent loop: what does reading the same Shape again cost?

An agent works on one question at a time: it recalls a Shape, commits one small
change, reads the Shape again, commits again, and so on. With ``since=ETAG``
each re-read answers only what changed. This bench builds a synthetic session
(``bench/synth.py``: tasks, laws, modules, symbols, decisions, requirements,
docs) in an LMDB cabinet and runs that loop over the session's sample queries:
for each query a full read, then ``--steps`` rounds of one small Commit (a
property set on a row of the Shape, a new task or decision linked to one, a
task's status moved, or a change elsewhere in the session) followed by a read
with ``since`` and, for comparison, the full Shape at the same version.

It prints
  * tokens: the full Shape (median), delta reads (median, and the ratio to the
    full Shape), unchanged reads (max), whole-Shape answers and why;
  * latency: delta recall against a full recall at the same version, the two
    interleaved ``--repeat`` times after every commit, in turns (wall and CPU p50);
  * a fresh process: every 10th round the cabinet is opened afresh, the session
    hydrated and read with ``since`` (the old Shape rebuilt from the log), timed
    against a full recall in a fresh hydrate, and checked to give the same bytes
    as the session that served the old Shape;
  * an example transcript: a full read, an unchanged re-read, one change.

Targets (issue 15): median delta read <= 15 % of the full Shape's tokens,
unchanged reads <= 40 tokens, delta recall p50 <= 1.5x a full recall's.

Run (under nice, the machine is shared)::

    nice python bench/delta_recall.py                     # 2,000 nodes, 8 queries x 25 rounds
    nice python bench/delta_recall.py --nodes 10000 --steps 40 --repeat 40
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [p for p in (HERE, os.path.dirname(HERE)) if p not in sys.path]

import synth  # noqa: E402

import memnet  # noqa: E402

TARGET_DELTA_SHARE = 0.15
TARGET_UNCHANGED = 40
TARGET_LATENCY = 1.5
KINDS = ("set", "task", "decision", "status", "elsewhere")
WEIGHTS = (30, 20, 15, 15, 20)


def small_commit(s: memnet.Session, shape: memnet.Shape, rng: random.Random, kind: str) -> str:
    """One small Δ an agent might write after reading ``shape``."""
    nodes = [p for p in shape.nodes if p.labels[0] != "LAW"] or list(shape.nodes)
    words = " ".join(synth.VOCAB[rng.randrange(200)] for _ in range(rng.randint(3, 6)))
    if kind == "elsewhere" or not nodes:
        h = memnet.session.node_handle(synth._live_pick(s.store, rng))
        return f"SET {h}.note = '{words}'"
    h = rng.choice(nodes).var
    if kind == "set":
        return f"SET {h}.note = '{words}'"
    if kind == "task":
        return (
            f"INSERT (t:TSK {{title: '{words.capitalize()}', status: 'open', "
            f"prio: {rng.randint(1, 4)}}})-[:TOUCHES]->({h})"
        )
    if kind == "decision":
        return f"INSERT (d:DEC {{title: '{words.capitalize()}'}})-[:GOVERNS]->({h})"
    tasks = [
        p.var for p in nodes if p.labels[0] == "TSK" and dict(p.props).get("settled") is not True
    ]
    if not tasks:
        return f"SET {h}.note = '{words}'"
    return f"SET {rng.choice(tasks)}.status = '{rng.choice(('review', 'blocked', 'done'))}'"


def timed(fns: dict[str, Any], repeat: int, out: dict[str, list[tuple[int, int]]]) -> None:
    """Call each function ``repeat`` times, interleaved, the order turned round
    every time (the second of two calls runs on warmer caches); keep (wall,
    cpu) ns."""
    items = list(fns.items())
    for i in range(repeat):
        for name, fn in items if i % 2 else items[::-1]:
            w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            fn()
            out[name].append((time.perf_counter_ns() - w0, time.thread_time_ns() - c0))


def p50(xs: list[tuple[int, int]], i: int) -> float:
    return statistics.median(x[i] for x in xs) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=2_000, help="session size (default 2000)")
    ap.add_argument("--steps", type=int, default=25, help="rounds per query (default 25)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=30,
        help="timed delta/full pairs after each commit (default 30)",
    )
    ap.add_argument("--seed", type=int, default=1, help="random seed of the loop")
    args = ap.parse_args()

    home = tempfile.mkdtemp(prefix="memnet-delta-")
    cab = memnet.Cabinet.open(home)
    t0 = time.perf_counter()
    s, meta = synth.build(args.nodes, session=cab.create("agent", caps=synth.BIG_CAPS))
    cab.flush(s)
    print(
        f"# engine {os.path.dirname(memnet.__file__)}; session of {s.store.live_nodes} nodes, "
        f"{s.store.live_edges} edges, kinds {dict(meta['kinds'])}, built and flushed in "
        f"{time.perf_counter() - t0:.1f} s"
    )
    rng = random.Random(args.seed)
    full_tokens: list[int] = []
    reads: dict[str, list[int]] = defaultdict(list)  # answer -> tokens
    by_kind: dict[str, list[float]] = defaultdict(list)  # commit kind -> delta/full share
    whys: Counter[str] = Counter()
    times: dict[str, list[tuple[int, int]]] = defaultdict(list)
    cold: dict[str, list[float]] = defaultdict(list)
    same_bytes = [0, 0]
    transcript: list[str] = []
    # the transcript follows the query with the shortest Shape, to keep it readable
    shown = min(meta["match"], key=lambda lq: s.recall(lq[1]).receipt.tokens)[1]
    for _label, q in meta["match"]:
        held = s.recall(q)
        full_tokens.append(held.receipt.tokens)
        if q == shown:
            transcript += [
                f"$ memnet recall agent {q!r}",
                held.text,
                f"$ memnet recall agent {q!r} --since {held.receipt.etag}",
                s.recall(q, since=held.receipt.etag).text,
            ]
        for step in range(args.steps):
            kind = rng.choices(KINDS, WEIGHTS)[0]
            delta = small_commit(s, held, rng, kind)
            s.commit(delta)
            cab.flush(s)
            d = s.recall(q, since=held.receipt.etag)
            new = s.recall(q)
            full_tokens.append(new.receipt.tokens)
            reads[d.receipt.answer].append(d.receipt.tokens)
            if d.receipt.answer == "shape":
                whys[d.receipt.why] += 1
            else:
                by_kind[kind].append(d.receipt.tokens / new.receipt.tokens)
            if q == shown and d.receipt.answer == "delta" and len(transcript) == 4:
                transcript += [
                    f"$ echo {delta!r} | memnet commit agent",
                    f"$ memnet recall agent {q!r} --since {held.receipt.etag}",
                    d.text,
                ]
            timed(
                {
                    "delta": lambda q=q, held=held: s.recall(q, since=held.receipt.etag),
                    "full": lambda q=q: s.recall(q),
                },
                args.repeat,
                times,
            )
            if step % 10 == 0:
                t0 = time.perf_counter()
                fresh = memnet.Cabinet.open(home).open("agent")
                t1 = time.perf_counter()
                got = fresh.recall(q, since=held.receipt.etag)
                t2 = time.perf_counter()
                other = memnet.Cabinet.open(home).open("agent")
                t3 = time.perf_counter()
                other.recall(q)
                t4 = time.perf_counter()
                cold["hydrate"].append(t1 - t0)
                cold["delta"].append(t2 - t1)
                cold["full"].append(t4 - t3)
                same_bytes[got.text == d.text] += 1
            held = new
    cab.close()

    full_p50 = statistics.median(full_tokens)
    print(
        f"# loop: {len(meta['match'])} queries x {args.steps} rounds, one small commit "
        f"before each read ({', '.join(f'{k} {w}%' for k, w in zip(KINDS, WEIGHTS, strict=True))})"
    )
    print(
        f"tokens  full Shape      p50 {full_p50:7.0f}   min {min(full_tokens)}   "
        f"max {max(full_tokens)}   ({len(full_tokens)} reads)"
    )
    dl = reads.get("delta", [])
    if dl:
        print(
            f"tokens  delta read      p50 {statistics.median(dl):7.0f}   "
            f"= {statistics.median(dl) / full_p50:.1%} of the full Shape's p50   "
            f"p90 {sorted(dl)[int(0.9 * (len(dl) - 1))]}   ({len(dl)} reads)"
        )
    un = reads.get("unchanged", [])
    if un:
        print(
            f"tokens  unchanged read  max {max(un):7d}   p50 {statistics.median(un):.0f}   "
            f"({len(un)} reads)"
        )
    wh = reads.get("shape", [])
    print(
        f"tokens  whole Shape     {len(wh)} reads"
        + "".join(f"\n        why: {w} ({c})" for w, c in whys.most_common())
    )
    every = sum(t for ts in reads.values() for t in ts)
    again = sum(full_tokens[len(meta["match"]) :])  # the full Shapes at the re-reads
    print(
        f"tokens  all re-reads    {every} in all against {again} for full re-reads "
        f"({every / again:.1%})"
    )
    for k in KINDS:
        if by_kind[k]:
            print(
                f"        after a '{k}' commit: answer p50 {statistics.median(by_kind[k]):.1%} "
                f"of that full Shape ({len(by_kind[k])})"
            )
    dw, fw = p50(times["delta"], 0), p50(times["full"], 0)
    dc, fc = p50(times["delta"], 1), p50(times["full"], 1)
    print(f"latency delta recall    p50 {dw:.3f} ms wall, {dc:.3f} ms CPU")
    print(f"latency full recall     p50 {fw:.3f} ms wall, {fc:.3f} ms CPU")
    print(
        f"latency ratio           {dw / fw:.2f}x wall, {dc / fc:.2f}x CPU "
        f"({len(times['delta'])} interleaved pairs)"
    )
    if cold["delta"]:
        print(
            f"fresh   hydrate p50 {statistics.median(cold['hydrate']) * 1e3:.1f} ms; then "
            f"recall --since p50 {statistics.median(cold['delta']) * 1e3:.1f} ms (old Shape "
            f"rebuilt from the log), a full recall p50 "
            f"{statistics.median(cold['full']) * 1e3:.1f} ms; same bytes as the warm "
            f"session {same_bytes[1]}/{sum(same_bytes)}"
        )
    share = statistics.median(dl) / full_p50 if dl else 0.0
    print(
        "targets "
        + "; ".join(
            [
                f"delta p50 {share:.1%} <= {TARGET_DELTA_SHARE:.0%}: "
                f"{'met' if share <= TARGET_DELTA_SHARE else 'MISSED'}",
                f"unchanged max {max(un, default=0)} <= {TARGET_UNCHANGED}: "
                f"{'met' if max(un, default=0) <= TARGET_UNCHANGED else 'MISSED'}",
                f"latency {dw / fw:.2f}x <= {TARGET_LATENCY}x: "
                f"{'met' if dw / fw <= TARGET_LATENCY else 'MISSED'}",
            ]
        )
    )
    print("\n# example transcript (full read, unchanged re-read, one change)\n")
    print("\n".join(transcript))


if __name__ == "__main__":
    main()
