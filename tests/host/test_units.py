"""Search documents from files: the skeleton outline of Python modules agrees
with a full parse, and every unit has the locator ingest gives it."""

from __future__ import annotations

import sysconfig
import textwrap
from pathlib import Path

import pytest

from memnet.host.pyskel import outline, skeleton
from memnet.host.units import SCHEMES, markdown_docs, python_docs, sysml_docs, text_docs
from memnet.ingest import ingest_path
from memnet.ingest.source import walk
from memnet.session import Session

from .conftest import write_tree

ROOT = Path(__file__).resolve().parents[2]


def agrees(data: bytes) -> bool:
    """The skeleton gives what a parse of the whole module gives."""
    return outline(data) == outline(data, skim=False)


TRICKY = {
    "decorators and a multi-line header": '''\
        """Module doc."""
        import os

        @decorate(
            "x", key=1,
        )
        def f(a,
              b: "str" = ")",  # a comment with a quote '
              *args, **kw) -> dict[str, int]:
            r"""Raw doc with a backslash \\
            continued."""
            return {}
        ''',
    "classes, keywords, async, one-liners, duplicates": """\
        class A(Base, metaclass=Meta): pass
        class B:
            \'\'\'Single-quoted doc.\'\'\'
            def method(self): ...
        async def g(): return 1
        def h(): pass
        def h(x): pass
        if TYPE_CHECKING:
            def hidden(): ...
        try:
            import fast
        except ImportError:
            def fallback(): ...
        """,
    "a body string with lines at column 0": '''\
        def make():
            return """
        def not_a_symbol():
            pass
            """
        def after():
            "doc"
        ''',
    "brackets and strings at column 0 inside a body": '''\
        def f():
            x = call(
        1, 2)
            y = "a # not a comment"
            return x
        CONST = {
            "k": """multi
        line""",
        }
        def g(): "after the data"
        ''',
    "backslash continuation and f-strings": '''\
        X = 1 + \\
            2
        def f(a=f"{1 + 2}", b=b"\\x00"):
            f"""not a docstring (an f-string)"""
        ''',
    "tabs, CRLF and a BOM": '\ufeffdef f():\r\n\t"""Tab-indented doc."""\r\n\treturn 1\r\n',
    "a syntax error": "def f(:\n    pass\n",
    "no symbols": "x = 1\n",
    "an empty module": "",
    "a module docstring with indented lines": '''\
        """Title.

            indented example
        def looks_like_code(): ...
        """
        def real(): ...
        ''',
}


@pytest.mark.req("MN-REQ-22")
@pytest.mark.parametrize("name", list(TRICKY))
def test_the_outline_agrees_with_a_full_parse(name):
    src = TRICKY[name]
    text = src if src.startswith("\ufeff") else textwrap.dedent(src)
    assert agrees(text.encode("utf-8")), name


def test_a_body_with_strings_at_column_0_is_stepped_over_and_a_cookie_is_honoured():
    text, lines = skeleton(textwrap.dedent(TRICKY["a body string with lines at column 0"]))
    assert "not_a_symbol" not in text and "def after():" in text
    assert lines[text.splitlines().index("def after():")] == 6
    latin = '# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    "Cr\u00e8me."\n'.encode("latin-1")
    o = outline(latin)
    assert [(s.name, s.doc) for s in o.symbols] == [("caf\u00e9", "Cr\u00e8me.")]
    assert outline(b"def f(:\n").error.startswith("not parsed")
    # a syntax error inside a body is not seen: the skeleton skips bodies unread
    # (ingest, which parses everything, gives such a module no SYMs)
    broken = b"def f():\n    return (\ndef g():\n    pass\n"
    assert outline(broken, skim=False).error and not outline(broken).error
    assert outline(b"x = '\0'\n").error  # NUL bytes never reach the skeleton


@pytest.mark.req("MN-REQ-22")
def test_the_outline_agrees_with_a_full_parse_on_real_modules():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted((ROOT / "memnet").rglob("*.py"))
    for pkg in ("json", "email", "asyncio", "importlib"):
        files += sorted((stdlib / pkg).rglob("*.py"))
    assert len(files) > 100
    bad = [f for f in files if not agrees(f.read_bytes())]
    assert bad == []


