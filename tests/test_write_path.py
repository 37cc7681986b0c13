"""The write path's helpers: the collector pause around a commit and the
handle reader every name of a Δ goes through."""

from __future__ import annotations

import gc
import re
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memnet
from memnet.commit import gc_paused
from memnet.graph.store import edge_handle, node_handle, parse_handle


def test_a_commit_leaves_the_collector_as_it_found_it() -> None:
    s = memnet.Session("gc")
    assert gc.isenabled()
    s.commit("INSERT (t:TSK {title: 'a'})")
    assert gc.isenabled()
    with pytest.raises(memnet.CommitRejected):
        s.commit("SET nzz.x = 1")
    assert gc.isenabled()
    gc.disable()
    try:
        s.commit("INSERT (u:TSK {title: 'b'})")
        assert not gc.isenabled()  # turned off by the caller: left off
    finally:
        gc.enable()


def test_a_flush_holds_the_collector_over_its_write_and_leaves_it_on(tmp_path) -> None:
    from memnet import Cabinet
    from memnet.cabinet import kv_lmdb

    seen = []
    real = kv_lmdb.LmdbKV.run_write

    def run_write(self, fn):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return real(self, fn)

    with Cabinet.open(tmp_path / "cab") as cab:
        s = cab.create("gc")
        s.commit("INSERT (t:TSK {title: 'a'})")
        kv_lmdb.LmdbKV.run_write = run_write  # type: ignore[method-assign]
        try:
            cab.flush(s)
            stale = cab.open("gc")
            s.commit("INSERT (u:TSK {title: 'b'})")
            cab.flush(s)
            stale.commit("INSERT (v:TSK {title: 'c'})")
            with pytest.raises(memnet.ConflictError):
                cab.flush(stale)
        finally:
            kv_lmdb.LmdbKV.run_write = real  # type: ignore[method-assign]
    assert seen == [False, False, False]
    assert gc.isenabled()


def test_nested_and_concurrent_pauses_end_with_the_last() -> None:
    entered, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with gc_paused():
            entered.set()
            leave.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(5)
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other write still holds it
    leave.set()
    t.join()
    assert gc.isenabled()


_HANDLE = re.compile(r"([ne])([a-i])([1-9a-z][0-9a-z]{0,8})\Z")


@pytest.mark.parametrize(
    "text",
    [
        "na1",
        "nb1a",
        "ec2zz",
        "ei100000000",
        "na0",
        "nb01",
        "naA",
        "nb1_",
        "na1\n",
        "n",
        "",
        "ne",
        "xa1",
        "nA1",
        "na١",
        "nc1a",
        "eb-1",
        "na 1",
    ],
)
def test_parse_handle_reads_what_the_handle_pattern_matches(text: str) -> None:
    m = _HANDLE.match(text)
    want = (
        None
        if m is None or "abcdefghi".index(m.group(2)) + 1 != len(m.group(3))
        else (m.group(1), int(m.group(3), 36))
    )
    assert parse_handle(text) == want


def test_handles_read_back() -> None:
    # the table-read ranges end at 36**2 and 36**4; ids on both sides of each
    for i in (1, 35, 36, 1295, 1296, 46655, 46656, 1679615, 1679616, 10**9, 36**9 - 1):
        assert parse_handle(node_handle(i)) == ("n", i)
        assert parse_handle(edge_handle(i)) == ("e", i)


@given(st.integers(1, 36**9 - 1))
def test_handles_are_the_id_in_base_36_behind_a_length_letter(i: int) -> None:
    digits = ""
    n = i
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    head = "abcdefghi"[len(digits) - 1]
    assert node_handle(i) == f"n{head}{digits}"
    assert edge_handle(i) == f"e{head}{digits}"
