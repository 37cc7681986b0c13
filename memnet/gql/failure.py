"""Where GQL text fails and how the failure reads.

The readers (lark's transformer in :mod:`memnet.gql.grammar`, the direct
readers, the builder) raise :class:`SyntaxFail` where they find a fault, with
the 1-based line and column of a token; the reader that holds the whole text
turns it into :class:`~memnet.errors.GQLSyntaxError` with :func:`syntax_error`,
which adds the line of text around the place and a caret::

    >>> print(syntax_error(SyntaxFail("unexpected ')'", 1, 11, 10), "INSERT (a))").context)
    INSERT (a))
              ^
    <BLANKLINE>
"""

from __future__ import annotations

from typing import Protocol

from ..errors import GQLSyntaxError
from .ast import Pos


class Token(Protocol):
    """What the helpers here need of a token (lark's tokens have it, and so do
    the direct readers')."""

    @property
    def type(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def column(self) -> int | None: ...
    @property
    def start_pos(self) -> int | None: ...
    def __str__(self) -> str: ...


class SyntaxFail(Exception):
    """A fault found while reading; :func:`syntax_error` makes it the error
    the caller sees (with context when the text is at hand)."""

    def __init__(self, message: str, line: int, column: int, offset: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset


def fail_at(tok: Token, message: str, delta: int = 0) -> SyntaxFail:
    """A failure ``delta`` characters into token ``tok``."""
    line, column = tok.line or 1, tok.column or 1
    if delta:
        head = str(tok)[:delta]
        nl = head.count("\n")
        if nl:
            line += nl
            column = delta - head.rfind("\n")
        else:
            column += delta
    start = tok.start_pos if tok.start_pos is not None else None
    return SyntaxFail(message, line, column, None if start is None else start + delta)


def fail_pos(pos: Pos, message: str) -> SyntaxFail:
    """A failure at a pattern's position."""
    return SyntaxFail(message, pos.line, pos.column, None)


def syntax_error(fail: SyntaxFail, text: str | None = None) -> GQLSyntaxError:
    """The error a caller sees for ``fail``; with ``text``, its context too."""
    if text is None:
        return GQLSyntaxError(fail.message, line=fail.line, column=fail.column)
    offset = fail.offset if fail.offset is not None else offset_of(text, fail.line, fail.column)
    return GQLSyntaxError(
        fail.message, line=fail.line, column=fail.column, context=context(text, offset)
    )


def context(text: str, offset: int, span: int = 40) -> str:
    """The line around ``offset`` (at most ``span`` characters each side) and a caret."""
    offset = max(0, min(offset, len(text)))
    before = text[max(0, offset - span) : offset].rsplit("\n", 1)[-1]
    after = text[offset : offset + span].split("\n", 1)[0]
    return f"{before}{after}\n{' ' * len(before.expandtabs())}^\n"


def offset_of(text: str, line: int, column: int) -> int:
    """Character offset of a 1-based (line, column); linear in the text."""
    at = 0
    for _ in range(line - 1):
        nxt = text.find("\n", at)
        if nxt < 0:
            break
        at = nxt + 1
    return min(len(text), at + column - 1)


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based (line, column) of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def end_position(text: str) -> tuple[int, int]:
    """The 1-based (line, column) just past the end of ``text``."""
    line = text.count("\n") + 1
    return line, len(text) - text.rfind("\n")


__all__ = [
    "SyntaxFail",
    "Token",
    "context",
    "end_position",
    "fail_at",
    "fail_pos",
    "line_column",
    "offset_of",
    "syntax_error",
]
