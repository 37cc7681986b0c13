"""memnet/record.py: the record classes behave as the frozen, slotted
dataclasses they replace."""

from __future__ import annotations

import copy
import pickle

import pytest

from memnet.gql.ast import NodePattern, Pos
from memnet.recall.walk import WalkResult
from memnet.record import FrozenInstanceError, as_dict, field, field_names, record, replace


@record
class Point:
    x: int
    y: int = 0
    tag: str = field(default="", compare=False, repr=False)
    seen: tuple[int, ...] = field(default_factory=tuple)


@record(frozen=False)
class Box:
    items: list[int] = field(default_factory=list)
    n: int = 0


def test_a_frozen_record_compares_hashes_and_refuses_assignment() -> None:
    a, b = Point(1, 2, tag="a"), Point(1, 2, tag="b")
    assert a == b and hash(a) == hash(b)  # tag is not compared
    assert a != Point(1, 3) and Point(1) == Point(1, 0)
    assert {a: 1}[b] == 1
    with pytest.raises(FrozenInstanceError):
        a.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del a.y  # type: ignore[misc]
    with pytest.raises(AttributeError):
        a.other = 1  # type: ignore[attr-defined]
    assert not hasattr(a, "__dict__")
    assert repr(a) == "Point(x=1, y=2, seen=())"
    assert a.__eq__(("not", "a", "point")) is NotImplemented


def test_a_mutable_record_assigns_and_is_not_hashable() -> None:
    b = Box()
    b.items.append(1)
    b.n = 2
    assert b == Box([1], 2) and Box().items is not Box().items
    with pytest.raises(TypeError):
        hash(b)


def test_replace_fields_as_dict_pickle_and_copy() -> None:
    a = Point(1, 2, tag="t", seen=(3,))
    assert replace(a, y=9) == Point(1, 9, seen=(3,)) and replace(a, y=9).tag == "t"
    with pytest.raises(TypeError):
        replace(a, z=1)
    assert field_names(Point) == ("x", "y", "tag", "seen") == field_names(a)
    assert as_dict(a) == {"x": 1, "y": 2, "tag": "t", "seen": (3,)}
    for b in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert b == a and b.tag == "t" and type(b) is Point


def test_the_syntax_tree_and_the_walk_are_records() -> None:
    n = NodePattern("t", ("TSK",), (("title", "x"),), None, Pos(3, 4))
    assert n == NodePattern("t", ("TSK",), (("title", "x"),))  # pos is not compared
    assert pickle.loads(pickle.dumps(n)).pos == Pos(3, 4)
    assert NodePattern.__match_args__[:2] == ("var", "labels")
    w = WalkResult()
    w.nodes.append(1)
    assert WalkResult().nodes == []


def test_a_field_without_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError):

        @record
        class Bad:
            a: int = 1
            b: int

    with pytest.raises(ValueError):
        field(default=1, default_factory=list)
