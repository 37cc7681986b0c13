"""What each ``memnet`` command does (the parser and ``main`` are in ``cli.py``).

Each handler takes the parsed arguments and returns the exit code; a
``MemNetError`` it raises is printed by ``main`` as one coded line.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from ..errors import (
    DependencyMissing,
    DiskFull,
    InvalidArgument,
    OutputExists,
    PathNotFound,
    QueryError,
    SessionNotFound,
)
from .progress import Progress

if TYPE_CHECKING:
    from ..cabinet import Cabinet
    from ..session import Session

DEMO_DELTA = """\
INSERT
  (law1:LAW {text: 'Never change a price without a recorded decision'}),
  (law2:LAW {text: 'Every task touches at least one module'}),
  (pricing:MOD {path: 'shop/pricing.py', name: 'pricing'}),
  (cart:MOD {path: 'shop/cart.py', name: 'cart'}),
  (t1:TSK {title: 'Fix rounding in the pricing page', status: 'open', prio: 1}),
  (t2:TSK {title: 'Show VAT on the cart summary', status: 'open', prio: 2}),
  (t3:TSK {title: 'Rename pricing constants', status: 'done', prio: 3}),
  (d1:DEC {title: 'Round half to even for all prices', why: 'matches the accounting system'}),
  (t1)-[:TOUCHES]->(pricing),
  (t2)-[:TOUCHES]->(cart),
  (t3)-[:TOUCHES]->(pricing),
  (cart)-[:IMPORTS]->(pricing),
  (d1)-[:GOVERNS]->(pricing),
  (t1)-[:FOLLOWS]->(d1)
