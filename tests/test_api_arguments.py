"""Arguments of the wrong type or out of range given to the cabinet and Absorb
API: each is ``invalid_argument`` (a MemNetError and a ValueError), before
anything is read or written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memnet
from memnet import Cabinet, Session, export_working_memory_slice, import_slice

ERRORS = "MN-REQ-15"


def _member() -> Session:
    s = Session("m")
    s.commit("INSERT (a:TSK {title: 'x'})-[:R]->(b:TSK {title: 'y'}), (c:TSK {title: 'z'})")
    return s


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.flush(None),
        lambda c: c.adopt("s"),
        lambda c: c.is_stale(None),
        lambda c: c.backup(None),
        lambda c: c.backup(5),
        lambda c: c.backup(""),
        lambda c: c.log("s", since=None),
        lambda c: c.log("s", since="x"),
        lambda c: c.log("s", since=-1),
    ],
)
def test_cabinet_arguments_of_the_wrong_kind_are_invalid_argument(
    tmp_path: Path, call: Callable[[Cabinet], Any]
) -> None:
    with Cabinet.open(tmp_path / "cab") as cab:
        cab.create("s")
        with pytest.raises(memnet.MemNetError) as e:
            call(cab)
        assert e.value.code == "invalid_argument" and isinstance(e.value, ValueError)
        assert [i.id for i in cab.sessions()] == ["s"]


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "call",
    [
        lambda s: export_working_memory_slice(s, "na1"),  # a handle, not a list of them
        lambda s: export_working_memory_slice(s, ["na1"], hops="2"),
        lambda s: export_working_memory_slice(s, ["na1"], budget=True),
        lambda s: export_working_memory_slice(s, ["na1"], fanout=2.0),
        lambda s: export_working_memory_slice(None, ["na1"]),
        lambda s: import_slice(None, export_working_memory_slice(s, ["na1"])),
    ],
)
def test_absorb_arguments_of_the_wrong_kind_are_invalid_argument(
    call: Callable[[Session], Any],
) -> None:
    s = _member()
    with pytest.raises(memnet.MemNetError) as e:
        call(s)
    assert e.value.code == "invalid_argument"
    assert s.version == 1


@pytest.mark.req(ERRORS)
def test_recall_laws_and_apply_delta_inputs_are_checked() -> None:
    s = _member()
    for laws in ("no", 0, None):
        with pytest.raises(memnet.MemNetError) as e:
            s.recall("TSK", laws=laws)  # type: ignore[arg-type]
        assert e.value.code == "bad_query"
    shape = s.recall("TSK")
    for old, new in ((None, shape.text), (5, shape.text), (shape.text, None), ([], [])):
        with pytest.raises(memnet.MemNetError) as e:
            memnet.apply_delta(old, new)  # type: ignore[arg-type]
        assert e.value.code == "invalid_argument"


@pytest.mark.req(ERRORS)
def test_more_exported_functions_check_their_arguments(tmp_path: Path) -> None:
    for call in (
        lambda: memnet.count_tokens(None),
        lambda: memnet.count_tokens(b"x"),
        lambda: memnet.ImportGuard(max_rows=None),
        lambda: memnet.ImportGuard(max_rows=float("nan")),
        lambda: import_slice(_member(), "{}", guard=5),
    ):
        with pytest.raises(memnet.MemNetError) as e:
            call()  # type: ignore[no-untyped-call]
        assert e.value.code == "invalid_argument"
    with Cabinet.open(tmp_path / "cab") as cab:
        with pytest.raises(memnet.MemNetError) as e:
            cab.create("b", bogus=1)
        assert e.value.code == "invalid_argument" and cab.sessions() == []
        cab.create("b")
        with pytest.raises(memnet.MemNetError) as e:
            cab.open("b", bogus=1)
        assert e.value.code == "invalid_argument"
        (tmp_path / "x.txt").write_text("mine")
        with pytest.raises(memnet.MemNetError) as e:
            cab.backup(tmp_path / "x.txt")
        assert e.value.code == "path_not_found" and (tmp_path / "x.txt").read_text() == "mine"


@pytest.mark.req(ERRORS)
def test_a_version_that_is_not_a_whole_number_is_version_not_found() -> None:
    with Cabinet.open(backend="memory") as cab:
        s = cab.create("a")
        s.commit("INSERT (t:TSK {title: 'x'})")
        cab.flush(s)
        for at in (True, "1", -1, 1.0):
            with pytest.raises(memnet.MemNetError) as e:
                cab.open("a", at=at)  # type: ignore[arg-type]
            assert e.value.code == "version_not_found"
        assert cab.open("a", at=0).version == 0
