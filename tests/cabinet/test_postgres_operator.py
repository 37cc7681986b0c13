"""The PostgreSQL cabinet as an operator meets it: passwords that must never
show, locations that look like a URL but are not one, many processes creating
sessions at once, an open that must not read the whole catalog, a standby
server, another application's table, a search_path to a schema that does not
exist, two cabinets in two schemas of one database.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memnet import Cabinet, CabinetUnavailable, CabinetUrlError, MemNetError
from memnet.cabinet import kv_pg, pg_conn, pg_txn
from memnet.faces.cli import main

from ..pgserver import PgServer

ERRORS, ISOLATION = "MN-REQ-15", "MN-REQ-10"
MARK = "Mk7Secret"  # the password fed through every form below
_dbs = iter(range(1, 10**6))


@pytest.fixture
def url(pg_server: PgServer) -> Iterator[str]:
    name = f"op{os.getpid()}_{next(_dbs)}"
    yield pg_server.create_database(name)
    pg_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')


def _bad_forms(port: int) -> list[str]:
    """Locations an operator could type meaning a PostgreSQL cabinet, each
    holding the password MARK, none of them a usable URL."""
    hp = f"127.0.0.1:{port}"
    return [
        f"postgresql://u:{MARK}%Pw@{hp}/db",  # a bad percent escape
        f"postgresql://u:{MARK}@[127.0.0.1:{port}/db",  # an unclosed [
        f"postgresql://u:{MARK}@{hp}/db?nosuch=1",  # a parameter libpq does not know
        f"postgresql://u:{MARK}@127.0.0.1:notaport/db",
        f"postgresql:/postgres:{MARK}@{hp}/memnet",
        f"postgresql//postgres:{MARK}@{hp}/memnet",
        f"postgresql:postgres:{MARK}@{hp}/memnet",
        f"postgres:postgres:{MARK}@{hp}/memnet",
        f" postgresql://postgres:{MARK}@{hp}/memnet",
        f"postgresql://postgres:{MARK}@{hp}/memnet\n",
        f"PostgreSQL:/postgres:{MARK}@{hp}/memnet",
        f"host=127.0.0.1 port={port} password={MARK} dbname=memnet",
        f"dbname=memnet password={MARK}",
        f"user=postgres password = {MARK}",
    ]


def _entries(root: Path) -> list[str]:
    return sorted(
        os.fsdecode(os.path.join(d, n)) for d, dirs, files in os.walk(root) for n in dirs + files
    )


@pytest.mark.req(ERRORS, ISOLATION)
def test_a_password_never_shows_in_output_logs_or_the_file_system(
    pg_server: PgServer, tmp_path: Path, monkeypatch: Any, capsys: Any, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    forms = _bad_forms(pg_server.port)
    # a URL that is fine, with the password refused or nobody listening
    refused = [
        pg_server.url("postgres", password=MARK),
        f"postgresql://memnet:{MARK}@127.0.0.1:1/memnet?connect_timeout=2",
    ]
    seen = []
    for where in forms + refused:
        with pytest.raises(MemNetError) as e:
            Cabinet.open(where)
        seen += [str(e.value), repr(e.value), repr(e.value.to_dict())]
        if where in forms:
            assert e.value.code == "bad_cabinet_url", (where, e.value)
        for argv in (
            ["init"],
            ["session", "list"],
            ["session", "create", "x"],
            ["backup", str(tmp_path / "b")],
        ):
            code, (out, err) = main(["--home", where, *argv]), capsys.readouterr()
            assert code == 1 and err.startswith("memnet: error: "), (where, argv, out, err)
            seen += [out, err]
        monkeypatch.setenv("MEMNET_HOME", where)
        code, (out, err) = main(["session", "list"]), capsys.readouterr()
        monkeypatch.delenv("MEMNET_HOME")
        assert code == 1
        seen += [out, err]
    seen.append(caplog.text)
    assert [t for t in seen if MARK in t] == []
    assert _entries(tmp_path) == [str(work)]  # no directory was made of any of them


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "where",
    [
        "postgres-data",
        "postgres/cabinet",
        "./postgresql",
        "my postgresql:/notes",
        "user-password=x",
    ],
)
def test_a_directory_named_like_postgres_is_still_a_directory(
    where: str, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    with Cabinet.open(where) as cab:
        assert cab.info()["backend"] == "lmdb"
    assert (tmp_path / where / "data.mdb").exists()


@pytest.mark.req(ERRORS)
def test_an_unreadable_url_names_what_is_wrong_without_the_url() -> None:
    with pytest.raises(CabinetUrlError) as e:
        Cabinet.open(f"postgresql://u:{MARK}%Pw@h/db")
    assert "percent-encoded" in str(e.value) and MARK not in str(e.value)
    with pytest.raises(CabinetUrlError) as e:
        Cabinet.open(f"postgresql://u:{MARK}@[h/db")
    assert "IPv6" in str(e.value) and "postgresql://" not in str(e.value)


# ----------------------------------------------------------------------- many processes


@pytest.mark.req("MN-REQ-14", ISOLATION)
def test_creates_and_drops_from_many_writers_never_conflict(
    url: str, monkeypatch: Any, caplog: Any
) -> None:
    """Sessions are written down by rows of their own: creating and dropping
    different sessions at once never makes a transaction wait for or fail on
    another one. With a single attempt allowed (no rerun after a
    serialization failure) every create and drop still succeeds, and psycopg
    logs nothing."""
    caplog.set_level(logging.WARNING)
    Cabinet.open(url).close()
    monkeypatch.setattr(kv_pg, "MAX_ATTEMPTS", 1)
    cabs = [Cabinet.open(url) for _ in range(6)]
    failures: list[str] = []
    go = threading.Barrier(len(cabs))

    def work(cab: Cabinet, me: int) -> None:
        go.wait()
        for k in range(40):
            try:
                cab.create(f"p{me}-{k}")
                if k % 3 == 0:
                    cab.drop(f"p{me}-{k}")
            except MemNetError as e:
                failures.append(f"{e.code}: {e}")

    threads = [threading.Thread(target=work, args=(c, i)) for i, c in enumerate(cabs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    listed = [i.id for i in cabs[0].sessions()]
    assert len(listed) == 6 * 26 and cabs[0].verify()["sessions"] == 6 * 26
    for cab in cabs:
        cab.close()
    assert "error ignored" not in caplog.text


@pytest.mark.req("MN-REQ-14", ISOLATION)
def test_a_retried_write_leaves_no_warning_on_stderr(url: str, caplog: Any) -> None:
    """Writers racing on the same session ids meet serialization failures,
    which are rerun: that is no error, and psycopg must not log one."""
    caplog.set_level(logging.WARNING)
    Cabinet.open(url).close()
    cabs = [Cabinet.open(url) for _ in range(4)]
    go = threading.Barrier(len(cabs))
    codes: list[str] = []

    def work(cab: Cabinet) -> None:
        go.wait()
        for k in range(30):
            try:
                (cab.create if k % 2 == 0 else cab.drop)(f"same-{k // 2 % 3}")
            except MemNetError as e:
                codes.append(e.code)

    threads = [threading.Thread(target=work, args=(c,)) for c in cabs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cab in cabs:
        cab.close()
    assert set(codes) <= {"session_exists", "session_not_found"}
    assert [r.getMessage() for r in caplog.records if r.name.startswith("psycopg")] == []


@pytest.mark.req("MN-REQ-14")
def test_an_open_reads_no_more_of_the_catalog_with_more_sessions(
    url: str, monkeypatch: Any
) -> None:
    with Cabinet.open(url, sync=False) as cab:
        for k in range(300):
            cab.create(f"s{k}")
    rows: list[tuple[str, int]] = []
    real = pg_txn.PgTxn.rows

    def counted(self: Any, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        out = real(self, query, params)
        rows.append((query, len(out)))
        return out

    monkeypatch.setattr(pg_txn.PgTxn, "rows", counted)
    Cabinet.open(url).close()
    assert sum(n for q, n in rows if "memnet_catalog" in q) <= 1, rows
    assert sum(n for _q, n in rows) <= 4, rows


# ----------------------------------------------------------------------- server states


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_a_standby_serves_reads_and_refuses_writes_as_unavailable(tmp_path: Path) -> None:
    """A real hot standby: a server stopped cleanly and started again with
    standby.signal (no primary to follow) is in recovery, read-only."""
    server = PgServer()
    try:
        server.start()
        url = server.create_database("cab")
        with Cabinet.open(url) as cab:
            s = cab.create("kept")
            s.commit("INSERT (t:TSK {title: 'written on the primary'})")
            cab.flush(s)
        server.create_database("empty")
        server.stop("fast")
        (server.data / "standby.signal").touch()
        server.start()
        with Cabinet.open(url) as cab:
            assert [i.id for i in cab.sessions()] == ["kept"]
            s = cab.open("kept")
            assert "written on the primary" in s.recall("TSK").text
            s.commit("INSERT (u:TSK {title: 'refused'})")
            for write in (
                lambda: cab.flush(s),
                lambda: cab.create("new"),
                lambda: cab.drop("kept"),
            ):
                with pytest.raises(CabinetUnavailable) as e:
                    write()
                assert "standby" in str(e.value) and server.password not in str(e.value)
            assert s.dirty  # nothing was written: flush it again elsewhere, or later
        with pytest.raises(CabinetUnavailable):
            Cabinet.open(server.url("empty"))  # a new cabinet's tables cannot be made
    finally:
        server.cleanup()


@pytest.mark.req("MN-REQ-14.3", ERRORS)
def test_another_applications_table_stops_the_first_open_before_anything_is_made(
    url: str, pg_server: PgServer
) -> None:
    db = url.rsplit("/", 1)[1]
    pg_server.sql("CREATE TABLE memnet_nodes (id serial PRIMARY KEY, name text)", db)
    with pytest.raises(MemNetError) as e:
        Cabinet.open(url)
    assert e.value.code == "cabinet_corrupt" and "memnet_nodes" in str(e.value)
    tables = pg_server.sql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", db
    )
    assert tables == [("memnet_nodes",)]
    # tables of MemNet's shape made by hand (as for Citus) are used as they are
    pg_server.sql("DROP TABLE memnet_nodes", db)
    pg_server.sql(kv_pg.SCHEMA_SQL, db)
    with Cabinet.open(url) as cab:
        cab.create("ok")
        assert [i.id for i in cab.sessions()] == ["ok"]


@pytest.mark.req(ERRORS)
def test_a_search_path_to_a_missing_schema_is_bad_cabinet_url(
    url: str, pg_server: PgServer
) -> None:
    with pytest.raises(CabinetUrlError) as e:
        Cabinet.open(url + "?options=-csearch_path%3Dno_such_schema")
    assert "check the cabinet URL" in str(e.value) and pg_server.password not in str(e.value)


@pytest.mark.req(ISOLATION)
def test_two_cabinets_in_two_schemas_print_two_urls(
    url: str, pg_server: PgServer, capsys: Any
) -> None:
    db = url.rsplit("/", 1)[1]
    shown = []
    for schema in ("team_a", "team_b"):
        pg_server.sql(f"CREATE SCHEMA {schema}", db)
        where = url + f"?options=-csearch_path%3D{schema}"
        assert main(["--home", where, "init"]) == 0
        out = capsys.readouterr().out
        with Cabinet.open(where) as cab:
            shown.append(cab.info()["url"])
        assert shown[-1] in out and schema in shown[-1] and pg_server.password not in out
    assert shown[0] != shown[1]


@pytest.mark.req(ERRORS)
def test_an_unknown_outcome_reads_as_sentences() -> None:
    import psycopg

    err = pg_conn.error_for(
        psycopg.OperationalError("server closed the connection unexpectedly."),
        "write to",
        "postgresql://u@h/db",
        pg_conn._Secret({}),
        None,
        unknown=True,
    )
    assert err.details["outcome"] == "unknown" and ".." not in str(err)
    assert "unexpectedly. The connection broke" in str(err)
