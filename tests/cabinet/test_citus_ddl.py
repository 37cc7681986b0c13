"""docs/cabinet-citus.md on plain PostgreSQL: the DDL it gives, statement by
statement, and MemNet's own first open of a database that looks like a Citus
coordinator.

No Citus package is reachable here. Its two functions are played by
stand-ins that record each call in a table named like Citus's metadata table
(``pg_dist_partition``) and hold the table to the rules Citus documents for
distributing it: the table exists and is not distributed yet, the column
exists, every primary key and unique index holds it, no foreign key, and a
table co-located with another is distributed by a column of the same type.
Everything else runs on the real server.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memnet import Cabinet
from memnet.cabinet import pg_schema

from ..pgserver import PgServer

ROOT = Path(__file__).resolve().parents[2]
_dbs = iter(range(1, 10**6))

STAND_INS = """
CREATE TABLE pg_dist_partition (
    logicalrelid regclass PRIMARY KEY, partmethod "char" NOT NULL, partkey text,
    colocationid integer NOT NULL);
CREATE FUNCTION create_reference_table(table_name regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = table_name) THEN
        RAISE EXCEPTION 'table % is already distributed', table_name;
    END IF;
    INSERT INTO pg_dist_partition VALUES (table_name, 'n', NULL, 0);
END $$;
CREATE FUNCTION create_distributed_table(table_name regclass, distribution_column text,
                                         colocate_with text DEFAULT 'default') RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    col_type oid;
    other_type oid;
    coloc integer;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = table_name) THEN
        RAISE EXCEPTION 'table % is already distributed', table_name;
    END IF;
    SELECT atttypid INTO col_type FROM pg_attribute
     WHERE attrelid = table_name AND attname = distribution_column AND NOT attisdropped;
    IF col_type IS NULL THEN
        RAISE EXCEPTION 'column % of % does not exist', distribution_column, table_name;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = table_name AND i.indisunique
               AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = table_name
                               AND a.attname = distribution_column
                               AND a.attnum = ANY (i.indkey))) THEN
        RAISE EXCEPTION 'a unique index of % lacks the distribution column', table_name;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_constraint WHERE contype = 'f'
               AND (conrelid = table_name OR confrelid = table_name)) THEN
        RAISE EXCEPTION '% has a foreign key', table_name;
    END IF;
    IF colocate_with = 'default' THEN
        SELECT coalesce(max(colocationid), 0) + 1 INTO coloc FROM pg_dist_partition;
    ELSE
        SELECT p.colocationid, a.atttypid INTO coloc, other_type
          FROM pg_dist_partition p JOIN pg_attribute a
            ON a.attrelid = p.logicalrelid AND a.attname = p.partkey
         WHERE p.logicalrelid = colocate_with::regclass AND p.partmethod = 'h';
        IF coloc IS NULL THEN
            RAISE EXCEPTION '% is not a distributed table', colocate_with;
        END IF;
        IF other_type <> col_type THEN
            RAISE EXCEPTION '% and % are distributed by columns of other types',
                table_name, colocate_with;
        END IF;
    END IF;
    INSERT INTO pg_dist_partition VALUES (table_name, 'h', distribution_column, coloc);
END $$;
"""


@pytest.fixture
def citus_db(pg_server: PgServer) -> Iterator[tuple[str, str]]:
    """A database with the stand-ins: ``(url, name)``."""
    name = f"citus{os.getpid()}_{next(_dbs)}"
    url = pg_server.create_database(name)
    pg_server.sql(STAND_INS, name)
    yield url, name
    pg_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')


def _doc_statements() -> list[str]:
    text = (ROOT / "docs" / "cabinet-citus.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```sql\n(.*?)```", text, re.S)
    return [s.strip() + ";" for s in block.split(";") if s.strip()]


def _distribution(pg_server: PgServer, db: str) -> dict[str, tuple[str, str | None, int]]:
    rows = pg_server.sql(
        "SELECT logicalrelid::text, partmethod::text, partkey, colocationid FROM pg_dist_partition",
        db,
    )
    return {str(t): (str(m), k if k is None else str(k), int(str(c))) for t, m, k, c in rows}


def _expected(dist: dict[str, tuple[str, str | None, int]]) -> None:
    """Reference tables as documented, every other table by sid in the
    catalog's co-location group: every table MemNet makes, and no other."""
    assert set(dist) == set(pg_schema.TABLES)
    group = dist[pg_schema.COLOCATE_WITH][2]
    for t, (method, key, coloc) in dist.items():
        if t in pg_schema.REFERENCE_TABLES:
            assert (method, key) == ("n", None), t
        else:
            assert (method, key, coloc) == ("h", pg_schema.DISTRIBUTION_COLUMN, group), t


