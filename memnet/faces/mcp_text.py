"""The words the MCP tools say: their descriptions, the server's instructions
and what an agent should do after each error code (shared by the stdio server
and the SDK server of :mod:`memnet.faces.mcp`)."""

from ..limits import LIMITS

#: What an agent should do next, per error code (appended to the message).
HINTS: dict[str, str] = {
    "session_not_found": "create it with memnet_create_session (memnet_sessions lists the "
                         "sessions that exist)",
    "session_exists": "use it as it is, or pick another id (memnet_sessions lists them)",
    "invalid_session_id": "session ids are 1-64 characters from a-z, 0-9 and '-', starting "
                          "with a letter or digit",
    "gql_syntax": "fix the text at that position and call again; q is codebook tokens "
                  "(TSK status:open pricing) or MATCH (n:TSK) WHERE n.title CONTAINS 'x' "
                  "LIMIT 3; a delta is INSERT/SET/REMOVE/DELETE/SETTLE",
    "bad_query": f"ranges: k 0-{LIMITS.k_max}, max_rows 1-{LIMITS.max_rows_max}, "
                 f"limit 1-{LIMITS.limit_max}, fanout 1-{LIMITS.fanout_max}, "
                 "view interior|shell",
    "commit_rejected": "nothing was applied; fix the delta and commit again",
    "echo_refused": "nothing was applied; do not re-insert rows you recalled: INSERT only "
                    "new rows and SET properties on existing handles",
    "cap_exceeded": "nothing was applied; the session is full: start a new session with "
                    "memnet_create_session",
    "conflict": "nothing was written; another writer committed first: recall again to see "
                "its work, then redo the commit",
    "input_too_large": "send a smaller text",
    "version_not_found": "recall the current version instead",
    "path_outside_root": "use a path inside the roots named in the message; more roots are "
                         "the operator's to give (memnet mcp --root DIR)",
    "invalid_argument": "check the tool's arguments against its input schema (tools/list): "
                        "their names, types and which are required",
}

INSTRUCTIONS = (
    "MemNet is bounded working memory. Read with memnet_recall (or memnet_outline first on an "
    "unfamiliar session), write with memnet_commit using the handles from the Shape. Sessions "
    "persist in the cabinet between runs.")


Q_FORMS = ("q is either codebook tokens — a kind, key:value filters and keywords, e.g. "
           "`TSK status:open pricing` — or the seed query form, e.g. "
           "`MATCH (n:TSK) WHERE n.title CONTAINS 'pricing' LIMIT 3`; an empty q gives the "
           "outline.")

RECALL_DOC = (
    "Recall a bounded Shape of a MemNet session: a `// shape` receipt line, then shaped "
    "GQL text (INSERT lines with stable handles), at most `max_rows` rows or `max_tokens` "
    "tokens, the best matches of q first, then what they connect to. " + Q_FORMS + " The "
    "receipt line's `more=` is a q that recalls the nodes just past the cut; the structured "
    "content is the whole receipt. Use the handles to SET properties or connect new rows "
    "with memnet_commit; never re-INSERT recalled rows. Pass a Shape's etag as `since` to "
    "get only what changed (INSERT, SET/REMOVE, GONE for rows that left the Shape) or a "
    "`// unchanged` line.")
OUTLINE_DOC = (
    "The outline of a MemNet session: the census of kinds (e.g. TSK, LAW, MOD, DEC) with "
    "counts, a few exemplars per kind and the laws. Call it first on an unfamiliar session "
    "to learn which kinds and properties to put in a memnet_recall q. Text is the Shape, "
    "structured content its receipt (with census).")
