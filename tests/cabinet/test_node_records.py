"""A node record whose checksum holds but whose shape is not a node's is
``cabinet_corrupt`` at hydrate, named by its id (a checksum proves the bytes
are the ones written, not that they are a node)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memnet import Cabinet, Session
from memnet.cabinet import records as R
from memnet.errors import CabinetCorrupt


def test_a_node_record_of_the_wrong_shape_is_cabinet_corrupt_by_id(tmp_path: Path) -> None:
    cab = Cabinet.open(str(tmp_path / "cab"))
    s = Session("shape")
    s.commit("INSERT " + ", ".join(f"(n{i}:TSK {{title: 't{i}'}})" for i in range(5)))
    cab.adopt(s)
    key = R.element_key("shape", 3)
    with cab.kv.read() as txn:
        raw = txn.get(R.NODES, key)
        assert raw is not None
        rec = R.decode(raw, key)
    assert R.is_node(rec)
    for bad in (rec[:7], rec[:7] + (65536,), (None,) + rec[1:]):
        # sealed as a record should be, so only the shape check can tell
        cab.kv.run_write(lambda t, b=bad: t.put(R.NODES, key, R.encode(b, key)))
        with pytest.raises(CabinetCorrupt, match=r"record 3 of 'shape' is not a node record"):
            cab.open("shape")
    cab.kv.run_write(lambda t: t.put(R.NODES, key, R.encode(rec, key)))
    assert cab.open("shape").stats()["nodes"] == 5
