"""Pictures of a Shape: Graphviz DOT and Mermaid text, and ``memnet show``.

``to_dot`` and ``to_mermaid`` are pure and deterministic: the same Shape gives
the same bytes. Each node is labelled with its handle, its kind and a short
title (``title``, ``name``, ``path`` or ``text``); each kind gets a colour and
a node shape from a fixed palette, chosen by a stable hash of the kind name (so
a kind looks the same in every picture). Seeds have a bold double border, LAW
rules are notes drawn in grey, edges are labelled with their type.

``render`` runs Graphviz ``dot`` and needs it on PATH; without it it raises
MemNetError ``dependency_missing``.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

from ..errors import DependencyMissing, MemNetError, PathNotFound, QueryError

#: fill colours (light, readable with black text), picked by a stable hash of the kind
PALETTE: tuple[str, ...] = (
    "#cfe2f3",
    "#d9ead3",
    "#fff2cc",
    "#f4cccc",
    "#d9d2e9",
    "#fce5cd",
    "#d0e0e3",
    "#ead1dc",
    "#e6f4ea",
    "#fde7e9",
    "#e8eaf6",
    "#f1f8e9",
)
#: Graphviz node shapes, picked by a second stable hash of the kind
SHAPES: tuple[str, ...] = (
    "box",
    "ellipse",
    "hexagon",
    "component",
    "folder",
    "tab",
    "cylinder",
    "octagon",
)
LAW_KIND = "LAW"
LAW_STYLE = {"shape": "note", "fillcolor": "#eeeeee", "color": "#666666"}
TITLE_KEYS = ("title", "name", "path", "text")
TITLE_MAX = 40
FORMATS = {".svg": "svg", ".png": "png"}
DOT_MISSING = "Graphviz (dot) is not installed: apt-get install graphviz / brew install graphviz"


def _hash(kind: str, salt: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(f"{salt}:{kind}".encode()).digest()[:4], "big")


def kind_style(kind: str) -> dict[str, str]:
    """The fill colour and node shape of a kind (stable across runs and machines)."""
    if kind == LAW_KIND:
        return dict(LAW_STYLE)
    return {
        "shape": SHAPES[_hash(kind, "shape") % len(SHAPES)],
        "fillcolor": PALETTE[_hash(kind, "colour") % len(PALETTE)],
        "color": "#333333",
    }


def _kind(node: Any) -> str:
    return node.labels[0] if node.labels else "?"


def short_title(node: Any, width: int = TITLE_MAX) -> str:
    """The first of title/name/path/text, flattened to one line and cut to ``width``."""
    props = dict(node.props)
    for key in TITLE_KEYS:
        v = props.get(key)
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            v = ", ".join(map(str, v))
        text = " ".join(str(v).split())
        return text if len(text) <= width else text[: width - 1] + "…"
    return ""


def _dot_str(s: str) -> str:
    """A DOT double-quoted string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(d: dict[str, str]) -> str:
    return ", ".join(f"{k}={_dot_str(v)}" for k, v in d.items())


def _endpoints(shape: Any) -> list[str]:
    """Edge endpoints that are not emitted nodes (drawn as dashed stubs), in order."""
    known = {n.var for n in shape.nodes}
    extra: list[str] = []
    for e in shape.edges:
        for v in (e.src, e.dst):
            if v not in known and v not in extra:
                extra.append(v)
    return extra


def to_dot(shape: Any) -> str:
    """The Shape as a Graphviz ``digraph`` (deterministic)."""
    seeds = set(shape.seed_handles)
    r = shape.receipt
    title = f"session {r.session} v{r.version}  q={r.q!r}  rows {r.rows}/{r.max_rows}"
    out = [
        "digraph shape {",
        (
            '  graph [rankdir=LR, fontname="Helvetica", fontsize=10, labelloc=t, '
            f"label={_dot_str(title)}];"
        ),
        '  node [style="filled", fontname="Helvetica", fontsize=10, penwidth=1];',
        '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
    ]
    for n in shape.nodes:
        kind = _kind(n)
        kinds = ":".join(n.labels) or "?"
        label = f"{n.var}  {kinds}"
        t = short_title(n)
        if t:
            label += "\n" + t
        attrs = {"label": label, **kind_style(kind)}
        if n.var in seeds:
            attrs.update(peripheries="2", penwidth="2.5", style="filled,bold", color="#000000")
        if kind == LAW_KIND:
            attrs["style"] = "filled,dashed" if n.var not in seeds else "filled,bold"
        out.append(f"  {_dot_str(n.var)} [{_attrs(attrs)}];")
    for v in _endpoints(shape):
        out.append(f"  {_dot_str(v)} [{_attrs({'label': v, 'style': 'dashed', 'shape': 'box'})}];")
    for e in shape.edges:
        out.append(f"  {_dot_str(e.src)} -> {_dot_str(e.dst)} [{_attrs({'label': e.type})}];")
    out.append("}")
    return "\n".join(out) + "\n"


_SAFE_ID = re.compile(r"[^A-Za-z0-9_]")


