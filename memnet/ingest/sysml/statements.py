"""The structural statements of SysML 8.2.2 that do not have the plain ``keyword
declaration body`` shape: namespaces, annotations, the relationships between
features, connections and flows (behaviour is in :mod:`.behaviour`). Each is a
function of the :class:`~memnet.ingest.sysml.parser.Reader`, called with the
token of its keyword current.

Relationships that name existing features (``perform a;``, ``require r;``,
``satisfy R by x;``) become relations of the enclosing element; their
declaring forms (``perform action a : A;``) become elements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeGuard

from ...gql.ast import Value
from .clauses import Decl, doc_text, unquote
from .doc import Alias, Connect, Import, Reference, Relation, Satisfy, SysmlElement
from .expr import Fail

if TYPE_CHECKING:
    from .parser import Reader


class Body:
    """What the members of one body add up to."""

    __slots__ = ("counts", "docs", "elements", "members", "meta", "prev", "prev_state",
                 "relations", "text")

    def __init__(self) -> None:
        self.elements: list[SysmlElement] = []
        self.relations: list[Relation] = []
        self.docs: list[str] = []
        self.meta: list[str] = []
        self.text: str | None = None  # the result expression
        self.prev: str | None = None  # the step a `then` continues from
        self.prev_state = False
        self.members = 0  # members other than doc and comments
        self.counts: dict[str, int] = {}

    def mark(self) -> tuple[int, int, int, int, int, str | None, bool, dict[str, int]]:
        """Where the body stands, for :meth:`reset` after a reading that failed."""
        return (len(self.elements), len(self.relations), len(self.docs), len(self.meta),
                self.members, self.prev, self.prev_state, dict(self.counts))

    def reset(self, mark: tuple[int, int, int, int, int, str | None, bool,
                                dict[str, int]]) -> None:
        n_el, n_rel, n_doc, n_meta, self.members, self.prev, self.prev_state, \
            self.counts = mark
        del self.elements[n_el:], self.relations[n_rel:], self.docs[n_doc:], \
            self.meta[n_meta:]

    def name_for(self, role: str) -> str:
        n = self.counts[role] = self.counts.get(role, 0) + 1
        return f"{role}{n}"


class Pre:
    """The prefixes read before a statement's keyword."""

    __slots__ = ("direction", "flags", "meta", "visibility")

    def __init__(self) -> None:
        self.visibility: str | None = None
        self.direction: str | None = None
        self.flags: set[str] = set()
        self.meta: list[str] = []


Handler = Callable[["Reader", Body, int, Pre], None]

_ROLE_EDGE = {"perform": "PERFORMS", "exhibit": "EXHIBITS", "include": "INCLUDES",
              "assert": "ASSERTS", "require": "REQUIRES", "assume": "ASSUMES",
              "verify": "VERIFIES", "frame": "FRAMES"}


def props_of(**kw: Value | None) -> tuple[tuple[str, Value], ...]:
    return tuple(sorted((k, v) for k, v in kw.items() if v is not None))


def _last(ref: str) -> str:
    """The last name of a reference (``a.b::'c d'`` → ``c d``)."""
    cut = max(ref.rfind("."), ref.rfind("::"))
    tail = ref[cut + (2 if ref[cut:cut + 2] == "::" else 1):] if cut >= 0 else ref
    return unquote(tail)


# -- namespaces and annotations ------------------------------------------------------------


