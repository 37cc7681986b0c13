"""The receipt of a Recall: what it did and what its Shape costs.

A Shape's text opens with one ``//`` receipt line of at most
:data:`LINE_TOKENS` tokens holding what an agent acts on; the whole
:class:`Receipt` stays available as data. :func:`finish` puts the line in
front of a body and counts the whole text exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ..tokens import count_tokens
from .lines import LineCache, digit_run_tokens

ALARM_TOKENS = 8000


@dataclass(slots=True)
class Receipt:
    """What a Recall did and what its Shape costs.

    The Shape's first line prints the few fields an agent acts on
    (:meth:`line`); every field is here, and in ``to_dict()``. A Recall given
    ``since`` (``memnet/recall/delta.py``) fills the last fields: ``answer`` is
    ``delta`` or ``unchanged`` when the text is the difference from the Shape
    with etag ``since`` (``added``, ``changed`` and ``gone`` rows), and stays
    ``shape`` with ``why`` set when it could not be.

    ``periphery`` names a few nodes just past the cut, and ``periphery_q``
    for each a q that seeds it; ``body_tokens`` are the tokens of the text
    after the receipt line. ``note`` says how q was read when that may
    surprise (a capital word that names no kind was read as a keyword).
    """

    session: str
    version: int
    q: str
    seed_mode: str
    seeds: tuple[str, ...]
    matched: int
    rows: int
    max_rows: int
    hops: int
    k: int
    clamped: int
    hidden: int
    laws: int
    laws_cut: int
    periphery: tuple[str, ...]
    view: str
    tokens: int
    tokenizer: str
    bytes: int
    alarm: bool
    holds_answer: bool
    etag: str
    read_first: str
    advice: tuple[str, ...] = ()
    census: tuple[tuple[str, int], ...] = ()
    periphery_q: Sequence[str] = ()
    note: str = ""
    max_tokens: int | None = None
    body_tokens: int = 0
    since: str | None = None
    answer: str = "shape"
    why: str = ""
    added: int = 0
    changed: int = 0
    gone: int = 0

    def to_dict(self) -> dict[str, Any]:
        if self.answer != "shape":
            return {k: getattr(self, k) for k in _DELTA_KEYS[self.answer]}
        d = {name: getattr(self, name) for name in RECEIPT_FIELDS}
        d["seeds"] = list(self.seeds)
        d["periphery"] = list(self.periphery)
        d["periphery_q"] = list(self.periphery_q)
        d["advice"] = list(self.advice)
        d["census"] = {k: c for k, c in self.census}
        for k in _SINCE_KEYS if self.since is None else _SINCE_KEYS[3:]:
            del d[k]
        return d

    def line(self) -> str:
        """The receipt as the one ``//`` comment line a Shape starts with."""
        if self.answer != "shape":
            return answer_line(
                self.answer,
                self.version,
                self.rows,
                self.max_rows,
                self.etag,
                self.since,
                (self.added, self.changed, self.gone),
            )
        cap = None if self.max_tokens is None else self.max_tokens - self.body_tokens
        return receipt_line(self, count_tokens, cap)


#: The names of a receipt's fields, in order.
RECEIPT_FIELDS = tuple(f.name for f in fields(Receipt))

#: the tokens a Shape's receipt line may cost (SPEC §3); q is shortened, and
#: the periphery cue left out, to keep it there
LINE_TOKENS = 40
_NEW_NEWS = ("peak", "skip")  # seed modes whose read_first says something new


def receipt_line(r: Receipt, count: Callable[[str], int], cap: int | None = None) -> str:
    """The line an agent reads first (see :func:`receipt_parts`)."""
    return "".join(receipt_parts(r, count, cap))


