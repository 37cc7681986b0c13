"""The PostgreSQL cabinet's schema: its tables, its version, its migrations.

``SCHEMA_SQL`` creates schema version 1 (``docs/cabinet-postgres.md`` shows it;
a test keeps the two equal). ``MIGRATIONS`` maps each version to the
statements that reach it from the one before; :func:`migrate` runs the ones
a database lacks, under an advisory lock, so two processes opening a new
database at once build it once, in one transaction: a table of one of
MemNet's names that MemNet did not make (another shape) stops it before
anything is created. On Citus (``docs/cabinet-citus.md``) the same transaction
distributes every table it created: sessions by ``sid``, all co-located with
the catalog, and the two small tables as reference tables.
"""

from __future__ import annotations

import re
from typing import Any

from .._version import __version__
from ..errors import CabinetCorrupt, CabinetFormat

SCHEMA_VERSION = 1

#: The statements that create schema version 1 (docs/cabinet-postgres.md shows
#: them; a test keeps the two equal).
SCHEMA_SQL = """\
CREATE TABLE IF NOT EXISTS memnet_schema (
    id      integer PRIMARY KEY CHECK (id = 1),
    version integer NOT NULL,
    memnet  text    NOT NULL
);
CREATE TABLE IF NOT EXISTS memnet_meta (
    k bytea PRIMARY KEY,
    v bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS memnet_catalog (
    sid text COLLATE "C" PRIMARY KEY,
    v   bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS memnet_nodes (
    sid text COLLATE "C", k bytea, v bytea NOT NULL, PRIMARY KEY (sid, k)
) WITH (fillfactor = 90);
CREATE TABLE IF NOT EXISTS memnet_edges (
    sid text COLLATE "C", k bytea, v bytea NOT NULL, PRIMARY KEY (sid, k)
);
CREATE TABLE IF NOT EXISTS memnet_log (
    sid text COLLATE "C", k bytea, v bytea NOT NULL, PRIMARY KEY (sid, k)
);
CREATE TABLE IF NOT EXISTS memnet_postings (
    sid text COLLATE "C", k bytea, v bytea NOT NULL, PRIMARY KEY (sid, k)
);
"""
#: Schema migrations: version -> the statements that reach it from the one before.
MIGRATIONS: dict[int, str] = {1: SCHEMA_SQL}
_LOCK_ID = 0x6D656D6E6574  # pg_advisory_xact_lock key held while the schema is built

#: Citus: the tables every node holds whole (written only when the schema or the
#: format changes); every other table is distributed by ``sid``, co-located
#: with the catalog, so that one session's rows are on one node
REFERENCE_TABLES = ("memnet_schema", "memnet_meta")
DISTRIBUTION_COLUMN = "sid"
COLOCATE_WITH = "memnet_catalog"

#: The columns and primary key SCHEMA_SQL gives each table (a test keeps them
#: equal); a table of one of these names with another shape is not MemNet's
SHAPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "memnet_schema": (("id integer", "version integer", "memnet text"), ("id",)),
    "memnet_meta": (("k bytea", "v bytea"), ("k",)),
    "memnet_catalog": (("sid text", "v bytea"), ("sid",)),
    **{
        f"memnet_{t}": (("sid text", "k bytea", "v bytea"), ("sid", "k"))
        for t in ("nodes", "edges", "log", "postings")
    },
}
_SHAPE_SQL = """\
SELECT t, (SELECT array_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                            ORDER BY a.attnum)
             FROM pg_attribute a WHERE a.attrelid = to_regclass(t) AND a.attnum > 0
              AND NOT a.attisdropped),
          (SELECT array_agg(a.attname ORDER BY k.n)
             FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, n), pg_attribute a
            WHERE i.indrelid = to_regclass(t) AND i.indisprimary
              AND a.attrelid = i.indrelid AND a.attnum = k.attnum)
FROM unnest(%b::text[]) AS t WHERE to_regclass(t) IS NOT NULL"""


def _check_shapes(conn: Any, display: str) -> None:
    """Refuse, before anything is created, a table of one of MemNet's names
    that has another shape (another application's table in this schema):
    tables of the right shape made by hand (to distribute them first, for
    Citus) are used as they are."""
    for name, cols, key in conn.execute(_SHAPE_SQL, (list(SHAPES),)).fetchall():
        want_cols, want_key = SHAPES[name]
        if tuple(cols or ()) != want_cols or tuple(key or ()) != want_key:
            raise CabinetCorrupt(
                f"the PostgreSQL cabinet at {display} holds a table {name} that MemNet did not "
                f"make (columns {', '.join(cols or ())}; primary key {', '.join(key or ())}): "
                "nothing was created; give MemNet a schema of its own (options=-csearch_path="
                "...) or another database"
            )


