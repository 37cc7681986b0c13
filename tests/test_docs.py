"""Docs that name code must name code that exists.

``docs/decisions.md`` ends every decision with a **Where.** paragraph listing
files (``recall/seed.py``) and, after each file, names in it (``match()``,
``Index.word_ids``, ``SHORT_VALUE``). Each file must exist under ``memnet/``
(or the repository) and each name must occur in the file named before it, so
a rename cannot leave a decision pointing at nothing. The error codes the
docs cite in backticks must be codes MemNet has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memnet.errors import CODES

ROOT = Path(__file__).resolve().parents[1]
_TICKS = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")


def _where_paragraphs(text: str) -> list[tuple[int, str]]:
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("**Where.**"):
            para = [line]
            for nxt in lines[i + 1 :]:
                if not nxt.strip() or nxt.startswith(("**", "#")):
                    break
                para.append(nxt)
            out.append((i + 1, " ".join(para)))
    return out


def _resolve(ref: str) -> Path | None:
    for base in (ROOT / "memnet", ROOT):
        p = base / ref
        if p.exists():
            return p
    return None


def _problems() -> list[str]:
    text = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    problems = []
    for lineno, para in _where_paragraphs(text):
        current: str | None = None
        for ref in _TICKS.findall(para):
            ref = ref.strip()
            if re.fullmatch(r"[\w./-]+\.(py|lark|md|toml|sysml)", ref) or ref.endswith("/"):
                path = _resolve(ref.rstrip("/"))
                if path is None:
                    problems.append(f"decisions.md:{lineno}: no file {ref}")
                    current = None
                else:
                    current = path.read_text(encoding="utf-8") if path.is_file() else None
                continue
            if current is None or not _NAME.fullmatch(ref):
                continue  # prose in backticks, or a name after a directory
            last = ref.removesuffix("()").split(".")[-1]
            if re.search(rf"\b{re.escape(last)}\b", current) is None:
                problems.append(f"decisions.md:{lineno}: {ref} is not in the file named before it")
    return problems


def test_decisions_name_only_code_that_exists() -> None:
    assert _problems() == []


@pytest.mark.parametrize("doc", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_error_codes_cited_in_docs_exist(doc: str) -> None:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    cited = set(re.findall(r"`([a-z]+(?:_[a-z]+)+)`", text))
    # a backticked snake_case word is a code when the doc says so next to it
    codes = {
        c
        for c in cited
        if re.search(rf"`{c}`[^.\n]{{0,40}}\bcode|code[s]?\b[^.\n]{{0,40}}`{c}`", text)
    }
    unknown = sorted(c for c in codes if c not in CODES)
    assert unknown == [], unknown
