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

from ._version import __version__
from .absorb import (
    AbsorbRejected,
    AbsorbResult,
    ImportGuard,
    WorkingMemorySlice,
    export_working_memory_slice,
    import_slice,
)
from .cabinet import Cabinet, LogEntry, SessionInfo
from .commit import Caps, CommitRecord, CommitResult
from .errors import (
    CODES,
    CabinetCorrupt,
    CabinetError,
    CabinetFormat,
    CabinetForked,
    CabinetFull,
    DiskFull,
    VersionNotFound,
    CapExceeded,
    CommitRejected,
    ConflictError,
    DeltaMismatch,
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
)
from .gql.parse import parse, parse_delta, parse_query
from .recall.delta import apply_delta
from .recall.shape import Receipt, Shape
from .session import LIMITS, Session
from .tokens import count_tokens


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
    "CabinetFull",
    "DiskFull",
    "LogEntry",
    "SessionInfo",
    "VersionNotFound",
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
