"""A throwaway PostgreSQL server for the tests and the benchmark.

``PgServer()`` runs ``initdb`` into a new temporary directory, as a non-root
user (``postgres`` when the tests run as root, created if missing; the current
user otherwise), and :meth:`PgServer.start` starts it on 127.0.0.1 on a free
port with its Unix socket inside the data directory. The superuser ``memnet``
logs in over TCP with a SCRAM password; nothing else is reachable.
:meth:`PgServer.stop` stops it (``mode="immediate"`` is a crash: no shutdown
checkpoint, the next start replays the WAL), :meth:`PgServer.cleanup` stops it
and deletes the directory. Keyword arguments are more server settings
(``shared_buffers="256MB"``).

The same steps by hand are in ``docs/cabinet-postgres.md``.
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SUPERUSER = "memnet"


def find_bindir() -> str | None:
    """The directory of ``initdb`` and ``pg_ctl``: ``$MEMNET_PG_BINDIR``, else the
    newest ``/usr/lib/postgresql/*/bin`` (Debian), else wherever PATH has them."""
    env = os.environ.get("MEMNET_PG_BINDIR")
    if env:
        return env if os.path.exists(os.path.join(env, "initdb")) else None

    def major(d: str) -> int:
        m = re.search(r"/postgresql/(\d+)/bin$", d)
        return int(m.group(1)) if m else 0

    found = [
        d
        for d in glob.glob("/usr/lib/postgresql/*/bin")
        if os.path.exists(os.path.join(d, "initdb"))
    ]
    if found:
        return max(found, key=major)
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_user() -> str | None:
    """The user the server runs as: None (ourselves) unless we are root, then
    ``postgres``, created as a system user when it does not exist."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam("postgres")
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", "postgres"],
            check=True,
            capture_output=True,
        )
    return "postgres"


class PgServer:
    """One throwaway server; see the module docstring."""

    def __init__(self, *, fsync: bool = False, bindir: str | None = None, **settings: str) -> None:
        self.bindir = bindir or find_bindir()
        if self.bindir is None:
            raise RuntimeError(
                "PostgreSQL server binaries (initdb, pg_ctl) not found: install "
                "the Debian package postgresql, or set MEMNET_PG_BINDIR"
            )
        self.user = _server_user()
        self.fsync = fsync
        self.settings = {"max_connections": "60", "shared_buffers": "64MB", **settings}
        self.password = secrets.token_urlsafe(12)
        self.root = Path(tempfile.mkdtemp(prefix="memnet-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.running = False
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.user is not None:
            import pwd

            pw = pwd.getpwnam(self.user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-instructions",
        )
        pwfile.unlink()

    def _run(self, prog: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [os.path.join(self.bindir, prog), *args]  # type: ignore[arg-type]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root)
        if check and p.returncode != 0:
            raise RuntimeError(
                f"{prog} failed ({p.returncode}): {p.stderr.strip()}\n" + self.log_tail()
            )
        return p

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def start(self) -> None:
        opts = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} "
            f"-c fsync={'on' if self.fsync else 'off'} "
            f"-c full_page_writes={'on' if self.fsync else 'off'} "
            + " ".join(f"-c {k}={v}" for k, v in self.settings.items())
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "-o",
            opts,
            "start",
        )
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """``fast`` (a clean shutdown) or ``immediate`` (a crash)."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")
            self.running = False

    def url(
        self,
        dbname: str = "postgres",
        *,
        password: str | None = None,
        user: str = SUPERUSER,
        **params: str,
    ) -> str:
        pw = self.password if password is None else password
        q = "&".join(f"{k}={v}" for k, v in params.items())
        return f"postgresql://{user}:{pw}@127.0.0.1:{self.port}/{dbname}" + (f"?{q}" if q else "")

    def sql(self, statement: str, dbname: str = "postgres") -> list[tuple[object, ...]]:
        """Run one statement as the superuser (autocommit); returns its rows."""
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            cur = conn.execute(statement)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def create_database(self, name: str) -> str:
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def cleanup(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
