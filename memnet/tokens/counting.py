"""Counting the tokens of a text: cut into pre-token pieces without the
tokenizer (plain ASCII with Python's ``re``, other text over stand-ins of its
characters), then each piece's count, remembered (:mod:`.cache`); text the
cutters do not take goes to the tokenizer whole (:mod:`.bpe`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from . import bpe, cache
from .bpe import DEFAULT_TOKENIZER

# The o200k pre-tokeniser, written for plain ASCII with Python's re: on text of
# printable ASCII, tabs and line breaks it cuts exactly where the published
# pattern does (each Unicode class in that pattern reduces to its ASCII
# members there; tests/ver/test_tokens.py checks it against the tokenizer). A
# text's count is the sum of its pieces' counts, and pieces repeat (words,
# punctuation runs, handle fragments), so each piece is merged by the BPE once
# and its count remembered, in this process and, through a small file in the
# user's cache directory, in the next one: a fresh process that meets only
# pieces seen before never loads the tokenizer (a fraction of a second).
# (possessive where the classes cannot trade characters: the same pieces, cut
# about a fifth faster by Python's engine)
_O200K_ASCII = re.compile(
    "|".join(
        [
            r"""[^\r\nA-Za-z0-9]?+[A-Z]*+[a-z]++(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\nA-Za-z0-9]?+[A-Z]++[a-z]*+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[0-9]{1,3}""",
            r""" ?[^\sA-Za-z0-9]++[\r\n/]*+""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    )
)
# outside the piece path: non-ASCII, and ASCII controls on which Python's and
# the tokenizer's ideas of white space differ
_NOT_PLAIN = re.compile(r"[^\t\n\r\x20-\x7e]")
_PIECEWISE = {"o200k_base": _O200K_ASCII}


# Text with other characters is cut with the same pattern over a stand-in:
# each character replaced by one of its class (the classes the pattern reads:
# upper-case letters, lower-case letters, other letters, marks, numbers,
# everything else; a mark is a letter to the letter runs and not one to the
# punctuation runs), when that class is the one it had in Unicode 3.2 as well
# as in Python's tables and in those of the ``regex`` module (newer, as a
# rule). Such a character falls in the same class in the tokenizer's tables,
# whichever Unicode version between those they follow (a character new
# since 3.2 is taken only when it was unassigned then and is neither letter,
# mark nor number now: emoji, new symbols). A character whose class changed
# lately (U+0295: a lower-case letter in Python 3.11's tables, another letter
# in newer ones), unassigned characters, controls, white space (the regex
# engines disagree on it) and the long s (case-insensitive matching ties it
# to the s of the contractions) have no stand-in, so text holding one goes
# to the tokenizer. The pieces are then counted like ASCII pieces, without
# building the tokenizer (most of a second); tests/ver/test_tokens.py
# compares the cut with the published pattern and the counts with the
# tokenizer.
_OTHER_LETTER = "\ue000"  # stands in for letters that are neither only upper nor only lower case
_NO_STAND_IN = "\ue001"
_MARK = "\ue002"


