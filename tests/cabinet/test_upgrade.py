"""A cabinet whose word index was built another way (format 3, or another
stemmer) is refused with ``cabinet_format`` and a way out, and
``Cabinet.upgrade`` rebuilds the index in place so it reads right."""

from __future__ import annotations

import re
import zlib
from array import array
from pathlib import Path
from typing import Any

import msgpack
import pytest

from memnet import Cabinet
from memnet.cabinet import records as R
from memnet.cabinet.backends import open_kv
from memnet.errors import CabinetFormat
from memnet.faces.cli import main

ERRORS = "MN-REQ-14.3"


def _header(cab: Cabinet) -> dict[str, Any]:
    with cab.kv.read() as txn:
        raw = txn.get(R.META, b"format")
    assert raw is not None
    return R.decode(raw, b"format")  # type: ignore[no-any-return]


def _put_header(cab: Cabinet, header: dict[str, Any]) -> None:
    cab.kv.run_write(lambda t: t.put(R.META, b"format", R.encode(header, b"format")))


def _v3(payload: Any) -> bytes:
    """A format-3 record: the checksum covered the payload only."""
    body = msgpack.packb(payload, use_bin_type=True)
    return zlib.crc32(body).to_bytes(4, "big") + body


def _format3(path: Path) -> None:
    """Turn the cabinet at ``path`` into what format 3 wrote: records sealed
    without their key, node records of seven fields, the old word terms
    (``w`` + runs of word characters: no parts, no stems, no levels), and a
    header and catalog without the fields format 4 added."""
    cab = Cabinet.open(path)
    try:

        def work(txn: Any) -> None:
            for k, v in list(txn.scan(R.CATALOG)):
                sid = k.decode()
                cat = R.decode(v, k)
                postings: dict[bytes, list[int]] = {}
                for nk, nv in list(txn.scan(R.NODES, R.prefix(sid))):
                    rec = R.decode(nv, nk)[:7]
                    props = msgpack.unpackb(rec[2], use_list=False) if rec[2] else {}
                    nid = R.key_id(nk)
                    postings.setdefault(b"k" + rec[0].encode(), []).append(nid)
                    for val in props.values():
                        for x in val if isinstance(val, tuple) else (val,):
                            if isinstance(x, str):
                                for w in set(re.findall(r"\w+", x.casefold())):
                                    postings.setdefault(b"w" + w.encode(), []).append(nid)
                    txn.put(R.NODES, nk, _v3(rec))
                for table in (R.EDGES, R.LOG):
                    for ek, ev in list(txn.scan(table, R.prefix(sid))):
                        txn.put(table, ek, zlib.crc32(ev[4:]).to_bytes(4, "big") + ev[4:])
                txn.delete_prefix(R.POSTINGS, R.prefix(sid))
                buckets: dict[int, dict[bytes, bytes]] = {}
                for term, ids in postings.items():
                    buckets.setdefault(R.bucket_of(term), {})[term] = array("I", ids).tobytes()
                for b, m in buckets.items():
                    txn.put(R.POSTINGS, R.bucket_key(sid, 0, b), _v3(m))
                for extra in ("precs", "tokenizer", "flush"):
                    cat.pop(extra, None)
                txn.put(R.CATALOG, k, _v3(dict(cat, pdelta=0)))
                txn.delete(R.LOG, R.birth_key(sid))  # (format 7)
            header = R.decode(txn.get(R.META, b"format"), b"format")
            for extra in ("sessions", "words"):
                header.pop(extra, None)
            txn.put(R.META, b"format", _v3(dict(header, format=3)))

        cab.kv.run_write(work)
    finally:
        cab.close()


def _fill(path: Path) -> dict[str, str]:
    cab = Cabinet.open(path)
    s = cab.create("code")
    ids = s.commit(
        "INSERT (f:SYM {name: 'betweenness_centrality'}), "
        "(d:DEC {title: 'Round half-even'}), (t:TSK {title: 'pricing', "
        "status: 'open'}), (f)-[:TOUCHES]->(d)"
    ).ids
    cab.flush(s)
    cab.close()
    return ids


