"""What only the PostgreSQL cabinet has: URLs, its schema, server failures
(down, wrong password, missing privilege, a connection dropped mid-flush, a
statement timeout, a commit whose answer was lost), fork safety, backup, and
the same session in LMDB and PostgreSQL (byte-identical records and Recalls,
``memnet cabinet copy`` both ways). The contract suite runs on PostgreSQL too
(``conftest.PostgresPlace``); the process tests are in ``test_processes.py``.
"""

from __future__ import annotations

import io
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

import memnet
from memnet import (
    Cabinet,
    CabinetAuthFailed,
    CabinetError,
    CabinetForked,
    CabinetFormat,
    CabinetTimeout,
    CabinetUnavailable,
    CabinetUrlError,
    ConflictError,
    SessionExists,
    SessionNotFound,
)
from memnet.cabinet import kv_pg, pg_txn
from memnet.cabinet.binding import binding_of
from memnet.faces.cli import main

from ..pgserver import PgServer
from ._support import dump, graph_of
from .test_contract import QUERIES, SCENARIO

ATOMIC, ISOLATION, HISTORY, ERRORS = "MN-REQ-03", "MN-REQ-10", "MN-REQ-13", "MN-REQ-15"
ROOT = Path(__file__).resolve().parents[2]
_dbs = iter(range(1, 10**6))


@pytest.fixture
def url(pg_server: PgServer) -> Iterator[str]:
    """A PostgreSQL cabinet URL on a database of its own."""
    name = f"pg{os.getpid()}_{next(_dbs)}"
    yield pg_server.create_database(name)
    pg_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')


def _run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _scenario(cab: Cabinet, sid: str, flush_after: set[int]) -> memnet.Session:
    s = cab.create(sid)
    h: dict[str, str] = {}
    for i, delta in enumerate(SCENARIO, 1):
        h.update(s.commit(re.sub(r"<(\w+)>", lambda m: h[m.group(1)], delta)).ids)
        if i in flush_after:
            cab.flush(s)
    cab.flush(s)
    return s


# =========================================================================== URLs


