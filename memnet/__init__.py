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
        AbsorbRejected,
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
        CabinetCorrupt,
        CabinetUrlError,
        CabinetUnavailable,
        CabinetTimeout,
        CabinetAuthFailed,
        CabinetError,
        CabinetForked,
        CabinetFormat,
        CabinetFull,
        CapExceeded,
        CommitRejected,
        ConflictError,
        DeltaMismatch,
        DiskFull,
        EchoRefused,
        GQLSyntaxError,
        InputTooLarge,
        InvalidSessionId,
        MemNetError,
        ModelSyntaxError,
        QueryError,
        SessionExists,
        SessionNotFound,
        TraceFailed,
        VersionNotFound,
    )
    from .gql.parse import (
        parse,
        parse_delta,
        parse_query,
    )
    from .recall.delta import (
        apply_delta,
    )
    from .recall.shape import (
        Receipt,
        Shape,
    )
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
    "AbsorbRejected": "absorb",
    "AbsorbResult": "absorb",
    "ImportGuard": "absorb",
    "WorkingMemorySlice": "absorb",
    "export_working_memory_slice": "absorb",
    "import_slice": "absorb",
    "Cabinet": "cabinet",
    "LogEntry": "cabinet",
    "SessionInfo": "cabinet",
    "Bulk": "commit",
    "Caps": "commit",
    "CommitRecord": "commit",
    "CommitResult": "commit",
    "CODES": "errors",
    "CabinetCorrupt": "errors",
    "CabinetUrlError": "errors",
    "CabinetUnavailable": "errors",
    "CabinetTimeout": "errors",
    "CabinetAuthFailed": "errors",
    "CabinetError": "errors",
    "CabinetForked": "errors",
    "CabinetFormat": "errors",
    "CabinetFull": "errors",
    "CapExceeded": "errors",
    "CommitRejected": "errors",
    "ConflictError": "errors",
    "DeltaMismatch": "errors",
    "DiskFull": "errors",
    "EchoRefused": "errors",
    "GQLSyntaxError": "errors",
    "InputTooLarge": "errors",
    "InvalidSessionId": "errors",
    "MemNetError": "errors",
    "ModelSyntaxError": "errors",
    "QueryError": "errors",
    "SessionExists": "errors",
    "SessionNotFound": "errors",
    "TraceFailed": "errors",
    "VersionNotFound": "errors",
    "parse": "gql.parse",
    "parse_delta": "gql.parse",
    "parse_query": "gql.parse",
    "apply_delta": "recall.delta",
    "Receipt": "recall.shape",
    "Shape": "recall.shape",
    "LIMITS": "session",
    "Session": "session",
    "count_tokens": "tokens",
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
    "ImportGuard",
    "WorkingMemorySlice",
    "export_working_memory_slice",
    "import_slice",
    "CODES",
    "LIMITS",
    "Cabinet",
    "CabinetCorrupt",
    "CabinetError",
    "CabinetFormat",
    "CabinetForked",
    "CabinetAuthFailed",
    "CabinetFull",
    "CabinetTimeout",
    "CabinetUnavailable",
    "CabinetUrlError",
    "DiskFull",
    "LogEntry",
    "SessionInfo",
    "VersionNotFound",
    "Bulk",
    "CapExceeded",
    "Caps",
    "CommitRecord",
    "CommitRejected",
    "CommitResult",
    "ConflictError",
    "DeltaMismatch",
    "EchoRefused",
    "GQLSyntaxError",
    "InputTooLarge",
    "InvalidSessionId",
    "MemNetError",
    "ModelSyntaxError",
    "QueryError",
    "Receipt",
    "Session",
    "SessionExists",
    "SessionNotFound",
    "TraceFailed",
    "Shape",
    "__version__",
    "apply_delta",
    "count_tokens",
    "parse",
    "parse_delta",
    "parse_query",
]
