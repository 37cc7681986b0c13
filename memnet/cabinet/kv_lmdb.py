"""LMDB backend: one environment in a directory, a few fixed named databases.

* The map starts small and grows by itself (doubling) up to ``max_size``;
  past it a write fails with :class:`~memnet.errors.CabinetFull` and nothing
  is written, so raising the cap and retrying succeeds.
* A full disk or a file size limit (ENOSPC, EFBIG, EDQUOT) becomes
  :class:`~memnet.errors.DiskFull`, again with nothing written: LMDB only makes
  a transaction visible by its final meta-page write.
* Stale reader slots left by killed processes are cleared on open.
* An environment opened before ``fork()`` is refused in the child
  (:class:`~memnet.errors.CabinetForked`): LMDB handles must not cross a fork.
* The data file is checked with plain reads before LMDB maps it
  (:mod:`memnet.cabinet.lmdb_file`), so a truncated file, a lost table or a
  page past the end is :class:`~memnet.errors.CabinetCorrupt`, not a SIGBUS or
  an empty cabinet; the lock file's blocks are reserved before LMDB maps it,
  so a full disk is :class:`~memnet.errors.DiskFull` at open, not a SIGBUS.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import lmdb

from ..errors import (
    BackupTargetExists,
    CabinetCorrupt,
    CabinetError,
    CabinetForked,
    CabinetFull,
    DiskFull,
    os_error,
)
from .kv import KV, Txn
from .lmdb_file import check_data_file

T = TypeVar("T")

DEFAULT_MAX_SIZE = 64 * 1024**3  # 64 GiB of address space, not of disk
INITIAL_SIZE = 64 * 1024**2
LOCK_BYTES = 32 * 1024  # a new lock file: room for LMDB's table of 256 readers
_DISK_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
_DISK_TEXTS = tuple(os.strerror(e) for e in _DISK_ERRNOS)
_open_envs: weakref.WeakSet[LmdbKV] = weakref.WeakSet()
# LMDB allows one environment per file per process: cabinets opened twice on
# the same directory share one environment (counted), see LmdbKV.acquire.
_shared: dict[str, LmdbKV] = {}
_shared_lock = threading.Lock()


def _after_fork_in_child() -> None:
    for kv in list(_open_envs):
        kv._forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def _near_disk_limit(path: str) -> bool:
    """Whether a failed write is explained by a full disk or a file size limit
    (LMDB reports a short write as EIO, which says nothing by itself)."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        data = os.path.join(path, "data.mdb")
        if soft != resource.RLIM_INFINITY and os.path.getsize(data) + (1 << 20) >= soft:
            return True
    except (ImportError, OSError, ValueError):
        pass
    try:
        st = os.statvfs(path)
        return st.f_bavail * st.f_frsize < (16 << 20)
    except OSError:
        return False


