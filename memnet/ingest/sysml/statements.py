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
from typing import TYPE_CHECKING

from ...gql.ast import Value
from .clauses import Decl, doc_text, last_name
from .doc import Alias, Connect, Import, Reference, Relation, Satisfy, SysmlElement, Tag
from .expr import Fail

if TYPE_CHECKING:
    from .parser import Reader


class Body:
    """What the members of one body add up to."""

    __slots__ = (
        "counts",
        "docs",
        "elements",
        "filters",
        "members",
        "parallel",
        "prev",
        "prev_state",
        "relations",
        "role_next",
        "text",
    )

    def __init__(self) -> None:
        self.elements: list[SysmlElement] = []
        self.relations: list[Relation] = []
        self.docs: list[str] = []
        self.filters: list[str] = []  # the conditions of `filter e;` members
        self.text: str | None = None  # the result expression
        self.prev: str | None = None  # the step a `then` continues from
        self.prev_state = False
        self.members = 0  # members other than doc and comments
        self.counts: dict[str, int] = {}
        self.role_next: str | None = None  # the role of the element added next (`return`)
        self.parallel = False  # a state body written `parallel { … }`

    def mark(self) -> tuple[int, int, int, int, int, str | None, bool, dict[str, int]]:
        """Where the body stands, for :meth:`reset` after a reading that failed."""
        return (
            len(self.elements),
            len(self.relations),
            len(self.docs),
            len(self.filters),
            self.members,
            self.prev,
            self.prev_state,
            dict(self.counts),
        )

    def reset(self, mark: tuple[int, int, int, int, int, str | None, bool, dict[str, int]]) -> None:
        n_el, n_rel, n_doc, n_filter, self.members, self.prev, self.prev_state, self.counts = mark
        del self.elements[n_el:], self.relations[n_rel:], self.docs[n_doc:], self.filters[n_filter:]
        self.role_next = None

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

_ROLE_EDGE = {
    "perform": "PERFORMS",
    "exhibit": "EXHIBITS",
    "include": "INCLUDES",
    "assert": "ASSERTS",
    "require": "REQUIRES",
    "assume": "ASSUMES",
    "verify": "VERIFIES",
    "frame": "FRAMES",
}
#: the kind of the element a statement that names a feature becomes when its body
#: has members of its own (``perform a { in x = y; }``)
FEATURE_KIND = {
    "perform": "ACT",
    "entry": "ACT",
    "do": "ACT",
    "exit": "ACT",
    "exhibit": "STATE",
    "include": "CASE",
    "assert": "CONSTRAINT",
    "require": "CONSTRAINT",
    "assume": "CONSTRAINT",
    "satisfy": "REQ",
    "verify": "REQ",
    "frame": "REQ",
    "render": "RENDER",
}


def props_of(**kw: Value | None) -> tuple[tuple[str, Value], ...]:
    return tuple(sorted((k, v) for k, v in kw.items() if v is not None))


# -- namespaces and annotations ------------------------------------------------------------