def _mermaid_id(var: str, used: dict[str, str]) -> str:
    got = used.get(var)
    if got is None:
        base = "n_" + _SAFE_ID.sub("_", var)
        got, i = base, 1
        while got in used.values():
            i += 1
            got = f"{base}_{i}"
        used[var] = got
    return got


def _mermaid_text(s: str) -> str:
    """Text for a quoted Mermaid label: quotes and markup characters as entities."""
    return "".join(
        {'"': "#quot;", "<": "#lt;", ">": "#gt;", "#": "#35;", "|": "#124;", "\n": " "}.get(c, c)
        for c in s
    )


def to_mermaid(shape: Any) -> str:
    """The Shape as a Mermaid ``graph LR`` (safe ids, escaped labels, deterministic)."""
    seeds = set(shape.seed_handles)
    used: dict[str, str] = {}
    out = ["graph LR"]
    kinds: list[str] = []
    for n in shape.nodes:
        kind = _kind(n)
        nid = _mermaid_id(n.var, used)
        t = short_title(n)
        label = _mermaid_text(f"{n.var} {':'.join(n.labels) or '?'}") + (
            f"<br/>{_mermaid_text(t)}" if t else ""
        )
        open_, close = ("[[", "]]") if n.var in seeds else ("[", "]")
        if kind == LAW_KIND:
            open_, close = ("[/", "/]")
        out.append(f'  {nid}{open_}"{label}"{close}')
        cls = "k_" + _SAFE_ID.sub("_", kind)
        if kind not in kinds:
            kinds.append(kind)
        out.append(f"  class {nid} {cls}")
        if n.var in seeds:
            out.append(f"  class {nid} seed")
    for v in _endpoints(shape):
        out.append(f'  {_mermaid_id(v, used)}("{_mermaid_text(v)}")')
    for e in shape.edges:
        out.append(
            f'  {_mermaid_id(e.src, used)} -->|"{_mermaid_text(e.type)}"| '
            f"{_mermaid_id(e.dst, used)}"
        )
    for kind in kinds:
        st = kind_style(kind)
        out.append(
            f"  classDef k_{_SAFE_ID.sub('_', kind)} fill:{st['fillcolor']},stroke:{st['color']}"
        )
    out.append("  classDef seed stroke:#000,stroke-width:3px")
    return "\n".join(out) + "\n"


def check_output(path: Path) -> tuple[str, str]:
    """The Graphviz format for ``path`` and the ``dot`` program, or a MemNetError
    (``bad_query`` for an unknown suffix, ``dependency_missing`` without dot)."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise QueryError(
            f"cannot render to {str(path)!r}: the output file must end in {' or '.join(FORMATS)}"
        )
    import shutil

    exe = shutil.which("dot")
    if exe is None:
        raise DependencyMissing(DOT_MISSING)
    if path.is_dir():
        raise PathNotFound(f"cannot render to {str(path)!r}: it is a directory", path=str(path))
    parent = path.parent
    if not parent.is_dir():
        raise PathNotFound(
            f"cannot render to {str(path)!r}: there is no directory {str(parent)!r}",
            path=str(parent),
        )
    return fmt, exe


def render(dot_text: str, out_path: str | os.PathLike[str]) -> Path:
    """Run Graphviz ``dot`` on ``dot_text`` and write ``out_path`` (.svg or .png)."""
    import subprocess
    from pathlib import Path

    path = Path(out_path)
    fmt, exe = check_output(path)
    try:
        done = subprocess.run(
            [exe, f"-T{fmt}", "-o", os.fspath(path)],
            input=dot_text.encode(),
            capture_output=True,
            timeout=300,
            check=False,
        )
    except FileNotFoundError:
        raise DependencyMissing(DOT_MISSING) from None
    if done.returncode != 0:
        msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise MemNetError(
            f"Graphviz (dot) failed with exit {done.returncode}: "
            f"{msg[-1] if msg else 'no message'}",
            code="internal",
        )
    return path


# -- memnet show -------------------------------------------------------------------
def recall_shape(args: argparse.Namespace) -> Any:
    """Open the cabinet at ``args.home``, hydrate ``args.sid`` (with a progress bar
    on a terminal) and recall ``args.q`` with the recall options of ``args``."""
    from ..cabinet import Cabinet
    from .access import need_cabinet
    from .progress import Progress

    need_cabinet(args.home, args.sid)
    with Cabinet.open(args.home) as cab:
        with Progress(f"hydrate {args.sid}") as bar:
            s = cab.open(args.sid, at=args.at, progress=bar)
        return s.recall(
            args.q,
            k=args.hops,
            max_rows=args.rows,
            limit=args.limit,
            fanout=args.fanout,
            view=args.view,
            laws=not args.no_laws,
            max_tokens=args.max_tokens,
        )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    out = Path(args.output)
    check_output(out)  # refuse before any work
    shape = recall_shape(args)
    render(to_dot(shape), out)
    print(out)
    return 0


__all__ = ["kind_style", "render", "run", "short_title", "to_dot", "to_mermaid"]
