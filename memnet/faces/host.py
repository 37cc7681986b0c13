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

from .progress import Progress

WARNINGS_SHOWN = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The actions of ``memnet host`` and their arguments."""
    sub = parser.add_subparsers(dest="host_command", metavar="ACTION")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--index",
            default=None,
            metavar="DIR",
            help="the index directory (default: host-index in the MemNet home, "
            "$MEMNET_HOME or ./.memnet)",
        )
        p.add_argument(
            "--format", choices=("text", "json"), default="text", help="text (default) or json"
        )

    ix = sub.add_parser(
        "index",
        help="build or refresh the BM25 index of a tree",
        description="Index PATH: a search document per Python module and top-level class or "
        "function (name, signature, docstring), markdown file and section, SysML "
        "element and plain text file (.txt, .rst), with the locators ingest gives "
        "them. The first run makes the index and PATH its root; later runs refresh "
        "PATH, which must be the root or inside it: only files whose size, time "
        "and hash changed are read again, and an unchanged tree writes nothing.",
    )
    ix.add_argument("path", help="the directory to index")
    common(ix)
    ix.set_defaults(host_run=_index)

    se = sub.add_parser(
        "search",
        help="search the index (BM25) and print the hits",
        description="Print the TOP best hits for Q: score, locator and short title (text), "
        "or a JSON list of {locator, title, score, kind, path, line}.",
    )
    se.add_argument("q", nargs="+", metavar="Q", help="the words to search for")
    se.add_argument("--top", type=int, default=10, help="most hits (1-100, default 10)")
    common(se)
    se.set_defaults(host_run=_search)

    sn = sub.add_parser(
        "snap",
        help="search and commit the hits into a session (Host Snap)",
        description="Search Q and commit, as one Commit to SID, a QRY node for the query "
        "linked by HIT {rank} edges to a node per hit, keyed by locator (a node "
        "the session already holds for that locator is reused; a new one gets the "
        "locator and a short title only), then flush. The same hits again commit "
        "nothing. Recall them with 'QRY <words>'. With --create a session the "
        "cabinet does not hold is made, and stored only once the snap succeeds.",
    )
    sn.add_argument("sid", help="session id (it must exist, or pass --create)")
    sn.add_argument("q", nargs="+", metavar="Q", help="the words to search for")
    sn.add_argument("--top", type=int, default=10, help="most hits (1-100, default 10)")
    sn.add_argument(
        "--create",
        action="store_true",
        help="create the session first if the cabinet does not hold it",
    )
    common(sn)
    sn.set_defaults(host_run=_snap)
    parser.epilog = "Needs the extra: pip install 'memnet[host]'. See docs/host.md."
    parser.set_defaults(host_parser=parser)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "host_run", None)
    if action is None:
        args.host_parser.print_help(sys.stderr)
        return 2
    return int(action(args))


def _dir(args: argparse.Namespace) -> Any:
    from ..host import default_index_dir

    return args.index if args.index is not None else default_index_dir(args.home)


def _index(args: argparse.Namespace) -> int:
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


def _search(args: argparse.Namespace) -> int:
    from ..host import search

    hits = search(" ".join(args.q), _dir(args), top=args.top)
    if args.format == "json":
        print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
    else:
        for h in hits:
            print(f"{h.score:8.3f}  {h.locator}  {h.title}")
    return 0


def _snap(args: argparse.Namespace) -> int:
    from ..errors import SessionNotFound
    from ..host import open_index
    from ..host.index import check_top, query_words
    from ..ids import check_session_id
    from .commands import rerun_hint, with_create_hint

    q = " ".join(args.q)
    query_words(q)
    check_top(args.top)
    check_session_id(args.sid)
    hook = open_index(_dir(args))  # a missing or damaged index fails before the cabinet
    try:
        res = _snap_into(args, q, hook)
    except SessionNotFound as e:
        more = [
            *(["--top", str(args.top)] if args.top != 10 else []),
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
    from .commands import _cabinet, _hydrate

    with _cabinet(args, create=args.create, sid=args.sid) as cab:
        if args.create and not cab.exists(args.sid):
            s = Session(args.sid)
            res = snap(s, q, hook=hook, top=args.top)
            cab.adopt(s)
            return res
        s = _hydrate(cab, args.sid)
        res = snap(s, q, hook=hook, top=args.top)
        if res.changed:
            cab.flush(s)
        return res


__all__ = ["add_arguments", "run"]
