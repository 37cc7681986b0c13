"""Inputs that once made the SysML reader exponential, recursive past Python's
stack or quadratic: each now reads in time linear in its size (a SIGALRM
deadline turns a relapse into a failure, not a hung suite)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memnet.ingest.sysml import parse_sysml, scan_sysml

ERRORS = "MN-REQ-15"


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    def expire(*_: object) -> None:
        raise TimeoutError(f"took over {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _nested_if(d: int) -> str:
    return "1" if d == 0 else "if {" + _nested_if(d - 1) + "} ? 1 else 2"


@pytest.mark.req(ERRORS)
def test_result_expressions_nesting_bodies_are_read_once_per_level() -> None:
    # each level was tried as a member, then read again as the expression:
    # 2^depth (depth 20 took 42 s; 30 would take hours)
    with deadline(30):
        doc = parse_sysml("attribute a = " + _nested_if(30) + ";\n")
    assert [e.name for e in doc.elements] == ["a"]


@pytest.mark.req(ERRORS)
def test_a_long_chain_of_aliases_resolves_to_nothing_without_a_stack_overflow(
    tmp_path: Path,
) -> None:
    n = 2000
    (tmp_path / "m.sysml").write_text(
        "package S {\npart def X;\n"
        + "".join(f"alias A{k} for A{k + 1};\n" for k in range(n))
        + f"alias A{n} for X;\npart x : A0;\npart y : A{n - 5};\n}}\n"
    )
    with deadline(30):
        art = scan_sysml(tmp_path)
    typed = {e.props.get("name"): e.props.get("type") for e in art.elements.values()}
    assert typed["x"] == "A0" and typed["y"] == f"A{n - 5}"
    targets = {
        (lk.src.rpartition("::")[2], lk.dst.rpartition("::")[2])
        for lk in art.links.values()
        if lk.type == "TYPED"
    }
    assert ("y", "X") in targets  # a short chain still resolves
    assert not any(src == "x" for src, _ in targets)  # the long one resolves to nothing
    assert any("A0" in w.message for w in art.warnings)


@pytest.mark.req(ERRORS)
def test_many_elements_of_one_name_get_their_suffixes_in_linear_time(tmp_path: Path) -> None:
    n = 20000  # counting from 2 for each: about 90 s; linear: about 1 s
    (tmp_path / "m.sysml").write_text("part def A {\n" + "part x;\n" * n + "}\n")
    with deadline(30):
        art = scan_sysml(tmp_path)
    names = [
        e.props["name"]
        for e in art.elements.values()
        if str(e.props.get("name", "")).startswith("x")
    ]
    assert names == ["x"] + [f"x-{i}" for i in range(2, n + 1)]
