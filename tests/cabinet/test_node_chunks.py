"""Node chunk records (cabinet format 5), on every backend.

A cabinet keeps the nodes of each full range of ``NODE_CHUNK`` ids as one
chunk record of columns, and a node a flush changed (or one past the last
full chunk) as a node record of its own that overrides its chunk's entry.
What a hydrate reads back must be the session as flushed, whichever way each
node was stored: after a flush that completes chunks, after flushes that
override chunked nodes, after a flush that writes the overridden chunks
again, and after an upgrade from format 4 (node records only). A chunk that
is damaged, missing or out of place is ``cabinet_corrupt``.
"""

from __future__ import annotations

from typing import Any

import pytest

from memnet import Cabinet, CabinetCorrupt, CabinetFormat, Session
from memnet.cabinet import elements
from memnet.cabinet import records as R
from memnet.cabinet.catalog import HEADER, read_catalog

from ._support import graph_of

NC = R.NODE_CHUNK
STORAGE = "MN-REQ-03"


def _grow(s: Session, n: int, tag: str) -> None:
    """Commit ``n`` nodes (batches of 400), each with a word of its own, a
    nick on every 97th, and edges between neighbours."""
    for lo in range(0, n, 400):
        hi = min(n, lo + 400)
        parts = [
            f"(x{i}:TSK"
            + (f" #{tag}n{i}" if i % 97 == 0 else "")
            + f" {{title: '{tag} w{tag}{i}', prio: {i % 5}}})"
            for i in range(lo, hi)
        ]
        parts += [f"(x{i})-[:NEXT]->(x{i + 1})" for i in range(lo, hi - 1)]
        s.commit("INSERT " + ",\n".join(parts))


def _layout(cab: Cabinet, sid: str) -> tuple[int, list[int], int]:
    """``(chunk records, ids of the node records, the catalog's nchunks)``."""
    chunk_pre = R.node_chunk_prefix(sid)
    chunks, singles = 0, []
    with cab.kv.read() as txn:
        for k, _v in txn.scan(R.NODES, R.prefix(sid)):
            if k.startswith(chunk_pre):
                chunks += 1
            else:
                singles.append(R.key_id(k))
        cat = read_catalog(txn, sid)
    assert cat is not None
    return chunks, singles, int(cat.get("nchunks", 0))


def _over(cab: Cabinet, sid: str) -> int:
    """The catalog's count of node records that override chunks."""
    with cab.kv.read() as txn:
        cat = read_catalog(txn, sid)
    assert cat is not None
    return int(cat.get("over", 0))


def _same(cab: Cabinet, s: Session, queries: tuple[str, ...]) -> None:
    """The session read back equals ``s``: graph, Shapes, and verify()."""
    back = cab.open(s.name)
    assert graph_of(back) == graph_of(s)
    for q in queries:
        assert back.recall(q).text == s.recall(q).text
    assert cab.verify()["nodes"] >= s.store.next_node - 1


@pytest.mark.req(STORAGE)
def test_chunks_complete_as_a_session_grows_and_overrides_read_back(
    place: Any, cabinet: Any
) -> None:
    s = cabinet.create("grow")
    _grow(s, 2500, "a")
    cabinet.flush(s)
    # ids 1..2500: chunks 0 (1..1023) and 1 (1024..2047), the rest node records
    chunks, singles, n = _layout(cabinet, "grow")
    assert (chunks, n) == (2, 2) and singles == list(range(2 * NC, 2501))
    _same(cabinet, s, ("TSK wa7", "TSK wa2400", "#an97"))

    # a change to a chunked node is a node record that overrides the chunk;
    # the index loses the old word (read from the chunk) and gains the new
    h = s.recall("TSK wa5").receipt.seeds[0]
    s.commit(f"SET {h}.title = 'renamed zqv'")
    s.commit(f"DELETE {s.recall('TSK wa1500').receipt.seeds[0]}")
    cabinet.flush(s)
    chunks, singles, n = _layout(cabinet, "grow")
    # the deleted node's neighbours lost an edge: their records changed too
    assert chunks == 2 and [i for i in singles if i < 2 * NC] == [6, 1500, 1501, 1502]
    assert _over(cabinet, "grow") == 4
    s.commit(f"SET {h}.prio = 7")  # the same node again: no new override
    cabinet.flush(s)
    assert _over(cabinet, "grow") == 4
    back = cabinet.open("grow")
    assert back.recall("TSK zqv").receipt.seeds == (h,)
    assert back.recall("TSK wa5").receipt.seed_mode != "match"
    _same(cabinet, s, ("TSK zqv", "TSK wa1500", "TSK wa1499"))

    # growing past 3,072 completes chunk 2: its node records go
    _grow(s, 700, "b")
    cabinet.flush(s)
    chunks, singles, n = _layout(cabinet, "grow")
    assert (chunks, n) == (3, 3)
    assert singles == [6, 1500, 1501, 1502] + list(range(3 * NC, s.store.next_node))
    _same(cabinet, s, ("TSK zqv", "TSK wb650", "TSK wa2400"))
    if place.persistent:
        again = place.reopen(cabinet)
        assert graph_of(again.open("grow")) == graph_of(s)


