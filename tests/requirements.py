"""The requirement ids MN-VER tests may name, until sysml-models/ holds them.

Each id is a promise of SPEC.md; a test verifies one by carrying
``@pytest.mark.req("MN-REQ-..")``.
"""

REQUIREMENTS: dict[str, str] = {
    "MN-REQ-00": "few LLM tokens to fetch and to maintain: exact token count, default Shape <= 4k, alarm past 8k",
    "MN-REQ-01": "bounded by the ask: rows <= M, seeds <= L, hops <= k, fan-out clamp, one M per Shape",
    "MN-REQ-02": "deterministic: same q on the same version gives byte-identical text, ordered by observables",
    "MN-REQ-03": "atomic Commit: all of a delta or none of it; a refused delta leaves the session unchanged",
    "MN-REQ-04": "writeback is NEW/SET only: echoing recalled rows is refused",
    "MN-REQ-05": "recycled elements stay in history but are never emitted, walked or counted",
    "MN-REQ-06": "seeding: MATCH_L from indexes, nickname, Peak_L only on a codebook miss, outline on empty q, skip on empty seed",
    "MN-REQ-07": "one GQL family: emitted Shapes parse back to the same graph",
    "MN-REQ-08": "input safety: size and depth caps, errors with line and column, no runaway parse",
    "MN-REQ-09": "rate cap R: a Commit past the cap is refused with advice to start a new session",
    "MN-REQ-10": "isolation: session ids are validated storage boundaries",
    "MN-REQ-11": "LAW nodes ride along in every Shape and count against M",
    "MN-REQ-12": "TSK semantics: SETTLE ends a task, delete_on_settle recycles it",
    "MN-REQ-13": "every Commit is a new version kept in history",
    "MN-REQ-13.1": "RecallCommit: exactly two goldfish verbs, Recall(q) -> Shape and Commit(delta) -> ids",
    "MN-REQ-14": "nothing lost: flushed versions survive a crash, reopen is bounded, backups are complete",
    "MN-REQ-14.1": "compare-and-swap flush: a stale writer gets conflict and writes nothing",
    "MN-REQ-14.2": "a flush writes only what changed",
    "MN-REQ-14.3": "storage faults are typed errors that write nothing",
    "MN-REQ-15": "errors: one root, stable codes",
}
