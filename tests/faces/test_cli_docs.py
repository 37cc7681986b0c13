"""Every CLI command and subcommand is documented and has help text."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from memnet.faces.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def subparsers(parser: argparse.ArgumentParser) -> list[argparse._SubParsersAction]:
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(path, parser, help) for every command and subcommand, depth first."""
    for action in subparsers(parser):
        helps = {c.dest: c.help for c in action._choices_actions}
        for name, sub in action.choices.items():
            path = (*prefix, name)
            yield path, sub, helps.get(name)
            yield from commands(sub, path)


ALL = list(commands(build_parser()))


def documentation() -> str:
    return "\n".join(
        (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "docs/cli.md")
    )


@pytest.mark.req("MN-REQ-13.1")
def test_the_walk_finds_the_commands():
    names = {" ".join(p) for p, _, _ in ALL}
    assert {
        "demo",
        "init",
        "commit",
        "recall",
        "outline",
        "backup",
        "show",
        "wire",
        "mcp",
        "session create",
        "session list",
        "session drop",
        "session log",
    } <= names


@pytest.mark.req("MN-REQ-13.1")
@pytest.mark.parametrize("path", [p for p, _, _ in ALL], ids=lambda p: " ".join(p))
def test_every_command_is_documented(path):
    text = documentation()
    pattern = r"memnet\s+" + r"\s+".join(map(re.escape, path)) + r"\b"
    assert re.search(pattern, text), f"`memnet {' '.join(path)}` is not in README.md or docs/cli.md"


@pytest.mark.req("MN-REQ-13.1")
@pytest.mark.parametrize("path", [p for p, _, _ in ALL], ids=lambda p: " ".join(p))
def test_every_command_has_help(path):
    _, sub, help_ = next(x for x in ALL if x[0] == path)
    assert help_ and help_.strip(), f"memnet {' '.join(path)} has no help text"
    assert sub.description and sub.description.strip()
    for action in sub._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help and action.help.strip(), (
            f"memnet {' '.join(path)}: option {action.dest} has no help"
        )


@pytest.mark.req("MN-REQ-15")
def test_docs_name_exit_codes_and_environment():
    text = (ROOT / "docs/cli.md").read_text(encoding="utf-8")
    for needle in (
        "memnet: error: <code>: <message>",
        "MEMNET_HOME",
        "MEMNET_MAX_SIZE",
        "docs/gql-wire-profile.md",
        "docs/mcp.md",
        "dependency_missing",
    ):
        assert needle in text
    # every option of every command is mentioned in docs/cli.md
    for path, sub, _ in ALL:
        for action in sub._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt != "--help":
                    assert opt in text, f"memnet {' '.join(path)} {opt} is not in docs/cli.md"
