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
from collections.abc import Callable, Sequence
from typing import Any

from .._version import __version__
from ..errors import MemNetError, os_error
from .cli_table import MEMNET, Command
from .demo import DEMO_DELTA as DEMO_DELTA  # the demo's Δ, public for tests and docs


# -- parser ----------------------------------------------------------------------
def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``memnet`` parser, built from the table of :mod:`memnet.faces.cli_table`;
    given ``command``, only that command's parser is built under the top level
    (a fresh process runs one command). A word that names no command gets the
    whole parser, whose error lists them all."""
    p = argparse.ArgumentParser(prog=MEMNET.name, description=MEMNET.description)
    _add_arguments(p, MEMNET)
    wanted = [c for c in MEMNET.actions if c.name == command] or MEMNET.actions
    sub = p.add_subparsers(dest=MEMNET.dest, metavar=MEMNET.metavar)
    for cmd in wanted:
        _add_command(sub, cmd)
    return p


def _add_command(sub: Any, cmd: Command) -> None:
    """Add ``cmd`` (and its actions) to the subparsers ``sub``."""
    epilog = cmd.epilog() if callable(cmd.epilog) else cmd.epilog
    parser = sub.add_parser(cmd.name, help=cmd.help, description=cmd.description, epilog=epilog)
    _add_arguments(parser, cmd)
    if cmd.run is not None:
        parser.set_defaults(func=_runner(cmd.run))
    if cmd.actions:
        parser.set_defaults(help_of=parser)  # with no action: this parser's help
        actions = parser.add_subparsers(dest=cmd.dest, metavar=cmd.metavar)
        for action in cmd.actions:
            _add_command(actions, action)


def _add_arguments(parser: argparse.ArgumentParser, cmd: Command) -> None:
    for o in cmd.args:
        parser.add_argument(*o.names, **o.kw)


def _runner(ref: str) -> Callable[[argparse.Namespace], int]:
    """The command function ``"module:function"`` of :mod:`memnet.faces`,
    imported when the command runs."""
    module, _, name = ref.partition(":")

    def run(args: argparse.Namespace) -> int:
        import importlib

        func = getattr(importlib.import_module(f"memnet.faces.{module}"), name)
        return int(func(args))

    return run


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