class _LmdbTxn(Txn):
    def __init__(self, txn: lmdb.Transaction[bytes], dbs: dict[str, Any]) -> None:
        self.txn = txn
        self.dbs = dbs

    def get(self, table: str, key: bytes) -> bytes | None:
        v = self.txn.get(key, db=self.dbs[table])
        return None if v is None else bytes(v)

    def scan(self, table: str, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        cur = self.txn.cursor(db=self.dbs[table])
        if not cur.set_range(prefix):
            return
        last = b""
        for k, v in cur:
            if k <= last:  # a damaged key would hide records from the scans that miss it
                raise CabinetCorrupt(f"table {table} holds keys out of order at {k!r}")
            if not k.startswith(prefix):
                break
            last = k
            yield k, v

    def values(
        self,
        table: str,
        prefix: bytes,
        count: int,
        start: bytes | None = None,
    ) -> Iterator[bytes]:
        if count <= 0:
            return
        cur = self.txn.cursor(db=self.dbs[table])
        if not cur.set_range(prefix if start is None or start < prefix else start):
            return
        n = 0
        for v in cur.iternext(keys=False, values=True):
            yield v
            n += 1
            if n >= count:
                break

    def count(self, table: str) -> int | None:
        return int(self.txn.stat(self.dbs[table])["entries"])

    def sids(self, table: str) -> Iterator[str]:
        cur = self.txn.cursor(db=self.dbs[table])
        at = b""
        while cur.set_range(at):
            sid = cur.key().split(b"\x00", 1)[0]
            yield sid.decode("ascii", "replace")
            at = sid + b"\x01"  # past every key of that session (sid 0x00 ...)

    def put(self, table: str, key: bytes, value: bytes) -> None:
        self.txn.put(key, value, db=self.dbs[table])

    def delete(self, table: str, key: bytes) -> bool:
        return bool(self.txn.delete(key, db=self.dbs[table]))


def _damage(e: lmdb.Error, note: str) -> CabinetError:
    """The error for a failure LMDB reports: a page of the wrong kind, or one
    it cannot find, is damage; anything else is ``cabinet_io``."""
    if isinstance(e, (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError)):
        return CabinetCorrupt(f"LMDB reports a damaged data file: {e}{note}")
    return CabinetError(f"LMDB error: {e}{note}", code="cabinet_io")


def _make_dir(path: str) -> bool:
    """Create the cabinet directory if needed; whether it was created."""
    if os.path.isdir(path):
        return False
    try:
        os.makedirs(path)
    except FileExistsError:
        if os.path.isdir(path):
            return False
        raise CabinetError(
            f"cannot open the cabinet at {path}: it is a file", code="cabinet_io"
        ) from None
    except OSError as e:
        if _disk_error(e, None):
            raise DiskFull(f"cannot create the cabinet at {path}: {e}") from None
        raise CabinetError(f"cannot create the cabinet at {path}: {e}", code="cabinet_io") from None
    return True


def _reserve_lock(path: str) -> None:
    """Make sure the lock file's blocks exist before LMDB maps it: LMDB sizes
    a new lock file by truncation, which reserves nothing, and its first write
    through the map on a full disk is a SIGBUS. An existing lock file keeps
    its size (other processes map it); a new one gets LOCK_BYTES."""
    lock = os.path.join(path, "lock.mdb")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        if _disk_error(e, None):
            raise DiskFull(f"cannot create the lock file of the cabinet at {path}: {e}") from None
        return  # a read-only directory: LMDB reports what it cannot do
    try:
        size = os.fstat(fd).st_size
        os.posix_fallocate(fd, 0, size or LOCK_BYTES)
    except OSError as e:
        if _disk_error(e, None):
            raise DiskFull(f"no room for the lock file of the cabinet at {path}: {e}") from None
        # a file system without fallocate: LMDB sizes the file itself
    finally:
        os.close(fd)


def _open_env(path: str, data: str, n_tables: int, max_size: int, sync: bool) -> lmdb.Environment:
    """The LMDB environment at ``path``, its lock file given its blocks first,
    its map as large as the data file (at least INITIAL_SIZE, at most
    ``max_size`` unless the file is larger)."""
    _reserve_lock(path)
    have = os.path.getsize(data) if os.path.exists(data) else 0
    size = min(max(INITIAL_SIZE, have), max(max_size, have))
    # as bytes: py-lmdb encodes a str path as UTF-8, which a path that
    # is not (a surrogate-escaped byte) cannot be
    return lmdb.open(
        os.fsencode(path),
        map_size=size,
        max_dbs=n_tables + 2,
        subdir=True,
        sync=sync,
        metasync=sync,
        readahead=False,
        max_readers=256,
        lock=True,
    )


def _data_size(data: str) -> int:
    try:
        return os.stat(data).st_size
    except FileNotFoundError:
        return 0


def _lost_data(path: str, data: str, wait: float = 0.5) -> str | None:
    """What is wrong when the directory of a cabinet holds the traces of one
    (its lock file, or an empty data file) but no data: LMDB would take it
    for a new cabinet and the sessions would seem never to have been. None
    when the data file holds something, or when neither file is there (a new
    cabinet). A lock file is made just before the data file and LMDB writes
    the data file's first pages as it makes it, so another process creating
    this cabinet right now is waited for (``wait`` seconds)."""
    if _data_size(data):
        return None
    lock = os.path.exists(os.path.join(path, "lock.mdb"))
    if not lock and not os.path.exists(data):
        return None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.01)
        if _data_size(data):
            return None
    state = "empty" if os.path.exists(data) else "missing"
    return f"data.mdb is {state}" + (
        " beside the lock file of a cabinet that was opened before" if lock else ""
    )


