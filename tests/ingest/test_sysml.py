"""The SysML v2 subset: parse, artefacts, MemNet's own model, errors and caps."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memnet.errors import CODES, InputTooLarge, MemNetError, ModelSyntaxError
from memnet.ingest import sysml
from memnet.ingest.model import Artefacts
from memnet.ingest.sysml import (
    Connect,
    Import,
    Satisfy,
    SysmlDoc,
    SysmlElement,
    load_requirements,
    parse_sysml,
    scan_sysml,
    to_artefacts,
)

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).resolve().parent / "fixtures"
MODELS = ROOT / "sysml-models"

MODEL_IDS = {
    "MN-REQ-00",
    "MN-REQ-00.1",
    "MN-REQ-01",
    "MN-REQ-02",
    "MN-REQ-03",
    "MN-REQ-04",
    "MN-REQ-05",
    "MN-REQ-06",
    "MN-REQ-06.1",
    "MN-REQ-07",
    "MN-REQ-08",
    "MN-REQ-09",
    "MN-REQ-10",
    "MN-REQ-11",
    "MN-REQ-12",
    "MN-REQ-13",
    "MN-REQ-13.1",
    "MN-REQ-14",
    "MN-REQ-14.1",
    "MN-REQ-14.2",
    "MN-REQ-14.3",
    "MN-REQ-15",
    "MN-REQ-16",
    "MN-REQ-17",
    "MN-REQ-18",
    "MN-REQ-19",
    "MN-REQ-20",
    "MN-REQ-21",
    "MN-REQ-22",
}

# every test here checks that the SysML subset loads, and that the rest warns, never crashes
pytestmark = pytest.mark.req("MN-REQ-21")


def _doc(name: str) -> SysmlDoc:
    return parse_sysml((FIX / name).read_text(encoding="utf-8"), name)


def _art(name: str) -> Artefacts:
    return scan_sysml(FIX / name)


def _loc(art: Artefacts, qual: str) -> str:
    return f"sysml:{art.root}/{qual}"


def _edges(art: Artefacts, type_: str) -> set[tuple[str, str]]:
    """(src, dst) qualified names of every link of one type."""
    cut = len(f"sysml:{art.root}/")
    return {(lk.src[cut:], lk.dst[cut:]) for lk in art.links.values() if lk.type == type_}


def _kinds(art: Artefacts) -> dict[str, str]:
    cut = len(f"sysml:{art.root}/")
    return {loc[cut:]: el.kind for loc, el in art.elements.items()}


def _el(doc: SysmlDoc, *path: str) -> SysmlElement:
    """The element reached by names from the top of a document."""
    level = doc.elements
    found: SysmlElement | None = None
    for name in path:
        found = next(e for e in level if (e.name or e.short_id) == name)
        level = found.children
    assert found is not None
    return found


# --------------------------------------------------------------------------- constructs


def test_packages_and_imports():
    doc = _doc("packages_imports.sysml")
    assert doc.warnings == []
    vehicles = _el(doc, "Vehicles")
    assert vehicles.kind == "PKG" and vehicles.doc == "Road vehicles." and vehicles.line == 2
    assert [c.name for c in vehicles.children] == ["Power", "Body"]
    body = _el(doc, "Vehicles", "Body")
    assert body.relations == (
        Import("Power", "*", "private", 9, 9),
        Import("Power::Battery", "", "public", 10, 9),
        Import("Vehicles", "**", None, 11, 9),
    )
    assert [i.target for i in doc.imports] == [
        "Power",
        "Power::Battery",
        "Vehicles",
        "Vehicles::Body",
    ]

    art = _art("packages_imports.sysml")
    assert art.root == "packages_imports.sysml" and art.schemes == ("sysml",)
    assert art.managed_types == sysml.MANAGED_TYPES
    assert {
        "CONTAINS",
        "TYPED",
        "SPECIALIZES",
        "SATISFIES",
        "CONNECTS",
        "IMPORTS",
        "SUBSETS",
        "REDEFINES",
        "PERFORMS",
        "TRANSITION",
        "THEN",
        "FLOWS",
    } <= set(art.managed_types)
    assert _kinds(art) == {
        "Vehicles": "PKG",
        "Vehicles::Power": "PKG",
        "Vehicles::Power::Engine": "PARTDEF",
        "Vehicles::Power::Battery": "PARTDEF",
        "Vehicles::Body": "PKG",
        "Vehicles::Body::Chassis": "PARTDEF",
        "Fleet": "PKG",
        "Fleet::Depot": "PARTDEF",
    }
    assert _edges(art, "IMPORTS") == {
        ("Vehicles::Body", "Vehicles::Power"),
        ("Vehicles::Body", "Vehicles::Power::Battery"),
        ("Vehicles::Body", "Vehicles"),
        ("Fleet", "Vehicles::Body"),
    }
    assert ("Vehicles", "Vehicles::Power") in _edges(art, "CONTAINS")
    assert ("Vehicles::Power", "Vehicles::Power::Engine") in _edges(art, "CONTAINS")
    assert ("Fleet", "Fleet::Depot") in _edges(art, "CONTAINS")
    unit = "sysml:packages_imports.sysml/packages_imports.sysml"
    assert {e.unit for e in art.elements.values()} == {unit}
    depot = art.elements[_loc(art, "Fleet::Depot")]
    assert depot.props == {"name": "Depot", "file": "packages_imports.sysml", "line": 18}
    assert art.warnings == []


def test_part_defs_usages_specialization_multiplicity():
    doc = _doc("parts.sysml")
    assert doc.warnings == []
    assert _el(doc, "Cars", "Vehicle").doc == "Anything that moves on wheels."
    car = _el(doc, "Cars", "Car")
    assert car.kind == "PARTDEF" and car.supertypes == ("Vehicle",)
    wheels = _el(doc, "Cars", "Car", "wheels")
    assert (wheels.kind, wheels.types, wheels.multiplicity) == ("PART", ("Wheel",), "4")
    spare = _el(doc, "Cars", "Car", "spare")
    assert (spare.types, spare.multiplicity) == (("Wheel",), "0..1")
    assert _el(doc, "Cars", "Car", "seats").multiplicity == "2..*"
    truck = _el(doc, "Cars", "Truck")
    assert truck.abstract and truck.supertypes == ("Vehicle", "Car") and truck.children == ()
    assert _el(doc, "Cars", "myCar", "trailer").multiplicity == "*"

    art = _art("parts.sysml")
    assert art.warnings == []
    kinds = _kinds(art)
    assert kinds["Cars::Car"] == "PARTDEF" and kinds["Cars::Car::engine"] == "PART"
    assert kinds["Cars::myCar::trailer"] == "PART"
    assert _edges(art, "SPECIALIZES") == {
        ("Cars::Car", "Cars::Vehicle"),
        ("Cars::Truck", "Cars::Vehicle"),
        ("Cars::Truck", "Cars::Car"),
    }
    assert _edges(art, "TYPED") == {
        ("Cars::Car::engine", "Cars::Engine"),
        ("Cars::Car::wheels", "Cars::Wheel"),
        ("Cars::Car::spare", "Cars::Wheel"),
        ("Cars::Car::seats", "Cars::Seat"),
        ("Cars::myCar", "Cars::Car"),
        ("Cars::myCar::trailer", "Cars::Wheel"),
    }
    assert ("Cars::Car", "Cars::Car::wheels") in _edges(art, "CONTAINS")
    assert ("Cars::myCar", "Cars::myCar::trailer") in _edges(art, "CONTAINS")
    props = art.elements[_loc(art, "Cars::Car::wheels")].props
    assert props == {
        "name": "wheels",
        "type": "Wheel",
        "mult": "4",
        "file": "parts.sysml",
        "line": 10,
    }


def test_ports_with_direction_and_conjugation():
    doc = _doc("ports.sysml")
    assert doc.warnings == []
    voltage = _el(doc, "Plugs", "PowerPort", "voltage")
    assert (voltage.kind, voltage.direction, voltage.types) == ("ATTR", "in", ("Real",))
    assert _el(doc, "Plugs", "PowerPort", "current").direction == "out"
    link = _el(doc, "Plugs", "Charger", "link")
    assert (link.kind, link.types) == ("PORT", ("~DataPort",))
    sense = _el(doc, "Plugs", "Charger", "sense")
    assert (sense.direction, sense.multiplicity) == ("in", "0..2")

    art = _art("ports.sysml")
    assert art.warnings == []  # Real comes from the standard library: no edge, no warning
    kinds = _kinds(art)
    assert kinds["Plugs::PowerPort"] == "PORTDEF" and kinds["Plugs::Charger::supply"] == "PORT"
    assert _edges(art, "TYPED") == {
        ("Plugs::Charger::supply", "Plugs::PowerPort"),
        ("Plugs::Charger::link", "Plugs::DataPort"),
        ("Plugs::Charger::sense", "Plugs::DataPort"),
    }
    link_props = art.elements[_loc(art, "Plugs::Charger::link")].props
    assert link_props["type"] == "~DataPort"
    assert art.elements[_loc(art, "Plugs::Charger::sense")].props["dir"] == "in"


def test_attributes_and_values():
    doc = _doc("attributes.sysml")
    assert doc.warnings == []
    values = {c.name or c.redefines[0]: c.value for c in _el(doc, "Knobs", "Dial").children}
    assert values == {
        "k": 2,
        "ratio": 0.5,
        "title": "main dial",
        "enabled": True,
        "offset": -3,
        "formula": "k * 2 + 1",
        "setting": None,
        "label": "dial",
    }
    label = _el(doc, "Knobs", "Dial").children[-1]
    assert (label.name, label.derived, label.redefines) == ("label", True, ("label",))

    art = _art("attributes.sysml")
    assert art.warnings == []
    kinds = _kinds(art)
    assert kinds["Knobs::Setting"] == "ATTRDEF" and kinds["Knobs::Dial::k"] == "ATTR"
    # `attribute :>> label` takes the name it redefines
    assert art.elements[_loc(art, "Knobs::Dial::label")].props["name"] == "label"
    assert art.elements[_loc(art, "Knobs::Dial::k")].props["value"] == 2
    assert _edges(art, "SPECIALIZES") == {("Knobs::Speed", "Knobs::Setting")}
    assert _edges(art, "TYPED") == {("Knobs::Dial::setting", "Knobs::Setting")}


def test_requirements_with_short_ids_and_doc():
    doc = _doc("requirements.sysml")
    assert doc.warnings == []
    promise = _el(doc, "Reqs", "Promise")
    assert (promise.kind, promise.short_id, promise.doc) == (
        "REQDEF",
        "R-DEF",
        "A promise the system keeps.",
    )
    fast = _el(doc, "Reqs", "fast")
    assert (fast.kind, fast.short_id, fast.types, fast.doc) == (
        "REQ",
        "R-1",
        ("Quality",),
        "Answers come back fast.",
    )
    anonymous = _el(doc, "Reqs", "R-2")
    assert anonymous.name is None and anonymous.short_id == "R-2"
    assert _el(doc, "Reqs", "quoted name").types == ("Promise",)

    art = _art("requirements.sysml")
    assert art.warnings == []
    kinds = _kinds(art)
    assert kinds == {
        "Reqs": "PKG",
        "Reqs::Promise": "REQDEF",
        "Reqs::Quality": "REQDEF",
        "Reqs::fast": "REQ",
        "Reqs::faster": "REQ",
        "Reqs::R-2": "REQ",
        "Reqs::quoted name": "REQ",
    }
    assert art.elements[_loc(art, "Reqs::R-2")].props == {
        "rid": "R-2",
        "doc": "A requirement known only by its id.",
        "file": "requirements.sysml",
        "line": 11,
    }
    assert art.elements[_loc(art, "Reqs::faster")].props["rid"] == "R-1.1"
    assert _edges(art, "TYPED") == {
        ("Reqs::fast", "Reqs::Quality"),
        ("Reqs::faster", "Reqs::Quality"),
        ("Reqs::quoted name", "Reqs::Promise"),
    }
    assert load_requirements(FIX / "requirements.sysml") == {
        "R-DEF": "A promise the system keeps.",
        "R-1": "Answers come back fast.",
        "R-1.1": "",
        "R-2": "A requirement known only by its id.",
    }


def test_satisfy():
    doc = _doc("satisfy.sysml")
    assert doc.warnings == []
    assert doc.satisfies == [
        Satisfy("lowPower", "machine.motor", 12, 5),
        Satisfy("quiet", "machine", 13, 5),
        Satisfy("Sat::'S-3'", "machine", 14, 5),
        Satisfy("safe", None, 9, 9),
    ]
    art = _art("satisfy.sysml")
    assert art.warnings == []
    assert _edges(art, "SATISFIES") == {
        ("Sat::Machine::motor", "Sat::lowPower"),  # the chain walks into Machine's features
        ("Sat::machine", "Sat::quiet"),
        ("Sat::machine", "Sat::safe"),  # a short id names a requirement too
        ("Sat::Machine", "Sat::safe"),  # no `by`: the enclosing element satisfies
    }


def test_connect_and_connection():
    doc = _doc("connect.sysml")
    assert doc.warnings == []
    assert doc.connects == [
        Connect("lamp.plug", "wall.outlet", None, None, 12, 9),
        Connect("wall", "lamp", "cord", "Cable", 13, 9),
    ]
    art = _art("connect.sysml")
    assert art.warnings == []
    assert _edges(art, "CONNECTS") == {
        ("Wiring::Lamp::plug", "Wiring::Wall::outlet"),  # resolved through the part types
        ("Wiring::Room::wall", "Wiring::Room::lamp"),
    }


def test_constraints_keep_opaque_text():
    doc = _doc("constraints.sysml")
    assert doc.warnings == []
    max_rows = _el(doc, "Limits", "MaxRows")
    assert (max_rows.kind, max_rows.role, max_rows.text) == ("CONSTRAINT", "def", "rows <= 50")
    shape = _el(doc, "Limits", "Shape")
    texts = [(c.name, c.role, c.text) for c in shape.children if c.kind == "CONSTRAINT"]
    # an unnamed constraint is named by its role and a number
    assert texts == [
        ("rowsCap", None, None),
        ("constraint1", None, "rows >= 0"),
        ("require1", "require", "rows <= 50 and { nested }"),
        ("assume1", "assume", "true"),
    ]

    art = _art("constraints.sysml")
    assert art.warnings == []
    kinds = _kinds(art)
    assert {q for q, k in kinds.items() if k == "CONSTRAINT"} == {
        "Limits::MaxRows",
        "Limits::Shape::rowsCap",
        "Limits::Shape::constraint1",
        "Limits::Shape::require1",
        "Limits::Shape::assume1",
        "Limits::Bounded::require1",
    }
    req = art.elements[_loc(art, "Limits::Shape::require1")].props
    assert req["text"] == "rows <= 50 and { nested }" and req["role"] == "require"
    assert _edges(art, "TYPED") == {("Limits::Shape::rowsCap", "Limits::MaxRows")}


def test_comments_and_notes_are_ignored():
    doc = parse_sysml(
        "// a note\n//* a long\n note */ /* a comment */\n"
        "part def A { comment about A /* about A */ doc /* kept */ }\n"
        "part def B; // trailing\n"
    )
    assert [(e.name, e.doc) for e in doc.elements] == [("A", "kept"), ("B", None)]
    assert doc.warnings == []


def test_byte_order_mark_and_crlf():
    doc = parse_sysml("\ufeffpackage P {\r\n  doc /* a\r\n * b */\r\n  part def A;\r\n}\r\n")
    assert [(e.name, e.doc, e.line) for e in doc.elements] == [("P", "a b", 1)]
    assert (doc.elements[0].children[0].line, doc.elements[0].children[0].column) == (4, 3)


def test_resolution_order_scope_then_imports_then_global():
    text = """
    package Lib { part def Engine; part def Only; }
    package Other { part def Engine; }
    package App {
        private import Lib::*;
        part def Engine;
        part a : Engine;           // the package's own Engine wins
        part b : Lib::Engine;      // qualified
        part c : Only;             // through the import
        package Inner { part d : Engine; }  // the enclosing package
    }
    package Far { part e : Only; part f : Engine; part g : Missing; }
    """
    art = to_artefacts([("m.sysml", parse_sysml(text, "m.sysml"))], "m")
    assert _edges(art, "TYPED") == {
        ("App::a", "App::Engine"),
        ("App::b", "Lib::Engine"),
        ("App::c", "Lib::Only"),
        ("App::Inner::d", "App::Engine"),
        ("Far::e", "Lib::Only"),  # globally unique name
    }
    messages = sorted(str(w) for w in art.warnings)
    assert messages == [
        (
            "m.sysml:12: unresolved type 'Engine' of PART 'f': 'Engine' is ambiguous "
            "(3 elements carry it)"
        ),
        (
            "m.sysml:12: unresolved type 'Missing' of PART 'g': no element named 'Missing' is "
            "visible"
        ),
    ]


def test_names_resolve_as_each_file_scopes_them_and_unrelated_files_never_collide():
    files = {
        "a.sysml": "package A { part def Car; part def Engine; }",
        "b.sysml": "package B { part def Car; }",
        "c.sysml": "package C { private import A::*; part car : Car; }",
        "d.sysml": "package D { public import A::*; }",  # passes A's members on
        "e.sysml": "package E { private import D::*; part e : Engine; part c2 : Car; }",
        "f.sysml": "package F { private import G::*; part f : Car; }",
        "g.sysml": "package G { private import A::*; }",  # keeps them to itself
        "h.sysml": "private import A::*;\npart h : Car;",  # a file's own top-level import
        "i.sysml": "part i : Car;",  # ... is not another file's
        "j.sysml": "package Dup { part def X; part y : X; }",
        "k.sysml": "package Dup { part def X; part z : X; part w : $::B::Car; }",
    }
    art = to_artefacts([(n, parse_sysml(t, n)) for n, t in files.items()], "m")
    assert _edges(art, "TYPED") == {
        ("C::car", "A::Car"),
        ("E::e", "A::Engine"),
        ("E::c2", "A::Car"),
        ("h", "A::Car"),
        ("Dup::y", "Dup::X"),
        ("Dup-2::z", "Dup-2::X"),
        ("Dup-2::w", "B::Car"),
    }
    # two files' top-level packages of one name are two root namespaces: no warning
    assert sorted(str(w) for w in art.warnings) == [
        "f.sysml:1: unresolved type 'Car' of PART 'f': 'Car' is ambiguous (2 elements carry it)",
        "i.sysml:1: unresolved type 'Car' of PART 'i': 'Car' is ambiguous (2 elements carry it)",
    ]
    # an import's target is looked up in the enclosing namespaces, with their imports
    art = to_artefacts(
        [
            (
                "n.sysml",
                parse_sysml(
                    "package N { private import A::*; "
                    "package Inner { public import Car; part c : Car; } }"
                    "package A { part def Car; }",
                    "n.sysml",
                ),
            )
        ],
        "n",
    )
    assert _edges(art, "TYPED") == {("N::Inner::c", "A::Car")}
    assert _edges(art, "IMPORTS") == {("N", "A"), ("N::Inner", "A::Car")}
    assert art.warnings == []


def test_duplicates_get_a_suffix_and_a_warning():
    text = "package P {\n part def A;\n part def A { part x; }\n part def A;\n}\n"
    art = to_artefacts([("d.sysml", parse_sysml(text, "d.sysml"))], "d")
    assert set(_kinds(art)) == {"P", "P::A", "P::A-2", "P::A-2::x", "P::A-3"}
    assert [str(w) for w in art.warnings] == [
        "d.sysml:3: duplicate qualified name 'P::A'; this one is kept as P::A-2",
        "d.sysml:4: duplicate qualified name 'P::A'; this one is kept as P::A-3",
    ]


def test_unresolved_relations_warn_and_leave_the_link_out():
    text = """
    package P {
        part def D;
        part d : D;
        satisfy nothing by d;
        satisfy D by d;
        satisfy;
    }
    """
    with pytest.raises(ModelSyntaxError):  # `satisfy;` names nothing: a syntax error
        parse_sysml(text)
    text = text.replace("        satisfy;\n", "        connect d.x to d;\n        import Q::*;\n")
    art = to_artefacts([("u.sysml", parse_sysml(text, "u.sysml"))], "u")
    assert _edges(art, "SATISFIES") == set() and _edges(art, "CONNECTS") == set()
    assert _edges(art, "IMPORTS") == set()
    assert [str(w) for w in art.warnings] == [
        (
            "u.sysml:5: unresolved requirement 'nothing' in satisfy: no element named 'nothing' "
            "is visible"
        ),
        "u.sysml:6: satisfy names 'D', which is a PARTDEF, not a requirement",
        "u.sysml:7: unresolved connection end 'd.x': 'd' has no member 'x'",
        "u.sysml:8: unresolved import 'Q': no element named 'Q' is visible",
    ]


def test_anonymous_usages_are_named_by_keyword_and_position():
    text = "part def A { part : A; item; part : A; in item; ref : A; }"
    art = to_artefacts([("a.sysml", parse_sysml(text, "a.sysml"))], "a")
    assert _kinds(art) == {
        "A": "PARTDEF",
        "A::part1": "PART",
        "A::item1": "ITEM",
        "A::part2": "PART",
        "A::item2": "ITEM",
        "A::ref1": "REF",
    }
    assert _edges(art, "TYPED") == {("A::part1", "A"), ("A::part2", "A"), ("A::ref1", "A")}
    assert art.warnings == []
    # the same text gives the same names; a name the model already uses gets a suffix
    doc = parse_sysml("part def B { part part1; part : B; }")
    assert [(e.name, e.derived) for e in doc.elements[0].children] == [
        ("part1", False),
        ("part1", True),
    ]
    art = to_artefacts([("b.sysml", doc)], "b")
    assert set(_kinds(art)) == {"B", "B::part1", "B::part1-2"} and art.warnings == []


def test_top_level_elements_have_no_owner():
    art = to_artefacts([("t.sysml", parse_sysml("part def A;\npart a : A;\n", "t.sysml"))], "t")
    assert _kinds(art) == {"A": "PARTDEF", "a": "PART"}
    assert _edges(art, "CONTAINS") == set() and _edges(art, "TYPED") == {("a", "A")}


# --------------------------------------------------------------------------- views, metadata


def test_views_metadata_renderings_and_negated_satisfaction():
    doc = _doc("views_metadata.sysml")
    assert doc.warnings == []
    art = _art("views_metadata.sysml")
    assert art.warnings == []
    assert _kinds(art) == {
        "Mixed": "PKG",
        "Mixed::Before": "PARTDEF",
        "Mixed::Overview": "VIEWDEF",
        "Mixed::Safety": "METADEF",
        "Mixed::Safety::isMandatory": "ATTR",
        "Mixed::Middle": "PARTDEF",
        "Mixed::Middle::inner": "PART",
        "Mixed::Middle::inner::metadata1": "META",
        "Mixed::Middle::inner::metadata1::isMandatory": "REF",
        "Mixed::Middle::v": "VIEW",
        "Mixed::Need": "REQDEF",
        "Mixed::Tree": "RENDERDEF",
        "Mixed::After": "PARTDEF",
    }
    props = {q: art.elements[_loc(art, q)].props for q in _kinds(art)}
    assert props["Mixed"]["filter"] == "Before"
    assert props["Mixed::Overview"]["filter"] == "@Safety"
    assert props["Mixed::Middle::inner"]["meta"] == "Safety"
    assert props["Mixed::Before"]["meta"] == "Safety" and props["Mixed::After"]["meta"] == "Safety"
    assert props["Mixed::Middle::inner::metadata1::isMandatory"]["value"] is True
    assert _edges(art, "TAGGED") == {
        ("Mixed::Middle::inner", "Mixed::Safety"),
        ("Mixed::Before", "Mixed::Safety"),
        ("Mixed::After", "Mixed::Safety"),
    }
    assert ("Mixed::Middle::inner::metadata1", "Mixed::Safety") in _edges(art, "TYPED")
    assert _edges(art, "REDEFINES") == {
        ("Mixed::Middle::inner::metadata1::isMandatory", "Mixed::Safety::isMandatory")
    }
    assert _edges(art, "EXPOSES") == {("Mixed::Middle::v", "Mixed")}
    assert _edges(art, "RENDERS") == set()  # asTreeDiagram is the library's (Views::*)
    assert [lk.props for lk in art.links.values() if lk.type == "SATISFIES"] == [{"negated": True}]
    assert _edges(art, "SATISFIES") == {("Mixed::Middle", "Mixed::Need")}


def test_a_view_and_what_follows_it_are_read():
    doc = parse_sysml("package P { action def A { action b { } part p; } view v { } part q; }")
    assert [(e.kind, e.name) for _, e in doc.walk()] == [
        ("PKG", "P"),
        ("ACTDEF", "A"),
        ("ACT", "b"),
        ("PART", "p"),
        ("VIEW", "v"),
        ("PART", "q"),
    ]
    assert doc.warnings == []


def test_connection_definitions_and_usages():
    doc = parse_sysml(
        "connection def Link { end a; end b; }\nconnection c : Link;\nconnect (a, b, c);\n"
    )
    assert doc.warnings == []
    link, c = doc.elements
    assert (link.kind, [e.name for e in link.children]) == ("CONNDEF", ["a", "b"])
    assert dict(link.children[0].props) == {"end": True}
    assert (c.kind, c.types) == ("CONN", ("Link",))
    # an n-ary connection joins its first end to each of the others
    assert doc.connects == [
        Connect("a", "b", line=3, column=1),
        Connect("a", "c", line=3, column=1),
    ]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("name", "line", "column", "words"),
    [
        ("err_def_no_name.sysml", 3, 14, "expected '<' or a name"),
        ("err_unclosed.sysml", 2, 19, "'{' is never closed"),
        ("err_stray_token.sysml", 3, 16, "unexpected number 42"),
        ("err_extra_brace.sysml", 4, 1, "'}' closes nothing"),
    ],
)
def test_syntax_error_fixtures(name, line, column, words):
    with pytest.raises(ModelSyntaxError) as info:
        scan_sysml(FIX / name)
    err = info.value
    assert err.code == "model_syntax"
    assert (err.line, err.column, err.path) == (line, column, name)
    assert words in err.message
    assert err.message.startswith(f"{name}: ")
    assert err.message.endswith(f" at line {line}, column {column}")
    assert err.to_dict()["line"] == line and err.to_dict()["column"] == column


SYNTAX_ERRORS = [
    ("part def ;", 1, 10, "unexpected ';'"),
    ("package P {\n  part x : T\n}", 3, 1, "expected ';', '{'"),
    ("part def A { 42 }", 1, 14, "expected a declaration"),
    ("part x : T [ ;", 1, 12, "'[' is never closed"),
    ("package P { part x; ] }", 1, 21, "']' cannot close the '{' opened at 1:11"),
    ("part 'abc;", 1, 6, "unterminated string or name"),
    ("doc /* never closed", 1, 5, "unterminated comment"),
    ("//* note without end\npart def A;", 1, 1, "unterminated note"),
    ("part def A;\npart", 2, 5, "unexpected end of input"),
    ("import A::;", 1, 11, "unexpected ';'"),
    ("connect a b;", 1, 11, "expected '.', '::' or 'to'"),
    ("part x = ;", 1, 10, "unexpected ';'; expected an expression"),
    ("part def A;\n  é", 2, 3, "unexpected character 'é'"),
    ("part def A;;", 1, 12, "unexpected ';'"),
    ("part def A\x00;", 1, 11, "NUL character"),
    ("part def A\ud800;", 1, 11, "lone surrogate"),
    # the whole notation is read: what is not SysML stays an error
    ("part def A { part x : T 42; }", 1, 25, "unexpected number 42"),
    ("part x = a +;", 1, 13, "unexpected ';'"),
    ("attribute x = (a, b;", 1, 15, "'(' is never closed"),
    ("attribute x = (a, b];", 1, 20, "']' cannot close the '(' opened at 1:15"),
    ("attribute x = f(a b);", 1, 19, "unexpected name 'b'"),
    ("connect a;", 1, 10, "unexpected ';'"),
    ("connect (a);", 1, 11, "expected ','"),
    ("flow of from a to b;", 1, 9, "unexpected 'from'"),
    ("transition first a;", 1, 19, "unexpected ';'"),
    ("satisfy by x;", 1, 9, "unexpected 'by'"),
    ("doc text;", 1, 9, "expected 'locale' or a /* comment */"),
    ("doc;", 1, 4, "a /* comment */"),
    ("package P { part p } ", 1, 20, "expected ';', '{'"),
    ("part p :>;", 1, 10, "unexpected ';'"),
    ("action a { then ; }", 1, 17, "unexpected ';'"),
    ("state s { accept e then ; }", 1, 25, "unexpected ';'"),
    ("if x { } else ;", 1, 15, "unexpected ';'"),
    ("calc c { x y }", 1, 12, "unexpected name 'y'"),
    ("import A::*::;", 1, 14, "unexpected ';'"),
    ("part 'p' ! q;", 1, 10, "unexpected character '!'"),
    ("part frame;", 1, 6, "unexpected 'frame'"),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), SYNTAX_ERRORS)
def test_syntax_errors_have_line_and_column(text, line, column, words):
    with pytest.raises(ModelSyntaxError) as info:
        parse_sysml(text, "t.sysml")
    assert (info.value.line, info.value.column) == (line, column), info.value.message
    assert words in info.value.message


_LEXICAL = (
    "never closed",
    "cannot close",
    "closes nothing",
    "unterminated",
    "unexpected character",
    "NUL character",
    "lone surrogate",
)


@pytest.mark.parametrize(("text", "line", "column", "words"), SYNTAX_ERRORS)
def test_with_recover_a_bad_statement_is_a_warning_with_the_same_line_and_column(
    text, line, column, words
):
    """What is a syntax error read strictly is, read with ``recover``, one warning
    with the same line, column and words, and the statement is skipped; text
    whose brackets, strings or comments do not close stays an error."""
    if any(w in words for w in _LEXICAL):
        with pytest.raises(ModelSyntaxError) as info:
            parse_sysml(text, "t.sysml", recover=True)
        assert (info.value.line, info.value.column) == (line, column)
        return
    at_end = "end of input" in words  # text after it would be read as its rest
    doc = parse_sysml(text + ("" if at_end else "\npart def After;\n"), "t.sysml", recover=True)
    assert len(doc.warnings) == 1, doc.warnings
    w = doc.warnings[0]
    assert w.line == line and f"syntax error at line {line}, column {column}: " in w.message
    assert words in w.message and "is skipped" in w.message
    assert at_end or ("PARTDEF", "After") in [(e.kind, e.name) for _, e in doc.walk()]


def test_recovery_keeps_everything_around_the_bad_statements():
    text = """package P {
    part def A;
    part x : ;
    part def B {
        part y : A;
        attribute z = ;
        part w;
    }
    calc def C { in v; part p { bad bad; part ok; } v * 2 }
    part a part b;
    part def D;
}
"""
    doc = parse_sysml(text, "r.sysml", recover=True)
    assert [(w.line, w.message.split(":")[0]) for w in doc.warnings] == [
        (3, "syntax error at line 3, column 14"),
        (6, "syntax error at line 6, column 23"),
        (9, "syntax error at line 9, column 37"),
        (10, "syntax error at line 10, column 12"),
    ]
    assert [w.message.rpartition("; ")[2] for w in doc.warnings] == [
        "the statement at line 3 is skipped",
        "the statement at line 6 is skipped",
        "the statement at line 9 is skipped",
        "the statement at line 10 is skipped",
    ]
    assert [(e.kind, e.name) for _, e in doc.walk()] == [
        ("PKG", "P"),
        ("PARTDEF", "A"),
        ("PARTDEF", "B"),
        ("PART", "y"),
        ("PART", "w"),
        ("CALCDEF", "C"),
        ("REF", "v"),
        ("PART", "p"),
        ("PART", "ok"),
        ("PARTDEF", "D"),
    ]
    assert _el(doc, "P", "C").text == "v * 2"  # the result expression after it is kept
    # read strictly, the same text is an error at the first bad statement
    with pytest.raises(ModelSyntaxError) as info:
        parse_sysml(text, "r.sysml")
    assert (info.value.line, info.value.column) == (3, 14)
    # a statement over several lines is skipped whole, and the warning says which lines
    doc = parse_sysml(
        "package Q {\n  part def E {\n    part f : ;\n  } part g : ;\n"
        "  part def F { part h; }\n}\n",
        "s.sysml",
        recover=True,
    )
    assert [e.name for _, e in doc.walk()] == ["Q", "E", "F", "h"]
    assert [w.message.rpartition("; ")[2] for w in doc.warnings] == [
        "the statement at line 3 is skipped",
        "the statement at line 4 is skipped",
    ]


def test_model_syntax_is_a_stable_code():
    assert "model_syntax" in CODES
    assert ModelSyntaxError.code == "model_syntax"
    assert issubclass(ModelSyntaxError, MemNetError) and issubclass(ModelSyntaxError, ValueError)


def test_non_text_and_bad_encoding(tmp_path):
    with pytest.raises(ModelSyntaxError):
        parse_sysml(b"part def A;")  # type: ignore[arg-type]
    bad = tmp_path / "bad.sysml"
    bad.write_bytes(b"part def A;\npart def \xff;\n")
    with pytest.raises(ModelSyntaxError) as info:
        scan_sysml(bad)
    assert (info.value.line, info.value.column) == (2, 10)
    with pytest.raises(MemNetError) as missing:
        scan_sysml(tmp_path / "missing")
    assert missing.value.code == "path_not_found"


def test_caps_are_checked_before_parsing(monkeypatch):
    deep = "package P {" * (sysml.MAX_DEPTH + 1) + "}" * (sysml.MAX_DEPTH + 1)
    with pytest.raises(InputTooLarge) as info:
        parse_sysml(deep)
    assert info.value.code == "input_too_large"
    ok = "package P {" * sysml.MAX_DEPTH + "}" * sysml.MAX_DEPTH
    assert parse_sysml(ok).elements[0].kind == "PKG"
    with pytest.raises(InputTooLarge):
        parse_sysml(" " * (sysml.MAX_CHARS + 1))
    monkeypatch.setattr(sysml.lexer, "MAX_TOKENS", 50)
    with pytest.raises(InputTooLarge) as info:
        parse_sysml("part def A;\n" * 20)
    assert "tokens" in info.value.message
    parse_sysml("part def A;\n" * 5)


_SOUP = [
    "package",
    "part",
    "def",
    "port",
    "attribute",
    "requirement",
    "satisfy",
    "by",
    "connect",
    "to",
    "connection",
    "constraint",
    "require",
    "import",
    "doc",
    "in",
    "private",
    "A",
    "b",
    "'q r'",
    "::",
    "::*",
    ".",
    ":",
    ":>",
    ":>>",
    "~",
    "[",
    "]",
    "..",
    "*",
    "<",
    ">",
    "=",
    ";",
    "{",
    "}",
    "(",
    ")",
    "1",
    "2.5",
    '"s"',
    "/* c */",
    "// n\n",
    "#",
    "@",
    "action",
    "-",
    "\n",
    "'",
    "/*",
    "\x00",
    "é",
]


@given(st.lists(st.sampled_from(_SOUP), max_size=40), st.booleans())
def test_token_soup_never_crashes(words, recover):
    try:
        doc = parse_sysml(" ".join(words), recover=recover)
    except MemNetError as e:
        # recovering, only text a statement boundary cannot be found in is an error
        assert (
            not recover or isinstance(e, InputTooLarge) or any(w in e.message for w in _LEXICAL)
        ), e.message
        return
    to_artefacts([("soup.sysml", doc)], "soup")


@given(st.text(max_size=200), st.booleans())
def test_random_text_never_crashes(text, recover):
    try:
        doc = parse_sysml(text, recover=recover)
    except MemNetError as e:
        assert (
            not recover or isinstance(e, InputTooLarge) or any(w in e.message for w in _LEXICAL)
        ), e.message
        return
    to_artefacts([("rand.sysml", doc)], "rand")


# --------------------------------------------------------------------------- scan and determinism


def test_scan_directory_is_sorted_and_rooted(tmp_path):
    model = tmp_path / "model"
    (model / "sub").mkdir(parents=True)
    (model / ".hidden").mkdir()
    (model / "b.sysml").write_text("package B { part def Y :> A::X; }\n", encoding="utf-8")
    (model / "sub" / "a.sysml").write_text("package A { part def X; }\n", encoding="utf-8")
    (model / ".hidden" / "c.sysml").write_text("package C;\n", encoding="utf-8")
    (model / "notes.txt").write_text("not a model", encoding="utf-8")
    art = scan_sysml(model)
    assert art.root == "model"
    assert list(_kinds(art)) == ["B", "B::Y", "A", "A::X"]  # b.sysml < sub/a.sysml
    assert art.elements["sysml:model/A::X"].unit == "sysml:model/sub/a.sysml"
    assert art.elements["sysml:model/A::X"].props["file"] == "sub/a.sysml"
    assert _edges(art, "SPECIALIZES") == {("B::Y", "A::X")}
    assert all(art.in_scope(loc) for loc in art.elements)


@pytest.mark.req("MN-REQ-18")
def test_same_input_same_artefacts(tmp_path):
    first = scan_sysml(MODELS)
    second = scan_sysml(MODELS)
    assert first.elements == second.elements
    assert list(first.elements) == list(second.elements)
    assert list(first.links) == list(second.links)
    assert first.warnings == second.warnings
    # the order files are given in does not matter
    docs = [
        (p.name, _doc(p.name))
        for p in sorted(FIX.glob("[a-z]*.sysml"))
        if not p.name.startswith("err_")
    ]
    forward = to_artefacts(docs, "fx")
    backward = to_artefacts(list(reversed(docs)), "fx")
    assert forward.elements == backward.elements and list(forward.links) == list(backward.links)
    # a copy of the model elsewhere gives the same locators
    copy = tmp_path / "sysml-models"
    shutil.copytree(MODELS, copy)
    assert scan_sysml(copy).elements == first.elements


@pytest.mark.req("MN-REQ-18")
def test_an_edit_changes_only_its_own_file(tmp_path):
    copy = tmp_path / "sysml-models"
    shutil.copytree(MODELS, copy)
    before = scan_sysml(copy)
    deploy = copy / "models" / "deploy.sysml"
    deploy.write_text(
        deploy.read_text(encoding="utf-8")
        .replace("A MemNetError root", "A MemNetError root (edited)")
        .replace("One MemNetError root", "One MemNetError root (edited)"),
        encoding="utf-8",
    )
    after = scan_sysml(copy)
    assert set(before.elements) == set(after.elements)
    changed = {loc for loc in before.elements if before.elements[loc] != after.elements[loc]}
    assert changed == {"sysml:sysml-models/MemNetDeployment::Engine::Core::ErrorRoot"}


def test_duplicate_requirement_ids_are_an_error(tmp_path):
    (tmp_path / "a.sysml").write_text("requirement <'X-1'> one;\n", encoding="utf-8")
    (tmp_path / "b.sysml").write_text("\n\nrequirement <'X-1'> two;\n", encoding="utf-8")
    with pytest.raises(ModelSyntaxError) as info:
        load_requirements(tmp_path)
    assert info.value.path == "b.sysml" and info.value.line == 3
    assert "'X-1' is given twice (first at a.sysml:1)" in info.value.message


# --------------------------------------------------------------------------- MemNet's own model


def test_every_model_file_parses_without_warnings():
    files = sorted(MODELS.rglob("*.sysml"))
    assert {p.name for p in files} >= {"requirements.sysml", "deploy.sysml"}
    for p in files:
        doc = parse_sysml(p.read_text(encoding="utf-8"), p.name)
        assert doc.warnings == [], p
    art = scan_sysml(MODELS)
    assert art.warnings == []


def test_model_requirement_ids():
    reqs = load_requirements(MODELS)
    assert set(reqs) == MODEL_IDS
    assert all(text.strip() for text in reqs.values())
    assert "two" in reqs["MN-REQ-13.1"] and "Recall" in reqs["MN-REQ-13.1"]
    assert load_requirements(MODELS / "models" / "requirements.sysml") == reqs


def test_model_links_every_requirement_and_resolves_every_type():
    art = scan_sysml(MODELS)
    satisfied = {lk.dst for lk in art.links.values() if lk.type == "SATISFIES"}
    reqs = {loc: el for loc, el in art.elements.items() if el.kind == "REQ"}
    assert {el.props["rid"] for el in reqs.values()} == MODEL_IDS
    assert set(reqs) <= satisfied, sorted(set(reqs) - satisfied)
    # MN-REQ-13.1 (two verbs) is kept by the session itself
    rc = next(loc for loc, el in reqs.items() if el.props["rid"] == "MN-REQ-13.1")
    keepers = {lk.src for lk in art.links.values() if lk.type == "SATISFIES" and lk.dst == rc}
    assert keepers == {"sysml:sysml-models/MemNetDeployment::memnet::engine::session"}
    # every typed usage outside the standard library has its TYPED link
    typed = {lk.src for lk in art.links.values() if lk.type == "TYPED"}
    for loc, el in art.elements.items():
        written = [t for t in str(el.props.get("type", "")).split(", ") if t]
        if written and not all(t.lstrip("~") in sysml.LIBRARY_NAMES for t in written):
            assert loc in typed, loc
    # every satisfier is a part (or a port of one)
    for lk in art.links.values():
        if lk.type == "SATISFIES":
            assert art.elements[lk.src].kind in ("PART", "PARTDEF"), lk.src


def test_model_shape_is_big_and_deep_enough_for_model_snap():
    art = scan_sysml(MODELS)
    kinds = Counter(el.kind for el in art.elements.values())
    assert len(art.elements) >= 100
    assert {"PKG", "PARTDEF", "PART", "PORTDEF", "PORT", "ATTRDEF", "ATTR", "REQDEF", "REQ"} <= set(
        kinds
    )
    parent = {lk.dst: lk.src for lk in art.links.values() if lk.type == "CONTAINS"}

    def depth(loc: str) -> int:
        d = 0
        while loc in parent:
            loc, d = parent[loc], d + 1
        return d

    assert max(depth(loc) for loc in art.elements) >= 5
    # the knobs carry their defaults
    knobs = "sysml:sysml-models/MemNetDeployment::Settings::RecallKnobs"
    values = {art.elements[f"{knobs}::{k}"].props["value"] for k in "kMLF"}
    assert values == {2, 50, 5, 8}
    # the faces reach the session's two verb ports
    session = "sysml:sysml-models/MemNetDeployment::memnet::engine::session"
    for face in ("python", "cli", "wire", "mcp"):
        for verb in ("recall", "commit"):
            src = f"sysml:sysml-models/MemNetDeployment::memnet::faces::{face}::{verb}"
            assert ("CONNECTS", src, f"{session}::{verb}") in art.links
    # the deployment imports the requirements package
    assert (
        "IMPORTS",
        "sysml:sysml-models/MemNetDeployment",
        "sysml:sysml-models/MemNetRequirements",
    ) in art.links
