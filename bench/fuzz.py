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

and, less often (issue 36), to inputs that are hostile by their size or
what they name rather than their text:

* ``names``: a Δ of many distinct kinds (up to 70,000), many labels on one
  node (up to 200,000), many labels across nodes, many edge types; refused
  means the session is unchanged;
* ``keep``: ``keep`` slices whose handles run past the lead's ids (at the
  20,000-id gap and far beyond, ``ne10000``, ``nf100000``, the largest
  handle), some with many kinds;
* ``devices``: the CLI (``memnet.faces.cli.main``, in process) given
  ``/dev/zero``, ``/dev/urandom``, ``/dev/null``, a directory or a sparse
  1 GiB file as a Δ file, on stdin, as a slice, as a tree to ingest, a model
  to snap or a host index;
* ``paths``: paths that are not UTF-8 (lone surrogates from undecodable
  bytes, some of which exist), empty, with a NUL, too long, given to the
  CLI, to ingest, to the host index and to the MCP tools (with roots);
* ``cabpaths``: the same paths as a cabinet's home or a backup's
  destination (the cabinet code's part).

A CLI call's error is read off its one ``memnet: error: <code>:`` line; an
``internal`` one is a crash.

Only a ``MemNetError`` may come out. Every input is timed in CPU seconds of
this thread (the machine is shared, so wall time would measure the
neighbours; the slowest wall time is printed too), without the harness's own
checks (the pickled fingerprint of a session, resetting one); the campaign
counts crashes (any other exception, a changed session, a splitter that
loses or cuts a statement) and inputs over 1 s, prints the peak resident
memory of the process, and writes the first of each kind to ``bench/out/``.

    python bench/fuzz.py [--inputs 1000000] [--seed 1] [--only names,keep,...]

Coverage-guided fuzzing (atheris) is not used: see docs/decisions.md.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import pickle
import random
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import memnet  # noqa: E402
from memnet import MemNetError, Session, import_slice  # noqa: E402
from memnet.absorb import export_working_memory_slice  # noqa: E402
from memnet.faces.cli import main as cli_main  # noqa: E402
from memnet.faces.mcp import MemNetTools, outcome  # noqa: E402
from memnet.faces.roots import Roots  # noqa: E402
from memnet.faces.wire import Splitter, Wire  # noqa: E402
from memnet.gql.parse import parse, parse_query  # noqa: E402
from memnet.graph.store import edge_handle, node_handle  # noqa: E402

SLOW = 1.0  # seconds: an input slower than this is a finding

KEYWORDS = [
    "INSERT",
    "SET",
    "REMOVE",
    "DELETE",
    "SETTLE",
    "MATCH",
    "WHERE",
    "CONTAINS",
    "LIMIT",
    "AND",
    "RETURN",
    "USE",
    "RECALL",
    "OUTLINE",
    "SESSIONS",
    "PING",
    "WITH",
    "CREATE",
    "true",
    "false",
    "null",
    "insert",
    "Match",
]
LABELS = ["TSK", "LAW", "MOD", "DEC", "REQ", "X", "TSK_2", "URGENT", "A" * 70, "TSKx"]
NAMES = [
    "t",
    "m",
    "x",
    "n1",
    "task2",
    "_anon1",
    "_x",
    "title",
    "status",
    "prio",
    "path",
    "tags",
    "na1",
    "na2",
    "nb1a",
    "ea1",
    "nz",
    "n0",
    "e",
    "k" * 130,
]
STRINGS = [
    "''",
    "'x'",
    "'it''s'",
    "'a\\'b'",
    "'\\\\'",
    "'\\n\\r\\t'",
    "'\\u00e9'",
    "'\\uD800'",
    "'\\uD83D\\uDE00'",
    "'\\uDE00\\uD83D'",
    "'\\q'",
    "'\\u12'",
    "'unterminated",
    "'日本語'",
    "'\U0001f600'",
    "'\x00'",
    "'\u2028'",
    "'" + "y" * 300 + "'",
]
NUMBERS = [
    "0",
    "-1",
    "1.5",
    "2e3",
    "-0.0",
    "1e309",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "1" * 50,
    "1" * 5000,
    ".5",
    "1.",
    "+3",
    "0x10",
    "1_000",
]
PUNCT = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "-",
    "->",
    "<-",
    "-[",
    "]->",
    "]-",
    "<-[",
    ";",
    ".",
    "=",
    "~",
    "#",
    "&",
    "*",
    "|",
    "'",
    "\\",
    "/",
    "//",
    "/*",
    "*/",
    "\n",
    " ",
]
NICKS = ["#p", "#pricing", "#q3-review", "#", "#A"]
COMMENTS = ["// note\n", "/* c */", "/* open", "// no newline"]