def package(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    decl = Decl()
    r.identification(decl)
    if decl.name is None and decl.short_id is None:
        r.fail("NAME")
    r.element(body, "PKG", decl, i0, pre, r.body())


def import_target(r: Reader) -> tuple[str, str, str | None]:
    """What ``import`` and ``expose`` name: ``A::B``, ``A::*``, ``A::**`` or
    ``A::*::**``, then any filters in brackets; ``(target, wildcard, filter)``."""
    k = r.k
    target = r.qname()
    wildcard = ""
    if k[r.i] == "::" and k[r.i + 1] == "*":
        r.i += 2
        wildcard = "*"
        if k[r.i] == "::" and k[r.i + 1] == "**":
            r.i += 2
            wildcard = "*::**"
    elif k[r.i] == "::" and k[r.i + 1] == "**":
        r.i += 2
        wildcard = "**"
    if k[r.i] == "::":  # `A::` followed by neither a name nor a wildcard
        r.i += 1
        r.fail("*")
    filters = []
    while k[r.i] == "[":  # a filter: `import A::**[@Safety];`
        r.i += 1
        start = r.i
        r.expr()
        filters.append(r.span(start))
        r.expect("]")
    return target, wildcard, "; ".join(filters) or None


def import_(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    r.i += 1
    r.accept("all")
    target, wildcard, filter_ = import_target(r)
    r.body()
    line, col = r.where(i0)
    r.relate(body, Import(target, wildcard, pre.visibility, line, col, filter_))


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
    """``comment [id] [about a, b] [locale "x"] /* ... */``, ``locale "x" /* ... */``
    and ``rep``/``language``: read, not kept."""
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
    elif kind == "locale":
        r.expect("STRING")
    elif kind == "rep":
        r.identification(Decl())
        r.expect("language")
        r.expect("STRING")
    elif kind == "language":
        r.expect("STRING")
    _comment_body(r)


def metadata(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``@T;``, ``metadata T;``, ``metadata m : T about x, y { ... }``: metadata ``T``
    applied to the enclosing element, or to each element named after ``about``.
    One with a name or with features of its own (``@T { level = 2; }``) is also an
    element (``META``) typed by ``T``, ``ANNOTATES`` each element after ``about``."""
    r.i += 1
    mark = r.i
    decl = Decl()
    r.identification(decl)
    if r.k[r.i] == "NAME" and r.toks.value[r.i] == "typed" and r.k[r.i + 1] == "by":
        r.i += 2
    elif not r.accept(":"):
        r.i, decl = mark, Decl()  # no declared name: what follows is the metadata's type
    tag = r.qname()
    about: list[str] = []
    if r.accept("about"):
        about.append(r.qname())
        while r.accept(","):
            about.append(r.qname())
    inner = r.body(meta=True)
    line, col = r.where(i0)
    if decl.name is not None or decl.short_id is not None or inner.members:
        decl.types.append(tag)
        inner.relations.extend(Reference("ANNOTATES", t, line, col) for t in about)
        r.element(body, "META", decl, i0, pre, inner, word="metadata")
    targets: list[str | None] = list(about) if about else [None]
    for target in targets:
        r.relate(body, Tag(tag, target, line, col))


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
    extra = props_of(meta=", ".join(last_name(m) for m in pre.meta) or None)
    for c in clients:
        for s in suppliers:
            r.relate(body, Connect(c, s, line=line, column=col, edge="DEPENDS", props=extra))


# -- views -----------------------------------------------------------------------------------


def filter_(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``filter e;``: the condition is kept as the ``filter`` of the enclosing
    package or view."""
    r.i += 1
    start = r.i
    r.expr()
    body.filters.append(r.span(start))
    r.expect(";")


def expose(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``expose A::B;``, ``expose A::**[@S];``: an EXPOSES link from the view."""
    r.i += 1
    target, wildcard, filter_text = import_target(r)
    r.body()
    line, col = r.where(i0)
    r.relate(
        body,
        Reference(
            "EXPOSES", target, line, col, props_of(wildcard=wildcard or None, filter=filter_text)
        ),
    )


def render(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``render r;`` (a RENDERS link from the view) or ``render rendering r : R;``
    (a rendering declared in the view)."""
    r.i += 1
    meta: list[str] = []
    while r.accept("#"):
        meta.append(r.qname())
    if r.accept("rendering") or meta:
        pre.meta += meta
        decl = r.usage_decl()
        r.value_part(decl)
        r.element(body, "RENDER", decl, i0, pre, r.body(), role="render")
        return
    target = r.chain()
    decl = Decl()
    r.specialisations(decl)
    named_link(r, body, i0, pre, "RENDERS", target, decl, r.body(), "render")


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


def named_link(
    r: Reader,
    body: Body,
    i0: int,
    pre: Pre,
    edge: str,
    target: str,
    decl: Decl,
    inner: Body,
    word: str,
    **props: Value | None,
) -> None:
    """A statement that names an existing feature: an ``edge`` from the enclosing
    element to it. When its body has members of its own, it is also an element
    (of the kind :data:`FEATURE_KIND` gives, role ``word``) that references the
    feature and holds them; it goes by the feature's name (or the one it
    redefines), and the link is looked up past it."""
    line, col = r.where(i0)
    extra = dict(props)
    if decl.redefines:
        extra["as"] = last_name(decl.redefines[0])
    own = None
    if inner.members:
        own = r.element(
            body, FEATURE_KIND[word], decl, i0, pre, inner, role=word, references=target
        ).name
    elif inner.docs:
        extra["doc"] = " ".join(inner.docs)
    r.relate(body, Reference(edge, target, line, col, props_of(**extra), own=own))


def perform(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    role = r.k[r.i]
    r.i += 1
    word, kind, calc, state = {
        "perform": (("action",), "ACT", False, False),
        "exhibit": (("state",), "STATE", False, True),
        "include": (("use", "case"), "CASE", True, False),
    }[role]
    target, decl = _ref_or_decl(r, word)
    r.value_part(decl)
    inner = r.body(calc=calc, state=state)
    if target is None:
        r.element(body, kind, decl, i0, pre, inner, role=role)
    else:
        named_link(r, body, i0, pre, _ROLE_EDGE[role], target, decl, inner, role)
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
        named_link(
            r,
            body,
            i0,
            pre,
            "ASSERTS",
            target,
            decl,
            inner,
            "assert",
            negated=True if negated else None,
        )


def satisfy(r: Reader, body: Body, i0: int, pre: Pre, negated: bool = False) -> None:
    """Every form: ``[assert] [not] satisfy (R | requirement [decl]) [by x] [body]``
    (``not satisfy`` is kept as a negated satisfaction)."""
    r.i += 1
    target, decl = _ref_or_decl(r, ("requirement",))
    r.value_part(decl)
    by = r.chain() if r.accept("by") else None
    inner = r.body()
    own = None
    if target is None:
        target, own = _declared(r, body, i0, pre, decl, inner, "satisfy")
    elif inner.members:
        own = r.element(body, "REQ", decl, i0, pre, inner, role="satisfy", references=target).name
    line, col = r.where(i0)
    r.relate(body, Satisfy(target, by, line, col, negated=negated, own=own))


def _declared(
    r: Reader, body: Body, i0: int, pre: Pre, decl: Decl, inner: Body, role: str
) -> tuple[str, str | None]:
    """The requirement a declaring ``satisfy requirement ...`` or ``verify
    requirement ...`` names, and the element it declared for its body, if any:
    ``r`` alone names an existing one (with a body of its own, it is also an
    element ``r`` that references it); ``r : R`` declares a new one (an
    element); ``: R`` alone names the definition ``R``."""
    if decl.name is not None and not decl.specialised:
        if inner.members:
            el = r.element(body, "REQ", decl, i0, pre, inner, role=role, references=decl.name)
            return decl.name, el.name
        return decl.name, None
    if decl.name is not None or decl.short_id is not None:
        r.element(body, "REQ", decl, i0, pre, inner, role=role)
        return decl.name or decl.short_id, None  # type: ignore[return-value]
    if decl.types:
        if inner.members:
            el = r.element(body, "REQ", decl, i0, pre, inner, role=role)
            return decl.types[0], el.name
        return decl.types[0], None
    r.fail("NAME")


def require(r: Reader, body: Body, i0: int, pre: Pre) -> None:
    """``require``/``assume``/``frame``/``verify``: a constraint (or concern, or
    requirement) declared here, or an existing one named."""
    role = r.k[r.i]
    r.i += 1
    word, kind = {
        "require": ("constraint", "CONSTRAINT"),
        "assume": ("constraint", "CONSTRAINT"),
        "frame": ("concern", "REQ"),
        "verify": ("requirement", "REQ"),
    }[role]
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
            target, own = _declared(r, body, i0, pre, decl, inner, role)
            line, col = r.where(i0)
            r.relate(body, Reference("VERIFIES", target, line, col, own=own))
        else:
            r.element(body, kind, decl, i0, pre, inner, role=role)
        return
    target = r.chain()
    decl = Decl()
    r.specialisations(decl)
    inner = r.body(calc=True)
    named_link(r, body, i0, pre, _ROLE_EDGE[role], target, decl, inner, role)


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
    """``return`` and a usage: the result of a calculation or case."""
    r.i += 1
    body.role_next = "return"
    r.member(body)
    body.role_next = None


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


STATEMENTS: dict[str, Handler] = {
    "package": package,
    "import": import_,
    "alias": alias,
    "doc": doc,
    "comment": comment,
    "rep": comment,
    "language": comment,
    "locale": comment,
    "@": metadata,
    "dependency": dependency,
    "filter": filter_,
    "expose": expose,
    "render": render,
    "perform": perform,
    "exhibit": perform,
    "include": perform,
    "assert": assert_,
    "not": assert_,
    "satisfy": satisfy,
    "require": require,
    "assume": require,
    "frame": require,
    "verify": require,
    "subject": role_usage,
    "actor": role_usage,
    "stakeholder": role_usage,
    "objective": role_usage,
    "return": return_,
    "event": event,
}
#: usages with a shape of their own (their ``def`` forms are plain definitions)
USAGES: dict[str, Handler] = {
    "metadata": metadata,
}

__all__ = [
    "FEATURE_KIND",
    "STATEMENTS",
    "USAGES",
    "Body",
    "Handler",
    "Pre",
    "import_target",
    "named_link",
    "props_of",
]
