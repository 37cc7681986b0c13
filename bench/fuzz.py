"""A long fuzz campaign over every place MemNet takes text from outside.

Each input is drawn by one of three generators: a soup of the dialect's own
tokens (keywords, labels, handles, strings with every escape, numbers at the
edges of 64 bits, brackets, comments), a few mutations of a valid input from a
seed corpus (Δ, queries, wire statements, slice files), or plain random text
(any code point, lone surrogates and NUL included). It then goes to one
target, in turn:

* ``parse`` and ``parse_query``;
* ``Session.recall`` with random knobs, on a small session;
* ``Session.commit`` on a scratch session: when it is refused, the session
  must be exactly as before (its fingerprint is compared);
* the wire: the ``Splitter`` fed the bytes in random chunks must give the same
  statements as fed whole, and ``Wire.execute`` (on an in-memory cabinet);
* ``import_slice`` of the text as a slice file: refused means the lead is
  unchanged.

Only a ``MemNetError`` may come out. Every input is timed in CPU seconds of
this thread (the machine is shared, so wall time would measure the
neighbours; the slowest wall time is printed too); the campaign counts crashes
(any other exception, a changed session, a splitter that loses or cuts a
statement) and inputs over 1 s, and writes the first of each kind to
``bench/out/``.

    python bench/fuzz.py [--inputs 1000000] [--seed 1]

Coverage-guided fuzzing (atheris) is not used: see docs/decisions.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pickle
import random
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import memnet  # noqa: E402
from memnet import MemNetError, Session, import_slice  # noqa: E402
from memnet.absorb import export_working_memory_slice  # noqa: E402
from memnet.faces.wire import Splitter, Wire  # noqa: E402
from memnet.gql.parse import parse, parse_query  # noqa: E402

SLOW = 1.0  # seconds: an input slower than this is a finding

KEYWORDS = ["INSERT", "SET", "REMOVE", "DELETE", "SETTLE", "MATCH", "WHERE", "CONTAINS",
            "LIMIT", "AND", "RETURN", "USE", "RECALL", "OUTLINE", "SESSIONS", "PING", "WITH",
            "CREATE", "true", "false", "null", "insert", "Match"]
LABELS = ["TSK", "LAW", "MOD", "DEC", "REQ", "X", "TSK_2", "URGENT", "A" * 70, "TSKx"]
NAMES = ["t", "m", "x", "n1", "task2", "_anon1", "_x", "title", "status", "prio", "path",
         "tags", "na1", "na2", "nb1a", "ea1", "nz", "n0", "e", "k" * 130]
STRINGS = ["''", "'x'", "'it''s'", "'a\\'b'", "'\\\\'", "'\\n\\r\\t'", "'\\u00e9'", "'\\uD800'",
           "'\\uD83D\\uDE00'", "'\\uDE00\\uD83D'", "'\\q'", "'\\u12'", "'unterminated",
           "'日本語'", "'\U0001F600'", "'\x00'", "'\u2028'", "'" + "y" * 300 + "'"]
NUMBERS = ["0", "-1", "1.5", "2e3", "-0.0", "1e309", "9223372036854775807",
           "9223372036854775808", "-9223372036854775809", "1" * 50, "1" * 5000, ".5", "1.",
           "+3", "0x10", "1_000"]
PUNCT = ["(", ")", "[", "]", "{", "}", ",", ":", "-", "->", "<-", "-[", "]->", "]-", "<-[",
         ";", ".", "=", "~", "#", "&", "*", "|", "'", "\\", "/", "//", "/*", "*/", "\n", " "]
NICKS = ["#p", "#pricing", "#q3-review", "#", "#A"]
COMMENTS = ["// note\n", "/* c */", "/* open", "// no newline"]


def token(rng: random.Random) -> str:
    pool = rng.choice((KEYWORDS, LABELS, NAMES, STRINGS, NUMBERS, PUNCT, PUNCT, NICKS,
                       COMMENTS))
    return rng.choice(pool)


def soup(rng: random.Random) -> str:
    sep = rng.choice(("", " ", " ", "\n", "  "))
    return sep.join(token(rng) for _ in range(rng.randint(1, 40)))


def random_text(rng: random.Random) -> str:
    n = rng.randint(0, 80)
    if rng.random() < 0.3:
        return "".join(chr(rng.randint(0, 0x7F)) for _ in range(n))
    return "".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(n))


SEEDS = [
    "INSERT (t:TSK {title: 'Fix rounding', status: 'open', prio: 1}), (m:MOD {path: 'a.py'}), "
    "(t)-[:TOUCHES {w: 2}]->(m)",
    "INSERT (t:TSK&URGENT #pricing {tags: ['a', 'b', 3, 1.5, true]})-[e:NEXT]->(u:TSK)",
    "SET na1.status = 'done', na1.prio = 2 REMOVE na1.tags SET na1:URGENT",
    "DELETE na2 SETTLE na1",
    "INSERT (x:LAW {text: 'Never change a price'}); SET na1.note = 'x'",
    "TSK status:open pricing",
    "MOD path:'a.py' #pricing",
    "MATCH (n:TSK {status: 'open'}) WHERE n.title CONTAINS 'round' LIMIT 3",
    "MATCH (n #pricing) LIMIT 1",
    "TSK title~'fix' prio:1 'two words'",
    "USE fz CREATE; RECALL TSK WITH k=1, rows=5, view=shell; OUTLINE WITH limit=2;",
    "INSERT (q:TSK {title: 'wire'}); SESSIONS; PING;",
]


def mutate(rng: random.Random, text: str) -> str:
    s = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        i = rng.randrange(len(s) + 1)
        if op == 0:
            s[i:i] = list(token(rng))
        elif op == 1 and s:
            del s[i:i + rng.randint(1, 8)]
        elif op == 2 and s:
            j = rng.randrange(len(s))
            s[i:i] = s[j:j + rng.randint(1, 20)]
        elif op == 3 and s:
            s[min(i, len(s) - 1)] = chr(rng.choice((0, 0x27, 0x5C, 0xD800, 0xDFFF, 0x7F,
                                                    rng.randint(0, 0x10FFFF))))
        elif op == 4:
            s[i:i] = list(rng.choice("([{") * rng.randint(1, 40))
        else:
            s[i:i] = list(random_text(rng)[:10])
    return "".join(s)


def draw(rng: random.Random, seeds: list[str]) -> str:
    r = rng.random()
    if r < 0.4:
        return soup(rng)
    if r < 0.85:
        return mutate(rng, rng.choice(seeds))
    if r < 0.99:
        return random_text(rng)
    return rng.choice(("(" * 100_000, "[" * 5000 + "x", "'" + "a" * 5_000_000 + "'",
                       "TSK " * 3000, "INSERT " + ", ".join(f"(a{i}:T)" for i in range(30000))))


# -- the session fingerprint ------------------------------------------------------------
def fingerprint(s: Session) -> bytes:
    """The session as bytes: everything a Commit can change."""
    return pickle.dumps((s.version, s.store, s.history(), s.pending))


def cheap_print(s: Session) -> tuple[object, ...]:
    st = s.store
    return (s.version, st.next_node, st.next_edge, st.live_nodes, st.live_edges, st.live_bytes,
            len(s.history()))


# -- the targets --------------------------------------------------------------------------
class Targets:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.reader = Session("fz-read")
        self.reader.commit(SEEDS[0])
        self.reader.commit(SEEDS[1])
        self.reader.commit("INSERT " + ", ".join(
            f"(t{i}:TSK {{title: 'task {i} pricing', status: 'open', n: {i}}})-[:NEXT]->"
            f"(m{i}:MOD {{path: 'm{i}.py'}})" for i in range(40)))
        self.reader.recall("TSK")  # the first Recall loads the tokenizer: not an input's cost
        self.scratch = self._scratch()
        self.lead = Session("fz-lead")
        self.lead.commit(SEEDS[0])
        slc = export_working_memory_slice(self.reader, ["na1"], hops=1).to_json()
        self.slices = [slc]
        self.cab = memnet.Cabinet.open(backend="memory")
        self.wire = Wire(self.cab, _Sink())
        self.wire.use("USE fz CREATE")
        self.commits = 0

    def _scratch(self) -> Session:
        s = Session("fz-write")
        s.commit(SEEDS[0])
        return s

    def parse(self, text: str) -> None:
        try:
            parse(text)
        finally:
            parse_query(text)

    def recall(self, text: str) -> None:
        rng = self.rng
        knobs = {}
        for name, lo, hi in (("k", -1, 7), ("max_rows", 0, 501), ("limit", 0, 51),
                             ("fanout", 0, 65)):
            if rng.random() < 0.3:
                knobs[name] = rng.randint(lo, hi)
        if rng.random() < 0.1:
            knobs["view"] = rng.choice(("shell", "interior", "x"))
        self.reader.recall(text, **knobs)

    def commit(self, text: str) -> None:
        if self.scratch.version > 100:
            self.scratch = self._scratch()
        s = self.scratch
        before = cheap_print(s)
        full = fingerprint(s) if self.commits % 200 == 0 else None
        self.commits += 1
        try:
            s.commit(text)
        except MemNetError:
            if cheap_print(s) != before or (full is not None and fingerprint(s) != full):
                raise AssertionError("a refused commit changed the session") from None
            raise

    def splitter(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        whole = Splitter()
        want = whole.feed(data) + whole.finish()
        cut = Splitter()
        got: list[tuple[str, object]] = []
        i = 0
        most = 16 if len(data) < 65536 else 65536  # a harness of 16-byte reads would be slow
        while i < len(data):
            j = i + self.rng.randint(1, most)
            got += cut.feed(data[i:j])
            i = j
        got += cut.finish()
        if got != want:
            raise AssertionError(f"the splitter gave {got!r} in chunks, {want!r} whole")
        for kind, body in want[:3]:
            if kind == "stmt":
                try:
                    self.wire.execute(body.decode("utf-8"))
                except (MemNetError, UnicodeDecodeError):
                    pass
        if self.wire.session is not None and self.wire.session.version > 200:
            self.wire.use("USE fz")  # the wire flushes; keep the session small
            self.cab.drop("fz")
            self.wire.session = None
            self.wire.use("USE fz CREATE")

    def absorb(self, text: str) -> None:
        if self.rng.random() < 0.5:
            text = mutate(self.rng, self.rng.choice(self.slices))
        if self.lead.version > 200:
            self.lead = Session("fz-lead")
        before = cheap_print(self.lead)
        try:
            import_slice(self.lead, text.encode("utf-8", "surrogatepass"),
                         self.rng.choice(("remint", "keep", "reject", "x")))
        except MemNetError:
            if cheap_print(self.lead) != before:
                raise AssertionError("a refused absorb changed the lead") from None
            raise


class _Sink:
    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    targets = Targets(rng)
    seeds = SEEDS + targets.slices
    order = (("parse", targets.parse), ("recall", targets.recall), ("commit", targets.commit),
             ("splitter", targets.splitter), ("absorb", targets.absorb))
    out_dir = os.path.join(HERE, "out")
    counts: collections.Counter[str] = collections.Counter()
    codes: collections.Counter[str] = collections.Counter()
    crashes: dict[str, tuple[str, str]] = {}
    slow: list[tuple[float, str, str]] = []
    worst = (0.0, "", "")
    worst_wall = 0.0
    t0 = time.monotonic()
    for i in range(args.inputs):
        name, fn = order[i % len(order)]
        text = draw(rng, seeds)
        start = time.thread_time()
        wall = time.perf_counter()
        try:
            fn(text)
        except MemNetError as e:  # a target let one out: fine, count its code
            codes[e.code] += 1
        except Exception as e:  # noqa: BLE001 - this is what the campaign looks for
            key = f"{name}: {type(e).__name__}: {str(e)[:120]}"
            counts["crashes"] += 1
            crashes.setdefault(key, (text, traceback.format_exc()))
        took = time.thread_time() - start
        worst_wall = max(worst_wall, time.perf_counter() - wall)
        counts[name] += 1
        if took > worst[0]:
            worst = (took, name, text)
        if took > SLOW:
            slow.append((took, name, text))
        if (i + 1) % 100_000 == 0:
            print(f"  {i + 1:>9,} inputs, {counts['crashes']} crashes, {len(slow)} over "
                  f"{SLOW:.0f} s, {time.monotonic() - t0:.0f} s", flush=True)
    secs = time.monotonic() - t0
    if crashes or slow:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "fuzz-findings.json"), "w", encoding="utf-8") as f:
            json.dump({"crashes": {k: {"input": t, "trace": tb} for k, (t, tb) in
                                   crashes.items()},
                       "slow": [{"seconds": s, "target": n, "input": t[:10_000]}
                                for s, n, t in slow[:50]]}, f, indent=1, ensure_ascii=True)
    print(f"== {args.inputs:,} inputs in {secs:.0f} s ({args.inputs / secs:,.0f} a second), "
          f"seed {args.seed}")
    for name, _fn in order:
        print(f"   {name:10} {counts[name]:>9,}")
    print(f"   refused with a code: " + ", ".join(f"{c} {n:,}" for c, n in codes.most_common()))
    print(f"   slowest input: {worst[0] * 1000:.0f} ms of CPU ({worst[1]}, {len(worst[2]):,} "
          f"chars); slowest in wall time {worst_wall * 1000:.0f} ms")
    for key in sorted(crashes):
        print(f"   ! {key}")
    verdict = "PASS" if not crashes and not slow and args.inputs >= 1_000_000 else "MISS"
    print(f"{verdict} {args.inputs:,} inputs: {counts['crashes']} crashes "
          f"({len(crashes)} distinct), {len(slow)} inputs over {SLOW:.0f} s")


if __name__ == "__main__":
    main()
