"""SysML v2 text → tokens: the lexical structure of KerML 8.2.2 and SysML 8.2.2.1.

:func:`check_input` runs first and refuses what no parser should see: text past
the caps (:data:`MAX_CHARS`, :data:`MAX_TOKENS`, :data:`MAX_DEPTH`, raised as
:class:`~memnet.errors.InputTooLarge`), NUL characters, lone surrogates,
unterminated strings, names, comments and notes, and brackets that do not
pair up (:class:`~memnet.errors.ModelSyntaxError` with line and column).

:func:`tokenize` then cuts the text into :class:`Tokens`: a reserved word is its
own kind (``'part'``), so is a symbol (``':>>'``); basic and unrestricted names
are ``NAME`` (an unrestricted name keeps its quotes), string literals
``STRING``, numbers ``NUMBER``. Notes (``//``, ``//* */``) and white space are
dropped. A regular comment ``/* ... */`` is not a token: it is kept beside the
token it precedes, where ``doc``, ``comment`` and ``rep`` find their body (a
comment standing alone is a comment element, which MemNet does not keep).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from ...errors import InputTooLarge, ModelSyntaxError

#: Longest model file accepted (characters).
MAX_CHARS = 4 * 1024 * 1024
#: Lexical tokens of one file (an estimate taken before parsing), so the worst
#: file stays within a few seconds; split bigger models into several files.
MAX_TOKENS = 250_000
#: Deepest nesting of ``{ [ (`` accepted outside strings and comments.
MAX_DEPTH = 64

#: The reserved words of SysML v2 (8.2.2.1.2); ``new`` and ``typed`` are read in
#: context, as the pilot implementation does.
RESERVED = frozenset(
    """