@pytest.mark.req(ERRORS)
def test_a_format_3_cabinet_is_refused_then_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "cab"
    ids = _fill(path)
    _format3(path)
    with pytest.raises(CabinetFormat) as info:
        Cabinet.open(path)
    assert info.value.code == "cabinet_format" and "memnet cabinet upgrade" in str(info.value)
    assert Cabinet.upgrade(path) == {"sessions": 1, "nodes": 3}
    cab = Cabinet.open(path)
    try:
        assert cab.verify()["sessions"] == 1
        s = cab.open("code")
        # the new words: identifier parts and stems are found
        assert s.recall("betweenness centrality").receipt.seeds == (ids["f"],)
        assert s.recall("DEC rounding").receipt.seeds == (ids["d"],)
        # and the session keeps working: a commit and a flush
        s.commit("INSERT (x:TSK {title: 'more pricing'})")
        cab.flush(s)
        assert cab.open("code").recall("TSK pricing").receipt.matched == 2
        assert cab.verify()["sessions"] == 1
    finally:
        cab.close()
    # an up-to-date cabinet needs nothing
    assert Cabinet.upgrade(path) == {"sessions": 0, "nodes": 0}


@pytest.mark.req(ERRORS)
def test_an_index_from_another_stemmer_is_refused_until_upgraded(
    tmp_path: Path, capsys: Any
) -> None:
    path = tmp_path / "cab"
    ids = _fill(path)
    cab = Cabinet.open(path)
    _put_header(cab, dict(_header(cab), words="snowball-english/PyStemmer-0.0"))
    cab.close()
    with pytest.raises(CabinetFormat) as info:
        Cabinet.open(path)
    assert "PyStemmer-0.0" in str(info.value)
    # the CLI says the same, with the code, and upgrades
    assert main(["--home", str(path), "session", "list"]) != 0
    assert "cabinet_format" in capsys.readouterr().err
    assert main(["--home", str(path), "cabinet", "upgrade"]) == 0
    assert "1 session" in capsys.readouterr().out
    cab = Cabinet.open(path)
    try:
        assert cab.open("code").recall("pricing").receipt.seeds == (ids["t"],)
    finally:
        cab.close()


@pytest.mark.req(ERRORS)
def test_a_format_the_upgrade_does_not_know_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "cab"
    _fill(path)
    cab = Cabinet.open(path)
    _put_header(cab, dict(_header(cab), format=2))
    cab.close()
    with pytest.raises(CabinetFormat):
        Cabinet.upgrade(path)
    cab = Cabinet.__new__(Cabinet)  # the header is unchanged
    with pytest.raises(CabinetFormat):
        Cabinet.open(path)


@pytest.mark.req(ERRORS)
def test_an_upgrade_from_format_3_that_stopped_half_way_is_run_again(tmp_path: Path) -> None:
    """Each session is upgraded in a transaction of its own and the header
    last: after a stop between two sessions, the next run finds one session
    converted and one not, and finishes both."""
    from functools import partial

    from memnet.cabinet.catalog import _upgrade_session

    path = tmp_path / "cab"
    ids = _fill(path)
    cab = Cabinet.open(path)
    s = cab.create("more")
    s.commit("INSERT (t:TSK {title: 'second session'})")
    cab.flush(s)
    cab.close()
    _format3(path)
    kv = open_kv(str(path), "lmdb", None, True, R.TABLES)
    kv.run_write(partial(_upgrade_session, sid="code", fmt=3, index="reindex"))
    kv.close()
    with pytest.raises(CabinetFormat):
        Cabinet.open(path)
    assert Cabinet.upgrade(path) == {"sessions": 2, "nodes": 4}
    cab = Cabinet.open(path)
    try:
        assert cab.verify()["sessions"] == 2
        assert cab.open("code").recall("DEC rounding").receipt.seeds == (ids["d"],)
        assert cab.open("more").recall("TSK second").receipt.matched == 1
    finally:
        cab.close()


