"""Recall quality on a code graph: do identifier queries seed the symbol?

Ingests an installed package's source tree (default: networkx) into one
in-memory session with ``memnet.ingest`` (modules, top-level symbols,
imports, markdown), then asks, for a random sample of its multi-word
symbols (``betweenness_centrality``, ``is_directed_acyclic_graph``,
``GraphMatcher``):

* the identifier phrase, as a person says it: the parts separated by spaces
  (``betweenness centrality``);
* the exact identifier (``betweenness_centrality``).

A query hits when one of its seeds is a SYM of that name. Prints the share of
hits for each form, the misses, and latency. The benchmark prints; it never
asserts.

Run::

    PYTHONPATH=. python bench/code_quality.py                       # networkx
    PYTHONPATH=. python bench/code_quality.py --package lark --sample 200
    PYTHONPATH=/tmp/old python bench/code_quality.py --tag before   # another engine
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import sys
import time
from pathlib import Path


def split_identifier(name: str) -> list[str]:
    """The words of an identifier as a person says them (the bench's own split,
    independent of MemNet's)."""
    out: list[str] = []
    for piece in re.split(r"[_\W]+", name):
        out += [
            w.lower() for w in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", piece)
        ]
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default="networkx", help="an importable package to ingest")
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()

    import memnet
    from memnet.ingest import ingest

    pkg = importlib.import_module(args.package)
    root = Path(pkg.__file__).parent  # type: ignore[arg-type]
    print(f"# engine {os.path.dirname(memnet.__file__)}  tag {args.tag}  package {root}")
    s = memnet.Session("code", caps=memnet.Caps(rows=5_000_000, bytes=1 << 33))
    t = time.perf_counter()
    ingest(s, root)
    st = s.stats()
    print(
        f"# ingested {st['nodes']:,} nodes, {st['edges']:,} edges in "
        f"{time.perf_counter() - t:.1f} s"
    )
    g = s.to_networkx()
    names = sorted(
        {
            a["props"]["name"]
            for _h, a in g.nodes(data=True)
            if a["kind"] == "SYM" and len(split_identifier(a["props"]["name"])) >= 2
        }
    )
    rng = random.Random(args.seed)
    sample = rng.sample(names, min(args.sample, len(names)))
    kind_name = {h: (a["kind"], a["props"].get("name")) for h, a in g.nodes(data=True)}
    s.recall("zzzzqqq")  # warm the engine (imports, tokenizer, grammar)
    results: dict[str, list[bool]] = {"phrase": [], "exact": []}
    misses: dict[str, list[str]] = {"phrase": [], "exact": []}
    times: list[float] = []
    for name in sample:
        for form, q in (("phrase", " ".join(split_identifier(name))), ("exact", name)):
            t0 = time.perf_counter_ns()
            sh = s.recall(q)
            times.append((time.perf_counter_ns() - t0) / 1e6)
            ok = any(kind_name.get(h) == ("SYM", name) for h in sh.receipt.seeds)
            results[form].append(ok)
            if not ok:
                misses[form].append(f"{q!r}")
    print()
    print(
        f"symbols sampled     {len(sample)} multi-word SYM names of {len(names)} (seed {args.seed})"
    )
    for form, label in (("phrase", "identifier phrase"), ("exact", "exact identifier")):
        r = results[form]
        print(f"{label:<19} {sum(r)}/{len(r)} = {100 * sum(r) / len(r):.1f} % seed the symbol")
        if misses[form]:
            print(f"  missed            {', '.join(misses[form][:12])}")
    print(f"latency (first)     p50 {pct(times, 50):.3f} ms  p99 {pct(times, 99):.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
