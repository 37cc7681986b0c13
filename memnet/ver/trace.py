"""The trace of MN-VER: the requirements a test suite's marks name, read from
the suite (:func:`collect`, pytest's collection in a subprocess) or built
from what the plugin collected (:func:`build_trace`), rendered as a matrix
(:func:`format_matrix`) and written into a session (:func:`commit_trace`).
See :mod:`memnet.ver`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument, PathNotFound, TraceFailed
from ..ingest.model import Artefacts, Element
from ..ingest.sync import LOCATOR, SyncResult, sync
from ..ingest.walk import dir_arg

#: The marker a test uses to name the requirements it verifies.
MARKER = "req"
#: Tests under a directory of this name form the MN-VER suite: each must name a requirement.
VER_DIR = "ver"
#: Environment variable giving the model directory when ``--memnet-models`` is not used.
ENV_MODELS = "MEMNET_VER_MODELS"
#: The model directory looked for under the rootdir when neither option nor variable is set.
DEFAULT_MODELS = "sysml-models"

MARKER_LINE = f"{MARKER}(*ids): the requirement ids (MN-REQ-..) a test verifies"
#: The locator scheme and kind of the test nodes :func:`commit_trace` writes.
TEST_SCHEME = "test"
TEST_KIND = "TEST"
#: The kinds of node a requirement id (``rid``) is looked up on.
REQUIREMENT_KINDS = ("REQ", "REQDEF")


def id_key(rid: str) -> tuple[Any, ...]:
    """Sort key for natural id order.

    Runs of digits compare as numbers, so ``MN-REQ-2`` < ``MN-REQ-13`` <
    ``MN-REQ-13.1`` < ``MN-REQ-14`` < ``MN-REQ-14.1``.
    """
    parts = re.split(r"(\d+)", rid)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


def _split_nodeid(nodeid: str) -> tuple[str, str, str]:
    """(file, name without parameters, parameters) of a pytest node id."""
    file, _, name = nodeid.partition("::")
    base, bracket, params = name.partition("[")
    return file, base, (bracket + params) if bracket else ""


# --------------------------------------------------------------------------- the trace


@dataclass
class Trace:
    """Requirements, the tests that name them, and what is wrong.

    ``tests`` maps the node id of every collected test to the ids it names
    (known or not, in natural order; empty for a test that names none);
    ``unknown`` holds the tests naming ids the model lacks, ``unmarked`` the
    MN-VER tests naming none, ``errors`` the node ids pytest could not
    collect. ``whole`` tells whether the run counted as the whole suite.
    """

    requirements: dict[str, str]
    tests: dict[str, list[str]] = field(default_factory=dict)
    unknown: dict[str, list[str]] = field(default_factory=dict)
    unmarked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    models: str = ""
    whole: bool = True

    @property
    def matrix(self) -> dict[str, list[str]]:
        """Every requirement (natural order) → the tests naming it, in collection order."""
        out: dict[str, list[str]] = {rid: [] for rid in sorted(self.requirements, key=id_key)}
        for nodeid, ids in self.tests.items():
            for rid in ids:
                if rid in out:
                    out[rid].append(nodeid)
        return out

    @property
    def missing(self) -> list[str]:
        """The requirements no collected test names."""
        return [rid for rid, tests in self.matrix.items() if not tests]

    @property
    def ok(self) -> bool:
        """Every requirement has a test, every id is known, every MN-VER test is marked."""
        return not (self.missing or self.unknown or self.unmarked or self.errors)

    def problems(self, *, coverage: bool = True) -> list[str]:
        """One sentence per fault; ``coverage=False`` leaves out requirements without a test."""
        out = [f"could not collect {nodeid or 'the test suite'}" for nodeid in self.errors]
        for nodeid, ids in self.unknown.items():
            out += [f"{nodeid} names unknown requirement {rid!r}" for rid in ids]
        out += [
            f"{nodeid} is an MN-VER test (under {VER_DIR}/) and names no requirement: "
            f"add @pytest.mark.{MARKER}(...)"
            for nodeid in self.unmarked
        ]
        if coverage:
            out += [f"requirement {rid} has no test" for rid in self.missing]
        return out

    def summary(self, limit: int = 12) -> str:
        """The problems on one line (at most ``limit`` of them, then a count)."""
        probs = self.problems()
        more = len(probs) - limit
        text = "; ".join(probs[:limit])
        return text + (f"; and {more} more" if more > 0 else "")

    def to_dict(self) -> dict[str, Any]:
        """Plain data: ``requirements``, ``tests``, ``matrix``, ``missing``, ``unknown``,
        ``unmarked``, plus ``errors``, ``models`` and ``whole``."""
        return {
            "requirements": {
                rid: self.requirements[rid] for rid in sorted(self.requirements, key=id_key)
            },
            "tests": self.tests,
            "matrix": self.matrix,
            "missing": self.missing,
            "unknown": self.unknown,
            "unmarked": self.unmarked,
            "errors": self.errors,
            "models": self.models,
            "whole": self.whole,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trace:
        """The inverse of :meth:`to_dict` (derived keys are recomputed)."""
        return cls(
            requirements=dict(data["requirements"]),
            tests={k: list(v) for k, v in data.get("tests", {}).items()},
            unknown={k: list(v) for k, v in data.get("unknown", {}).items()},
            unmarked=list(data.get("unmarked", [])),
            errors=list(data.get("errors", [])),
            models=str(data.get("models", "")),
            whole=bool(data.get("whole", True)),
        )


def build_trace(
    requirements: Mapping[str, str],
    marks: Iterable[tuple[str, bool, Iterable[Any]]],
    *,
    models: str = "",
    whole: bool = True,
) -> Trace:
    """A :class:`Trace` from ``(nodeid, is_ver_test, named ids)`` per collected test."""
    trace = Trace(requirements=dict(requirements), models=models, whole=whole)
    for nodeid, is_ver, named in marks:
        ids: list[str] = []
        for rid in named:
            rid = rid if isinstance(rid, str) else repr(rid)
            if rid not in ids:
                ids.append(rid)
        ids.sort(key=id_key)
        trace.tests[nodeid] = ids
        bad = [rid for rid in ids if rid not in requirements]
        if bad:
            trace.unknown[nodeid] = bad
        if is_ver and not ids:
            trace.unmarked.append(nodeid)
    return trace


def _compact(nodeids: list[str]) -> list[tuple[str, str]]:
    """(file, "name, name ×3, ...") per file, in first-seen order."""
    files: dict[str, dict[str, int]] = {}
    for nodeid in nodeids:
        file, base, _params = _split_nodeid(nodeid)
        names = files.setdefault(file, {})
        names[base] = names.get(base, 0) + 1
    return [
        (file, ", ".join(n if c == 1 else f"{n} ×{c}" for n, c in names.items()))
        for file, names in files.items()
    ]


def format_matrix(trace: Trace, width: int = 100) -> str:
    """The requirement × test matrix as text, ending in a newline.

    One line per requirement in natural id order: the id, how many tests name
    it and the start of its text; below it the tests, one line per file with
    the test names (a parametrized test once, with ``×n``), or ``(no test)``.
    A total line follows, then any unknown ids and unmarked MN-VER tests.
    """
    width = max(width, 60)
    matrix = trace.matrix
    idw = max([len(r) for r in matrix] + [6]) + 2
    indent = " " * (idw + 6)
    out = [
        f"requirement × test matrix ({len(matrix)} requirements"
        + (f" from {trace.models}" if trace.models else "")
        + ")"
    ]
    for rid, tests in matrix.items():
        text = " ".join(trace.requirements[rid].split())
        room = width - len(indent)
        if len(text) > room:
            text = text[: room - 1].rstrip() + "…"
        out.append(f"{rid:<{idw}}{len(tests):>4}  {text}".rstrip())
        if not tests:
            out.append(f"{indent}(no test)")
        for file, names in _compact(tests):
            out += textwrap.wrap(
                f"{file}: {names}",
                width=width,
                initial_indent=indent,
                subsequent_indent=indent + "    ",
                break_on_hyphens=False,
            )
    missing = trace.missing
    marked = sum(1 for ids in trace.tests.values() if ids)
    out.append(
        f"total: {len(matrix)} requirements, {len(matrix) - len(missing)} with a test, "
        f"{len(missing)} without"
        + (f" ({', '.join(missing)})" if missing else "")
        + f"; {marked} of {len(trace.tests)} tests name a requirement"
    )
    out += [
        f"unknown: {p}"
        for p in trace.problems(coverage=False)
        if " names unknown requirement " in p
    ]
    out += [f"unmarked MN-VER test: {nodeid}" for nodeid in trace.unmarked]
    out += [f"collection error: {nodeid}" for nodeid in trace.errors]
    return "\n".join(out) + "\n"


def load_model(models: str | os.PathLike[str]) -> dict[str, str]:
    """The requirement ids of a model directory (or file) with their text."""
    from ..ingest.sysml import load_requirements

    return load_requirements(models)


def default_models(rootdir: str | os.PathLike[str]) -> Path | None:
    """``<rootdir>/sysml-models`` when it is a directory, else ``None``."""
    p = Path(rootdir) / DEFAULT_MODELS
    return p if p.is_dir() else None


# --------------------------------------------------------------------------- into a session


def requirement_nodes(session: Any, ids: Iterable[str]) -> dict[str, list[str]]:
    """Each requirement id → the locators of the live requirement nodes of
    ``session`` whose ``rid`` it is (sorted; a model ingested or snapped twice
    has two). Ids the session holds no node for are left out."""
    wanted = set(ids)
    store = session.store
    out: dict[str, list[str]] = {}
    for nid in store.live_node_ids():
        if store.node_kind(nid) not in REQUIREMENT_KINDS:
            continue
        props = store.node_props(nid)
        rid, loc = props.get("rid"), props.get(LOCATOR)
        if isinstance(rid, str) and rid in wanted and isinstance(loc, str):
            out.setdefault(rid, []).append(loc)
    return {rid: sorted(set(locs)) for rid, locs in sorted(out.items())}


def trace_artefacts(trace: Trace, root: str, requirements: Mapping[str, list[str]]) -> Artefacts:
    """The artefacts of a trace: a ``TEST`` node per test file that holds a test
    naming a requirement of ``requirements``, with a ``VERIFIES`` link to each
    node of each id its tests name; the link's ``tests`` lists those tests
    (``test_a, test_b ×3``, a parametrized test once) and ``cases`` counts the
    collected cases.

    A file's locator is ``test:<root>/<file>`` (the file relative to the tests
    directory ``root``); its properties are ``path`` (the file as pytest names
    it), ``tests`` (how many of its test functions name a requirement) and
    ``cases`` (how many collected cases do). One node per file, not per test,
    keeps a requirement's Shape whole: the walk expands at most ``F`` (8)
    neighbours of a node, and the 5 files that verify MN-REQ-13.1 name all 13
    of its tests where 13 test nodes would be cut to the first few.
    """
    art = Artefacts(
        root=root,
        schemes=(TEST_SCHEME,),
        managed_types=("VERIFIES",),
        outside=frozenset(loc for locs in requirements.values() for loc in locs),
    )
    files: dict[str, dict[str, list[str]]] = {}  # file -> requirement id -> node ids
    functions: dict[str, set[str]] = {}
    cases: dict[str, int] = {}
    for nodeid, ids in trace.tests.items():
        known = [rid for rid in ids if rid in requirements]
        if not known:
            continue
        file, base, _params = _split_nodeid(nodeid)
        per = files.setdefault(file, {})
        for rid in known:
            per.setdefault(rid, []).append(nodeid)
        functions.setdefault(file, set()).add(base)
        cases[file] = cases.get(file, 0) + 1
    for file in sorted(files):
        parts = file.split("/")  # a node id's file, relative to pytest's rootdir
        rel = "/".join(parts[parts.index(root) + 1 :]) if root in parts[:-1] else file
        loc = f"{TEST_SCHEME}:{root}/{rel}"
        art.add(
            Element(
                loc, TEST_KIND, {"path": file, "tests": len(functions[file]), "cases": cases[file]}
            )
        )
        for rid, nodeids in sorted(files[file].items()):
            named = ", ".join(names for _file, names in _compact(nodeids))
            for target in requirements[rid]:
                art.link("VERIFIES", loc, target, tests=named, cases=len(nodeids))
    return art


def commit_trace(
    session: Any, trace: Trace, models: str | os.PathLike[str], *, root: str = "tests"
) -> tuple[SyncResult | None, SyncResult]:
    """Write ``trace`` into ``session``: its test files as ``TEST`` nodes with
    ``VERIFIES`` links to the requirement nodes (found by their ``rid``), as
    one sync of the scope ``test:<root>`` (see :func:`trace_artefacts`).

    When the session holds none of the model's requirements, the model under
    ``models`` is ingested first (its own sync, as ``memnet ingest`` would).
    Returns the two results (the first ``None`` when the model was there).
    A trace whose collection failed somewhere is refused
    (:class:`~memnet.errors.TraceFailed`) before anything is written: it
    would drop the tests it could not see.

    >>> s = memnet.Session("trace")                        # doctest: +SKIP
    >>> commit_trace(s, collect("sysml-models", "tests"), "sysml-models")  # doctest: +SKIP
    >>> s.recall("REQ rid:MN-REQ-13.1")                    # shows its TEST nodes  # doctest: +SKIP
    """
    if trace.errors:
        raise TraceFailed(
            f"the collection failed for {', '.join(trace.errors)}: a partial "
            f"trace would drop their tests; nothing was written"
        )
    found = requirement_nodes(session, trace.requirements)
    model_res = None
    if not found:
        from ..ingest.sysml import scan_sysml

        model_res = sync(session, scan_sysml(models))
        found = requirement_nodes(session, trace.requirements)
    return model_res, sync(session, trace_artefacts(trace, root, found))


# --------------------------------------------------------------------------- memnet ver


def collect(
    models: str | os.PathLike[str],
    tests: str | os.PathLike[str],
    *,
    python: str | None = None,
    timeout: float | None = 600,
) -> Trace:
    """Collect the tests under ``tests`` with pytest in a subprocess and trace them.

    The subprocess runs in the parent of ``tests`` (so its pyproject, ini
    file and conftests apply) with ``--collect-only -p memnet.ver``; nothing
    is executed. A missing directory is ``path_not_found``; a collection that
    gives no trace at all (pytest crashed, the model does not load, ...) is
    :class:`~memnet.errors.TraceFailed` quoting pytest's error lines.
    """
    dir_arg(models, "models")
    dir_arg(tests, "tests")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not timeout > 0
        or timeout == float("inf")
    ):
        raise InvalidArgument(f"timeout must be a positive number of seconds, not {timeout!r}")
    m, t = Path(models).resolve(), Path(tests).resolve()
    for what, given, p in (("models", models, m), ("tests", tests, t)):
        if not p.exists():
            raise PathNotFound(
                f"the {what} directory {os.fspath(given)!r} does not exist", path=os.fspath(p)
            )
    if not t.is_dir():
        raise PathNotFound(
            f"the tests path {os.fspath(tests)!r} is not a directory", path=os.fspath(t)
        )
    with tempfile.TemporaryDirectory(prefix="memnet-ver-") as tmp:
        out = Path(tmp) / "trace.json"
        # OPTION=VALUE: pytest picks its rootdir before plugin options are known, and
        # would take a separate value for a path to collect
        cmd = [
            python or sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "memnet.ver",
            f"--memnet-ver-json={out}",
            f"--memnet-models={m}",
            str(t),
        ]
        try:
            proc = subprocess.run(
                cmd, cwd=t.parent, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise TraceFailed(f"collecting {t} took longer than {timeout} s") from None
        except OSError as e:  # the python to collect with cannot be run
            raise PathNotFound(
                f"cannot run {cmd[0]!r} to collect the tests: {e.strerror or e}", path=str(cmd[0])
            ) from None
        if not out.exists():
            said = [
                ln.strip()
                for ln in (proc.stderr + proc.stdout).splitlines()
                if ln.startswith(("ERROR", "E ")) or "Error" in ln
            ]
            reason = " | ".join(said[:6]) or (proc.stderr or proc.stdout).strip()[-400:]
            raise TraceFailed(
                f"collecting {t} gave no trace (pytest exit {proc.returncode}): {reason}"
            )
        data = json.loads(out.read_text(encoding="utf-8"))
    return Trace.from_dict(data)


__all__ = [
    "DEFAULT_MODELS",
    "ENV_MODELS",
    "MARKER",
    "REQUIREMENT_KINDS",
    "TEST_KIND",
    "TEST_SCHEME",
    "VER_DIR",
    "Trace",
    "build_trace",
    "collect",
    "commit_trace",
    "default_models",
    "format_matrix",
    "id_key",
    "load_model",
    "requirement_nodes",
    "trace_artefacts",
]
