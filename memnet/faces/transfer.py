"""What the ``memnet`` commands that carry data in and out of sessions do:
export and absorb a slice, ingest a tree or a model, import another tool's
memory, snap a model into sessions, trace requirements to tests.

Each command takes the parsed arguments and returns the exit code (see
``commands.py``).
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from typing import Any

from ..errors import (
    DependencyMissing,
    DiskFull,
    OutputExists,
    PathNotFound,
    SessionNotFound,
)
from .access import hydrate, open_cabinet, rerun_hint, with_create_hint
from .progress import Progress


def export(args: argparse.Namespace) -> int:
    from ..absorb import export_working_memory_slice

    check_new(args.output, force=args.force)  # before the hydrate
    with open_cabinet(args, sid=args.member) as cab:
        member = hydrate(cab, args.member)
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


def absorb(args: argparse.Namespace) -> int:
    from ..absorb import AbsorbRejected, export_working_memory_slice, import_slice

    if (args.slice is None) == (args.member is None):
        raise AbsorbRejected("give either --slice FILE or --from MEMBER with --anchor")
    if args.member is not None and not args.anchor:
        raise AbsorbRejected("--from MEMBER needs at least one --anchor HANDLE")
    with open_cabinet(args, sid=args.lead) as cab:
        lead = hydrate(cab, args.lead)
        if args.slice is not None:
            slc: Any = _read_slice(args.slice)
        else:
            member = hydrate(cab, args.member)
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


def ingest(args: argparse.Namespace) -> int:
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
        open_cabinet(args, create=args.create, sid=args.sid) as cab,
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


def import_mcp_memory(args: argparse.Namespace) -> int:
    from ..errors import CapExceeded
    from ..ids import check_session_id
    from ..importers import apply_plan, plan_mcp_memory, read_mcp_memory, session_for

    check_session_id(args.sid)
    with Progress(f"import {args.sid}") as bar:
        bar.phase("reading")  # the whole file is checked before the cabinet is touched
        mem = read_mcp_memory(args.file, progress=bar)
        try:
            with open_cabinet(args, create=args.create, sid=args.sid) as cab:
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


def snap(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..snap import snap as snap_model

    p = Path(args.model)
    if not (p.is_dir() or p.is_file()):
        raise PathNotFound(f"no such model file or directory: {args.model!r}", path=args.model)
    with open_cabinet(args, create=True) as cab, Progress(f"snap {args.prefix}") as bar:
        bar.phase("syncing, then writing sessions")
        res = snap_model(
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


def _ver_commit(args: argparse.Namespace, trace: Any) -> dict[str, Any]:
    """``memnet ver --commit SID``: the trace written into SID, then flushed."""
    from pathlib import Path

    from .. import ver as tracing

    with open_cabinet(args, sid=args.commit) as cab:
        s = hydrate(cab, args.commit)
        root = Path(args.tests).resolve().name
        model, tests = tracing.commit_trace(s, trace, args.models, root=root)
        if (model is not None and model.changed) or tests.changed:
            cab.flush(s)
    out = tests.to_dict()
    out["summary"] = tests.summary()
    if model is not None:
        out["model"] = model.to_dict()
    return out


def ver(args: argparse.Namespace) -> int:
    """Trace requirements to tests: collect TESTS with pytest, check against MODELS."""
    import importlib.util

    from ..errors import TraceFailed

    if importlib.util.find_spec("pytest") is None:
        raise DependencyMissing(
            "memnet ver collects the tests with pytest, which is not "
            "installed: pip install 'memnet[dev]' (or pip install pytest)"
        )
    from .. import ver as tracing

    trace = tracing.collect(args.models, args.tests)
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

        width = min(shutil.get_terminal_size((100, 24)).columns, 120)
        print(tracing.format_matrix(trace, width=width), end="")
        if committed:
            print(f"traced into {args.commit}: {committed['summary']}")
    sys.stdout.flush()
    if not trace.ok:
        raise TraceFailed(trace.summary())
    return 0


__all__ = [
    "absorb",
    "check_new",
    "export",
    "import_mcp_memory",
    "ingest",
    "snap",
    "ver",
    "write_new",
]
