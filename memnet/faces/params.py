"""What the command line and the MCP tools both take, described once.

A :class:`Param` is one thing a caller gives (a recall's hops, a host search's
number of hits, an absorb's id policy): its default, its choices, and how each
face says it. The MCP tool table (:mod:`memnet.faces.mcp_tools`) and the CLI
table (:mod:`memnet.faces.cli_table`) build their arguments from these, so a
default or a choice is stated in one place, and so is the range each text
quotes.

The two texts differ on purpose: ``tool`` is sent with every request an LLM
makes and is tuned for tokens (the tool list is held to 1,500), ``cli`` is read
by a person in ``--help``. This module imports nothing heavy: building the
parser of one command reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..limits import LIMITS


@dataclass(frozen=True, slots=True)
class Param:
    """One thing both faces take: its default (``None``: none, or the library's
    own), its choices (in the order the MCP schema lists them), its words in a
    tool's schema (``tool``) and in ``--help`` (``cli``)."""

    default: Any = None
    choices: tuple[str, ...] = ()
    tool: str = ""
    cli: str = ""


VIEWS = ("interior", "shell")
#: The absorb id policies, as the tool lists them (merge first: the default).
ID_POLICIES = ("merge", "remint", "keep", "reject")
TOP_DEFAULT = 10
TOP_RANGE = "1-100"
IN_ROOTS = "inside the server's roots"

# -- a session and what is read from it ---------------------------------------------
SESSION = Param(cli="session id")
NEW_SESSION = Param(tool="1-64 of a-z, 0-9, '-'", cli="session id: [a-z0-9][a-z0-9-]{0,63}")
Q = Param("", cli="the query (default: empty → outline)")
HOPS = Param(LIMITS.k, tool=f"hops, 0-{LIMITS.k_max}", cli=f"k, hops (default {LIMITS.k})")
ROWS = Param(
    tool=f"row cap, 1-{LIMITS.max_rows_max} (default {LIMITS.max_rows})",
    cli=f"M, max rows (default {LIMITS.max_rows}; with --max-tokens, {LIMITS.max_rows_max})",
)
LIMIT = Param(
    tool=f"most seeds, 1-{LIMITS.limit_max}",
    cli=f"L, max seeds (default: {LIMITS.limit}, and up to {LIMITS.limit_max} as room allows)",
)
FANOUT = Param(
    LIMITS.fanout,
    tool=f"neighbours per node, 1-{LIMITS.fanout_max}",
    cli=f"F, neighbours per node (default {LIMITS.fanout})",
)
VIEW = Param(
    "interior",
    VIEWS,
    tool="interior: all properties; shell: key ones",
    cli="interior (all properties) or shell (key properties)",
)
#: The tool takes ``laws`` (default true), the command line ``--no-laws``.
LAWS = Param(True, tool="carry the LAW rules", cli="leave LAW rules out")
SINCE = Param(
    tool="etag (12 digits) of a Shape of this q you hold: answer only what changed",
    cli="the etag of a Shape this q gave lately: print only what changed since (a delta, "
    "or an unchanged line)",
)
MAX_TOKENS = Param(
    tool="stop the Shape before this many tokens",
    cli="stop the Shape before N tokens, its receipt line included",
)
OUTLINE_VIEW = Param("shell", ("shell", "interior"), cli="view of the exemplars (default shell)")

# -- writing into a session ------------------------------------------------------------
CREATE = Param(
    False,
    tool="create the session if missing",
    cli="create the session first if the cabinet does not hold it",
)
ID_POLICY = Param(
    "merge",
    ID_POLICIES,
    tool="merge: join nodes lead holds (safe to repeat); remint: copy; keep: member's ids; "
    "reject: refuse",
    cli="merge into what LEAD holds by locator, origin or name (default; the same slice "
    "again changes nothing), remint new handles, reject duplicates, or keep handles",
)
SLICE_HOPS = Param(2, tool=f"0-{LIMITS.k_max}", cli="hops from the anchors (default 2)")
INGEST_PATH = Param(tool=IN_ROOTS, cli="the directory or .sysml file to ingest")
PREFIX = Param(cli="session id prefix: PREFIX-cat and PREFIX-1 .. PREFIX-k")
MODEL = Param(
    tool="file or directory " + IN_ROOTS, cli="a .sysml file or a directory of .sysml files"
)
BUDGET = Param(
    LIMITS.max_rows,
    tool="most rows per interior",
    cli=f"most rows (nodes + edges) in one interior (default {LIMITS.max_rows}, the default M)",
)
STRICT = Param(
    False,
    tool="fail if a file does not parse",
    cli="fail (model_syntax) on the first file that does not parse, writing nothing",
)

# -- Host Snap -----------------------------------------------------------------------------
WORDS = Param(tool="words", cli="the words to search for")
TOP = Param(
    TOP_DEFAULT,
    tool=f"most hits, {TOP_RANGE}",
    cli=f"most hits ({TOP_RANGE}, default {TOP_DEFAULT})",
)
INDEX = Param(
    tool=IN_ROOTS + " (default: the home's)",
    cli="the index directory (default: host-index in the MemNet home, $MEMNET_HOME or ./.memnet)",
)