def _remove_new(path: str, made_dir: bool) -> None:
    """Undo a cabinet creation that failed (nothing half-made is left)."""
    for name in ("data.mdb", "lock.mdb"):
        try:
            os.unlink(os.path.join(path, name))
        except OSError:
            pass
    if made_dir:
        try:
            os.rmdir(path)
        except OSError:
            pass


def _disk_error(e: BaseException, path: str | None = None) -> bool:
    if isinstance(e, OSError) and e.errno in _DISK_ERRNOS:
        return True
    text = str(e)
    if any(t in text for t in _DISK_TEXTS):
        return True
    return path is not None and os.strerror(errno.EIO) in text and _near_disk_limit(path)


def backup_dir(dest: str) -> bool:
    """Make the backup directory ``dest`` if needed (whether it was made); one
    that already holds a ``data.mdb`` is ``backup_target_exists``."""
    made = not os.path.isdir(dest)
    try:
        os.makedirs(dest, exist_ok=True)
    except OSError as e:
        if _disk_error(e):
            raise DiskFull(f"cannot make the backup directory {dest}: {e}") from None
        raise os_error(e) from None
    if os.path.exists(os.path.join(dest, "data.mdb")):
        raise BackupTargetExists(f"backup destination {dest} already holds a cabinet")
    return made


def remove_backup(dest: str, made: bool, names: tuple[str, ...] = ("data.mdb",)) -> None:
    """Remove what a failed backup wrote into ``dest``: the files ``names``
    (none of them was there before) and the directory, when it made it."""
    for name in names:
        try:
            os.unlink(os.path.join(dest, name))
        except OSError:
            pass
    if made:
        try:
            os.rmdir(dest)
        except OSError:
            pass


