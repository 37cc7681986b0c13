"""The one error root of MemNet and its stable codes.

Every error MemNet raises on purpose is a :class:`MemNetError`. Each carries a
stable, machine-readable ``code`` that the Python API, the CLI, the wire and the
MCP server all report the same way, so a harness can branch on the code and a
person can read the message.

Hierarchy::

    MemNetError                      internal        (the root; an unexpected failure)
    ├── InvalidArgument              invalid_argument a Python argument of the wrong type or range
    ├── GQLSyntaxError               gql_syntax      bad text, with line/column
    ├── ModelSyntaxError             model_syntax    bad SysML model text, with line/column
    ├── ImportSyntaxError            import_syntax   a damaged line of a file to import
    ├── QueryError                   bad_query       a q or option out of range
    ├── DeltaMismatch                delta_mismatch  a delta applied to another Shape
    ├── CommitRejected               commit_rejected Δ refused whole
    │   ├── NotADelta                not_a_delta     Commit given a slice, not a Δ
    │   ├── EchoRefused              echo_refused    Δ re-inserts recalled rows
    │   └── CapExceeded              cap_exceeded    Δ would pass the rate cap R
    ├── AbsorbRejected               absorb_rejected the ImportGuard refused a slice
    ├── SessionNotFound              session_not_found
    ├── SessionExists                session_exists
    ├── InvalidSessionId             invalid_session_id
    ├── VersionNotFound              version_not_found that version is not kept
    ├── InputTooLarge                input_too_large text over a size/depth cap
    ├── ConflictError                conflict        stale version on flush
    ├── TraceFailed                  trace_failed    a requirement lacks a test (memnet ver)
    ├── PathNotFound                 path_not_found  no such file or directory
    ├── OutputExists                 output_exists   refused to overwrite a file
    ├── IOFailure                    io              the OS refused a file read or write
    ├── DependencyMissing            dependency_missing an extra or a program is not installed
    ├── WireError                    bad_frame       a frame the wire cannot take
    │   └── FrameTooLarge            frame_too_large a frame over 4 MiB
    ├── HostError                    (host index, memnet.host)
    │   ├── IndexNotFound            index_not_found
    │   ├── IndexCorrupt             index_corrupt
    │   ├── IndexBusy                index_busy
    │   ├── PathOutsideRoot          path_outside_root
    │   └── BadHit                   bad_hit         a retriever's hit cannot be committed
    └── CabinetError                 cabinet_*       storage refused or failed
        ├── CabinetClosed            cabinet_closed  used after close()
        ├── CabinetIOError           cabinet_io      the storage engine failed an operation
        ├── CabinetFull              cabinet_full    map size cap reached
        ├── DiskFull                 disk_full       ENOSPC / EFBIG / EDQUOT
        ├── CabinetCorrupt           cabinet_corrupt bad checksum or record
        ├── CabinetFormat            cabinet_format  incompatible format
        ├── CabinetForked            cabinet_forked  used across fork()
        ├── CabinetUrlError          bad_cabinet_url unknown scheme or malformed URL
        ├── CabinetUnavailable       cabinet_unavailable  server down, unreachable, connection lost
        ├── CabinetAuthFailed        cabinet_auth    login refused or privilege missing
        ├── CabinetTimeout           cabinet_timeout statement or lock timeout on the server
        ├── BackupTargetExists       backup_target_exists the backup destination holds a cabinet
        └── NotSupported             not_supported   the backend does not offer that operation

Example::

    >>> from memnet import Session, MemNetError
    >>> s = Session("demo")
    >>> try:
    ...     s.commit("SET nzz.status = 'done'")
    ... except MemNetError as e:
    ...     print(e.code)
    commit_rejected
"""

from __future__ import annotations

import errno
from typing import Any

