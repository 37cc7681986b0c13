"""SysML v2 textual models → plain data → :class:`~memnet.ingest.model.Artefacts`.

Three steps, each usable on its own:

* :func:`parse_sysml` reads one file's text into a :class:`SysmlDoc` (text →
  document: :mod:`.lexer`, :mod:`.expr`, :mod:`.clauses`, :mod:`.parser`,
  :mod:`.statements`): a tree of :class:`SysmlElement` records with the
  relations written in each namespace, and the warnings met on the way.
* :func:`to_artefacts` turns the documents of one model (many files) into
  elements and links keyed by locators ``sysml:<root>/<Qualified::Name>``,
  resolving names across files (document → artefacts: :mod:`.resolve`,
  :mod:`.artefacts`).
* :func:`scan_sysml` does both for a ``.sysml`` file or a directory of them, and
  :func:`load_requirements` lists a model's requirement short ids with their doc.

The reader reads the whole textual notation (SysML v2 clause 8.2.2 and the
KerML expressions it uses) statement by statement, and keeps every statement:
packages, imports and aliases; definitions and usages of every keyword (kinds
in :data:`KINDS`), usages written without a keyword (``REF``), with short ids,
typing, specialisation, subsetting, redefinition, multiplicity, values and
defaults, direction and ``doc``; requirement subjects, actors, objectives,
``require``/``assume`` constraints, ``assert``, every form of ``satisfy``
(``not satisfy`` too), ``perform``, ``exhibit``, ``include``, ``verify``,
``frame``; ``connect``, ``interface``, ``flow``, ``message``, ``bind``,
``allocate``, ``dependency``; action nodes, successions and state
transitions; metadata definitions and usages (``#M``, ``@M``, ``metadata …
about``), user keywords (``#kw def``), views, viewpoints, renderings,
``filter``, ``expose`` and ``render``. A usage without a name is named from
what it redefines or references, its role, or its keyword and position
(``item1``). Text that is not SysML raises
:class:`~memnet.errors.ModelSyntaxError` with a line and column (also a
definition or package without a name); read with ``recover``, a statement
that does not parse is skipped with a warning instead, and only brackets,
strings or comments that do not close fail the file. Past the caps
(:data:`MAX_CHARS`, :data:`MAX_TOKENS`, :data:`MAX_DEPTH`),
:class:`~memnet.errors.InputTooLarge`; a model file too big in bytes to stay
within :data:`MAX_CHARS` characters is refused from its size, unread.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...errors import InputTooLarge, MemNetError, ModelSyntaxError, PathNotFound
from ..model import Artefacts, Warning_
from ..source import text_name
from ..walk import file_kind, read_regular
from . import lexer
from .artefacts import SCHEME, to_artefacts
from .doc import (
    DEF_KINDS,
    KINDS,
    MANAGED_TYPES,
    REQ_KINDS,
    Alias,
    Connect,
    Import,
    Reference,
    Relation,
    Satisfy,
    SysmlDoc,
    SysmlElement,
)
from .lexer import MAX_CHARS, MAX_DEPTH, MAX_TOKENS, check_input, tokenize
from .parser import parse_tokens
from .resolve import LIBRARY_NAMES


def parse_sysml(text: str, path: str = "<text>", *, recover: bool = False) -> SysmlDoc:
    """Read one SysML v2 text (see the module doc).

    Raises :class:`~memnet.errors.ModelSyntaxError` (code ``model_syntax``) with
    the line and column of the first error, or
    :class:`~memnet.errors.InputTooLarge` past a cap. With ``recover``, a
    statement that does not parse is skipped instead (up to its ``;`` or the
    end of its body) with a warning in ``SysmlDoc.warnings`` that names the line
    and column, and everything before and after it is read; text whose
    strings, comments or brackets do not close is still an error.

    >>> doc = parse_sysml("part def Car { part engine : Engine; }")
    >>> [(e.kind, e.name) for _, e in doc.walk()]
    [('PARTDEF', 'Car'), ('PART', 'engine')]
    """
    if not isinstance(text, str):
        raise ModelSyntaxError(f"expected SysML text (str), got {type(text).__name__}", path=path)
    if text.startswith("\ufeff"):  # a byte order mark: blank, columns unchanged
        text = " " + text[1:]
    check_input(text, path)
    return parse_tokens(tokenize(text, path), path, recover)


def _max_bytes() -> int:
    """The largest model file read (bytes): any longer one holds more than
    :data:`MAX_CHARS` characters (UTF-8 takes at most four bytes a character,
    and a byte order mark three), so it is refused without being read."""
    return 4 * lexer.MAX_CHARS + 3


def _read(path: Path, rel: str) -> str:
    cap = _max_bytes()
    try:
        data = read_regular(path, cap)
    except PathNotFound as e:
        raise PathNotFound(f"{rel}: {e.message}", path=rel) from None
    except InputTooLarge as e:
        size = e.details.get("length", cap + 1)
        raise InputTooLarge(
            f"{rel}: model file is {size} bytes, so more than {lexer.MAX_CHARS} "
            f"characters; the cap is {lexer.MAX_CHARS}",
            length=size,
            cap=lexer.MAX_CHARS,
        ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        head = data[: e.start]
        line = head.count(b"\n") + 1
        col = len(head) - (head.rfind(b"\n") + 1) + 1
        raise ModelSyntaxError(
            "the file is not UTF-8 text", path=rel, line=line, column=col
        ) from None


def _shown_rel(rel: str) -> str:
    return rel if text_name(rel) else os.fsencode(rel).decode("ascii", "backslashreplace")


def model_files(
    path: str | os.PathLike[str], warn: list[Warning_] | None = None
) -> tuple[str, list[tuple[str, Path]]]:
    """The root name and the ``(relative posix path, file)`` pairs of a model.

    Only regular files are taken: a symbolic link is passed over, and any
    other ``.sysml`` entry that is not a regular file (a FIFO, a socket, a
    device) is skipped with a warning added to ``warn``. A ``path`` that is
    neither a regular ``.sysml`` file nor a directory is a ``path_not_found``
    error. Nothing is opened here.
    """
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except (OSError, ValueError):
        mode = None
    if mode is not None and stat.S_ISREG(mode):
        if p.suffix != ".sysml":
            raise MemNetError(
                f"{os.fspath(p)!r} is not a .sysml file", code="path_not_found", path=os.fspath(p)
            )
        return p.name, [(p.name, p)]
    if mode is None:
        raise MemNetError(
            f"no SysML file or directory at {os.fspath(p)!r}",
            code="path_not_found",
            path=os.fspath(p),
        )
    if not stat.S_ISDIR(mode):
        raise PathNotFound(
            f"{os.fspath(p)!r} is {file_kind(mode)}, not a .sysml file or a directory",
            path=os.fspath(p),
        )
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(p):  # symbolic links are not followed
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if not fn.endswith(".sysml") or fn.startswith("."):
                continue
            full = Path(dirpath) / fn
            rel = full.relative_to(p).as_posix()
            try:
                fmode = full.lstat().st_mode
            except OSError:  # gone since the listing (as is_symlink() took it before)
                continue
            if stat.S_ISLNK(fmode):
                continue
            if not stat.S_ISREG(fmode):  # never opened: a FIFO would block the read
                if warn is not None:
                    warn.append(
                        Warning_(
                            _shown_rel(rel), 0, f"skipped: not a regular file ({file_kind(fmode)})"
                        )
                    )
                continue
            if not text_name(rel):  # it could never be part of a locator
                raise ModelSyntaxError("the path is not UTF-8; rename it", path=_shown_rel(rel))
            found.append((rel, full))
    found.sort()
    return p.resolve().name or p.name, found


def parse_files(
    path: str | os.PathLike[str],
    *,
    strict: bool = True,
    recover: bool = False,
    warn: list[Warning_] | None = None,
) -> tuple[str, list[tuple[str, SysmlDoc]], list[Warning_]]:
    """The root, the parsed ``(relative path, document)`` pairs of a model, and
    (with ``strict=False``) each file that did not parse, as ``path:line:
    message`` (with ``strict``, the first such file raises its error). With
    ``recover`` a statement that does not parse costs only itself (see
    :func:`parse_sysml`); a file fails whole only when its brackets, strings or
    comments do not close, or past a cap. A ``.sysml`` entry that is not a
    regular file is skipped, with a warning added to ``warn`` (see
    :func:`model_files`)."""
    root, files = model_files(path, warn)
    docs: list[tuple[str, SysmlDoc]] = []
    failed: list[Warning_] = []
    for rel, full in files:
        try:
            docs.append((rel, parse_sysml(_read(full, rel), rel, recover=recover)))
        except PathNotFound as e:  # swapped for a FIFO or the like since the walk
            if full == Path(path):  # the model named itself: never read as empty
                raise
            if warn is not None:
                warn.append(Warning_(rel, 0, "skipped: " + e.message.removeprefix(f"{rel}: ")))
        except (ModelSyntaxError, InputTooLarge) as e:
            if strict:
                raise
            failed.append(_failure(rel, e))
    return root, docs, failed


def _failure(rel: str, e: MemNetError) -> Warning_:
    """``rel:line: not ingested (code, column c): what went wrong``."""
    line = getattr(e, "line", None) or 0
    column = getattr(e, "column", None)
    message = e.message.removeprefix(f"{rel}: ")
    if line:
        message = message.removesuffix(
            f" at line {line}" + (f", column {column}" if column is not None else "")
        )
    where = f", column {column}" if column is not None else ""
    return Warning_(rel, line, f"not ingested ({e.code}{where}): {message}")


def scan_sysml(path: str | os.PathLike[str], *, strict: bool = True) -> Artefacts:
    """Ingest a ``.sysml`` file or every ``.sysml`` file under a directory.

    The walk is sorted and skips hidden files and directories and symbolic
    links; a ``.sysml`` entry that is not a regular file (a FIFO, a socket, a
    device) is never opened but skipped with a warning in
    ``Artefacts.warnings``. A path that is neither a regular file nor a
    directory is a ``path_not_found`` error. The root (the
    scope a sync reconciles) is the directory's name, or for a single file the
    file's own name, so ingesting one file never claims its neighbours. A file
    that does not parse raises :class:`~memnet.errors.ModelSyntaxError` (a
    partial model would read as deletions); with ``strict=False`` a statement
    that does not parse is skipped with a warning (everything around it is
    read), and a file that cannot be read at all (brackets, strings or comments
    that do not close) is left out and listed in ``Artefacts.failed``.
    """
    skipped: list[Warning_] = []
    root, docs, failed = parse_files(path, strict=strict, recover=not strict, warn=skipped)
    art = to_artefacts(docs, root)
    art.warnings[:0] = skipped
    art.failed.extend(failed)
    return art


def load_requirements(path: str | os.PathLike[str]) -> dict[str, str]:
    """Every requirement short id of a model (file or directory) → its doc text.

    Both requirement definitions and usages count; a requirement without a doc
    maps to ``""``. The same short id on two requirements raises
    :class:`~memnet.errors.ModelSyntaxError` naming the second one.
    """
    _root, docs, _failed = parse_files(path)
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    for rel, doc in docs:
        for _owners, el in doc.walk():
            if el.kind not in REQ_KINDS or el.short_id is None:
                continue
            rid = el.short_id
            if rid in out:
                raise ModelSyntaxError(
                    f"requirement id {rid!r} is given twice (first at {where[rid]})",
                    path=rel,
                    line=el.line,
                    column=el.column,
                )
            out[rid] = el.doc or ""
            where[rid] = f"{rel}:{el.line}"
    return out


__all__ = [
    "DEF_KINDS",
    "KINDS",
    "LIBRARY_NAMES",
    "MANAGED_TYPES",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "SCHEME",
    "Alias",
    "Connect",
    "Import",
    "Reference",
    "Relation",
    "Satisfy",
    "SysmlDoc",
    "SysmlElement",
    "load_requirements",
    "model_files",
    "parse_files",
    "parse_sysml",
    "scan_sysml",
    "to_artefacts",
]
