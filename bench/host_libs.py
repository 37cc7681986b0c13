"""Which BM25 library for the host index? The candidates on the same documents.

    python bench/host_libs.py                     # 10,000 files of site-packages
    python bench/host_libs.py --kinds py          # 10,000 Python modules
    python bench/host_libs.py --files 3000 --libs tantivy,fts5

The documents are the ones the host index makes (``memnet.host.units``) from the
first ``--files`` files of the tree; every library indexes them with the same
fields (title, name, body, path, weighted 1/1/1/0.3 where the library can weight
fields) and answers the same queries: the first line of the docstring of a random
sample of functions (known-item search, the function must come in the top 5).
Libraries that are not installed are reported as such: ``tantivy`` (the extra
``memnet[host]``), ``fts5`` (SQLite's full-text search, in the standard library),
``bm25s`` and ``rank_bm25`` (``pip install bm25s rank-bm25``).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host import default_tree, known_items, materialise, pct  # noqa: E402

from memnet.host.units import READERS  # noqa: E402

WORD = re.compile(r"[^\W_]+")
BOOSTS = {"title": 1.0, "name": 1.0, "body": 1.0, "path": 0.3}


def words(q: str) -> list[str]:
    return [w.lower() for w in WORD.findall(q)][:64]


def with_tantivy(docs, scratch):
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("locator", stored=True, tokenizer_name="raw")
    for f in BOOSTS:
        sb.add_text_field(f)
    (scratch / "tantivy").mkdir()
    ix = tantivy.Index(sb.build(), os.fspath(scratch / "tantivy"))
    w = ix.writer(heap_size=64_000_000, num_threads=1)
    for d in docs:
        w.add_document(
            tantivy.Document(
                locator=d.locator, title=d.title, name=d.name, body=d.body, path=d.path
            )
        )
    w.commit()
    w.wait_merging_threads()
    ix.reload()
    s = ix.searcher()

    def search(q, n):
        query = ix.parse_query(" ".join(words(q)), list(BOOSTS), field_boosts=BOOSTS)
        return [s.doc(a)["locator"][0] for _, a in s.search(query, n).hits]

    return search


def with_fts5(docs, scratch):
    c = sqlite3.connect(scratch / "fts5.db")
    c.execute(
        "CREATE VIRTUAL TABLE f USING fts5(locator UNINDEXED, title, name, body, path, "
        "tokenize='porter unicode61')"
    )
    c.executemany(
        "INSERT INTO f VALUES (?, ?, ?, ?, ?)",
        ((d.locator, d.title, d.name, d.body, d.path) for d in docs),
    )
    c.commit()

    def search(q, n):
        m = " OR ".join(f'"{w}"' for w in words(q))
        return [
            r[0]
            for r in c.execute(
                "SELECT locator FROM f WHERE f MATCH ? ORDER BY bm25(f, 1.0, 1.0, 1.0, 0.3) "
                "LIMIT ?",
                (m, n),
            )
        ]

    return search


def with_bm25s(docs, scratch):
    import bm25s

    corpus = [f"{d.title} {d.name} {d.body} {d.path}" for d in docs]
    r = bm25s.BM25()
    r.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    locs = [d.locator for d in docs]

    def search(q, n):
        res, _ = r.retrieve(
            bm25s.tokenize([q], stopwords="en", show_progress=False), k=n, show_progress=False
        )
        return [locs[i] for i in res[0]]

    return search


def with_rank_bm25(docs, scratch):
    from rank_bm25 import BM25Okapi

    bm = BM25Okapi([words(f"{d.title} {d.name} {d.body} {d.path}") for d in docs])
    locs = [d.locator for d in docs]
    return lambda q, n: bm.get_top_n(words(q), locs, n=n)


LIBS = {
    "tantivy": with_tantivy,
    "fts5": with_fts5,
    "bm25s": with_bm25s,
    "rank_bm25": with_rank_bm25,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=None)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--kinds", default=None, help="only files of these schemes, e.g. 'py'")
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument(
        "--slow-sample",
        type=int,
        default=40,
        help="queries for rank_bm25, which scores every document (40)",
    )
    args = ap.parse_args()
    os.nice(10)
    scratch = Path(tempfile.mkdtemp(prefix="memnet-host-libs-"))
    try:
        lib = scratch / "lib"
        files = materialise(
            (args.tree or default_tree()).resolve(),
            lib,
            args.files,
            set(args.kinds.split(",")) if args.kinds else None,
        )
        docs = [
            d
            for rel, s in files
            if s in READERS
            for d in READERS[s](lib.name, rel, (lib / rel).read_bytes())[0]
        ]
        items = known_items(lib, files, args.sample, random.Random(16))
        print(
            f"{len(files):,} files, {len(docs):,} documents, {len(items)} known-item "
            f"queries; load {os.getloadavg()[0]:.2f}"
        )
        for name in args.libs.split(","):
            try:
                t0, c0 = time.perf_counter(), time.process_time()
                search = LIBS[name](docs, scratch)
                t_ix, c_ix = time.perf_counter() - t0, time.process_time() - c0
            except ImportError:
                print(f"{name:10} not installed")
                continue
            sample = items[: args.slow_sample] if name == "rank_bm25" else items
            lat, found = [], 0
            for q, loc in sample:
                t0 = time.perf_counter_ns()
                found += loc in search(q, 5)
                lat.append(time.perf_counter_ns() - t0)
            print(
                f"{name:10} index {t_ix:5.1f} s ({c_ix:5.1f} s CPU)  search p50 "
                f"{pct(lat, 0.5) / 1e6:7.2f} ms  p90 {pct(lat, 0.9) / 1e6:7.2f} ms  "
                f"known-item top-5 {found}/{len(sample)} = {found / len(sample):.1%}"
            )
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