def token(rng: random.Random) -> str:
    pool = rng.choice((KEYWORDS, LABELS, NAMES, STRINGS, NUMBERS, PUNCT, PUNCT, NICKS, COMMENTS))
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
            del s[i : i + rng.randint(1, 8)]
        elif op == 2 and s:
            j = rng.randrange(len(s))
            s[i:i] = s[j : j + rng.randint(1, 20)]
        elif op == 3 and s:
            s[min(i, len(s) - 1)] = chr(
                rng.choice((0, 0x27, 0x5C, 0xD800, 0xDFFF, 0x7F, rng.randint(0, 0x10FFFF)))
            )
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
    return rng.choice(
        (
            "(" * 100_000,
            "[" * 5000 + "x",
            "'" + "a" * 5_000_000 + "'",
            "TSK " * 3000,
            "INSERT " + ", ".join(f"(a{i}:T)" for i in range(30000)),
        )
    )


# -- the session fingerprint ------------------------------------------------------------
def fingerprint(s: Session) -> bytes:
    """The session as bytes: everything a Commit can change."""
    return pickle.dumps((s.version, s.store, s.history(), s.journal()))


def cheap_print(s: Session) -> tuple[object, ...]:
    st = s.store
    return (
        s.version,
        st.next_node,
        st.next_edge,
        st.live_nodes,
        st.live_edges,
        st.live_bytes,
        len(s.history()),
    )