def _citus(conn: Any) -> bool:
    """Whether the database is a Citus coordinator (its metadata table and its
    function to distribute a table are there)."""
    row = conn.execute(
        "SELECT to_regclass('pg_dist_partition') IS NOT NULL AND EXISTS ("
        "SELECT 1 FROM pg_proc WHERE proname = 'create_distributed_table')"
    ).fetchone()
    return bool(row[0])


def _distribute(conn: Any) -> list[str]:
    """On Citus, distribute each of MemNet's tables that is not yet: the
    reference tables, then the catalog by ``sid``, then the others co-located
    with it. Returns the tables it distributed."""
    todo = [
        t
        for (t,) in conn.execute(
            "SELECT t FROM unnest(%b::text[]) AS t WHERE NOT EXISTS ("
            "SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = to_regclass(t))",
            (list(TABLES),),
        ).fetchall()
    ]
    order = [t for t in REFERENCE_TABLES if t in todo] + [
        t for t in (COLOCATE_WITH, *TABLES) if t in todo and t not in REFERENCE_TABLES
    ]
    for t in dict.fromkeys(order):
        if t in REFERENCE_TABLES:
            conn.execute("SELECT create_reference_table(%s::regclass)", (t,))
        elif t == COLOCATE_WITH:
            conn.execute(
                "SELECT create_distributed_table(%s::regclass, %s::text)", (t, DISTRIBUTION_COLUMN)
            )
        else:
            conn.execute(
                "SELECT create_distributed_table(%s::regclass, %s::text, "
                "colocate_with => %s::text)",
                (t, DISTRIBUTION_COLUMN, COLOCATE_WITH),
            )
    return list(dict.fromkeys(order))


def migrate(conn: Any, display: str) -> None:
    """Create the tables (or bring them to SCHEMA_VERSION) on ``conn`` in one
    transaction under an advisory lock; a newer schema is refused. psycopg
    errors are left to the caller."""
    row = conn.execute("SELECT to_regclass('memnet_schema') IS NOT NULL").fetchone()
    have = 0
    if row[0]:
        got = conn.execute("SELECT version FROM memnet_schema").fetchone()
        have = int(got[0]) if got else 0
    if have == SCHEMA_VERSION:
        # one query: every table there (a dropped one would otherwise surface
        # later, as a failed write in the middle of some command)
        missing = conn.execute(
            "SELECT array_agg(t) FROM unnest(%b::text[]) AS t WHERE to_regclass(t) IS NULL",
            (list(TABLES),),
        ).fetchone()[0]
        if missing:
            raise CabinetCorrupt(
                f"the PostgreSQL cabinet at {display} lacks the table(s) "
                f"{', '.join(sorted(missing))}: restore it from a backup"
            )
        return
    if have > SCHEMA_VERSION:
        raise CabinetFormat(
            f"the PostgreSQL cabinet at {display} has schema version {have}; "
            f"this MemNet knows version {SCHEMA_VERSION}: upgrade MemNet"
        )
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%b)", (_LOCK_ID,))
        row = conn.execute("SELECT to_regclass('memnet_schema') IS NOT NULL").fetchone()
        got = conn.execute("SELECT version FROM memnet_schema").fetchone() if row[0] else None
        have = int(got[0]) if got else 0
        if have == 0:
            _check_shapes(conn, display)
        for v in range(have + 1, SCHEMA_VERSION + 1):
            conn.execute(MIGRATIONS[v])
        if _citus(conn):
            _distribute(conn)
        conn.execute(
            "INSERT INTO memnet_schema (id, version, memnet) VALUES (1, %b, %b) "
            "ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, "
            "memnet = EXCLUDED.memnet",
            (SCHEMA_VERSION, __version__),
        )


#: every table the schema makes
TABLES = tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA_SQL))

__all__ = [
    "COLOCATE_WITH",
    "DISTRIBUTION_COLUMN",
    "MIGRATIONS",
    "REFERENCE_TABLES",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "SHAPES",
    "TABLES",
]