#: Every code MemNet may report, with a one-line meaning. Codes are stable:
#: new ones may be added, existing ones never change meaning.
CODES: dict[str, str] = {
    "gql_syntax": "the GQL text does not parse",
    "model_syntax": "a model file (SysML v2 text) does not parse or is inconsistent",
    "import_syntax": "a line of a file given to memnet import is damaged (the message names "
    "it); nothing was written",
    "bad_query": "a Recall query or option is out of range",
    "delta_mismatch": "a delta answer was applied to a Shape it was not taken against",
    "commit_rejected": "the Commit was refused whole; the session is unchanged",
    "echo_refused": "the Commit re-inserts rows that already exist (echo of a Shape)",
    "cap_exceeded": "the Commit would pass the session's rate cap",
    "session_not_found": "no session with that id",
    "session_exists": "a session with that id already exists",
    "invalid_session_id": "session ids are [a-z0-9][a-z0-9-]{0,63}",
    "input_too_large": "the input passes a size or nesting cap",
    "conflict": "the stored version moved on; reload and retry",
    "cabinet_full": "the cabinet reached its configured size cap; nothing was written",
    "disk_full": "the disk (or file size limit) refused the write; nothing was written",
    "cabinet_corrupt": "a stored record failed its checksum or could not be decoded",
    "cabinet_format": "the cabinet was written by an incompatible format or engine",
    "cabinet_forked": "a cabinet opened before fork() was used in the child process",
    "cabinet_closed": "the cabinet was closed",
    "cabinet_io": "the storage engine failed an operation (I/O or engine error)",
    "bad_cabinet_url": "the cabinet URL has an unknown scheme or cannot be read",
    "cabinet_unavailable": "the cabinet's database server is down, unreachable or dropped the "
    "connection; a flush that failed so can be retried",
    "cabinet_auth": "the cabinet's database server refused the login, or the role lacks a "
    "privilege the cabinet needs",
    "cabinet_timeout": "the cabinet's database server cancelled a statement (statement or lock "
    "timeout); nothing was written",
    "backup_target_exists": "the backup destination already holds a cabinet",
    "not_supported": "this backend does not offer that operation",
    "not_a_delta": "Commit was given something that is not a GQL Δ (a slice joins by Absorb)",
    "absorb_rejected": "the ImportGuard refused a slice; the lead session is unchanged",
    "frame_too_large": "a wire frame passes the 4 MiB cap; it was not read",
    "bad_frame": "a wire frame is not a statement the wire understands",
    "dependency_missing": "an optional dependency (an extra or a program) is not installed",
    "version_not_found": "that version of the session is not kept",
    "path_not_found": "a file or directory named in the request does not exist (or is not "
    "the right type)",
    "output_exists": "the output file already exists; nothing was written (ask to overwrite it)",
    "io": "the operating system refused to read or write a file (its reason is in the message)",
    "trace_failed": "requirement traceability failed: a requirement has no test, a test names "
    "an unknown requirement or an MN-VER test names none (memnet ver)",
    # host index (memnet.host)
    "index_not_found": "no host index in that directory (build one with memnet host index)",
    "index_corrupt": "the host index cannot be read; delete it and index again",
    "index_busy": "another process is updating the host index",
    "path_outside_root": "the path is not inside the root it must be in (the root the host "
    "index covers, or the roots of the MCP server)",
    "bad_hit": "a retriever returned a hit that cannot be committed (locator, title, score, kind)",
    "invalid_argument": "a Python argument has the wrong type or is out of range",
    "internal": "an unexpected failure inside MemNet",
}


