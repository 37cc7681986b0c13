"""The framed GQL wire: ``memnet wire`` on stdin/stdout.

A harness pipes statements (each ended by a ``;`` outside strings and
comments) and reads one framed response per statement::

    ok <n>\\n<n bytes of body>\\n
    error <code> <n>\\n<n bytes of message>\\n

``n`` is the byte length of the UTF-8 body, so a reader never has to guess
where a response ends. Statements and response bodies are capped at
:data:`MAX_FRAME` (4 MiB); a longer statement is refused with
``frame_too_large`` without being held in memory. EOF or SIGTERM flushes the
current session and exits 0. The protocol is written up in
``docs/gql-wire-profile.md`` (§11, "Wire framing").

Importing this module is cheap: the cabinet is imported when :func:`run` runs.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import IO, Any, BinaryIO

from ..errors import InvalidArgument, MemNetError, QueryError, SessionNotFound, WireError

MAX_FRAME = 4 * 1024 * 1024  #: cap of a statement and of a response body, in bytes
READ_SIZE = 64 * 1024  #: bytes asked of stdin per read
SPILL_AT = 256 * 1024  #: a statement longer than this is buffered in a temp file

# scanner states
_CODE, _SLASH, _STRING, _ESC, _LINE, _BLOCK, _BLOCK_STAR = range(7)
_CODE_STOP = re.compile(rb"[;'/]")
_STR_STOP = re.compile(rb"['\\]")
_NONBLANK = re.compile(rb"\S")


class _Body:
    """The bytes of the statement being read: in memory up to ``SPILL_AT``,
    then in an anonymous temp file; dropped as soon as the cap is passed."""

    __slots__ = ("file", "mem", "over", "pieces", "size")

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.mem = 0
        self.file: IO[bytes] | None = None
        self.size = 0
        self.over = False

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        self.size += len(piece)
        if self.over:
            return
        if self.size > MAX_FRAME:  # refuse: keep nothing more of it
            self.over = True
            self.drop()
            return
        if self.file is None and self.mem + len(piece) > SPILL_AT:
            import tempfile

            self.file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by drop())
            for p in self.pieces:
                self.file.write(p)
            self.pieces = []
            self.mem = 0
        if self.file is not None:
            self.file.write(piece)
        else:
            self.pieces.append(piece)
            self.mem += len(piece)

    def take(self) -> bytes:
        if self.file is not None:
            self.file.seek(0)
            data = self.file.read()
        else:
            data = b"".join(self.pieces)
        self.drop()
        return data

    def drop(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        self.pieces = []
        self.mem = 0


class Splitter:
    """Incremental statement scanner over UTF-8 bytes.

    :meth:`feed` takes any chunk of input (a statement may be split anywhere,
    even inside a string, a comment or a multi-byte character) and returns the
    statements it completed, as items:

    * ``("stmt", body)``: a statement's bytes without its ``;``;
    * ``("too_large", size)``: a statement longer than :data:`MAX_FRAME` bytes,
      whose bytes were discarded as they came;
    * ``("bad", message)``: only from :meth:`finish`, for an unterminated rest.

    A ``;`` ends a statement only outside single-quoted strings (``\\``
    escapes, ``''`` doubled quotes), ``//`` line comments and ``/* */``
    comments. Blank statements (whitespace and comments only) yield nothing.
    """

    def __init__(self) -> None:
        self.state = _CODE
        self.code = False  # the current statement has a token outside comments
        self.body = _Body()

    def _end(self, out: list[tuple[str, Any]]) -> None:
        body, code = self.body, self.code
        self.body, self.code = _Body(), False
        if body.over:
            out.append(("too_large", body.size))
        elif code:
            out.append(("stmt", body.take()))
        else:
            body.drop()

    def feed(self, data: bytes) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        n = len(data)
        i = start = 0
        while i < n:
            st = self.state
            if st == _CODE:
                m = _CODE_STOP.search(data, i)
                j = m.start() if m else n
                if not self.code and _NONBLANK.search(data, i, j):
                    self.code = True
                if m is None:
                    i = n
                    break
                c = data[j]
                if c == 0x3B:  # ;
                    self.body.add(data[start:j])
                    self._end(out)
                    i = start = j + 1
                elif c == 0x27:  # '
                    self.code = True
                    self.state = _STRING
                    i = j + 1
                else:  # /
                    self.state = _SLASH
                    i = j + 1
            elif st == _SLASH:
                c = data[i]
                if c == 0x2F:
                    self.state = _LINE
                    i += 1
                elif c == 0x2A:
                    self.state = _BLOCK
                    i += 1
                else:  # a lone '/' is a token; read this byte again as code
                    self.code = True
                    self.state = _CODE
            elif st == _STRING:
                m = _STR_STOP.search(data, i)
                if m is None:
                    i = n
                    break
                # a closing quote; a doubled '' reads as two adjacent strings,
                # which ends and starts a string at the same place
                self.state = _CODE if data[m.start()] == 0x27 else _ESC
                i = m.end()
            elif st == _ESC:
                self.state = _STRING
                i += 1
            elif st == _LINE:
                j = data.find(b"\n", i)
                if j < 0:
                    i = n
                    break
                self.state = _CODE
                i = j + 1
            elif st == _BLOCK:
                j = data.find(b"*/", i)
                if j < 0:
                    if data[n - 1] == 0x2A:
                        self.state = _BLOCK_STAR
                    i = n
                    break
                self.state = _CODE
                i = j + 2
            else:  # _BLOCK_STAR: the last chunk ended with '*' inside a comment
                if data[i] == 0x2F:
                    self.state = _CODE
                    i += 1
                else:
                    self.state = _BLOCK
        self.body.add(data[start:n])
        return out

    def finish(self) -> list[tuple[str, Any]]:
        """End of input: the rest, if it is not blank, is refused (never run)."""
        body, code, state = self.body, self.code, self.state
        self.body, self.code, self.state = _Body(), False, _CODE
        if body.over:
            return [("too_large", body.size)]
        body.drop()
        if not code:
            return []
        where = {
            _STRING: "inside a string",
            _ESC: "inside a string",
            _BLOCK: "inside a /* comment",
            _BLOCK_STAR: "inside a /* comment",
        }
        return [
            (
                "bad",
                "input ended before the statement's ';'"
                + (f" ({where[state]})" if state in where else "")
                + "; it was not run",
            )
        ]


# -- statements --------------------------------------------------------------------
# whitespace and comments, one unambiguous piece at a time (no backtracking blow-up)
_LEAD = re.compile(r"(?:\s|//[^\n]*(?:\n|\Z)|/\*(?:[^*]|\*(?!/))*\*/)*")
_WORD = re.compile(r"([A-Za-z]+)(?![A-Za-z0-9_])")
_USE = re.compile(r"USE\s+(\S+)(?:\s+(CREATE))?\s*\Z", re.IGNORECASE | re.DOTALL)
_OPT = r"[A-Za-z_]+\s*=\s*[^\s,']+"
_WITH = re.compile(rf"(?:^|\s)WITH\s+({_OPT}(?:\s*,\s*{_OPT})*)\s*\Z", re.IGNORECASE)
_BARE_WITH = re.compile(r"(?:^|\s)WITH(?:\s|\Z)")  # upper case: `with` may be a keyword
_COMMITS = {"INSERT", "SET", "REMOVE", "DELETE", "SETTLE"}
_NEEDS_SESSION = _COMMITS | {"RECALL", "MATCH", "OUTLINE"}
_INT_OPTS = {
    "k": "k",
    "hops": "k",
    "rows": "max_rows",
    "limit": "limit",
    "fanout": "fanout",
    "max_tokens": "max_tokens",
    "tokens": "max_tokens",
}


def _blank(text: str) -> bool:
    """Whether ``text`` is only whitespace and comments."""
    return _LEAD.fullmatch(text) is not None


def _options(text: str, allowed: set[str]) -> tuple[str, dict[str, Any]]:
    """Split ``q [WITH name=value, ...]`` into q and Session.recall keywords."""
    m = _WITH.search(text)
    if m is None:
        if _BARE_WITH.search(text):  # `WITH rows`, `WITH rows=` ...: not options
            raise QueryError(
                "WITH takes options as name=value, separated by commas "
                f"(options: {', '.join(sorted(allowed))})"
            )
        return text.strip(), {}
    kw: dict[str, Any] = {}
    seen: set[str] = set()
    for pair in m.group(1).split(","):
        name, _, raw = (s.strip() for s in pair.partition("="))
        key = name.lower()
        val = raw.lower()
        if key not in allowed:
            raise QueryError(f"unknown option {name!r} (options: {', '.join(sorted(allowed))})")
        canon = _INT_OPTS.get(key, key)
        if canon in seen:
            raise QueryError(f"option {name} is given twice")
        seen.add(canon)
        if key in _INT_OPTS:
            if not re.fullmatch(r"-?[0-9]{1,9}", raw):
                raise QueryError(f"option {name} takes an integer, got {raw!r}")
            kw[_INT_OPTS[key]] = int(raw)
        elif key == "view":
            kw["view"] = val
        elif key == "laws":
            if val not in ("true", "false"):
                raise QueryError(f"option laws takes true or false, got {raw!r}")
            kw["laws"] = val == "true"
        elif key == "since":
            kw["since"] = raw
        elif key == "format":
            if val not in ("gql", "json"):
                raise QueryError(f"option format takes gql or json, got {raw!r}")
            kw["format"] = val
    return text[: m.start()].strip(), kw


def _shown(shape: Any, fmt: str) -> str:
    """A Shape as its text (``gql``), or with its whole receipt as data (``json``)."""
    if fmt == "json":
        return json.dumps(
            {"text": shape.text, "receipt": shape.receipt.to_dict()}, ensure_ascii=False
        )
    return str(shape.text)


class Wire:
    """One wire conversation over a cabinet: statements in, frames out."""

    def __init__(self, cabinet: Any, out: BinaryIO) -> None:
        self.cab = cabinet
        self.out = out
        self.session: Any = None
        # the session to read again before the next statement that needs one,
        # after the cabinet could not be read (a server away): not forgotten
        self.lost: str | None = None

    # -- framing ------------------------------------------------------------------
    def send(self, code: str | None, body: str) -> None:
        data = body.encode("utf-8")
        if len(data) > MAX_FRAME:
            code, data = (
                "frame_too_large",
                (
                    f"the response of {len(data)} bytes passes the {MAX_FRAME}-byte frame cap"
                ).encode(),
            )
        if code is not None:
            data = " ".join(data.decode("utf-8").splitlines()).encode("utf-8")
            head = f"error {code} {len(data)}\n"
        else:
            head = f"ok {len(data)}\n"
        self.out.write(head.encode("ascii") + data + b"\n")
        self.out.flush()

    def answer(self, item: tuple[str, Any]) -> None:
        kind, value = item
        if kind == "too_large":
            self.send(
                "frame_too_large",
                f"statement of more than {MAX_FRAME} bytes "
                f"({value} bytes) refused unread; send at most 4 MiB per statement",
            )
            return
        if kind == "bad":
            self.send("bad_frame", value)
            return
        try:
            try:
                text = value.decode("utf-8")
            except UnicodeDecodeError as e:
                raise WireError(f"the statement is not valid UTF-8 (byte {e.start})") from None
            if _blank(text):  # only Unicode spaces (U+2028, U+00A0 ...): blank, as ASCII ones
                return
            self.send(None, self.execute(text))
        except MemNetError as e:
            self.send(e.code, e.message or e.code)
        except (BrokenPipeError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 (a bug: report it, keep serving)
            import traceback

            traceback.print_exc(file=sys.stderr)
            self.send("internal", f"{type(e).__name__}: {e}")

    # -- statements ---------------------------------------------------------------
    def execute(self, text: str) -> str:
        text = text[_LEAD.match(text).end() :]  # type: ignore[union-attr]
        m = _WORD.match(text)
        word = m.group(1).upper() if m else ""
        if word in _NEEDS_SESSION and self.session is None and self.lost is not None:
            self.reopen()  # cabinet_unavailable again while the server is away
        if word in _NEEDS_SESSION and self.session is None:
            raise WireError(
                f"no session selected: USE a session first (USE sid; or "
                f"USE sid CREATE;) before {word}"
            )
        if word in ("RECALL", "MATCH", "OUTLINE"):
            self.refresh()  # a read sees the latest; a Commit keeps its compare-and-swap
        if word == "USE":
            return self.use(text)
        if word == "PING":
            if not _blank(text[m.end() :]):  # type: ignore[union-attr]
                raise WireError("PING takes nothing")
            return "pong"
        if word == "SESSIONS":
            if not _blank(text[m.end() :]):  # type: ignore[union-attr]
                raise WireError("SESSIONS takes nothing")
            return json.dumps([i.to_dict() for i in self.cab.sessions()], ensure_ascii=False)
        if word == "RECALL":
            q, kw = _options(
                text[m.end() :],  # type: ignore[union-attr]
                {
                    "k",
                    "hops",
                    "rows",
                    "limit",
                    "fanout",
                    "view",
                    "laws",
                    "since",
                    "max_tokens",
                    "tokens",
                    "format",
                },
            )
            fmt = kw.pop("format", "gql")
            return _shown(self.session.recall(q, **kw), fmt)
        if word == "MATCH":
            return str(self.session.recall(text).text)
        if word == "OUTLINE":
            rest, kw = _options(
                text[m.end() :],  # type: ignore[union-attr]
                {"rows", "limit", "view", "laws", "format"},
            )
            if not _blank(rest):
                raise WireError("OUTLINE takes only WITH options (rows, limit, view, laws, format)")
            fmt = kw.pop("format", "gql")
            return _shown(self.session.outline(**kw), fmt)
        if word in _COMMITS:
            return self.commit(text)
        shown = text[:40] + ("…" if len(text) > 40 else "")
        raise WireError(
            f"not a wire statement: {shown!r} (USE, RECALL, MATCH, OUTLINE, "
            "INSERT, SET, REMOVE, DELETE, SETTLE, SESSIONS, PING)"
        )

    def use(self, text: str) -> str:
        m = _USE.match(text)
        if m is None:
            raise WireError("USE takes a session id: USE sid; or USE sid CREATE;")
        sid, create = m.group(1), m.group(2) is not None
        self.flush()
        if create and not self.cab.exists(sid):
            s = self.cab.create(sid)
        else:
            s = self.cab.open(sid)
        self.session, self.lost = s, None
        return f"using {s.name} (version {s.version})"

    def commit(self, text: str) -> str:
        s = self.session
        res = s.commit(text)
        try:
            self.cab.flush(s)
        except MemNetError:
            self.reload()  # forget the commit that was not stored; read fresh state
            raise
        out: dict[str, Any] = {"version": res.version, "ids": res.ids, "changed": res.changed}
        if res.advice:
            out["advice"] = res.advice
        return json.dumps(out, ensure_ascii=False)

    def reload(self) -> None:
        """Re-read the current session from the cabinet. If that fails too, it is
        read again before the next statement that needs it (until it is read,
        or found dropped: then that statement asks for a USE)."""
        self.lost, self.session = self.session.name, None
        try:
            self.reopen()
        except MemNetError:
            pass

    def reopen(self) -> None:
        name, self.lost = self.lost, None
        assert name is not None
        try:
            self.session = self.cab.open(name)
        except SessionNotFound:
            raise
        except MemNetError:
            self.lost = name
            raise

    def refresh(self) -> None:
        """Read the current session again when another writer moved it on in
        the cabinet (a version probe: one catalog read, no hydrate)."""
        s = self.session
        if s.dirty or not self.cab.is_stale(s):
            return
        try:
            self.session = self.cab.open(s.name)
        except SessionNotFound:
            self.session = None  # dropped: the next statement needs a USE
            raise

    def flush(self) -> None:
        if self.session is not None and self.session.dirty:
            self.cab.flush(self.session)


# -- the command ---------------------------------------------------------------------
class _Stop(BaseException):
    """Raised by the SIGTERM handler while the wire waits for input."""


def serve(cabinet: Any, stdin_fd: int, out: BinaryIO, *, session: str | None = None) -> int:
    """Serve the wire until EOF or SIGTERM; returns the exit code."""
    import signal

    wire = Wire(cabinet, out)
    if session is not None:
        wire.use(f"USE {session} CREATE")
    state = {"busy": True, "stop": False}

    def on_term(signum: int, frame: Any) -> None:
        if state["busy"]:
            state["stop"] = True  # finish the statement at hand first
        else:
            raise _Stop()

    old = None
    try:
        old = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: no SIGTERM handling
        pass
    split = Splitter()
    try:
        while True:
            try:
                state["busy"] = False
                if state["stop"]:
                    break
                data = os.read(stdin_fd, READ_SIZE)
                state["busy"] = True
            except _Stop:
                break
            items = split.feed(data) if data else split.finish()
            for item in items:
                wire.answer(item)
                if state["stop"]:
                    break
            if not data:
                break
    except BrokenPipeError:
        pass  # the reader went away: still flush below
    finally:
        state["busy"] = True
        try:
            wire.flush()
        finally:
            if old is not None:
                signal.signal(signal.SIGTERM, old)
    return 0


def run(args: Any) -> int:
    """``memnet wire``: serve stdin/stdout on the cabinet at ``args.home``."""
    from ..cabinet import Cabinet

    if sys.stdin is None or sys.stdout is None:  # started with `<&-` or `>&-`
        raise InvalidArgument(
            "memnet wire reads statements on stdin and answers on stdout, and one of them is closed"
        )
    out = sys.stdout.buffer
    with Cabinet.open(args.home) as cab:
        code = serve(cab, sys.stdin.fileno(), out, session=getattr(args, "session", None))
    try:
        out.flush()
    except BrokenPipeError:  # the reader went away: nothing left to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return code


__all__ = ["MAX_FRAME", "Splitter", "Wire", "run", "serve"]