def _work(url: str) -> None:
    with Cabinet.open(url) as cab:
        s = cab.create("alpha")
        s.commit(
            "INSERT (t:TSK {title: 'on the shards'}), (m:MOD {path: 'a.py'}), (t)-[:TOUCHES]->(m)"
        )
        cab.flush(s)
        s.commit("SET na1.status = 'done'")
        cab.flush(s)
        cab.create("beta")
        assert cab.open("alpha", at=1).recall("TSK").text != cab.open("alpha").recall("TSK").text
        cab.drop("beta")
        assert [i.id for i in cab.sessions()] == ["alpha"]
        assert cab.verify() == {"sessions": 1, "nodes": 2, "edges": 1, "log": 2}


def test_the_documented_ddl_runs_and_distributes_every_table(
    citus_db: tuple[str, str], pg_server: PgServer
) -> None:
    url, db = citus_db
    statements = _doc_statements()
    needs_citus = [s for s in statements if s.startswith("CREATE EXTENSION")]
    assert needs_citus == ["CREATE EXTENSION IF NOT EXISTS citus;"]
    # the tables are the schema MemNet creates, statement for statement
    assert (
        "\n".join(s for s in statements if s.startswith("CREATE TABLE")) + "\n"
        == pg_schema.SCHEMA_SQL
    )
    for statement in statements:
        if statement not in needs_citus:
            pg_server.sql(statement, db)
    _expected(_distribution(pg_server, db))
    # the stand-ins hold a table to Citus's rules: they would have refused a
    # table distributed twice, or by a column outside its primary key
    import psycopg

    for bad in (
        "SELECT create_distributed_table('memnet_nodes', 'sid')",
        "CREATE TABLE other (k bytea PRIMARY KEY, sid text)",
        "SELECT create_distributed_table('other', 'sid')",
    ):
        try:
            pg_server.sql(bad, db)
        except psycopg.Error as e:
            assert "already distributed" in str(e) or "lacks the distribution" in str(e)
        else:
            assert bad.startswith("CREATE TABLE"), bad
    _work(url)  # MemNet uses the tables as they are and adds its version row
    assert pg_server.sql("SELECT version FROM memnet_schema", db) == [(pg_schema.SCHEMA_VERSION,)]


def test_the_first_open_on_citus_distributes_every_table_it_creates(
    citus_db: tuple[str, str], pg_server: PgServer
) -> None:
    url, db = citus_db
    Cabinet.open(url).close()
    _expected(_distribution(pg_server, db))
    _work(url)
    Cabinet.open(url).close()  # the next opens find it done and touch nothing
    _expected(_distribution(pg_server, db))


def test_a_plain_server_is_not_taken_for_citus(pg_server: PgServer) -> None:
    name = f"plain{os.getpid()}_{next(_dbs)}"
    url = pg_server.create_database(name)
    try:
        Cabinet.open(url).close()
        assert pg_server.sql("SELECT to_regclass('pg_dist_partition') IS NULL", name) == [(True,)]
    finally:
        pg_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_the_shapes_memnet_checks_are_the_ones_it_creates(pg_server: PgServer) -> None:
    name = f"shapes{os.getpid()}_{next(_dbs)}"
    pg_server.create_database(name)
    try:
        pg_server.sql(pg_schema.SCHEMA_SQL, name)
        rows = pg_server.sql(
            pg_schema._SHAPE_SQL.replace(
                "%b::text[]", "ARRAY[" + ", ".join(f"'{t}'" for t in pg_schema.SHAPES) + "]"
            ),
            name,
        )
        assert {t: (tuple(c), tuple(k)) for t, c, k in rows} == pg_schema.SHAPES
    finally:
        pg_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')
