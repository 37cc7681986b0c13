"""Cabinet figures at 1k, 100k and 1M nodes: LMDB, and PostgreSQL beside it.

For each size, on a synthetic session from ``synth.py`` (built straight into
the store, then adopted by a new cabinet in one write, in one process; the
rest is measured in a second, fresh process, as a user opening the cabinet
later would see it):

* adopt: the first write of the whole session;
* hydrate: ``Cabinet.open(sid)`` of the whole session (records → memory), in a
  process that has done nothing else;
* flush of a one-node change: ``SET`` on one node, then ``flush`` (median of
  many), for a random node and for a node whose neighbours are all small (a
  change next to a hub rewrites the hub's adjacency record, because the
  order of its neighbours moved);
* flush of a 1,000-element change: about 250 nodes with their ~750 edges
  (median, and the mean, which includes the flushes that fold the pending
  index deltas into the postings);
* bytes on disk per node: pages LMDB uses (last page number × page size) and
  the size of ``data.mdb``, divided by the nodes.

The ratios at the end compare against the 1k figures of the same run.

With ``--backend postgres`` every size is also adopted into a PostgreSQL
cabinet (a schema of its own) and measured the same way, in its own fresh
process; the table puts both back ends side by side with the PostgreSQL/LMDB
ratios, and the targets of issue 13 are checked. After the PostgreSQL adopt
the tables are vacuumed and analysed and a checkpoint is taken, so the figures
are those of a cabinet in use, not of one still digesting its bulk load.
Without ``--url`` the script
starts a throwaway server like the tests do (``tests/pgserver.py``, fsync on,
so a flush is as durable as LMDB's ``sync=True``; 256 MB of shared buffers,
a modest production setting, where LMDB reads through the whole page cache)
and removes it at the end.

    python bench/cabinet.py [--sizes 1000,100000,1000000] [--repeat 30]
    python bench/cabinet.py --backend postgres [--url postgresql://...] [--sizes 1000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _build(n: int, d: str, url: str | None = None) -> dict[str, float]:
    """Build the synthetic session and adopt it into a new cabinet at ``d``
    (and, given ``url``, into a PostgreSQL cabinet there)."""
    sys.path.insert(0, HERE)
    import synth  # type: ignore[import-not-found]

    from memnet import Cabinet
    from memnet.cabinet.binding import unbind

    out: dict[str, float] = {"nodes": n}
    t = time.perf_counter()
    s, meta = synth.build(n, via="store")
    out["build_s"] = time.perf_counter() - t
    out["edges"] = s.store.live_edges
    for key, where in (("adopt_s", d), ("pg_adopt_s", url)):
        if where is None:
            continue
        cab = Cabinet.open(where, sync=True)
        unbind(s)  # adopt the same in-memory session again
        t = time.perf_counter()
        cab.adopt(s)
        out[key] = time.perf_counter() - t
        cab.close()
    if url is not None:
        _settle(url)
    return out


def _settle(url: str) -> None:
    """After the bulk load, let the server reach the state a cabinet in use is
    in: statistics gathered and the load's dirty pages written out (VACUUM
    ANALYZE, CHECKPOINT), so the flushes measured next do not race the
    autovacuum and checkpoint work the load started."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("catalog", "nodes", "edges", "log", "postings"):
            conn.execute(f"VACUUM (ANALYZE) memnet_{table}")  # type: ignore[arg-type]
        try:
            conn.execute("CHECKPOINT")
        except psycopg.Error:  # needs superuser or pg_checkpoint: skip on a shared server
            pass