@functools.cache
def _stand_in_cutter() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``(cut, other)``: o200k's pattern over stand-ins, and a character
    with none (compiled when first needed: most text is plain ASCII)."""
    cut = re.compile(
        "|".join(
            [
                r"""[^\r\nA-Za-z0-9\ue000]?[A-Z\ue000\ue002]*[a-z\ue000\ue002]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\nA-Za-z0-9\ue000]?[A-Z\ue000\ue002]+[a-z\ue000\ue002]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[0-9]{1,3}""",
                r""" ?[^\t\n\r A-Za-z0-9\ue000]+[\r\n/]*""",
                r"""[\t\n\r ]*[\r\n]+""",
                r"""[\t\n\r ]+(?![^\t\n\r ])""",
                r"""[\t\n\r ]+""",
            ]
        )
    )
    return cut, re.compile(r"[^\t\n\r\x20-\x7e\ue000\ue002]")


def _stand_in_class(category: str) -> str:
    if category in ("Lu", "Lt"):
        return "A"
    if category == "Ll":
        return "a"
    if category[0] == "L":
        return _OTHER_LETTER
    if category[0] == "M":
        return _MARK
    if category[0] == "N":
        return "0"
    return "!"


@functools.cache
def _newer_classes() -> Callable[[str], str | None] | None:
    """A character's stand-in class by the tables of the ``regex`` module
    (a tiktoken dependency, usually on a newer Unicode than Python's), or
    None without it."""
    try:
        import regex
    except ImportError:  # pragma: no cover - tiktoken brings it
        return None
    by = regex.compile(
        r"(?P<A>[\p{Lu}\p{Lt}])|(?P<a>\p{Ll})|(?P<L>[\p{Lm}\p{Lo}])|(?P<M>\p{M})"
        r"|(?P<N>\p{N})|(?P<S>\s)"
    )
    names = {"A": "A", "a": "a", "L": _OTHER_LETTER, "M": _MARK, "N": "0", "S": None}

    def cls(ch: str) -> str | None:
        m = by.match(ch)
        return "!" if m is None else names[m.lastgroup or "S"]

    return cls


def _stand_in(cp: int) -> str:
    """The stand-in of one code point (see above)."""
    import unicodedata

    ch = chr(cp)
    if cp < 0x80:
        return ch if ch in "\t\n\r" or 0x20 <= cp < 0x7F else _NO_STAND_IN
    cat = unicodedata.category(ch)
    got = _stand_in_class(cat)
    newer = _newer_classes()
    if (
        cat in ("Cn", "Cs", "Cc")
        or cat[0] == "Z"
        or ch.isspace()
        or cp == 0x17F
        or _stand_in_class(unicodedata.ucd_3_2_0.category(ch)) != got
        or (newer is not None and newer(ch) != got)
    ):
        return _NO_STAND_IN
    return got


#: code point -> its stand-in, for the characters met so far (the table
#: ``str.translate`` reads)
_STAND_INS: dict[int, str] = {}


def _stand_ins(text: str) -> dict[int, str]:
    """The stand-in table, holding every character of ``text``."""
    table = _STAND_INS
    new = [cp for cp in map(ord, set(text)) if cp not in table]
    if new:
        if len(table) + len(new) > 1 << 16:
            table.clear()
            new = list(map(ord, set(text)))
        for cp in new:
            table[cp] = _stand_in(cp)
    return table


def _stood_in_pieces(text: str) -> list[str] | None:
    """The o200k pieces of ``text`` cut over its stand-in, or None when a
    character has none."""
    cut, other = _stand_in_cutter()
    proxy = text.translate(_stand_ins(text))
    if other.search(proxy) is not None:
        return None
    out: list[str] = []
    at = 0
    for p in cut.findall(proxy):
        out.append(text[at : at + len(p)])
        at += len(p)
    return out if at == len(text) else None


def count_tokens(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """Exact number of tokens ``text`` costs under ``tokenizer``.

    Special-token strings inside ``text`` are counted as ordinary text, the way
    a harness that pastes a Shape into a prompt would send them.
    """
    if not isinstance(text, str):
        from ..errors import InvalidArgument

        raise InvalidArgument(f"count_tokens counts text, not {type(text).__name__}")
    cut = _PIECEWISE.get(tokenizer)
    if cut is None:
        return len(bpe.encoder(tokenizer)(text))
    if _NOT_PLAIN.search(text) is None:
        pieces = cut.findall(text)
    else:
        got = _stood_in_pieces(text)
        if got is None:
            return len(bpe.encoder(tokenizer)(text))
        pieces = got
    memo = cache.pieces(tokenizer)
    get = memo.counts.get
    n = 0
    for piece in pieces:
        c = get(piece)
        n += c if c is not None else memo.count(piece)
    return n


def piece_tokens(piece: str, tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """Tokens of text that is one pre-token piece of ``tokenizer`` (one with a
    piece cutter; the caller knows the text is cut no further, such as a run
    of lower-case letters), without cutting it again."""
    memo = cache.pieces(tokenizer)
    n = memo.counts.get(piece)
    return n if n is not None else memo.count(piece)
