"""A small library tree for the Host Snap tests: Python, markdown, text, SysML."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest


def needs_tantivy() -> None:
    """Skip a module without the search library, except under CI (where the dev
    extra installs it and a skip would hide a failure)."""
    if os.environ.get("CI") != "true":
        pytest.importorskip("tantivy", reason="needs the extra: pip install 'memnet[host]'")


FILES = {
    "shop/__init__.py": '"""The shop package: carts, prices and the checkout."""\n',
    "shop/pricing.py": textwrap.dedent('''\
        """Prices and rounding for the shop."""

        import decimal


        def round_price(amount, places=2):
            """Round a price half to even, the way the accounting system does.

            Every amount shown to a customer goes through here.
            """
            return round(amount, places)


        class PriceList:
            """A list of prices keyed by article number."""

            def lookup(self, article):
                """Not a top-level symbol: methods are not units."""
                return self.prices[article]
        '''),
    "shop/cart.py": textwrap.dedent('''\
        """The shopping cart."""
        from .pricing import round_price


        async def total(items) -> float:
            """Add up the prices of every item in the cart with tax."""
            return round_price(sum(items))
        '''),
    "docs/guide.md": textwrap.dedent("""\
        Read this before you change anything.

        # Shop guide

        How the shop is built.

        ## Refunds

        A refund reverses a payment and restocks the article.

        ## Refunds

        The second heading with the same title gets its own slug.
        """),
    "docs/notes.txt": "Warehouse notes\nThe warehouse in Leeds ships parcels on Tuesdays.\n",
    "model/shop.sysml": textwrap.dedent("""\
        package ShopModel {
            doc /* The shop as a SysML model. */
            requirement <'SHOP-1'> fastCheckout {
                doc /* The checkout finishes within two seconds. */
            }
            part def Checkout {
                doc /* Takes the payment and books the order. */
            }
        }
        """),
}


def write_tree(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "lib")