@pytest.mark.req(ERRORS, ISOLATION)
@pytest.mark.parametrize(
    "where", ["mysql://u@h/db", "s3://bucket/cabinet", "lmdb://x", "http://example.invalid/c"]
)
def test_an_unknown_url_scheme_is_refused_and_never_becomes_a_directory(
    where: str, tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CabinetUrlError) as info:
        Cabinet.open(where)
    assert info.value.code == "bad_cabinet_url" and where.split("://")[0] in str(info.value)
    monkeypatch.setenv("MEMNET_HOME", where)
    with pytest.raises(CabinetUrlError):
        Cabinet.open()
    code, _out, err = _run(["--home", where, "session", "list"], capsys)
    assert code == 1 and err.startswith("memnet: error: bad_cabinet_url: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == [], "a URL was taken for a path"


@pytest.mark.req(ERRORS, ISOLATION)
def test_a_postgres_url_is_never_a_path_even_when_the_server_is_away(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    for where in ("postgresql://nobody@127.0.0.1:1/x", "postgres://nobody@127.0.0.1:1/x"):
        with pytest.raises(CabinetUnavailable) as info:
            Cabinet.open(where)
        assert info.value.code == "cabinet_unavailable"
        assert "127.0.0.1" in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.req("MN-REQ-14", HISTORY)
def test_home_and_memnet_home_take_a_postgres_url(
    url: str, capsys: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _run(["--home", url, "session", "create", "notes"], capsys)[0] == 0
    delta = tmp_path / "d.gql"
    delta.write_text("INSERT (t:TSK {title: 'Stored on the server', status: 'open'})")
    code, out, _err = _run(["--home", url, "commit", "notes", str(delta)], capsys)
    assert code == 0 and '"version": 1' in out
    monkeypatch.setenv("MEMNET_HOME", url)
    code, out, _err = _run(["recall", "notes", "TSK status:open"], capsys)
    assert code == 0 and "Stored on the server" in out
    code, out, _err = _run(["init"], capsys)
    assert code == 0 and "postgres" in out and "1 sessions" in out
    assert kv_pg.looks_like_url(url) and not os.path.exists(tmp_path / ".memnet")


# =========================================================================== schema


@pytest.mark.req("MN-REQ-14", ISOLATION)
def test_the_schema_is_created_with_a_version_row_and_the_session_id_leads_every_key(
    url: str, pg_server: PgServer
) -> None:
    Cabinet.open(url).close()
    db = url.rsplit("/", 1)[1]
    assert pg_server.sql("SELECT id, version FROM memnet_schema", db) == [(1, 1)]
    keys = pg_server.sql(
        "SELECT c.relname, array_agg(a.attname ORDER BY k.n) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indrelid "
        "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
        "WHERE i.indisprimary AND c.relname LIKE 'memnet%' GROUP BY c.relname",
        db,
    )
    keys = {name: list(cols) for name, cols in keys}
    assert keys == {
        "memnet_schema": ["id"],
        "memnet_meta": ["k"],
        "memnet_catalog": ["sid"],
        **{f"memnet_{t}": ["sid", "k"] for t in ("nodes", "edges", "log", "postings")},
    }
    # nothing else in the database: no foreign keys, no views joining sessions
    assert pg_server.sql("SELECT count(*) FROM pg_constraint WHERE contype = 'f'", db) == [(0,)]


@pytest.mark.req(ERRORS)
def test_the_docs_show_the_schema_the_code_creates() -> None:
    text = (ROOT / "docs" / "cabinet-postgres.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    assert kv_pg.SCHEMA_SQL in blocks, "docs/cabinet-postgres.md shows another schema"


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_newer_schema_is_cabinet_format_and_a_partial_one_is_completed(
    url: str, pg_server: PgServer
) -> None:
    db = url.rsplit("/", 1)[1]
    # a database where someone created the tables by hand (as for Citus) but no row
    pg_server.sql(kv_pg.SCHEMA_SQL.split(";")[0] + ";" + kv_pg.SCHEMA_SQL.split(";")[2], db)
    with Cabinet.open(url) as cab:
        cab.create("x")
    assert pg_server.sql("SELECT version FROM memnet_schema", db) == [(1,)]
    pg_server.sql("UPDATE memnet_schema SET version = 7", db)
    with pytest.raises(CabinetFormat) as info:
        Cabinet.open(url)
    assert info.value.code == "cabinet_format" and "7" in str(info.value)


@pytest.mark.req("MN-REQ-14")
def test_first_opens_racing_on_an_empty_database_all_succeed(url: str) -> None:
    errors: list[BaseException] = []

    def opener(i: int) -> None:
        try:
            with Cabinet.open(url) as cab:
                cab.create(f"s{i}")
        except BaseException as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=opener, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with Cabinet.open(url) as cab:
        assert [i.id for i in cab.sessions()] == ["s0", "s1", "s2", "s3"]


@pytest.mark.req("MN-REQ-14.1", ATOMIC, ERRORS)
def test_creates_of_one_id_racing_from_several_machines_leave_one_session(url: str) -> None:
    Cabinet.open(url).close()
    cabs = [Cabinet.open(url) for _ in range(4)]
    outcome: list[str] = []
    go = threading.Barrier(len(cabs))

    def create(cab: Cabinet, i: int) -> None:
        go.wait()
        try:
            s = cab.create("same")
            s.commit(f"INSERT (t:TSK {{title: 'by {i}'}})")
            cab.flush(s)
            outcome.append(f"made {i}")
        except SessionExists:
            outcome.append("exists")

    threads = [threading.Thread(target=create, args=(c, i)) for i, c in enumerate(cabs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    made = [x for x in outcome if x.startswith("made")]
    assert len(made) == 1 and outcome.count("exists") == 3, outcome
    who = made[0].split()[1]
    s = cabs[0].open("same")
    assert s.version == 1 and f"by {who}" in s.recall("TSK").text
    for cab in cabs:
        cab.close()


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "where",
    [
        "postgresql://u@h/db?nosuchparam=1",
        "postgresql://u@h:notaport/db",
        "postgresql://u:SeCrEt9@h/db?also=bad",
    ],
)
def test_a_postgres_url_libpq_cannot_read_is_bad_cabinet_url(where: str) -> None:
    with pytest.raises(CabinetUrlError) as info:
        Cabinet.open(where)
    assert info.value.code == "bad_cabinet_url" and "SeCrEt9" not in str(info.value)


# =========================================================================== failures


def _no_secret(pg_server: PgServer, *texts: str) -> None:
    for text in texts:
        assert pg_server.password not in text, "the password leaked"


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_wrong_password_is_cabinet_auth_without_the_password_anywhere(
    url: str, pg_server: PgServer, capsys: Any, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = url.replace(pg_server.password, "Wr0ng-Secret-Word")
    with pytest.raises(CabinetAuthFailed) as info:
        Cabinet.open(wrong)
    e = info.value
    assert e.code == "cabinet_auth" and "authentication failed" in str(e)
    assert "Wr0ng-Secret-Word" not in str(e) and "Wr0ng-Secret-Word" not in repr(e.to_dict())
    code, out, err = _run(["--home", wrong, "session", "list"], capsys)
    assert code == 1 and err.startswith("memnet: error: cabinet_auth: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    for text in (out, err, caplog.text):
        assert "Wr0ng-Secret-Word" not in text
    with Cabinet.open(url) as cab:  # the right one still works, and shows no password
        _no_secret(pg_server, str(cab.info()), repr(cab.kv), str(cab.kv.info()))
        assert cab.info()["backend"] == "postgres"


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_role_without_the_privilege_to_create_the_tables_is_cabinet_auth(
    url: str, pg_server: PgServer
) -> None:
    db = url.rsplit("/", 1)[1]
    pg_server.sql(f"CREATE ROLE reader{os.getpid()} LOGIN PASSWORD 'reader-pw'")
    try:
        reader = pg_server.url(db, user=f"reader{os.getpid()}", password="reader-pw")
        with pytest.raises(CabinetAuthFailed) as info:
            Cabinet.open(reader)  # PostgreSQL 15 gives PUBLIC no CREATE on schema public
        assert "permission denied" in str(info.value) and "reader-pw" not in str(info.value)
    finally:
        pg_server.sql(f"DROP ROLE reader{os.getpid()}")


def _committed(cab: Cabinet, sid: str = "x") -> memnet.Session:
    s = cab.create(sid)
    s.commit("INSERT (t:TSK {title: 'one'})")
    cab.flush(s)
    s.commit("INSERT (u:TSK {title: 'two'})")
    return s


@pytest.mark.req("MN-REQ-14.3", "MN-REQ-14", ERRORS)
def test_server_down_is_cabinet_unavailable_and_the_flush_is_retried(
    url: str, pg_server: PgServer, capsys: Any
) -> None:
    cab = Cabinet.open(url)
    s = _committed(cab)
    pending = s.journal()
    pg_server.stop("fast")
    try:
        with pytest.raises(CabinetUnavailable) as info:
            cab.flush(s)
        assert info.value.code == "cabinet_unavailable" and "Traceback" not in str(info.value)
        assert s.dirty and s.journal() == pending and binding_of(s).version == 1
        with pytest.raises(CabinetUnavailable):
            Cabinet.open(url)
        code, _out, err = _run(["--home", url, "recall", "x", "TSK"], capsys)
        assert code == 1 and err.startswith("memnet: error: cabinet_unavailable: ")
        assert err.count("\n") == 1 and pg_server.password not in err
    finally:
        pg_server.start()
    assert cab.flush(s) == 2 and not s.dirty  # the same session, the same cabinet object
    assert [e.version for e in cab.log("x")] == [1, 2]
    assert cab.verify()["log"] == 2
    cab.close()


def _blocked(
    cab: Cabinet, s: memnet.Session, pg_server: PgServer, db: str
) -> tuple[Any, threading.Thread, list[BaseException]]:
    """Hold the session's catalog row lock from another connection and start
    a flush of ``s`` in a thread: it waits on the lock."""
    import psycopg

    blocker = psycopg.connect(pg_server.url(db))
    blocker.execute("SELECT v FROM memnet_catalog WHERE sid = 'x' FOR UPDATE")
    failed: list[BaseException] = []

    def flush() -> None:
        try:
            cab.flush(s)
        except BaseException as e:  # noqa: BLE001 - asserted by the caller
            failed.append(e)

    t = threading.Thread(target=flush)
    t.start()
    return blocker, t, failed


def _waiting_pid(pg_server: PgServer, db: str) -> int:
    for _ in range(400):
        rows = pg_server.sql(
            "SELECT pid FROM pg_stat_activity WHERE application_name = "
            "'memnet' AND wait_event_type = 'Lock'",
            db,
        )
        if rows:
            return int(rows[0][0])  # type: ignore[arg-type]
        time.sleep(0.025)
    raise AssertionError("the flush never waited on the lock")


@pytest.mark.req("MN-REQ-14.3", ATOMIC, ERRORS)
def test_a_connection_dropped_mid_flush_is_cabinet_unavailable_and_retryable(
    url: str, pg_server: PgServer
) -> None:
    db = url.rsplit("/", 1)[1]
    cab = Cabinet.open(url)
    s = _committed(cab)
    before = dump(cab)
    blocker, t, failed = _blocked(cab, s, pg_server, db)
    pg_server.sql(f"SELECT pg_terminate_backend({_waiting_pid(pg_server, db)})")
    t.join(30)
    blocker.close()
    (e,) = failed
    assert isinstance(e, CabinetUnavailable) and e.details["outcome"] == "not written"
    assert s.dirty and dump(cab) == before
    assert cab.flush(s) == 2  # a new connection, the same session
    assert [x.version for x in cab.log("x")] == [1, 2]
    cab.close()


@pytest.mark.req("MN-REQ-14.3", ATOMIC, ERRORS)
def test_a_statement_timeout_is_cabinet_timeout_and_retryable(
    url: str, pg_server: PgServer
) -> None:
    db = url.rsplit("/", 1)[1]
    cab = Cabinet.open(url + "?options=-cstatement_timeout%3D300")
    s = _committed(cab)
    before = dump(cab)
    blocker, t, failed = _blocked(cab, s, pg_server, db)
    t.join(30)
    blocker.close()
    (e,) = failed
    assert isinstance(e, CabinetTimeout) and e.code == "cabinet_timeout"
    assert "nothing was written" in str(e) and s.dirty and dump(cab) == before
    assert cab.flush(s) == 2
    cab.close()


@pytest.mark.req("MN-REQ-14.1", "MN-REQ-14.3", ATOMIC)
@pytest.mark.parametrize("landed", [True, False], ids=["commit-landed", "commit-lost"])
@pytest.mark.parametrize("more", [False, True], ids=["retry", "commit-more-then-retry"])
def test_a_flush_whose_answer_was_lost_is_safe_to_flush_again(
    url: str, monkeypatch: Any, landed: bool, more: bool
) -> None:
    """The connection breaks while COMMIT is on its way: the flush may or may
    not be stored. Flushing the same session again must neither conflict with
    itself nor store anything twice, whichever way it went."""
    import psycopg

    cab = Cabinet.open(url)
    s = _committed(cab)
    real = pg_txn.PgTxn.send_writes

    def lost(self: Any, *, commit: bool = False) -> None:
        if commit:
            if landed:
                real(self, commit=True)
            else:
                self.commit_sent = True
            self.conn.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        real(self, commit=commit)

    monkeypatch.setattr(pg_txn.PgTxn, "send_writes", lost)
    with pytest.raises(CabinetUnavailable) as info:
        cab.flush(s)
    assert info.value.details["outcome"] == "unknown" and "safe" in str(info.value)
    assert s.dirty and binding_of(s).unsure
    monkeypatch.setattr(pg_txn.PgTxn, "send_writes", real)
    assert cab.session_info("x").version == (2 if landed else 1)
    if more:
        s.commit("INSERT (w:TSK {title: 'three'})")
    assert cab.flush(s) == s.version
    assert not s.dirty and not binding_of(s).unsure
    assert [e.version for e in cab.log("x")] == list(range(1, s.version + 1))
    assert cab.verify() == {"sessions": 1, "nodes": s.version, "edges": 0, "log": s.version}
    titles = sorted(a[2]["title"][1] for a in graph_of(cab.open("x"))["nodes"].values())
    assert titles == sorted(["one", "two"] + (["three"] if more else []))
    # another writer's flush is still a conflict for the unsure copy
    other = cab.open("x")
    other.commit("INSERT (o:TSK {title: 'other'})")
    cab.flush(other)
    s.commit("INSERT (z:TSK {title: 'late'})")
    with pytest.raises(ConflictError):
        cab.flush(s)
    cab.close()


@pytest.mark.req(ERRORS, ISOLATION)
def test_a_cabinet_used_across_fork_is_cabinet_forked_and_the_parent_keeps_its_connection(
    url: str,
) -> None:
    cab = Cabinet.open(url)
    s = _committed(cab)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: refused, then it exits the normal way (finalizers run)
        os.close(r)
        code = b"?"
        try:
            cab.sessions()
        except CabinetForked:
            code = b"F"
        except BaseException:  # noqa: BLE001
            code = b"X"
        os.write(w, code)
        del cab
        import gc

        gc.collect()
        os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"F"
    os.close(r)
    os.waitpid(pid, 0)
    assert cab.flush(s) == 2 and [i.id for i in cab.sessions()] == ["x"]
    cab.close()


@pytest.mark.req("MN-REQ-14", HISTORY)
def test_sync_false_turns_synchronous_commit_off_for_this_cabinet_only(url: str) -> None:
    """Set LOCAL in each write transaction, where Citus passes it on to the
    workers that commit the rows (a setting of the connection would stay on
    the coordinator); the lz4 compression of large records likewise."""

    def in_a_write(cab: Cabinet) -> tuple[str, str]:
        return cab.kv.run_write(
            lambda t: tuple(
                t.rows(f"SHOW {name}", ())[0][0]  # type: ignore[attr-defined]
                for name in ("synchronous_commit", "default_toast_compression")
            )
        )

    with Cabinet.open(url, sync=False) as fast, Cabinet.open(url) as safe:
        assert in_a_write(fast) == ("off", "lz4") and in_a_write(safe) == ("on", "lz4")
        for cab in (fast, safe):
            assert cab.kv._connection().execute("SHOW citus.propagate_set_commands").fetchone() == (
                "local",
            )
        s = fast.create("x")
        s.commit("INSERT (t:TSK {title: 'quick'})")
        assert fast.flush(s) == 1 and safe.open("x").version == 1
        assert fast.info()["sync"] is False


def test_large_records_are_stored_lz4_compressed_and_read_back_whole(url: str) -> None:
    """The server the tests start is built with lz4 (Debian's is), so the
    connection's toast compression setting must take: the log record of a
    3,001-change commit is well past the 2 KB toast threshold."""
    with Cabinet.open(url) as cab:
        assert cab.kv._connection().execute("SHOW default_toast_compression").fetchone() == ("lz4",)
        s = cab.create("hub")
        s.commit(
            "INSERT (h:HUB {name: 'h'})"
            + "".join(
                f", (n{i}:TSK {{title: 'task number {i}'}}), (h)-[:HAS]->(n{i})"
                for i in range(1500)
            )
        )
        cab.flush(s)
        methods = [
            m
            for table in ("nodes", "edges", "log", "postings")
            for (m,) in cab.kv._connection().execute(
                f"SELECT pg_column_compression(v) FROM memnet_{table} "  # type: ignore
                "WHERE sid = 'hub' AND octet_length(v) > 4000"
            )
        ]
        assert "lz4" in methods and "pglz" not in methods
        again = cab.open("hub")
        assert again.recall("HUB").text == s.recall("HUB").text


# =========================================================================== staleness


@pytest.mark.req("MN-REQ-14.1", HISTORY)
def test_the_wire_reads_a_stale_session_again_before_a_recall(url: str) -> None:
    from memnet.faces.wire import Wire

    reader_cab, writer_cab = Cabinet.open(url), Cabinet.open(url)
    wire = Wire(reader_cab, io.BytesIO())
    wire.execute("USE notes CREATE")
    wire.execute("INSERT (t:TSK {title: 'first'})")
    other = writer_cab.open("notes")
    other.commit("INSERT (u:TSK {title: 'from another machine'})")
    writer_cab.flush(other)
    assert reader_cab.is_stale(wire.session)
    assert "from another machine" in wire.execute("RECALL TSK")
    assert not reader_cab.is_stale(wire.session) and wire.session.version == 2
    # a Commit on a copy another machine moved on keeps its compare-and-swap
    other = writer_cab.open("notes")
    other.commit("INSERT (v:TSK {title: 'third'})")
    writer_cab.flush(other)
    with pytest.raises(ConflictError):
        wire.execute("INSERT (w:TSK {title: 'based on version 2'})")
    writer_cab.drop("notes")
    with pytest.raises(SessionNotFound):
        wire.execute("RECALL TSK")
    reader_cab.close()
    writer_cab.close()


# =========================================================================== backup


@pytest.mark.req("MN-REQ-14")
def test_backup_writes_every_session_into_an_lmdb_directory(
    url: str, tmp_path: Path, capsys: Any
) -> None:
    with Cabinet.open(url) as cab:
        a = _scenario(cab, "alpha", {2, 5})
        b = _committed(cab, "beta")
        cab.flush(b)
        cab.backup(tmp_path / "bak")
        with pytest.raises(CabinetError) as info:
            cab.backup(tmp_path / "bak")
        assert info.value.code == "backup_target_exists"
        texts = {q: a.recall(q).text for q in QUERIES}
    with Cabinet.open(tmp_path / "bak") as copy:
        assert copy.info()["backend"] == "lmdb"
        assert copy.verify() == {
            "sessions": 2,
            "nodes": a.store.next_node - 1 + 2,
            "edges": a.store.next_edge - 1,
            "log": len(SCENARIO) + 2,
        }
        assert {q: copy.open("alpha").recall(q).text for q in QUERIES} == texts
        assert copy.open("alpha", at=3).version == 3
    code, _out, _err = _run(["--home", url, "backup", str(tmp_path / "bak2")], capsys)
    assert code == 0 and (tmp_path / "bak2" / "data.mdb").exists()


# =========================================================================== LMDB and PostgreSQL


@pytest.mark.req("MN-REQ-14", "MN-REQ-02", HISTORY)
def test_lmdb_and_postgres_holding_the_same_session_give_byte_identical_recalls(
    url: str, tmp_path: Path
) -> None:
    """The same commits and flushes on both back ends: every stored record is
    the same bytes (log records but for their commit times), and every Recall,
    of the present and of each past version, is the same text in fresh processes' hydrates."""
    flush_after = {1, 3, 4, 7, 8, 9, 12}
    with Cabinet.open(tmp_path / "lmdb") as lm, Cabinet.open(url) as pg:
        _scenario(lm, "same", flush_after)
        _scenario(pg, "same", flush_after)
        recs = {}
        for name, cab in (("lmdb", lm), ("postgres", pg)):
            d = dump(cab)
            del d["catalog"], d["meta"]  # times, tokens, the back end's name
            # a log record holds its commit's time: compare the rest of it
            d["log"] = {
                k: {f: x for f, x in msgpack.unpackb(v[4:]).items() if f != "t"}
                for k, v in d["log"].items()
            }
            recs[name] = d
        assert recs["lmdb"] == recs["postgres"]
        assert all(recs["lmdb"][t] for t in ("nodes", "edges", "log", "postings"))
        for v in (None, 1, 4, 8, len(SCENARIO)):
            x, y = lm.open("same", at=v), pg.open("same", at=v)
            for q in QUERIES:
                tx, ty = x.recall(q).text, y.recall(q).text
                assert tx == ty, (v, q)
                assert tx.encode("utf-8") == ty.encode("utf-8")
        entries = [
            [(e.version, e.created, e.updated, e.recycled, e.changed) for e in c.log("same")]
            for c in (lm, pg)
        ]
        assert entries[0] == entries[1] and len(entries[0]) == len(SCENARIO)


@pytest.mark.req("MN-REQ-14", HISTORY, ISOLATION)
def test_cabinet_copy_moves_sessions_from_lmdb_to_postgres_and_back(
    url: str, tmp_path: Path, capsys: Any
) -> None:
    lm_dir, back = str(tmp_path / "lmdb"), str(tmp_path / "back")
    with Cabinet.open(lm_dir) as lm:
        src = _scenario(lm, "alpha", {3, 6})
        _committed(lm, "beta")
        texts = {q: src.recall(q).text for q in QUERIES}
        past = lm.open("alpha", at=4).recall("TSK").text
    code, out, err = _run(["cabinet", "copy", lm_dir, url], capsys)
    assert code == 0, err
    assert out.splitlines() == [
        f"copied alpha: version {len(SCENARIO)}, "
        f"{src.store.live_nodes} nodes, {src.store.live_edges} edges",
        "copied beta: version 1, 1 nodes, 0 edges",
    ]
    code, out, err = _run(["cabinet", "copy", url, back, "alpha", "--format", "json"], capsys)
    assert code == 0 and '"id": "alpha"' in out
    for where in (url, back):
        with Cabinet.open(where) as cab:
            assert {q: cab.open("alpha").recall(q).text for q in QUERIES} == texts
            assert cab.open("alpha", at=4).recall("TSK").text == past
            assert len(cab.log("alpha")) == len(SCENARIO)
            cab.verify()
    with Cabinet.open(back) as cab:
        assert [i.id for i in cab.sessions()] == ["alpha"]
    # a copy never shares its creation token: a session loaded from the source
    # cannot flush into the destination
    with Cabinet.open(lm_dir) as lm, Cabinet.open(url) as pg:
        stale = lm.open("alpha")
        stale.commit("INSERT (x:TSK {title: 'loaded from lmdb'})")
        binding_of(stale).version = pg.session_info("alpha").version
        with pytest.raises(ConflictError):
            pg.flush(stale)
    # refusals before anything is written
    with Cabinet.open(url) as pg:
        before = dump(pg)
    code, _out, err = _run(["cabinet", "copy", lm_dir, url, "beta"], capsys)
    assert code == 1 and err.startswith("memnet: error: session_exists: ")
    code, _out, err = _run(["cabinet", "copy", lm_dir, url, "gamma"], capsys)
    assert code == 1 and err.startswith("memnet: error: session_not_found: ")
    code, _out, err = _run(["cabinet", "copy", str(tmp_path / "typo"), url], capsys)
    assert code == 1 and err.startswith("memnet: error: path_not_found: ")
    assert not (tmp_path / "typo").exists(), "a mistyped source became a cabinet"
    with Cabinet.open(url) as pg:
        assert dump(pg) == before


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_copy_that_does_not_read_back_as_the_source_is_removed(
    url: str, tmp_path: Path, monkeypatch: Any
) -> None:
    from memnet.cabinet.copy import copy_sessions

    with Cabinet.open(tmp_path / "lmdb") as lm, Cabinet.open(url) as pg:
        _scenario(lm, "alpha", {2})
        real = pg_txn.PgTxn.put

        def damaging(self: Any, table: str, key: bytes, value: bytes) -> None:
            if table == "nodes" and key.endswith((2).to_bytes(8, "big")):
                value = value[:-1] + bytes([value[-1] ^ 1])
            real(self, table, key, value)

        monkeypatch.setattr(pg_txn.PgTxn, "put", damaging)
        with pytest.raises(memnet.CabinetCorrupt):
            copy_sessions(lm, pg, ["alpha"])
        monkeypatch.setattr(pg_txn.PgTxn, "put", real)
        assert not pg.exists("alpha") and pg.sessions() == []
        assert [i.id for i in copy_sessions(lm, pg)] == ["alpha"]
        with pytest.raises(SessionExists):
            copy_sessions(lm, pg)


@pytest.mark.req("MN-REQ-14")
def test_cabinets_racing_on_create_and_drop_stay_usable(url: str) -> None:
    """Four cabinet objects create and drop the same sessions at once, so
    writes meet serialization failures and are retried; afterwards each one
    still creates, drops and lists (psycopg's statements prepared on the
    server once survived an aborted pipeline only in the client, and every
    later create or drop of that object failed)."""
    memnet.Cabinet.open(url).close()
    cabs = [memnet.Cabinet.open(url) for _ in range(4)]
    codes: list[str] = []

    def worker(cab: Any, seed: int) -> None:
        import random

        rng = random.Random(seed)
        for _ in range(50):
            sid = f"s{rng.randrange(3)}"
            try:
                (cab.create if rng.random() < 0.5 else cab.drop)(sid)
            except memnet.MemNetError as e:
                codes.append(e.code)

    threads = [threading.Thread(target=worker, args=(c, i)) for i, c in enumerate(cabs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(codes) <= {"session_exists", "session_not_found"}, codes
    for k, cab in enumerate(cabs):
        for j in range(8):
            cab.create(f"solo{k}-{j}")
        cab.drop(f"solo{k}-0")
        assert f"solo{k}-7" in [i.id for i in cab.sessions()]
        cab.close()


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "params,db",
    [
        ({"sslmode": "bogus"}, None),
        ({}, "no_such_db"),
        ({"options": "-cno_such_setting%3D1"}, None),
        ({"target_session_attrs": "bogus"}, None),
    ],
)
def test_a_url_no_retry_can_help_is_bad_cabinet_url(
    pg_server: PgServer, params: dict, db: str | None
) -> None:
    u = pg_server.url(db or "postgres", **params)
    with pytest.raises(memnet.MemNetError) as e:
        memnet.Cabinet.open(u)
    assert e.value.code == "bad_cabinet_url", e.value
    assert pg_server.password not in str(e.value)


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "damage,when",
    [
        ("DROP TABLE memnet_nodes", "open"),
        ("ALTER TABLE memnet_catalog ALTER COLUMN v TYPE text USING encode(v, 'hex')", "list"),
        ("INSERT INTO memnet_catalog (sid, v) VALUES ('Zé', '\\x00')", "list"),
    ],
)
def test_tables_not_as_memnet_made_them_are_cabinet_corrupt(
    url: str, pg_server: PgServer, damage: str, when: str
) -> None:
    with memnet.Cabinet.open(url) as cab:
        s = cab.create("a")
        s.commit("INSERT (t:TSK {title: 'x'})")
        cab.flush(s)
    pg_server.sql(damage, url.rsplit("/", 1)[1])
    with pytest.raises(memnet.MemNetError) as e:
        with memnet.Cabinet.open(url) as cab:
            cab.sessions()
    assert e.value.code == "cabinet_corrupt", e.value
