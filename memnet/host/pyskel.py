"""The outline of a Python module without parsing its bodies.

An index of a library needs, per module, its docstring and its top-level
classes and functions with their signatures and docstrings: the SYMs ingest
makes (:func:`memnet.ingest.handlers.top_symbols`). ``ast.parse`` of a whole
module builds every statement of every body to get them, and on this machine
it reads about 2-3 MB of source a second: 10,000 files of an installed package
set would take close to a minute.

:func:`outline` parses a *skeleton* instead: the module's first statement
when it is a string (the docstring), every top-level ``def``/``class`` header
and the first statement of its body when that is a string, with the rest of
each body replaced by ``...``. Finding the top-level statements needs no
parser: they are the lines that start at column 0, and a regular expression
that knows strings, comments and brackets tells where each one ends. A body
is skipped whole, without looking at it, unless it holds an odd number of
triple quotes (a string whose lines start at column 0, e.g. a block of code
in a test): then it is stepped over statement by statement, strings and all.
A skeleton that does not parse (a file with a syntax error, a coding cookie,
odd layouts) falls back to ``ast.parse`` of the whole file, so the result is
the one a full parse gives. Measured on an installed package set (11,563
modules, 130 MB): the same names, lines, docstrings and signatures for every
module, in about a fifth of the time (``bench/host.py --agree``).
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from ..ingest.handlers import top_symbols

# strings (a string's prefix letters do not change where it ends), comments,
# brackets; at bracket depth 0 also backslash continuations and newlines
_STRINGS = r"""(?P<s>\"\"\"[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
 |'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)
 |"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*(?:"|$)
 |'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*(?:'|$))
 |(?P<c>\#[^\n]*)
 |(?P<o>[(\[{])
 |(?P<x>[)\]}])"""
_IN_BRACKETS = re.compile(_STRINGS, re.X | re.M)
_AT_TOP = re.compile(
    _STRINGS
    + r"""
 |(?P<b>\\\r?\n)
 |(?P<n>\n)""",
    re.X | re.M,
)
_QUOTEISH = re.compile(r"[\"'#\\]")
_TOP = re.compile(r"^[^\s#]", re.M)  # a line that starts at column 0
_CODE = re.compile(r"^([ \t\f]*)[^\s#]", re.M)  # the next line with code, its indent
_DEF = re.compile(r"(?:async[ \t]+)?(?:def|class)\b")
_STRING_START = re.compile(r"[rRbBuUfF]{0,2}['\"]")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)


def _logical(text: str, pos: int) -> tuple[int, bool]:
    """Where the logical line starting at ``pos`` ends (after its newline) and
    whether it ends with ``:`` (a compound statement's header)."""
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end + 1
    if _QUOTEISH.search(text, pos, end) is None:  # the usual line: no strings, comments
        line = text[pos:end]
        if line.count("(") + line.count("[") + line.count("{") == line.count(")") + line.count(
            "]"
        ) + line.count("}"):
            return end, line.rstrip().endswith(":")
    depth = 0
    last = i = pos  # last: the end of the last string or bracket
    cut: int | None = None  # where a trailing comment starts
    while True:
        m = (_IN_BRACKETS if depth else _AT_TOP).search(text, i)
        if m is None or m.lastgroup == "n":
            stop = len(text) if m is None else m.start()
            tail = text[last : cut if cut is not None else stop]
            return (len(text) if m is None else m.end()), tail.rstrip().endswith(":")
        g = m.lastgroup
        i = m.end()
        if g == "c":
            cut = m.start()
            continue
        if g == "o":
            depth += 1
        elif g == "x" and depth:
            depth -= 1
        last, cut = i, None


def _statements_from(text: str, pos: int) -> int:
    """The start of the first statement at column 0 from ``pos`` on, stepping
    over whole logical lines (strings and brackets that span lines)."""
    while (m := _CODE.search(text, pos)) is not None:
        if not m.group(1):
            return m.start()
        pos, _ = _logical(text, m.end() - 1)
    return len(text)


def skeleton(text: str) -> tuple[str, list[int]]:
    """The skeleton of a module and the original line of each of its lines
    (see the module doc)."""
    out: list[str] = []
    lines: list[int] = []
    at_line, counted = 1, 0

    def line_of(offset: int) -> int:
        nonlocal at_line, counted
        at_line += text.count("\n", counted, offset)
        counted = offset
        return at_line

    def keep(a: int, b: int) -> None:
        chunk = text[a:b] if text[a:b].endswith("\n") else text[a:b] + "\n"
        first = line_of(a)
        out.append(chunk)
        lines.extend(range(first, first + chunk.count("\n")))

    def odd(a: int, b: int) -> bool:
        """Whether text[a:b] may leave a triple-quoted string open."""
        return bool(text.count('"""', a, b) % 2 or text.count("'''", a, b) % 2)

    n = len(text)
    pos = 0
    first = True
    while (m := _TOP.search(text, pos)) is not None:
        s = m.start()
        if odd(pos, s):
            # a string opened in the skipped lines may run past column 0: step
            # over them statement by statement instead
            s = _statements_from(text, pos)
            if s >= n:
                break
        is_def = _DEF.match(text, s) is not None
        docstring = first and _STRING_START.match(text, s) is not None
        first = False
        if not (is_def or docstring):
            # a statement that is not kept: skip it and what follows it up to the
            # next line at column 0, unless a string may run past that line
            nl = text.find("\n", s)
            nxt = _TOP.search(text, n if nl < 0 else nl + 1)
            stop = n if nxt is None else nxt.start()
            if not odd(s, stop):
                pos = stop
                continue
        e, header = _logical(text, s)
        if is_def or docstring:
            keep(s, e)
        pos = e
        if not (header and is_def):
            continue
        body = _CODE.search(text, e)
        if body is None or not body.group(1):
            continue  # no indented body: the parse will fail and fall back
        indent, b = body.group(1), body.start()
        if _STRING_START.match(text, body.end() - 1):  # a docstring, perhaps
            pos, _ = _logical(text, b)
            keep(b, pos)
        lines.append(line_of(b))
        out.append(indent + "...\n")
    return "".join(out), lines


@dataclass(frozen=True, slots=True)
class Sym:
    """A top-level class or function: name, ``class``/``def``, first line,
    signature (``(a, b=1) -> int``, or the bases of a class), full docstring,
    and how many times the name is defined at the top."""

    name: str
    sym: str
    line: int
    signature: str
    doc: str
    defs: int = 1


@dataclass(frozen=True, slots=True)
class Outline:
    """A module's docstring and symbols, or the syntax error that stopped it."""

    doc: str
    symbols: tuple[Sym, ...]
    error: str = ""
    error_line: int = 0


def _signature(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    try:
        if isinstance(node, ast.ClassDef):
            parts = [ast.unparse(b) for b in node.bases]
            parts += [ast.unparse(k) for k in node.keywords]
            return f"({', '.join(parts)})" if parts else ""
        sig = f"({ast.unparse(node.args)})"
        return sig + (f" -> {ast.unparse(node.returns)}" if node.returns is not None else "")
    except (ValueError, RecursionError):  # pragma: no cover - unparse of odd trees
        return ""


def _parse(source: str | bytes) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes and the like
        return ast.parse(source)


def _utf8(data: bytes) -> str | None:
    """The text of a module in UTF-8 (no coding cookie naming another encoding
    in its first two lines), else None."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    cookie = _COOKIE.search(data, 0, second if second >= 0 else len(data))
    if cookie is not None and cookie.group(1).lower().replace(b"_", b"-") not in (
        b"utf-8",
        b"utf8",
    ):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def outline(data: bytes, *, skim: bool = True) -> Outline:
    """The docstring and top-level symbols of the module whose bytes are ``data``
    (with ``skim=False``, from a parse of the whole module: the reference the
    skeleton is held to)."""
    tree: ast.Module | None = None
    line_map: list[int] | None = None
    text = _utf8(data) if skim else None  # None: another encoding, for the full parse
    if text is not None and "\0" not in text:
        sk = skeleton(text.removeprefix("\ufeff"))
        try:
            tree, line_map = _parse(sk[0]), sk[1]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
    if tree is None:
        try:
            tree = _parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            line = getattr(e, "lineno", None)
            return Outline(
                "",
                (),
                f"not parsed: {getattr(e, 'msg', None) or e}",
                line if isinstance(line, int) else 0,
            )

    def where(n: int) -> int:
        return line_map[n - 1] if line_map is not None and 0 < n <= len(line_map) else n

    syms = tuple(
        Sym(
            name,
            "class" if isinstance(node, ast.ClassDef) else "def",
            where(node.lineno),
            _signature(node),
            ast.get_docstring(node) or "",
            defs,
        )
        for name, (node, defs) in top_symbols(tree).items()
    )
    return Outline(ast.get_docstring(tree) or "", syms)


__all__ = ["Outline", "Sym", "outline", "skeleton"]