def test_python_documents():
    data = textwrap.dedent('''\
        """Prices.

        More words."""
        def round_price(amount, places=2) -> float:
            """Round a price half to even."""
        class PriceList(dict):
            pass
        def convert(amount, currency, rate_table, rounding_mode="half-even"):
            """Convert an amount."""
        ''').encode()
    docs, warn = python_docs("shop", "pkg/pricing.py", data)
    assert warn == []
    mod, fn, cls, long = docs
    assert (mod.locator, mod.kind, mod.title, mod.name) == (
        "py:shop/pkg/pricing.py",
        "MOD",
        "shop.pkg.pricing: Prices.",
        "shop.pkg.pricing",
    )
    assert "More words." in mod.body and mod.unit == mod.locator
    assert mod.path == "shop/pkg/pricing.py"
    assert (fn.locator, fn.kind, fn.line, fn.unit) == (
        "py:shop/pkg/pricing.py::round_price",
        "SYM",
        4,
        mod.locator,
    )
    assert fn.title == "round_price(amount, places=2) -> float: Round a price half to even."
    assert long.title == "convert(…): Convert an amount."  # a long signature is cut
    assert fn.body.startswith("def round_price(amount, places=2) -> float\n")
    assert cls.title == "PriceList(dict)" and cls.line == 6
    docs, warn = python_docs("shop", "bad.py", b"def f(:\n")
    assert [d.kind for d in docs] == ["MOD"] and "not parsed" in warn[0].message


def test_markdown_and_text_documents():
    text = "Lead text.\n\n# Guide\n\nIntro.\n\n## Setup\n\nRun it.\n\n## Setup\n\nAgain.\n"
    docs, _ = markdown_docs("lib", "guide.md", text.encode())
    assert [(d.locator, d.kind, d.title, d.line) for d in docs] == [
        ("md:lib/guide.md", "DOC", "Guide", 1),
        ("md:lib/guide.md#guide", "SEC", "Guide", 3),
        ("md:lib/guide.md#setup", "SEC", "Setup", 7),
        ("md:lib/guide.md#setup-2", "SEC", "Setup", 11),
    ]
    assert docs[0].body.strip() == "Lead text." and docs[2].body.strip() == "Run it."
    assert docs[3].body.strip() == "Again."
    docs, warn = markdown_docs("lib", "bad.md", b"# \xff\n")
    assert len(docs) == 1 and "not UTF-8" in warn[0].message
    docs, _ = text_docs("lib", "a/notes.txt", b"\n  First line\nsecond \xff\n")
    (d,) = docs
    assert (d.locator, d.kind, d.title) == ("txt:lib/a/notes.txt", "DOC", "notes.txt: First line")
    assert "second \ufffd" in d.body


@pytest.mark.req("MN-REQ-22", "MN-REQ-18")
def test_the_units_have_the_locators_ingest_gives(tmp_path):
    """Every unit of the tree is indexed under the locator ingest gives the same
    thing (plain text, which ingest does not read, gets txt: locators)."""
    top = write_tree(tmp_path / "lib")
    (top / "model" / "broken.sysml").write_text("package {", encoding="utf-8")
    s = Session("ingest")
    (top / "model" / "broken.sysml").rename(top / "model" / "broken.sysml.off")
    ingest_path(s, top)
    st = s.store
    loc = {n: st.node_props(n)["locator"] for n in st.live_node_ids()}
    ingested = {
        loc[n]: st.node_kind(n)
        for n in loc
        if not (st.node_kind(n) == "PKG" and loc[n].startswith("py:"))
    }
    (top / "model" / "broken.sysml.off").rename(top / "model" / "broken.sysml")

    files, _ = walk(top, SCHEMES)
    docs = []
    models = []
    for rel, scheme in files:
        data = (top / rel).read_bytes()
        if scheme == "sysml":
            models.append((rel, data))
        elif scheme == "py":
            docs += python_docs(top.name, rel, data)[0]
        elif scheme == "md":
            docs += markdown_docs(top.name, rel, data)[0]
        else:
            docs += text_docs(top.name, rel, data)[0]
    model_docs, warn = sysml_docs(top.name, models)
    assert any(w.path == "lib/model/broken.sysml" for w in warn)  # left out, the rest indexed
    indexed = {d.locator: d.kind for d in docs + model_docs}
    assert {loc: k for loc, k in indexed.items() if not loc.startswith("txt:")} == ingested
    assert "txt:lib/docs/notes.txt" in indexed
    assert "py:lib/shop/pricing.py::PriceList" in indexed
    assert "py:lib/shop/pricing.py::PriceList.lookup" not in indexed
    assert indexed["sysml:lib/ShopModel::fastCheckout"] == "REQ"
