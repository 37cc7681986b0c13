"""``memnet demo``: a small session of tasks, laws, modules and a decision,
committed on first run and recalled on every run.

``DEMO_DELTA`` is public (tests and docs commit it) and ``cli.py`` re-exports
it, so this module imports nothing else until the demo runs.
"""

from __future__ import annotations

import argparse

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


def demo(args: argparse.Namespace) -> int:
    import json

    from ..gql.parse import parse_query
    from .access import hydrate, open_cabinet

    parse_query(args.q)  # a bad -q fails before anything is made
    with open_cabinet(args, create=True) as cab:
        if cab.exists(args.session):
            s = hydrate(cab, args.session)
            print(
                f"# session {args.session!r} is in the cabinet at version {s.version}; "
                "recalling what was committed before"
            )
        else:
            s = cab.create(args.session)
            res = s.commit(DEMO_DELTA)
            cab.flush(s)
            print(f"# created session {args.session!r} in {cab.info().get('path', 'memory')}")
            print(
                f"# committed version {res.version}: {len(res.ids)} handles minted "
                f"({', '.join(f'{k}={v}' for k, v in sorted(res.ids.items()))})"
            )
        shape = s.recall(args.q)
        print(f"# recall {args.q!r}\n")
        print(shape.text)
        print("\n# receipt")
        print(json.dumps(shape.receipt.to_dict(), indent=2, ensure_ascii=False))
    return 0


__all__ = ["DEMO_DELTA", "demo"]
