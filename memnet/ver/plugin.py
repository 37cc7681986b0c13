"""The pytest plugin of MN-VER: checks each test's requirement marks after
collection, and prints or writes the trace when asked. See :mod:`memnet.ver`."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..errors import MemNetError
from .trace import (
    DEFAULT_MODELS,
    ENV_MODELS,
    MARKER,
    MARKER_LINE,
    VER_DIR,
    Trace,
    build_trace,
    default_models,
    format_matrix,
    load_model,
)

# --------------------------------------------------------------------------- the plugin


_STATE = pytest.StashKey["_State"]()


@dataclass
class _State:
    errors: list[str] = field(default_factory=list)
    trace: Trace | None = None
    requirements: dict[str, str] | None = None
    models: Path | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memnet-ver", "MemNet requirement traceability (MN-VER)")
    group.addoption(
        "--memnet-models",
        metavar="DIR",
        default=None,
        help=f"the SysML model holding the requirements (default: ${ENV_MODELS}, "
        f"else <rootdir>/{DEFAULT_MODELS} when it exists)",
    )
    group.addoption(
        "--memnet-ver",
        action="store_true",
        default=False,
        help="print the requirement x test matrix after collection and require "
        "every requirement to have a test",
    )
    group.addoption(
        "--memnet-ver-json",
        metavar="FILE",
        default=None,
        help="write the requirement/test trace as JSON to FILE",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not any(
        line.split(":")[0].split("(")[0].strip() == MARKER for line in config.getini("markers")
    ):
        config.addinivalue_line("markers", MARKER_LINE)
    state = _State()
    config.stash[_STATE] = state
    config.pluginmanager.register(_ErrorLog(state), "memnet-ver-errors")


class _ErrorLog:
    """Keeps the node ids of collectors that failed (import errors and the like)."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.state.errors.append(report.nodeid)


def _models_dir(config: pytest.Config) -> Path | None:
    given, source = config.getoption("memnet_models"), "--memnet-models"
    if not given:
        given, source = os.environ.get(ENV_MODELS) or None, f"${ENV_MODELS}"
    if given:
        p = Path(given).expanduser()
        if not p.is_absolute():
            p = config.invocation_params.dir / p
        if not p.exists():
            raise pytest.UsageError(f"{source}: the requirement model {given} does not exist")
        return p
    return default_models(config.rootpath)


def requirements_of(config: pytest.Config) -> dict[str, str] | None:
    """The requirements this run checks against (``None`` when no model was found)."""
    state = config.stash[_STATE]
    if state.requirements is None:
        state.models = _models_dir(config)
        if state.models is None:
            return None
        try:
            reqs = load_model(state.models)
        except MemNetError as e:
            raise pytest.UsageError(
                f"cannot read the requirement model {state.models}: {e.code}: {e}"
            ) from None
        if not reqs:
            raise pytest.UsageError(
                f"the model {state.models} holds no requirement with a short id <'...'>"
            )
        state.requirements = reqs
    return state.requirements


def is_whole_run(config: pytest.Config) -> bool:
    """Whether this run collects the whole suite (see the module docstring)."""
    if config.getoption("memnet_ver"):
        return True
    if config.getoption("lf", False):
        return False
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        return True
    root = config.rootpath.resolve()
    allowed = {root}
    for pattern in config.getini("testpaths"):
        allowed.update(p.resolve() for p in root.glob(pattern))
        allowed.add((root / pattern).resolve())
    for arg in config.args:
        if "::" in arg:
            return False
        p = Path(arg)
        if not p.is_absolute():
            p = config.invocation_params.dir / p
        if p.resolve() not in allowed:
            return False
    return True


def _is_ver_test(item: pytest.Item, root: Path) -> bool:
    try:
        parts = item.path.resolve().relative_to(root).parts
    except ValueError:
        parts = item.path.parts
    return VER_DIR in parts[:-1]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # tryfirst: see every collected test, before -k / -m / --deselect drop some
    if hasattr(config, "workerinput"):  # an xdist worker: the controller checks
        return
    wants = config.getoption("memnet_ver") or config.getoption("memnet_ver_json")
    reqs = requirements_of(config)
    state = config.stash[_STATE]
    if reqs is None:
        if wants:
            raise pytest.UsageError(
                f"no requirement model: give --memnet-models DIR, set "
                f"${ENV_MODELS}, or add <rootdir>/{DEFAULT_MODELS}"
            )
        return
    root = config.rootpath.resolve()
    whole = is_whole_run(config)
    trace = build_trace(
        reqs,
        (
            (
                item.nodeid,
                _is_ver_test(item, root),
                [rid for mark in item.iter_markers(MARKER) for rid in mark.args],
            )
            for item in items
        ),
        models=_display(state.models, config),
        whole=whole,
    )
    trace.errors = list(state.errors)
    state.trace = trace
    target = config.getoption("memnet_ver_json")
    if target:
        path = Path(target)
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        path.write_text(
            json.dumps(trace.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    problems = [p for p in trace.problems(coverage=whole) if not p.startswith("could not")]
    if problems:
        raise pytest.UsageError("MN-VER traceability:\n  " + "\n  ".join(problems))


def _display(models: Path | None, config: pytest.Config) -> str:
    if models is None:
        return ""
    try:
        return models.resolve().relative_to(config.rootpath.resolve()).as_posix() or "."
    except ValueError:
        return os.fspath(models)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None or state.trace is None or not config.getoption("memnet_ver"):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    width = config.get_terminal_writer().fullwidth if reporter is not None else 100
    text = format_matrix(state.trace, width=min(width, 120))
    if reporter is None:
        sys.stdout.write(text)
    else:
        reporter.ensure_newline()
        reporter.write(text)
