"""MemNet: a bounded working memory for LLM agents.

An agent talks to one :class:`Session` through two verbs: :meth:`Session.recall`
returns a bounded :class:`Shape` of the session graph as shaped GQL text, and
:meth:`Session.commit` applies a sparse GQL batch atomically.

Example::

    >>> import memnet
    >>> s = memnet.Session("demo")
    >>> s.commit("INSERT (t:TSK {title: 'Write the docs', status: 'open'})").version
    1
    >>> print(s.recall("TSK status:open").receipt.seed_mode)
    match
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False  # (not typing's: `import memnet` stays free of the typing module)

if TYPE_CHECKING:  # what the names below are, for type checkers
    from typing import Any

    from .absorb import (
        AbsorbResult,
        ImportGuard,
        WorkingMemorySlice,
        export_working_memory_slice,
        import_slice,
    )
    from .cabinet import (
        Cabinet,
        LogEntry,
        SessionInfo,
    )
    from .commit import (
        Bulk,
        Caps,
        CommitRecord,
        CommitResult,
    )
    from .errors import (
        CODES,
        AbsorbRejected,
        BackupTargetExists,
        BadHit,
        CabinetAuthFailed,
        CabinetClosed,
        CabinetCorrupt,
        CabinetError,
        CabinetForked,
        CabinetFormat,
        CabinetFull,
        CabinetIOError,
        CabinetTimeout,
        CabinetUnavailable,
        CabinetUrlError,
        CapExceeded,
        CommitRejected,
        ConflictError,
        DeltaMismatch,
        DependencyMissing,
        DiskFull,
        EchoRefused,
        FrameTooLarge,
        GQLSyntaxError,
        HostError,
        ImportSyntaxError,
        IndexBusy,
        IndexCorrupt,
        IndexNotFound,
        InputTooLarge,
        InvalidArgument,
        InvalidSessionId,
        IOFailure,
        MemNetError,
        ModelSyntaxError,
        NotADelta,
        NotSupported,
        OutputExists,
        PathNotFound,
        PathOutsideRoot,
        QueryError,
        SessionExists,
        SessionNotFound,
        TraceFailed,
        VersionNotFound,
        WireError,
    )
    from .gql.parse import (
        parse,
        parse_delta,
        parse_query,
    )
    from .recall.delta import (
        apply_delta,
    )
    from .recall.receipt import Receipt
    from .recall.shape import Shape
    from .session import (
        LIMITS,
        Session,
    )
    from .tokens import (
        count_tokens,
    )

# Every public name is imported on first use (PEP 562), so `import memnet` and
# every command line start cost only what they use: the parser, pydantic
# (Absorb), the cabinet and the tokenizer load when something needs them.
_LAZY = {
    "AbsorbRejected": "errors",
    "AbsorbResult": "absorb",
    "BackupTargetExists": "errors",
    "BadHit": "errors",
    "Bulk": "commit",
    "CODES": "errors",
    "Cabinet": "cabinet",
    "CabinetAuthFailed": "errors",
    "CabinetClosed": "errors",
    "CabinetCorrupt": "errors",
    "CabinetError": "errors",
    "CabinetForked": "errors",
    "CabinetFormat": "errors",
    "CabinetFull": "errors",
    "CabinetIOError": "errors",
    "CabinetTimeout": "errors",
    "CabinetUnavailable": "errors",
    "CabinetUrlError": "errors",
    "CapExceeded": "errors",
    "Caps": "commit",
    "CommitRecord": "commit",
    "CommitRejected": "errors",
    "CommitResult": "commit",
    "ConflictError": "errors",
    "DeltaMismatch": "errors",
    "DependencyMissing": "errors",
    "DiskFull": "errors",
    "EchoRefused": "errors",
    "FrameTooLarge": "errors",
    "GQLSyntaxError": "errors",
    "HostError": "errors",
    "IOFailure": "errors",
    "ImportGuard": "absorb",
    "ImportSyntaxError": "errors",
    "IndexBusy": "errors",
    "IndexCorrupt": "errors",
    "IndexNotFound": "errors",
    "InputTooLarge": "errors",
    "InvalidArgument": "errors",
    "InvalidSessionId": "errors",
    "LIMITS": "session",
    "LogEntry": "cabinet",
    "MemNetError": "errors",
    "ModelSyntaxError": "errors",
    "NotADelta": "errors",
    "NotSupported": "errors",
    "OutputExists": "errors",
    "PathNotFound": "errors",
    "PathOutsideRoot": "errors",
    "QueryError": "errors",
    "Receipt": "recall.receipt",
    "Session": "session",
    "SessionExists": "errors",
    "SessionInfo": "cabinet",
    "SessionNotFound": "errors",
    "Shape": "recall.shape",
    "TraceFailed": "errors",
    "VersionNotFound": "errors",
    "WireError": "errors",
    "WorkingMemorySlice": "absorb",
    "apply_delta": "recall.delta",
    "count_tokens": "tokens",
    "export_working_memory_slice": "absorb",
    "import_slice": "absorb",
    "parse": "gql.parse",
    "parse_delta": "gql.parse",
    "parse_query": "gql.parse",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memnet' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"memnet.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AbsorbRejected",
    "AbsorbResult",
    "BackupTargetExists",
    "BadHit",
    "Bulk",
    "CODES",
    "Cabinet",
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
    "Caps",
    "CommitRecord",
    "CommitRejected",
    "CommitResult",
    "ConflictError",
    "DeltaMismatch",
    "DependencyMissing",
    "DiskFull",
    "EchoRefused",
    "FrameTooLarge",
    "GQLSyntaxError",
    "HostError",
    "IOFailure",
    "ImportGuard",
    "ImportSyntaxError",
    "IndexBusy",
    "IndexCorrupt",
    "IndexNotFound",
    "InputTooLarge",
    "InvalidArgument",
    "InvalidSessionId",
    "LIMITS",
    "LogEntry",
    "MemNetError",
    "ModelSyntaxError",
    "NotADelta",
    "NotSupported",
    "OutputExists",
    "PathNotFound",
    "PathOutsideRoot",
    "QueryError",
    "Receipt",
    "Session",
    "SessionExists",
    "SessionInfo",
    "SessionNotFound",
    "Shape",
    "TraceFailed",
    "VersionNotFound",
    "WireError",
    "WorkingMemorySlice",
    "__version__",
    "apply_delta",
    "count_tokens",
    "export_working_memory_slice",
    "import_slice",
    "parse",
    "parse_delta",
    "parse_query",
]
