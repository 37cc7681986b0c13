"""How much of a corpus of real SysML v2 models the SysML reader ingests, and how fast.

    python bench/sysml_corpus.py ../shared/sysml-corpus
    python bench/sysml_corpus.py ../shared/sysml-corpus --warnings 40 --repeat 5

Prints:

* **share**: files that ingest without an error (each file read and turned into
  artefacts on its own), and each failure with its line;
* **files**: of the files that read, how many have no statement skipped (no
  warning that drops a statement or a part of one: an unsupported construct, an
  anonymous usage, a statement that does not parse), and how many have no
  warning at all, read three ways: each file alone (as ``memnet ingest SID
  file.sysml``), each directory as one model (as ``memnet ingest SID DIR``)
  and the whole corpus as one model (as ``memnet snap CORPUS``);
* **time**: the whole corpus parsed (text → documents) and turned into
  artefacts, best of ``--repeat`` runs, against a baseline measured in the same
  run (a regular-expression pass that only counts the tokens of every file);
  the first parse, which includes importing the reader, is shown apart;
* **warnings by construct**: the whole corpus read as one model, its warnings
  grouped by what they are about; an unresolved name is split by whether any
  file of the corpus declares that name (``in the corpus``) or none does (a
  name of the standard library, or a typo);
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

_TOKENS = re.compile(
    r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|//\*[\s\S]*?\*/|//[^\n]*"
    r"|/\*[\s\S]*?\*/|\w+|[^\s\w]"
)
_CONSTRUCT = re.compile(r"unsupported construct '([^']+)'")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_NAME = re.compile(r"'(?:[^'\\]|\\.)+'|[A-Za-z_][A-Za-z0-9_]*")
#: warnings that drop a statement, or a part of one
SKIPS = ("unsupported construct", "anonymous", "not read", "skipped")


def construct(message: str) -> str:
    """What a warning is about, as a short key."""
    m = _CONSTRUCT.search(message)
    if m:
        tail = " with members" if "with members" in message else ""
        return f"skipped: {m.group(1)}{tail}"
    if "statement" in message and "skipped" in message:
        return "skipped: a statement that does not parse"
    for key in (
        "unresolved import",
        "unresolved type",
        "unresolved supertype",
        "unresolved subsetted feature",
        "unresolved redefined feature",
        "unresolved referenced feature",
        "unresolved requirement",
        "unresolved satisfier",
        "unresolved connection end",
        "unresolved end of",
        "unresolved target of",
        "unresolved metadata",
        "unresolved exposed",
        "unresolved annotated",
        "unresolved",
        "duplicate qualified name",
        "anonymous",
        "short id",
        "a second transition",
        "a succession",
        "names itself",
        "satisfy names",
    ):
        if key in message:
            if key in ("unresolved end of", "unresolved target of", "anonymous"):
                words = message.split()
                at = words.index("of") + 1 if key != "anonymous" else 1
                return f"{key} {words[at]}".strip()
            return key
    return message[:60]


def skips(message: str) -> bool:
    """Whether a warning drops a statement (or part of one), not just a link."""
    return not message.startswith("unresolved") and any(s in message for s in SKIPS)


def unresolved_name(message: str) -> str | None:
    """The name an ``unresolved ...`` warning is about (its last quoted word)."""
    if not message.startswith("unresolved"):
        return None
    m = _QUOTED.search(message)
    if m is None:
        return None
    ref = m.group(1) if m.group(1) is not None else m.group(2)
    names = [n.strip("'") for n in _NAME.findall(ref)]
    return names[-1] if names else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="a directory of .sysml files (searched deeply)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (best is shown)")
    ap.add_argument("--warnings", type=int, default=60, help="warning kinds shown")
    ap.add_argument(
        "--list", action="store_true", help="also print every warning of the whole-corpus model"
    )
    args = ap.parse_args()

    files = sorted(p for p in args.corpus.rglob("*.sysml") if p.is_file())
    texts = {p: p.read_text(encoding="utf-8-sig") for p in files}
    rels = {p: p.relative_to(args.corpus).as_posix() for p in files}

    start = time.perf_counter()
    from memnet.errors import MemNetError
    from memnet.ingest import sysml

    def parse(p: Path) -> Any:
        try:  # statements that do not parse are skipped with a warning (ingest's way)
            return sysml.parse_sysml(texts[p], rels[p], recover=True)  # type: ignore[call-arg]
        except TypeError:  # an engine before that existed: the file fails whole
            return sysml.parse_sysml(texts[p], rels[p])

    imported = time.perf_counter() - start
    start = time.perf_counter()
    docs: dict[Path, Any] = {}
    failures: list[str] = []
    alone: dict[Path, list[str]] = {}
    for p in files:
        try:
            docs[p] = parse(p)
            art = sysml.to_artefacts([(rels[p], docs[p])], p.name)
            alone[p] = [w.message for w in art.warnings]
        except MemNetError as e:
            docs.pop(p, None)
            failures.append(f"  {rels[p]}: {e.message}")
    first = time.perf_counter() - start
    ok = len(files) - len(failures)
    print(f"engine: {sysml.__file__}")
    print(
        f"share: {ok}/{len(files)} files ingest without an error "
        f"({100 * ok / max(len(files), 1):.1f}%)"
    )
    for line in failures:
        print(line)

    def parse_all() -> None:
        for p in docs:
            parse(p)

    def model_all() -> None:
        for p in docs:
            sysml.to_artefacts([(rels[p], docs[p])], p.name)

    def baseline() -> None:
        for p in files:
            _TOKENS.findall(texts[p])

    def best(fn: Callable[[], None]) -> float:
        times = []
        for _ in range(max(args.repeat, 1)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    chars = sum(len(texts[p]) for p in files)
    tokens = sum(len(_TOKENS.findall(texts[p])) for p in files)
    base, parse_t, model_t = best(baseline), best(parse_all), best(model_all)
    print(f"corpus: {len(files)} files, {chars} characters, about {tokens} tokens")
    print(
        f"time: parse {parse_t:.3f} s + artefacts {model_t:.3f} s = {parse_t + model_t:.3f} s "
        f"(best of {args.repeat}); token-count baseline {base:.3f} s "
        f"(x{(parse_t + model_t) / base:.1f}); first pass {first:.3f} s (after importing "
        f"memnet in {imported:.3f} s); {tokens / parse_t / 1e3:.0f}k tokens/s"
    )

    # the same files read as directories and as one corpus
    by_dir: dict[Path, list[Path]] = {}
    for p in docs:
        by_dir.setdefault(p.parent, []).append(p)
    per_dir: dict[str, list[str]] = {}
    unsatisfied: list[str] = []
    for d, ps in sorted(by_dir.items()):
        art = sysml.to_artefacts([(rels[p], docs[p]) for p in ps], d.name)
        for w in art.warnings:
            per_dir.setdefault(w.path, []).append(w.message)
        if d.name.endswith("Requirements"):
            satisfied = {
                lk.dst
                for lk in art.links.values()
                if lk.type == "SATISFIES" and not lk.props.get("negated")
            }
            reqs = sorted(loc for loc, el in art.elements.items() if el.kind == "REQ")
            lacking = [loc.partition("/")[2] for loc in reqs if loc not in satisfied]
            unsatisfied.append(
                f"  {d.relative_to(args.corpus)}: {len(reqs) - len(lacking)}"
                f"/{len(reqs)} requirement usages have SATISFIES"
                + (f"; without: {', '.join(lacking)}" if lacking else "")
            )
    whole = sysml.to_artefacts([(rels[p], docs[p]) for p in docs], args.corpus.name)
    per_file: dict[str, list[str]] = {}
    for w in whole.warnings:
        per_file.setdefault(w.path, []).append(w.message)

    n = len(docs)

    def count(warned: dict[str, list[str]], test: Callable[[str], bool]) -> int:
        return sum(1 for p in docs if not any(test(m) for m in warned.get(rels[p], ())))

    alone_by_rel = {rels[p]: ms for p, ms in alone.items()}
    print(f"files ({n} that read): no statement skipped / no warning")
    for label, warned in (
        ("each file alone", alone_by_rel),
        ("each directory", per_dir),
        ("the whole corpus", per_file),
    ):
        print(f"  {label:<17} {count(warned, skips):4d} / {count(warned, lambda m: True):4d}")

    # names declared anywhere in the corpus (a last name of an element's locator)
    declared = {loc.rpartition("/")[2].rpartition("::")[2] for loc in whole.elements}
    kinds: Counter[str] = Counter()
    for w in whole.warnings:
        key = construct(w.message)
        name = unresolved_name(w.message)
        if name is not None:
            key += " (in the corpus)" if name in declared else " (not in the corpus)"
        kinds[key] += 1
    print(f"warnings: {len(whole.warnings)} on the whole corpus read as one model, by construct:")
    for key, k in kinds.most_common(args.warnings):
        print(f"  {k:5d}  {key}")
    if len(kinds) > args.warnings:
        print(f"  ... and {len(kinds) - args.warnings} more kinds")
    if args.list:
        for w in whole.warnings:
            print(f"  {w}")
    if unsatisfied:
        print("requirements:")
        print("\n".join(unsatisfied))


if __name__ == "__main__":
    main()
