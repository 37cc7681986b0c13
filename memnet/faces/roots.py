"""The directories the MCP server's tools may read: its *roots*.

Whatever drives an MCP server (a model, through tool calls) names the paths
its file tools read: ``memnet_ingest``'s ``path``, ``memnet_snap``'s
``model`` and the host tools' ``index``. :class:`Roots` confines them:

* the operator's roots, ``memnet mcp --root DIR`` (repeatable);
* the client's roots, which a client that offers them lists over the
  protocol (``roots/list``, asked for at each call of a file tool;
  ``file://`` URIs): :meth:`Roots.narrowed`. With operator roots as well, a
  path must be inside both (the client can narrow, never widen); alone, they
  are the roots;
* with neither, the tools that read files are off.

A path is resolved (``os.path.realpath``: ``..`` and symbolic links followed)
before it is compared, and the tool is handed the resolved path, so a link
inside a root that points out of it is outside. The server's own files (its
cabinet, and the default host index in the cabinet's directory) are not
paths a tool call names, and are not confined.

An outside path, and any path while the file tools are off, is
``path_outside_root``; an empty path, or one holding a NUL, is
``path_not_found``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import PathNotFound, PathOutsideRoot


def _shown(path: str) -> str:
    return repr(path if len(path) <= 200 else path[:200] + "…")


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


class Roots:
    """The roots of one server (see the module doc)."""

    def __init__(self, dirs: Iterable[str | os.PathLike[str]] = ()) -> None:
        own: list[str] = []
        for d in dirs:
            where = os.fspath(d)
            if not where or "\x00" in where or not os.path.isdir(where):
                raise PathNotFound(f"--root {_shown(where)} is not a directory", path=where[:200])
            own.append(_real(where))
        self.operator: tuple[str, ...] = tuple(dict.fromkeys(own))
        self.client: tuple[str, ...] | None = None

    def narrowed(self, answer: Any) -> Roots:
        """These roots with the client's: ``answer`` is its reply to
        ``roots/list`` as JSON (``{"roots": [{"uri": ...}]}``); its ``file://``
        roots become the client roots. An answer with none (or none that is a
        local file URI), or no answer (``None``), leaves only the operator's."""
        found: list[str] = []
        items = answer.get("roots") if isinstance(answer, dict) else None
        for item in items if isinstance(items, list) else ():
            uri = item.get("uri") if isinstance(item, dict) else None
            if not isinstance(uri, str):
                continue
            parts = urlsplit(uri)
            if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
                continue
            path = unquote(parts.path, errors="surrogateescape")
            if path and "\x00" not in path:
                found.append(_real(path))
        out = Roots()
        out.operator, out.client = self.operator, tuple(dict.fromkeys(found)) or None
        return out

    @property
    def dirs(self) -> tuple[str, ...]:
        """The directories a path may be in (operator roots, else client roots)."""
        return self.operator or self.client or ()

    def check(self, path: object, what: str = "path") -> str:
        """``path`` resolved, when it is inside the roots; else
        ``path_outside_root`` (or ``path_not_found`` for an empty path)."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise PathNotFound(f"{what} must name a file or directory", path=str(path)[:200])
        if not self.dirs:
            raise PathOutsideRoot(
                f"this server reads no files: it was started without --root and the client "
                f"named no roots, so {what} {_shown(path)} cannot be read; start it with "
                "memnet mcp --root DIR",
                path=path[:200],
            )
        real = _real(path)
        for group in (self.operator, self.client):
            if group and not any(_inside(real, d) for d in group):
                raise PathOutsideRoot(
                    f"{what} {_shown(path)} is outside the roots this server may read "
                    f"({', '.join(_shown(d) for d in group)})",
                    path=path[:200],
                    roots=list(group),
                )
        return real

    def describe(self) -> str:
        if not self.dirs:
            return "no roots: the tools that read files are off"
        return "roots: " + ", ".join(self.dirs)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


__all__ = ["Roots"]
