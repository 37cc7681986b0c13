"""Deterministic synthetic MemNet sessions for benchmarks.

``build(n_nodes, seed=0, via='commit'|'store')`` makes a session that looks
like the working memory of an agent on a large code base:

* kinds: SYM ~35 %, MOD ~25 %, TSK ~15 %, DEC ~8 %, REQ ~7 %, DOC ~6 %,
  PKG ~4 %, and a handful (5) of LAW nodes;
* a containment tree PKG -CONTAINS-> MOD -CONTAINS-> SYM (plus PKG -> PKG,
  PKG -> DOC and REQ -> REQ), and the other edge types TOUCHES (TSK/DOC ->
  MOD/SYM), IMPORTS (MOD -> MOD, SYM -> SYM), SATISFIES (TSK/DEC -> REQ),
  GOVERNS (LAW/DEC -> PKG/MOD) and FOLLOWS (TSK -> TSK, DEC -> DEC), about
  three edges per node in all;
* skewed degrees: targets of IMPORTS, TOUCHES, CONTAINS-from-PKG and
  SATISFIES are drawn from preferential-attachment urns (probability ~
  degree + 1), five "core" modules get a fixed share of all imports and the
  five laws govern a fixed share of packages and modules, so a 1M-node session
  has hubs of thousands of edges while most nodes are leaves;
* property text: titles of 4-10 words drawn (Zipf) from a fixed vocabulary of
  3,000 words, about half of them carrying one project identifier
  ``<stem>_v<i>`` whose range grows with ``n`` (so an identifier occurs ~1-2
  times at every size: rare words stay rare); ~20 % of nodes have a ``body`` of
  100-300 characters; MOD paths, SYM names and REQ codes are unique.

The same ``(n_nodes, seed)`` always gives the same graph, the same handles and
the same sample queries, whichever way it is built: ``via='commit'`` sends
batches of 800 nodes (with their edges) as GQL text through
``Session.commit``; ``via='store'`` writes the same batches straight into
``Session.store`` (bypassing parse, plan, caps and history) in the same order,
so both give identical ids.

``meta`` holds sample queries for the benchmarks:

* ``match``: (label, q) pairs whose number of matches does not grow with the
  session (kind + key:value + rare identifier, ``MATCH (n:MOD {path: ...})``,
  unique names and codes, ``CONTAINS`` on a rare identifier);
* ``miss``: codebook tokens that match nothing (seeded by Peak_L);
* ``targets``: for each match label, the handle of the node the query was
  drawn from (it is always among the matches).

``small_delta`` and ``batch_delta`` make commit texts on top of a built
session (for commit-throughput figures).
"""

from __future__ import annotations

import random
import time
from array import array
from collections import Counter
from typing import Any

import memnet
from memnet.gql.emit import format_edge, format_node
from memnet.graph.store import node_handle
from memnet.session import DEFAULT_HISTORY

# Nodes per build commit. ~2,000 was the aim, but parse.py caps one Δ at
# MAX_DELTA_TOKENS = 50,000 lexer tokens (an edge line is ~14 of them, a node
# 12-60), and 2,000 nodes with their ~5,800 edges come to ~115,000; 800 nodes
# with their edges come to ~46,000.
BATCH = 800
N_LAWS = 5
N_CORE = 5
BIG_CAPS = memnet.Caps(rows=10**8, bytes=2**40)

# kind mix after the fixed prefix (LAW, root PKG, core MOD)
_KINDS = ("SYM", "MOD", "TSK", "DEC", "REQ", "DOC", "PKG")
_KIND_W = (0.35, 0.25, 0.15, 0.08, 0.07, 0.06, 0.04)

