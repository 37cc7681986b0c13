"""The behaviour statements of SysML 8.2.2: actions and action nodes, successions,
states, state actions and transitions. Each is a function of the
:class:`~memnet.ingest.sysml.parser.Reader`, called with the token of its keyword
current.

Successions and transitions become ``THEN`` and ``TRANSITION`` edges between the
steps they join; ``then x;`` continues from the step written before it, and a
behaviour's ``start`` stands for the behaviour itself, so ``first start; then
a;`` reads: the behaviour begins with ``a``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .clauses import Decl
from .connections import flow
from .expr import Fail
from .statements import Body, Handler, Pre, named_link

if TYPE_CHECKING:
    from .parser import Reader


def _kept(r: Reader, body: Body, i0: int, pre: Pre, inner: Body, word: str) -> None:
    """A succession or transition whose body has members of its own is kept as an
    element (``succession1``) holding them; it is not a step a ``then`` follows."""
    if inner.members:
        prev = body.prev, body.prev_state
        r.element(body, "CONN", Decl(), i0, pre, inner, role=word, word=word)
        body.prev, body.prev_state = prev


def first(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``first a;`` (the first step), ``first a then b;``, ``first a if g then b;``,
    and ``succession s first a then b;``."""
    if r.k[r.i] == "succession":
        r.i += 1
        if r.k[r.i] == "flow":
            r.i -= 1
            flow(r, body, i0, pre)
            return
        r.usage_decl()
        r.expect("first")
    else:
        r.i += 1
    src = r.end()
    guard = None
    if r.accept("if"):
        guard = r.expr_text()[0]
        r.expect("then")
    elif not r.accept("then"):
        _kept(r, body, i0, pre, r.body(), "succession")
        body.prev, body.prev_state = src, False
        if src != "start":
            r.succession(body, i0, "start", src)
        return
    dst = r.end()
    inner = r.body()
    r.succession(body, i0, src, dst, {"if": guard} if guard else None)
    _kept(r, body, i0, pre, inner, "succession")


