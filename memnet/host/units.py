"""Files into search documents, one per unit ingest knows, with ingest's locators.

============================  ======  ============================================
unit                          kind    locator
============================  ======  ============================================
a Python module               MOD     ``py:<root>/<rel>.py``
its top-level class or def    SYM     ``py:<root>/<rel>.py::<name>``
a markdown file               DOC     ``md:<root>/<rel>.md``
a markdown heading            SEC     ``md:<root>/<rel>.md#<slug>``
a SysML element               (kind)  ``sysml:<root>/<Qualified::Name>``
a text file (.txt, .rst)      DOC     ``txt:<root>/<rel>``
============================  ======  ============================================

Titles are short (at most 120 characters): a module's dotted name, a symbol's
name and signature (``(…)`` when long), an element's name and short id, a text
file's name, each followed by the first line of the docstring, doc or text; a
heading's text; a markdown file's first heading.

The locators are the ones :mod:`memnet.ingest` gives the same files (its SYM
rule, :func:`~memnet.ingest.handlers.top_symbols`; its section slugs,
:func:`~memnet.ingest.handlers.sections`; its SysML reader,
:func:`~memnet.ingest.sysml.parse_sysml` and
:func:`~memnet.ingest.sysml.to_artefacts`), so a hit snapped into a session
and the node ingest makes for the same thing are one node. Plain text files
are the one unit ingest does not read; they get the scheme ``txt``.

What is searched: a SYM's name, signature and whole docstring; a module's
dotted name and docstring; a section's heading and the text under it (up to
the next heading); a markdown file's text before its first heading; a text
file's text; a SysML element's name, short id, type, doc and constraint text.
Every document also carries the words of its file's path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import MemNetError
from ..ingest.handlers import module_name, sections
from ..ingest.model import Warning_
from .hook import short
from .pyskel import outline

#: File suffixes read as plain text.
TEXT_SUFFIXES = (".txt", ".rst")
#: The scheme of each suffix (the first part of a locator).
SCHEMES = {".py": "py", ".md": "md", ".sysml": "sysml", **{s: "txt" for s in TEXT_SUFFIXES}}
#: Most characters of one document's searchable text that are indexed.
BODY_MAX = 100_000
_SIG_SHORT = 40


@dataclass(frozen=True, slots=True)
class Doc:
    """One search document: a unit of a file.

    ``unit`` is the locator of the file it came from (a file's own document
    has ``unit == locator``); ``name`` holds the words that name the unit
    (symbol name, heading, dotted module name), ``body`` its text.
    """

    locator: str
    kind: str
    title: str
    unit: str
    path: str
    line: int = 0
    name: str = ""
    body: str = ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _titled(head: str, text: str) -> str:
    first = _first_line(text)
    return short(f"{head}: {first}" if first else head)


def python_docs(root: str, rel: str, data: bytes) -> tuple[list[Doc], list[Warning_]]:
    """A MOD for the module and a SYM per top-level class or function."""
    unit = f"py:{root}/{rel}"
    path = f"{root}/{rel}"
    dotted = module_name(root, rel)
    o = outline(data)
    warn = [Warning_(path, o.error_line, o.error)] if o.error else []
    docs = [Doc(unit, "MOD", _titled(dotted, o.doc), unit, path, 1, dotted, o.doc[:BODY_MAX])]
    for s in o.symbols:
        sig = s.signature if len(s.signature) <= _SIG_SHORT else "(…)"
        docs.append(
            Doc(
                f"{unit}::{s.name}",
                "SYM",
                _titled(f"{s.name}{sig}", s.doc),
                unit,
                path,
                s.line,
                s.name,
                f"{s.sym} {s.name}{s.signature}\n{s.doc}"[:BODY_MAX],
            )
        )
    return docs, warn


def markdown_docs(root: str, rel: str, data: bytes) -> tuple[list[Doc], list[Warning_]]:
    """A DOC for the file (its text before the first heading) and a SEC per
    heading (its text up to the next heading)."""
    unit = f"md:{root}/{rel}"
    path = f"{root}/{rel}"
    name = rel.rpartition("/")[2]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return [Doc(unit, "DOC", name, unit, path, 1, name)], [
            Warning_(path, line, f"not read: not UTF-8 ({e.reason})")
        ]
    heads = sections(text)
    lines = text.splitlines()
    title = heads[0][2] if heads and heads[0][2] else name
    lead = "\n".join(lines[: heads[0][0] - 1] if heads else lines)
    docs = [Doc(unit, "DOC", short(title), unit, path, 1, title, lead[:BODY_MAX])]
    for i, (line, _level, head, slug) in enumerate(heads):
        end = heads[i + 1][0] - 1 if i + 1 < len(heads) else len(lines)
        docs.append(
            Doc(
                f"{unit}#{slug}",
                "SEC",
                short(head or slug),
                unit,
                path,
                line,
                head,
                "\n".join(lines[line:end])[:BODY_MAX],
            )
        )
    return docs, []


def text_docs(root: str, rel: str, data: bytes) -> tuple[list[Doc], list[Warning_]]:
    """One DOC for a plain text file (undecodable bytes replaced)."""
    unit = f"txt:{root}/{rel}"
    name = rel.rpartition("/")[2]
    text = data.decode("utf-8-sig", errors="replace")
    return [
        Doc(
            unit, "DOC", _titled(name, text[:4096]), unit, f"{root}/{rel}", 1, name, text[:BODY_MAX]
        )
    ], []


#: The reader of each scheme that is read file by file.
READERS = {"py": python_docs, "md": markdown_docs, "txt": text_docs}


def sysml_docs(root: str, files: Iterable[tuple[str, bytes]]) -> tuple[list[Doc], list[Warning_]]:
    """A document per element of the model made of ``files`` (``(rel, bytes)``).

    A file that is not UTF-8 or does not parse is left out of the model with a
    warning (its elements are not indexed; the rest of the model is).
    """
    from ..ingest.sysml import parse_sysml, to_artefacts

    parsed = []
    warn: list[Warning_] = []
    for rel, data in files:
        try:
            parsed.append((rel, parse_sysml(data.decode("utf-8-sig"), rel)))
        except UnicodeDecodeError as e:
            warn.append(
                Warning_(
                    f"{root}/{rel}",
                    data.count(b"\n", 0, e.start) + 1,
                    f"not read: not UTF-8 ({e.reason})",
                )
            )
        except MemNetError as e:  # model_syntax, input_too_large
            line = e.details.get("line")
            warn.append(
                Warning_(
                    f"{root}/{rel}",
                    line if isinstance(line, int) else 0,
                    f"not indexed: {e.message}",
                )
            )
    art = to_artefacts(parsed, root)
    docs = []
    for loc, el in art.elements.items():
        p = el.props
        name = str(p.get("name") or loc.rpartition("/")[2].rpartition("::")[2])
        rid = p.get("rid")
        head = f"{name} [{rid}]" if rid is not None and rid != name else name
        doc = str(p.get("doc") or "")
        words = " ".join(str(x) for x in (name, rid) if x is not None)
        body = "\n".join(str(p[k]) for k in ("type", "doc", "text") if p.get(k) is not None)
        line = p.get("line")
        docs.append(
            Doc(
                loc,
                el.kind,
                _titled(head, doc),
                el.unit,
                f"{root}/{p.get('file')}",
                line if isinstance(line, int) else 0,
                words,
                body[:BODY_MAX],
            )
        )
    warn += [Warning_(f"{root}/{w.path}", w.line, w.message) for w in art.warnings]
    return docs, warn


__all__ = [
    "BODY_MAX",
    "READERS",
    "SCHEMES",
    "TEXT_SUFFIXES",
    "Doc",
    "markdown_docs",
    "python_docs",
    "sysml_docs",
    "text_docs",
]