def receipt_parts(r: Receipt, count: Callable[[str], int], cap: int | None = None) -> list[str]:
    """The parts of the receipt line: version, q as read, rows, whether the
    memory holds an answer, the etag, in at most ``LINE_TOKENS`` tokens (a
    long q is shown by its start); then, when they say something new, a note
    on how q was read and what read_first or the advice say; then, while the
    line stays within ``LINE_TOKENS``, a q that seeds the first node past the
    cut (``more``). With ``cap`` (what a token budget leaves the line), the
    census and then the note are cut short to keep within it.

    Each part after the first starts with a blank and a lower-case letter,
    so the pre-tokenisers cut at every joining blank: the line's tokens are
    the sum of its parts' (:func:`parts_tokens`)."""
    head = f"// shape v={r.version}"
    rows = f" rows={r.rows}/{r.max_rows} holds_answer={str(r.holds_answer).lower()}"
    etag = f" etag={r.etag}"
    etag_tok = count(" etag=") + digit_run_tokens(len(r.etag))
    extra = []
    if r.since is not None:  # asked for a delta, answered whole: say why
        extra.append(f" since={r.since} why={_json(r.why)}")
    if r.census:
        extra.append(" census=" + ",".join(f"{k}:{c}" for k, c in r.census[:6]))
    news = [r.note] if r.note else []
    if r.seed_mode in _NEW_NEWS:
        news.append(r.read_first)
    news += r.advice
    if news:
        extra.append(f" note={_json('; '.join(news))}")
    q = r.q
    room = LINE_TOKENS - count(head) - count(rows) - etag_tok - 1  # the line break
    qpart = f" q={_json(q, True)}"
    qtok = count(qpart)
    if qtok > room and len(q) > 1:  # a long q, shown by its start
        cut, short = len(q), q
        while cut > 1 and qtok > room:
            cut = max(1, min(cut - 1, cut * 3 // 4))
            short = q[:cut].rsplit(" ", 1)[0] if " " in q[:cut] else q[:cut]
            qpart = f" q={_json(short + '...', True)}"
            qtok = count(qpart)
    if cap is not None:  # what is left for the optional parts, last ones dropped first
        left = cap - (LINE_TOKENS - room) - qtok
        kept = []
        for part in extra:
            n = count(part)
            if n <= left:
                kept.append(part)
                left -= n
        extra = kept
    parts = [head, qpart, rows, etag, *extra]
    left = room - qtok - sum(map(count, extra))
    if r.periphery_q and left >= _MORE_MIN:  # (no hint is worked out for less room)
        more = f" more={_json(r.periphery_q[0])}"
        if count(more) <= left:
            parts.append(more)
    return parts


#: the fewest tokens a ``more=`` cue takes (``more="#x"``)
_MORE_MIN = 5


def parts_tokens(parts: list[str], count: Callable[[str], int], nl: str) -> int:
    """Tokens of ``"".join(parts) + nl``: the sum of the parts' (the etag's
    digits counted as runs of three), the line break with the last part
    when it ends in punctuation (a closing quote and the break are one
    piece)."""
    n = 0
    for part in parts[:-1]:
        n += (
            count(part)
            if not part.startswith(" etag=")
            else count(" etag=") + digit_run_tokens(len(part) - 6)
        )
    last = parts[-1]
    if last.startswith(" etag="):
        return n + count(" etag=") + digit_run_tokens(len(last) - 6) + (count(nl) if nl else 0)
    return n + count(last + nl)


def _json(s: str, ascii: bool = False) -> str:
    """``json.dumps(s, ensure_ascii=ascii)``; printable ASCII text with no
    quote or backslash (most receipts) is only put in quotes."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    return json.dumps(s, ensure_ascii=ascii)


def answer_line(
    answer: str,
    version: int,
    rows: int,
    max_rows: int,
    etag: str,
    since: str | None = None,
    counts: tuple[int, int, int] = (0, 0, 0),
) -> str:
    """The short receipt line of a delta answer (``answer`` is ``delta`` or
    ``unchanged``): what the caller needs to follow the Shape it holds."""
    if answer == "unchanged":
        return f"// unchanged v={version} rows={rows}/{max_rows} etag={etag}"
    return (
        f"// delta v={version} rows={rows}/{max_rows} added={counts[0]} "
        f"changed={counts[1]} gone={counts[2]} since={since} etag={etag}"
    )


# the fields a Recall with ``since`` fills, and what the receipt of a delta
# answer holds (its line prints the same facts)
_SINCE_KEYS = ("since", "answer", "why", "added", "changed", "gone")
_DELTA_KEYS = {
    "unchanged": (
        "answer",
        "session",
        "version",
        "rows",
        "max_rows",
        "tokens",
        "tokenizer",
        "bytes",
        "etag",
    ),
    "delta": (
        "answer",
        "session",
        "version",
        "rows",
        "max_rows",
        "tokens",
        "tokenizer",
        "bytes",
        "etag",
        "since",
        "added",
        "changed",
        "gone",
    ),
}


def etag_of(body: str) -> str:
    """The etag of a Shape's body: twelve decimal digits of its hash (about
    40 bits), four tokens where sixteen hex digits cost eight to eleven."""
    h = int.from_bytes(hashlib.blake2b(body.encode(), digest_size=8).digest(), "big")
    return f"{h % 10**12:012d}"


def finish(
    receipt_fields: dict[str, Any],
    body: str,
    body_tokens: int,
    cache: LineCache,
    etag: str | None = None,
) -> tuple[str, Receipt]:
    """Put the receipt line before ``body`` and count the whole text.

    The line prints neither the token count nor the size (the receipt holds
    them), so the text is the line and the body, counted apart: no pre-token
    crosses the line break. The alarm (and its advice) is decided on the
    total. ``etag`` defaults to :func:`etag_of` the body (a delta answer
    passes the etag of the Shape it leads to).
    """
    if etag is None:
        etag = etag_of(body)
    advice = tuple(receipt_fields.pop("advice", ()))
    nl = "\n" if body else ""
    body_bytes = len(body.encode())
    receipt = Receipt(
        **receipt_fields,
        etag=etag,
        tokens=0,
        bytes=0,
        alarm=False,
        advice=advice,
        body_tokens=body_tokens,
    )
    cap = None if receipt.max_tokens is None else receipt.max_tokens - body_tokens
    for alarm in (False, True):
        if alarm:
            receipt = replace(receipt, alarm=True, advice=advice + (ALARM_ADVICE,))
        parts = receipt_parts(receipt, cache.count, cap)
        head = "".join(parts) + nl
        tokens = parts_tokens(parts, cache.count, nl) + body_tokens
        if tokens <= ALARM_TOKENS or alarm:
            break
    receipt.tokens = tokens
    receipt.bytes = len(head.encode()) + body_bytes
    return head + body, receipt


ALARM_ADVICE = "over 8k tokens: narrow q or recall with view=shell"


__all__ = [
    "ALARM_ADVICE",
    "ALARM_TOKENS",
    "LINE_TOKENS",
    "RECEIPT_FIELDS",
    "Receipt",
    "answer_line",
    "etag_of",
    "finish",
    "parts_tokens",
    "receipt_line",
    "receipt_parts",
]
