"""Index terms of WordNet's nodes: what the write path pays in ``text_terms``.

Builds the props of WordNet 3.1's 117,791 ``SYNSET`` and 147,478 ``WORD``
nodes as ``bench/wordnet.py`` builds them (no session), then computes
``Index.terms`` of every node, ``--rounds`` times, with the memo tables of
``memnet.graph.words`` emptied before each round (a bulk load meets most
words for the first time). Prints the best and median CPU time. The engine is
the one ``PYTHONPATH`` picks; run it twice to compare::

    PYTHONPATH=. python bench/text_terms.py
    PYTHONPATH=/tmp/old python bench/text_terms.py

The benchmark prints; it never asserts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import wordnet  # noqa: E402  (bench/wordnet.py, beside this file)


def _clear_memos(module: Any) -> None:
    for name, obj in vars(module).items():
        if hasattr(obj, "cache_clear"):
            obj.cache_clear()
        elif isinstance(obj, dict) and name.startswith("_") and not name.startswith("__"):
            if name != "_SPANNED":  # a fixed table filled on the query side
                obj.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from memnet.graph import words
    from memnet.graph.index import Index

    synsets, _pointers = wordnet.read_wordnet(wordnet.fetch())
    nodes: list[tuple[str, dict[str, Any]]] = [
        ("SYNSET", {k: tuple(v) if isinstance(v, list) else v for k, v in s.items()})
        for s in synsets
    ]
    lemmas = sorted({lemma for s in synsets for lemma in s["lemmas"]})
    nodes += [("WORD", {"lemma": lemma}) for lemma in lemmas]
    print(f"# engine {Path(words.__file__).parent.parent}; {len(nodes):,} nodes")
    times: list[float] = []
    for _ in range(args.rounds):
        _clear_memos(words)
        t0 = time.process_time()
        for kind, props in nodes:
            Index.terms(kind, (kind,), props)
        times.append(time.process_time() - t0)
    print(f"Index.terms: best {min(times):.2f} s CPU, median {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