def package(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    decl = Decl()
    r.identification(decl)
    if decl.name is None and decl.short_id is None:
        r.fail("NAME")
    r.element(body, "PKG", decl, i0, pre, r.body())


def import_(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    k = r.k
    r.i += 1
    r.accept("all")
    target = r.qname()
    wildcard = ""
    for wild in ("*", "**"):
        if k[r.i] == "::" and k[r.i + 1] == wild:
            r.i += 2
            wildcard = wild
    if k[r.i] == "::":  # `A::` followed by neither a name nor a wildcard
        r.i += 1
        r.fail("*")
    while k[r.i] == "[":  # a filter: `import A::**[@Safety];`
        r.i += 1
        r.expr()
        r.expect("]")
    r.body()
    line, col = r.where(i0)
    r.relate(body, Import(target, wildcard, pre.visibility, line, col))


def alias(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    decl = Decl()
    r.identification(decl)
    r.expect("for")
    target = r.qname()
    r.body()
    line, col = r.where(i0)
    for name in (decl.name, decl.short_id):
        if name is not None:
            r.relate(body, Alias(name, target, line, col))


def _comment_body(r: Reader) -> str:
    text = r.comment_here()
    if text is None:
        r.fail("COMMENT")
    return text


def doc(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    if r.comment_here() is None:
        r.identification(Decl())
        if r.accept("locale"):
            r.expect("STRING")
    body.docs.append(doc_text(_comment_body(r)))


def comment(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``comment [id] [about a, b] [locale "x"] /* ... */`` and ``rep``/``language``:
    read, not kept."""
    kind = r.k[r.i]
    r.i += 1
    if kind == "comment" and r.comment_here() is None:
        r.identification(Decl())
        if r.accept("about"):
            r.qname()
            while r.accept(","):
                r.qname()
        if r.accept("locale"):
            r.expect("STRING")
    elif kind == "rep":
        r.identification(Decl())
        r.expect("language")
        r.expect("STRING")
    elif kind == "language":
        r.expect("STRING")
    _comment_body(r)


def metadata(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``@T;``, ``metadata m : T about x { ... }``: the owner is tagged with ``T``."""
    r.i += 1
    mark = r.i
    r.identification(Decl())
    if r.k[r.i] == "NAME" and r.toks.value[r.i] == "typed" and r.k[r.i + 1] == "by":
        r.i += 2
    elif not r.accept(":"):
        r.i = mark  # no declared name: what follows is the metadata's type
    tag = r.qname()
    about = r.accept("about")
    if about:
        r.qname()
        while r.accept(","):
            r.qname()
    since = len(r.warnings)
    r.body()
    del r.warnings[since:]  # a metadata body holds values, none of them modelled
    if about:
        r.skip(i0, "metadata about")
    else:
        body.meta.append(_last(tag))


def dependency(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    mark = r.i
    try:
        r.identification(Decl())
        r.expect("from")
    except Fail:
        r.i = mark
    clients = [r.qname()]
    while r.accept(","):
        clients.append(r.qname())
    r.expect("to")
    suppliers = [r.qname()]
    while r.accept(","):
        suppliers.append(r.qname())
    r.body()
    line, col = r.where(i0)
    for c in clients:
        for s in suppliers:
            r.relate(body, Connect(c, s, line=line, column=col, edge="DEPENDS"))


def not_modelled(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``filter e;``, ``expose A::*;``, ``render r;``: recognised, skipped."""
    kind = r.k[r.i]
    r.i += 1
    if kind == "filter":
        r.expr()
        r.expect(";")
    elif kind == "expose":
        r.qname()
        for wild in ("*", "**"):
            if r.k[r.i] == "::" and r.k[r.i + 1] == wild:
                r.i += 2
        while r.accept("["):
            r.expr()
            r.expect("]")
        r.body()
    else:  # render
        if r.accept("rendering"):
            r.usage_decl()
        else:
            r.chain()
            r.specialisations(Decl())
        r.value_part(Decl())
        since = len(r.warnings)
        r.body()
        r.skip(i0, kind, since)
        return
    r.skip(i0, kind)


# -- features that name other features -------------------------------------------------------


def _ref_or_decl(r: Reader, words: tuple[str, ...]) -> tuple[str | None, Decl]:
    """The feature a statement names (``perform a.b :>> c``), or its own
    declaration after ``words`` (``perform action a : A``)."""
    if all(r.k[r.i + n] == w for n, w in enumerate(words)):
        r.i += len(words)
        return None, r.usage_decl()
    decl = Decl()
    target = r.chain()
    r.specialisations(decl)
    return target, decl


def named_link(r: Reader, body: Body, i0: int, edge: str, target: str, decl: Decl,
           inner: Body, word: str, **props: Value | None) -> None:
    line, col = r.where(i0)
    extra = dict(props)
    if decl.redefines:
        extra["as"] = _last(decl.redefines[0])
    if inner.docs:
        extra["doc"] = " ".join(inner.docs)
    r.relate(body, Reference(edge, target, line, col, props_of(**extra)))
    r.dropped(i0, word, inner)


def perform(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    role = r.k[r.i]
    r.i += 1
    word, kind, calc, state = {"perform": (("action",), "ACT", False, False),
                               "exhibit": (("state",), "STATE", False, True),
                               "include": (("use", "case"), "CASE", True, False)}[role]
    target, decl = _ref_or_decl(r, word)
    r.value_part(decl)
    inner = r.body(calc=calc, state=state)
    if target is None:
        r.element(body, kind, decl, i0, pre, inner, role=role)
    else:
        named_link(r, body, i0, _ROLE_EDGE[role], target, decl, inner, role)
        # the action performed (the state exhibited, the use case included) is a step
        body.prev, body.prev_state = target, role == "exhibit"


def assert_(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``assert [not] constraint ...``, ``assert [not] c``, and ``[assert] [not]
    satisfy ...``."""
    if r.k[r.i] == "assert":
        r.i += 1
    negated = r.accept("not")
    if r.k[r.i] == "satisfy":
        satisfy(r, body, i0, pre, negated=negated)
        return
    target, decl = _ref_or_decl(r, ("constraint",))
    r.value_part(decl)
    inner = r.body(calc=True)
    role = "assert not" if negated else "assert"
    if target is None:
        r.element(body, "CONSTRAINT", decl, i0, pre, inner, role=role)
    else:
        named_link(r, body, i0, "ASSERTS", target, decl, inner, "assert",
               negated=True if negated else None)


def satisfy(r: Reader, body: Body, i0: int, pre: Pre, negated: bool = False) -> None:
    """Every form: ``[assert] [not] satisfy (R | requirement [decl]) [by x] [body]``."""
    r.i += 1
    target, decl = _ref_or_decl(r, ("requirement",))
    r.value_part(decl)
    by = r.chain() if r.accept("by") else None
    since = len(r.warnings)
    inner = r.body()
    if negated:
        r.skip(i0, "not satisfy", since)
        return
    if target is None:
        target = _declared(r, body, i0, pre, decl, inner, "satisfy")
    elif inner.members:
        r.dropped(i0, "satisfy", inner)
    line, col = r.where(i0)
    r.relate(body, Satisfy(target, by, line, col))


def _declared(r: Reader, body: Body, i0: int, pre: Pre, decl: Decl, inner: Body,
              role: str) -> str:
    """The requirement a declaring ``satisfy requirement ...`` or ``verify
    requirement ...`` names: ``r`` alone names an existing one; ``r : R`` declares
    a new one (an element); ``: R`` alone names the definition ``R``."""
    if decl.name is not None and not decl.specialised:
        return decl.name
    if decl.name is not None or decl.short_id is not None:
        r.element(body, "REQ", decl, i0, pre, inner, role=role)
        return decl.name or decl.short_id  # type: ignore[return-value]
    if decl.types:
        return decl.types[0]
    r.fail("NAME")


def require(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``require``/``assume``/``frame``/``verify``: a constraint (or concern, or
    requirement) declared here, or an existing one named."""
    role = r.k[r.i]
    r.i += 1
    word, kind = {"require": ("constraint", "CONSTRAINT"), "assume": ("constraint", "CONSTRAINT"),
                  "frame": ("concern", "REQ"), "verify": ("requirement", "REQ")}[role]
    meta: list[str] = []
    while r.accept("#"):
        meta.append(r.qname())
    if r.k[r.i] == word or meta:
        r.accept(word)
        decl = r.usage_decl()
        r.value_part(decl)
        inner = r.body(calc=kind == "CONSTRAINT" or role == "frame")
        pre.meta += meta
        if role == "verify":
            target = _declared(r, body, i0, pre, decl, inner, role)
            named_link(r, body, i0, "VERIFIES", target, Decl(), Body(), role)
        else:
            r.element(body, kind, decl, i0, pre, inner, role=role)
        return
    target = r.chain()
    decl = Decl()
    r.specialisations(decl)
    inner = r.body(calc=True)
    named_link(r, body, i0, _ROLE_EDGE[role], target, decl, inner, role)


def role_usage(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``subject``, ``actor``, ``stakeholder``, ``objective``: a usage in a role."""
    role = r.k[r.i]
    r.i += 1
    while r.accept("#"):
        pre.meta.append(r.qname())
    decl = r.usage_decl()
    r.value_part(decl)
    inner = r.body()
    kind = {"subject": "REF", "actor": "PART", "stakeholder": "PART", "objective": "REQ"}[role]
    r.element(body, kind, decl, i0, pre, inner, role=role)


def return_(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    before = len(body.elements)
    r.member(body)
    if len(body.elements) > before:
        el = body.elements[-1]
        body.elements[-1] = replace(el, role="return", name=el.name if el.name is not None or
                                    el.redefines else "result")


def event(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``event occurrence e : E;`` or ``event a.b[1] :>> e;`` (an occurrence named
    by what it redefines, or by what it references)."""
    r.i += 1
    if r.accept("occurrence"):
        decl = r.usage_decl()
    else:
        decl = Decl()
        decl.references.append(r.chain())
        r.specialisations(decl)
    r.value_part(decl)
    r.element(body, "OCC", decl, i0, pre, r.body(), role="event")


# -- connections, flows, bindings, allocations ---------------------------------------------------


def _edges(r: Reader, body: Body, i0: int, ends: list[str], edge: str, decl: Decl | None,
           **props: Value | None) -> None:
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
    if _declares(decl):
        r.element(body, {"connection": "CONN", "interface": "IFACE",
                         "allocation": "ALLOC"}[word], decl, i0, pre, inner)
    elif inner.members:
        r.dropped(i0, word, inner)
    elif ends is None:
        r.skip(i0, f"{word} without a name or ends")


def flow(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``flow``, ``succession flow``, ``message``: a FLOWS edge between the ends,
    and a FLOW element when the flow is named."""
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
    if _declares(decl):
        r.element(body, "FLOW", decl, i0, pre, inner, role="message" if word == "message"
                  else None, props={"of": payload} if payload else None)
    elif inner.members:
        r.dropped(i0, word, inner)
    elif ends is None:
        r.skip(i0, f"{word} without a name or ends")


def _declares(decl: Decl | None) -> TypeGuard[Decl]:
    """A connection, interface or flow usage that is an element of its own."""
    return decl is not None and bool(decl.name or decl.short_id or decl.redefines)


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
    r.body()
    _edges(r, body, i0, ends, "BINDS", decl)


STATEMENTS: dict[str, Handler] = {
    "package": package, "import": import_, "alias": alias, "doc": doc, "comment": comment,
    "rep": comment, "language": comment, "@": metadata, "dependency": dependency,
    "filter": not_modelled, "expose": not_modelled, "render": not_modelled,
    "perform": perform, "exhibit": perform, "include": perform, "assert": assert_, "not": assert_,
    "satisfy": satisfy, "require": require, "assume": require, "frame": require,
    "verify": require, "subject": role_usage, "actor": role_usage, "stakeholder": role_usage,
    "objective": role_usage, "return": return_, "event": event, "connect": connector,
    "allocate": connector, "bind": bind, "binding": bind,
}
#: usages with a shape of their own (their ``def`` forms are plain definitions)
USAGES: dict[str, Handler] = {
    "connection": connector, "interface": connector, "allocation": connector, "flow": flow,
    "message": flow, "metadata": metadata,
}

__all__ = ["STATEMENTS", "USAGES", "Body", "Handler", "Pre", "flow", "named_link", "props_of"]