class MemNetError(Exception):
    """Root of every error MemNet raises on purpose.

    ``code`` is stable and machine readable; ``details`` holds structured
    context (line, column, versions, ...) for faces that report it.
    """

    code: str = "internal"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.details: dict[str, Any] = details

    def to_dict(self) -> dict[str, Any]:
        """The error as plain data: ``{"code", "message", **details}``."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        out.update(self.details)
        return out

    def __str__(self) -> str:
        return self.message


class GQLSyntaxError(MemNetError, ValueError):
    """The text does not parse. ``line`` and ``column`` are 1-based."""

    code = "gql_syntax"

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        context: str | None = None,
    ) -> None:
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"{message}{where}", line=line, column=column)
        self.line = line
        self.column = column
        self.context = context


class ModelSyntaxError(MemNetError, ValueError):
    """A model file given to an ingester (SysML v2 text) cannot be read.

    ``path`` names the file; ``line`` and ``column`` are 1-based where they
    apply.
    """

    code = "model_syntax"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        where = ""
        if line is not None:
            where = f" at line {line}" + (f", column {column}" if column is not None else "")
        prefix = f"{path}: " if path else ""
        super().__init__(f"{prefix}{message}{where}", path=path, line=line, column=column)
        self.path = path
        self.line = line
        self.column = column


class ImportSyntaxError(MemNetError, ValueError):
    """A line of a file given to an importer (``memnet import``) cannot be
    read: not JSON, not a record of the format, or a value a session cannot
    hold. ``path`` names the file and ``line`` (1-based) the line; nothing
    was written."""

    code = "import_syntax"

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = f"{path}:{line}: " if path and line else (f"line {line}: " if line else "")
        super().__init__(f"{where}{message}", path=path, line=line)
        self.path = path
        self.line = line


class QueryError(MemNetError, ValueError):
    """A Recall query or option is out of range."""

    code = "bad_query"


class DeltaMismatch(MemNetError, ValueError):
    """A delta answer names rows the Shape it is applied to does not hold
    (``memnet.apply_delta``), or the text is not a delta answer."""

    code = "delta_mismatch"


class CommitRejected(MemNetError):
    """A Commit was refused whole; nothing was applied."""

    code = "commit_rejected"

    def __init__(
        self, message: str, *, line: int | None = None, column: int | None = None, **details: Any
    ) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"{message}{where}", line=line, column=column, **details)
        self.line = line
        self.column = column


class EchoRefused(CommitRejected):
    """A Δ re-inserts an element that already exists: writeback is NEW/SET only."""

    code = "echo_refused"


class CapExceeded(CommitRejected):
    """A Δ would pass the session's rate cap R; start a new session instead."""

    code = "cap_exceeded"


class SessionNotFound(MemNetError, KeyError):
    """No session with that id exists (sessions are never created implicitly)."""

    code = "session_not_found"

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


class SessionExists(MemNetError):
    """A session with that id already exists."""

    code = "session_exists"


class InvalidSessionId(MemNetError, ValueError):
    """A session id outside ``[a-z0-9][a-z0-9-]{0,63}``."""

    code = "invalid_session_id"


class InputTooLarge(MemNetError, ValueError):
    """The input passes a size or nesting cap; it was refused before parsing."""

    code = "input_too_large"


class ConflictError(MemNetError):
    """The stored version moved on since this copy was read (compare-and-swap)."""

    code = "conflict"


class CabinetError(MemNetError):
    """The cabinet refused or failed an operation (see the subclasses)."""

    code = "cabinet_closed"


class CabinetFull(CabinetError):
    """The cabinet reached its configured size cap; nothing was written."""

    code = "cabinet_full"


class DiskFull(CabinetError):
    """The disk or a file size limit refused the write; nothing was written."""

    code = "disk_full"


class CabinetCorrupt(CabinetError):
    """A stored record failed its checksum or could not be decoded."""

    code = "cabinet_corrupt"


class CabinetFormat(CabinetError):
    """The cabinet was written with an incompatible format or engine version."""

    code = "cabinet_format"


class CabinetForked(CabinetError):
    """A cabinet opened before ``fork()`` was used in the child."""

    code = "cabinet_forked"


class CabinetUrlError(CabinetError, ValueError):
    """A cabinet location that looks like a URL but names no known back end,
    or a PostgreSQL URL that cannot be read."""

    code = "bad_cabinet_url"


class CabinetUnavailable(CabinetError):
    """The database server of the cabinet is down, unreachable, shutting down or
    dropped the connection. A flush that fails so leaves the session dirty and
    can be retried (``details["outcome"] == "unknown"`` when the connection was
    lost while the commit was on its way: flushing again is still safe)."""

    code = "cabinet_unavailable"


class CabinetAuthFailed(CabinetError):
    """The database server refused the login, or the role lacks a privilege."""

    code = "cabinet_auth"


class CabinetTimeout(CabinetError):
    """The database server cancelled a statement (``statement_timeout`` or
    ``lock_timeout``); the transaction was rolled back."""

    code = "cabinet_timeout"


class TraceFailed(MemNetError):
    """Requirement traceability does not hold: a requirement of the model has no
    test, a test names an id the model lacks, an MN-VER test names no
    requirement, or the tests could not be collected (``memnet ver``)."""

    code = "trace_failed"


class PathNotFound(MemNetError):
    """A file or directory named in the request does not exist, or is not of
    the kind the request needs."""

    code = "path_not_found"


