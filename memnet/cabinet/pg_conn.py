"""The PostgreSQL cabinet's connection string, and its failures as coded errors.

A cabinet URL is read by libpq's own parser (psycopg's ``conninfo``), MemNet's
connection defaults (timeouts, keepalives, an application name) are added
unless the URL sets them, and the URL is shown without its password. A
psycopg failure becomes one coded :class:`~memnet.errors.CabinetError`
(``cabinet_unavailable``, ``cabinet_auth``, ``cabinet_timeout``, ``disk_full``,
``cabinet_corrupt``, ``cabinet_io``) whose message never carries the password.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..errors import (
    CabinetAuthFailed,
    CabinetCorrupt,
    CabinetError,
    CabinetTimeout,
    CabinetUnavailable,
    CabinetUrlError,
    DiskFull,
    MemNetError,
)

SCHEMES = ("postgresql", "postgres")

# libpq settings MemNet adds unless the URL gives its own
_DEFAULTS = {
    "connect_timeout": "10",
    "application_name": "memnet",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    # data sent and not acknowledged for 60 s: the link is dead (keepalives
    # only watch an idle connection)
    "tcp_user_timeout": "60000",
}


def psycopg_module() -> Any:
    try:
        import psycopg
    except ImportError:
        raise MemNetError(
            "a PostgreSQL cabinet needs psycopg 3: pip install 'memnet[postgres]'",
            code="dependency_missing",
        ) from None
    return psycopg


def looks_like_url(where: str) -> bool:
    """Whether a cabinet location is a URL (``scheme://...``) rather than a path."""
    return re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", where) is not None


# libpq's connection keywords: a location that starts with one of them and "="
# is a keyword string (host=... password=...), not a directory name
_KEYWORDS = (
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "service",
    "options",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "application_name",
    "connect_timeout",
    "target_session_attrs",
    "channel_binding",
    "gssencmode",
    "krbsrvname",
    "require_auth",
    "keepalives",
    "client_encoding",
    "requiressl",
)
_KEYWORD_STRING = re.compile(
    r"\s*(?:" + "|".join(_KEYWORDS) + r")\s*=|.*(?:^|\s)password\s*=", re.I | re.S
)
_NEAR_SCHEME = re.compile(r"\s*postgres(?:ql)?\s*(?::|//)", re.I)


def is_cabinet_url(where: str) -> bool:
    """Whether a cabinet location is a URL (``scheme://...``) rather than a
    directory. A string that is meant as a PostgreSQL URL or connection string
    but is not a URL (``postgresql:/...``, ``postgresql//...``,
    ``postgresql:user@...``, white space around a URL, the keyword form
    ``host=... password=...``) is ``bad_cabinet_url``, never a directory: made
    into one, its name would keep the password on disk. The message does not
    repeat the string."""
    bare = where.strip()
    if bare != where and (
        looks_like_url(bare) or _NEAR_SCHEME.match(bare) or _KEYWORD_STRING.match(bare)
    ):
        raise CabinetUrlError(
            "the cabinet location has white space around a URL or connection "
            "string: remove it "
            "(the location was not used, as a URL or as a directory)"
        )
    if looks_like_url(where):
        return True
    if _NEAR_SCHEME.match(where):
        raise CabinetUrlError(
            "the cabinet location starts like a PostgreSQL URL but is not one: "
            "write it as postgresql://user:password@host:port/dbname (it was "
            "not used, as a URL or as a directory)"
        )
    if _KEYWORD_STRING.match(where):
        raise CabinetUrlError(
            "the cabinet location is a libpq keyword string (host=... "
            "dbname=...): write it as a postgresql://user@host:port/dbname "
            "URL (it was not used, as a connection or as a directory)"
        )
    return False


_QUOTED = re.compile(r'"([^"]*)"')


def _url_secrets(url: str) -> list[str]:
    """What may be the password in a URL libpq could not read: the part of
    the user information after its first ``:`` (as written and decoded), and
    the value of a ``password=`` parameter."""
    from urllib.parse import unquote

    words = []
    m = re.match(r"\s*[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)@", url)
    if m and ":" in m.group(1):
        words.append(m.group(1).split(":", 1)[1])
    words += re.findall(r"password\s*=\s*([^&\s]+)", url, re.I)
    return [x for w in words for x in {w, unquote(w, errors="replace")} if x]


class _Secret:
    """Where the password of a connection string may show, and how to hide it."""

    def __init__(self, params: dict[str, Any]) -> None:
        pw = params.get("password") or os.environ.get("PGPASSWORD") or ""
        self.words = [w for w in {pw, _quote(pw)} if len(w) >= 1]

    def scrub(self, text: str) -> str:
        for w in self.words:
            text = text.replace(w, "***")
        return text


def _quote(s: str) -> str:
    from urllib.parse import quote

    return quote(s, safe="")


def read_url(url: str) -> tuple[str, str, _Secret]:
    """``(conninfo, display, secret)`` of a libpq URL or connection string: the
    string to connect with (MemNet's defaults added), the URL to show (no
    password) and where the password may show."""
    psycopg = psycopg_module()
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as e:
        # libpq quotes the token it stumbled on, or the whole URL: neither is shown
        # (a one-character token, such as "]", says what is missing: it stays)
        text = _QUOTED.sub(
            lambda m: m.group(0) if len(m.group(1)) < 2 else '"..."', " ".join(str(e).split())
        )
        for w in _url_secrets(url):
            text = text.replace(w, "***")
        raise CabinetUrlError(f"cannot read the PostgreSQL URL: {text}") from None
    secret = _Secret(params)
    for port in str(params.get("port") or "").split(","):
        if port and not (port.isdigit() and 0 < int(port) < 65536):
            raise CabinetUrlError(
                f"the PostgreSQL URL names port {port!r}, not a number from 1 to 65535"
            )
    for k, v in _DEFAULTS.items():
        params.setdefault(k, v)
    conninfo = make_conninfo("", **params)
    # no host: libpq's default ($PGHOST, else the local socket), written as
    # libpq writes it, postgresql:///dbname
    host = params.get("host") or params.get("hostaddr") or ""
    # the options (a search_path) tell cabinets in one database apart
    options = params.get("options")
    display = secret.scrub(
        f"postgresql://{str(params['user']) + '@' if params.get('user') else ''}"
        f"{host}{':' + str(params['port']) if params.get('port') else ''}"
        f"/{params.get('dbname', '')}" + (f"?options={_quote(str(options))}" if options else "")
    )
    return conninfo, display, secret


def error_for(
    e: BaseException, doing: str, display: str, secret: _Secret, conn: Any, unknown: bool = False
) -> CabinetError:
    """The coded error for a psycopg failure on the cabinet at ``display`` whose
    connection is ``conn`` (password scrubbed); ``unknown``: COMMIT was on its
    way when it happened."""
    psycopg = psycopg_module()
    state = getattr(e, "sqlstate", None) or ""
    # (without its closing period: more sentences may follow)
    text = secret.scrub(" ".join(str(e).split())).rstrip(".")
    where = f"cannot {doing} the PostgreSQL cabinet at {display}: {text}"
    low = text.lower()
    if (
        state in ("28P01", "28000", "42501")
        or "authentication failed" in low
        or "no pg_hba.conf entry" in low
        or ("role" in low and "does not exist" in low)
        or "permission denied" in low
    ):
        return CabinetAuthFailed(where)
    if state == "53100":
        return DiskFull(f"{where}; nothing was written")
    if state in ("57014", "55P03", "25P03"):
        return CabinetTimeout(f"{where}; nothing was written")
    if state in ("XX001", "XX002"):
        return CabinetCorrupt(where)
    if state in ("42P01", "42703", "42883", "42P10", "42804", "42846"):
        # a table, column or constraint of the schema is gone or changed
        return CabinetCorrupt(f"{where}; the cabinet's tables are not as MemNet made them")
    if state == "25006" or (state == "0A000" and "during recovery" in low):
        # a standby (hot standby, or a server still recovering) takes no writes:
        # another server is the one to write to, or this one later
        return CabinetUnavailable(
            f"{where}; the server takes no writes (a standby?): nothing was written",
            outcome="not written",
        )
    if (
        state in ("3D000", "3F000")
        or (
            not state
            and (
                "bad value for" in low
                or ("invalid" in low and "value" in low)
                or "definition of service" in low
                or "service file" in low
                or ('database "' in low and "does not exist" in low)
                or "unrecognized configuration parameter" in low
                or ("setsockopt" in low and "invalid argument" in low)
            )
        )
        or (state in ("42704", "22023") and "parameter" in low)
    ):
        # the URL names no database (or, 3F000, its search_path no schema there),
        # or a setting libpq or the server refuses: no retry can help
        return CabinetUrlError(f"{where}; check the cabinet URL")
    lost = isinstance(e, psycopg.OperationalError) and (
        conn is None
        or conn.broken
        or conn.closed
        or not state
        or state.startswith(("08", "57P", "53"))
    )
    if lost or state.startswith(("08", "57P")):
        if unknown:
            return CabinetUnavailable(
                f"{where}. The connection broke while the commit was on its way: it may "
                "or may not be stored; flushing the same session again is safe",
                outcome="unknown",
            )
        return CabinetUnavailable(
            where + ("; nothing was written" if doing == "write to" else ""), outcome="not written"
        )
    return CabinetError(where, code="cabinet_io")


__all__ = ["SCHEMES", "is_cabinet_url", "looks_like_url"]
