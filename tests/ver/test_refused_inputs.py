"""MN-VER: a refused input leaves the session exactly as it was, in memory and
in the cabinet (issue 36).

Each example builds a random session in an LMDB cabinet (through Commit, then
a flush) and the same session in memory as a twin that never sees the bad
input. The bad input is any the engine refuses: a Δ of each kind
``test_commit_atomic`` makes (a rule broken anywhere, a syntax error after a
long prefix, the rate cap, the caps on labels, kinds and edge types, ...), a
Commit of something that is not text, or a slice Absorb refuses (a ``keep``
handle far past the lead's ids, a slice over its byte cap, a Δ). After the
refusal the session's version and the etag of every probe Recall are those
before it, in memory and as the cabinet opens it again; and the good
Commits that follow mint the same handles, reach the same versions and give
the same Shapes as the twin's.
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memnet
from memnet.absorb import MAX_KEEP_GAP, MAX_SLICE_BYTES
from memnet.graph.store import node_handle
from tests.ver.strategies import VER, Built, build, graph_specs
from tests.ver.test_commit_atomic import KINDS, MARK, PROBES, _live, _prefix

NOT_A_DELTA = ("none", "bytes", "keep_far", "slice_too_big", "delta_as_slice")


def _etags(s: memnet.Session) -> tuple[Any, ...]:
    return (
        s.version,
        tuple(s.recall(q).receipt.etag for q in PROBES),
        s.recall("", view="shell", max_rows=80).receipt.etag,
    )


def _slice(handle: str, blob: str = "x") -> str:
    return json.dumps(
        {
            "format": "memnet.slice/1",
            "provenance": {
                "session": "member",
                "version": 1,
                "anchors": [handle],
                "hops": 1,
                "budget": 50,
                "exported_at": 0.0,
            },
            "nodes": [{"handle": handle, "kind": "DEC", "props": {"title": f"{MARK} {blob}"}}],
            "edges": [],
        }
    )


def _refuse(data: st.DataObject, b: Built, live: dict[str, Any], how: str) -> str:
    """Give the session of ``b`` one bad input of kind ``how``; the code it
    was refused with."""
    s = b.session
    with pytest.raises(memnet.MemNetError) as info:
        if how == "none":
            s.commit(None)  # type: ignore[arg-type]
        elif how == "bytes":
            s.commit(f"INSERT (x:DEC {{title: '{MARK}'}})".encode())  # type: ignore[arg-type]
        elif how == "keep_far":
            far = s.store.next_node + MAX_KEEP_GAP + 1 + data.draw(st.integers(0, 10**6))
            memnet.import_slice(s, _slice(node_handle(far)), "keep")
        elif how == "slice_too_big":
            memnet.import_slice(
                s,
                _slice("na1", "y" * MAX_SLICE_BYTES),
                data.draw(st.sampled_from(("keep", "remint", "reject"))),
            )
        elif how == "delta_as_slice":
            memnet.import_slice(s, f"INSERT (x:DEC {{title: '{MARK}'}})", "remint")
        else:
            bad, _code, _where = KINDS[how][0](data.draw, b, live)
            text = "\n".join(_prefix(data.draw, live) + bad)
            s.commit(text)
    return info.value.code


@pytest.mark.req("MN-REQ-03", "MN-REQ-08", "MN-REQ-14", "MN-REQ-15")
@settings(VER, max_examples=40)
@given(
    spec=graph_specs(max_nodes=15, max_edges=20),
    data=st.data(),
    how=st.sampled_from(sorted(KINDS) + list(NOT_A_DELTA)),
)
def test_a_refused_input_leaves_version_etags_and_later_commits_unchanged(
    spec: Any, data: st.DataObject, how: str
) -> None:
    caps = memnet.Caps(rows=spec.rows + 10)
    twin = build(spec, caps=caps).session
    with tempfile.TemporaryDirectory() as home, memnet.Cabinet.open(home) as cab:
        b = build(
            spec, session=cab.create("ver", caps=caps, delete_on_settle=spec.delete_on_settle)
        )
        s = b.session
        cab.flush(s)
        live = _live(b)
        before = _etags(s)
        assert before == _etags(twin)

        code = _refuse(data, b, live, how)
        assert code in memnet.CODES and code != "internal", (how, code)

        assert _etags(s) == before, how
        assert not s.dirty
        cab.flush(s)  # nothing to write
        assert _etags(cab.open("ver")) == before

        # later Commits land as they land on the twin, in memory and stored
        anchor = live["nodes"][0] if live["nodes"] else None
        later = [
            "INSERT (g:DEC {title: 'after the refusal'})"
            + (f", (g)-[:TOUCHES]->({anchor})" if anchor else ""),
            "INSERT (h:TSK&LATER {title: 'later task', status: 'open'})",
        ]
        for delta in later:
            r1, r2 = s.commit(delta), twin.commit(delta)
            assert (r1.ids, r1.version) == (r2.ids, r2.version)
            cab.flush(s)
        assert _etags(s) == _etags(twin)
        assert _etags(cab.open("ver")) == _etags(twin)
