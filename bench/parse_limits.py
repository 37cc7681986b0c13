"""How long the parser takes on the worst inputs its caps let through.

Prints one line per input: its size, what happened (parsed / the error code)
and the time, against a baseline of a typical 1,000-node INSERT parsed in the
same run. The parser promises linear time and a cap on tokens per Δ, so no
input below the caps should take more than about a second.

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


def main() -> None:
    parse_delta("SET a.x = 1")  # load the grammar once
    body = ",\n  ".join(f"(t{i}:TSK {{title: 'Task number {i}', prio: {i % 5}}})"
                        for i in range(1000))
    baseline = "INSERT\n  " + body
    cases = {
        "1,000-node INSERT (baseline)": baseline,
        "token-dense Δ just under the token cap":
            "DELETE " + ", ".join(["a"] * (MAX_DELTA_TOKENS // 2 - 10)),
        "token-dense Δ over the token cap": "DELETE " + ", ".join(["a"] * MAX_DELTA_TOKENS),
        "one string literal near the size cap":
            "SET a.x = '" + "word " * ((MAX_DELTA_CHARS - 64) // 5) + "'",
        "unterminated string, 3 MB": "INSERT (a {x: '" + "a" * 3_000_000,
        "unterminated comment, 3 MB": "INSERT (a) /*" + "*" * 3_000_000,
        "whitespace, 3 MB": " " * 3_000_000 + "x",
        "over the size cap": "x" * (MAX_DELTA_CHARS + 1),
        "nesting 10,000 deep": "[" * 10_000,
    }
    _, base = _time(parse_delta, baseline)
    print(f"{'input':<42} {'chars':>9} {'result':>16} {'ms':>9} {'x baseline':>11}")
    for name, text in cases.items():
        what, t = _time(parse_delta, text)
        print(f"{name:<42} {len(text):>9} {what:>16} {t * 1e3:>9.1f} {t / base:>11.2f}")
    q = "MATCH (n:TSK {status: 'open'}) WHERE n.title CONTAINS 'pricing' LIMIT 3"
    parse_query.cache_clear() if hasattr(parse_query, "cache_clear") else None
    what, t = _time(parse_query, q + " ")
    print(f"{'a seed query (uncached)':<42} {len(q):>9} {what:>16} {t * 1e3:>9.3f}")


if __name__ == "__main__":
    main()
