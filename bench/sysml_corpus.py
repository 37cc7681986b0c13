"""How much of a corpus of real SysML v2 models the SysML reader ingests, and how fast.

    python bench/sysml_corpus.py ../shared/sysml-corpus
    python bench/sysml_corpus.py ../shared/sysml-corpus --warnings 40 --repeat 5

Prints:

* **share**: files that ingest without an error (each file read and turned into
  artefacts on its own), and each failure with its line;
* **time**: the whole corpus parsed (text → documents) and turned into
  artefacts, best of ``--repeat`` runs, against a baseline measured in the same
  run (a regular-expression pass that only counts the tokens of every file);
  the first parse, which includes importing the reader, is shown apart;
* **warnings by construct**: each directory read as one model (as ``memnet
  ingest`` reads it), its warnings grouped by what they are about;
* **requirements**: for every directory named ``... Requirements``, the
  requirement usages without a ``SATISFIES`` link.

``PYTHONPATH`` picks the engine: run it on an export of an older commit
(``git archive <commit> memnet | tar -x -C /tmp/old``; ``PYTHONPATH=/tmp/old``)
for the figures before a change. The script prints figures; it never asserts.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from pathlib import Path

_TOKENS = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|//\*[\s\S]*?\*/|//[^\n]*"
                     r"|/\*[\s\S]*?\*/|\w+|[^\s\w]")
_CONSTRUCT = re.compile(r"unsupported construct '([^']+)'")


def construct(message: str) -> str:
    """What a warning is about, as a short key."""
    m = _CONSTRUCT.search(message)
    if m:
        tail = " with members" if "with members" in message else ""
        return f"skipped: {m.group(1)}{tail}"
    for key in ("unresolved import", "unresolved type", "unresolved supertype",
                "unresolved subsetted feature", "unresolved redefined feature",
                "unresolved referenced feature", "unresolved requirement",
                "unresolved satisfier", "unresolved connection end", "unresolved end of",
                "unresolved target of", "duplicate qualified name", "anonymous",
                "short id", "a second transition", "a succession", "names itself",
                "satisfy names"):
        if key in message:
            if key in ("unresolved end of", "unresolved target of", "anonymous"):
                words = message.split()
                at = words.index("of") + 1 if key != "anonymous" else 1
                return f"{key} {words[at]}".strip()
            return key
    return message[:60]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="a directory of .sysml files (searched deeply)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (best is shown)")
    ap.add_argument("--warnings", type=int, default=60, help="warning kinds shown")
    args = ap.parse_args()

    files = sorted(p for p in args.corpus.rglob("*.sysml") if p.is_file())
    texts = {p: p.read_text(encoding="utf-8-sig") for p in files}
    rels = {p: p.relative_to(args.corpus).as_posix() for p in files}

    start = time.perf_counter()
    from memnet.errors import MemNetError
    from memnet.ingest import sysml

    imported = time.perf_counter() - start
    start = time.perf_counter()
    docs: dict[Path, object] = {}
    failures: list[str] = []
    for p in files:
        try:
            docs[p] = sysml.parse_sysml(texts[p], p.name)
            sysml.to_artefacts([(p.name, docs[p])], p.name)
        except MemNetError as e:
            docs.pop(p, None)
            failures.append(f"  {rels[p]}: {e.message}")
    first = time.perf_counter() - start
    ok = len(files) - len(failures)
    print(f"engine: {sysml.__file__}")
    print(f"share: {ok}/{len(files)} files ingest without an error "
          f"({100 * ok / max(len(files), 1):.1f}%)")
    for line in failures:
        print(line)

    def parse_all() -> None:
        for p in docs:
            sysml.parse_sysml(texts[p], p.name)

    def model_all() -> None:
        for p in docs:
            sysml.to_artefacts([(p.name, docs[p])], p.name)

    def baseline() -> None:
        for p in files:
            _TOKENS.findall(texts[p])

    def best(fn: object) -> float:
        times = []
        for _ in range(max(args.repeat, 1)):
            t = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - t)
        return min(times)

    chars = sum(len(texts[p]) for p in files)
    tokens = sum(len(_TOKENS.findall(texts[p])) for p in files)
    base, parse, model = best(baseline), best(parse_all), best(model_all)
    print(f"corpus: {len(files)} files, {chars} characters, about {tokens} tokens")
    print(f"time: parse {parse:.3f} s + artefacts {model:.3f} s = {parse + model:.3f} s "
          f"(best of {args.repeat}); token-count baseline {base:.3f} s "
          f"(x{(parse + model) / base:.1f}); first pass {first:.3f} s (after importing "
          f"memnet in {imported:.3f} s); {tokens / parse / 1e3:.0f}k tokens/s")

    by_dir: dict[Path, list[Path]] = {}
    for p in docs:
        by_dir.setdefault(p.parent, []).append(p)
    kinds: Counter[str] = Counter()
    total = 0
    unsatisfied: list[str] = []
    for d, ps in sorted(by_dir.items()):
        art = sysml.to_artefacts([(p.name, docs[p]) for p in ps], d.name)
        total += len(art.warnings)
        kinds.update(construct(w.message) for w in art.warnings)
        if d.name.endswith("Requirements"):
            satisfied = {lk.dst for lk in art.links.values() if lk.type == "SATISFIES"}
            reqs = sorted(loc for loc, el in art.elements.items() if el.kind == "REQ")
            lacking = [loc.partition("/")[2] for loc in reqs if loc not in satisfied]
            unsatisfied.append(f"  {d.relative_to(args.corpus)}: {len(reqs) - len(lacking)}"
                               f"/{len(reqs)} requirement usages have SATISFIES"
                               + (f"; without: {', '.join(lacking)}" if lacking else ""))
    print(f"warnings: {total} on {len(by_dir)} models (one per directory), by construct:")
    for key, n in kinds.most_common(args.warnings):
        print(f"  {n:5d}  {key}")
    if len(kinds) > args.warnings:
        print(f"  ... and {len(kinds) - args.warnings} more kinds")
    if unsatisfied:
        print("requirements:")
        print("\n".join(unsatisfied))


if __name__ == "__main__":
    main()
