"""Evidence per token on LoCoMo: does a Shape carry more of what was asked than BM25?

LoCoMo (Maharana et al., ACL 2024) holds long two-person conversations and
questions whose evidence turns are annotated. Each conversation is loaded into
one session:

* a ``TURN`` node per turn (``id`` such as ``D1:3``, ``speaker``, ``text``, and
  ``image`` with the caption of a shared picture, when there is one);
* a ``SESSION`` node per chat session (``name``, ``date``);
* ``(turn)-[:IN]->(session)`` and ``(turn)-[:NEXT]->(next turn)``.

For every question (category 5 left out: its answer is absent by design) the
bench recalls ``q`` and checks whether every evidence turn is in the Shape.
The baseline is a plain BM25 list (Snowball stems, k1 = 1.2, b = 0.75) of the
same conversation's turns, printed one a line as ``D1:3 Caroline: text``
(``[image: caption]`` appended), filled in score order up to the Shape's own
exact token count. Two forms of ``q``:

* ``content``: the question's words, lower-cased, with stop words dropped;
* ``question``: the whole question, lower-cased, as an LLM writes it.

Each form runs with the defaults and with ``max_tokens`` 1,000 and 2,000 (the
BM25 list always gets what the Shape spent). Prints, per form and budget, the
share of questions with all their evidence in the Shape against BM25 at the
same tokens, by category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop),
the Shape's tokens, and Recall latency. Then a code-graph case where the walk's
choice matters (see ``code_case``). The bench prints; it never asserts.

Run::

    PYTHONPATH=. python bench/locomo.py                     # the dev split
    PYTHONPATH=. python bench/locomo.py --data other.json   # any file of the same form
    PYTHONPATH=. python bench/locomo.py --budgets 0,1000    # 0: the defaults
    PYTHONPATH=/tmp/old python bench/locomo.py --tag before # another engine

The data is evaluation data under its own licence: it is read from where it
lies and never copied into the project.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/eval-data/locomo-dev/locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

# The bench's own stop list (function words of English questions), kept apart
# from anything MemNet does with frequent words.
STOP = frozenset(
    """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
