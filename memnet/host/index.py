"""The default Host Snap retriever: a BM25 index of one tree, on tantivy.

An index lives in a directory of its own (``--index DIR``; by default
``host-index`` in the MemNet home, ``$MEMNET_HOME`` or ``./.memnet``) and
covers one *root*: the directory it was first built from. It holds a search
document per unit of every file below the root that ingest knows (see
:mod:`memnet.host.units`), and a manifest of those files.

Building and refreshing (:func:`index_tree`)
--------------------------------------------
``index_tree(PATH, DIR)`` builds the index of PATH, or refreshes the part of
it below PATH when DIR already indexes a root that holds PATH (PATH outside
the root is a ``path_outside_root`` error). The walk follows ingest's rules
(hidden entries, ``__pycache__``, ``node_modules``, ``*.egg-info`` and
symbolic links are skipped). A file whose size and modification time match
the manifest is not read; one whose bytes hash as before is not parsed; the
others are parsed and their documents replace the old ones; files gone from
the tree lose their documents. A SysML model is one unit across files
(qualified names span them), so a change to any ``.sysml`` file re-reads all
of them. An unchanged tree costs one walk and a ``stat`` per file and writes
nothing.

Everything one refresh changes becomes visible at once, in one tantivy commit,
or not at all; the manifest is written after that commit, so a refresh that
dies between the two leaves a manifest that is behind, never ahead: the next
refresh redoes the files it names as changed (replacing, never duplicating,
their documents). One refresh at a time holds the directory's lock file; a
second gets ``index_busy``.

Searching (:meth:`HostIndex.search`)
------------------------------------
The words of ``q`` (runs of letters and digits, lower-cased, at most
:data:`MAX_WORDS`) are OR-ed over four fields with BM25: a unit's ``name``
(symbol name, heading, dotted module name), ``title``, ``body`` (docstring,
signature, section text) and, at 0.3 of their weight, ``path``. Hits come best
first; equal scores are ordered by locator, so the same index and ``q`` give
the same list.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import (
    DependencyMissing,
    IndexBusy,
    InputTooLarge,
    InvalidArgument,
    PathNotFound,
    PathOutsideRoot,
    QueryError,
)
from ..ingest.model import Warning_
from ..ingest.walk import dir_arg, read_regular, tree_root, walk
from ..values import has_lone_surrogate
from . import disk
from .disk import (
    FORMAT,
    LOCK,
    MANIFEST,
    META,
    check_dir,
    corrupt,
    default_index_dir,
    header,
    locked,
    not_found,
    read_json,
    reading,
    writing,
)
from .hook import Hit
from .units import READERS, SCHEMES, Doc, sysml_docs

MISSING_EXTRA = "the host index needs the extra: pip install 'memnet[host]'"
#: Fields searched and their BM25 boosts.
BOOSTS = {"name": 1.0, "title": 1.0, "body": 1.0, "path": 0.3}
MAX_WORDS = 64
MAX_QUERY = 4096
MAX_TOP = 100
#: Files larger than this are listed in the manifest (and hashed) but not indexed.
MAX_FILE = 16 * 1024 * 1024
WRITER_HEAP = 64_000_000
_WORD = re.compile(r"[^\W_]+")

Progress = Callable[[int, int], None]


def _tantivy() -> Any:
    try:
        import tantivy
    except ImportError:
        raise DependencyMissing(MISSING_EXTRA) from None
    return tantivy


def query_words(q: object) -> list[str]:
    """The search words of ``q``, or ``bad_query`` when it has none."""
    if not isinstance(q, str):
        raise QueryError(f"a search query is text, not {type(q).__name__}")
    if len(q) > MAX_QUERY:
        raise QueryError(f"a search query is at most {MAX_QUERY} characters, got {len(q)}")
    if has_lone_surrogate(q):
        raise QueryError(
            "a search query holds a lone surrogate (not valid Unicode: bytes that are not UTF-8?)"
        )
    words = [w.lower() for w in _WORD.findall(q)][:MAX_WORDS]
    if not words:
        raise QueryError(
            "empty search query: give some words to search for"
            if not q.strip()
            else f"no words to search for in {q!r}"
        )
    return words


def check_top(top: object) -> int:
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise QueryError(f"top must be an integer from 1 to {MAX_TOP}, got {top!r}")
    return top


def _schema(tantivy: Any) -> Any:
    """The fields; the searched ones keep term frequencies but no positions (no
    phrase queries are made), which keeps the index a third smaller."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("locator", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("unit", tokenizer_name="raw", index_option="basic")  # replace a file
    sb.add_text_field("scheme", tokenizer_name="raw", index_option="basic")  # a whole model
    sb.add_text_field("kind", stored=True, tokenizer_name="raw", index_option="basic")
    for name in BOOSTS:
        sb.add_text_field(name, stored=name in ("title", "path"), index_option="freq")
    sb.add_integer_field("line", stored=True)
    return sb.build()


