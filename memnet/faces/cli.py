"""The ``memnet`` command line (also ``python -m memnet``).

Every command mirrors a library call and works on the cabinet at ``--home``
(default ``$MEMNET_HOME``, else ``./.memnet``): an LMDB directory, or a
``postgresql://`` URL for a PostgreSQL cabinet, so what one command commits
the next command recalls.

Exit codes: 0 on success, 1 on a MemNetError (one line on stderr:
``memnet: error: <code>: <message>``), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import (
    DependencyMissing,
    MemNetError,
    OutputExists,
    PathNotFound,
    QueryError,
    os_error,
)
from ..limits import LIMITS
from .progress import Progress
from .render import add_recall_arguments

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


def _cabinet(args: argparse.Namespace) -> Cabinet:
    from ..cabinet import Cabinet

    return Cabinet.open(args.home)


def _hydrate(cab: Cabinet, sid: str, at: int | None = None) -> Session:
    """Open ``sid`` from the cabinet, with a progress line on a terminal."""
    with Progress(f"hydrate {sid}") as bar:
        return cab.open(sid, at=at, progress=bar)


def _print_shape(shape: Any, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps({"text": shape.text, "receipt": shape.receipt.to_dict()},
                         ensure_ascii=False, indent=2))
    elif fmt in ("dot", "mermaid"):
        from . import render

        print(render.to_dot(shape) if fmt == "dot" else render.to_mermaid(shape), end="")
    else:
        print(shape.text)


# -- commands --------------------------------------------------------------------
def _demo(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab:
        if cab.exists(args.session):
            s = _hydrate(cab, args.session)
            print(f"# session {args.session!r} is in the cabinet at version {s.version}; "
                  "recalling what was committed before")
        else:
            s = cab.create(args.session)
            res = s.commit(DEMO_DELTA)
            cab.flush(s)
            print(f"# created session {args.session!r} in {cab.info().get('path', 'memory')}")
            print(f"# committed version {res.version}: {len(res.ids)} handles minted "
                  f"({', '.join(f'{k}={v}' for k, v in sorted(res.ids.items()))})")
        shape = s.recall(args.q)
        print(f"# recall {args.q!r}\n")
        print(shape.text)
        print("\n# receipt")
        print(json.dumps(shape.receipt.to_dict(), indent=2, ensure_ascii=False))
    return 0


def _init(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab:
        info = cab.info()
        print(f"cabinet ready at {info.get('path')} ({info.get('backend')}, "
              f"{len(cab.sessions())} sessions)")
    return 0


def _cabinet_upgrade(args: argparse.Namespace) -> int:
    from ..cabinet import Cabinet

    with Progress("upgrade") as bar:
        counts = Cabinet.upgrade(args.home, progress=bar)
    if counts["sessions"]:
        print(f"rebuilt the word index of {counts['sessions']} session(s), "
              f"{counts['nodes']} nodes")
    else:
        print("the cabinet is up to date; nothing to do")
    return 0


def _session_create(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab:
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
    with _cabinet(args) as cab:
        cab.drop(args.sid)
        print(f"dropped session {args.sid}")
    return 0


def _session_log(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab:
        entries = cab.log(args.sid)
    if args.format == "json":
        print(json.dumps([e.to_dict() for e in entries], indent=2))
    else:
        for e in entries:
            changed = ", ".join(e.changed[:8]) + (" …" if len(e.changed) > 8 else "")
            print(f"v{e.version}  +{e.created} ~{e.updated} -{e.recycled}  {changed}")
    return 0


def _read_text(file: str | None, bar: Progress) -> str:
    """The Δ text from FILE (read in chunks, counting bytes) or stdin."""
    bar.phase("reading")
    if file in (None, "-"):
        text: str = bar.spin_while(sys.stdin.read)
        return text
    total = os.path.getsize(file)
    parts: list[str] = []
    done = 0
    with open(file, encoding="utf-8") as f:
        while chunk := f.read(1 << 20):
            parts.append(chunk)
            done += len(chunk.encode("utf-8"))
            bar(min(done, total), total)
    return "".join(parts)


def _commit(args: argparse.Namespace) -> int:
    from ..gql.parse import parse_delta

    with _cabinet(args) as cab, Progress(f"commit {args.sid}") as bar:
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
        raise QueryError("--since answers what changed as text (gql or json); a picture "
                         "shows a whole Shape: leave --since out")
    with _cabinet(args) as cab:
        s = _hydrate(cab, args.sid, args.at)
        shape = s.recall(args.q, k=args.hops, max_rows=args.rows, limit=args.limit,
                         fanout=args.fanout, view=args.view, laws=not args.no_laws,
                         since=args.since)
    _print_shape(shape, args.format)
    return 0


def _outline(args: argparse.Namespace) -> int:
    with _cabinet(args) as cab:
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

    with _cabinet(args) as cab:
        member = _hydrate(cab, args.member)
        slc = export_working_memory_slice(member, args.anchor, hops=args.hops,
                                          budget=args.budget)
    write_new(args.output, slc.to_json(), force=args.force)
    print(f"exported {len(slc.nodes)} nodes and {len(slc.edges)} edges of {args.member} "
          f"(version {slc.provenance.version}) to {args.output}")
    return 0


def write_new(path: str, text: str, *, force: bool = False) -> None:
    """Write ``text`` to the file ``path`` whole or not at all (a temporary file
    beside it, renamed over it); an existing file is ``output_exists`` unless
    ``force``."""
    import tempfile

    if not force and os.path.lexists(path):
        raise OutputExists(f"{path} already exists; nothing was written (pass --force to "
                           "replace it)", path=path)
    fd, tmp = tempfile.mkstemp(prefix=".memnet-", dir=os.path.dirname(path) or ".")
    try:
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _absorb(args: argparse.Namespace) -> int:
    from ..absorb import AbsorbRejected, export_working_memory_slice, import_slice

    if (args.slice is None) == (args.member is None):
        raise AbsorbRejected("give either --slice FILE or --from MEMBER with --anchor")
    if args.member is not None and not args.anchor:
        raise AbsorbRejected("--from MEMBER needs at least one --anchor HANDLE")
    with _cabinet(args) as cab:
        lead = _hydrate(cab, args.lead)
        if args.slice is not None:
            with open(args.slice, "rb") as f:
                slc: Any = f.read()
        else:
            member = _hydrate(cab, args.member)
            slc = export_working_memory_slice(member, args.anchor, hops=args.hops,
                                              budget=args.budget)
        res = import_slice(lead, slc, args.id_policy)
        cab.flush(lead)
    print(json.dumps({"version": res.version, "created": res.created, "ids": res.ids},
                     ensure_ascii=False))
    return 0


def _ingest(args: argparse.Namespace) -> int:
    from ..ingest import check_ingest_path, ingest_new, ingest_path

    p = check_ingest_path(args.path)  # a bad PATH fails before the cabinet is touched
    with _cabinet(args) as cab, Progress(f"ingest {args.sid}") as bar:
        if args.create and not cab.exists(args.sid):
            bar.phase("scanning")  # stored only if the whole ingest succeeds
            _s, results = ingest_new(cab, args.sid, args.path, progress=lambda d, t: bar(d, t))
        else:
            bar.phase("hydrating")
            s = cab.open(args.sid, progress=lambda d, t: bar(d, t))
            bar.phase("scanning")
            results = ingest_path(s, args.path, progress=lambda d, t: bar(d, t))
            if any(r.changed for r in results):
                bar.phase("flushing")
                bar.spin_while(cab.flush, s)
    model = results[-1] if p.is_dir() and len(results) == 2 else None
    for res in results:
        for w in res.warnings:
            print(f"memnet: warning: {w}", file=sys.stderr)
    if args.format == "json":
        out = results[0].to_dict()
        if model is not None:
            out["model"] = model.to_dict()
            out["version"] = model.version
        print(json.dumps(out, ensure_ascii=False))
    else:
        what = "model " if p.is_file() else ""
        print(f"ingested {what}{args.path} into {args.sid}: {results[0].summary()}")
        if model is not None:
            print(f"ingested model {args.path} into {args.sid}: {model.summary()}")
    return 0


def _snap(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..snap import snap

    p = Path(args.model)
    if not (p.is_dir() or p.is_file()):
        raise PathNotFound(f"no such model file or directory: {args.model!r}", path=args.model)
    with _cabinet(args) as cab, Progress(f"snap {args.prefix}") as bar:
        bar.phase("writing sessions")
        res = snap(cab, args.model, args.prefix, budget=args.budget, strict=args.strict,
                   progress=lambda d, t: bar(d, t))
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
    from ..cabinet.kv_pg import looks_like_url

    if not looks_like_url(args.src) and not os.path.isfile(os.path.join(args.src, "data.mdb")):
        # opening it would make an empty cabinet there and copy nothing
        raise PathNotFound(f"no cabinet at {args.src!r} to copy from",
                          path=args.src)
    with Cabinet.open(args.src) as src, Cabinet.open(args.dst) as dst, \
            Progress("copy") as bar:
        infos = copy_sessions(src, dst, args.sids, progress=bar)
    if args.format == "json":
        print(json.dumps([i.to_dict() for i in infos], indent=2))
    else:
        for i in infos:
            print(f"copied {i.id}: version {i.version}, {i.nodes} nodes, {i.edges} edges")
        if not infos:
            print("no sessions to copy")
    return 0


def _ver(args: argparse.Namespace) -> int:
    """Trace requirements to tests: collect TESTS with pytest, check against MODELS."""
    import importlib.util

    from ..errors import TraceFailed

    if importlib.util.find_spec("pytest") is None:
        raise DependencyMissing("memnet ver collects the tests with pytest, which is not "
                                "installed: pip install 'memnet[dev]' (or pip install pytest)")
    from .. import ver

    trace = ver.collect(args.models, args.tests)
    if args.format == "json":
        print(json.dumps(trace.to_dict(), indent=2, ensure_ascii=False))
    else:
        import shutil

        print(ver.format_matrix(trace, width=min(shutil.get_terminal_size((100, 24)).columns,
                                                 120)), end="")
    sys.stdout.flush()
    if not trace.ok:
        raise TraceFailed(trace.summary())
    return 0


# -- parser ----------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memnet",
        description="MemNet: bounded working memory for LLM agents (Recall a Shape, Commit a Δ).")
    p.add_argument("-V", "--version", action="version", version=f"memnet {__version__}")
    p.add_argument("--home", default=None,
                   help="cabinet directory, or a postgresql://user@host:port/dbname URL "
                        "(default: $MEMNET_HOME, else ./.memnet)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo", help="commit a few tasks and laws into a session, recall them, print the Shape",
        description="On first run, create the session, commit a small set of tasks, laws, "
                    "modules and a decision and flush it to the cabinet; on every run, recall "
                    "it with a codebook query and print the Shape and its receipt.")
    demo.add_argument("--session", default="demo", help="session id (default: demo)")
    demo.add_argument("-q", default="TSK status:open pricing",
                      help="the Recall query (default: 'TSK status:open pricing')")
    demo.set_defaults(func=_demo)

    init = sub.add_parser("init", help="create the cabinet directory if needed",
                          description="Create (or check) the cabinet at --home.")
    init.set_defaults(func=_init)

    cabp = sub.add_parser("cabinet", help="work on whole cabinets (upgrade one, copy sessions "
                                          "between two)",
                          description="Commands on whole cabinets: directories (LMDB) or "
                                      "postgresql:// URLs.")
    cabsub = cabp.add_subparsers(dest="cabinet_command", metavar="ACTION")
    cup = cabsub.add_parser(
        "upgrade", help="rebuild the word index of a cabinet written by an older format",
        description="Rebuild the stored word index of every session (a format-3 cabinet, or "
                    "one indexed with another stemmer); nodes, edges and logs are untouched. "
                    "A cabinet that needs nothing is left as it is.")
    cup.set_defaults(func=_cabinet_upgrade)

    sess = sub.add_parser("session", help="create, list, drop sessions or show a log",
                          description="Manage the sessions of the cabinet.")
    ssub = sess.add_subparsers(dest="session_command", metavar="ACTION")
    sc = ssub.add_parser("create", help="create an empty session",
                         description="Create an empty session (an existing id is an error).")
    sc.add_argument("sid", help="session id: [a-z0-9][a-z0-9-]{0,63}")
    sc.set_defaults(func=_session_create)
    sl = ssub.add_parser("list", help="list sessions with version, rows and bytes",
                         description="List every session in the cabinet.")
    sl.add_argument("--format", choices=("table", "json"), default="table",
                    help="output format (default: table)")
    sl.set_defaults(func=_session_list)
    sd = ssub.add_parser("drop", help="delete a session and its history",
                         description="Delete a session and all of its records.")
    sd.add_argument("sid", help="session id")
    sd.set_defaults(func=_session_drop)
    slog = ssub.add_parser("log", help="show the commits of a session",
                           description="Show every commit: version, counts, what changed.")
    slog.add_argument("sid", help="session id")
    slog.add_argument("--format", choices=("text", "json"), default="text",
                      help="output format (default: text)")
    slog.set_defaults(func=_session_log)

    com = sub.add_parser("commit", help="apply a GQL Δ to a session and flush it",
                         description="Read a Δ (INSERT/SET/REMOVE/DELETE/SETTLE) from FILE or "
                                     "stdin, commit it atomically and flush the session.")
    com.add_argument("sid", help="session id")
    com.add_argument("file", nargs="?", default="-", help="file with the Δ, or - for stdin")
    com.set_defaults(func=_commit)

    rec = sub.add_parser("recall", help="recall a Shape from a session",
                         description="Seed from Q (codebook tokens or MATCH form; empty for the "
                                     "outline), walk, and print the Shape.")
    add_recall_arguments(rec)  # shared with `memnet show`
    rec.add_argument("--format", choices=("gql", "json", "dot", "mermaid"), default="gql",
                     help="gql (the Shape text), json (text and receipt), dot (Graphviz) "
                          "or mermaid (a graph LR)")
    rec.add_argument("--since", metavar="ETAG", default=None,
                     help="the etag of a Shape this q gave lately: print only what changed "
                          "since (a delta, or an unchanged line)")
    rec.set_defaults(func=_recall)

    out = sub.add_parser("outline", help="print the session outline",
                         description="The census of kinds with exemplars and laws.")
    out.add_argument("sid", help="session id")
    out.add_argument("--view", choices=("interior", "shell"), default="shell",
                     help="view of the exemplars (default shell)")
    out.add_argument("--at", type=int, default=None, metavar="VERSION",
                     help="outline as of a past version")
    out.add_argument("--format", choices=("gql", "json"), default="gql", help="output format")
    out.set_defaults(func=_outline)

    bak = sub.add_parser("backup", help="write a consistent copy of the cabinet to DEST",
                         description="Copy the whole cabinet (every session, compacted) into "
                                     "the directory DEST while it stays usable; DEST must not "
                                     "already hold a cabinet.")
    bak.add_argument("dest", help="directory for the copy")
    bak.set_defaults(func=_backup)

    exp = sub.add_parser("export", help="write a bounded slice of a session to a JSON file",
                         description="Export the working-memory slice around the anchor "
                                     "handles of MEMBER (Path-B Absorb) as a plain JSON file "
                                     "another cabinet can absorb.")
    exp.add_argument("member", help="the session to take the slice from")
    exp.add_argument("--anchor", action="append", required=True, metavar="HANDLE",
                     help="a node handle the slice is built around (repeat for several)")
    exp.add_argument("--hops", type=int, default=2, help="hops from the anchors (default 2)")
    exp.add_argument("--budget", type=int, default=None,
                     help="max rows (default 50 x the number of anchors)")
    exp.add_argument("-o", "--output", default="slice.json",
                     help="the slice file to write (default slice.json); an existing file is "
                          "refused (output_exists)")
    exp.add_argument("--force", action="store_true", help="replace an existing output file")
    exp.set_defaults(func=_export)

    ab = sub.add_parser("absorb", help="join a slice into a session (Path-B Absorb)",
                        description="Join a working-memory slice into LEAD atomically, from a "
                                    "slice file (--slice) or straight from another session of "
                                    "this cabinet (--from MEMBER --anchor H ...), then flush.")
    ab.add_argument("lead", help="the session that takes the slice in")
    ab.add_argument("--slice", default=None, metavar="FILE", help="a slice file from export")
    ab.add_argument("--from", dest="member", default=None, metavar="MEMBER",
                    help="export from this session of the same cabinet and absorb at once")
    ab.add_argument("--anchor", action="append", default=[], metavar="HANDLE",
                    help="with --from: an anchor handle (repeat for several)")
    ab.add_argument("--hops", type=int, default=2, help="with --from: hops (default 2)")
    ab.add_argument("--budget", type=int, default=None,
                    help="with --from: max rows (default 50 x the number of anchors)")
    ab.add_argument("--id-policy", choices=("keep", "reject", "remint"), default="remint",
                    help="keep handles, reject duplicates, or remint new handles (default)")
    ab.set_defaults(func=_absorb)

    ing = sub.add_parser("ingest", help="ingest a source tree or a SysML v2 model into a session",
                         description="Read PATH: a directory (its name is the root of every "
                                     "locator) gives a PKG per directory, a MOD per .py file with "
                                     "a SYM per top-level class or function, a DOC per .md file "
                                     "with a SEC per heading, CONTAINS and IMPORTS edges; its "
                                     ".sysml files, or a single .sysml file, give the model's "
                                     "packages, definitions, usages and requirements with "
                                     "CONTAINS, TYPED, SPECIALIZES, SATISFIES and CONNECTS "
                                     "edges. Only files that changed since the last ingest are "
                                     "parsed; the difference is committed (one version for the "
                                     "tree, one for the model) and flushed.")
    ing.add_argument("sid", help="session id")
    ing.add_argument("path", help="the directory or .sysml file to ingest")
    ing.add_argument("--create", action="store_true",
                     help="create the session first if the cabinet does not hold it")
    ing.add_argument("--format", choices=("text", "json"), default="text",
                     help="text (one summary line, default) or json")
    ing.set_defaults(func=_ingest)

    sn = sub.add_parser("snap", help="partition a SysML v2 model into a catalog and interior "
                                     "sessions (Model Snap)",
                        description="Cut MODEL (a .sysml file or a directory of them) along its "
                                    "ownership tree: PREFIX-cat holds packages, definitions, "
                                    "requirements and one SES node per interior; PREFIX-1 .. "
                                    "PREFIX-k each hold whole subtrees within --budget rows, with "
                                    "STUB nodes for links that cross a cut. Sessions are created "
                                    "as needed, synced and flushed; snapping an unchanged model "
                                    "again writes nothing. A file that does not parse is left "
                                    "out and listed (path:line) on stderr, unless --strict; the "
                                    "summary counts the warnings, --format json lists them.")
    sn.add_argument("model", help="a .sysml file or a directory of .sysml files")
    sn.add_argument("--prefix", required=True,
                    help="session id prefix: PREFIX-cat and PREFIX-1 .. PREFIX-k")
    sn.add_argument("--budget", type=int, default=LIMITS.max_rows,
                    help=f"most rows (nodes + edges) in one interior (default "
                         f"{LIMITS.max_rows}, the default M)")
    sn.add_argument("--strict", action="store_true",
                    help="fail (model_syntax) on the first file that does not parse, "
                         "writing nothing")
    sn.add_argument("--format", choices=("text", "json"), default="text",
                    help="text (a summary and one line per interior, default) or json (with "
                         "the warnings and the files not ingested)")
    sn.set_defaults(func=_snap)

    cp = cabsub.add_parser("copy", help="copy sessions from cabinet SRC to cabinet DST",
                            description="Copy the sessions SID... (default: all) from SRC to "
                                        "DST with their whole history, each in one transaction, "
                                        "and check each copy against the source. A session "
                                        "already in DST is refused (session_exists) before "
                                        "anything is written.")
    cp.add_argument("src", metavar="SRC", help="source cabinet: a directory or a URL")
    cp.add_argument("dst", metavar="DST", help="destination cabinet: a directory or a URL")
    cp.add_argument("sids", nargs="*", metavar="SID", help="sessions to copy (default: all)")
    cp.add_argument("--format", choices=("text", "json"), default="text",
                    help="text (a line per session, default) or json")
    cp.set_defaults(func=_cabinet_copy)

    ver = sub.add_parser("ver", help="trace every requirement of the model to the tests naming it",
                         description="Collect the tests under --tests with pytest (nothing runs) "
                                     "and match their @pytest.mark.req(...) ids against the "
                                     "requirements of the SysML model under --models; print the "
                                     "requirement x test matrix. Exit 1 (trace_failed) when a "
                                     "requirement has no test, a test names an unknown id or an "
                                     "MN-VER test (under ver/) names none.")
    ver.add_argument("--models", default="sysml-models", metavar="DIR",
                     help="the model directory (default ./sysml-models)")
    ver.add_argument("--tests", default="tests", metavar="DIR",
                     help="the tests directory; pytest runs in its parent (default ./tests)")
    ver.add_argument("--format", choices=("text", "json"), default="text",
                     help="text (the matrix, default) or json (the whole trace)")
    ver.set_defaults(func=_ver)

    # the other faces live in their own modules, imported only when used
    wire = sub.add_parser("wire", help="serve the framed GQL wire on stdin/stdout",
                          description="Read statements from stdin and answer each with a "
                                      "framed response on stdout (docs/gql-wire-profile.md).")
    wire.set_defaults(func=_lazy("wire"))
    mcp = sub.add_parser("mcp", help="serve MemNet as an MCP server over stdio",
                         description="Run the MCP server (needs the extra: "
                                     "pip install 'memnet[mcp]').")
    mcp.set_defaults(func=_lazy("mcp"))
    show = sub.add_parser("show", help="render a Shape as a picture with Graphviz",
                          description="Recall Q from SID and render the Shape to an SVG or PNG "
                                      "file with Graphviz (dot).")
    show.set_defaults(func=_lazy("render"))
    host = sub.add_parser("host", help="index and search a library, snap hits into a session "
                                       "(Host Snap)",
                          description="Host Snap: a BM25 index of a tree outside the engine "
                                      "(index), its search (search), and hits committed into a "
                                      "session as locators (snap).")
    host.set_defaults(func=_lazy("host"))
    for face, parser in (("wire", wire), ("mcp", mcp), ("render", show), ("host", host)):
        _add_face_arguments(face, parser)
    return p


def _lazy(module: str) -> Any:
    """The ``run(args)`` of a face module, imported when the command runs."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        mod = importlib.import_module(f"memnet.faces.{module}")
        return int(mod.run(args))

    return run


def _add_face_arguments(module: str, parser: argparse.ArgumentParser) -> None:
    # each face module declares its own arguments in add_arguments(parser);
    # importing it must stay cheap and must not need optional extras
    import importlib

    mod = importlib.import_module(f"memnet.faces.{module}")
    add = getattr(mod, "add_arguments", None)
    if add is not None:
        add(parser)


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if args_in in (["--version"], ["-V"]):  # answered before the parser is built
        print(f"memnet {__version__}")
        return 0
    parser = build_parser()
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except MemNetError as e:
        print(f"memnet: error: {e.code}: {e.message}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (e.g. `| head`): not an error
        sys.stderr.close()
        return 0
    except OSError as e:
        err = os_error(e)
        print(f"memnet: error: {err.code}: {err.message}", file=sys.stderr)
        return 1


__all__ = ["build_parser", "main"]