def then(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``then x;`` after a step, or ``then`` before the next step's declaration."""
    r.i += 1
    if r.k[r.i] == "[":  # the source end's multiplicity
        r.multiplicity()
    if r.k[r.i] == "NAME":
        dst = r.end()
        inner = r.body()
        r.succession(body, i0, body.prev, dst)
        _kept(r, body, i0, pre, inner, "succession")
        return
    src, src_state = body.prev, body.prev_state
    r.member(body)
    step, step_state = body.prev, body.prev_state
    if step is not None and step != src:  # the member was a step: it follows the one before
        body.prev_state = src_state
        r.succession(body, i0, src, step)
        body.prev_state = step_state


def guarded(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``if g then x;`` / ``else x;`` after a step (a guarded succession, or a
    transition after a state), or an ``if`` action node."""
    k = r.k
    if k[r.i] == "else":
        r.i += 1
        dst = r.end()
        inner = r.body()
        r.succession(body, i0, body.prev, dst, {"if": "else"})
        _kept(r, body, i0, pre, inner, "succession")
        return
    r.i += 1
    guard = r.expr_text()[0]
    if k[r.i] in ("do", "then"):
        effect = _effect(r) if r.accept("do") else None
        r.expect("then")
        dst = r.end()
        inner = r.body()
        r.succession(
            body, i0, body.prev, dst, {"if": guard, "do": effect}, transition=effect is not None
        )
        _kept(r, body, i0, pre, inner, "succession")
        return
    _node_rest(r, body, i0, pre, Decl(), "if")


def action(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``action a : A { ... }``, or an action node declared ``action a accept ...``."""
    r.i += 1
    decl = r.usage_decl()
    if r.k[r.i] in ("accept", "send", "assign", "terminate", "if", "while", "loop", "for"):
        node(r, body, i0, pre, decl)
        return
    r.value_part(decl)
    r.element(body, "ACT", decl, i0, pre, r.body())


def node(r: Reader, body: Body, i0: int, pre: Pre, decl: Decl | None = None) -> None:
    """Action nodes: ``accept``, ``send``, ``assign``, ``terminate``, ``if``,
    ``while``, ``loop``, ``for``, and the control nodes ``merge``, ``decide``,
    ``join``, ``fork``."""
    k = r.k
    word = k[r.i]
    r.i += 1
    decl = decl if decl is not None else Decl()
    if word == "accept":
        trigger = _accepted(r)
        if k[r.i] in ("if", "do", "then"):  # a transition from the state before
            _transition_rest(r, body, i0, pre, body.prev, decl.name, trigger)
            return
    elif word == "if":
        r.expr()
    _node_rest(r, body, i0, pre, decl, word)


def _accepted(r: Reader) -> str:
    """What follows ``accept``: the payload or trigger and ``via p``, as text."""
    start = r.i
    r.payload()
    if r.accept("via"):
        r.expr()
    return r.span(start)


def _send_or_assign(r: Reader, word: str) -> None:
    """What follows ``send`` (``[payload] [via p] [to q]``) or ``assign`` (``target :=
    value``)."""
    if word == "send":
        if r.k[r.i] not in ("via", "to", ";", "{", "then"):
            r.expr()
        if r.accept("via"):
            r.expr()
        if r.accept("to"):
            r.expr()
    else:
        r.expr()
        r.expect(":=")
        r.expr()


def _node_rest(r: Reader, body: Body, i0: int, pre: Pre, decl: Decl, word: str) -> None:
    k = r.k
    if word in ("send", "assign"):
        _send_or_assign(r, word)
    elif word == "terminate":
        if k[r.i] not in (";", "{"):
            r.expr()
    elif word in ("merge", "decide", "join", "fork"):
        r.usage_decl(decl)
    if word in ("if", "while", "loop", "for"):
        if word == "while":
            r.expr()
        elif word == "for":
            r.usage_decl()
            r.expect("in")
            r.expr()
        inner = r.block()
        if word == "if":
            while r.accept("else"):
                if r.accept("if"):
                    r.expr()
                    r.block(into=inner)
                    continue
                r.block(into=inner)
                break
        elif r.accept("until"):
            r.expr()
            r.expect(";")
    else:
        inner = r.body()
    r.element(body, "ACT", decl, i0, pre, inner, role=word)


def state(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    decl = r.usage_decl()
    r.value_part(decl)
    r.element(body, "STATE", decl, i0, pre, r.body(state=True))


def subaction(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``entry``/``do``/``exit`` in a state: nothing, an action, or a named one performed."""
    k = r.k
    role = k[r.i]
    r.i += 1
    if role == "entry":  # a `then x;` after the entry action names the first state
        body.prev, body.prev_state = "start", False
    if r.accept(";"):
        return
    if k[r.i] == "action":
        r.i += 1
        decl = r.usage_decl()
        r.value_part(decl)
        r.element(body, "ACT", decl, i0, pre, r.body(), role=role)
    elif k[r.i] in ("accept", "send", "assign"):
        before = len(body.elements)
        node(r, body, i0, pre)
        if len(body.elements) > before:
            body.elements[-1] = replace(body.elements[-1], role=role)
    else:
        target = r.chain()
        decl = Decl()
        r.specialisations(decl)
        r.value_part(decl)
        named_link(r, body, i0, pre, "PERFORMS", target, decl, r.body(), role, when=role)
    if role == "entry":
        body.prev, body.prev_state = "start", False


def transition(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``transition [t first] src [accept e] [if g] [do a] then dst;`` (without a
    source, it leaves the state written before it)."""
    k = r.k
    r.i += 1
    name = None
    src = body.prev
    if k[r.i] == "first":
        r.i += 1
        src = r.chain()
    elif k[r.i] not in ("accept", "if", "do", "then"):
        mark = r.i
        try:
            decl = r.usage_decl()
            r.expect("first")
            name, src = decl.name, r.chain()
        except Fail:
            r.i = mark
            src = r.chain()
    trigger = None
    if r.accept("accept"):
        trigger = _accepted(r)
    _transition_rest(r, body, i0, pre, src, name, trigger)


def _transition_rest(
    r: Reader, body: Body, i0: int, pre: Pre, src: str | None, name: str | None, trigger: str | None
) -> None:
    guard = r.expr_text()[0] if r.accept("if") else None
    effect = _effect(r) if r.accept("do") else None
    r.expect("then")
    dst = r.end()
    inner = r.body()
    r.succession(
        body,
        i0,
        src,
        dst,
        {"name": name, "accept": trigger, "if": guard, "do": effect},
        transition=True,
    )
    _kept(r, body, i0, pre, inner, "transition")


def _effect(r: Reader) -> str:
    """A transition's effect after ``do``: its text."""
    k = r.k
    start = r.i
    word = k[r.i]
    if word in ("send", "assign"):
        r.i += 1
        _send_or_assign(r, word)
    elif word == "accept":
        r.i += 1
        _accepted(r)
    else:
        if not r.accept("action"):
            r.chain()
            r.specialisations(Decl())
        else:
            r.usage_decl()
        r.value_part(Decl())
    text = r.span(start)
    if r.accept("{"):
        r.members("}")
        r.i += 1
    return text


STATEMENTS: dict[str, Handler] = {
    "first": first,
    "then": then,
    "if": guarded,
    "else": guarded,
    "transition": transition,
    "entry": subaction,
    "do": subaction,
    "exit": subaction,
    "accept": node,
    "send": node,
    "assign": node,
    "terminate": node,
    "while": node,
    "loop": node,
    "for": node,
    "merge": node,
    "decide": node,
    "join": node,
    "fork": node,
}
USAGES: dict[str, Handler] = {"action": action, "state": state, "succession": first}

__all__ = ["STATEMENTS", "USAGES"]
