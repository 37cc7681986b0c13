"""Session settings are checked when a session is made, and settings a cabinet
holds that no engine could have written are reported as damage, not as a
Python error on every later open."""

from __future__ import annotations

from pathlib import Path

import pytest

import memnet
from memnet import Cabinet, Caps, MemNetError, Session
from memnet.cabinet import records as R

ERRORS = "MN-REQ-15"


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "options",
    [
        {"caps": Caps(rows=float("nan"))},  # type: ignore[arg-type]
        {"caps": Caps(bytes=float("inf"))},  # type: ignore[arg-type]
        {"caps": Caps(rows=-1)},
        {"caps": Caps(rows=0)},
        {"caps": Caps(rows=True)},
        {"caps": Caps(rows="x")},  # type: ignore[arg-type]
        {"caps": Caps(bytes=None)},  # type: ignore[arg-type]
        {"caps": {"rows": 5}},
        {"tokenizer": "nope"},
        {"history_limit": "a"},
        {"history_limit": -1},
        {"delete_on_settle": "yes"},
    ],
)
def test_bad_session_settings_are_invalid_argument_and_nothing_is_stored(
    options: dict, tmp_path: Path
) -> None:
    with pytest.raises(MemNetError) as e:
        Session("s", **options)
    assert e.value.code == "invalid_argument"
    with Cabinet.open(tmp_path / "cab") as cab:
        with pytest.raises(MemNetError) as e:
            cab.create("s", **options)
        assert e.value.code == "invalid_argument"
        assert cab.sessions() == []


@pytest.mark.req(ERRORS)
def test_settings_changed_on_a_live_session_are_refused_before_they_are_stored(
    tmp_path: Path,
) -> None:
    with Cabinet.open(tmp_path / "cab") as cab:
        s = Session("s")
        s.caps = Caps(rows=float("nan"))  # type: ignore[arg-type]
        with pytest.raises(MemNetError) as e:
            cab.adopt(s)
        assert e.value.code == "invalid_argument" and cab.sessions() == []


@pytest.mark.req(ERRORS)
@pytest.mark.parametrize(
    "change",
    [
        {"cap_rows": 1.5},
        {"cap_bytes": None},
        {"tokenizer": "nope"},
        {"tokenizer": 7},
        {"delete_on_settle": 2},
    ],
)
def test_malformed_stored_settings_are_cabinet_corrupt(change: dict, tmp_path: Path) -> None:
    with Cabinet.open(tmp_path / "cab") as cab:
        cab.create("s").commit("INSERT (t:TSK {title: 'x'})")

        def damage(txn: memnet.cabinet.kv.Txn) -> None:
            key = R.sid_key("s")
            cat = R.decode(txn.get(R.CATALOG, key), key)
            txn.put(R.CATALOG, key, R.encode({**cat, **change}, key))

        cab.kv.run_write(damage)
        with pytest.raises(MemNetError) as e:
            cab.open("s")
        assert e.value.code == "cabinet_corrupt" and "settings" in e.value.message
