"""``memnet host index|search|snap``: the Host Snap commands (:mod:`memnet.host`).

The index lives in ``--index DIR`` (default ``host-index`` in the MemNet
home); the search library is the extra ``memnet[host]``, imported only when a
command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .params import TOP_DEFAULT
from .progress import Progress

WARNINGS_SHOWN = 20


def _dir(args: argparse.Namespace) -> Any:
    from ..host import default_index_dir

    return args.index if args.index is not None else default_index_dir(args.home)


def index(args: argparse.Namespace) -> int:
    from ..host import index_tree

    with Progress(f"host index {args.path}") as bar:
        bar.phase("reading")
        res = index_tree(args.path, _dir(args), progress=bar)
    for w in res.warnings[:WARNINGS_SHOWN]:
        print(f"memnet: warning: {w}", file=sys.stderr)
    if len(res.warnings) > WARNINGS_SHOWN:
        print(
            f"memnet: warning: … and {len(res.warnings) - WARNINGS_SHOWN} more "
            "(--format json lists them all)",
            file=sys.stderr,
        )
    if args.format == "json":
        print(json.dumps(res.to_dict(), ensure_ascii=False))
    else:
        print(f"indexed {args.path} into {res.index}: {res.summary()}")
    return 0


def search(args: argparse.Namespace) -> int:
    from ..host import search

    hits = search(" ".join(args.q), _dir(args), top=args.top)
    if args.format == "json":
        print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
    else:
        for h in hits:
            print(f"{h.score:8.3f}  {h.locator}  {h.title}")
    return 0


def snap(args: argparse.Namespace) -> int:
    from ..errors import SessionNotFound
    from ..host import open_index
    from ..host.index import check_top, query_words
    from ..ids import check_session_id
    from .access import rerun_hint, with_create_hint

    q = " ".join(args.q)
    query_words(q)
    check_top(args.top)
    check_session_id(args.sid)
    hook = open_index(_dir(args))  # a missing or damaged index fails before the cabinet
    try:
        res = _snap_into(args, q, hook)
    except SessionNotFound as e:
        more = [
            *(["--top", str(args.top)] if args.top != TOP_DEFAULT else []),
            *(["--index", args.index] if args.index is not None else []),
            *(["--format", args.format] if args.format != "text" else []),
        ]
        raise with_create_hint(
            e, rerun_hint(args, "host", "snap", args.sid, *args.q, "--create", *more)
        ) from None
    if args.format == "json":
        print(json.dumps(res.to_dict(), ensure_ascii=False))
    else:
        print(f"snapped {q!r} into {args.sid}: {res.summary()}")
        for h, handle, new in zip(res.hits, res.handles, res.created, strict=True):
            print(f"  {handle}{' (new)' if new else ''}  {h.locator}")
    return 0


def _snap_into(args: argparse.Namespace, q: str, hook: Any) -> Any:
    """Snap ``q`` into the session: hydrated and flushed, or (``--create``,
    the session missing) built in memory and stored whole once the snap has
    succeeded, so a failed snap leaves no empty session behind."""
    from ..host import snap
    from ..session import Session
    from .access import hydrate, open_cabinet

    with open_cabinet(args, create=args.create, sid=args.sid) as cab:
        if args.create and not cab.exists(args.sid):
            s = Session(args.sid)
            res = snap(s, q, hook=hook, top=args.top)
            cab.adopt(s)
            return res
        s = hydrate(cab, args.sid)
        res = snap(s, q, hook=hook, top=args.top)
        if res.changed:
            cab.flush(s)
        return res


__all__ = ["index", "search", "snap"]