"""


def _cabinet(args: argparse.Namespace, *, create: bool = False, sid: str | None = None) -> Cabinet:
    """The cabinet at ``--home``. Only a command that makes something
    (``create``) makes a cabinet where there is none; any other stops first,
    so a mistyped path leaves nothing behind: with ``session_not_found`` when
    it names a session ``sid``, else ``path_not_found``."""
    from ..cabinet import Cabinet

    if not create:
        need_cabinet(args.home, sid)
    return Cabinet.open(args.home)


def need_cabinet(home: str | None, sid: str | None = None) -> None:
    """Stop when there is no cabinet at ``home`` (see :func:`_cabinet`)."""
    from ..cabinet.kv import home_of
    from ..cabinet.kv_pg import is_cabinet_url

    where = home_of(home)
    # a lock file without its data file is a cabinet that lost it: opening
    # it says so (cabinet_corrupt)
    if (
        where
        and not is_cabinet_url(where)
        and not any(os.path.isfile(os.path.join(where, f)) for f in ("data.mdb", "lock.mdb"))
    ):
        if sid is not None:
            raise SessionNotFound(f"no session {sid!r}: there is no cabinet at {where!r}")
        raise PathNotFound(f"no cabinet at {where!r}", path=where)


def rerun_hint(args: argparse.Namespace, *words: str) -> str:
    """The command line that runs ``memnet`` with ``words`` on the same
    cabinet (``--home`` as given), quoted for a POSIX shell."""
    import shlex

    home = ["--home", args.home] if args.home is not None else []
    return "memnet " + " ".join(shlex.quote(w) for w in (*home, *words))


def with_create_hint(e: SessionNotFound, hint: str) -> SessionNotFound:
    """``e`` saying how to create the session: ``hint`` is a command line
    that does the same work and creates it first (it must run as given)."""
    return SessionNotFound(f"{e.message}; to create it with this command, run: {hint}")


def _hydrate(cab: Cabinet, sid: str, at: int | None = None) -> Session:
    """Open ``sid`` from the cabinet, with a progress line on a terminal."""
    with Progress(f"hydrate {sid}") as bar:
        return cab.open(sid, at=at, progress=bar)


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


# -- commands --------------------------------------------------------------------
def _demo(args: argparse.Namespace) -> int:
    from ..gql.parse import parse_query

    parse_query(args.q)  # a bad -q fails before anything is made
    with _cabinet(args, create=True) as cab:
        if cab.exists(args.session):
            s = _hydrate(cab, args.session)
            print(
                f"# session {args.session!r} is in the cabinet at version {s.version}; "
                "recalling what was committed before"
            )
        else:
            s = cab.create(args.session)
            res = s.commit(DEMO_DELTA)
            cab.flush(s)
            print(f"# created session {args.session!r} in {cab.info().get('path', 'memory')}")
            print(
                f"# committed version {res.version}: {len(res.ids)} handles minted "
                f"({', '.join(f'{k}={v}' for k, v in sorted(res.ids.items()))})"
            )
        shape = s.recall(args.q)
        print(f"# recall {args.q!r}\n")
        print(shape.text)
        print("\n# receipt")
        print(json.dumps(shape.receipt.to_dict(), indent=2, ensure_ascii=False))
    return 0


def _init(args: argparse.Namespace) -> int:
    with _cabinet(args, create=True) as cab:
        info = cab.info()
        print(
            f"cabinet ready at {info.get('path')} ({info.get('backend')}, "
            f"{len(cab.sessions())} sessions)"
        )
    return 0


def _cabinet_upgrade(args: argparse.Namespace) -> int:
    from ..cabinet import Cabinet

    need_cabinet(args.home)
    with Progress("upgrade") as bar:
        counts = Cabinet.upgrade(args.home, progress=bar)
    if counts["sessions"]:
        print(f"upgraded {counts['sessions']} session(s), {counts['nodes']} nodes")
    else:
        print("the cabinet is up to date")
    return 0


def _session_create(args: argparse.Namespace) -> int:
    with _cabinet(args, create=True) as cab:
        cab.create(args.sid)
        print(f"created session {args.sid}")
    return 0


def _session_list(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab:
        rows = [i.to_dict() for i in cab.sessions()]
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'session':<24} {'version':>8} {'rows':>10} {'bytes':>12}")
        for r in rows:
            print(f"{r['id']:<24} {r['version']:>8} {r['rows']:>10} {r['bytes']:>12}")
    return 0


def _session_drop(args: argparse.Namespace) -> int:
    with _cabinet(args, sid=args.sid) as cab:
        cab.drop(args.sid)
        print(f"dropped session {args.sid}")
    return 0


def _session_log(args: argparse.Namespace) -> int:
    with _cabinet(args, sid=args.sid) as cab:
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


def _commit(args: argparse.Namespace) -> int:
    from ..gql.parse import parse_delta

    with _cabinet(args, sid=args.sid) as cab, Progress(f"commit {args.sid}") as bar:
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


def _recall(args: argparse.Namespace) -> int:
    if args.since is not None and args.format in ("dot", "mermaid"):
        raise QueryError(
            "--since answers what changed as text (gql or json); a picture "
            "shows a whole Shape: leave --since out"
        )
    with _cabinet(args, sid=args.sid) as cab:
        s = _hydrate(cab, args.sid, args.at)
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


def _outline(args: argparse.Namespace) -> int:
    with _cabinet(args, sid=args.sid) as cab:
        s = _hydrate(cab, args.sid, args.at)
        shape = s.outline(view=args.view)
    _print_shape(shape, args.format)
    return 0


def _backup(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab, Progress("backup") as bar:
        bar.spin_while(cab.backup, args.dest)
    print(f"backed up the cabinet to {args.dest}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from ..absorb import export_working_memory_slice

    check_new(args.output, force=args.force)  # before the hydrate
    with _cabinet(args, sid=args.member) as cab:
        member = _hydrate(cab, args.member)
        slc = export_working_memory_slice(member, args.anchor, hops=args.hops, budget=args.budget)
    write_new(args.output, slc.to_json(), force=args.force)
    print(
        f"exported {len(slc.nodes)} nodes and {len(slc.edges)} edges of {args.member} "
        f"(version {slc.provenance.version}) to {args.output}"
    )
    return 0


def check_new(path: str, *, force: bool = False) -> str:
    """Refuse an output path :func:`write_new` could not write (before any
    work is done for it); returns the directory it goes in."""
    if not path:
        raise PathNotFound("no output file named (an empty path)", path=path)
    if os.path.isdir(path):
        raise PathNotFound(f"{path} is a directory; name a file to write", path=path)
    if not force and os.path.lexists(path):
        raise OutputExists(
            f"{path} already exists; nothing was written (pass --force to replace it)", path=path
        )
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise PathNotFound(f"cannot write {path}: there is no directory {parent!r}", path=path)
    return parent


def write_new(path: str, text: str, *, force: bool = False) -> None:
    """Write ``text`` to the file ``path`` whole or not at all (a temporary file
    beside it, renamed over it); an existing file is ``output_exists`` unless
    ``force``."""
    import tempfile

    parent = check_new(path, force=force)
    fd, tmp = tempfile.mkstemp(prefix=".memnet-", dir=parent)
    try:
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException as e:
        os.unlink(tmp)
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            # as the cabinet's writers say it
            raise DiskFull(
                f"cannot write {path}: {e.strerror}; nothing was written", path=path
            ) from None
        raise


def _absorb(args: argparse.Namespace) -> int:
    from ..absorb import AbsorbRejected, export_working_memory_slice, import_slice

    if (args.slice is None) == (args.member is None):
        raise AbsorbRejected("give either --slice FILE or --from MEMBER with --anchor")
    if args.member is not None and not args.anchor:
        raise AbsorbRejected("--from MEMBER needs at least one --anchor HANDLE")
    with _cabinet(args, sid=args.lead) as cab:
        lead = _hydrate(cab, args.lead)
        if args.slice is not None:
            slc: Any = _read_slice(args.slice)
        else:
            member = _hydrate(cab, args.member)
            slc = export_working_memory_slice(
                member, args.anchor, hops=args.hops, budget=args.budget
            )
        res = import_slice(lead, slc, args.id_policy)
        cab.flush(lead)
    print(
        json.dumps(
            {
                "version": res.version,
                "changed": res.changed,
                "created": res.created,
                "matched": res.matched,
                "updated": res.updated,
                "ids": res.ids,
            },
            ensure_ascii=False,
        )
    )
    return 0


def _read_slice(path: str) -> bytes:
    """The bytes of a slice file (or device, or pipe), refused past the slice
    size cap with ``input_too_large`` without reading further."""
    from ..absorb import MAX_SLICE_BYTES
    from .bounded import open_capped, read_capped

    f, _size = open_capped(path, MAX_SLICE_BYTES, f"the slice {path}")
    with f:
        data = read_capped(f, MAX_SLICE_BYTES, f"the slice {path}")
    assert isinstance(data, bytes)
    return data


def _ingest(args: argparse.Namespace) -> int:
    from ..ingest import check_ingest_path

    check_ingest_path(args.path)  # a bad PATH fails before the cabinet is touched
    try:
        return _ingest_into(args)
    except SessionNotFound as e:
        more = ["--format", args.format] if args.format != "text" else []
        raise with_create_hint(
            e, rerun_hint(args, "ingest", args.sid, args.path, "--create", *more)
        ) from None


def _ingest_into(args: argparse.Namespace) -> int:
    from ..ingest import ingest_new, ingest_path

    with (
        _cabinet(args, create=args.create, sid=args.sid) as cab,
        Progress(f"ingest {args.sid}") as bar,
    ):
        if args.create and not cab.exists(args.sid):
            bar.phase("scanning")  # stored only if the whole ingest succeeds
            _s, results = ingest_new(cab, args.sid, args.path, progress=lambda d, t: bar(d, t))
        else:
            bar.phase("hydrating")
            s = cab.open(args.sid, progress=lambda d, t: bar(d, t))
            bar.phase("scanning")
            results = ingest_path(s, args.path, progress=lambda d, t: bar(d, t))
            if results.changed:
                bar.phase("flushing")
                bar.spin_while(cab.flush, s)
    for res in results:
        for w in res.warnings:
            print(f"memnet: warning: {w}", file=sys.stderr)
    tree, model = results.tree, results.model
    if args.format == "json":
        out = (tree or model).to_dict()  # type: ignore[union-attr]  # one is always there
        if tree is not None and model is not None:
            out["model"] = model.to_dict()
            out["version"] = model.version
        print(json.dumps(out, ensure_ascii=False))
    else:
        if tree is not None:
            print(f"ingested {args.path} into {args.sid}: {tree.summary()}")
        if model is not None:
            print(f"ingested model {args.path} into {args.sid}: {model.summary()}")
    return 0


def _import_mcp_memory(args: argparse.Namespace) -> int:
    from ..errors import CapExceeded
    from ..ids import check_session_id
    from ..importers import apply_plan, plan_mcp_memory, read_mcp_memory, session_for

    check_session_id(args.sid)
    with Progress(f"import {args.sid}") as bar:
        bar.phase("reading")  # the whole file is checked before the cabinet is touched
        mem = read_mcp_memory(args.file, progress=bar)
        try:
            with _cabinet(args, create=args.create, sid=args.sid) as cab:
                new = args.create and not cab.exists(args.sid)
                if new:  # stored only once the import has succeeded
                    s = session_for(mem, args.sid)
                else:
                    bar.phase("hydrating")
                    s = cab.open(args.sid, progress=bar)
                bar.phase("planning")
                plan = plan_mcp_memory(s, mem, progress=bar)
                bar.phase("committing")
                res = bar.spin_while(apply_plan, s, plan)
                if new:
                    bar.phase("storing")
                    bar.spin_while(cab.adopt, s)
                elif res.changed:
                    bar.phase("flushing")
                    bar.spin_while(cab.flush, s)
        except SessionNotFound as e:
            more = ["--format", args.format] if args.format != "text" else []
            raise with_create_hint(
                e, rerun_hint(args, "import", "mcp-memory", args.file, args.sid, "--create", *more)
            ) from None
        except CapExceeded as e:
            other = f"{args.sid[:62]}-2"
            raise CapExceeded(
                f"{e.message}; or import into a new session, whose cap is sized "
                "to the file: "
                + rerun_hint(args, "import", "mcp-memory", args.file, other, "--create"),
                **e.details,
            ) from None
    for w in res.warnings:
        print(f"memnet: warning: {w}", file=sys.stderr)
    if args.format == "json":
        out = res.to_dict()
        out.update(session=args.sid, new_session=new, cap_rows=s.caps.rows, cap_bytes=s.caps.bytes)
        print(json.dumps(out, ensure_ascii=False))
    else:
        made = f" (a new session, cap {s.caps.rows:,} rows / {s.caps.bytes:,} bytes)" if new else ""
        print(f"imported {args.file} into {args.sid}{made}: {res.summary()}")
    return 0


def _snap(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..snap import snap

    p = Path(args.model)
    if not (p.is_dir() or p.is_file()):
        raise PathNotFound(f"no such model file or directory: {args.model!r}", path=args.model)
    with _cabinet(args, create=True) as cab, Progress(f"snap {args.prefix}") as bar:
        bar.phase("syncing, then writing sessions")
        res = snap(
            cab,
            args.model,
            args.prefix,
            budget=args.budget,
            strict=args.strict,
            progress=lambda d, t: bar(d, t),
        )
    for w in res.failed:
        print(f"memnet: warning: {w}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(res.to_dict(), ensure_ascii=False))
    else:
        print(f"snapped {args.model} with prefix {args.prefix}: {res.summary()}")
        for sid in res.interiors:
            mark = " (changed)" if res.results[sid].changed else ""
            print(f"  {sid}: {res.rows[sid]} rows{mark}")
        for sid in res.dropped:
            print(f"  {sid}: dropped")
    return 0


def _cabinet_copy(args: argparse.Namespace) -> int:
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


def _ver_commit(args: argparse.Namespace, trace: Any) -> dict[str, Any]:
    """``memnet ver --commit SID``: the trace written into SID, then flushed."""
    from pathlib import Path

    from .. import ver

    with _cabinet(args, sid=args.commit) as cab:
        s = _hydrate(cab, args.commit)
        model, tests = ver.commit_trace(s, trace, args.models, root=Path(args.tests).resolve().name)
        if (model is not None and model.changed) or tests.changed:
            cab.flush(s)
    out = tests.to_dict()
    out["summary"] = tests.summary()
    if model is not None:
        out["model"] = model.to_dict()
    return out


def _ver(args: argparse.Namespace) -> int:
    """Trace requirements to tests: collect TESTS with pytest, check against MODELS."""
    import importlib.util

    from ..errors import TraceFailed

    if importlib.util.find_spec("pytest") is None:
        raise DependencyMissing(
            "memnet ver collects the tests with pytest, which is not "
            "installed: pip install 'memnet[dev]' (or pip install pytest)"
        )
    from .. import ver

    trace = ver.collect(args.models, args.tests)
    committed = _ver_commit(args, trace) if args.commit else None
    if args.format == "json":
        print(
            json.dumps(
                trace.to_dict() | ({"commit": committed} if committed else {}),
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        import shutil

        print(
            ver.format_matrix(trace, width=min(shutil.get_terminal_size((100, 24)).columns, 120)),
            end="",
        )
        if committed:
            print(f"traced into {args.commit}: {committed['summary']}")
    sys.stdout.flush()
    if not trace.ok:
        raise TraceFailed(trace.summary())
    return 0