def _format5(where: Path | Cabinet) -> dict[str, int]:
    """Turn the postings of the cabinet at ``path`` into format 5's layout:
    buckets by the CRC-32 of the whole term, keyed range first, a long
    posting's record under bucket 0xFFFF (pending deltas stay as they are).
    Returns how many records of each sort it saw. ``where``: an LMDB
    directory, or an open cabinet of any backend (left open)."""
    import struct

    old = struct.Struct(">IH")
    seen = {"bucket": 0, "own": 0, "delta": 0}
    cab = where if isinstance(where, Cabinet) else Cabinet.open(where)
    try:

        def work(txn: Any) -> None:
            for k, _v in list(txn.scan(R.CATALOG)):
                sid = k.decode()
                pre = R.prefix(sid)
                dpre = R.delta_prefix(sid)
                moved: dict[bytes, bytes] = {}
                buckets: dict[tuple[int, int], dict[bytes, bytes]] = {}
                for pk, pv in list(txn.scan(R.POSTINGS, pre)):
                    if pk.startswith(dpre):
                        seen["delta"] += 1
                        continue
                    rng, _b, term = R.split_bucket_key(pk, len(pre))
                    seen["bucket" if term is None else "own"] += 1
                    if term is None:
                        for t, ids in R.decode_bucket(pv, pk, deep=False).items():
                            ob = zlib.crc32(t) & 4095
                            buckets.setdefault((rng, ob), {})[t] = ids
                    else:
                        key = pre + old.pack(rng, 0xFFFF) + term
                        moved[key] = R.seal(key, R.decode_ids(pv, pk))
                    txn.delete(R.POSTINGS, pk)
                for (rng, ob), m in buckets.items():
                    key = pre + old.pack(rng, ob)
                    moved[key] = R.encode(m, key)
                for key, val in moved.items():
                    txn.put(R.POSTINGS, key, val)
                cat = R.decode(txn.get(R.CATALOG, k), k)
                txn.put(R.CATALOG, k, R.encode(dict(cat, precs=len(moved)), k))
            _format6_sessions(txn)
            header = R.decode(txn.get(R.META, b"format"), b"format")
            txn.put(R.META, b"format", R.encode(dict(header, format=5), b"format"))

        cab.kv.run_write(work)
    finally:
        if cab is not where:
            cab.close()
    return seen


def _format6_sessions(txn: Any) -> None:
    """What formats 4 to 6 kept of the sessions: a count in the header, no
    birth records."""
    sids = [k for k, _v in txn.scan(R.CATALOG)]
    for k in sids:
        assert txn.delete(R.LOG, R.birth_key(k.decode()))
    header = R.decode(txn.get(R.META, b"format"), b"format")
    txn.put(R.META, b"format", R.encode(dict(header, format=6, sessions=len(sids)), b"format"))


def _upgrade_place(place: Any, cab: Cabinet) -> dict[str, int]:
    """Cabinet.upgrade of the place's cabinet (an in-memory one is upgraded
    on its backend, which has no path to open again)."""
    from memnet.cabinet.catalog import upgrade_cabinet

    cab.close()
    if place.name == "memory":
        return upgrade_cabinet(place.kv, None)
    return Cabinet.upgrade(
        place.url if place.name == "postgres" else place.path, backend=place.name
    )


@pytest.mark.req(ERRORS)
def test_a_format_5_cabinet_is_refused_then_upgraded_to_the_same_answers(
    place: Any, monkeypatch: Any
) -> None:
    """Format 6 stores the postings in other buckets and another key order:
    a format-5 cabinet (long postings in records of their own, postings over
    several id ranges, a pending delta) is refused, and once upgraded (its
    postings moved, no node read) it verifies and answers every Recall with
    the same text as before, on every backend."""
    monkeypatch.setattr(R, "POSTING_RANGE", 64)  # many ranges from a few hundred nodes
    monkeypatch.setattr(R, "POSTING_BIG", 16)  # and postings in records of their own
    cab = place.open()
    s = cab.create("many")
    ids = s.commit(
        "INSERT "
        + ", ".join(
            f"(t{i}:TSK {{title: 'common word{i % 7} item{i}', "
            f"status: '{('open', 'done')[i % 3 == 0]}'}})"
            for i in range(400)
        )
    ).ids
    cab.flush(s)
    s.commit(f"INSERT (x:DEC {{title: 'Round half-even'}}) SET {ids['t5']}.title = 'changed'")
    cab.flush(s)  # a small change: a pending delta record
    queries = [
        "TSK common",
        "word3",
        "TSK status:open item12",
        "DEC rounding",
        "changed",
        "item399",
        "",
    ]
    before = [s.recall(q).text for q in queries]
    seen = _format5(cab)
    assert seen["bucket"] > 100 and seen["own"] > 10 and seen["delta"] == 1
    with pytest.raises(CabinetFormat):
        place.reopen(cab)
    assert _upgrade_place(place, cab) == {"sessions": 1, "nodes": 401}
    cab = place.open()
    try:
        assert cab.verify()["sessions"] == 1
        assert [cab.open("many").recall(q).text for q in queries] == before
        assert _header(cab)["format"] == R.FORMAT_VERSION == 7 and "sessions" not in _header(cab)
    finally:
        cab.close()


