"""The house rules of issue 38 hold over the whole package, with no exceptions
list: no private name crosses a module boundary, no import circle inside
``memnet``, no module over 600 lines, no function over 80 (a table says so on
its ``def`` line), no speed trick outside a module that names itself hot.
``python -m tests.house`` prints what this test would complain of."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests import house


def test_the_package_has_no_house_findings() -> None:
    found = [str(f) for f in house.findings()]
    assert found == []


def test_the_checker_sees_each_kind_of_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checker is not blind: a small package with one of each fault
    gives one finding of each kind."""
    pkg = tmp_path / "memnet"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from memnet.b import _hidden\n"
        "import collections\n"
        "class Cache(dict):\n    pass\n"
        "def long():\n" + "    x = 1\n" * 85
    )
    (pkg / "b.py").write_text("import memnet.a\n_hidden = 1\n" + "y = 2\n" * 600)
    monkeypatch.setattr(house, "ROOT", pkg)
    kinds = sorted({f.rule for f in house.findings()})
    assert kinds == ["circle", "long-function", "long-module", "private", "trick"]
    assert ast.parse((pkg / "a.py").read_text())  # the sample itself is valid Python