@dataclass(frozen=True, slots=True)
class IndexResult:
    """What :func:`index_tree` did.

    ``files`` counts the files seen below the path, ``parsed`` those read and
    indexed afresh, ``removed`` those gone since the last run; ``docs`` is the
    number of documents in the index afterwards. ``changed`` tells whether a
    commit was made (False: nothing was written to the search index).
    """

    index: str
    root: str
    files: int
    parsed: int
    removed: int
    docs: int
    changed: bool
    created: bool = False
    warnings: tuple[Warning_, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "root": self.root,
            "files": self.files,
            "parsed": self.parsed,
            "removed": self.removed,
            "docs": self.docs,
            "changed": self.changed,
            "created": self.created,
            "warnings": [str(w) for w in self.warnings],
        }

    def summary(self) -> str:
        head = "built" if self.created else ("updated" if self.changed else "unchanged")
        line = (
            f"{head}: {self.parsed}/{self.files} files parsed, {self.removed} removed, "
            f"{self.docs} documents"
        )
        return line + (f", {len(self.warnings)} warning(s)" if self.warnings else "")


class HostIndex:
    """A BM25 index of one tree: the default :class:`~memnet.host.hook.RagHostHook`.

    Open one with :meth:`open` (``index_not_found``, ``index_corrupt``,
    ``dependency_missing`` when tantivy is not installed); build or refresh
    one with :func:`index_tree`.
    """

    def __init__(self, path: Path, meta: dict[str, Any], index: Any) -> None:
        self.path = path
        self.meta = meta
        self._ix = index
        self._stamp = self._header_stamp()

    def _header_stamp(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path / META)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns

    def _searcher(self) -> Any:
        """A searcher of the latest commit: a refresh (or a rebuild) rewrites the
        header after its commit, so the index is reloaded only when the header
        changed."""
        stamp = self._header_stamp()
        if stamp != self._stamp:
            if stamp is None:
                raise not_found(self.path)
            self.meta = header(self.path)
            self._ix.reload()
            self._stamp = stamp
        return self._ix.searcher()

    @property
    def root(self) -> Path:
        """The directory this index covers."""
        return Path(self.meta["root"])

    @property
    def name(self) -> str:
        """The root's name: the ``<root>`` of every locator."""
        return str(self.meta["name"])

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> HostIndex:
        where = Path(path)
        try:
            present = (where / META).is_file()
        except (OSError, ValueError):  # a name too long, a NUL: nothing is there
            present = False
        if not present:
            raise not_found(where)
        meta = header(where)
        tantivy = _tantivy()
        with reading(where):
            ix = tantivy.Index.open(os.fspath(where))
            # reloaded by hand when the header changes (see _searcher): no
            # reload from the library's watcher, which could run while the
            # directory is being removed and put a lock file back in it
            ix.config_reader(reload_policy="Manual")
            ix.searcher()  # opens every segment: a damaged one fails here
        return cls(where, meta, ix)

    # -- searching -----------------------------------------------------------------
    def search(self, q: str, top: int = 10) -> list[Hit]:
        """The ``top`` best hits for ``q``, best first (see the module doc)."""
        words = query_words(q)
        check_top(top)
        with reading(self.path):
            searcher = self._searcher()
            query = self._ix.parse_query(" ".join(words), list(BOOSTS), field_boosts=BOOSTS)
            found = []
            for score, address in searcher.search(query, top).hits:
                d = searcher.doc(address)
                found.append(
                    Hit(
                        d.get_first("locator"),
                        d.get_first("title") or "",
                        float(score),
                        d.get_first("kind") or "DOC",
                        d.get_first("path") or "",
                        int(d.get_first("line") or 0),
                    )
                )
        found.sort(key=lambda h: (-h.score, h.locator))
        return found

    def __len__(self) -> int:
        with reading(self.path):
            return int(self._searcher().num_docs)

    def __repr__(self) -> str:
        return f"HostIndex({os.fspath(self.path)!r}, root={self.meta['root']!r})"


