"""Exact, offline token counting for Shapes.

A Receipt states how many LLM tokens its text costs, counted by a real BPE
tokenizer, not estimated. The default is ``o200k_base`` (the GPT-4o family).

One module per concern: :mod:`.counting` cuts a text into pre-token pieces
and adds up their counts, :mod:`.bpe` holds the tokenizers and merges a
piece over a vocabulary's ranks, :mod:`.cache` remembers piece counts across
processes, in the files :mod:`.files` lays out.

Example::

    >>> from memnet.tokens import count_tokens
    >>> count_tokens("INSERT (n1:TSK {title: 'Fix pricing'})") > 0
    True
"""

from __future__ import annotations

from .bpe import DEFAULT_TOKENIZER, TOKENIZERS, encode, loaded
from .cache import PIECES_MAX, save_pieces
from .counting import count_tokens, piece_tokens
from .files import cache_dir

__all__ = [
    "DEFAULT_TOKENIZER",
    "PIECES_MAX",
    "TOKENIZERS",
    "cache_dir",
    "count_tokens",
    "encode",
    "loaded",
    "piece_tokens",
    "save_pieces",
]
