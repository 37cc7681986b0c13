"""The ``memnet`` commands, declared once: the table the parser is built from.

A :class:`Command` gives a command's name, its one-line help, its description,
its arguments (:class:`Opt`: the names and keywords ``add_argument`` takes),
the function that runs it and, for a command with actions (``memnet session
create``), the actions. The function is named ``"module:function"`` in
:mod:`memnet.faces` and imported only when the command runs, so building the
parser imports no command and no engine; ``cli.build_parser`` builds only the
command a process runs.

What the MCP tools take too (a recall's hops, a host search's hits, an absorb's
id policy) is described in :mod:`memnet.faces.params`, with its default and
choices; :func:`shared` makes the option from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._version import __version__
from . import params as P
from .params import Param


@dataclass(frozen=True, slots=True)
class Opt:
    """One argument of a command: what ``parser.add_argument(*names, **kw)`` takes."""

    names: tuple[str, ...]
    kw: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Command:
    """One command (see the module doc). ``run`` is ``"module:function"``; a
    command with ``actions`` prints its help when run without one, its
    subparsers keep the action in ``dest`` and show ``metavar``."""

    name: str
    help: str
    description: str
    args: tuple[Opt, ...] = ()
    run: str | None = None
    actions: tuple[Command, ...] = ()
    dest: str = ""
    metavar: str = "ACTION"
    epilog: str | Callable[[], str] | None = None


def opt(*names: str, **kw: Any) -> Opt:
    """The argument ``names`` with the keywords of ``add_argument``."""
    return Opt(names, kw)


def shared(p: Param, *names: str, **kw: Any) -> Opt:
    """The argument ``names`` described by ``p`` (its help, default and
    choices), with ``kw`` added or taking their place."""
    base: dict[str, Any] = {"help": p.cli}
    if p.default is not None:
        base["default"] = p.default
    if p.choices:
        base["choices"] = p.choices
    return Opt(names, base | kw)


def text_or_json(help: str) -> Opt:
    """``--format text|json``, text by default."""
    return opt("--format", choices=TEXT_JSON, default="text", help=help)


def mcp_epilog() -> str:
    """The end of ``memnet mcp --help``: the tools it serves, from their table."""
    from .mcp_tools import TOOLS

    return (
        f"Serves over stdio until the client closes stdin. Tools: "
        f"{', '.join(t.name for t in TOOLS)} (docs/mcp.md)."
    )


TEXT_JSON = ("text", "json")
SID = shared(P.SESSION, "sid")
#: The recall options of ``memnet recall`` and ``memnet show``.
RECALL_ARGS = (
    SID,
    shared(P.Q, "q", nargs="?"),
    shared(P.HOPS, "--hops", type=int),
    shared(P.ROWS, "--rows", type=int, default=None),
    shared(P.LIMIT, "--limit", type=int, default=None),
    shared(P.MAX_TOKENS, "--max-tokens", type=int, default=None, metavar="N"),
    shared(P.FANOUT, "--fanout", type=int),
    shared(P.VIEW, "--view"),
    opt("--no-laws", action="store_true", help=P.LAWS.cli),
    opt("--at", type=int, default=None, metavar="VERSION", help="recall as of a past version"),
)
#: The options every ``memnet host`` action ends with.
HOST_COMMON = (
    shared(P.INDEX, "--index", default=None, metavar="DIR"),
    text_or_json("text (default) or json"),
)

DEMO = Command(
    "demo",
    "commit a few tasks and laws into a session, recall them, print the Shape",
    "On first run, create the session, commit a small set of tasks, laws, "
    "modules and a decision and flush it to the cabinet; on every run, recall "
    "it with a codebook query and print the Shape and its receipt.",
    (
        opt("--session", default="demo", help="session id (default: demo)"),
        opt(
            "-q",
            default="TSK status:open pricing",
            help="the Recall query (default: 'TSK status:open pricing')",
        ),
    ),
    "demo:demo",
)
INIT = Command(
    "init",
    "create the cabinet directory if needed",
    "Create (or check) the cabinet at --home.",
    run="commands:init",
)
CABINET = Command(
    "cabinet",
    "work on whole cabinets (upgrade one, copy sessions between two)",
    "Commands on whole cabinets: directories (LMDB) or postgresql:// URLs.",
    dest="cabinet_command",
    actions=(
        Command(
            "upgrade",
            "rewrite a cabinet of an older format (or stemmer) in this format",
            "Bring a cabinet written by an older format up to this one, in place: "
            "from format 3 the records are sealed again, from format 3 or 4 the "
            "nodes are written as node chunks, from format 5 the stored index is "
            "moved to format 6's buckets (no node is read); before format 5, or "
            "with another stemmer, the index is rebuilt from the nodes. Stop every "
            "other process that uses the cabinet first. An upgrade that stopped is "
            "run again and goes on where it was; a cabinet that needs nothing is "
            "left as it is.",
            run="commands:cabinet_upgrade",
        ),
        Command(
            "copy",
            "copy sessions from cabinet SRC to cabinet DST",
            "Copy the sessions SID... (default: all) from SRC to "
            "DST with their whole history, each in one transaction, "
            "and check each copy against the source. A session "
            "already in DST is refused (session_exists) before "
            "anything is written.",
            (
                opt("src", metavar="SRC", help="source cabinet: a directory or a URL"),
                opt("dst", metavar="DST", help="destination cabinet: a directory or a URL"),
                opt("sids", nargs="*", metavar="SID", help="sessions to copy (default: all)"),
                text_or_json("text (a line per session, default) or json"),
            ),
            "commands:cabinet_copy",
        ),
    ),
)
SESSION = Command(
    "session",
    "create, list, drop sessions or show a log",
    "Manage the sessions of the cabinet.",
    dest="session_command",
    actions=(
        Command(
            "create",
            "create an empty session",
            "Create an empty session (an existing id is an error).",
            (shared(P.NEW_SESSION, "sid"),),
            "commands:session_create",
        ),
        Command(
            "list",
            "list sessions with version, rows and bytes",
            "List every session in the cabinet.",
            (
                opt(
                    "--format",
                    choices=("table", "json"),
                    default="table",
                    help="output format (default: table)",
                ),
            ),
            "commands:session_list",
        ),
        Command(
            "drop",
            "delete a session and its history",
            "Delete a session and all of its records.",
            (SID,),
            "commands:session_drop",
        ),
        Command(
            "log",
            "show the commits of a session",
            "Show every commit: version, counts, what changed.",
            (
                SID,
                text_or_json("output format (default: text)"),
            ),
            "commands:session_log",
        ),
    ),
)
COMMIT = Command(
    "commit",
    "apply a GQL Δ to a session and flush it",
    "Read a Δ (INSERT/SET/REMOVE/DELETE/SETTLE) from FILE or "
    "stdin, commit it atomically and flush the session.",
    (SID, opt("file", nargs="?", default="-", help="file with the Δ, or - for stdin")),
    "commands:commit",
)
RECALL = Command(
    "recall",
    "recall a Shape from a session",
    "Seed from Q (codebook tokens or MATCH form; empty for the "
    "outline), walk, and print the Shape.",
    (
        *RECALL_ARGS,
        opt(
            "--format",
            choices=("gql", "json", "dot", "mermaid"),
            default="gql",
            help="gql (the Shape text), json (text and receipt), dot (Graphviz) "
            "or mermaid (a graph LR)",
        ),
        shared(P.SINCE, "--since", metavar="ETAG", default=None),
    ),
    "commands:recall",
)
OUTLINE = Command(
    "outline",
    "print the session outline",
    "The census of kinds with exemplars and laws.",
    (
        SID,
        # the order --help has always shown
        shared(P.OUTLINE_VIEW, "--view", choices=("interior", "shell")),
        opt("--at", type=int, default=None, metavar="VERSION", help="outline as of a past version"),
        opt("--format", choices=("gql", "json"), default="gql", help="output format"),
    ),
    "commands:outline",
)
BACKUP = Command(
    "backup",
    "write a consistent copy of the cabinet to DEST",
    "Copy the whole cabinet (every session, compacted) into "
    "the directory DEST while it stays usable; DEST must not "
    "already hold a cabinet.",
    (opt("dest", help="directory for the copy"),),
    "commands:backup",
)
EXPORT = Command(
    "export",
    "write a bounded slice of a session to a JSON file",
    "Export the working-memory slice around the anchor "
    "handles of MEMBER (Path-B Absorb) as a plain JSON file "
    "another cabinet can absorb.",
    (
        opt("member", help="the session to take the slice from"),
        opt(
            "--anchor",
            action="append",
            required=True,
            metavar="HANDLE",
            help="a node handle the slice is built around (repeat for several)",
        ),
        shared(P.SLICE_HOPS, "--hops", type=int),
        opt(
            "--budget", type=int, default=None, help="max rows (default 50 x the number of anchors)"
        ),
        opt(
            "-o",
            "--output",
            default="slice.json",
            help="the slice file to write (default slice.json); an existing file is "
            "refused (output_exists)",
        ),
        opt("--force", action="store_true", help="replace an existing output file"),
    ),
    "transfer:export",
)
ABSORB = Command(
    "absorb",
    "join a slice into a session (Path-B Absorb)",
    "Join a working-memory slice into LEAD atomically, from a "
    "slice file (--slice) or straight from another session of "
    "this cabinet (--from MEMBER --anchor H ...), then flush. "
    "Prints JSON: version, changed, created, matched, updated "
    "and the handle map.",
    (
        opt("lead", help="the session that takes the slice in"),
        opt("--slice", default=None, metavar="FILE", help="a slice file from export"),
        opt(
            "--from",
            dest="member",
            default=None,
            metavar="MEMBER",
            help="export from this session of the same cabinet and absorb at once",
        ),
        opt(
            "--anchor",
            action="append",
            default=[],
            metavar="HANDLE",
            help="with --from: an anchor handle (repeat for several)",
        ),
        shared(P.SLICE_HOPS, "--hops", type=int, help="with --from: hops (default 2)"),
        opt(
            "--budget",
            type=int,
            default=None,
            help="with --from: max rows (default 50 x the number of anchors)",
        ),
        # the order --help has always shown
        shared(P.ID_POLICY, "--id-policy", choices=("merge", "remint", "reject", "keep")),
    ),
    "transfer:absorb",
)
INGEST = Command(
    "ingest",
    "ingest a source tree or a SysML v2 model into a session",
    "Read PATH: a directory (its name is the root of every "
    "locator) gives a PKG per directory, a MOD per .py file with "
    "a SYM per top-level class or function, a DOC per .md file "
    "with a SEC per heading, CONTAINS and IMPORTS edges; its "
    ".sysml files, or a single .sysml file, give the model's "
    "packages, definitions, usages and requirements with "
    "CONTAINS, TYPED, SPECIALIZES, SATISFIES and CONNECTS "
    "edges. Only files that changed since the last ingest are "
    "parsed; the difference is committed (one version for the "
    "tree, one for the model) and flushed.",
    (
        SID,
        shared(P.INGEST_PATH, "path"),
        shared(P.CREATE, "--create", action="store_true"),
        text_or_json("text (one summary line, default) or json"),
    ),
    "transfer:ingest",
)
IMPORT = Command(
    "import",
    "bring another memory tool's file into a session",
    "Import the memory of another tool into a session, in "
    "one commit. The one format so far: mcp-memory.",
    dest="import_command",
    metavar="FORMAT",
    actions=(
        Command(
            "mcp-memory",
            "import the JSONL file of the reference MCP memory server",
            "Read FILE, the JSONL memory of @modelcontextprotocol/server-memory (one "
            "entity or relation a line), check every line, then write it into SID as "
            "one commit: an entity becomes a node of kind entityType in upper case "
            "(person -> PERSON) with name, observations and locator 'mem:<name>'; a "
            "relation an edge of type relationType in upper case (works at -> "
            "WORKS_AT). Nodes the session holds by locator are updated, edges it holds "
            "are not drawn twice, nothing is removed: importing the same file again "
            "writes nothing. A damaged line exits 1 with import_syntax naming it, and "
            "nothing is written. See docs/import.md.",
            (
                opt("file", help="the memory file (memory.jsonl)"),
                SID,
                shared(
                    P.CREATE,
                    "--create",
                    action="store_true",
                    help="create the session first if the cabinet does not hold it (its "
                    "rate cap sized to the file when the default is too small)",
                ),
                text_or_json("text (one summary line, default) or json"),
            ),
            "transfer:import_mcp_memory",
        ),
    ),
)
SNAP = Command(
    "snap",
    "partition a SysML v2 model into a catalog and interior sessions (Model Snap)",
    "Cut MODEL (a .sysml file or a directory of them) along its "
    "ownership tree: PREFIX-cat holds packages, definitions, "
    "requirements and one SES node per interior; PREFIX-1 .. "
    "PREFIX-k each hold whole subtrees within --budget rows, with "
    "STUB nodes for links that cross a cut. Sessions are created "
    "as needed, synced and flushed; snapping an unchanged model "
    "again writes nothing. A file that does not parse is left "
    "out and listed (path:line) on stderr, unless --strict; the "
    "summary counts the warnings, --format json lists them.",
    (
        shared(P.MODEL, "model"),
        shared(P.PREFIX, "--prefix", required=True),
        shared(P.BUDGET, "--budget", type=int),
        shared(P.STRICT, "--strict", action="store_true"),
        text_or_json(
            "text (a summary and one line per interior, default) or json (with "
            "the warnings and the files not ingested)"
        ),
    ),
    "transfer:snap",
)
VER = Command(
    "ver",
    "trace every requirement of the model to the tests naming it",
    "Collect the tests under --tests with pytest (nothing runs) "
    "and match their @pytest.mark.req(...) ids against the "
    "requirements of the SysML model under --models; print the "
    "requirement x test matrix. Exit 1 (trace_failed) when a "
    "requirement has no test, a test names an unknown id or an "
    "MN-VER test (under ver/) names none.",
    (
        opt(
            "--models",
            default="sysml-models",
            metavar="DIR",
            help="the model directory (default ./sysml-models)",
        ),
        opt(
            "--tests",
            default="tests",
            metavar="DIR",
            help="the tests directory; pytest runs in its parent (default ./tests)",
        ),
        text_or_json("text (the matrix, default) or json (the whole trace)"),
        opt(
            "--commit",
            metavar="SID",
            default=None,
            help="also write the trace into session SID: a TEST node per test with "
            "VERIFIES links to the requirements it names (the model is "
            "ingested first when SID holds none of them); again later, only "
            "what changed is written",
        ),
    ),
    "transfer:ver",
)
WIRE = Command(
    "wire",
    "serve the framed GQL wire on stdin/stdout",
    "Read statements from stdin and answer each with a "
    "framed response on stdout (docs/gql-wire-profile.md).",
    (
        opt(
            "--session",
            default=None,
            metavar="SID",
            help="select SID before the first statement, creating it if missing "
            "(as USE SID CREATE; but without a response)",
        ),
    ),
    "wire:run",
)
MCP = Command(
    "mcp",
    "serve MemNet as an MCP server over stdio",
    "Run the MCP server over stdin/stdout (the official "
    "SDK: pip install 'memnet[mcp]'; docs/mcp.md).",
    (
        opt(
            "--root",
            action="append",
            default=[],
            metavar="DIR",
            help="a directory the tools that read files (ingest, snap, host "
            "index) may read, with all below it; repeat for several. "
            "Without one, only the roots the client lists; with neither, "
            "those tools are off",
        ),
    ),
    "mcp:run",
    epilog=mcp_epilog,
)
SHOW = Command(
    "show",
    "render a Shape as a picture with Graphviz",
    "Recall Q from SID and render the Shape to an SVG or PNG file with Graphviz (dot).",
    (
        *RECALL_ARGS,
        opt(
            "-o",
            "--output",
            default="shape.svg",
            metavar="FILE",
            help="picture to write, .svg or .png (default: shape.svg)",
        ),
    ),
    "render:run",
)
HOST = Command(
    "host",
    "index and search a library, snap hits into a session (Host Snap)",
    "Host Snap: a BM25 index of a tree outside the engine "
    "(index), its search (search), and hits committed into a "
    "session as locators (snap).",
    dest="host_command",
    epilog="Needs the extra: pip install 'memnet[host]'. See docs/host.md.",
    actions=(
        Command(
            "index",
            "build or refresh the BM25 index of a tree",
            "Index PATH: a search document per Python module and top-level class or "
            "function (name, signature, docstring), markdown file and section, SysML "
            "element and plain text file (.txt, .rst), with the locators ingest gives "
            "them. The first run makes the index and PATH its root; later runs refresh "
            "PATH, which must be the root or inside it: only files whose size, time "
            "and hash changed are read again, and an unchanged tree writes nothing.",
            (opt("path", help="the directory to index"), *HOST_COMMON),
            "host:index",
        ),
        Command(
            "search",
            "search the index (BM25) and print the hits",
            "Print the TOP best hits for Q: score, locator and short title (text), "
            "or a JSON list of {locator, title, score, kind, path, line}.",
            (
                shared(P.WORDS, "q", nargs="+", metavar="Q"),
                shared(P.TOP, "--top", type=int),
                *HOST_COMMON,
            ),
            "host:search",
        ),
        Command(
            "snap",
            "search and commit the hits into a session (Host Snap)",
            "Search Q and commit, as one Commit to SID, a QRY node for the query "
            "linked by HIT {rank} edges to a node per hit, keyed by locator (a node "
            "the session already holds for that locator is reused; a new one gets the "
            "locator and a short title only), then flush. The same hits again commit "
            "nothing. Recall them with 'QRY <words>'. With --create a session the "
            "cabinet does not hold is made, and stored only once the snap succeeds.",
            (
                opt("sid", help="session id (it must exist, or pass --create)"),
                shared(P.WORDS, "q", nargs="+", metavar="Q"),
                shared(P.TOP, "--top", type=int),
                shared(P.CREATE, "--create", action="store_true"),
                *HOST_COMMON,
            ),
            "host:snap",
        ),
    ),
)

#: The whole command line: ``memnet`` itself, then its commands in the order
#: ``memnet --help`` lists them.
MEMNET = Command(
    "memnet",
    "",
    "MemNet: bounded working memory for LLM agents (Recall a Shape, Commit a Δ).",
    (
        opt("-V", "--version", action="version", version=f"memnet {__version__}"),
        opt(
            "--home",
            default=None,
            help="cabinet directory, or a postgresql://user@host:port/dbname URL "
            "(default: $MEMNET_HOME, else ./.memnet)",
        ),
    ),
    dest="command",
    metavar="COMMAND",
    actions=(
        DEMO,
        INIT,
        CABINET,
        SESSION,
        COMMIT,
        RECALL,
        OUTLINE,
        BACKUP,
        EXPORT,
        ABSORB,
        INGEST,
        IMPORT,
        SNAP,
        VER,
        WIRE,
        MCP,
        SHOW,
        HOST,
    ),
)

__all__ = ["MEMNET", "Command", "Opt", "opt", "shared"]
