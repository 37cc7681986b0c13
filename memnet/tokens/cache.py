"""The piece counts a process remembers and hands on to the next one.

A text's count is the sum of its pieces' counts, and pieces repeat (words,
punctuation runs, handle fragments), so each piece is merged by the BPE once
and its count remembered, in this process and, through a small file in the
user's cache directory, in the next one: a fresh process that meets only
pieces seen before never loads the tokenizer (a fraction of a second).
"""

from __future__ import annotations

import atexit
import os
import threading
import zlib
from collections.abc import Callable
from itertools import chain, islice

from . import bpe
from .files import cache_dir, read_table, table_items, write_file, write_table

PIECES_MAX = 1 << 18  # pieces the table keeps (the most recently used)
FRESH_MAX = 1 << 16  # new pieces a process hands on once the table is full
MORE_MAX = 1 << 16  # pieces remembered past those, in this process only
RECENT_MAX = 4096  # pieces the small file holds before they join the table
MAGIC = b"MNPC1"  # the small file of recent pieces (and the old single file)
TABLE_MAGIC = b"MNPC2"  # the hashed table of pieces


class Pieces:
    """Token counts of pre-token pieces, shared with later processes.

    Two files in the cache directory hold what earlier processes counted: a
    hashed table (``<tokenizer>.pieces``, the layout of the ranks file, see
    :func:`write_table`), probed where it lies so that opening it costs the
    same whatever it holds, and a small map of the pieces counted since the
    table was last written (``<tokenizer>.pieces-recent``), read whole. A
    process adds what it counted to the small file when it exits; once that
    holds RECENT_MAX pieces they are written into the table. The table keeps
    at most PIECES_MAX pieces, its entries oldest first: the process that
    writes it puts the pieces it met (new, recent or found in the table) last
    and drops the oldest past that many. (Only the writing process's own
    uses move pieces to the newest end: it is an approximation of "most
    recently used".)"""

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer
        # pieces this process has a count for: the recent file's, the ones
        # it found in the table, and its own
        self.counts: dict[str, int] = {}
        # new pieces met once this process holds as many for the files as
        # the table has room for (FRESH_MAX at least): remembered here only,
        # forgotten all at once when MORE_MAX are held
        self.more: dict[str, int] = {}
        self.fresh: dict[str, int] = {}  # counted here, in neither file yet
        self.stored: Callable[[bytes], int | None] | None = None
        self.held = 0  # pieces the two files hold
        self.fold = False  # the table needs writing (an old file was read)
        self.path: str | None = None
        base = cache_dir()
        if base is not None:
            self.path = os.path.join(base, f"{tokenizer}.pieces")
            table = read_table(self.path, TABLE_MAGIC, 2)
            if table is not None:
                self.stored, self.held = table
            else:
                # a file of the old layout (one map) is read once and
                # written as a table when this process exits
                old = read_pieces(self.path)
                if old:
                    self.counts.update(old)
                    self.held = len(old)
                    self.fold = True
            recent = read_pieces(self.path + "-recent")
            self.counts.update(recent)
            self.held += len(recent)

    @property
    def new(self) -> int:
        """Pieces counted here that the files do not hold yet."""
        return len(self.fresh)

    def count(self, piece: str) -> int:
        if len(piece) <= 3 and piece.isdigit() and piece.isascii():
            # a run of up to three digits is a piece of its own and one token
            # (tests/ver/test_tokens.py checks every one): never looked up
            return 1
        n = self.more.get(piece)
        if n is not None:
            return n
        if self.stored is not None:
            n = self.stored(piece.encode())
            if n is not None:
                self.counts[piece] = n
                return n
        n = bpe.piece_count(self.tokenizer, piece)
        if len(self.fresh) < max(FRESH_MAX, PIECES_MAX - self.held):
            self.counts[piece] = n
            self.fresh[piece] = n
        else:
            if len(self.more) >= MORE_MAX:
                self.more.clear()
            self.more[piece] = n
        return n

    def save(self) -> None:
        """Merge what this process learnt into the cache files (atomically; a
        file that cannot be written is left alone)."""
        if not (self.fresh or self.fold) or self.path is None:
            return
        try:
            recent_path = self.path + "-recent"
            recent = read_pieces(recent_path)
            if self.fold:
                recent.update(self.counts)
            for k, v in self.fresh.items():
                recent.setdefault(k, v)
            if len(recent) >= RECENT_MAX or self.fold:
                # oldest first: the table's pieces that this process did not
                # meet, then those it met, then the recent ones; the oldest
                # past PIECES_MAX are dropped
                table = table_items(self.path, TABLE_MAGIC, 2)
                for k, v in chain(self.counts.items(), recent.items()):
                    raw = k.encode()
                    table.pop(raw, None)  # (its count is the same) put it last
                    if 0 < v < 1 << 16 and 0 < len(raw) <= 256:
                        table[raw] = v
                over = len(table) - PIECES_MAX
                if over > 0:
                    for raw in list(islice(table, over)):
                        del table[raw]
                write_table(self.path, TABLE_MAGIC, table, 2, ordered=True)
                recent = {}
            write_file(recent_path, pieces_file(recent))
            self.fresh.clear()
            self.fold = False
        except (OSError, ValueError):
            pass


def pieces_file(counts: dict[str, int]) -> bytes:
    import msgpack

    body: bytes = msgpack.packb(counts)
    return MAGIC + zlib.crc32(body).to_bytes(4, "big") + body


def read_pieces(path: str) -> dict[str, int]:
    """The counts in a file of the map layout, or none when it is missing or
    damaged."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:5] != MAGIC or zlib.crc32(raw[9:]) != int.from_bytes(raw[5:9], "big"):
            return {}
        import msgpack

        d = msgpack.unpackb(raw[9:])
        if type(d) is dict and all(
            type(k) is str and type(v) is int and 0 < v < 1 << 16 for k, v in d.items()
        ):
            return d
    except (OSError, ValueError, TypeError):
        pass
    return {}


_lock = threading.Lock()
_memos: dict[str, Pieces] = {}


def pieces(tokenizer: str) -> Pieces:
    memo = _memos.get(tokenizer)
    if memo is None:
        with _lock:
            memo = _memos.get(tokenizer)
            if memo is None:
                memo = _memos[tokenizer] = Pieces(tokenizer)
    return memo


@atexit.register
def save_pieces() -> None:
    """Write the pieces this process counted to the cache (also at exit)."""
    for memo in list(_memos.values()):
        memo.save()