_REAL_WORDS = """
fix add remove update refactor rename migrate cache retry handle parse render validate
pricing cart checkout invoice payment refund tax discount coupon shipping order customer
account login session token auth password email notify webhook queue worker job schedule
report export import upload download search index filter sort page list detail form
button modal table chart graph node edge tree path route handler service client server
request response timeout error warning log metric trace span latency throughput memory
disk file stream buffer batch chunk record field column row schema model view controller
template style layout theme color font icon image video audio locale currency rate
limit quota plan tier subscription trial billing ledger balance transfer wallet card
bank fraud risk score rule policy audit compliance privacy consent cookie tracking event
analytics dashboard widget config setting flag feature toggle rollout release deploy build
test lint format check type stub mock fixture snapshot coverage benchmark profile debug
crash leak race lock mutex thread async await future promise callback signal slot hook
plugin adapter bridge proxy gateway router balancer cluster shard replica backup restore
sync merge diff patch commit branch tag version semver changelog readme docs guide
tutorial example sample demo prototype spike draft review approve reject comment mention
owner team member role permission group org tenant workspace project board sprint epic
story bug incident outage postmortem alert pager oncall runbook playbook sla slo
user admin guest anonymous bot api sdk cli gui web mobile desktop native hybrid
slow fast stale fresh broken flaky stable legacy modern deprecated unused dead hot cold
missing wrong duplicate empty null invalid expired pending failed blocked stuck partial
the a of to for in on with when after before during from into per via by
""".split()


def _vocabulary(size: int = 3_000) -> list[str]:
    """The common words: real ones first (the Zipf head), then pseudo-words.

    Fixed (independent of the session seed), so every session shares it.
    """
    rng = random.Random(9_137)
    words: list[str] = []
    seen: set[str] = set()
    for w in _REAL_WORDS:
        if w not in seen:
            seen.add(w)
            words.append(w)
    cons = "bcdfghjklmnprstvwxz"
    vows = "aeiou"
    while len(words) < size:
        w = "".join(
            rng.choice(cons) + rng.choice(vows) + (rng.choice(cons) if rng.random() < 0.4 else "")
            for _ in range(rng.randint(2, 3))
        )
        if w not in seen and w not in ("true", "false"):
            seen.add(w)
            words.append(w)
    return words


VOCAB = _vocabulary()
_ZIPF_CW: list[float] = []
_acc = 0.0
for _r in range(len(VOCAB)):
    _acc += 1.0 / (_r + 1) ** 1.07
    _ZIPF_CW.append(_acc)
del _acc, _r

STEMS = (
    "pricing",
    "cart",
    "invoice",
    "refund",
    "ledger",
    "quota",
    "tenant",
    "webhook",
    "checkout",
    "coupon",
    "shipping",
    "fraud",
    "billing",
    "wallet",
    "consent",
    "rollout",
    "shard",
    "replica",
    "search",
    "export",
    "report",
    "session",
    "token",
    "locale",
    "currency",
    "audit",
    "policy",
    "schedule",
    "worker",
    "gateway",
    "router",
    "metric",
    "trace",
    "snapshot",
    "fixture",
    "plugin",
    "adapter",
    "widget",
    "theme",
    "catalog",
)
_VERBS = (
    "Fix",
    "Add",
    "Remove",
    "Refactor",
    "Speed up",
    "Document",
    "Test",
    "Migrate",
    "Rename",
    "Split",
    "Merge",
    "Harden",
    "Review",
    "Cache",
    "Retry",
    "Validate",
)
_LAWS = (
    "Never ship on Fridays",
    "Every change to pricing needs a test that pins the old totals",
    "Money is an integer number of cents, never a float",
    "Public API changes need a decision record first",
    "Do not log personal data; mask emails and card numbers",
)
_TSK_STATUS = ("open",) * 35 + ("review",) * 15 + ("done",) * 50
_DEC_STATUS = ("accepted", "accepted", "proposed", "superseded")
_SYM_ROLE = ("function", "function", "function", "class", "method", "method", "const")


