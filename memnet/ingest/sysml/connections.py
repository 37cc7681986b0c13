"""The SysML statements that connect features: connections and interfaces,
flows and messages, bindings and allocations. Each is a function of the
:class:`~memnet.ingest.sysml.parser.Reader`, called with the token of its
keyword current (as in :mod:`.statements`). A connection between ends named
by features becomes a ``Connect`` relation of the enclosing element (one per
end after the first); one with a body or a declaration of its own is an
element too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...gql.ast import Value
from .clauses import Decl
from .doc import Connect
from .expr import Fail
from .statements import Body, Handler, Pre, props_of

if TYPE_CHECKING:
    from .parser import Reader


def _edges(
    r: Reader,
    body: Body,
    i0: int,
    ends: list[str],
    edge: str,
    decl: Decl | None,
    **props: Value | None,
) -> None:
    line, col = r.where(i0)
    name = decl.name if decl is not None else None
    type_ = decl.types[0] if decl is not None and decl.types else None
    extra = props_of(**props)
    for dst in ends[1:]:
        r.relate(body, Connect(ends[0], dst, name, type_, line, col, edge, extra))


def _try_ends(r: Reader) -> list[str] | None:
    """``a to b`` / ``(a, b, c)`` when that is what follows, else nothing read."""
    mark = r.i
    try:
        return r.ends()
    except Fail:
        r.i = mark
        return None


def _connector_element(
    r: Reader,
    body: Body,
    i0: int,
    pre: Pre,
    kind: str,
    word: str,
    decl: Decl | None,
    inner: Body,
    ends: list[str] | None,
    props: dict[str, Value] | None = None,
    role: str | None = None,
) -> None:
    """A connector (connection, interface, allocation, flow, message, binding,
    succession) is an element when it has a name of its own, members of its own
    or no ends to draw an edge between; otherwise its edges say all of it."""
    named = decl is not None and bool(decl.name or decl.short_id or decl.redefines)
    if named or inner.members or ends is None:
        prev = body.prev, body.prev_state
        r.element(
            body,
            kind,
            decl if decl is not None else Decl(),
            i0,
            pre,
            inner,
            props=props,
            word=word,
            role=role,
        )
        if not named:  # one kept only for its members is not a step a `then` follows
            body.prev, body.prev_state = prev


def connector(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``connect``, ``connection``, ``interface``, ``allocate``, ``allocation``."""
    word = r.k[r.i]
    r.i += 1
    edge = "ALLOCATES" if word in ("allocate", "allocation") else "CONNECTS"
    decl: Decl | None = None
    if word in ("connect", "allocate"):
        ends: list[str] | None = r.ends()
    else:
        ends = _try_ends(r) if word == "interface" else None
        if ends is None:
            decl = r.usage_decl()
            r.value_part(decl)
            if r.accept("allocate" if edge == "ALLOCATES" else "connect"):
                ends = r.ends()
    inner = r.body()
    if ends is not None:
        _edges(r, body, i0, ends, edge, decl)
    kind, named = {
        "connect": ("CONN", "connection"),
        "connection": ("CONN", "connection"),
        "interface": ("IFACE", "interface"),
        "allocate": ("ALLOC", "allocation"),
        "allocation": ("ALLOC", "allocation"),
    }[word]
    _connector_element(r, body, i0, pre, kind, named, decl, inner, ends)


def flow(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``flow``, ``succession flow``, ``message``: a FLOWS edge between the ends,
    and a FLOW element when the flow is named (or has members of its own)."""
    k = r.k
    word = k[r.i]
    r.i += 1
    if word == "succession":
        r.expect("flow")
    ends = None
    if k[r.i] not in ("of", "from"):
        mark = r.i
        try:
            ends = [r.chain()]
            r.expect("to")
            ends.append(r.chain())
        except Fail:
            r.i, ends = mark, None
    decl = None
    payload = None
    if ends is None:
        decl = r.usage_decl()
        r.value_part(decl)
        if r.accept("of"):
            payload = r.payload()
        if r.accept("from"):
            ends = [r.chain()]
            r.expect("to")
            ends.append(r.chain())
    inner = r.body()
    if ends is not None:
        _edges(r, body, i0, ends, "FLOWS", decl, of=payload)
    _connector_element(
        r,
        body,
        i0,
        pre,
        "FLOW",
        "message" if word == "message" else "flow",
        decl,
        inner,
        ends,
        props={"of": payload} if payload else None,
        role="message" if word == "message" else None,
    )


def bind(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``[binding b] bind a = b``."""
    decl = None
    if r.k[r.i] == "binding":
        r.i += 1
        decl = r.usage_decl()
    r.expect("bind")
    ends = [r.end()]
    r.expect("=")
    ends.append(r.end())
    inner = r.body()
    _edges(r, body, i0, ends, "BINDS", decl)
    if inner.members:
        _connector_element(r, body, i0, pre, "CONN", "binding", decl, inner, ends, role="binding")


STATEMENTS: dict[str, Handler] = {
    "connect": connector,
    "allocate": connector,
    "bind": bind,
    "binding": bind,
}
#: usages with a shape of their own (their ``def`` forms are plain definitions)
USAGES: dict[str, Handler] = {
    "connection": connector,
    "interface": connector,
    "allocation": connector,
    "flow": flow,
    "message": flow,
}

__all__ = ["STATEMENTS", "USAGES", "flow"]
