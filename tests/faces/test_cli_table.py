"""The table of ``memnet`` commands (``faces/cli_table.py``) and what it shares
with the MCP tool table (``faces/params.py``)."""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator

from memnet.faces.cli import build_parser
from memnet.faces.cli_table import MEMNET, Command
from memnet.faces.mcp_tools import BY_NAME


def _walk(cmd: Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
    for action in cmd.actions:
        yield (*path, action.name), action
        yield from _walk(action, (*path, action.name))


def _option(path: tuple[str, ...], flag: str) -> argparse.Action:
    parser = build_parser(path[0])
    for word in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return next(a for a in parser._actions if flag in a.option_strings)


def test_every_command_runs_a_function_or_has_actions() -> None:
    for path, cmd in _walk(MEMNET):
        assert cmd.help and cmd.description, path
        assert (cmd.run is None) == bool(cmd.actions), path
        if cmd.run is not None:
            module, _, name = cmd.run.partition(":")
            func = getattr(importlib.import_module(f"memnet.faces.{module}"), name)
            assert callable(func) and not name.startswith("_"), path


def test_the_parser_of_one_command_imports_no_command() -> None:
    code = (
        "import sys; from memnet.faces.cli import build_parser; build_parser('recall'); "
        "build_parser('mcp'); "
        "print(sorted(m for m in sys.modules if m.startswith('memnet.faces.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(ast.literal_eval(out))
    assert loaded <= {
        "memnet.faces.cli",
        "memnet.faces.cli_table",
        "memnet.faces.demo",
        "memnet.faces.params",
        "memnet.faces.mcp_tools",  # the tool names in `memnet mcp --help`
    }, loaded


def test_both_faces_offer_the_same_choices_and_defaults() -> None:
    same = [
        (("recall",), "--hops", "memnet_recall", "k"),
        (("recall",), "--fanout", "memnet_recall", "fanout"),
        (("recall",), "--view", "memnet_recall", "view"),
        (("outline",), "--view", "memnet_outline", "view"),
        (("absorb",), "--id-policy", "memnet_absorb", "id_policy"),
        (("absorb",), "--hops", "memnet_absorb", "hops"),
        (("snap",), "--budget", "memnet_snap", "budget"),
        (("host", "search"), "--top", "memnet_host_search", "top"),
        (("host", "snap"), "--top", "memnet_host_snap", "top"),
    ]
    for path, flag, tool, name in same:
        opt = _option(path, flag)
        arg = next(a for a in BY_NAME[tool].args if a.name == name)
        assert opt.default == arg.default, (path, flag)
        assert set(opt.choices or ()) == set(arg.choices), (path, flag)
