"""One small model per construct of the SysML notation that MemNet once skipped
(metadata, views, renderings, user keywords, connection and interface bodies,
the bodies of statements that name a feature, anonymous usages, negated
satisfaction, comments with a locale): each is read as the kinds and links
``docs/ingest.md`` gives for it, with no warning."""

from __future__ import annotations

import pytest

from memnet.ingest.model import Artefacts
from memnet.ingest.sysml import KINDS, MANAGED_TYPES, parse_sysml, to_artefacts

from ._sysml import element, links

pytestmark = pytest.mark.req("MN-REQ-21")


def _art(text: str) -> Artefacts:
    art = to_artefacts([("m.sysml", parse_sysml(text, "m.sysml"))], "m")
    assert art.warnings == [], [str(w) for w in art.warnings]
    return art


def _kinds(art: Artefacts) -> dict[str, str]:
    cut = len(f"sysml:{art.root}/")
    return {loc[cut:]: el.kind for loc, el in art.elements.items()}


# (construct, model, elements: qualified name -> kind, links: (type, src, dst) -> props)
CONSTRUCTS = [
    (
        "metadata def and #prefix",
        """package P {
        metadata def Safety { attribute isMandatory : Boolean; }
        #Safety part def Brake;
    }""",
        {"P::Safety": "METADEF", "P::Safety::isMandatory": "ATTR", "P::Brake": "PARTDEF"},
        {("TAGGED", "P::Brake", "P::Safety"): {}},
    ),
    (
        "@ metadata with features",
        """package P {
        metadata def Safety { attribute isMandatory : Boolean; }
        part seatBelt { @Safety { isMandatory = true; } }
    }""",
        {"P::seatBelt::metadata1": "META", "P::seatBelt::metadata1::isMandatory": "REF"},
        {
            ("TAGGED", "P::seatBelt", "P::Safety"): {},
            ("TYPED", "P::seatBelt::metadata1", "P::Safety"): {},
            ("REDEFINES", "P::seatBelt::metadata1::isMandatory", "P::Safety::isMandatory"): {},
        },
    ),
    (
        "metadata about",
        """package P {
        metadata def Issue { attribute text : String; }
        part a; part b;
        metadata Issue about a, b;
        metadata note : Issue about b { text = "loose bolt"; }
    }""",
        {"P::note": "META", "P::note::text": "REF"},
        {
            ("TAGGED", "P::a", "P::Issue"): {},
            ("TAGGED", "P::b", "P::Issue"): {},
            ("ANNOTATES", "P::note", "P::b"): {},
            ("TYPED", "P::note", "P::Issue"): {},
        },
    ),
    (
        "user keyword (#kw def, #kw usage)",
        """package P {
        occurrence def Failure { attribute severity : Integer; }
        occurrence failures : Failure[*];
        private import Metaobjects::SemanticMetadata;
        metadata def failure :> SemanticMetadata { :>> baseType = failures meta SysML::Usage; }
        #failure def Breakdown;
        part def Device { #failure 'battery dead' { :>> severity = 3; } }
    }""",
        {"P::Breakdown": "DEF", "P::Device::battery dead": "REF"},
        {
            ("TAGGED", "P::Breakdown", "P::failure"): {},
            ("TAGGED", "P::Device::battery dead", "P::failure"): {},
            # the keyword's baseType gives the usage the features it redefines
            ("REDEFINES", "P::Device::battery dead::severity", "P::Failure::severity"): {},
        },
    ),
    (
        "view def, view, expose, filter, render",
        """package P {
        part vehicle { part engine; }
        rendering def Table;
        rendering asTable : Table;
        view def PartsView { filter @SysML::PartUsage; render asTable; }
        view parts : PartsView { expose vehicle::**; }
    }""",
        {
            "P::PartsView": "VIEWDEF",
            "P::parts": "VIEW",
            "P::Table": "RENDERDEF",
            "P::asTable": "RENDER",
        },
        {
            ("RENDERS", "P::PartsView", "P::asTable"): {},
            ("EXPOSES", "P::parts", "P::vehicle"): {"wildcard": "**"},
            ("TYPED", "P::parts", "P::PartsView"): {},
        },
    ),
    (
        "viewpoint",
        """package P {
        concern c;
        viewpoint def VP { frame c; }
        viewpoint vp : VP;
    }""",
        {"P::VP": "REQDEF", "P::vp": "REQ"},
        {("FRAMES", "P::VP", "P::c"): {}},
    ),
    (
        "connection and interface bodies",
        """package P {
        port def FP { out item fuel; }
        interface def FuelLine { end a : FP; end b : FP; }
        part car {
            part tank { port o : FP; } part engine { port i : FP; }
            interface : FuelLine connect tank.o to engine.i {
                flow of Fuel from tank.o.fuel to engine.i.fuel;
            }
            connection connect tank to engine { doc /* bolted */ attribute torque = 40; }
        }
    }""",
        {
            "P::car::interface1": "IFACE",
            "P::car::connection1": "CONN",
            "P::car::connection1::torque": "ATTR",
        },
        {
            ("CONNECTS", "P::car::tank::o", "P::car::engine::i"): {"type": "FuelLine"},
            ("CONNECTS", "P::car::tank", "P::car::engine"): {},
            ("FLOWS", "P::FP::fuel", "P::FP::fuel"): {"of": "Fuel"},
            ("TYPED", "P::car::interface1", "P::FuelLine"): {},
        },
    ),
    (
        "allocate with members",
        """package P {
        action provide { action generate; }
        part engine { action generate; }
        allocate provide to engine { allocate provide.generate to engine.generate; }
    }""",
        {"P::allocation1": "ALLOC"},
        {
            ("ALLOCATES", "P::provide", "P::engine"): {},
            ("ALLOCATES", "P::provide::generate", "P::engine::generate"): {},
        },
    ),
    (
        "perform, exhibit, include with members",
        """package P {
        action drive { in speed; }
        state modes { state on; }
        use case enter { subject s; }
        part car {
            perform drive { in :>> speed = 10; }
            exhibit modes { state extra; }
            include enter { subject = car; }
        }
    }""",
        {
            "P::car::drive": "ACT",
            "P::car::modes": "STATE",
            "P::car::enter": "CASE",
            "P::car::drive::speed": "REF",
            "P::car::modes::extra": "STATE",
        },
        {
            ("PERFORMS", "P::car", "P::drive"): {},
            ("EXHIBITS", "P::car", "P::modes"): {},
            ("INCLUDES", "P::car", "P::enter"): {},
            ("REFERENCES", "P::car::drive", "P::drive"): {},
            ("REDEFINES", "P::car::drive::speed", "P::drive::speed"): {},
        },
    ),
    (
        "require, assume, assert, satisfy, verify with members",
        """package P {
        requirement mass { attribute limit; }
        constraint light { true }
        requirement group {
            require mass { attribute :>> limit = 1500; }
            assume light { doc /* kept as a doc */ in x = 1; }
        }
        part car { assert light { in y = 2; } }
        satisfy group by car { attribute note; }
        verification def Check { objective { verify mass { attribute :>> limit = 1; } } }
    }""",
        {
            "P::group::mass": "CONSTRAINT",
            "P::group::light": "CONSTRAINT",
            "P::car::light": "CONSTRAINT",
            "P::group-2": "REQ",
            "P::Check::objective::mass": "REQ",
        },
        {
            ("REQUIRES", "P::group", "P::mass"): {},
            ("ASSUMES", "P::group", "P::light"): {},
            ("ASSERTS", "P::car", "P::light"): {},
            ("SATISFIES", "P::car", "P::group"): {},
            ("SATISFIES", "P::car", "P::mass"): {"via": "P::group"},
            ("VERIFIES", "P::Check", "P::mass"): {},
            ("REDEFINES", "P::group::mass::limit", "P::mass::limit"): {},
        },
    ),
    (
        "entry, do and exit with members",
        """package P {
        action warmUp { in t; } action run;
        state def Modes { state on { entry warmUp { in :>> t = 20; } do run; } }
    }""",
        {"P::Modes::on::warmUp": "ACT"},
        {
            ("PERFORMS", "P::Modes::on", "P::warmUp"): {"when": "entry"},
            ("PERFORMS", "P::Modes::on", "P::run"): {"when": "do"},
            ("REFERENCES", "P::Modes::on::warmUp", "P::warmUp"): {},
        },
    ),
    (
        "not satisfy",
        """package P {
        requirement r; part p;
        not satisfy r by p;
    }""",
        {"P::r": "REQ"},
        {("SATISFIES", "P::p", "P::r"): {"negated": True}},
    ),
    (
        "anonymous usages",
        """package P {
        part def Engine;
        part def Car {
            part : Engine; part : Engine; ref : Engine; attribute = 3; enum;
            item; in item; connection;
        }
    }""",
        {
            "P::Car::part1": "PART",
            "P::Car::part2": "PART",
            "P::Car::ref1": "REF",
            "P::Car::attribute1": "ATTR",
            "P::Car::enum1": "ENUM",
            "P::Car::item1": "ITEM",
            "P::Car::item2": "ITEM",
            "P::Car::connection1": "CONN",
        },
        {("TYPED", "P::Car::part1", "P::Engine"): {}, ("TYPED", "P::Car::ref1", "P::Engine"): {}},
    ),
    (
        "comments with a locale",
        """package P {
        comment about P locale "en_US" /* a comment */
        locale "fr_FR" /* un commentaire */
        doc locale "en_US" /* the doc */
        part def A;
    }""",
        {"P": "PKG", "P::A": "PARTDEF"},
        {},
    ),
]


@pytest.mark.parametrize(
    ("text", "kinds", "edges"), [c[1:] for c in CONSTRUCTS], ids=[c[0] for c in CONSTRUCTS]
)
def test_each_construct_is_read_as_its_kinds_and_links(
    text: str, kinds: dict[str, str], edges: dict[tuple[str, str, str], dict[str, object]]
) -> None:
    art = _art(text)
    held = _kinds(art)
    assert {q: held.get(q) for q in kinds} == kinds
    for (etype, src, dst), props in edges.items():
        assert links(art, etype).get((src, dst)) == props, (etype, src, dst, links(art, etype))
    assert set(held.values()) <= set(KINDS)
    assert {lk.type for lk in art.links.values()} <= set(MANAGED_TYPES)


def test_a_requirement_satisfied_with_members_keeps_them_and_the_doc_goes_on_the_link() -> None:
    art = _art(CONSTRUCTS[9][1])
    assert element(art, "P::group-2")[1]["role"] == "satisfy"
    assert element(art, "P::group::light")[1]["doc"] == "kept as a doc"
    assert element(art, "P::car::light")[1]["role"] == "assert"