""".split()
)

WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    return [w.split("'")[0] for w in WORD.findall(text.lower())]


def q_forms(question: str) -> dict[str, str]:
    ws = words(question)
    content = [w for w in ws if w not in STOP] or ws
    return {"content": " ".join(content), "question": " ".join(ws)}


def turns_of(conv: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """``(session key, date, turns)`` in session order."""
    out = []
    n = 1
    while f"session_{n}" in conv:
        out.append((f"session_{n}", conv.get(f"session_{n}_date_time", ""), conv[f"session_{n}"]))
        n += 1
    return out


def load(memnet: Any, name: str, conv: dict[str, Any]) -> Any:
    s = memnet.Session(name)
    b = memnet.Bulk()
    prev = None
    for key, date, turns in turns_of(conv):
        sv = b.node("SESSION", {"name": key, "date": date})
        for t in turns:
            props = {"id": t["dia_id"], "speaker": t["speaker"], "text": t["text"]}
            if t.get("blip_caption"):
                props["image"] = t["blip_caption"]
            tv = b.node("TURN", props)
            b.edge(tv, "IN", sv)
            if prev is not None:
                b.edge(prev, "NEXT", tv)
            prev = tv
    s.commit_bulk(b)
    return s


class BM25:
    def __init__(self, docs: list[tuple[str, str]], stem: Any) -> None:
        self.ids = [d for d, _ in docs]
        self.stem = stem
        self.tf = [Counter(self.terms(text)) for _, text in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = sum(self.len) / len(self.len)
        df: Counter[str] = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def terms(self, text: str) -> list[str]:
        return self.stem.stemWords(words(text))

    def rank(self, q: str, k1: float = 1.2, b: float = 0.75) -> list[int]:
        qt = set(self.terms(q))
        scores = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            for t in qt:
                f = tf.get(t)
                if f:
                    s += (
                        self.idf[t] * f * (k1 + 1) / (f + k1 * (1 - b + b * self.len[i] / self.avg))
                    )
            scores.append((-s, i))
        scores.sort()
        return [i for _s, i in scores]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def run_locomo(
    memnet: Any, data: list[dict[str, Any]], budgets: list[int], forms: list[str]
) -> None:
    import Stemmer

    from memnet.tokens import count_tokens

    stem = Stemmer.Stemmer("english")
    convs = []
    for conv in data:
        c = conv["conversation"]
        t0 = time.perf_counter()
        s = load(memnet, re.sub(r"[^a-z0-9-]", "-", conv.get("sample_id", "c").lower()), c)
        build = time.perf_counter() - t0
        lines, docs = [], []
        for _key, _date, turns in turns_of(c):
            for t in turns:
                line = f"{t['dia_id']} {t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    line += f" [image: {t['blip_caption']}]"
                lines.append((t["dia_id"], line + "\n"))
                docs.append((t["dia_id"], line))
        costs = [count_tokens(line) for _d, line in lines]
        bm = BM25(docs, stem)
        qa = [q for q in conv["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
        # a handle -> turn id map, read once from the session
        g = s.to_networkx()
        turn_of = {h: a["props"]["id"] for h, a in g.nodes(data=True) if a["kind"] == "TURN"}
        convs.append((s, lines, costs, bm, qa, turn_of))
        print(
            f"# {conv.get('sample_id')}: {len(lines)} turns, {len(qa)} questions, "
            f"loaded in {build:.2f} s"
        )
    s0 = convs[0][0]
    s0.recall("warm up")
    supported = "max_tokens" in memnet.Session.recall.__code__.co_varnames
    for budget in budgets:
        if budget and not supported:
            print(f"\n## max_tokens={budget}: this engine has no max_tokens; skipped")
            continue
        for form in forms:
            rows: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
            toks: list[int] = []
            lat: list[float] = []
            receipt_tok: list[int] = []
            for s, lines, costs, bm, qa, turn_of in convs:
                for item in qa:
                    q = q_forms(item["question"])[form]
                    ev = {e.strip() for x in item["evidence"] for e in x.split(";") if e.strip()}
                    kw: dict[str, Any] = {"max_tokens": budget} if budget else {}
                    t0 = time.perf_counter_ns()
                    sh = s.recall(q, **kw)
                    lat.append((time.perf_counter_ns() - t0) / 1e6)
                    got = {turn_of[n.var] for n in sh.nodes if n.var in turn_of}
                    in_shape = ev <= got
                    tokens = sh.receipt.tokens
                    toks.append(tokens)
                    first = sh.text.split("\n", 1)[0]
                    receipt_tok.append(count_tokens(first + "\n"))
                    have, used = set(), 0
                    for i in bm.rank(q):
                        if used + costs[i] > tokens:
                            break
                        used += costs[i]
                        have.add(lines[i][0])
                    row = (in_shape, ev <= have)
                    rows["all"].append(row)
                    rows[CATEGORIES[item["category"]]].append(row)
            label = f"max_tokens={budget}" if budget else "defaults"
            print(
                f"\n## q={form}, {label}: {len(rows['all'])} questions, tokens median "
                f"{statistics.median(toks):,.0f} (max {max(toks):,}), receipt line median "
                f"{statistics.median(receipt_tok):.0f}, latency p50 {pct(lat, 50):.2f} ms "
                f"p99 {pct(lat, 99):.2f} ms"
            )
            print(f"{'category':<12} {'n':>4} {'Shape':>8} {'BM25':>8} {'diff':>7}")
            for cat in ["all", *CATEGORIES.values()]:
                r = rows.get(cat, [])
                if not r:
                    continue
                a = 100 * sum(x for x, _ in r) / len(r)
                b = 100 * sum(y for _, y in r) / len(r)
                print(f"{cat:<12} {len(r):>4} {a:>7.1f}% {b:>7.1f}% {a - b:>+6.1f}")


def code_case(memnet: Any, package: str, sample: int, budgets: list[int]) -> None:
    """A module with more top-level symbols than the fan-out clamp F, asked for
    by its path and one symbol's docstring words: is that symbol in the Shape?

    For a sample of such (module, symbol) pairs in an installed package, q is
    ``MOD`` plus the module's file stem plus the first content words of the
    symbol's docstring; the hit is the symbol's node among the Shape's nodes.
    With the walk in stored order only the first F symbols (by their printed
    text) can come back, whatever q asks.
    """
    import importlib
    import random

    from memnet.ingest import ingest

    root = Path(importlib.import_module(package).__file__).parent  # type: ignore[arg-type]
    s = memnet.Session("code", caps=memnet.Caps(rows=5_000_000, bytes=1 << 33))
    ingest(s, root)
    g = s.to_networkx()
    fanout = memnet.Session.recall.__kwdefaults__["fanout"]
    cases = []
    for h, a in g.nodes(data=True):
        if a["kind"] != "MOD" or not str(a["props"].get("path", "")).endswith(".py"):
            continue
        syms = [
            v
            for _u, v, d in g.out_edges(h, data=True)
            if d["type"] == "CONTAINS" and g.nodes[v]["kind"] == "SYM"
        ]
        if len(syms) <= fanout:
            continue
        stem_name = Path(a["props"]["path"]).stem
        for v in syms:
            doc = g.nodes[v]["props"].get("doc") or g.nodes[v]["props"].get("text") or ""
            ws = [w for w in words(str(doc)) if w not in STOP and not w.isdigit()][:4]
            if len(ws) >= 3:
                cases.append((h, v, f"MOD {stem_name} " + " ".join(ws)))
    rng = random.Random(7)
    cases = sorted(cases)
    picked = rng.sample(cases, min(sample, len(cases)))
    supported = "max_tokens" in memnet.Session.recall.__code__.co_varnames
    print(
        f"\n## code graph ({package}): {len(picked)} of {len(cases)} (module, symbol) pairs "
        f"in modules with more than F={fanout} symbols"
    )
    for budget in budgets:
        if budget and not supported:
            continue
        kw: dict[str, Any] = {"max_tokens": budget} if budget else {}
        hit, seeded, toks = 0, 0, []
        for mod, sym, q in picked:
            sh = s.recall(q, **kw)
            got = {n.var for n in sh.nodes}
            hit += sym in got
            seeded += mod in sh.receipt.seeds
            toks.append(sh.receipt.tokens)
        label = f"max_tokens={budget}" if budget else "defaults"
        print(
            f"{label:<16} symbol in Shape {hit}/{len(picked)} = {100 * hit / len(picked):.1f} %"
            f"  module seeded {seeded}/{len(picked)}  tokens median "
            f"{statistics.median(toks):,.0f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="a LoCoMo JSON file (default: the dev split)",
    )
    ap.add_argument(
        "--budgets",
        default="0,1000,2000",
        help="max_tokens values, comma-separated; 0 means the defaults",
    )
    ap.add_argument("--forms", default="content,question")
    ap.add_argument("--package", default="networkx", help="package for the code-graph case")
    ap.add_argument("--code-sample", type=int, default=200)
    ap.add_argument("--no-code", action="store_true", help="skip the code-graph case")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()

    import memnet

    print(f"# engine {os.path.dirname(memnet.__file__)}  tag {args.tag}  data {args.data}")
    budgets = [int(b) for b in args.budgets.split(",")]
    data = json.loads(args.data.read_text())
    run_locomo(memnet, data, budgets, args.forms.split(","))
    if not args.no_code:
        code_case(memnet, args.package, args.code_sample, budgets)


if __name__ == "__main__":
    sys.exit(main())