# -- building ---------------------------------------------------------------------------
def _document(tantivy: Any, d: Doc, scheme: str) -> Any:
    return tantivy.Document(
        locator=d.locator,
        unit=d.unit,
        scheme=scheme,
        kind=d.kind,
        title=d.title,
        name=d.name,
        body=d.body,
        path=d.path,
        line=d.line,
    )


class _Writer:
    """The tantivy writer, taken on the first change only. In a ``fresh`` index
    there is nothing to replace, so nothing is deleted first."""

    def __init__(self, tantivy: Any, ix: Any, where: Path, fresh: bool) -> None:
        self.tantivy, self.ix, self.where, self.fresh = tantivy, ix, where, fresh
        self.w: Any = None

    def get(self) -> Any:
        if self.w is None:
            try:
                self.w = self.ix.writer(heap_size=WRITER_HEAP, num_threads=1)
            except ValueError as e:
                if "LockBusy" in str(e):
                    raise IndexBusy(
                        f"the host index at {os.fspath(self.where)!r} is held by another writer",
                        index=os.fspath(self.where),
                    ) from None
                raise
        return self.w

    def replace(self, term: tuple[str, str], docs: list[Doc], scheme: str) -> None:
        w = self.get()
        if not self.fresh:
            w.delete_documents_by_term(*term)
        for d in docs:
            w.add_document(_document(self.tantivy, d, scheme))

    def close(self, commit: bool) -> None:
        if self.w is None:
            return
        w, self.w = self.w, None
        try:
            if commit:
                w.commit()
            else:
                self._drop(w)
        except BaseException:
            if commit:  # a commit that failed (no room, say) leaves no segment behind
                with contextlib.suppress(Exception):
                    self._drop(w)
            raise
        finally:
            with contextlib.suppress(Exception):
                w.wait_merging_threads()

    @staticmethod
    def _drop(w: Any) -> None:
        w.rollback()
        w.garbage_collect_files()  # the segments written since the last commit


def index_tree(
    path: str | os.PathLike[str],
    index: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
) -> IndexResult:
    """Build the host index of the tree at ``path`` in ``index`` (a directory;
    default :func:`default_index_dir`), or refresh the part below ``path`` of
    the index already there. See the module doc. Raises ``path_not_found``,
    ``path_outside_root``, ``index_corrupt``, ``index_busy`` or
    ``dependency_missing``; on any error the index is left as it was (a new
    one is built in a directory beside ``index`` and moved into place whole).
    ``progress(done, total)`` is called as files are checked.
    """
    if progress is not None and not callable(progress):
        raise InvalidArgument("progress must be a function (done, total)")
    top = tree_root(path)
    where = Path(dir_arg(index, "index")) if index is not None else default_index_dir()
    if not check_dir(where):
        return _build(top, where, _tantivy(), progress)
    root = Path(header(where)["root"])
    if top != root and root not in top.parents:
        raise PathOutsideRoot(
            f"{os.fspath(path)!r} is outside the root {os.fspath(root)!r} of "
            f"the host index at {os.fspath(where)!r}; index it into another "
            "directory",
            path=os.fspath(path),
            root=os.fspath(root),
        )
    tantivy = _tantivy()
    with writing(where), locked(where):
        manifest = read_json(where / MANIFEST, where)
        if not isinstance(manifest, dict):
            raise corrupt(where, f"{MANIFEST} is not a map of files")
        with reading(where):
            ix = tantivy.Index.open(os.fspath(where))
        writer = _Writer(tantivy, ix, where, fresh=False)
        try:
            parsed, removed, files, warnings, new = _refresh(root, top, manifest, writer, progress)
            changed = writer.w is not None
            writer.close(commit=True)
        except BaseException:
            writer.close(commit=False)
            raise
        docs = _finish(ix, where, root, new, write=changed or new != manifest)
    return IndexResult(
        os.fspath(where),
        os.fspath(root),
        files,
        parsed,
        removed,
        docs,
        changed,
        False,
        tuple(warnings),
    )


