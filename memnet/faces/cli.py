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
import os
import sys
from collections.abc import Sequence
from typing import Any

from .._version import __version__
from ..errors import MemNetError, os_error
from ..limits import LIMITS
from .commands import DEMO_DELTA as DEMO_DELTA  # the demo's Δ, public for tests and docs
from .commands import (
    _absorb,
    _backup,
    _cabinet_copy,
    _cabinet_upgrade,
    _commit,
    _demo,
    _export,
    _import_mcp_memory,
    _ingest,
    _init,
    _outline,
    _recall,
    _session_create,
    _session_drop,
    _session_list,
    _session_log,
    _snap,
    _ver,
)
from .render import add_recall_arguments


# -- parser ----------------------------------------------------------------------
class _Unused:
    """Stands in for the parser of a command that is not being run: every call
    is accepted and ignored, so building the parser costs one command's worth."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


class _OneCommand:
    """The subparsers action, adding only the parser of ``command`` (all of
    them when ``command`` is None)."""

    def __init__(self, sub: Any, command: str | None) -> None:
        self.sub, self.command = sub, command
        self.names: list[str] = []

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        self.names.append(name)
        if self.command is None or name == self.command:
            return self.sub.add_parser(name, **kwargs)
        return _Unused()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``memnet`` parser; given ``command``, only that command's parser is
    built under the top level (a fresh process runs one command). A word that
    names no command gets the whole parser, whose error lists them all."""
    p = argparse.ArgumentParser(
        prog="memnet",
        description="MemNet: bounded working memory for LLM agents (Recall a Shape, Commit a Δ).",
    )
    p.add_argument("-V", "--version", action="version", version=f"memnet {__version__}")
    p.add_argument(
        "--home",
        default=None,
        help="cabinet directory, or a postgresql://user@host:port/dbname URL "
        "(default: $MEMNET_HOME, else ./.memnet)",
    )
    sub = _OneCommand(p.add_subparsers(dest="command", metavar="COMMAND"), command)

    demo = sub.add_parser(
        "demo",
        help="commit a few tasks and laws into a session, recall them, print the Shape",
        description="On first run, create the session, commit a small set of tasks, laws, "
        "modules and a decision and flush it to the cabinet; on every run, recall "
        "it with a codebook query and print the Shape and its receipt.",
    )
    demo.add_argument("--session", default="demo", help="session id (default: demo)")
    demo.add_argument(
        "-q",
        default="TSK status:open pricing",
        help="the Recall query (default: 'TSK status:open pricing')",
    )
    demo.set_defaults(func=_demo)

    init = sub.add_parser(
        "init",
        help="create the cabinet directory if needed",
        description="Create (or check) the cabinet at --home.",
    )
    init.set_defaults(func=_init)

    cabp = sub.add_parser(
        "cabinet",
        help="work on whole cabinets (upgrade one, copy sessions between two)",
        description="Commands on whole cabinets: directories (LMDB) or postgresql:// URLs.",
    )
    cabp.set_defaults(help_of=cabp)  # with no ACTION: this parser's help
    cabsub = cabp.add_subparsers(dest="cabinet_command", metavar="ACTION")
    cup = cabsub.add_parser(
        "upgrade",
        help="rewrite a cabinet of an older format (or stemmer) in this format",
        description="Bring a cabinet written by an older format up to this one, in place: "
        "from format 3 the records are sealed again, from format 3 or 4 the "
        "nodes are written as node chunks, from format 5 the stored index is "
        "moved to format 6's buckets (no node is read); before format 5, or "
        "with another stemmer, the index is rebuilt from the nodes. Stop every "
        "other process that uses the cabinet first. An upgrade that stopped is "
        "run again and goes on where it was; a cabinet that needs nothing is "
        "left as it is.",
    )
    cup.set_defaults(func=_cabinet_upgrade)

    sess = sub.add_parser(
        "session",
        help="create, list, drop sessions or show a log",
        description="Manage the sessions of the cabinet.",
    )
    sess.set_defaults(help_of=sess)
    ssub = sess.add_subparsers(dest="session_command", metavar="ACTION")
    sc = ssub.add_parser(
        "create",
        help="create an empty session",
        description="Create an empty session (an existing id is an error).",
    )
    sc.add_argument("sid", help="session id: [a-z0-9][a-z0-9-]{0,63}")
    sc.set_defaults(func=_session_create)
    sl = ssub.add_parser(
        "list",
        help="list sessions with version, rows and bytes",
        description="List every session in the cabinet.",
    )
    sl.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="output format (default: table)",
    )
    sl.set_defaults(func=_session_list)
    sd = ssub.add_parser(
        "drop",
        help="delete a session and its history",
        description="Delete a session and all of its records.",
    )
    sd.add_argument("sid", help="session id")
    sd.set_defaults(func=_session_drop)
    slog = ssub.add_parser(
        "log",
        help="show the commits of a session",
        description="Show every commit: version, counts, what changed.",
    )
    slog.add_argument("sid", help="session id")
    slog.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    slog.set_defaults(func=_session_log)

    com = sub.add_parser(
        "commit",
        help="apply a GQL Δ to a session and flush it",
        description="Read a Δ (INSERT/SET/REMOVE/DELETE/SETTLE) from FILE or "
        "stdin, commit it atomically and flush the session.",
    )
    com.add_argument("sid", help="session id")
    com.add_argument("file", nargs="?", default="-", help="file with the Δ, or - for stdin")
    com.set_defaults(func=_commit)

    rec = sub.add_parser(
        "recall",
        help="recall a Shape from a session",
        description="Seed from Q (codebook tokens or MATCH form; empty for the "
        "outline), walk, and print the Shape.",
    )
    add_recall_arguments(rec)  # shared with `memnet show`
    rec.add_argument(
        "--format",
        choices=("gql", "json", "dot", "mermaid"),
        default="gql",
        help="gql (the Shape text), json (text and receipt), dot (Graphviz) "
        "or mermaid (a graph LR)",
    )
    rec.add_argument(
        "--since",
        metavar="ETAG",
        default=None,
        help="the etag of a Shape this q gave lately: print only what changed "
        "since (a delta, or an unchanged line)",
    )
    rec.set_defaults(func=_recall)

    out = sub.add_parser(
        "outline",
        help="print the session outline",
        description="The census of kinds with exemplars and laws.",
    )
    out.add_argument("sid", help="session id")
    out.add_argument(
        "--view",
        choices=("interior", "shell"),
        default="shell",
        help="view of the exemplars (default shell)",
    )
    out.add_argument(
        "--at", type=int, default=None, metavar="VERSION", help="outline as of a past version"
    )
    out.add_argument("--format", choices=("gql", "json"), default="gql", help="output format")
    out.set_defaults(func=_outline)

    bak = sub.add_parser(
        "backup",
        help="write a consistent copy of the cabinet to DEST",
        description="Copy the whole cabinet (every session, compacted) into "
        "the directory DEST while it stays usable; DEST must not "
        "already hold a cabinet.",
    )
    bak.add_argument("dest", help="directory for the copy")
    bak.set_defaults(func=_backup)

    exp = sub.add_parser(
        "export",
        help="write a bounded slice of a session to a JSON file",
        description="Export the working-memory slice around the anchor "
        "handles of MEMBER (Path-B Absorb) as a plain JSON file "
        "another cabinet can absorb.",
    )
    exp.add_argument("member", help="the session to take the slice from")
    exp.add_argument(
        "--anchor",
        action="append",
        required=True,
        metavar="HANDLE",
        help="a node handle the slice is built around (repeat for several)",
    )
    exp.add_argument("--hops", type=int, default=2, help="hops from the anchors (default 2)")
    exp.add_argument(
        "--budget", type=int, default=None, help="max rows (default 50 x the number of anchors)"
    )
    exp.add_argument(
        "-o",
        "--output",
        default="slice.json",
        help="the slice file to write (default slice.json); an existing file is "
        "refused (output_exists)",
    )
    exp.add_argument("--force", action="store_true", help="replace an existing output file")
    exp.set_defaults(func=_export)

    ab = sub.add_parser(
        "absorb",
        help="join a slice into a session (Path-B Absorb)",
        description="Join a working-memory slice into LEAD atomically, from a "
        "slice file (--slice) or straight from another session of "
        "this cabinet (--from MEMBER --anchor H ...), then flush. "
        "Prints JSON: version, changed, created, matched, updated "
        "and the handle map.",
    )
    ab.add_argument("lead", help="the session that takes the slice in")
    ab.add_argument("--slice", default=None, metavar="FILE", help="a slice file from export")
    ab.add_argument(
        "--from",
        dest="member",
        default=None,
        metavar="MEMBER",
        help="export from this session of the same cabinet and absorb at once",
    )
    ab.add_argument(
        "--anchor",
        action="append",
        default=[],
        metavar="HANDLE",
        help="with --from: an anchor handle (repeat for several)",
    )
    ab.add_argument("--hops", type=int, default=2, help="with --from: hops (default 2)")
    ab.add_argument(
        "--budget",
        type=int,
        default=None,
        help="with --from: max rows (default 50 x the number of anchors)",
    )
    ab.add_argument(
        "--id-policy",
        choices=("merge", "remint", "reject", "keep"),
        default="merge",
        help="merge into what LEAD holds by locator, origin or name (default; "
        "the same slice again changes nothing), remint new handles, reject "
        "duplicates, or keep handles",
    )
    ab.set_defaults(func=_absorb)

    ing = sub.add_parser(
        "ingest",
        help="ingest a source tree or a SysML v2 model into a session",
        description="Read PATH: a directory (its name is the root of every "
        "locator) gives a PKG per directory, a MOD per .py file with "
        "a SYM per top-level class or function, a DOC per .md file "
        "with a SEC per heading, CONTAINS and IMPORTS edges; its "
        ".sysml files, or a single .sysml file, give the model's "
        "packages, definitions, usages and requirements with "
        "CONTAINS, TYPED, SPECIALIZES, SATISFIES and CONNECTS "
        "edges. Only files that changed since the last ingest are "
        "parsed; the difference is committed (one version for the "
        "tree, one for the model) and flushed.",
    )
    ing.add_argument("sid", help="session id")
    ing.add_argument("path", help="the directory or .sysml file to ingest")
    ing.add_argument(
        "--create",
        action="store_true",
        help="create the session first if the cabinet does not hold it",
    )
    ing.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (one summary line, default) or json",
    )
    ing.set_defaults(func=_ingest)

    imp = sub.add_parser(
        "import",
        help="bring another memory tool's file into a session",
        description="Import the memory of another tool into a session, in "
        "one commit. The one format so far: mcp-memory.",
    )
    imp.set_defaults(help_of=imp)
    isub = imp.add_subparsers(dest="import_command", metavar="FORMAT")
    im = isub.add_parser(
        "mcp-memory",
        help="import the JSONL file of the reference MCP memory server",
        description="Read FILE, the JSONL memory of @modelcontextprotocol/server-memory (one "
        "entity or relation a line), check every line, then write it into SID as "
        "one commit: an entity becomes a node of kind entityType in upper case "
        "(person -> PERSON) with name, observations and locator 'mem:<name>'; a "
        "relation an edge of type relationType in upper case (works at -> "
        "WORKS_AT). Nodes the session holds by locator are updated, edges it holds "
        "are not drawn twice, nothing is removed: importing the same file again "
        "writes nothing. A damaged line exits 1 with import_syntax naming it, and "
        "nothing is written. See docs/import.md.",
    )
    im.add_argument("file", help="the memory file (memory.jsonl)")
    im.add_argument("sid", help="session id")
    im.add_argument(
        "--create",
        action="store_true",
        help="create the session first if the cabinet does not hold it (its rate "
        "cap sized to the file when the default is too small)",
    )
    im.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (one summary line, default) or json",
    )
    im.set_defaults(func=_import_mcp_memory)

    sn = sub.add_parser(
        "snap",
        help="partition a SysML v2 model into a catalog and interior sessions (Model Snap)",
        description="Cut MODEL (a .sysml file or a directory of them) along its "
        "ownership tree: PREFIX-cat holds packages, definitions, "
        "requirements and one SES node per interior; PREFIX-1 .. "
        "PREFIX-k each hold whole subtrees within --budget rows, with "
        "STUB nodes for links that cross a cut. Sessions are created "
        "as needed, synced and flushed; snapping an unchanged model "
        "again writes nothing. A file that does not parse is left "
        "out and listed (path:line) on stderr, unless --strict; the "
        "summary counts the warnings, --format json lists them.",
    )
    sn.add_argument("model", help="a .sysml file or a directory of .sysml files")
    sn.add_argument(
        "--prefix", required=True, help="session id prefix: PREFIX-cat and PREFIX-1 .. PREFIX-k"
    )
    sn.add_argument(
        "--budget",
        type=int,
        default=LIMITS.max_rows,
        help=f"most rows (nodes + edges) in one interior (default "
        f"{LIMITS.max_rows}, the default M)",
    )
    sn.add_argument(
        "--strict",
        action="store_true",
        help="fail (model_syntax) on the first file that does not parse, writing nothing",
    )
    sn.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (a summary and one line per interior, default) or json (with "
        "the warnings and the files not ingested)",
    )
    sn.set_defaults(func=_snap)

    cp = cabsub.add_parser(
        "copy",
        help="copy sessions from cabinet SRC to cabinet DST",
        description="Copy the sessions SID... (default: all) from SRC to "
        "DST with their whole history, each in one transaction, "
        "and check each copy against the source. A session "
        "already in DST is refused (session_exists) before "
        "anything is written.",
    )
    cp.add_argument("src", metavar="SRC", help="source cabinet: a directory or a URL")
    cp.add_argument("dst", metavar="DST", help="destination cabinet: a directory or a URL")
    cp.add_argument("sids", nargs="*", metavar="SID", help="sessions to copy (default: all)")
    cp.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (a line per session, default) or json",
    )
    cp.set_defaults(func=_cabinet_copy)

    ver = sub.add_parser(
        "ver",
        help="trace every requirement of the model to the tests naming it",
        description="Collect the tests under --tests with pytest (nothing runs) "
        "and match their @pytest.mark.req(...) ids against the "
        "requirements of the SysML model under --models; print the "
        "requirement x test matrix. Exit 1 (trace_failed) when a "
        "requirement has no test, a test names an unknown id or an "
        "MN-VER test (under ver/) names none.",
    )
    ver.add_argument(
        "--models",
        default="sysml-models",
        metavar="DIR",
        help="the model directory (default ./sysml-models)",
    )
    ver.add_argument(
        "--tests",
        default="tests",
        metavar="DIR",
        help="the tests directory; pytest runs in its parent (default ./tests)",
    )
    ver.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (the matrix, default) or json (the whole trace)",
    )
    ver.add_argument(
        "--commit",
        metavar="SID",
        default=None,
        help="also write the trace into session SID: a TEST node per test with "
        "VERIFIES links to the requirements it names (the model is "
        "ingested first when SID holds none of them); again later, only "
        "what changed is written",
    )
    ver.set_defaults(func=_ver)

    # the other faces live in their own modules, imported only when used
    wire = sub.add_parser(
        "wire",
        help="serve the framed GQL wire on stdin/stdout",
        description="Read statements from stdin and answer each with a "
        "framed response on stdout (docs/gql-wire-profile.md).",
    )
    wire.set_defaults(func=_lazy("wire"))
    mcp = sub.add_parser(
        "mcp",
        help="serve MemNet as an MCP server over stdio",
        description="Run the MCP server over stdin/stdout (the official "
        "SDK: pip install 'memnet[mcp]'; docs/mcp.md).",
    )
    mcp.set_defaults(func=_lazy("mcp"))
    show = sub.add_parser(
        "show",
        help="render a Shape as a picture with Graphviz",
        description="Recall Q from SID and render the Shape to an SVG or PNG "
        "file with Graphviz (dot).",
    )
    show.set_defaults(func=_lazy("render"))
    host = sub.add_parser(
        "host",
        help="index and search a library, snap hits into a session (Host Snap)",
        description="Host Snap: a BM25 index of a tree outside the engine "
        "(index), its search (search), and hits committed into a "
        "session as locators (snap).",
    )
    host.set_defaults(func=_lazy("host"))
    for face, parser in (("wire", wire), ("mcp", mcp), ("render", show), ("host", host)):
        if not isinstance(parser, _Unused):
            _add_face_arguments(face, parser)
    if command is not None and command not in sub.names:
        return build_parser()
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


