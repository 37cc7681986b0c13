"""Helpers shared by the cabinet tests: GQL value text, raw record dumps,
write counting around a KV, typed graph snapshots, child processes.

Written for these tests only; nothing here is imported from ``memnet`` beyond
the public API and the KV contract the cabinet is built on.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLES = ("meta", "catalog", "nodes", "edges", "log", "postings")


# --------------------------------------------------------------------------- GQL text


def gql_str(s: str) -> str:
    """A single-quoted GQL string literal for ``s`` (our own escaping)."""
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def gql_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        assert math.isfinite(v)
        return repr(v)
    if isinstance(v, str):
        return gql_str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(gql_value(x) for x in v) + "]"
    raise TypeError(type(v))


def gql_props(props: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {gql_value(v)}" for k, v in props.items()) + "}"


# --------------------------------------------------------------------------- typed values


def typed(v: Any) -> Any:
    """A type-tagged form of a value, so that ``1``, ``1.0`` and ``True`` differ
    and ``0.0`` and ``-0.0`` differ."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, (list, tuple)):
        return ("list", tuple(typed(x) for x in v))
    return ("other", type(v).__name__, repr(v))


def typed_props(props: Any) -> dict[str, Any]:
    return {k: typed(v) for k, v in dict(props or {}).items()}


def graph_of(session: Any) -> dict[str, dict[str, Any]]:
    """The live graph of a session through its public ``to_networkx()``, with
    typed property values: ``{"nodes": {h: (kind, labels, props, nick)},
    "edges": {h: (type, src, dst, props)}}``."""
    g = session.to_networkx()
    nodes = {
        h: (a["kind"], tuple(sorted(a["labels"])), typed_props(a["props"]), a["nick"])
        for h, a in g.nodes(data=True)
    }
    edges = {
        k: (a["type"], u, v, typed_props(a["props"]))
        for u, v, k, a in g.edges(keys=True, data=True)
    }
    return {"nodes": nodes, "edges": edges}


# --------------------------------------------------------------------------- raw records


def dump(cab: Any) -> dict[str, dict[bytes, bytes]]:
    """Every raw record of every table, through the KV contract."""
    out: dict[str, dict[bytes, bytes]] = {}
    with cab.kv.read() as txn:
        for t in TABLES:
            out[t] = dict(txn.scan(t))
    return out


def session_records(cab: Any, sid: str) -> dict[str, dict[bytes, bytes]]:
    """The raw records that belong to one session (catalog row and prefixed rows)."""
    out: dict[str, dict[bytes, bytes]] = {}
    pre = sid.encode("ascii") + b"\x00"
    with cab.kv.read() as txn:
        out["catalog"] = {k: v for k, v in txn.scan("catalog") if k == sid.encode("ascii")}
        for t in ("nodes", "edges", "log", "postings"):
            out[t] = dict(txn.scan(t, pre))
    return out


class _CountingTxn:
    def __init__(
        self, txn: Any, puts: Counter[str], keys: list[tuple[str, bytes]], deletes: Counter[str]
    ) -> None:
        self._txn = txn
        self._puts = puts
        self._keys = keys
        self._deletes = deletes

    def get(self, table: str, key: bytes) -> bytes | None:
        return self._txn.get(table, key)

    def get_many(self, table: str, keys: list[bytes]) -> list[bytes | None]:
        return self._txn.get_many(table, keys)

    def present(self, table: str, keys: list[bytes]) -> list[bool]:
        return self._txn.present(table, keys)

    def scan(self, table: str, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        return self._txn.scan(table, prefix)

    def put(self, table: str, key: bytes, value: bytes) -> None:
        self._puts[table] += 1
        self._keys.append((table, bytes(key)))
        self._txn.put(table, key, value)

    def delete(self, table: str, key: bytes) -> bool:
        self._deletes[table] += 1
        return self._txn.delete(table, key)

    def discard(self, table: str, keys: list[bytes]) -> None:
        self._deletes[table] += len(keys)
        self._txn.discard(table, keys)

    def delete_prefix(self, table: str, prefix: bytes) -> int:
        n = self._txn.delete_prefix(table, prefix)
        self._deletes[table] += n
        return n

    def send_soon(self) -> None:
        self._txn.send_soon()


class WriteLog:
    """What went through ``run_write`` while counting: puts per table, the keys
    put (in order), deletes, and the number of write transactions."""

    def __init__(self) -> None:
        self.puts: Counter[str] = Counter()
        self.deletes: Counter[str] = Counter()
        self.keys: list[tuple[str, bytes]] = []
        self.transactions = 0

    def keys_in(self, table: str) -> list[bytes]:
        return [k for t, k in self.keys if t == table]


@contextmanager
def counting_writes(cab: Any) -> Iterator[WriteLog]:
    """Count the records a cabinet writes: wraps its KV's ``run_write`` (the one
    door every write goes through) with a transaction that counts ``put``.
    Only the last attempt of a retried transaction is what lands, so the log is
    reset on each attempt."""
    kv = cab.kv
    real = kv.run_write
    log = WriteLog()

    def run_write(fn: Callable[[Any], Any]) -> Any:
        log.transactions += 1

        def counted(txn: Any) -> Any:
            log.puts.clear()
            log.deletes.clear()
            log.keys.clear()
            return fn(_CountingTxn(txn, log.puts, log.keys, log.deletes))

        return real(counted)

    kv.run_write = run_write
    try:
        yield log
    finally:
        del kv.run_write


@contextmanager
def counting_storage_calls(cab: Any) -> Iterator[Counter[str]]:
    """Count every entry into the KV (read transactions and write transactions)."""
    kv = cab.kv
    calls: Counter[str] = Counter()
    real_read, real_write = kv.read, kv.run_write

    def read(*a: Any, **k: Any) -> Any:
        calls["read"] += 1
        return real_read(*a, **k)

    def run_write(*a: Any, **k: Any) -> Any:
        calls["run_write"] += 1
        return real_write(*a, **k)

    kv.read, kv.run_write = read, run_write
    try:
        yield calls
    finally:
        del kv.read
        del kv.run_write


# --------------------------------------------------------------------------- processes


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.pop("MEMNET_HOME", None)
    env.pop("MEMNET_MAX_SIZE", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def spawn(
    script: str, *args: object, stdin: bool = False, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start ``python -c script args...`` with the repo on PYTHONPATH, pipes on
    stdout/stderr (and stdin when asked), text mode, line buffered; ``env``
    adds variables (a cabinet URL with its password travels there, not in the
    arguments every user of the machine can list)."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        env={**child_env(), **(env or {})},
        cwd=str(REPO_ROOT),
    )


def run(script: str, *args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
        cwd=str(REPO_ROOT),
    )


def finish(p: subprocess.Popen[str], timeout: float = 60) -> tuple[str, str]:
    """Wait for ``p`` and read what is left on its pipes *through the same text
    wrappers* that ``readline`` used (``communicate`` would skip what they
    already buffered). Only for children whose output fits in a pipe."""
    if p.stdin is not None and not p.stdin.closed:
        p.stdin.close()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise
    out = p.stdout.read() if p.stdout is not None else ""
    err = p.stderr.read() if p.stderr is not None else ""
    for f in (p.stdout, p.stderr):
        if f is not None:
            f.close()
    return out, err


def kill(p: subprocess.Popen[str]) -> None:
    """Make sure ``p`` is gone and its pipes are closed (test teardown)."""
    if p.poll() is None:
        p.kill()
    p.wait()
    for f in (p.stdin, p.stdout, p.stderr):
        if f is not None and not f.closed:
            f.close()