def _build(top: Path, where: Path, tantivy: Any, progress: Progress | None) -> IndexResult:
    """A new index of ``top``, built aside and renamed to ``where``."""
    with writing(where):
        return _build_aside(top, where, tantivy, progress)


def _build_aside(top: Path, where: Path, tantivy: Any, progress: Progress | None) -> IndexResult:
    where.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{where.name}.", dir=where.parent))
    writer = None
    try:
        ix = tantivy.Index(_schema(tantivy), os.fspath(tmp))
        writer = _Writer(tantivy, ix, tmp, fresh=True)
        parsed, removed, files, warnings, new = _refresh(top, top, {}, writer, progress)
        writer.close(commit=True)
        docs = _finish(ix, tmp, top, new, write=True)
        (tmp / LOCK).touch()
        try:
            os.rename(tmp, where)  # onto an absent or empty directory only
        except OSError:
            raise IndexBusy(
                f"another process built a host index at {os.fspath(where)!r} meanwhile",
                index=os.fspath(where),
            ) from None
    except BaseException:
        if writer is not None:
            writer.close(commit=False)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return IndexResult(
        os.fspath(where), os.fspath(top), files, parsed, removed, docs, True, True, tuple(warnings)
    )


def _finish(ix: Any, where: Path, root: Path, manifest: dict[str, Any], *, write: bool) -> int:
    """The number of documents; with ``write``, the manifest and header written
    (after the commit: see the module doc)."""
    ix.reload()
    docs = int(ix.searcher().num_docs)
    if write:
        disk.write_json(where / MANIFEST, manifest)
        disk.write_json(
            where / META,
            {
                "format": FORMAT,
                "engine": f"tantivy {_version()}",
                "root": os.fspath(root),
                "name": root.name,
                "files": len(manifest),
                "docs": docs,
            },
        )
    return docs


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tantivy")
    except PackageNotFoundError:  # pragma: no cover - installed without metadata
        return "?"


