"""The PostgreSQL cabinet's schema: its tables, its version, its migrations.

``SCHEMA_SQL`` creates schema version 1 (``docs/cabinet-postgres.md`` shows it;
a test keeps the two equal). ``MIGRATIONS`` maps each version to the
statements that reach it from the one before; :func:`_migrate` runs the ones
a database lacks, under an advisory lock, so two processes opening a new
database at once build it once.
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


def _migrate(conn: Any, display: str) -> None:
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
            (list(TABLES),)).fetchone()[0]
        if missing:
            raise CabinetCorrupt(f"the PostgreSQL cabinet at {display} lacks the table(s) "
                                 f"{', '.join(sorted(missing))}: restore it from a backup")
        return
    if have > SCHEMA_VERSION:
        raise CabinetFormat(
            f"the PostgreSQL cabinet at {display} has schema version {have}; "
            f"this MemNet knows version {SCHEMA_VERSION}: upgrade MemNet")
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%b)", (_LOCK_ID,))
        row = conn.execute("SELECT to_regclass('memnet_schema') IS NOT NULL").fetchone()
        got = conn.execute("SELECT version FROM memnet_schema").fetchone() \
            if row[0] else None
        have = int(got[0]) if got else 0
        for v in range(have + 1, SCHEMA_VERSION + 1):
            conn.execute(MIGRATIONS[v])
        conn.execute("INSERT INTO memnet_schema (id, version, memnet) VALUES (1, %b, %b) "
                     "ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, "
                     "memnet = EXCLUDED.memnet", (SCHEMA_VERSION, __version__))


#: every table the schema makes
TABLES = tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA_SQL))

__all__ = ["MIGRATIONS", "SCHEMA_SQL", "SCHEMA_VERSION", "TABLES"]