# -- the targets --------------------------------------------------------------------------
class Targets:
    def __init__(self, rng: random.Random, work: str) -> None:
        self.rng = rng
        self.untimed = 0.0  # CPU seconds of harness work inside the current input
        self.last: str | None = None  # the input a hostile target made (for findings)
        self.reader = Session("fz-read")
        self.reader.commit(SEEDS[0])
        self.reader.commit(SEEDS[1])
        self.reader.commit(
            "INSERT "
            + ", ".join(
                f"(t{i}:TSK {{title: 'task {i} pricing', status: 'open', n: {i}}})-[:NEXT]->"
                f"(m{i}:MOD {{path: 'm{i}.py'}})"
                for i in range(40)
            )
        )
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
        self._hostile_setup(work)

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
        for name, lo, hi in (
            ("k", -1, 7),
            ("max_rows", 0, 501),
            ("limit", 0, 51),
            ("fanout", 0, 65),
        ):
            if rng.random() < 0.3:
                knobs[name] = rng.randint(lo, hi)
        if rng.random() < 0.1:
            knobs["view"] = rng.choice(("shell", "interior", "x"))
        self.reader.recall(text, **knobs)

    @contextlib.contextmanager
    def harness(self) -> Iterator[None]:
        """Work of the harness inside an input: not the input's cost."""
        start = time.thread_time()
        try:
            yield
        finally:
            self.untimed += time.thread_time() - start

    def _refusal_changes_nothing(self, s: Session, call: object, what: str) -> None:
        with self.harness():
            before = cheap_print(s)
            full = fingerprint(s) if self.commits % 200 == 0 else None
        self.commits += 1
        try:
            call()  # type: ignore[operator]
        except MemNetError:
            with self.harness():
                if cheap_print(s) != before or (full is not None and fingerprint(s) != full):
                    raise AssertionError(f"a refused {what} changed the session") from None
            raise

    def commit(self, text: str) -> None:
        if self.scratch.version > 100 or self.scratch.store.next_node > 20_000:
            with self.harness():
                self.scratch = self._scratch()
        s = self.scratch
        self._refusal_changes_nothing(s, lambda: s.commit(text), "commit")

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
            import_slice(
                self.lead,
                text.encode("utf-8", "surrogatepass"),
                self.rng.choice(("remint", "keep", "reject", "x")),
            )
        except MemNetError:
            if cheap_print(self.lead) != before:
                raise AssertionError("a refused absorb changed the lead") from None
            raise

    # -- issue 36: inputs hostile by size or by what they name ------------------------------
    def _hostile_setup(self, work: str) -> None:
        self.work = work
        self.names_s = Session("fz-names")
        self.keep_lead = Session("fz-keep")
        self.home = os.path.join(work, "cab")  # the CLI's cabinet
        with memnet.Cabinet.open(self.home) as cab:
            s = cab.create("w")
            s.commit(SEEDS[0])
            cab.flush(s)
        wb = os.fsencode(work)
        # a tree to ingest, and paths that are not UTF-8 (some exist)
        for rel in (b"tree/pkg", b"t\xffree/pkg", b"model"):
            os.makedirs(os.path.join(wb, rel), exist_ok=True)
        for rel, data in (
            (b"tree/pkg/a.py", b"def f():\n    return 1\n"),
            (b"tree/pkg/b\xff.py", b"x = 1\n"),
            (b"t\xffree/pkg/c.py", b"def g():\n    pass\n"),
            (b"model/m.sysml", b"package M { part def A; }\n"),
            (b"sl\xffice.json", self.slices[0].encode()),
            (b"d\xffelta.gql", b"INSERT (x:TSK {title: 'odd path'})"),
        ):
            with open(os.path.join(wb, rel), "wb") as f:
                f.write(data)
        self.sparse = os.path.join(work, "sparse.bin")
        with open(self.sparse, "wb") as f:
            f.truncate(1 << 30)
        self.index = os.path.join(work, "hix")
        self.mcp = MemNetTools(memnet.Cabinet.open(backend="memory"), roots=Roots([work]))
        self.mcp.create_session("w")
        self.weird = [
            os.fsdecode(os.path.join(wb, x))
            for x in (
                b"t\xffree",
                b"t\xffree/pkg",
                b"sl\xffice.json",
                b"d\xffelta.gql",
                b"no\xfesuch",
                b"tree/pkg/b\xff.py",
                b"\xff",
                b"a\x80b/c\xc3",
            )
        ]
        self.weird += [
            "",
            "a\x00b",
            "x" * 5000,
            os.path.join(work, "y" * 300),
            "\udcff",
            "/dev/zero",
            self.sparse,
            os.path.join(work, "tree", "..", "tree"),
            os.path.join(work, "tree"),
        ]

    def names(self, text: str) -> None:
        s = self.names_s
        if s.version > 40 or s.store.next_node > 20_000:
            with self.harness():
                s = self.names_s = Session("fz-names")
        with self.harness():  # building the text is the harness's work
            delta = self._names_delta(s, text)
        self._refusal_changes_nothing(s, lambda: s.commit(delta), "commit of names")

    def _names_delta(self, s: Session, text: str) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.3:  # distinct kinds
            n = (
                70_000
                if rng.random() < 0.05
                else rng.choice((rng.randint(1, 300), 255, 256, 257, rng.randint(300, 3000)))
            )
            tag = rng.choice(("K", "KX", "A_", "Z9_"))
            delta = "INSERT " + ", ".join(f"(b{i}:{tag}{i})" for i in range(n))
        elif r < 0.55:  # labels on one node, in one pattern or SET by SET
            n = (
                200_000
                if rng.random() < 0.05
                else rng.choice((rng.randint(1, 70), 63, 64, 65, 1000))
            )
            if rng.random() < 0.7 or s.store.live_nodes == 0:
                delta = "INSERT (a:TSK&" + "&".join(f"L{i}" for i in range(n)) + ")"
            else:
                h = node_handle(rng.randint(1, s.store.next_node - 1))
                delta = "\n".join(f"SET {h}:S{i}" for i in range(min(n, 3000)))
        elif r < 0.8:  # labels across nodes
            nodes, per = rng.randint(1, 90), rng.randint(1, 66)
            pool = rng.choice((10, 500, 10_000))
            delta = "INSERT " + ", ".join(
                f"(n{j}:TSK&" + "&".join(f"P{rng.randrange(pool)}" for _ in range(per)) + ")"
                for j in range(nodes)
            )
        else:  # edge types
            n = rng.choice((rng.randint(1, 300), 256, 257, 5000))
            delta = "INSERT (z:TSK), " + ", ".join(f"(z)-[:T{i}]->(z)" for i in range(n))
        if rng.random() < 0.1:
            delta = mutate(rng, delta) if len(delta) < 100_000 else delta + text
        self.last = delta
        return delta

    def _far_id(self, nxt: int) -> int:
        rng = self.rng
        return rng.choice(
            (
                nxt + rng.randint(0, 50),
                nxt + rng.randint(19_990, 20_010),
                36**4,
                36**5,
                rng.randint(1, 36**9 - 1),
                36**9 - 1,
                (1 << 32) + rng.randint(-3, 3),
                max(1, nxt - 1),
            )
        )

    def keep(self, text: str) -> None:
        lead = self.keep_lead
        if lead.version > 40 or lead.store.next_node > 100_000:
            with self.harness():
                lead = self.keep_lead = Session("fz-keep")
        with self.harness():
            data, policy = self._keep_slice(lead)
        self._refusal_changes_nothing(lead, lambda: import_slice(lead, data, policy), "absorb")

    def _keep_slice(self, lead: Session) -> tuple[object, str]:
        rng = self.rng
        st = lead.store
        many = rng.random() < 0.1
        n = rng.randint(300, 2000) if many else rng.randint(1, 4)
        base = self._far_id(st.next_node)
        ids = sorted({min(base + i * rng.choice((1, 1, 7)), 36**9 - 1) for i in range(n)})
        nodes = [
            {
                "handle": node_handle(i),
                "kind": f"K{j}" if many else "TSK",
                "labels": [f"L{j}"] if many and rng.random() < 0.5 else [],
                "props": {"title": f"kept {j}"},
            }
            for j, i in enumerate(ids)
        ]
        edges = []
        if len(ids) > 1 and rng.random() < 0.5:
            e = self._far_id(st.next_edge)
            edges.append(
                {
                    "handle": edge_handle(min(e, 36**9 - 1)),
                    "type": "R",
                    "src": nodes[0]["handle"],
                    "dst": nodes[-1]["handle"],
                }
            )
        slc = {
            "format": "memnet.slice/1",
            "provenance": {
                "session": "member",
                "version": 1,
                "anchors": [nodes[0]["handle"]],
                "hops": 1,
                "budget": 50,
                "exported_at": 0.0,
            },
            "nodes": nodes,
            "edges": edges,
        }
        form = rng.random()
        data: object = (
            json.dumps(slc) if form < 0.5 else (json.dumps(slc).encode() if form < 0.7 else slc)
        )
        policy = rng.choice(("keep", "keep", "keep", "remint", "reject"))
        self.last = json.dumps(slc)[:10_000]
        return data, policy

    def _cli(self, argv: list[str], stdin: str | None = None) -> None:
        """One ``memnet`` command in process; its error line becomes a MemNetError
        (``internal`` a crash)."""
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdin
        f = None
        try:
            if stdin is not None:
                f = open(stdin, "rb")  # noqa: SIM115
                sys.stdin = io.TextIOWrapper(f)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = cli_main(["--home", self.home, *argv])
                except SystemExit as e:  # argparse on an argument it cannot take
                    rc = e.code if isinstance(e.code, int) else 2
        finally:
            sys.stdin = saved
            if f is not None:
                f.close()
        text = err.getvalue()
        if "error: internal:" in text or "Traceback" in text:
            raise AssertionError(f"memnet {argv!r}: {text.strip()[:300]}")
        if rc == 1 and text.startswith("memnet: error: "):
            code = text[len("memnet: error: ") :].split(":", 1)[0]
            raise MemNetError(text, code=code)
        if rc not in (0, 2):
            raise AssertionError(f"memnet {argv!r} exited {rc}: {text.strip()[:300]}")

    DEVICES = ("/dev/zero", "/dev/null", "/dev/zero", "/dev/urandom")

    def devices(self, text: str) -> None:
        rng = self.rng
        dev = rng.choice(self.DEVICES + (self.sparse, os.path.join(self.work, "model")))
        if dev == "/dev/urandom" and rng.random() < 0.8:
            dev = "/dev/zero"  # 16 MiB of urandom costs 50 ms: now and then only
        how = rng.randrange(8)
        if how == 0:
            self._cli(["commit", "w", dev])
        elif how == 1:
            self._cli(["commit", "w"], stdin=dev if not os.path.isdir(dev) else "/dev/null")
        elif how == 2:
            self._cli(["absorb", "w", "--slice", dev])
        elif how == 3:
            self._cli(["ingest", "w", dev])
        elif how == 4:
            self._cli(["snap", dev, "--prefix", "dv"])
        elif how == 5:
            self._cli(["host", "search", "x", "--index", dev])
        elif how == 6:
            self._cli(["host", "snap", "w", "x", "--index", dev])
        else:
            self._cli(["host", "index", dev, "--index", self.index])

    def paths(self, text: str) -> None:
        rng = self.rng
        p = rng.choice(self.weird)
        how = rng.randrange(11)
        if how == 0:
            self._cli(["commit", "w", p])
        elif how == 1:
            self._cli(["absorb", "w", "--slice", p])
        elif how == 2:
            self._cli(["ingest", "w", p])
        elif how == 3:
            self._cli(["snap", p, "--prefix", "pz"])
        elif how == 4:
            self._cli(["host", "search", "x", "--index", p])
        elif how == 5:
            self._cli(["host", "index", p, "--index", os.path.join(self.work, "hix2")])
        elif how == 6:
            self._tool(lambda: self.mcp.ingest("w", p, False))
        elif how == 7:
            self._tool(lambda: self.mcp.snap(p, "mz", 50))
        elif how == 8:
            self._tool(lambda: self.mcp.host_search("x", 1, p))
        elif how == 9:
            from memnet.host import open_index

            open_index(p)
        else:
            from memnet.ingest import ingest_path

            ingest_path(self.names_s, p)

    @staticmethod
    def _tool(call: object) -> None:
        """A tool call as the MCP face makes it (``outcome``): its error code, or
        a crash when it is ``internal``."""
        _text, structured, is_error = outcome(call)  # type: ignore[arg-type]
        if is_error:
            err = structured["error"]
            if err["code"] == "internal":
                raise AssertionError(f"MCP tool: {err['message'][:300]}")
            raise MemNetError(err["message"], code=err["code"])

    def cabpaths(self, text: str) -> None:
        rng = self.rng
        p = rng.choice(self.weird)
        how = rng.randrange(3)
        if how == 0:
            with memnet.Cabinet.open(p):
                pass
        elif how == 1:
            argv = ["--home", p, "session", "list"]
            saved = self.home
            try:
                self.home = p
                self._cli(argv[2:])
            finally:
                self.home = saved
        else:
            dest = os.path.join(self.work, "bk", os.path.basename(p) or "x")
            try:
                self._cli(["backup", dest])
            finally:
                with self.harness():
                    shutil.rmtree(os.path.join(self.work, "bk"), ignore_errors=True)