def _refresh(
    root: Path, top: Path, manifest: dict[str, Any], writer: _Writer, progress: Progress | None
) -> tuple[int, int, int, list[Warning_], dict[str, Any]]:
    """Bring the documents of the files below ``top`` up to date through
    ``writer``: (files parsed, files removed, files seen, warnings, the new
    manifest)."""
    name = root.name
    scope = top.relative_to(root).as_posix() if top != root else ""
    prefix = f"{scope}/" if scope else ""
    found, warnings = walk(top, SCHEMES)
    warnings = [
        Warning_(f"{name}/{prefix}{w.path.partition('/')[2]}".rstrip("/"), w.line, w.message)
        for w in warnings
    ]
    new = {k: v for k, v in manifest.items() if not (k == scope or k.startswith(prefix))}
    total = len(found)
    parsed = 0
    sysml_changed = False
    for done, (sub, scheme) in enumerate(found):
        if progress is not None:
            progress(done, total)
        rel = prefix + sub
        try:
            new[rel], data = _changed(root / rel, manifest.get(rel))
        except OSError as e:
            warnings.append(Warning_(f"{name}/{rel}", 0, f"not read: {e.strerror or e}"))
            continue
        except (PathNotFound, InputTooLarge) as e:  # swapped for a FIFO, or grew, since
            warnings.append(Warning_(f"{name}/{rel}", 0, f"not read: {e.message}"))
            continue
        if data is None:
            continue
        if scheme == "sysml":
            sysml_changed = True
            continue
        if isinstance(data, int):  # over the cap: its size, the bytes never read
            warnings.append(Warning_(f"{name}/{rel}", 0, over_cap(data)))
            docs: list[Doc] = []
        else:
            docs, warn = READERS[scheme](name, rel, data)
            warnings += warn
        writer.replace(("unit", f"{scheme}:{name}/{rel}"), docs, scheme)
        parsed += 1
    if progress is not None:
        progress(total, total)
    removed = [rel for rel in manifest if rel not in new]
    for rel in removed:
        scheme = SCHEMES.get(os.path.splitext(rel)[1], "")
        if scheme == "sysml":
            sysml_changed = True
        else:
            writer.replace(("unit", f"{scheme}:{name}/{rel}"), [], scheme)
    if sysml_changed:
        parsed += _reindex_model(root, new, writer, warnings)
    return parsed, len(removed), total, warnings, new


def over_cap(size: int) -> str:
    """The warning for a file of ``size`` bytes, over :data:`MAX_FILE`."""
    return f"not indexed: {size:,} bytes, over the cap of {MAX_FILE:,} bytes a file may have"


def _changed(file: Path, old: Any) -> tuple[list[Any], bytes | int | None]:
    """The manifest entry of ``file`` (size, modification time, hash) and its
    bytes; None for the bytes when they are those ``old`` describes, and the
    size (an int) when the file is over :data:`MAX_FILE` and was not read."""
    st = file.stat()
    stamp = [st.st_size, st.st_mtime_ns]
    known = isinstance(old, list) and len(old) == 3
    if known and old[:2] == stamp:
        return old, None  # not even read
    if st.st_size > MAX_FILE:  # never read: indexed as nothing, with a warning
        return [*stamp, _OVER_MARK], (None if known and old[2] == _OVER_MARK else st.st_size)
    data = read_regular(file, MAX_FILE)
    entry = [*stamp, hashlib.sha256(data).hexdigest()[:16]]
    return entry, (None if known and old[2] == entry[2] else data)


_OVER_MARK = "over"  # its hash in the manifest


def _reindex_model(
    root: Path, manifest: dict[str, Any], writer: _Writer, warnings: list[Warning_]
) -> int:
    """Replace every SysML document by those of the model as it is now."""
    files = []
    for rel in sorted(manifest):
        if rel.endswith(".sysml"):
            try:
                files.append((rel, read_regular(root / rel, MAX_FILE)))
            except OSError as e:
                warnings.append(Warning_(f"{root.name}/{rel}", 0, f"not read: {e.strerror or e}"))
            except (PathNotFound, InputTooLarge) as e:
                warnings.append(Warning_(f"{root.name}/{rel}", 0, f"not read: {e.message}"))
    docs, warn = sysml_docs(root.name, files)
    warnings += warn
    writer.replace(("scheme", "sysml"), docs, "sysml")
    return len(files)


def open_index(index: str | os.PathLike[str] | None = None) -> HostIndex:
    """The host index in ``index`` (default :func:`default_index_dir`)."""
    return HostIndex.open(dir_arg(index, "index") if index is not None else default_index_dir())


def search(q: str, index: str | os.PathLike[str] | None = None, *, top: int = 10) -> list[Hit]:
    """``open_index(index).search(q, top)``, with ``q`` checked first."""
    query_words(q)
    check_top(top)
    return open_index(index).search(q, top)


__all__ = [
    "BOOSTS",
    "FORMAT",
    "MISSING_EXTRA",
    "HostIndex",
    "IndexResult",
    "default_index_dir",
    "index_tree",
    "open_index",
    "query_words",
    "search",
]
