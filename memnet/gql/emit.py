"""Syntax tree pieces → shaped GQL text (pure functions, no engine state).

Everything emitted here parses back with :func:`memnet.gql.parse.parse_delta` to
the same data (the round trip):

* ``format_value`` — strings single-quoted with ``\\\\``, ``\\'``, ``\\n``, ``\\r``,
  ``\\t`` escapes and ``\\uXXXX`` for other control characters (below U+0020,
  U+007F) and lone surrogates; every other character is written as itself.
  (A lone surrogate is not text: its escape is the one thing emitted here that
  the parser refuses, with ``gql_syntax``; a Commit never stores one.)
  ints in decimal, floats by ``repr`` (always with ``.`` or an exponent), bools
  ``true``/``false``, tuples as ``[a, b]``. NaN and infinities raise
  InvalidArgument (a ValueError).
* ``format_props`` — ``{k: v, k2: v2}`` in the order given ('' when empty).
* ``format_node`` — ``(n1:TSK&URGENT #pricing {status: 'open'})``.
* ``format_edge`` — ``(n1)-[e3:TOUCHES {w: 2}]->(n4)``; an unnamed edge is
  ``(n1)-[:TOUCHES]->(n4)``.
* ``format_insert`` — ``INSERT`` then one element per line, indented two spaces,
  comma-separated. No elements → '' (an empty Shape emits no INSERT at all).

Names, kinds, labels, types and nicks are checked against the grammar (with
:mod:`memnet.gql.names`) and a bad one raises InvalidArgument (a ValueError),
so nothing unparseable is ever emitted.

``format_query`` renders any :class:`~memnet.gql.ast.SeedQuery` in the
normalised codebook form, always in this order::

    KIND LABEL… key:value… key~needle… keyword… #nick limit:N

* a prop value is bare when it reads back as the same value (``status:open``,
  ``prio:2``, ``done:true``), else quoted (``title:'in progress'``, ``code:'7'``);
  a list value is written as ``tags:['a', 'b']`` (display only: the token form
  has no lists, so that one does not read back);
* a CONTAINS pair ``(key, needle)`` is ``key~needle``, quoted when needed
  (``title~'pricing page'``); the codebook parser reads ``key~…`` back as a
  CONTAINS pair;
* a keyword is bare when it reads back as a keyword, else quoted
  (``'pricing page'``, ``'TSK'``, ``'a:b'``);
* ``limit:N`` comes last and only when the query has a limit (display only: in
  the token form ``limit:N`` is an ordinary property).

Props, contains pairs and keywords keep their written order, so one query
always gives one string. An empty query gives ''.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..values import Props, Value, format_value
from ..values import quote as _quote
from ..values import scalar_text as _scalar
from .ast import SeedQuery
from .names import LABEL_RE, check_label, check_name, check_nick, check_var

# codebook rendering
_BARE_WORD_RE = re.compile(r"[^\s'#]+")
_NUMBER_LIKE_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)?")
_PAIR_LIKE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[:~]")
#: text starting with the word MATCH, any case (``match:x`` is a key): a
#: query whose first word it is reads as the MATCH form
MATCH_WORD = re.compile(r"match(?![A-Za-z0-9_:~])", re.IGNORECASE)


def plain_word(w: str) -> bool:
    """ASCII letters and digits, a lower-case letter first: read as a bare
    codebook keyword whatever the rules for the rest (``match`` aside)."""
    return w.isalnum() and w.isascii() and w[0].islower()


def _pairs(
    props: Props | Mapping[str, Value] | Iterable[tuple[str, Value]],
) -> Iterable[tuple[str, Value]]:
    if isinstance(props, Mapping):
        return props.items()
    return props


def format_props(props: Props | Mapping[str, Value]) -> str:
    """``{k: v, k2: v2}`` in the order given, or '' when there are none."""
    body = ", ".join(
        f"{check_name(k, 'property key')}: {format_value(v)}" for k, v in _pairs(props)
    )
    return "{" + body + "}" if body else ""


def format_node(
    var: str | None,
    labels: Iterable[str],
    props: Props | Mapping[str, Value],
    nick: str | None = None,
) -> str:
    """``(var:KIND&LABEL #nick {k: v})``; ``labels[0]`` is the kind."""
    if var is not None:
        check_var(var)
    labels = tuple(labels)
    for x in labels:
        check_label(x)
    if nick is not None:
        check_nick(nick)
    for k, _v in _pairs(props):
        check_name(k, "property key")
    return node_text(var, labels, tuple(_pairs(props)), nick)


def node_text(
    var: str | None,
    labels: tuple[str, ...],
    pairs: Iterable[tuple[str, Value]],
    nick: str | None = None,
) -> str:
    """:func:`format_node` for names already known to be valid (a Shape's
    rows come from the store, where every name was checked on the way in)."""
    head = "" if var is None else var
    if labels:
        head += ":" + "&".join(labels)
    body = ", ".join(f"{k}: {format_value(v)}" for k, v in pairs)
    if nick is not None:
        head = f"{head} #{nick}" if head else f"#{nick}"
    if body:
        return f"({head} {{{body}}})" if head else f"({{{body}}})"
    return f"({head})"


def format_edge(
    var: str | None, type: str, src: str, dst: str, props: Props | Mapping[str, Value] = ()
) -> str:
    """``(src)-[var:TYPE {k: v}]->(dst)``."""
    inner = ("" if var is None else check_var(var)) + ":" + check_label(type, "edge type")
    body = format_props(props)
    if body:
        inner += " " + body
    return f"({check_var(src)})-[{inner}]->({check_var(dst)})"


def format_insert(node_strs: Iterable[str], edge_strs: Iterable[str]) -> str:
    """``INSERT`` with one element per line; '' when there is nothing to insert."""
    items = [*node_strs, *edge_strs]
    if not items:
        return ""
    return "INSERT\n  " + ",\n  ".join(items)


# --------------------------------------------------------------------------- codebook form


def _cb_string(s: str) -> str:
    """A prop value or needle: bare when it reads back as that same string."""
    if (
        _BARE_WORD_RE.fullmatch(s) is None
        or _NUMBER_LIKE_RE.fullmatch(s) is not None
        or s.lower() in ("true", "false")
    ):
        return _quote(s)
    return s


def codebook_value(v: Value) -> str:
    """A value as a codebook ``key:value`` writes it (bare when it reads back
    as the same value, quoted otherwise)."""
    if isinstance(v, str):
        return _cb_string(v)
    if isinstance(v, (tuple, list)):
        return format_value(v)
    return _scalar(v)


def _cb_keyword(w: str) -> str:
    if plain_word(w) and w[:5].lower() != "match":
        return w  # a plain word (most keywords): none of the tests below holds
    if (
        _BARE_WORD_RE.fullmatch(w) is None
        or LABEL_RE.fullmatch(w) is not None
        or _PAIR_LIKE_RE.match(w) is not None
        or w.startswith(("//", "/*"))
        or MATCH_WORD.match(w) is not None
    ):
        return _quote(w)
    return w


def format_query(q: SeedQuery) -> str:
    """The normalised text of ``q``: MATCH form for a MATCH query (so a LIMIT
    reads back as a LIMIT), codebook form otherwise. Parsing the result gives
    back the same query (but for its form when its only words are a kind
    named MATCH and labels: the codebook cannot say that)."""
    kws = q.keywords
    if (
        len(kws) == 1
        and q.kind is None
        and not (q.labels or q.props or q.contains)
        and q.nick is None
        and q.limit is None
    ):
        return _cb_keyword(kws[0])  # one keyword, the usual fresh q
    if q.form == "match" and not q.keywords:
        node = format_node("n", (q.kind, *q.labels) if q.kind else q.labels, q.props, q.nick)
        text = f"MATCH {node}"
        if q.contains:
            text += " WHERE " + " AND ".join(
                f"n.{k} CONTAINS {format_value(needle)}" for k, needle in q.contains
            )
        if q.limit is not None:
            text += f" LIMIT {q.limit}"
        return text
    out: list[str] = []
    if q.kind is not None:
        out.append(q.kind)
    out.extend(q.labels)
    bare = dict(q.bare)
    out.extend(f"{k}:{bare[k] if k in bare else codebook_value(v)}" for k, v in q.props)
    out.extend(f"{k}~{_cb_string(needle)}" for k, needle in q.contains)
    out.extend(_cb_keyword(w) for w in q.keywords)
    if q.nick is not None:
        out.append("#" + q.nick)
    if q.limit is not None:
        out.append(f"limit:{q.limit}")
    if q.kind is not None and MATCH_WORD.match(q.kind):
        # a kind named MATCH would read as the MATCH form: another token goes
        # first (the first upper-case word is the kind wherever it stands);
        # with none, only the MATCH form can say it
        at = 1 + len(q.labels)
        if at < len(out):
            out.insert(0, out.pop(at))
        else:
            return f"MATCH {format_node('n', (q.kind, *q.labels), (), None)}"
    return " ".join(out)


__all__ = [
    "codebook_value",
    "format_edge",
    "format_insert",
    "format_node",
    "format_props",
    "format_query",
    "format_value",
]
