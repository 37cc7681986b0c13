"""Many processes on one cabinet: opens racing writers, creates racing creates.

For each back end (LMDB, and PostgreSQL on a throwaway server like the tests
start, fsync on), three parts:

1. **race**: ``--procs`` processes (default 8) for ``--seconds`` (default 60)
   each loop over four operations, every one on a cabinet opened for it and
   closed after it (so every LMDB open runs the checks made before the data
   file is mapped, while the other processes write): *flush* (hydrate the
   process's own session, commit one node tagged with the next version,
   flush; the version is counted as acknowledged when ``flush`` returns),
   *create* (a new session), *drop* (one the process created) and *list*
   (``sessions()``). At the end every acknowledged version must be stored,
   each session whole (exactly the nodes tagged 1 to its version), the
   sessions each process created and did not drop must be listed, and
   ``verify()`` must pass. Nothing damages the cabinet, so every
   ``cabinet_corrupt`` is a false alarm.
2. **creates**: the processes each create ``--creates`` sessions (default 250)
   as fast as they can on one open cabinet: failed creates, and on PostgreSQL
   the transactions the server rolled back against those it committed
   (``pg_stat_database``: serialization failures rerun a transaction).
3. **open**: the time of ``Cabinet.open`` then ``close``, on a cabinet of ``--small``
   (default 100) sessions and one of ``--large`` (default 20,000), timed
   interleaved in one process (median of ``--opens``), with the bytes the
   process read per open (``/proc/self/io`` rchar, LMDB) or the catalog rows
   the server read per open (``pg_stat_user_tables``, PostgreSQL). On LMDB a
   third cabinet has ``--small`` sessions holding as many bytes as the large
   one: an LMDB open checks the branch pages of the whole file (about 1 % of
   it), so its time follows the size of the file, and this one tells the
   number of sessions apart from the size.

Targets (issue 35): 0 false ``cabinet_corrupt``, 0 failed creates, 0
acknowledged flushes lost; an open at 20,000 sessions within 1.2x of one at
100. The script prints figures and a PASS/MISS line per target; it never
asserts.

    python bench/cabinet_race.py [--backends lmdb,postgres] [--seconds 60] [--procs 8]
                                 [--creates 250] [--large 20000] [--opens 40]
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import memnet  # noqa: E402
from memnet import Cabinet, MemNetError  # noqa: E402

_CTX = mp.get_context("fork")


# -- part 1: the race ---------------------------------------------------------------------
def _racer(where: str, me: int, seconds: float, seed: int, out: Any) -> None:
    """Loop over flush, create, drop and list until ``seconds`` have passed;
    put the counts, the last acknowledged version and the sessions left
    created on ``out``."""
    rng = random.Random(seed)
    sid = f"w{me}"
    acked = 0
    made: list[str] = []
    counts: collections.Counter[str] = collections.Counter()
    errors: collections.Counter[str] = collections.Counter()
    samples: dict[str, str] = {}
    k = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r = rng.random()
        op = "flush" if r < 0.4 else "create" if r < 0.6 else "drop" if r < 0.75 else "list"
        if op == "drop" and not made:
            op = "create"
        counts[op] += 1
        try:
            with Cabinet.open(where) as cab:
                if op == "flush":
                    s = cab.open(sid)
                    v = s.version + 1
                    s.commit(f"INSERT (t:TSK {{tag: 'v{v}', by: {me}}})")
                    cab.flush(s)
                    acked = v
                elif op == "create":
                    k += 1
                    cab.create(f"c{me}-{k}")
                    made.append(f"c{me}-{k}")
                elif op == "drop":
                    cab.drop(made.pop(rng.randrange(len(made))))
                else:
                    cab.sessions()
        except MemNetError as e:
            errors[f"{op} {e.code}"] += 1
            samples.setdefault(f"{op} {e.code}", str(e)[:300])
        except Exception as e:  # noqa: BLE001 - the kind of failure is the finding
            errors[f"{op} {type(e).__name__}"] += 1
            samples.setdefault(f"{op} {type(e).__name__}", str(e)[:300])
    out.put(
        {
            "me": me,
            "acked": acked,
            "made": made,
            "counts": dict(counts),
            "errors": dict(errors),
            "samples": samples,
        }
    )


def race(where: str, procs: int, seconds: float) -> dict[str, Any]:
    with Cabinet.open(where) as cab:
        for me in range(procs):
            cab.create(f"w{me}")
    out = _CTX.Queue()
    ps = [
        _CTX.Process(target=_racer, args=(where, me, seconds, 1000 + me, out))
        for me in range(procs)
    ]
    t0 = time.monotonic()
    for p in ps:
        p.start()
    results = [out.get() for _ in ps]
    for p in ps:
        p.join()
    took = time.monotonic() - t0
    counts: collections.Counter[str] = collections.Counter()
    errors: collections.Counter[str] = collections.Counter()
    samples: dict[str, str] = {}
    for r in results:
        counts.update(r["counts"])
        errors.update(r["errors"])
        for key, text in r["samples"].items():
            samples.setdefault(key, text)
    lost = []
    with Cabinet.open(where) as cab:
        listed = {i.id for i in cab.sessions()}
        for r in results:
            s = cab.open(f"w{r['me']}")
            tags = sorted(int(s.store.node_props(n)["tag"][1:]) for n in s.store.live_node_ids())
            if s.version != r["acked"] or tags != list(range(1, s.version + 1)):
                lost.append(
                    f"w{r['me']}: stored version {s.version}, acknowledged "
                    f"{r['acked']}, {len(tags)} nodes"
                )
            missing = set(r["made"]) - listed
            if missing:
                lost.append(
                    f"process {r['me']}: created and not dropped but not listed: "
                    f"{sorted(missing)[:3]}"
                )
        try:
            verified = cab.verify()
        except MemNetError as e:
            verified = {"error": f"{e.code}: {e}"}
    acked = sum(r["acked"] for r in results)
    return {
        "seconds": took,
        "counts": dict(counts),
        "errors": dict(errors),
        "samples": samples,
        "acked": acked,
        "lost": lost,
        "verify": verified,
    }


# -- part 2: creates ----------------------------------------------------------------------
def _creator(where: str, me: int, n: int, go: Any, out: Any) -> None:
    errors: collections.Counter[str] = collections.Counter()
    samples: dict[str, str] = {}
    with Cabinet.open(where) as cab:
        go.wait()
        for k in range(n):
            try:
                cab.create(f"m{me}-{k}")
            except MemNetError as e:
                errors[e.code] += 1
                samples.setdefault(e.code, str(e)[:300])
    out.put({"errors": dict(errors), "samples": samples})


def _pg_xacts(admin: str) -> tuple[int, int]:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit, xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def creates(where: str, procs: int, n: int, admin: str | None) -> dict[str, Any]:
    Cabinet.open(where).close()
    go = _CTX.Barrier(procs)
    out = _CTX.Queue()
    before = _pg_xacts(admin) if admin else None
    if admin:
        time.sleep(1.2)
        before = _pg_xacts(admin)
    ps = [_CTX.Process(target=_creator, args=(where, me, n, go, out)) for me in range(procs)]
    t0 = time.monotonic()
    for p in ps:
        p.start()
    results = [out.get() for _ in ps]
    for p in ps:
        p.join()
    took = time.monotonic() - t0
    errors: collections.Counter[str] = collections.Counter()
    samples: dict[str, str] = {}
    for r in results:
        errors.update(r["errors"])
        samples.update(r["samples"])
    figures: dict[str, Any] = {"seconds": took, "errors": dict(errors), "samples": samples}
    with Cabinet.open(where) as cab:
        figures["listed"] = sum(1 for i in cab.sessions() if i.id.startswith("m"))
    if admin and before is not None:
        time.sleep(1.2)  # backends report their counts at most once a second
        after = _pg_xacts(admin)
        figures["commits"] = after[0] - before[0]
        figures["rollbacks"] = after[1] - before[1]
    return figures


# -- part 3: open time --------------------------------------------------------------------
def _rchar() -> int:
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def _catalog_reads(admin: str, schema: str) -> int:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
            "FROM pg_stat_user_tables WHERE schemaname = %s "
            "AND relname = 'memnet_catalog'",
            (schema,),
        ).fetchone()
    return int(row[0]) if row else 0


def _fill(where: str, n: int) -> None:
    with Cabinet.open(where, sync=False) as cab:
        have = len(cab.sessions())
        for k in range(have, n):
            cab.create(f"s{k}")


def _fill_heavy(where: str, n: int, size: int) -> None:
    """``n`` sessions whose records fill ``size`` bytes of ``data.mdb``."""
    with Cabinet.open(where, sync=False) as cab:
        text = "words of a long title " * 12
        k = 0
        while os.path.getsize(os.path.join(where, "data.mdb")) < size:
            sid = f"h{k % n}"
            s = cab.open(sid) if cab.exists(sid) else cab.create(sid)
            s.commit(
                "INSERT " + ", ".join(f"(t{i}:TSK {{title: '{text}{k} {i}'}})" for i in range(200))
            )
            cab.flush(s)
            k += 1


def open_time(
    cabinets: dict[str, str], opens: int, admin: str | None, schemas: tuple[str, str] | None
) -> dict[str, Any]:
    times: dict[str, list[float]] = {name: [] for name in cabinets}
    read: dict[str, int] = dict.fromkeys(cabinets, 0)
    rows: dict[str, int] = {}
    for where in cabinets.values():  # warm the page cache
        Cabinet.open(where).close()
    if admin and schemas:
        time.sleep(1.2)
        rows = {
            "small": _catalog_reads(admin, schemas[0]),
            "large": _catalog_reads(admin, schemas[1]),
        }
    for _ in range(opens):
        for name, where in cabinets.items():
            r0 = _rchar()
            t0 = time.perf_counter()
            Cabinet.open(where).close()
            times[name].append(time.perf_counter() - t0)
            read[name] += _rchar() - r0
    out: dict[str, Any] = {f"{k}_ms": statistics.median(v) * 1e3 for k, v in times.items()}
    out.update({f"{k}_bytes_read": read[k] / opens for k in read})
    if admin and schemas:
        time.sleep(1.2)
        out["small_catalog_rows"] = (_catalog_reads(admin, schemas[0]) - rows["small"]) / opens
        out["large_catalog_rows"] = (_catalog_reads(admin, schemas[1]) - rows["large"]) / opens
    return out


# -- driver ---------------------------------------------------------------------------------
class _Postgres:
    """A throwaway server (fsync on) and a schema per cabinet on it."""

    def __init__(self) -> None:
        from tests.pgserver import PgServer

        self.server = PgServer(fsync=True, shared_buffers="256MB", max_connections="100")
        self.server.start()
        self.admin = self.server.create_database("race")

    def cabinet(self, schema: str) -> str:
        self.server.sql(f"CREATE SCHEMA {schema}", "race")
        return self.admin + f"?options=-csearch_path%3D{schema}"

    def close(self) -> None:
        self.server.cleanup()


def _print_errors(errors: dict[str, int], samples: dict[str, str]) -> None:
    for key, n in sorted(errors.items()):
        print(f"     {key:34} {n:>6}   e.g. {samples.get(key, '')[:160]}")


def run(backend: str, args: argparse.Namespace, work: str) -> list[tuple[str, bool]]:
    pg = _Postgres() if backend == "postgres" else None
    verdicts: list[tuple[str, bool]] = []

    def place(name: str) -> str:
        return pg.cabinet(name) if pg else os.path.join(work, f"{backend}-{name}")

    try:
        print(f"== {backend}: race, {args.procs} processes, {args.seconds:.0f} s", flush=True)
        r = race(place("race"), args.procs, args.seconds)
        print(
            f"   operations: {r['counts']} in {r['seconds']:.0f} s; acknowledged flushes "
            f"{r['acked']:,}; verify {r['verify']}"
        )
        _print_errors(r["errors"], r["samples"])
        for line in r["lost"]:
            print(f"   ! {line}")
        corrupt = sum(n for k, n in r["errors"].items() if k.endswith("cabinet_corrupt"))
        failed_creates = sum(n for k, n in r["errors"].items() if k.startswith("create"))
        verdicts += [
            (f"{backend} race: {corrupt} false cabinet_corrupt", corrupt == 0),
            (
                f"{backend} race: {failed_creates} failed creates of "
                f"{r['counts'].get('create', 0)}",
                failed_creates == 0,
            ),
            (
                f"{backend} race: {len(r['lost'])} losses of {r['acked']:,} acknowledged "
                f"flushes, verify {'clean' if 'error' not in r['verify'] else 'FAILED'}",
                not r["lost"] and "error" not in r["verify"],
            ),
        ]

        print(f"== {backend}: creates, {args.procs} processes x {args.creates}", flush=True)
        c = creates(place("creates"), args.procs, args.creates, pg.admin if pg else None)
        extra = (
            f"; server: {c['commits']:,} commits, {c['rollbacks']:,} rollbacks"
            if "commits" in c
            else ""
        )
        print(f"   {c['listed']:,} listed after {c['seconds']:.1f} s{extra}")
        _print_errors(c["errors"], c["samples"])
        failed = sum(c["errors"].values())
        verdicts.append(
            (
                f"{backend} creates: {failed} of {args.procs * args.creates:,} failed",
                failed == 0 and c["listed"] == args.procs * args.creates,
            )
        )

        print(
            f"== {backend}: open time, {args.small:,} against {args.large:,} sessions", flush=True
        )
        cabinets = {"small": place("small"), "large": place("large")}
        t0 = time.monotonic()
        _fill(cabinets["small"], args.small)
        _fill(cabinets["large"], args.large)
        if not pg:  # the same sessions as "small", as many bytes as "large"
            cabinets["heavy"] = place("heavy")
            _fill_heavy(
                cabinets["heavy"],
                args.small,
                os.path.getsize(os.path.join(cabinets["large"], "data.mdb")),
            )
        print(f"   (filled in {time.monotonic() - t0:.0f} s)")
        o = open_time(
            cabinets, args.opens, pg.admin if pg else None, ("small", "large") if pg else None
        )
        ratio = o["large_ms"] / o["small_ms"]
        print(
            f"   open+close median: {o['small_ms']:.2f} ms at {args.small:,}, "
            f"{o['large_ms']:.2f} ms at {args.large:,} ({ratio:.2f}x)"
        )
        if "heavy_ms" in o:
            size = os.path.getsize(os.path.join(cabinets["heavy"], "data.mdb"))
            print(
                f"   {args.small:,} sessions holding {size / 1e6:.1f} MB (as much as the "
                f"{args.large:,}): {o['heavy_ms']:.2f} ms; {args.large:,} against it: "
                f"{o['large_ms'] / o['heavy_ms']:.2f}x, "
                f"{o['heavy_bytes_read']:,.0f} bytes read per open"
            )
        print(
            f"   bytes read per open (rchar): {o['small_bytes_read']:,.0f} at {args.small:,}, "
            f"{o['large_bytes_read']:,.0f} at {args.large:,}"
        )
        if "large_catalog_rows" in o:
            print(
                f"   catalog rows the server read per open: {o['small_catalog_rows']:,.1f} "
                f"at {args.small:,}, {o['large_catalog_rows']:,.1f} at {args.large:,}"
            )
        verdicts.append(
            (
                f"{backend} open at {args.large:,} sessions: {ratio:.2f}x the time "
                f"at {args.small:,}",
                ratio <= 1.2,
            )
        )
    finally:
        if pg:
            pg.close()
    return verdicts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", default="lmdb,postgres")
    ap.add_argument("--seconds", type=float, default=60.0, help="race length per back end")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--creates", type=int, default=250, help="creates per process")
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--large", type=int, default=20000)
    ap.add_argument("--opens", type=int, default=40, help="timed opens per cabinet")
    args = ap.parse_args()
    memnet.parse_delta("INSERT (w:TSK {x: 1})")  # the parser is built once, before any fork
    work = tempfile.mkdtemp(prefix="memnet-race-")
    print(
        f"memnet {memnet.__version__} from {os.path.dirname(memnet.__file__)}, "
        f"{os.cpu_count()} cores, in {work}",
        flush=True,
    )
    verdicts = []
    try:
        for backend in args.backends.split(","):
            verdicts += run(backend, args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n== targets")
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'MISS'} {text}")


if __name__ == "__main__":
    main()
