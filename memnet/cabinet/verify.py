"""Verify: read every record of a cabinet and check it against the others.

Each record's checksum is checked as it is decoded; beyond that, node chunks
must be in place and node ids dense, adjacency must name stored edges, edge
chunks must be in place with no dangling edge, the stored index (postings and
pending deltas) must be the one the node records give, with every term in its
own bucket record, and the catalog's counts, kind counts and log must agree
with the records; every session in the catalog has its birth record, and no
table holds records of a session the catalog does not.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from ..errors import CabinetCorrupt
from ..graph.index import Index
from . import records as R
from .catalog import catalog_row, check_listed, read_header, sid_of
from .elements import edge_columns, effective_nodes, log_of
from .kv import KV, Txn
from .postings import apply_deltas, node_terms, stored_deltas, stored_postings
from .records import decode_props


def _in_their_buckets(
    sid: str,
    maps: Iterator[tuple[int, dict[bytes, bytes]]],
) -> Iterator[tuple[int, dict[bytes, bytes]]]:
    """The stored posting maps, each checked to hold only terms of its
    bucket (a flush that edits a bucket looks a term up there only, and a
    hydrate hands the map to the index shard of that number)."""
    for b, m in maps:
        for t in m:
            if type(t) is not bytes or R.bucket_of(t) != b:
                raise CabinetCorrupt(f"{sid}: index term {t!r} is stored in the wrong bucket")
        yield b, m


def verify_cabinet(kv: KV) -> dict[str, int]:
    """The work of :meth:`Cabinet.verify <memnet.cabinet.Cabinet.verify>` (see
    there)."""
    counts = {"sessions": 0, "nodes": 0, "edges": 0, "log": 0}
    problems = kv.check_file()
    if problems:
        raise CabinetCorrupt(
            f"the storage file is damaged: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
            problems=problems[:20],
        )
    with kv.read() as txn:
        header = read_header(txn)
        if header is None:
            raise CabinetCorrupt("the cabinet has no header")
        listed: set[str] = set()
        for k, v in txn.scan(R.CATALOG):
            sid = sid_of(k)
            cat = catalog_row(v, k)
            counts["sessions"] += 1
            listed.add(sid)
            _verify_session(txn, sid, cat, counts)
        check_listed(txn, counts["sessions"])
        # no records of a session the catalog does not hold (its row was lost)
        for table in (R.LOG, R.NODES, R.EDGES, R.POSTINGS):
            for sid in txn.sids(table):
                if sid not in listed:
                    raise CabinetCorrupt(
                        f"table {table} holds records of session {sid!r}, "
                        "which the catalog does not"
                    )
    return counts


def _verify_session(txn: Txn, sid: str, cat: dict[str, Any], counts: dict[str, int]) -> None:
    """Check one session's records against its catalog row; add to ``counts``."""
    birth = R.birth_key(sid)
    raw = txn.get(R.LOG, birth)
    if raw is None:
        raise CabinetCorrupt(f"{sid}: the session has no birth record")
    R.decode(raw, birth)
    _check_node_keys(txn, sid, cat)
    n_nodes = live_nodes = 0
    n_edges_cat = int(cat["next_edge"]) - 1
    want: dict[bytes, list[int]] = {}
    for i, rec in effective_nodes(txn, sid, cat):
        adj = array("I")
        adj.frombytes(rec[6])
        if adj and max(adj) >> 1 > n_edges_cat:
            raise CabinetCorrupt(f"{sid}: node {i} lists an edge that is not stored")
        n_nodes = i
        live_nodes += 0 if rec[4] else 1
        if rec[2]:
            decode_props(rec[2])  # every stored map must decode
        for term in node_terms(rec):
            want.setdefault(term, []).append(i)
    _types, _src, _dst, flags, _props = edge_columns(txn, sid, n_nodes, n_edges_cat)
    n_edges = len(flags)
    live_edges = n_edges - flags.count(1)
    _check_index(txn, sid, cat, n_nodes, want)
    for _entry in log_of(txn, sid, cat):
        counts["log"] += 1
    if (live_nodes, live_edges) != (cat["nodes"], cat["edges"]):
        raise CabinetCorrupt(f"{sid}: catalog counts disagree with the records")
    if (n_nodes + 1, n_edges + 1) != (cat["next_node"], cat["next_edge"]):
        raise CabinetCorrupt(f"{sid}: catalog ids disagree with the records")
    counts["nodes"] += n_nodes
    counts["edges"] += n_edges


def _check_node_keys(txn: Txn, sid: str, cat: dict[str, Any]) -> None:
    """Every node record and chunk lies within the catalog's counts."""
    pre = R.prefix(sid)
    chunk_pre = R.node_chunk_prefix(sid)
    top = int(cat["next_node"])
    for nk, _nv in txn.scan(R.NODES, pre):
        if nk.startswith(chunk_pre):
            if R.chunk_no(nk, len(chunk_pre)) >= int(cat.get("nchunks", 0)):
                raise CabinetCorrupt(f"{sid}: a node chunk past the catalog's count")
        elif len(nk) != len(pre) + 8 or not 1 <= R.key_id(nk) < top:
            raise CabinetCorrupt(f"{sid}: node record {nk!r} is out of place")


def _check_index(
    txn: Txn, sid: str, cat: dict[str, Any], n_nodes: int, want: dict[bytes, list[int]]
) -> None:
    """The stored index (postings and their deltas) and the catalog's kind
    counts agree with the terms the node records give (``want``)."""
    stored = Index()
    stored.load(_in_their_buckets(sid, stored_postings(txn, sid, cat)), n_nodes, CabinetCorrupt)
    apply_deltas(stored, stored_deltas(txn, sid, cat))
    have = {t: list(p) for t, p in stored.postings()}
    if have != want:
        bad = sorted(set(have) ^ set(want))[:1] or sorted(t for t in have if have[t] != want[t])[:1]
        raise CabinetCorrupt(
            f"{sid}: the stored index disagrees with the nodes (first at term {bad[0]!r})"
        )
    kinds = {}
    for t, ids in want.items():
        if t[:1] == b"k":
            kinds[t[1:].decode()] = len(ids)
    if kinds != dict(cat.get("kinds") or {}):
        raise CabinetCorrupt(f"{sid}: catalog kind counts disagree with the records")