def _one_size(n: int, repeat: int, d: str) -> dict[str, float]:
    sys.path.insert(0, HERE)
    import synth  # type: ignore[import-not-found]

    from memnet import Cabinet
    from memnet.graph.store import node_handle

    out: dict[str, float] = {}
    cab = Cabinet.open(d, sync=True)
    t = time.perf_counter()
    s = cab.open(meta_sid(n))
    out["hydrate_s"] = time.perf_counter() - t
    st = s.store
    adjacency = st.view().adjacency
    rng = random.Random(7)

    def degree(nid: int) -> int:
        return len(adjacency[nid])

    def flush_one(pick) -> float:
        times = []
        for i in range(repeat):
            nid = pick()
            s.commit(f"SET {node_handle(nid)}.bench = {i}")
            t0 = time.perf_counter()
            cab.flush(s)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def random_node() -> int:
        while True:
            nid = rng.randrange(1, st.next_node)
            if not st.node_recycled(nid):
                return nid

    def quiet_node() -> int:
        while True:
            nid = random_node()
            if all(degree(o) < 64 for _e, _d, o in st.live_entries(nid)):
                return nid

    out["flush1_random_ms"] = flush_one(random_node) * 1e3
    out["flush1_quiet_ms"] = flush_one(quiet_node) * 1e3
    times = []
    for _ in range(max(8, repeat // 3)):
        s.commit(synth.batch_delta(s, 250, rng))
        t0 = time.perf_counter()
        cab.flush(s)
        times.append(time.perf_counter() - t0)
    out["flush1000_ms"] = statistics.median(times) * 1e3
    out["flush1000_mean_ms"] = statistics.fmean(times) * 1e3
    if cab.kv.name == "postgres":
        import psycopg

        with psycopg.connect(d) as conn:
            size = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                "AND c.relkind = 'r' AND c.relname LIKE 'memnet_%'"
            ).fetchone()[0]
        out["disk_used_b_per_node"] = out["disk_file_b_per_node"] = int(size) / n
    else:
        info = cab.kv.env.info()  # type: ignore[attr-defined]
        stat = cab.kv.env.stat()  # type: ignore[attr-defined]
        out["disk_used_b_per_node"] = (info["last_pgno"] + 1) * stat["psize"] / n
        out["disk_file_b_per_node"] = os.path.getsize(os.path.join(d, "data.mdb")) / n
    t = time.perf_counter()
    cab.verify()
    out["verify_s"] = time.perf_counter() - t
    cab.close()
    return out


def meta_sid(n: int) -> str:
    return f"synth-{n}-0"


def _step(env: dict[str, str], *args: str) -> dict[str, float]:
    """Run this script with ``args`` in a fresh process; its last line is JSON."""
    p = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(p.stderr)
        raise SystemExit(p.returncode)
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


class _Postgres:
    """Where the PostgreSQL cabinets of this run live: a schema per size on the
    server at ``url``, or on a throwaway server started here (fsync on)."""

    def __init__(self, url: str | None) -> None:
        self.server = None
        if url is None:
            sys.path.insert(0, os.path.dirname(HERE))
            from tests.pgserver import PgServer

            self.server = PgServer(fsync=True, shared_buffers="256MB")
            self.server.start()
            url = self.server.url("postgres")
        self.url = url
        self.schemas: list[str] = []

    def _sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def cabinet_url(self, n: int) -> str:
        schema = f"memnet_bench_{os.getpid()}_{n}"
        self._sql(f"CREATE SCHEMA {schema}")
        self.schemas.append(schema)
        return self.url + ("&" if "?" in self.url else "?") + f"options=-csearch_path%3D{schema}"

    def close(self) -> None:
        for schema in self.schemas:
            try:
                self._sql(f"DROP SCHEMA {schema} CASCADE")
            except Exception:  # noqa: BLE001 - the server may be gone already
                pass
        if self.server is not None:
            self.server.cleanup()


def _print_size(r: dict[str, float], pre: str, label: str) -> None:
    print(
        f"   {label}: adopt {r[pre + 'adopt_s']:.2f} s; hydrate {r[pre + 'hydrate_s']:.2f} s; "
        f"verify {r[pre + 'verify_s']:.2f} s"
    )
    print(
        f"   {label}: flush one-node change: random node {r[pre + 'flush1_random_ms']:.2f} "
        f"ms, node with small neighbours {r[pre + 'flush1_quiet_ms']:.2f} ms; "
        f"1,000-element change {r[pre + 'flush1000_ms']:.1f} ms (mean "
        f"{r[pre + 'flush1000_mean_ms']:.1f} ms with the folds of pending index deltas)"
    )
    print(
        f"   {label}: disk per node: {r[pre + 'disk_used_b_per_node']:,.0f} B used, "
        f"{r[pre + 'disk_file_b_per_node']:,.0f} B file",
        flush=True,
    )


def _lmdb_summary(rows: list[dict[str, float]]) -> None:
    base = rows[0]
    print("\n== summary (ratios against the first size of this run) ==")
    for r in rows:
        print(
            f"{int(r['nodes']):>10,}  hydrate {r['hydrate_s']:7.2f} s  "
            f"flush1 random {r['flush1_random_ms'] / base['flush1_random_ms']:6.2f}x  "
            f"flush1 quiet {r['flush1_quiet_ms'] / base['flush1_quiet_ms']:6.2f}x  "
            f"flush1000 {r['flush1000_ms'] / base['flush1000_ms']:6.2f}x"
        )
    big = rows[-1]
    if big["nodes"] >= 1_000_000:
        verdict = "PASS" if big["hydrate_s"] < 10 else "MISS"
        print(
            f"{verdict} hydrate of {int(big['nodes']):,} nodes under 10 s: "
            f"{big['hydrate_s']:.2f} s = {big['hydrate_s'] / 10:.2f}x the target"
        )
        ratio = big["flush1_quiet_ms"] / base["flush1_quiet_ms"]
        verdict = "PASS" if ratio <= 2 else "MISS"
        print(
            f"{verdict} one-node flush at {int(big['nodes']):,} within 2x of "
            f"{int(base['nodes']):,}: {ratio:.2f}x (node with small neighbours); random node "
            f"{big['flush1_random_ms'] / base['flush1_random_ms']:.2f}x"
        )


PG_KEYS = (
    ("hydrate_s", "hydrate s", ".3f"),
    ("flush1_random_ms", "flush1 random ms", ".2f"),
    ("flush1_quiet_ms", "flush1 quiet ms", ".2f"),
    ("flush1000_ms", "flush1000 ms", ".1f"),
    ("adopt_s", "adopt s", ".2f"),
    ("disk_used_b_per_node", "disk B/node", ",.0f"),
)


def _postgres_summary(rows: list[dict[str, float]]) -> None:
    print("\n== PostgreSQL beside LMDB (same sessions, same run; ratio = postgres / lmdb) ==")
    print(f"{'nodes':>10}  {'':8}" + "".join(f"{h:>18}" for _k, h, _f in PG_KEYS))
    for r in rows:
        for label, pre in (("lmdb", ""), ("postgres", "pg_")):
            print(
                f"{int(r['nodes']):>10,}  {label:8}"
                + "".join(f"{r[pre + k]:>18{f}}" for k, _h, f in PG_KEYS)
            )
        print(
            f"{'':>10}  {'ratio':8}"
            + "".join(f"{r['pg_' + k] / r[k]:>17.2f}x" for k, _h, _f in PG_KEYS)
        )
    base = rows[0]
    for r in rows:
        if r["nodes"] < 100_000:
            continue
        n = f"{int(r['nodes']):,}"
        ratio = r["pg_hydrate_s"] / r["hydrate_s"]
        print(
            f"{'PASS' if ratio <= 2 else 'MISS'} hydrate of {n} nodes within 2x of LMDB: "
            f"{r['pg_hydrate_s']:.2f} s = {ratio:.2f}x"
        )
        for kind in ("random", "quiet"):
            ms = r[f"pg_flush1_{kind}_ms"]
            rel = ms / base[f"pg_flush1_{kind}_ms"]
            print(
                f"{'PASS' if ms <= 5 and rel <= 1.5 else 'MISS'} one-node flush ({kind} node) "
                f"at {n} <= 5 ms and within 1.5x of {int(base['nodes']):,}: {ms:.2f} ms, "
                f"{rel:.2f}x"
            )
        ms = r["pg_flush1000_ms"]
        print(f"{'PASS' if ms <= 50 else 'MISS'} 1,000-element flush at {n} <= 50 ms: {ms:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes",
        default=None,
        help="comma-separated node counts (default 1000,100000,1000000; "
        "1000,100000 with --backend postgres)",
    )
    ap.add_argument("--repeat", type=int, default=60, help="one-node flushes per figure")
    ap.add_argument(
        "--backend",
        choices=("lmdb", "postgres"),
        default="lmdb",
        help="lmdb (default), or postgres: PostgreSQL measured beside LMDB",
    )
    ap.add_argument(
        "--url",
        default=None,
        help="with --backend postgres: the server to use (a schema per size is "
        "created and dropped); default: start a throwaway server",
    )
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--build", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--pg", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build:
        print(json.dumps(_build(args.build, args.dir, args.pg)))
        return
    if args.one:
        print(json.dumps(_one_size(args.one, args.repeat, args.dir)))
        return
    pg = _Postgres(args.url) if args.backend == "postgres" else None
    sizes = args.sizes or ("1000,100000" if pg else "1000,100000,1000000")
    env = dict(
        os.environ, PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    rows = []
    try:
        for n in (int(x) for x in sizes.split(",")):
            print(f"== {n:,} nodes ...", flush=True)
            d = tempfile.mkdtemp(prefix="memnet-bench-cab-")
            url = pg.cabinet_url(n) if pg else None
            try:
                r = _step(env, "--build", str(n), "--dir", d, *(["--pg", url] if url else []))
                one = ["--one", str(n), "--repeat", str(args.repeat)]
                r.update(_step(env, *one, "--dir", d))
                if url:
                    r.update({"pg_" + k: v for k, v in _step(env, *one, "--dir", url).items()})
            finally:
                shutil.rmtree(d, ignore_errors=True)
            rows.append(r)
            print(f"   {int(r['edges']):,} edges; build {r['build_s']:.1f} s (store)")
            _print_size(r, "", "lmdb")
            if url:
                _print_size(r, "pg_", "postgres")
    finally:
        if pg:
            pg.close()
    if pg:
        _postgres_summary(rows)
    else:
        _lmdb_summary(rows)


if __name__ == "__main__":
    main()
