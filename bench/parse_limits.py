"""How long the parser takes on the worst inputs its caps let through.

Prints one line per input: its size, what happened (parsed / the error code),
the time, and the time per MiB against a baseline of a typical 1,000-node
INSERT parsed in the same run. Every valid Δ under the 4 MiB size cap is read
by the direct reader (memnet.gql.fast) in time linear in its length, however
many tokens it holds (the lexical-token cap only guards lark, which reads text
the direct reader refuses, to say what is wrong); the size and nesting caps
refuse hostile input before any token is read.

    python bench/parse_limits.py
"""

from __future__ import annotations

import time

from memnet import MemNetError, parse_delta, parse_query
from memnet.gql.parse import MAX_DELTA_CHARS, MAX_DELTA_TOKENS


def _time(fn, text: str) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        fn(text)
        what = "parsed"
    except MemNetError as e:
        what = e.code
    return what, time.perf_counter() - start


def _insert(n: int) -> str:
    body = ",\n  ".join(f"(t{i}:TSK {{title: 'Task number {i}', prio: {i % 5}}})" for i in range(n))
    return "INSERT\n  " + body


def _largest(cap: int) -> str:
    """The largest text INSERT under the size cap: nodes with an edge each."""
    parts: list[str] = []
    size = len("INSERT ")
    i = 0
    while True:
        part = (
            f"(n{i}:DOC {{name: 'doc {i}', text: 'word word word word word'}})"
            f"-[:NEXT {{w: {i}}}]->(m{i}:DOC {{name: 'doc {i}b'}})"
        )
        if size + len(part) + 2 > cap:
            return "INSERT " + ",\n".join(parts)
        parts.append(part)
        size += len(part) + 2
        i += 1


def main() -> None:
    parse_delta("SET a.x = 1")  # warm the reader once
    baseline = _insert(1000)
    cases = {
        "1,000-node INSERT (baseline)": baseline,
        "2,000-node INSERT": _insert(2000),
        "20,000-node INSERT": _insert(20_000),
        "largest INSERT under the size cap": _largest(MAX_DELTA_CHARS),
        "token-dense valid Δ, 4x the lark token cap": "DELETE "
        + ", ".join(["a"] * (MAX_DELTA_TOKENS * 2)),
        "token-dense Δ with an error at the end": "DELETE "
        + ", ".join(["a"] * (MAX_DELTA_TOKENS * 2))
        + " )",
        "one string literal near the size cap": "SET a.x = '"
        + "word " * ((MAX_DELTA_CHARS - 64) // 5)
        + "'",
        "unterminated string, 3 MB": "INSERT (a {x: '" + "a" * 3_000_000,
        "unterminated comment, 3 MB": "INSERT (a) /*" + "*" * 3_000_000,
        "whitespace, 3 MB": " " * 3_000_000 + "x",
        "over the size cap": "x" * (MAX_DELTA_CHARS + 1),
        "nesting 10,000 deep": "[" * 10_000,
    }
    _, base = _time(parse_delta, baseline)
    base_mib = base / (len(baseline) / (1 << 20))
    print(
        f"{'input':<44} {'chars':>9} {'result':>16} {'ms':>9} {'ms/MiB':>8} {'x baseline/MiB':>15}"
    )
    for name, text in cases.items():
        what, t = _time(parse_delta, text)
        per = t / (len(text) / (1 << 20))
        print(
            f"{name:<44} {len(text):>9} {what:>16} {t * 1e3:>9.1f} {per * 1e3:>8.0f} "
            f"{per / base_mib:>15.2f}"
        )
    q = "MATCH (n:TSK {status: 'open'}) WHERE n.title CONTAINS 'pricing' LIMIT 3"
    parse_query.cache_clear() if hasattr(parse_query, "cache_clear") else None
    what, t = _time(parse_query, q + " ")
    print(f"{'a seed query (uncached)':<44} {len(q):>9} {what:>16} {t * 1e3:>9.3f}")


if __name__ == "__main__":
    main()
