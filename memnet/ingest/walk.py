"""The directory walk of ingest: which files of a tree are read, and the checks
on the path a user gives (see :mod:`memnet.ingest.source` for the rules)."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from ..errors import InputTooLarge, PathNotFound
from .model import Warning_

SKIP_DIRS = frozenset({"__pycache__", "node_modules"})

T = TypeVar("T")


def _skip(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info")


def walk_tree(
    top: Path, handlers: Mapping[str, T], warn: list[Warning_], root: str
) -> tuple[list[str], list[tuple[str, T]]]:
    """Directories (relative, ``''`` for the root) that hold a handled file, and
    the handled files, both in sorted depth-first order."""
    dirs: list[str] = []
    files: list[tuple[str, T]] = []

    def visit(path: Path, rel: str) -> bool:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            warn.append(
                Warning_(f"{root}/{rel}" if rel else root, 0, f"not read: {err.strerror or err}")
            )
            return False
        mark = len(dirs)
        dirs.append(rel)
        found = False
        for e in entries:
            if _skip(e.name) or e.is_symlink():
                continue
            if not text_name(e.name):  # a locator is text: such a name cannot be one
                warn.append(
                    Warning_(
                        f"{root}/{rel}" if rel else root,
                        0,
                        f"skipped {os.fsencode(e.name)!r}: the name is not UTF-8",
                    )
                )
                continue
            sub = f"{rel}/{e.name}" if rel else e.name
            if e.is_dir(follow_symlinks=False):
                found = visit(Path(e.path), sub) or found
            elif e.is_file(follow_symlinks=False):
                h = handlers.get(os.path.splitext(e.name)[1])
                if h is not None:
                    files.append((sub, h))
                    found = True
            elif os.path.splitext(e.name)[1] in handlers:
                # a FIFO, socket or device with a handled name: never opened
                try:
                    what = file_kind(e.stat(follow_symlinks=False).st_mode)
                except OSError:
                    what = "not a regular file"
                warn.append(Warning_(f"{root}/{sub}", 0, f"skipped: not a regular file ({what})"))
        if not found:
            del dirs[mark:]
        return found

    visit(top, "")
    return dirs, files


def text_name(name: str) -> bool:
    """Whether a file name as the OS gives it (bytes that are not UTF-8 come
    as lone surrogates) is UTF-8 text, so it can be part of a locator."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# open for reading without blocking: a FIFO with no writer (or a device) would
# otherwise hold open() or read() forever; O_NONBLOCK changes nothing for a
# regular file
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)


def file_kind(mode: int) -> str:
    """What a ``st_mode`` that is not a regular file names, in words."""
    for test, what in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def read_regular(path: Path, cap: int) -> bytes:
    """The bytes of the regular file at ``path``, refused past ``cap`` bytes.

    The file is opened without blocking and checked with ``fstat`` before a
    byte is read: anything but a regular file (a FIFO, a socket, a device, or
    a file swapped for one since the walk) raises ``path_not_found`` (the only
    :class:`~memnet.errors.PathNotFound` it raises), and
    a file larger than ``cap`` raises :class:`~memnet.errors.InputTooLarge`
    (``length``, ``cap``) without being read. At most ``cap + 1`` bytes are
    ever read, so a file that grows past the cap meanwhile is refused the same
    way. What the OS refuses (missing, no permission) is its ``OSError``.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        st = os.fstat(f.fileno())
        mode, size = st.st_mode, st.st_size
        if not stat.S_ISREG(mode):
            raise PathNotFound(f"not a regular file ({file_kind(mode)})", path=os.fspath(path))
        if size > cap:
            raise InputTooLarge(f"the file is {size} bytes; the cap is {cap}", length=size, cap=cap)
        data = f.read(size + 1)  # read(n) sets n bytes aside first: n is the size
        if len(data) > size:  # it grew since the fstat, or its size says nothing (/proc)
            parts, total = [data], len(data)
            while total <= cap and (more := f.read(min(cap + 1 - total, 1 << 16))):
                parts.append(more)
                total += len(more)
            data = b"".join(parts)
        if len(data) > cap:  # refused all the same
            size = max(os.fstat(f.fileno()).st_size, len(data))
            raise InputTooLarge(f"the file is {size} bytes; the cap is {cap}", length=size, cap=cap)
    return data


def _shown(path: str) -> str:
    return repr(path if len(path) <= 200 else path[:200] + "…")


def path_kind(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """``(path, kind)`` with kind ``dir``, ``file`` or ``other``; a path that
    names nothing (empty, missing, unreadable, too long, holding a NUL) is a
    ``path_not_found`` error, never the working directory or an ``OSError``."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise PathNotFound(f"a path is text, not {type(path).__name__}", path=str(path)[:200])
    where = os.fsdecode(path)
    if not where:
        raise PathNotFound("the path is empty (write . for the working directory)", path=where)
    p = Path(where)
    try:
        mode = p.stat().st_mode
    except (OSError, ValueError) as e:
        why = (e.strerror if isinstance(e, OSError) else None) or str(e)
        raise PathNotFound(
            f"no such file or directory: {_shown(where)} ({why})", path=where[:200]
        ) from None
    return p, "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def walk(top: Path, kinds: Mapping[str, T]) -> tuple[list[tuple[str, T]], list[Warning_]]:
    """The files below ``top`` whose suffix is a key of ``kinds`` (relative
    posix paths with their ``kinds`` value, sorted depth-first), walked with
    the rules of ingest (see :mod:`memnet.ingest.source`), and warnings for
    the directories that could not be read and the entries with a handled
    suffix that are not regular files (FIFOs, sockets, devices: never opened)."""
    warn: list[Warning_] = []
    return walk_tree(top, kinds, warn, top.name)[1], warn


def dir_arg(path: object, what: str) -> str:
    """A directory argument as text: ``path_not_found`` for one of another
    type, empty (``Path("")`` would be the working directory) or holding a NUL."""
    if not isinstance(path, (str, os.PathLike)) or type(os.fspath(path)) is not str:
        raise PathNotFound(
            f"the {what} directory is a path, not {type(path).__name__}", path=str(path)[:200]
        )
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise PathNotFound(
            f"the {what} directory {text!r} is not a usable path (empty, or holding a NUL)",
            path=text[:200],
        )
    return text


def tree_root(path: str | os.PathLike[str]) -> Path:
    """``path`` resolved, or a ``path_not_found`` error when it is not a
    directory whose name is UTF-8 text (the name is the root of every locator)."""
    p, kind = path_kind(path)
    if kind != "dir":
        raise PathNotFound(f"{_shown(str(p))} is not a directory", path=str(p)[:200])
    top = p.resolve()
    if not text_name(top.name):
        raise PathNotFound(
            f"the directory name {os.fsencode(top.name)!r} is not UTF-8, so it "
            "cannot be the root of a locator; rename it",
            path=os.fsencode(top.name).decode("ascii", "backslashreplace"),
        )
    return top


__all__ = [
    "SKIP_DIRS",
    "dir_arg",
    "file_kind",
    "path_kind",
    "read_regular",
    "text_name",
    "tree_root",
    "walk",
    "walk_tree",
]