def _command_of(args: list[str]) -> str | None:
    """The command word of a command line (None when options come first that
    are not ``--home``, e.g. ``--help``)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--home":
            i += 2
        elif a.startswith("--home="):
            i += 1
        elif a.startswith("-"):
            return None
        else:
            return a
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if args_in in (["--version"], ["-V"]):  # answered before the parser is built
        print(f"memnet {__version__}")
        return 0
    parser = build_parser(_command_of(args_in))
    args = parser.parse_args(args_in)
    if getattr(sys.stdout, "errors", None) == "strict" and hasattr(sys.stdout, "reconfigure"):
        # a path that is not UTF-8 (its bytes kept as surrogates) prints
        # escaped, as stderr prints it, instead of failing the command
        sys.stdout.reconfigure(errors="backslashreplace")
    if not getattr(args, "func", None):
        getattr(args, "help_of", parser).print_help(sys.stderr)
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
    except KeyboardInterrupt:  # Ctrl-C: whatever was not flushed was not written
        print("memnet: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a fault of MemNet's own: one line, the traceback on request
        if os.environ.get("MEMNET_DEBUG"):
            raise
        print(
            f"memnet: error: internal: {type(e).__name__}: {e} (this is a bug in MemNet; "
            "set MEMNET_DEBUG=1 to see where)",
            file=sys.stderr,
        )
        return 1


__all__ = ["build_parser", "main"]