class _Sink:
    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


#: How many of every 24 inputs each target takes (the hostile ones cost more).
SHARES = {
    "parse": 4,
    "recall": 4,
    "commit": 4,
    "splitter": 4,
    "absorb": 3,
    "names": 1,
    "keep": 1,
    "devices": 1,
    "paths": 1,
    "cabpaths": 1,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated targets (default: all of " + ", ".join(SHARES) + ")",
    )
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="memnet-fuzz-")
    here = os.getcwd()
    os.chdir(work)  # a relative path an input names lands in the scratch directory
    try:
        run(args, rng, work)
    finally:
        os.chdir(here)
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, rng: random.Random, work: str) -> None:
    targets = Targets(rng, work)
    seeds = SEEDS + targets.slices
    only = [t for t in args.only.split(",") if t] or list(SHARES)
    unknown = sorted(set(only) - set(SHARES))
    if unknown:
        raise SystemExit(f"unknown target(s): {', '.join(unknown)}")
    order = tuple(
        (name, getattr(targets, name))
        for name in SHARES
        if name in only
        for _ in range(SHARES[name])
    )
    order = list(order)
    rng.shuffle(order)
    per: collections.Counter[str] = collections.Counter()
    spent: collections.Counter[str] = collections.Counter()  # CPU seconds per target
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
        targets.untimed = 0.0
        targets.last = None
        start = time.thread_time()
        wall = time.perf_counter()
        try:
            fn(text)
        except MemNetError as e:  # a target let one out: fine, count its code
            codes[e.code] += 1
        except Exception as e:  # noqa: BLE001 - this is what the campaign looks for
            key = f"{name}: {type(e).__name__}: {str(e)[:120]}"
            counts["crashes"] += 1
            per[name] += 1
            crashes.setdefault(key, (targets.last or text, traceback.format_exc()))
        took = time.thread_time() - start - targets.untimed
        worst_wall = max(worst_wall, time.perf_counter() - wall - targets.untimed)
        counts[name] += 1
        spent[name] += took
        if took > worst[0]:
            worst = (took, name, text)
        if took > SLOW:
            slow.append((took, name, targets.last or text))
        if (i + 1) % 100_000 == 0:
            print(
                f"  {i + 1:>9,} inputs, {counts['crashes']} crashes, {len(slow)} over "
                f"{SLOW:.0f} s, {time.monotonic() - t0:.0f} s, peak {_peak_mb():,.0f} MB",
                flush=True,
            )
    secs = time.monotonic() - t0
    if crashes or slow:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "fuzz-findings.json"), "w", encoding="utf-8") as f:
            json.dump(
                {
                    "crashes": {k: {"input": t, "trace": tb} for k, (t, tb) in crashes.items()},
                    "slow": [
                        {"seconds": s, "target": n, "input": t[:10_000]} for s, n, t in slow[:50]
                    ],
                },
                f,
                indent=1,
                ensure_ascii=True,
            )
    print(
        f"== {args.inputs:,} inputs in {secs:.0f} s ({args.inputs / secs:,.0f} a second), "
        f"seed {args.seed}"
    )
    for name in SHARES:
        if counts[name]:
            print(
                f"   {name:10} {counts[name]:>9,}  {spent[name] / counts[name] * 1000:7.2f} ms "
                "of CPU on average" + (f", {per[name]:,} crashes" if per[name] else "")
            )
    print("   refused with a code: " + ", ".join(f"{c} {n:,}" for c, n in codes.most_common()))
    print(
        f"   slowest input: {worst[0] * 1000:.0f} ms of CPU ({worst[1]}, {len(worst[2]):,} "
        f"chars); slowest in wall time {worst_wall * 1000:.0f} ms"
    )
    print(f"   peak resident memory: {_peak_mb():,.0f} MB")
    for key in sorted(crashes):
        print(f"   ! {key}")
    verdict = (
        "PASS"
        if (not crashes and not slow and args.inputs >= 1_000_000 and _peak_mb() < 1024)
        else "MISS"
    )
    print(
        f"{verdict} {args.inputs:,} inputs: {counts['crashes']} crashes "
        f"({len(crashes)} distinct), {len(slow)} inputs over {SLOW:.0f} s, peak memory "
        f"{_peak_mb():,.0f} MB"
    )


def _peak_mb() -> float:
    """The process's peak resident set (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
