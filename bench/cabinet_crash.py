"""The long versions of the cabinet's process tests, with their figures.

``tests/cabinet/test_processes.py`` runs, on small counts so the suite stays
fast: eight processes racing 50 commit+flush each on one session (LMDB and
PostgreSQL), 20 rounds of kill -9 of a flushing client on PostgreSQL, and 6
crashes of the PostgreSQL server (``pg_ctl stop -m immediate``) during
flushes. This script runs the same tests with the counts of issue 13 (8 x 200
commits: final version 1,600) and longer loops, and prints what each reported:
the race's conflicts and time, the acknowledged commits that survived each
loop, the errors the writer saw and retried.

    python bench/cabinet_crash.py [--commits 200] [--kill-rounds 100] [--crash-rounds 30]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, default=200, help="commits per racer (default 200)")
    ap.add_argument(
        "--kill-rounds", type=int, default=100, help="kill -9 rounds on PostgreSQL (default 100)"
    )
    ap.add_argument(
        "--crash-rounds", type=int, default=30, help="server crashes during flushes (default 30)"
    )
    args = ap.parse_args()
    fd, report = tempfile.mkstemp(prefix="memnet-crash-", suffix=".jsonl")
    os.close(fd)
    env = dict(
        os.environ,
        MEMNET_RACE_COMMITS=str(args.commits),
        MEMNET_KILL_ROUNDS=str(args.kill_rounds),
        MEMNET_CRASH_ROUNDS=str(args.crash_rounds),
        MEMNET_CRASH_REPORT=report,
    )
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests/cabinet/test_processes.py",
            ],
            cwd=ROOT,
            env=env,
        )
        with open(report, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
    finally:
        os.unlink(report)
    print("\n== figures ==")
    for r in rows:
        name = r.pop("test")
        print(f"{name:24} " + ", ".join(f"{k} {v}" for k, v in r.items()))
    raise SystemExit(p.returncode)


if __name__ == "__main__":
    main()