class OutputExists(MemNetError):
    """The output file already exists and was left as it was."""

    code = "output_exists"


class IOFailure(MemNetError):
    """The operating system refused to read or write a file."""

    code = "io"


class InvalidArgument(MemNetError, ValueError):
    """A Python argument has the wrong type or is out of range (also a
    ``ValueError``, so callers that caught that keep working)."""

    code = "invalid_argument"


class NotADelta(CommitRejected):
    """Commit was given something that is not GQL text (a slice joins by Absorb)."""

    code = "not_a_delta"


class AbsorbRejected(MemNetError):
    """The ImportGuard (or export) refused; nothing was written."""

    code = "absorb_rejected"


class DependencyMissing(MemNetError):
    """An optional dependency (a package extra or a program) is not installed;
    the message says how to install it."""

    code = "dependency_missing"


class WireError(MemNetError):
    """A statement the wire cannot take (``bad_frame`` unless told)."""

    code = "bad_frame"


class FrameTooLarge(WireError):
    """A wire frame passes the 4 MiB cap; it was not read."""

    code = "frame_too_large"


class HostError(MemNetError):
    """The host index (``memnet.host``) refused or failed (see the subclasses)."""

    code = "index_corrupt"


class IndexNotFound(HostError):
    """No host index in that directory."""

    code = "index_not_found"


class IndexCorrupt(HostError):
    """The host index cannot be read."""

    code = "index_corrupt"


class IndexBusy(HostError):
    """Another process is updating the host index."""

    code = "index_busy"


class PathOutsideRoot(HostError):
    """The path is not inside the root the host index covers, or outside the
    roots an MCP server's file tools may read."""

    code = "path_outside_root"


class BadHit(HostError):
    """A retriever returned a hit that cannot be committed."""

    code = "bad_hit"


class CabinetClosed(CabinetError):
    """The cabinet was used after ``close()``."""

    code = "cabinet_closed"


class CabinetIOError(CabinetError):
    """The storage engine failed an operation (I/O or engine error)."""

    code = "cabinet_io"


class BackupTargetExists(CabinetError):
    """The backup destination already holds a cabinet; nothing was written."""

    code = "backup_target_exists"


class NotSupported(CabinetError):
    """This backend does not offer that operation."""

    code = "not_supported"


def os_error(e: OSError) -> MemNetError:
    """The coded error for an ``OSError`` a face meets while reading or writing
    a file the user named: a name that leads nowhere is ``path_not_found``,
    anything else ``io``."""
    what = f"{e.strerror or e}" + (f": {e.filename!r}" if e.filename is not None else "")
    if (
        isinstance(e, (FileNotFoundError, NotADirectoryError, IsADirectoryError))
        or e.errno == errno.ENAMETOOLONG
    ):
        return PathNotFound(what, path=str(e.filename)[:200] if e.filename else None)
    return IOFailure(what)


class VersionNotFound(MemNetError, LookupError):
    """The session has no such version."""

    code = "version_not_found"


__all__ = [
    "AbsorbRejected",
    "BackupTargetExists",
    "BadHit",
    "CODES",
    "CabinetAuthFailed",
    "CabinetClosed",
    "CabinetCorrupt",
    "CabinetError",
    "CabinetForked",
    "CabinetFormat",
    "CabinetFull",
    "CabinetIOError",
    "CabinetTimeout",
    "CabinetUnavailable",
    "CabinetUrlError",
    "CapExceeded",
    "CommitRejected",
    "ConflictError",
    "DeltaMismatch",
    "DependencyMissing",
    "DiskFull",
    "EchoRefused",
    "FrameTooLarge",
    "GQLSyntaxError",
    "HostError",
    "IOFailure",
    "ImportSyntaxError",
    "IndexBusy",
    "IndexCorrupt",
    "IndexNotFound",
    "InputTooLarge",
    "InvalidArgument",
    "InvalidSessionId",
    "MemNetError",
    "ModelSyntaxError",
    "NotADelta",
    "NotSupported",
    "OutputExists",
    "PathNotFound",
    "PathOutsideRoot",
    "QueryError",
    "SessionExists",
    "SessionNotFound",
    "TraceFailed",
    "VersionNotFound",
    "WireError",
    "os_error",
]
