"""What a cabinet keeps about each session it opened (docs/decisions.md, D155).

A session opened from a cabinet (or created in it, or adopted) is *bound*: the
cabinet remembers the version it holds of it, which creation of the session
that was, how it lays out the session's nodes, and the marks of flushes whose
outcome is unknown. The session itself knows none of that: it keeps a journal
of the commits made since (:meth:`memnet.Session.journal`), which a flush
stores and settles.

Bindings are held here, keyed by the session object (weakly: a session no one
holds any more takes its binding with it), so that any cabinet object on the
same store may flush a session another one opened, as before.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CabinetCorrupt, VersionNotFound
from ..session import Session
from . import records as R

if TYPE_CHECKING:
    from .base import Cabinet


@dataclass(slots=True)
class Binding:
    """A cabinet's hold on one session."""

    #: the version the cabinet holds (the session's journal starts after it)
    version: int
    #: which creation of the session it was (a session dropped and created
    #: again has another)
    token: str | None
    #: how the cabinet holds its nodes: (chunk records, node records that
    #: override them), as of ``version``
    chunks: tuple[int, int] = (0, 0)
    #: marks of flushes that failed after they may have reached the cabinet
    unsure: dict[str, int] = field(default_factory=dict)


_BOUND: weakref.WeakKeyDictionary[Session, Binding] = weakref.WeakKeyDictionary()


def binding_of(session: Session) -> Binding | None:
    """The binding of ``session``; None for a session no cabinet keeps."""
    return _BOUND.get(session)


def bind(session: Session, version: int, token: str | None, cabinet: Cabinet) -> Binding:
    """Bind ``session`` to ``cabinet`` at ``version``: its journal and the
    store's change tracking start (again) here, and the cabinet lends it its
    past versions."""
    b = _BOUND[session] = Binding(version, token)
    session.start_journal()
    session.store.track_changes()
    session.archive = StoredArchive(cabinet, session.name, token, session.tokenizer)
    return b


def unbind(session: Session) -> None:
    """Forget ``session``: it may be adopted (again) as a new session."""
    _BOUND.pop(session, None)
    session.stop_journal()


class StoredArchive:
    """What a cabinet lends a session it opened, to rebuild its past versions
    for delta recall (``memnet/recall/delta.py``): a fresh copy at the stored
    version, and the changes of any stored commit as the log keeps them."""

    def __init__(self, cabinet: Cabinet, sid: str, token: str | None, tokenizer: str) -> None:
        self.cabinet = cabinet
        self.sid = sid
        self.token = token
        self.tokenizer = tokenizer

    def copy(self) -> Session:
        s = self.cabinet.hydrate(self.sid, tokenizer=self.tokenizer)
        b = binding_of(s)
        if b is None or b.token != self.token:
            raise VersionNotFound(f"session {self.sid!r} was dropped and created again")
        return s

    def changes(self, version: int) -> list[tuple[str, int, tuple[Any, ...]]]:
        key = R.element_key(self.sid, version)
        with self.cabinet.kv.read() as txn:
            raw = txn.get(R.LOG, key)
        if raw is None:
            raise VersionNotFound(f"session {self.sid!r} keeps no log record of version {version}")
        try:
            return [(str(op), int(i), tuple(st)) for op, i, st in R.decode(raw, key)["c"]]
        except (KeyError, TypeError, ValueError) as e:
            raise CabinetCorrupt(f"log record {key!r} is malformed: {e}") from None