about abstract accept action actor after alias all allocate allocation analysis and as assert
assign assume at attribute bind binding by calc case comment concern connect connection constant
constraint crosses decide def default defined dependency derived do doc else end entry enum event
exhibit exit expose false filter first flow for fork frame from hastype if implies import in
include individual inout interface istype item join language library locale loop merge message
meta metadata nonunique not null objective occurrence of or ordered out package parallel part
perform port private protected public redefines ref references render rendering rep require
requirement return satisfy send snapshot specializes stakeholder standard state subject subsets
succession terminate then timeslice to transition true until use variant variation verification
verify via view viewpoint when while xor
""".split()
)

_STR = r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""
_NOTE = r"//\*[\s\S]*?\*/|//[^\n]*"
_COMMENT = r"/\*[\s\S]*?\*/"
# one alternative per token class, tried in order (Python's alternation is ordered:
# '..' and '.?' come before a number written '.5', '::>' before '::' before ':')
_TOKEN = re.compile(
    r"(\s+)|(" + _NOTE + r")|(" + _COMMENT + r")"
    r"|([A-Za-z_][A-Za-z0-9_]*)"
    r"|('(?:[^'\\\n]|\\.)*')"
    r"|(\"(?:[^\"\\\n]|\\.)*\")"
    r"|([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(::>|:>>|:>|::|:=|===|==|=>|!==|!=|<=|>=|->|\.\.|\.\?|\*\*|\?\?|@@"
    r"|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
    r"|[-+*/%^&|~@#$?.,;:=<>{}()\[\]])"
)
_WS, _NOTE_G, _COMMENT_G, _WORD, _UNRESTRICTED, _STRING, _NUMBER, _SYMBOL = range(1, 9)

_TOKEN_ESTIMATE = re.compile(_STR + "|" + _NOTE + "|" + _COMMENT + r"|\w+|[^\s\w]")
# what the bracket scan looks at: strings, notes and comments (skipped whole),
# their unterminated openings (errors) and brackets
_SCAN = re.compile(
    r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|//\*[\s\S]*?\*/|(//)[^\n]*|/\*[\s\S]*?\*/"
    r"|(?P<bad>/\*|['\"])|(?P<br>[{}()\[\]])"
)
_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
_CLOSER = {"}": "{", ")": "(", "]": "["}


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset ``pos``."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def syntax_error(text: str, pos: int, message: str, path: str) -> ModelSyntaxError:
    line, col = line_col(text, pos)
    return ModelSyntaxError(message, path=path, line=line, column=col)


def check_input(text: str, path: str) -> None:
    """Caps, bad characters, unterminated strings or comments and bracket balance."""
    if len(text) > MAX_CHARS:
        raise InputTooLarge(
            f"{path}: model text is {len(text)} characters; the cap is {MAX_CHARS}",
            length=len(text),
            cap=MAX_CHARS,
        )
    bad = _BAD_CHAR.search(text)
    if bad is not None:
        what = (
            "a NUL character" if bad.group() == "\x00" else "a lone surrogate (not valid Unicode)"
        )
        raise syntax_error(text, bad.start(), f"the text holds {what}", path)
    if len(text) > MAX_TOKENS:  # shorter text cannot hold that many tokens
        n = len(_TOKEN_ESTIMATE.findall(text))
        if n > MAX_TOKENS:
            raise InputTooLarge(
                f"{path}: model text holds about {n} tokens; the cap is "
                f"{MAX_TOKENS} (split the model into several files)",
                tokens=n,
                cap=MAX_TOKENS,
            )
    stack: list[int] = []
    for m in _SCAN.finditer(text):
        if m.lastgroup == "br":
            ch = m.group()
            if ch in "{([":
                stack.append(m.start())
                if len(stack) > MAX_DEPTH:
                    raise InputTooLarge(
                        f"{path}: model text nests {{ [ ( deeper than {MAX_DEPTH}", cap=MAX_DEPTH
                    )
                continue
            if not stack:
                raise syntax_error(text, m.start(), f"'{ch}' closes nothing", path)
            opened = stack.pop()
            if text[opened] != _CLOSER[ch]:
                line, col = line_col(text, opened)
                raise syntax_error(
                    text,
                    m.start(),
                    f"'{ch}' cannot close the '{text[opened]}' opened at {line}:{col}",
                    path,
                )
        elif m.lastgroup == "bad":
            what = (
                "comment (no closing */)"
                if m.group() == "/*"
                else f"string or name (no closing {m.group()} on its line)"
            )
            raise syntax_error(text, m.start(), f"unterminated {what}", path)
        elif m.group(1) is not None and text.startswith("//*", m.start()):
            raise syntax_error(
                text, m.start(), "unterminated note (//* without a closing */)", path
            )
    if stack:
        opened = stack[-1]
        raise syntax_error(text, opened, f"'{text[opened]}' is never closed", path)


@dataclass(slots=True)
class Tokens:
    """The tokens of one text as parallel lists, closed by ``$END`` tokens.

    ``kind[i]`` is ``NAME``, ``STRING``, ``NUMBER``, ``$END``, a reserved word
    or a symbol; ``value[i]`` the text of the token; ``start[i]``/``end[i]``
    its offsets. ``comments[i]`` lists the ``(start, end)`` of each regular
    comment between token ``i - 1`` and token ``i``.
    """

    text: str
    kind: list[str] = field(default_factory=list)
    value: list[str] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    comments: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    _lines: list[int] = field(default_factory=list)

    def line_col(self, pos: int) -> tuple[int, int]:
        """Line and column of offset ``pos`` (a binary search, not a count)."""
        if not self._lines:
            self._lines = [0] + [m.end() for m in re.finditer("\n", self.text)]
        n = bisect_right(self._lines, pos)
        return n, pos - self._lines[n - 1] + 1


#: ``$END`` tokens appended, so a parser may look a few tokens ahead freely.
PAD = 4


def tokenize(text: str, path: str) -> Tokens:
    """The tokens of ``text``; a character that starts no token is a syntax error."""
    toks = Tokens(text)
    kind, value, start, end = toks.kind, toks.value, toks.start, toks.end
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break
        pos = m.end()
        g = m.lastindex
        if g == _WS or g == _NOTE_G:
            continue
        if g == _COMMENT_G:
            toks.comments.setdefault(len(kind), []).append((m.start(), pos))
            continue
        s = m.group()
        if g == _WORD:
            kind.append(s if s in RESERVED else "NAME")
        elif g == _UNRESTRICTED:
            kind.append("NAME")
        elif g == _STRING:
            kind.append("STRING")
        elif g == _NUMBER or (g == _SYMBOL and s[0] == "." and s[1:2].isdigit()):
            kind.append("NUMBER")
        else:
            kind.append(s)
        value.append(s)
        start.append(m.start())
        end.append(pos)
    if pos != len(text):
        raise syntax_error(text, pos, f"unexpected character {text[pos]!r}", path)
    for _ in range(PAD):
        kind.append("$END")
        value.append("")
        start.append(len(text))
        end.append(len(text))
    return toks


__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "PAD",
    "RESERVED",
    "Tokens",
    "check_input",
    "line_col",
    "syntax_error",
    "tokenize",
]