COMMIT_DOC = (
    "Commit a delta (Δ) to a MemNet session atomically and store it in the cabinet: all of "
    "it or none of it. The delta is shaped GQL: "
    "`INSERT (t:TSK {title: 'Fix rounding', status: 'open'}), (t)-[:TOUCHES]->(na2)` creates "
    "rows (t is a new variable; na2 an existing handle from a recalled Shape); "
    "`SET na3.status = 'done'` changes a property; REMOVE, DELETE and SETTLE retire rows. "
    "Returns {version, ids, changed}: ids maps each new variable to the handle it was given. "
    "Errors: gql_syntax (with line/column), echo_refused (re-inserting recalled rows), "
    "cap_exceeded, conflict (another writer committed first: recall again, then redo).")
SESSIONS_DOC = (
    "List the sessions in this MemNet cabinet with version, rows, nodes, edges and bytes. "
    "Structured content: {sessions: [{id, version, rows, bytes, nodes, edges, created, "
    "updated}]}.")
CREATE_DOC = (
    "Create an empty MemNet session (id: 1-64 characters from a-z, 0-9 and '-'). An id "
    "that already exists is an error (session_exists). Then fill it with memnet_commit.")

INGEST_DOC = (
    "Ingest files inside this server's roots into a MemNet session: a directory "
    "(Python modules as MOD with SYM per top-level class/def, markdown as DOC/SEC, "
    "directories as PKG, CONTAINS and IMPORTS edges) and/or SysML v2 models (.sysml: "
    "packages, definitions, parts, ports, attributes, requirements with `rid`, TYPED, "
    "SATISFIES, CONNECTS edges). Every node has a `locator`; ingesting an unchanged tree "
    "again changes nothing, and only changed files are parsed. Returns {session, version, "
    "parts: [{version, changed, created, updated, recycled, files, parsed, warnings}]}.")
SNAP_DOC = (
    "Model Snap: cut a SysML v2 model (a .sysml file or directory inside the server's roots) "
    "into a catalog session `<prefix>-cat` (packages, definitions, requirements, one SES node per "
    "interior) and interior sessions `<prefix>-1..k`, each holding whole ownership subtrees "
    "within `budget` rows; links across a cut go to STUB nodes naming the session that holds "
    "the far end. Recall the catalog with `REQ rid:<id>` to find the interior that satisfies "
    "a requirement. A file that does not parse is left out and listed unless `strict`. "
    "Returns {catalog, interiors, rows, dropped, changed, warnings (first 50), failed}.")
ABSORB_DOC = (
    "Path-B Absorb: take the bounded slice around anchor handles of session `member` (at most "
    "50 rows per anchor, never the whole session) and join it into session `lead` as one new "
    "version, or nothing. id_policy: 'remint' (new handles; each node records origin "
    "'member/handle'), 'keep' (handles kept; any collision refuses all), 'reject' (refuse if "
    "any node is already in lead). This is a join between sessions, not goldfish writeback: "
    "use memnet_commit for your own changes.")

HOST_SEARCH_DOC = (
    "Host Snap search: the best `top` hits for q in the BM25 host index of a library on the "
    "server (built with `memnet host index PATH`): Python modules and top-level "
    "classes/functions (name, signature, docstring), markdown sections, SysML elements and "
    "text files. Each hit is {locator, title, score, kind, path, line}; nothing is written. "
    "Use memnet_host_snap to put hits into a session.")
HOST_SNAP_DOC = (
    "Host Snap: search q in the host index and commit the hits into a session in one "
    "Commit: a QRY node {title: q} linked by HIT {rank} edges to one node per hit, keyed by "
    "its locator (a node the session already has for that locator, e.g. from memnet_ingest, "
    "is reused; a new one holds only the locator and a short title). The same hits again "
    "change nothing. Then memnet_recall 'QRY <words of q>' shows them. Returns {version, "
    "changed, query, hits: [{locator, title, handle, created, ...}]}.")


__all__ = ["ABSORB_DOC", "COMMIT_DOC", "CREATE_DOC", "HINTS", "HOST_SEARCH_DOC", "HOST_SNAP_DOC",
           "INGEST_DOC", "INSTRUCTIONS", "OUTLINE_DOC", "Q_FORMS", "RECALL_DOC", "SESSIONS_DOC",
           "SNAP_DOC"]