class Synth:
    """Generates the nodes and edges of one synthetic session, batch by batch.

    Node ids are predicted (the store mints 1, 2, 3, ... in creation order, and
    a commit creates its new nodes in the order written, then its edges), so a
    batch can name earlier nodes by handle.
    """

    def __init__(self, n_nodes: int, seed: int = 0) -> None:
        self.n = n_nodes
        self.rng = random.Random(seed)
        self.qrng = random.Random(seed * 7_919 + 17)  # sample picking only
        self.n_ident = max(64, n_nodes // 8)
        self.next_id = 1
        self.made = 0
        self.edges = 0
        self.kinds: Counter[str] = Counter()
        self.prefix: list[str] = ["LAW"] * N_LAWS + ["PKG"] * 3 + ["MOD"] * N_CORE
        # id lists per kind and preferential urns (id repeated once per incoming edge)
        self.ids: dict[str, array] = {k: array("I") for k in (*_KINDS, "LAW")}
        self.urn_mod = array("I")
        self.urn_pkg = array("I")
        self.urn_req = array("I")
        self.core: list[int] = []
        # reservoirs of sample targets: name -> [(id, payload)]
        self.res: dict[str, list[tuple[int, str]]] = {}
        self.res_seen: Counter[str] = Counter()
        self.seq = Counter()  # unique numbering per kind

    # -- text ---------------------------------------------------------------
    def words(self, k: int) -> list[str]:
        return self.rng.choices(VOCAB, cum_weights=_ZIPF_CW, k=k)

    def ident(self) -> str:
        i = self.rng.randrange(self.n_ident)
        return f"{STEMS[i % len(STEMS)]}_v{i}"

    def title(self) -> tuple[str, str | None]:
        w = self.words(self.rng.randint(3, 9))
        ident = None
        if self.rng.random() < 0.5:
            ident = self.ident()
            w.insert(self.rng.randrange(len(w) + 1), ident)
        return f"{self.rng.choice(_VERBS)} {' '.join(w)}", ident

    def body(self) -> str:
        target = self.rng.randint(100, 300)
        parts: list[str] = []
        size = 0
        while size < target:
            w = self.ident() if self.rng.random() < 0.02 else self.words(1)[0]
            parts.append(w)
            size += len(w) + 1
        text = " ".join(parts)[:target].rstrip()
        return text[0].upper() + text[1:] + "."

    def _keep(self, name: str, nid: int, payload: str, size: int = 48) -> None:
        """Reservoir-sample (nid, payload) into ``self.res[name]``."""
        seen = self.res_seen[name]
        self.res_seen[name] = seen + 1
        lst = self.res.setdefault(name, [])
        if len(lst) < size:
            lst.append((nid, payload))
        else:
            j = self.qrng.randrange(seen + 1)
            if j < size:
                lst[j] = (nid, payload)

    # -- graph --------------------------------------------------------------
    def _pick(self, urn: array) -> int:
        return urn[self.rng.randrange(len(urn))]

    def _any(self, kind: str) -> int | None:
        lst = self.ids[kind]
        return lst[self.rng.randrange(len(lst))] if lst else None

    def _recent(self, kind: str, window: int = 64) -> int | None:
        lst = self.ids[kind]
        if not lst:
            return None
        return lst[len(lst) - 1 - self.rng.randrange(min(window, len(lst)))]

    def next_kind(self) -> str:
        if self.made < len(self.prefix):
            return self.prefix[self.made]
        return self.rng.choices(_KINDS, weights=_KIND_W)[0]

    def node(self, edges: list[tuple[str, int, int]]) -> tuple[str, dict[str, Any]]:
        """Make the next node and append its edges (to earlier nodes) to ``edges``."""
        rng = self.rng
        nid = self.next_id
        kind = self.next_kind()
        self.next_id += 1
        self.made += 1
        self.kinds[kind] += 1
        seq = self.seq[kind]
        self.seq[kind] = seq + 1
        props: dict[str, Any]
        e0 = len(edges)

        def edge(t: str, a: int | None, b: int | None) -> None:
            if a is not None and b is not None and a != b:
                edges.append((t, a, b))

        if kind == "LAW":
            props = {"text": _LAWS[seq % len(_LAWS)], "since": 2020 + seq}
        elif kind == "PKG":
            parent = self._pick(self.urn_pkg) if self.urn_pkg and rng.random() < 0.7 else None
            stem = STEMS[rng.randrange(len(STEMS))]
            props = {"name": f"{stem}{seq}", "path": f"src/{stem}{seq}"}
            edge("CONTAINS", parent, nid)
            if rng.random() < 0.25:
                edge("GOVERNS", self._any("LAW"), nid)
            self.urn_pkg.append(nid)
            if parent is not None:
                self.urn_pkg.append(parent)
        elif kind == "MOD":
            pkg = self._pick(self.urn_pkg) if self.urn_pkg else None
            stem = STEMS[rng.randrange(len(STEMS))]
            path = f"src/{stem}/{self.words(1)[0]}_{seq}.py"
            props = {"path": path, "lang": "py", "loc": rng.randint(20, 2_000)}
            if rng.random() < 0.15:
                props["body"] = self.body()
            edge("CONTAINS", pkg, nid)
            if pkg is not None:
                self.urn_pkg.append(pkg)
            if len(self.core) < N_CORE:
                self.core.append(nid)
            elif self.urn_mod:
                for _ in range(rng.randint(3, 5)):
                    t = self._pick(self.urn_mod)
                    edge("IMPORTS", nid, t)
                    self.urn_mod.append(t)
                if rng.random() < 0.06:
                    edge("IMPORTS", nid, self.core[rng.randrange(N_CORE)])
            if rng.random() < 0.06:
                edge("GOVERNS", self._any("LAW"), nid)
            self.urn_mod.append(nid)
            self._keep("mod", nid, path)
        elif kind == "SYM":
            mod = self._any("MOD")
            name = f"{self.words(1)[0]}_{STEMS[rng.randrange(len(STEMS))]}_{seq}"
            props = {"name": name, "role": rng.choice(_SYM_ROLE), "line": rng.randint(1, 900)}
            edge("CONTAINS", mod, nid)
            if rng.random() < 0.5:
                edge("IMPORTS", nid, self._any("SYM"))
            self._keep("sym", nid, name)
        elif kind == "TSK":
            title, ident = self.title()
            status = rng.choice(_TSK_STATUS)
            props = {"title": title, "status": status, "prio": rng.randint(1, 4)}
            if status == "done" and rng.random() < 0.7:
                props["settled"] = True
            if rng.random() < 0.2:
                props["body"] = self.body()
            for _ in range(rng.randint(2, 5)):
                if rng.random() < 0.7 or not self.ids["SYM"]:
                    edge("TOUCHES", nid, self._pick(self.urn_mod) if self.urn_mod else None)
                else:
                    edge("TOUCHES", nid, self._any("SYM"))
            if rng.random() < 0.5:
                edge("FOLLOWS", nid, self._recent("TSK"))
            if rng.random() < 0.4 and self.urn_req:
                r = self._pick(self.urn_req)
                edge("SATISFIES", nid, r)
                self.urn_req.append(r)
            if ident is not None:
                self._keep(f"tsk_{status}", nid, ident)
                self._keep("tsk", nid, ident)
        elif kind == "DEC":
            title, ident = self.title()
            props = {"title": title, "status": rng.choice(_DEC_STATUS)}
            if rng.random() < 0.6:
                props["body"] = self.body()
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.7 and self.urn_mod:
                    edge("GOVERNS", nid, self._pick(self.urn_mod))
                elif self.urn_pkg:
                    edge("GOVERNS", nid, self._pick(self.urn_pkg))
            if rng.random() < 0.3:
                edge("FOLLOWS", nid, self._recent("DEC"))
            if rng.random() < 0.3 and self.urn_req:
                edge("SATISFIES", nid, self._pick(self.urn_req))
            if ident is not None:
                self._keep("dec", nid, ident)
        elif kind == "REQ":
            title, _ident = self.title()
            code = f"REQ-{seq:06d}"
            props = {"code": code, "title": title, "prio": rng.randint(1, 3)}
            if rng.random() < 0.5:
                edge("CONTAINS", self._recent("REQ", 256), nid)
            self.urn_req.append(nid)
            self._keep("req", nid, code)
        else:  # DOC
            title, ident = self.title()
            props = {
                "title": title,
                "path": f"docs/{self.words(1)[0]}_{seq}.md",
                "body": self.body(),
            }
            for _ in range(rng.randint(1, 3)):
                edge("TOUCHES", nid, self._pick(self.urn_mod) if self.urn_mod else None)
            if rng.random() < 0.5:
                edge("CONTAINS", self._any("PKG"), nid)
            if ident is not None:
                self._keep("doc", nid, ident)
        self.ids[kind].append(nid)
        self.edges += len(edges) - e0
        return kind, props

    def batch(
        self, count: int
    ) -> tuple[int, list[tuple[str, dict[str, Any]]], list[tuple[str, int, int]]]:
        """(id of the first node, nodes, edges) for the next ``count`` nodes."""
        first = self.next_id
        nodes: list[tuple[str, dict[str, Any]]] = []
        edges: list[tuple[str, int, int]] = []
        for _ in range(count):
            nodes.append(self.node(edges))
        return first, nodes, edges

    # -- samples --------------------------------------------------------------
    def samples(self) -> dict[str, Any]:
        q = self.qrng
        res = self.res

        def pick(*names: str) -> tuple[int, str]:
            for name in names:
                if res.get(name):
                    return res[name][q.randrange(len(res[name]))]
            raise RuntimeError(f"no sample for {names}")  # pragma: no cover

        match: list[tuple[str, str]] = []
        targets: dict[str, str] = {}

        def add(label: str, query: str, nid: int) -> None:
            match.append((label, query))
            targets[label] = node_handle(nid)

        nid, ident = pick("tsk_open", "tsk")
        add("tsk-open-ident", f"TSK status:open {ident}", nid)
        nid, path = pick("mod")
        add("mod-path", f"MATCH (n:MOD {{path: '{path}'}})", nid)
        nid, name = pick("sym")
        add("sym-name", f"SYM name:{name}", nid)
        nid, code = pick("req")
        add("req-code", f"REQ code:{code}", nid)
        nid, ident = pick("tsk")
        add("tsk-contains", f"MATCH (n:TSK) WHERE n.title CONTAINS '{ident}' LIMIT 3", nid)
        nid, ident = pick("dec", "doc")
        add("dec-ident", f"DEC {ident}", nid)
        nid, ident = pick("doc", "dec")
        add("doc-ident", f"DOC {ident}", nid)
        nid, ident = pick("tsk_review", "tsk")
        add("tsk-review-ident", f"TSK {ident} status:review", nid)
        miss = [
            ("miss-keyword", "TSK zqx_no_such_thing"),
            ("miss-path", "MOD path:'nowhere/void.py'"),
            ("miss-bare", "quasar_nebula_x"),
            ("miss-two", "DEC wibble_v0x flux_capacitor"),
        ]
        return {"match": match, "miss": miss, "targets": targets}


# ------------------------------------------------------------------ build


def _delta_text(
    first: int, nodes: list[tuple[str, dict[str, Any]]], edges: list[tuple[str, int, int]]
) -> str:
    def ref(i: int) -> str:
        return f"v{i - first}" if i >= first else node_handle(i)

    parts = [format_node(f"v{j}", (kind,), props) for j, (kind, props) in enumerate(nodes)]
    parts.extend(format_edge(None, t, ref(a), ref(b)) for t, a, b in edges)
    return "INSERT " + ",\n  ".join(parts)


def _commit_split(
    s: memnet.Session,
    first: int,
    nodes: list[tuple[str, dict[str, Any]]],
    edges: list[tuple[str, int, int]],
    text: str | None = None,
) -> int:
    """Commit one batch; over the Δ cap, commit it as two halves (nodes of each
    half with the edges whose later end is in that half), recursively. Returns
    the number of splits (after a split, edge ids differ from ``via='store'``)."""
    try:
        s.commit(text if text is not None else _delta_text(first, nodes, edges))
        return 0
    except memnet.InputTooLarge:
        if len(nodes) < 2:
            raise
    h = len(nodes) // 2
    cut = first + h
    ea = [x for x in edges if max(x[1], x[2]) < cut]
    eb = [x for x in edges if max(x[1], x[2]) >= cut]
    return 1 + _commit_split(s, first, nodes[:h], ea) + _commit_split(s, cut, nodes[h:], eb)


def build(
    n_nodes: int,
    seed: int = 0,
    *,
    via: str = "commit",
    history_limit: int | None = DEFAULT_HISTORY,
    batch: int = BATCH,
    progress: Any = None,
    session: memnet.Session | None = None,
) -> tuple[memnet.Session, dict[str, Any]]:
    """A deterministic synthetic session of ``n_nodes`` nodes and its sample queries.

    ``via='commit'`` builds through ``Session.commit`` in batches of ``batch``
    nodes (a batch over the Δ token cap is split in two commits); ``via='store'``
    writes the same batches through ``Session.store``.
    ``history_limit`` is passed to the Session (commit records kept in memory).
    ``progress(done, total)`` is called after each batch when given. ``session``
    is an empty session to build in (one a cabinet created, say; give it
    ``BIG_CAPS``) instead of a new one.
    """
    if via not in ("commit", "store"):
        raise ValueError("via must be 'commit' or 'store'")
    s = session or memnet.Session(
        f"synth-{n_nodes}-{seed}", caps=BIG_CAPS, history_limit=history_limit
    )
    g = Synth(n_nodes, seed)
    t0 = time.perf_counter()
    gen_s = 0.0
    done = 0
    splits = 0
    while done < n_nodes:
        count = min(batch, n_nodes - done)
        tg = time.perf_counter()
        first, nodes, edges = g.batch(count)
        if via == "commit":
            text = _delta_text(first, nodes, edges)
            gen_s += time.perf_counter() - tg
            splits += _commit_split(s, first, nodes, edges, text)
        else:
            gen_s += time.perf_counter() - tg
            st = s.store
            for kind, props in nodes:
                st.add_node(kind, (), props, None)
            for t, a, b in edges:
                st.add_edge(t, a, b, None)
        done += count
        if progress is not None:
            progress(done, n_nodes)
    total_s = time.perf_counter() - t0
    assert s.store.next_node == g.next_id, "id prediction drifted"
    meta = g.samples()
    meta.update(
        nodes=s.store.live_nodes,
        edges=s.store.live_edges,
        via=via,
        seed=seed,
        build_s=total_s,
        gen_s=gen_s,
        kinds=dict(g.kinds),
        n_ident=g.n_ident,
        history_limit=history_limit,
        batch=batch,
        splits=splits,
    )
    return s, meta


# ------------------------------------------------------------------ deltas on a built session


def _live_pick(store: Any, rng: random.Random, kind: str | None = None) -> int:
    if kind is not None:
        post = store.index.kind(kind)
        while True:
            nid = post[rng.randrange(len(post))]
            if not store.node_recycled(nid):
                return nid
    while True:
        nid = rng.randrange(1, store.next_node)
        if not store.node_recycled(nid):
            return nid


def small_delta(session: memnet.Session, rng: random.Random) -> str:
    """One new task touching two existing live nodes (1 node + 2 edges)."""
    g = _TEXT
    g.rng = rng
    title, _ = g.title()
    st = session.store
    a = _live_pick(st, rng, "MOD")
    b = _live_pick(st, rng)
    node = format_node("t", ("TSK",), {"title": title, "status": "open", "prio": rng.randint(1, 4)})
    return (
        f"INSERT {node},\n  (t)-[:TOUCHES]->({node_handle(a)}),\n"
        f"  (t)-[:TOUCHES]->({node_handle(b)})"
    )


def batch_delta(session: memnet.Session, count: int, rng: random.Random) -> str:
    """``count`` new nodes (the usual kind mix, no LAW) with ~3 edges each, to
    existing live nodes and to each other."""
    g = _TEXT
    g.rng = rng
    st = session.store
    parts: list[str] = []
    edges: list[str] = []
    new_by_kind: dict[str, list[int]] = {}

    def target(kind: str) -> str:
        own = new_by_kind.get(kind)
        if own and rng.random() < 0.2:
            return f"v{own[rng.randrange(len(own))]}"
        return node_handle(_live_pick(st, rng, kind))

    for j in range(count):
        kind = rng.choices(_KINDS, weights=_KIND_W)[0]
        if kind in ("TSK", "DEC", "DOC", "REQ"):
            title, _ = g.title()
            props: dict[str, Any] = {"title": title}
            if kind == "TSK":
                props.update(status=rng.choice(_TSK_STATUS), prio=rng.randint(1, 4))
            if kind == "REQ":
                props["code"] = f"REQ-X{j:05d}-{rng.randrange(10**6)}"
            if kind in ("DOC", "DEC") or rng.random() < 0.2:
                props["body"] = g.body()
        elif kind == "MOD":
            props = {
                "path": f"src/new/{g.words(1)[0]}_{j}_{rng.randrange(10**6)}.py",
                "lang": "py",
                "loc": rng.randint(20, 2_000),
            }
        elif kind == "SYM":
            props = {
                "name": f"{g.words(1)[0]}_{j}_{rng.randrange(10**6)}",
                "role": "function",
                "line": rng.randint(1, 900),
            }
        else:
            props = {"name": f"pkg_{j}_{rng.randrange(10**6)}", "path": f"src/pkg_{j}"}
        parts.append(format_node(f"v{j}", (kind,), props))
        me = f"v{j}"
        plan = {
            "SYM": (
                ("CONTAINS", "MOD", True),
                ("IMPORTS", "SYM", False),
                ("IMPORTS", "SYM", False),
            ),
            "MOD": (
                ("CONTAINS", "PKG", True),
                ("IMPORTS", "MOD", False),
                ("IMPORTS", "MOD", False),
            ),
            "TSK": (
                ("TOUCHES", "MOD", False),
                ("TOUCHES", "SYM", False),
                ("SATISFIES", "REQ", False),
            ),
            "DEC": (
                ("GOVERNS", "MOD", False),
                ("FOLLOWS", "DEC", False),
                ("SATISFIES", "REQ", False),
            ),
            "REQ": (
                ("CONTAINS", "REQ", True),
                ("CONTAINS", "REQ", True),
                ("CONTAINS", "REQ", True),
            ),
            "DOC": (
                ("TOUCHES", "MOD", False),
                ("TOUCHES", "MOD", False),
                ("CONTAINS", "PKG", True),
            ),
            "PKG": (("CONTAINS", "PKG", True), ("GOVERNS", "LAW", True), ("CONTAINS", "PKG", True)),
        }[kind]
        for etype, other_kind, incoming in plan:
            other = target(other_kind)
            edges.append(
                f"({other})-[:{etype}]->({me})" if incoming else f"({me})-[:{etype}]->({other})"
            )
        new_by_kind.setdefault(kind, []).append(j)
    return "INSERT " + ",\n  ".join(parts + edges)


_TEXT = Synth(1_000_000, 0)  # text helpers only (its rng is replaced per call)

__all__ = ["BATCH", "BIG_CAPS", "STEMS", "Synth", "VOCAB", "batch_delta", "build", "small_delta"]
