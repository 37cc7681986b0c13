"""The ``memnet`` command line (also ``python -m memnet``).

Exit codes: 0 on success, 1 on a MemNetError (one line on stderr: code and
message), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .._version import __version__
from ..errors import MemNetError
from ..session import Session

DEMO_DELTA = """\
INSERT
  (law1:LAW {text: 'Never change a price without a recorded decision'}),
  (law2:LAW {text: 'Every task touches at least one module'}),
  (pricing:MOD {path: 'shop/pricing.py', name: 'pricing'}),
  (cart:MOD {path: 'shop/cart.py', name: 'cart'}),
  (t1:TSK {title: 'Fix rounding in the pricing page', status: 'open', prio: 1}),
  (t2:TSK {title: 'Show VAT on the cart summary', status: 'open', prio: 2}),
  (t3:TSK {title: 'Rename pricing constants', status: 'done', prio: 3}),
  (d1:DEC {title: 'Round half to even for all prices', why: 'matches the accounting system'}),
  (t1)-[:TOUCHES]->(pricing),
  (t2)-[:TOUCHES]->(cart),
  (t3)-[:TOUCHES]->(pricing),
  (cart)-[:IMPORTS]->(pricing),
  (d1)-[:GOVERNS]->(pricing),
  (t1)-[:FOLLOWS]->(d1)
"""


def _demo(args: argparse.Namespace) -> int:
    s = Session(args.session)
    res = s.commit(DEMO_DELTA)
    print(f"# committed version {res.version}: {len(res.ids)} handles minted")
    print(f"#   {', '.join(f'{k}={v}' for k, v in sorted(res.ids.items()))}")
    shape = s.recall(args.q)
    print(f"# recall {args.q!r}\n")
    print(shape.text)
    print("\n# receipt")
    print(json.dumps(shape.receipt.to_dict(), indent=2, ensure_ascii=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memnet",
        description="MemNet: bounded working memory for LLM agents (Recall a Shape, Commit a Δ).")
    p.add_argument("--version", action="version", version=f"memnet {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="commit a few tasks and laws into a session, recall them, print the Shape",
        description="Commit a small set of tasks, laws, modules and a decision into a session, "
                    "recall it with a codebook query and print the Shape and its receipt.")
    demo.add_argument("--session", default="demo", help="session id (default: demo)")
    demo.add_argument("-q", default="TSK status:open pricing",
                      help="the Recall query (default: 'TSK status:open pricing')")
    demo.set_defaults(func=_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except MemNetError as e:
        print(f"memnet: error: {e.code}: {e.message}", file=sys.stderr)
        return 1


__all__ = ["build_parser", "main"]
