"""What the ``memnet`` commands on cabinets and sessions do: make and list
them, commit to a session, recall and outline it (the table of commands is
``cli_table.py``, the parser and ``main`` are in ``cli.py``; the commands that
carry data in and out of sessions are in ``transfer.py``).

Each command takes the parsed arguments and returns the exit code; a
``MemNetError`` it raises is printed by ``main`` as one coded line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import InvalidArgument, PathNotFound, QueryError
from .access import hydrate, need_cabinet, open_cabinet
from .progress import Progress


def _print_shape(shape: Any, fmt: str) -> None:
    if fmt == "json":
        print(
            json.dumps(
                {"text": shape.text, "receipt": shape.receipt.to_dict()},
                ensure_ascii=False,
                indent=2,
            )
        )
    elif fmt in ("dot", "mermaid"):
        from . import render

        print(render.to_dot(shape) if fmt == "dot" else render.to_mermaid(shape), end="")
    else:
        print(shape.text)


def init(args: argparse.Namespace) -> int:
    with open_cabinet(args, create=True) as cab:
        info = cab.info()
        print(
            f"cabinet ready at {info.get('path')} ({info.get('backend')}, "
            f"{len(cab.sessions())} sessions)"
        )
    return 0


def cabinet_upgrade(args: argparse.Namespace) -> int:
    from ..cabinet import Cabinet

    need_cabinet(args.home)
    with Progress("upgrade") as bar:
        counts = Cabinet.upgrade(args.home, progress=bar)
    if counts["sessions"]:
        print(f"upgraded {counts['sessions']} session(s), {counts['nodes']} nodes")
    else:
        print("the cabinet is up to date")
    return 0


def cabinet_copy(args: argparse.Namespace) -> int:
    from ..cabinet import Cabinet
    from ..cabinet.copy import copy_sessions
    from ..cabinet.kv_pg import is_cabinet_url

    if not is_cabinet_url(args.src) and not os.path.isfile(os.path.join(args.src, "data.mdb")):
        # opening it would make an empty cabinet there and copy nothing
        raise PathNotFound(f"no cabinet at {args.src!r} to copy from", path=args.src)
    with Cabinet.open(args.src) as src, Cabinet.open(args.dst) as dst, Progress("copy") as bar:
        infos = copy_sessions(src, dst, args.sids, progress=bar)
    if args.format == "json":
        print(json.dumps([i.to_dict() for i in infos], indent=2))
    else:
        for i in infos:
            print(f"copied {i.id}: version {i.version}, {i.nodes} nodes, {i.edges} edges")
        if not infos:
            print("no sessions to copy")
    return 0


def session_create(args: argparse.Namespace) -> int:
    with open_cabinet(args, create=True) as cab:
        cab.create(args.sid)
        print(f"created session {args.sid}")
    return 0


def session_list(args: argparse.Namespace) -> int:
    with open_cabinet(args) as cab:
        rows = [i.to_dict() for i in cab.sessions()]
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'session':<24} {'version':>8} {'rows':>10} {'bytes':>12}")
        for r in rows:
            print(f"{r['id']:<24} {r['version']:>8} {r['rows']:>10} {r['bytes']:>12}")
    return 0


def session_drop(args: argparse.Namespace) -> int:
    with open_cabinet(args, sid=args.sid) as cab:
        cab.drop(args.sid)
        print(f"dropped session {args.sid}")
    return 0


def session_log(args: argparse.Namespace) -> int:
    with open_cabinet(args, sid=args.sid) as cab:
        entries = cab.log(args.sid)
    if args.format == "json":
        print(json.dumps([e.to_dict() for e in entries], indent=2))
    else:
        for e in entries:
            changed = ", ".join(e.changed[:8]) + (" …" if len(e.changed) > 8 else "")
            print(f"v{e.version}  +{e.created} ~{e.updated} -{e.recycled}  {changed}")
    return 0


def _read_text(file: str | None, bar: Progress) -> str:
    """The Δ text from FILE or stdin, read in bounded chunks: past the bytes
    the length cap's characters can take, ``input_too_large`` at once (a
    device such as /dev/zero or an endless pipe included)."""
    from ..gql.parse import MAX_DELTA_CHARS
    from .bounded import open_capped, read_capped

    bar.phase("reading")
    cap = 4 * MAX_DELTA_CHARS  # bytes: a character takes at most four
    why = f"a Δ holds at most {MAX_DELTA_CHARS:,} characters"
    if file in (None, "-"):
        if sys.stdin is None:  # started with stdin closed (`<&-`)
            raise InvalidArgument(
                "no Δ given: name a FILE, or give the Δ on stdin (stdin is closed)"
            )
        stream = getattr(sys.stdin, "buffer", sys.stdin)
        data = bar.spin_while(read_capped, stream, cap, "the Δ on stdin", why=why)
    else:
        assert file is not None
        f, size = open_capped(file, cap, file, why=why)
        with f:
            data = read_capped(f, cap, file, lambda done: bar(done, size), why=why)
    if isinstance(data, str):
        return data
    # bytes that are not UTF-8 become lone surrogates, which the parser
    # reports with their line and column (a BOM is no Δ)
    return data.decode("utf-8-sig", "surrogateescape")


def commit(args: argparse.Namespace) -> int:
    from ..gql.parse import parse_delta

    with open_cabinet(args, sid=args.sid) as cab, Progress(f"commit {args.sid}") as bar:
        text = _read_text(args.file, bar)
        bar.phase("parsing")
        delta = bar.spin_while(parse_delta, text)
        bar.phase("hydrating")
        s = cab.open(args.sid, progress=lambda d, t: bar(d, t))
        bar.phase("applying")
        res = bar.spin_while(s.commit, delta)
        bar.phase("flushing")
        bar.spin_while(cab.flush, s)
    out = {"version": res.version, "ids": res.ids, "changed": res.changed}
    if res.advice:
        out["advice"] = res.advice
    print(json.dumps(out, ensure_ascii=False))
    return 0


def recall(args: argparse.Namespace) -> int:
    if args.since is not None and args.format in ("dot", "mermaid"):
        raise QueryError(
            "--since answers what changed as text (gql or json); a picture "
            "shows a whole Shape: leave --since out"
        )
    with open_cabinet(args, sid=args.sid) as cab:
        s = hydrate(cab, args.sid, args.at)
        shape = s.recall(
            args.q,
            k=args.hops,
            max_rows=args.rows,
            limit=args.limit,
            fanout=args.fanout,
            view=args.view,
            laws=not args.no_laws,
            since=args.since,
            max_tokens=args.max_tokens,
        )
    _print_shape(shape, args.format)
    return 0


def outline(args: argparse.Namespace) -> int:
    with open_cabinet(args, sid=args.sid) as cab:
        s = hydrate(cab, args.sid, args.at)
        shape = s.outline(view=args.view)
    _print_shape(shape, args.format)
    return 0


def backup(args: argparse.Namespace) -> int:
    with open_cabinet(args) as cab, Progress("backup") as bar:
        bar.spin_while(cab.backup, args.dest)
    print(f"backed up the cabinet to {args.dest}")
    return 0


__all__ = [
    "backup",
    "cabinet_copy",
    "cabinet_upgrade",
    "commit",
    "init",
    "outline",
    "recall",
    "session_create",
    "session_drop",
    "session_list",
    "session_log",
]
