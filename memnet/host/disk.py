"""The host index's directory on disk: its files and lock, its header, and
the errors reading and writing them turn into (``index_not_found``,
``index_corrupt``, ``disk_full``, ``io``, ``index_busy``). The index itself
(:mod:`.index`) is the search library's files beside these."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import (
    DiskFull,
    IndexBusy,
    IndexCorrupt,
    IndexNotFound,
    IOFailure,
    MemNetError,
    PathNotFound,
)
from ..ingest.walk import dir_arg

#: Version of the directory's layout and schema; another one is refused.
FORMAT = 1
META = "memnet-host.json"  # format, root, counts
MANIFEST = "memnet-host-files.json"  # rel path -> [size, mtime_ns, sha256 prefix]
LOCK = ".memnet-host.lock"


def not_found(where: Path) -> MemNetError:
    return IndexNotFound(
        f"no host index at {os.fspath(where)!r}: build one with "
        f"memnet host index PATH --index {os.fspath(where)}",
        index=os.fspath(where),
    )


def corrupt(where: Path, why: object) -> MemNetError:
    if not (where / MANIFEST).exists():  # not an index at all: never advise deleting it
        return IndexCorrupt(
            f"{os.fspath(where)!r} is not a host index ({why}); nothing in it was changed",
            index=os.fspath(where),
        )
    return IndexCorrupt(
        f"the host index at {os.fspath(where)!r} cannot be read ({why}); "
        "delete that index directory and index again",
        index=os.fspath(where),
    )


_DISK_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
_OS_ERRNO = re.compile(r"os error (\d+)")


@contextlib.contextmanager
def writing(where: Path) -> Iterator[None]:
    """Turn a write the OS refused into ``disk_full`` (no room, a file size
    limit, a quota) or ``io``, naming the index; the search library reports
    its I/O failures as ``ValueError`` ("An IO error occurred: ... (os error
    28)")."""
    try:
        yield
    except MemNetError:
        raise
    except OSError as e:
        if e.errno in _DISK_ERRNOS:
            raise disk_full(where, e.strerror or str(e)) from None
        raise IOFailure(
            f"writing the host index at {os.fspath(where)!r} failed: {e.strerror or e}",
            index=os.fspath(where),
        ) from None
    except ValueError as e:
        text = str(e)
        if "IO error" not in text and _OS_ERRNO.search(text) is None:
            raise
        found = _OS_ERRNO.search(text)
        if found is not None and int(found.group(1)) in _DISK_ERRNOS:
            raise disk_full(where, os.strerror(int(found.group(1)))) from None
        raise IOFailure(
            f"writing the host index at {os.fspath(where)!r} failed: {text.splitlines()[0][:200]}",
            index=os.fspath(where),
        ) from None


def disk_full(where: Path, why: str) -> MemNetError:
    return DiskFull(
        f"no room to write the host index at {os.fspath(where)!r} ({why}); it was left as it was",
        index=os.fspath(where),
    )


@contextlib.contextmanager
def reading(where: Path) -> Iterator[None]:
    """Turn a failure of the search library on stored files into ``index_corrupt``."""
    try:
        yield
    except MemNetError:
        raise
    except (ValueError, OSError) as e:
        raise corrupt(where, str(e).splitlines()[0][:200] if str(e) else type(e).__name__) from None
    except BaseException as e:  # a panic in the Rust library (pyo3 PanicException)
        if type(e).__name__ != "PanicException":
            raise
        raise corrupt(where, "the search library failed on it") from None


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        # a path that is not UTF-8 keeps its bytes (as surrogates in Python)
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # no half-written file left beside the index
        raise


def read_json(path: Path, where: Path) -> Any:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return json.load(f)
    except FileNotFoundError:
        raise corrupt(where, f"{path.name} is missing") from None
    except (OSError, ValueError) as e:
        raise corrupt(where, f"{path.name}: {e}") from None
    except RecursionError:
        raise corrupt(where, f"{path.name} nests lists or maps too deeply") from None


@contextlib.contextmanager
def locked(where: Path) -> Iterator[None]:
    """Hold the index directory's lock file, or raise ``index_busy``. (Where
    ``fcntl`` is missing, only tantivy's own writer lock keeps writers apart.)"""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        yield
        return
    fd = os.open(where / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexBusy(
                f"another process is updating the host index at "
                f"{os.fspath(where)!r}; try again when it is done",
                index=os.fspath(where),
            ) from None
        yield
    finally:
        os.close(fd)


def check_dir(where: Path) -> bool:
    """True when ``where`` holds an index; False when it is free for one (absent
    or empty); ``index_corrupt`` when it holds something else, ``path_not_found``
    when it cannot be a directory (a name too long)."""
    try:
        if (where / META).is_file():
            return True
        there = where.exists()
    except OSError as e:
        raise PathNotFound(
            f"{os.fspath(where)[:200]!r} cannot be an index directory ({e.strerror or e})",
            index=os.fspath(where)[:200],
        ) from None
    if there:
        if not where.is_dir():
            raise PathNotFound(
                f"{os.fspath(where)!r} is a file, not an index directory", index=os.fspath(where)
            )
        if any(where.iterdir()):
            raise corrupt(
                where, f"it holds other files and no {META}; give an empty or new directory"
            )
    return False


def header(where: Path) -> dict[str, Any]:
    meta = read_json(where / META, where)
    if (
        not isinstance(meta, dict)
        or meta.get("format") != FORMAT
        or not isinstance(meta.get("root"), str)
        or not isinstance(meta.get("name"), str)
    ):
        raise corrupt(where, f"{META} is not a format-{FORMAT} header")
    return meta


INDEX_DIR_NAME = "host-index"


def default_index_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """``host-index`` in the MemNet home (``home``, else ``$MEMNET_HOME``,
    else ``./.memnet``)."""
    base = dir_arg(home, "home") if home is not None else os.environ.get("MEMNET_HOME") or ".memnet"
    return Path(base) / INDEX_DIR_NAME