@pytest.mark.req(STORAGE)
def test_overridden_chunks_are_written_again_past_the_share(cabinet: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(elements, "OVERRIDE_MIN", 3)
    monkeypatch.setattr(elements, "OVERRIDE_SHARE", 1 << 30)
    s = cabinet.create("fold")
    _grow(s, 2200, "c")
    cabinet.flush(s)
    for i in (3, 700, 1800):
        s.commit(f"SET {s.recall(f'TSK wc{i}').receipt.seeds[0]}.prio = 99")
        cabinet.flush(s)
    assert _layout(cabinet, "fold")[1][:3] == [4, 701, 1801]
    _same(cabinet, s, ("TSK wc3", "TSK wc1800"))
    s.commit(f"SET {s.recall('TSK wc10').receipt.seeds[0]}.title = 'folded qqz'")
    cabinet.flush(s)  # the fourth override: chunks 0 and 1 are written again
    chunks, singles, n = _layout(cabinet, "fold")
    assert (chunks, n) == (2, 2) and singles == list(range(2 * NC, 2201))
    assert _over(cabinet, "fold") == 0
    _same(cabinet, s, ("TSK qqz", "TSK wc10", "TSK wc700"))


def test_a_damaged_missing_or_misplaced_chunk_is_cabinet_corrupt(tmp_path: Any) -> None:
    cab = Cabinet.open(str(tmp_path / "cab"))
    s = Session("dmg")
    _grow(s, 2100, "d")
    cab.adopt(s)
    key0, key1 = R.node_chunk_key("dmg", 0), R.node_chunk_key("dmg", 1)
    with cab.kv.read() as txn:
        raw0, raw1 = txn.get(R.NODES, key0), txn.get(R.NODES, key1)
    assert raw0 is not None and raw1 is not None

    def put(key: bytes, value: bytes | None) -> None:
        if value is None:
            cab.kv.run_write(lambda t: t.delete(R.NODES, key))
        else:
            cab.kv.run_write(lambda t: t.put(R.NODES, key, value))

    flipped = bytearray(raw0)
    flipped[len(flipped) // 2] ^= 0xFF
    first, cols = R.decode_node_chunk(raw0, key0)
    recs = list(zip(*cols, strict=True))
    short = R.encode_node_chunk(key0, first, recs[:-1])  # sealed, one node short
    bad_kind = R.encode((first, (), False, b"", *[()] * 6, b""), key0)
    cases = [
        (key0, bytes(flipped), r"failed its checksum"),
        (key0, None, r"node chunk .* out of place|missing"),
        (key0, raw1, r"failed its checksum"),
        (key0, short, r"node chunk 0 holds the wrong nodes"),
        (key0, bad_kind, r"node chunk record .* is malformed"),
    ]
    for key, value, why in cases:
        put(key, value)
        with pytest.raises(CabinetCorrupt, match=why):
            cab.open("dmg")
        with pytest.raises(CabinetCorrupt):
            cab.verify()
        put(key0, raw0)
    assert graph_of(cab.open("dmg")) == graph_of(s)
    # a node record that overrides a chunk, lost, is found missing by its
    # count (the chunk's stale entry is never read instead); one under no
    # node id is out of place
    back = cab.open("dmg")
    back.commit(
        f"INSERT ({back.recall('TSK wd4').receipt.seeds[0]})-[:L]->"
        f"({back.recall('TSK wd9').receipt.seeds[0]})"
    )
    cab.flush(back)
    k5 = R.element_key("dmg", 5)
    with cab.kv.read() as txn:
        raw5 = txn.get(R.NODES, k5)
    assert raw5 is not None
    put(k5, None)
    with pytest.raises(
        CabinetCorrupt, match="1 node records override node chunks, the catalog counts 2"
    ):
        cab.open("dmg")
    put(k5, raw5)
    put(R.element_key("dmg", 0), raw5)
    with pytest.raises(CabinetCorrupt, match="out of place"):
        cab.open("dmg")
    put(R.element_key("dmg", 0), None)
    assert graph_of(cab.open("dmg")) == graph_of(back)
    # a chunk past the catalog's count, or a node record past the last node
    put(R.node_chunk_key("dmg", 5), raw1)
    with pytest.raises(CabinetCorrupt, match="past the catalog's count"):
        cab.verify()
    put(R.node_chunk_key("dmg", 5), None)
    assert cab.verify()["nodes"] == 2100
    put(k5, None)
    with pytest.raises(CabinetCorrupt, match="override node chunks"):
        cab.verify()


@pytest.mark.req(STORAGE)
def test_a_format_4_cabinet_is_refused_then_upgraded_into_chunks(tmp_path: Any) -> None:
    path = str(tmp_path / "cab")
    cab = Cabinet.open(path)
    s = Session("old")
    _grow(s, 2300, "e")
    cab.adopt(s)

    def to_format_4(t: Any) -> None:
        # node records only, as format 4 kept them, and a format-4 header
        for c in range(2):
            key = R.node_chunk_key("old", c)
            raw = t.get(R.NODES, key)
            first, cols = R.decode_node_chunk(raw, key)
            for i, rec in enumerate(zip(*cols, strict=True), first):
                rec = (*rec[:4], bool(rec[4]), *rec[5:])
                k = R.element_key("old", i)
                t.put(R.NODES, k, R.encode(rec, k))
            t.delete(R.NODES, key)
        ckey = R.sid_key("old")
        cat = R.decode(t.get(R.CATALOG, ckey), ckey)
        cat = {k: v for k, v in cat.items() if k not in ("nchunks", "over")}
        t.put(R.CATALOG, ckey, R.encode(cat, ckey))
        header = dict(R.decode(t.get(R.META, HEADER), HEADER), format=4)
        t.put(R.META, HEADER, R.encode(header, HEADER))

    cab.kv.run_write(to_format_4)
    assert _layout(cab, "old") == (0, list(range(1, 2301)), 0)
    cab.close()
    with pytest.raises(CabinetFormat, match="format 4 .*upgrade"):
        Cabinet.open(path)
    assert Cabinet.upgrade(path) == {"sessions": 1, "nodes": 2300}
    cab = Cabinet.open(path)
    assert _layout(cab, "old") == (2, list(range(2 * NC, 2301)), 2)
    _same(cab, s, ("TSK we5", "TSK we2299"))
    cab.close()


@pytest.mark.req(STORAGE)
def test_a_flush_diffs_a_changed_node_against_the_state_it_kept(
    cabinet: Any, monkeypatch: Any
) -> None:
    """The index delta of a flush needs the terms each changed node had when
    last flushed. The store keeps that state at the node's first change, so
    the flush reads no record (a chunk holds a thousand nodes); only after a
    flush whose outcome was unknown landed does it read them back."""
    from memnet.cabinet import postings

    s = cabinet.create("kept")
    _grow(s, 1500, "f")
    cabinet.flush(s)
    read: list[list[int]] = []
    real = postings._stored_nodes
    monkeypatch.setattr(
        postings,
        "_stored_nodes",
        lambda txn, sid, nodes, cover: read.append(nodes) or real(txn, sid, nodes, cover),
    )
    h = s.recall("TSK wf7").receipt.seeds[0]
    s.commit(f"SET {h}.title = 'kept state qqv'")
    s.commit(f"SET {h}.title = 'kept state twice qqw'")
    s.commit(f"DELETE {s.recall('TSK wf9').receipt.seeds[0]}")
    cabinet.flush(s)
    assert read == []
    back = cabinet.open("kept")
    assert back.recall("TSK qqw").receipt.seeds == (h,)
    assert back.recall("TSK qqv").receipt.seed_mode != "match"
    assert back.recall("TSK wf7").receipt.seed_mode != "match"
    assert cabinet.verify()["nodes"] == 1500
    # a flush whose outcome was unknown, that landed: the next reads records
    s.commit(f"SET {h}.title = 'landed qqx'")
    real_run = cabinet.kv.run_write

    def lost_answer(work: Any) -> Any:
        real_run(work)
        raise ConnectionError("the answer was lost")

    monkeypatch.setattr(cabinet.kv, "run_write", lost_answer)
    with pytest.raises(ConnectionError):
        cabinet.flush(s)
    monkeypatch.setattr(cabinet.kv, "run_write", real_run)
    s.commit(f"SET {h}.title = 'after qqy'")
    cabinet.flush(s)
    assert read == [[h_id(s, h)]]
    back = cabinet.open("kept")
    assert back.recall("TSK qqy").receipt.seeds == (h,)
    assert back.recall("TSK qqx").receipt.seed_mode != "match"
    assert cabinet.verify()["nodes"] == 1500


def h_id(s: Session, handle: str) -> int:
    kind, nid = s.store.resolve(handle)
    assert kind == "n"
    return int(nid)