class LmdbKV(KV):
    """An LMDB environment holding the cabinet's named tables."""

    name = "lmdb"

    @classmethod
    def acquire(
        cls,
        path: str,
        tables: tuple[str, ...],
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        sync: bool = True,
        start_over: bool = False,
    ) -> LmdbKV:
        """The environment for ``path``: shared with an earlier open in this
        process (LMDB forbids two), or new. In a child process after fork() an
        inherited environment is closed and replaced, never used."""
        real = os.path.realpath(path)
        with _shared_lock:
            kv = _shared.get(real)
            if kv is not None and (kv._forked or os.getpid() != kv._pid):
                kv._forked = True
                try:  # the child's copy of the parent's handle: drop it unused
                    kv.env.close()
                except lmdb.Error:  # pragma: no cover - py-lmdb refuses in some builds
                    pass
                del _shared[real]
                kv = None
            if kv is not None and not kv._closed:
                kv._refs += 1
                kv.max_size = max(kv.max_size, int(max_size))
                return kv
            kv = cls(real, tables, max_size=max_size, sync=sync, start_over=start_over)
            _shared[real] = kv
            return kv

    def __init__(
        self,
        path: str,
        tables: tuple[str, ...],
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        sync: bool = True,
        start_over: bool = False,
    ) -> None:
        self._refs = 1
        self.path = path
        self.max_size = int(max_size)
        self._pid = os.getpid()
        self._forked = False
        self._closed = False
        self._wlock = threading.Lock()
        data = os.path.join(path, "data.mdb")
        made = _make_dir(path)
        lost = None if made else _lost_data(path, data)
        if lost is not None:
            if not start_over:
                raise CabinetCorrupt(
                    f"the cabinet at {path} has lost its data file: {lost}. Restore it from a "
                    "backup; to start a new, empty cabinet here instead, delete data.mdb and "
                    "lock.mdb (or open it with start_over=True)",
                    path=path,
                )
            _remove_new(path, False)
        # the meta pages alone before LMDB maps a byte of the file; the rest
        # once a read transaction keeps the pages checked from being reused
        new = check_data_file(data, tables, tree=False) is None
        try:
            self.env = _open_env(path, data, len(tables), self.max_size, sync)
        except lmdb.Error as e:
            if new:
                _remove_new(path, made)
            if _disk_error(e, path):
                raise DiskFull(f"cannot open the cabinet at {path}: {e}") from None
            if isinstance(e, (lmdb.CorruptedError, lmdb.InvalidError, lmdb.VersionMismatchError)):
                raise CabinetCorrupt(f"cannot open the cabinet at {path}: {e}") from None
            raise CabinetError(
                f"cannot open the cabinet at {path}: {e}", code="cabinet_io"
            ) from None
        except BaseException:
            if new:
                _remove_new(path, made)
            raise
        if not new:
            try:
                self._check_pinned(data, tables)
            except BaseException:
                self.env.close()
                raise
        self.env.reader_check()  # clear slots of readers that died
        self.dbs: dict[str, Any] = {}

        def open_tables(txn: Txn) -> None:
            assert isinstance(txn, _LmdbTxn)
            for t in tables:  # an existing cabinet has them all (checked above)
                self.dbs[t] = self.env.open_db(t.encode(), txn=txn.txn, create=True)

        try:
            self.run_write(open_tables, check=False)
        except BaseException:
            self.env.close()
            if new:
                _remove_new(path, made)
            raise
        _open_envs.add(self)

    def _check_pinned(self, data: str, tables: tuple[str, ...]) -> None:
        """Check the data file whole (:func:`~memnet.cabinet.lmdb_file.check_data_file`)
        while a read transaction of this process is open: LMDB writes over no
        page of the tree that transaction sees, nor of any later one, until it
        ends, so another process committing meanwhile cannot make the check
        read pages in the middle of being reused (a false ``cabinet_corrupt``).
        Beginning it reads the meta pages alone, which were checked before."""
        try:
            txn = self.env.begin(write=False)
        except lmdb.MapResizedError:
            self.env.set_mapsize(0)
            txn = self.env.begin(write=False)
        try:
            check_data_file(data, tables)
        finally:
            txn.abort()

    # -- guards ---------------------------------------------------------------
    def check(self) -> None:
        if self._forked or os.getpid() != self._pid:
            self._forked = True
            raise CabinetForked(
                "this cabinet was opened before fork(); open it again in the child process "
                "(LMDB handles must not cross a fork)"
            )
        if self._closed:
            raise CabinetError("the cabinet is closed", code="cabinet_closed")

    # -- transactions ---------------------------------------------------------
    @contextmanager
    def read(self) -> Iterator[Txn]:
        self.check()
        try:
            txn = self.env.begin(write=False, buffers=False)
        except lmdb.MapResizedError:
            self.env.set_mapsize(0)  # another process grew the map: adopt its size
            txn = self.env.begin(write=False, buffers=False)
        try:
            yield _LmdbTxn(txn, self.dbs)
        except lmdb.Error as e:
            raise _damage(e, "") from None
        finally:
            txn.abort()

    def release_pages(self) -> None:
        """Tell the kernel (Linux ``madvise(MADV_DONTNEED)``) that this process
        no longer needs the pages of ``data.mdb`` it has mapped: LMDB reads
        through a shared, read-only map of the file (no ``writemap``), so the
        pages stay in the page cache, shared and reclaimable, and a later read
        faults them back unchanged; the process's resident memory stops
        counting a copy of the file next to the session it was hydrated into.
        Anything that fails leaves the map as it was."""
        if not sys.platform.startswith("linux"):
            return
        data = os.path.realpath(os.path.join(self.path, "data.mdb"))
        try:
            import ctypes

            with open("/proc/self/maps") as f:
                spans = [
                    tuple(int(x, 16) for x in line.split(None, 1)[0].split("-"))
                    for line in f
                    if line.rstrip("\n").endswith(" " + data)
                ]
            madvise = ctypes.CDLL(None, use_errno=True).madvise
            madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
            for lo, hi in spans:
                madvise(lo, hi - lo, 4)  # MADV_DONTNEED
        except (OSError, AttributeError, ValueError):
            pass

    def _grow(self) -> None:
        cur = self.env.info()["map_size"]
        if cur >= self.max_size:
            raise CabinetFull(
                f"the cabinet at {self.path} reached its size cap of {self.max_size} bytes; "
                "nothing was written. Raise max_size (MEMNET_MAX_SIZE) and retry",
                map_size=cur,
                max_size=self.max_size,
            )
        self.env.set_mapsize(min(self.max_size, cur * 2))

    def run_write(self, fn: Callable[[Txn], T], *, check: bool = True) -> T:
        if check:
            self.check()
        with self._wlock:
            while True:
                try:
                    txn = self.env.begin(write=True)
                except lmdb.MapResizedError:
                    self.env.set_mapsize(0)
                    continue
                try:
                    out = fn(_LmdbTxn(txn, self.dbs))
                    txn.commit()
                    return out
                except lmdb.MapFullError:
                    txn.abort()
                    self._grow()
                except lmdb.Error as e:
                    txn.abort()
                    if _disk_error(e, self.path):
                        raise DiskFull(
                            f"the disk refused the write: {e}; nothing was written", path=self.path
                        ) from None
                    raise _damage(e, "; nothing was written") from None
                except OSError as e:
                    txn.abort()
                    if _disk_error(e, self.path):
                        raise DiskFull(
                            f"the disk refused the write: {e}; nothing was written", path=self.path
                        ) from None
                    raise
                except BaseException:
                    txn.abort()
                    raise

    def backup(self, dest: str) -> None:
        """A compacted copy of the environment into the directory ``dest`` (made
        if needed). A copy that fails leaves neither its partial ``data.mdb``
        nor a directory it made, so it can simply be run again."""
        self.check()
        made = backup_dir(dest)
        try:
            # bytes, like the path of lmdb.open (py-lmdb takes them; its stubs say str)
            self.env.copy(os.fsencode(dest), compact=True)  # type: ignore[arg-type]
        except lmdb.Error as e:
            if "File exists" in str(e):  # another copy got there first: not ours to remove
                raise BackupTargetExists(
                    f"backup destination {dest} already holds a cabinet"
                ) from None
            remove_backup(dest, made)
            if _disk_error(e, dest):
                raise DiskFull(f"backup to {dest} failed: {e}; nothing was kept") from None
            raise CabinetError(
                f"backup to {dest} failed: {e}; nothing was kept", code="cabinet_io"
            ) from None
        except BaseException:
            remove_backup(dest, made)
            raise

    def check_file(self) -> list[str]:
        """Structural problems of the data file found by py-lmdb's offline
        verifier (an empty list when it is sound)."""
        self.check()
        from lmdb.verify import verify

        # py-lmdb's verifier is unannotated: it returns a list of problem strings
        check: Callable[[str], list[str]] = verify
        return list(check(self.path))

    def info(self) -> dict[str, Any]:
        self.check()
        i = self.env.info()
        return {
            "backend": self.name,
            "path": self.path,
            "map_size": i["map_size"],
            "max_size": self.max_size,
            "lmdb": ".".join(map(str, lmdb.version())),
            "readers": i["num_readers"],
        }

    def close(self) -> None:
        if self._closed:
            return
        with _shared_lock:
            self._refs -= 1
            if self._refs > 0:
                return
            if _shared.get(self.path) is self:
                del _shared[self.path]
        self._closed = True
        if not self._forked and os.getpid() == self._pid:
            self.env.close()
        _open_envs.discard(self)


__all__ = ["DEFAULT_MAX_SIZE", "LmdbKV"]