@pytest.mark.req(ERRORS)
def test_an_upgrade_from_format_5_that_stopped_half_way_is_refused_then_finished(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The header is marked before the first session is rewritten: after a
    stop, neither this engine nor a format-5 one reads the half-moved
    cabinet (this one says to run the upgrade again), and the next run takes
    up after the last session done, ending with the same answers."""
    from memnet.cabinet import catalog
    from memnet.graph.words import stemmer_id

    path = tmp_path / "cab"
    cab = Cabinet.open(path)
    for sid in ("a", "b", "c"):
        s = cab.create(sid)
        s.commit(
            f"INSERT (t:TSK {{title: 'pricing in {sid}', status: 'open'}}), "
            "(d:DEC {title: 'Round half-even'}), (t)-[:TOUCHES]->(d)"
        )
        cab.flush(s)
    queries = ["TSK pricing", "DEC rounding", "half", ""]
    before = {sid: [cab.open(sid).recall(q).text for q in queries] for sid in ("a", "b", "c")}
    cab.close()
    _format5(path)
    real = catalog._upgrade_session
    calls: list[str] = []

    def stop_at_b(txn: Any, sid: str, fmt: int, index: str) -> int:
        calls.append(sid)
        if sid == "b":
            raise KeyboardInterrupt
        return real(txn, sid, fmt, index)

    monkeypatch.setattr(catalog, "_upgrade_session", stop_at_b)
    with pytest.raises(KeyboardInterrupt):
        Cabinet.upgrade(path)
    with pytest.raises(CabinetFormat, match="upgrade .* again"):
        Cabinet.open(path)
    kv = open_kv(str(path), "lmdb", None, True, R.TABLES)
    with kv.read() as txn:
        header = R.decode(txn.get(R.META, b"format"), b"format")
    kv.close()
    # an engine of format 5 reads the format number first, and refuses 7
    assert header["format"] == 7 and header["upgrading"] == {
        "from": 5,
        "index": "rebucket",
        "words": stemmer_id(),
        "after": "a",
    }
    monkeypatch.setattr(catalog, "_upgrade_session", real)
    assert Cabinet.upgrade(path) == {"sessions": 2, "nodes": 4}  # b and c; a was done
    cab = Cabinet.open(path)
    try:
        assert cab.verify()["sessions"] == 3
        assert "upgrading" not in _header(cab)
        assert {
            sid: [cab.open(sid).recall(q).text for q in queries] for sid in ("a", "b", "c")
        } == before
    finally:
        cab.close()
    assert calls == ["a", "b"]


def _three_format5(path: Path) -> dict[str, list[str]]:
    """Three small sessions in a format-5 cabinet at ``path``; their answers
    to a few queries before."""
    cab = Cabinet.open(path)
    out = {}
    for sid in ("a", "b", "c"):
        s = cab.create(sid)
        s.commit(
            f"INSERT (t:TSK {{title: 'pricing in {sid}', status: 'open'}}), "
            "(d:DEC {title: 'Round half-even'}), (t)-[:TOUCHES]->(d)"
        )
        cab.flush(s)
        out[sid] = [s.recall(q).text for q in ("TSK pricing", "DEC rounding", "")]
    cab.close()
    _format5(path)
    return out


def _answers(path: Path) -> dict[str, list[str]]:
    cab = Cabinet.open(path)
    try:
        assert cab.verify()["sessions"] == 3
        return {
            sid: [cab.open(sid).recall(q).text for q in ("TSK pricing", "DEC rounding", "")]
            for sid in ("a", "b", "c")
        }
    finally:
        cab.close()


@pytest.mark.req(ERRORS)
def test_two_upgrades_at_once_convert_each_session_once(tmp_path: Path) -> None:
    """A second upgrade started while the first is between two sessions
    finishes the cabinet; the first then finds every later session done (its
    transaction reads the mark again) instead of moving moved postings."""
    path = tmp_path / "cab"
    before = _three_format5(path)
    inner: list[dict[str, int]] = []

    def progress(done: int, total: int) -> None:
        if done == 1 and not inner:
            inner.append(Cabinet.upgrade(path))  # the second run, to the end

    assert Cabinet.upgrade(path, progress=progress) == {"sessions": 1, "nodes": 2}
    assert inner == [{"sessions": 2, "nodes": 4}]
    assert _answers(path) == before


@pytest.mark.req(ERRORS)
def test_an_upgrade_taken_up_under_another_stemmer_redoes_every_session(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Sessions moved before a stop hold the words of the stemmer that moved
    them: when the upgrade is taken up by a build that stems otherwise, every
    session's index is built again from its nodes, and the header names the
    stemmer that built them all."""
    from memnet.cabinet import catalog

    path = tmp_path / "cab"
    before = _three_format5(path)
    real = catalog._upgrade_session
    calls: list[tuple[str, str]] = []

    def stop_at_b(txn: Any, sid: str, fmt: int, index: str) -> int:
        calls.append((sid, index))
        if sid == "b" and len(calls) == 2:
            raise KeyboardInterrupt
        return real(txn, sid, fmt, index)

    monkeypatch.setattr(catalog, "_upgrade_session", stop_at_b)
    with pytest.raises(KeyboardInterrupt):
        Cabinet.upgrade(path)
    monkeypatch.setattr(catalog, "stemmer_id", lambda: "snowball-english/PyStemmer-test")
    assert Cabinet.upgrade(path) == {"sessions": 3, "nodes": 6}
    assert calls == [
        ("a", "rebucket"),
        ("b", "rebucket"),
        ("a", "reindex"),
        ("b", "reindex"),
        ("c", "reindex"),
    ]
    kv = open_kv(str(path), "lmdb", None, True, R.TABLES)
    with kv.read() as txn:
        header = R.decode(txn.get(R.META, b"format"), b"format")
    kv.close()
    assert header["words"] == "snowball-english/PyStemmer-test" and "upgrading" not in header
    monkeypatch.undo()
    with pytest.raises(CabinetFormat, match="PyStemmer-test"):
        Cabinet.open(path)  # this build stems otherwise again: refused, never misread
    assert Cabinet.upgrade(path) == {"sessions": 3, "nodes": 6}
    assert _answers(path) == before


@pytest.mark.req(ERRORS)
def test_a_malformed_upgrade_mark_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cab"
    _fill(path)
    cab = Cabinet.open(path)
    _put_header(cab, dict(_header(cab), upgrading="half"))
    cab.close()
    with pytest.raises(CabinetFormat, match="again"):
        Cabinet.open(path)
    from memnet.errors import CabinetCorrupt

    with pytest.raises(CabinetCorrupt, match="upgrade mark"):
        Cabinet.upgrade(path)


@pytest.mark.req(ERRORS)
def test_a_format_6_cabinet_is_refused_then_upgraded_in_one_transaction(place: Any) -> None:
    """Format 7 keeps no count of the sessions in the header (every create
    and drop rewrote it) but a birth record of each session: a format-6
    cabinet is refused with the way out, and its upgrade writes those
    records and reads no node."""
    cab = place.open()
    for sid in ("a", "b", "c"):
        s = cab.create(sid)
        s.commit(f"INSERT (t:TSK {{title: 'pricing in {sid}'}})")
        cab.flush(s)
    before = {sid: cab.open(sid).recall("TSK pricing").text for sid in ("a", "b", "c")}
    cab.kv.run_write(_format6_sessions)
    with pytest.raises(CabinetFormat) as info:
        place.reopen(cab)
    assert "memnet cabinet upgrade" in str(info.value)
    assert _upgrade_place(place, cab) == {"sessions": 3, "nodes": 0}
    cab = place.open()
    try:
        assert cab.verify()["sessions"] == 3
        assert _header(cab)["format"] == 7 and "sessions" not in _header(cab)
        assert {sid: cab.open(sid).recall("TSK pricing").text for sid in ("a", "b", "c")} == before
        cab.drop("b")
        cab.create("b")
        assert [i.id for i in cab.sessions()] == ["a", "b", "c"]
    finally:
        cab.close()
    assert _upgrade_place(place, place.open()) == {"sessions": 0, "nodes": 0}
