"""The SysML v2 textual notation, statement by statement (SysML 8.2.2 and the KerML
expressions it uses): every form reads, the modelled ones become elements and
links, the rest are skipped with one warning each, and text that is not SysML
is still a syntax error with its line and column."""

from __future__ import annotations

import pytest

from memnet.errors import InputTooLarge, MemNetError
from memnet.ingest.model import Artefacts
from memnet.ingest.sysml import Connect, Reference, Satisfy, parse_sysml, to_artefacts

from ._sysml import element, links

pytestmark = pytest.mark.req("MN-REQ-21")


def _art(text: str) -> Artefacts:
    return to_artefacts([("m.sysml", parse_sysml(text, "m.sysml"))], "m")


# One or a few statements per production of the textual BNF; each must read.
NOTATION = [
    # packages, imports, aliases, annotations
    "package P;",
    "package <'p1'> P { }",
    "standard library package L { }",
    "library package L { #M part def A; }",
    "private import A::B;",
    "import A::*;",
    "public import A::**;",
    "import all A::*::**;",
    "import A::**[@Safety];",
    "import A::*[@S and (as S).isMandatory][x > 1] { doc /* d */ }",
    "alias B for A::B;",
    "alias <'b'> B for A::B { doc /* d */ }",
    "doc /* text */",
    "doc <'d1'> Intro locale \"en_US\" /* text */",
    'locale "en_US" /* a comment with a locale and no keyword */',
    "part x : $::A::B;",
    "attribute x = $::A::b + 1;",
    "import $::A::*;",
    "comment /* text */",
    'comment C about A, B::c locale "en" /* text */',
    "/* a comment */",
    'rep inOCL language "ocl" /* self.x > 0 */',
    'language "alf" /* x = 1; */',
    "dependency A to B;",
    "dependency d from A, B to C, D;",
    "#refinement dependency A to B;",
    "filter @Safety;",
    "metadata def M { attribute x : Integer; }",
    "@M;",
    "@M { x = 1; }",
    "metadata m : M about A, B;",
    "metadata m typed by M;",
    "#M part p;",
    "abstract #M #N part p;",
    "part p { @M; }",
    # definitions and usages of every keyword
    *[
        f"{kw} def X;"
        for kw in (
            "attribute",
            "enum",
            "occurrence",
            "item",
            "part",
            "connection",
            "flow",
            "interface",
            "port",
            "action",
            "calc",
            "state",
            "constraint",
            "requirement",
            "concern",
            "case",
            "analysis",
            "verification",
            "use case",
            "view",
            "viewpoint",
            "rendering",
            "metadata",
            "allocation",
        )
    ],
    *[
        f"{kw} x;"
        for kw in (
            "attribute",
            "enum",
            "occurrence",
            "item",
            "part",
            "port",
            "action",
            "calc",
            "state",
            "constraint",
            "requirement",
            "concern",
            "case",
            "analysis",
            "verification",
            "use case",
            "view",
            "viewpoint",
            "rendering",
            "ref",
            "connection",
            "interface",
            "allocation",
            "flow",
            "message",
        )
    ],
    "abstract part def A :> B, C specializes D;",
    "variation part def V { variant part a; }",
    "individual def I;",
    "individual part def I;",
    "individual occurrence def I;",
    "#Kw def X;",
    "abstract #Kw def X { }",
    "enum def C { red; green = 2; enum blue; }",
    "enum def C :> Natural { #M enum a = 1; }",
    "enum e : C = C::red;",
    # features: prefixes, specialisation, multiplicity, values
    "in attribute x : Real;",
    "out ref y : T[0..*] ordered nonunique;",
    "inout port p : ~P;",
    "derived constant attribute c = 1;",
    "readonly attribute r;",
    "abstract ref part p :> q, r :>> s ::> t => u;",
    "end [1] part p : P;",
    "end x : T;",
    "end [1] item a : A { @M; }",
    "end :>> e1 ::> d1;",
    "end ref e ::> d :> q;",
    "part p subsets q redefines r references s crosses t defined by T;",
    "part p : A, B[2..*] = q;",
    "attribute a := 1;",
    "attribute a default = 2;",
    "attribute a default := 3;",
    "attribute m default 10 [kg];",
    "x :> y;",
    ":>> y = 1;",
    "T1 = 10.0 [N*m];",
    "A::b = 1;",
    "individual i : I;",
    "snapshot s : S;",
    "individual timeslice t { snapshot s; }",
    "variant x;",
    "ref <'r'> r;",
    # relationships between features
    "connect a to b;",
    "connect a.b to c.d { doc /* d */ }",
    "connect (a, b, c);",
    "connect [0..1] a to [1] b.c;",
    "connect n1 references a to n2 ::> b;",
    "connection c : C connect a to b;",
    "connection : C { end a ::> x; }",
    "connection c : C = d connect (a, b);",
    "interface a.p to b.q;",
    "interface i : I connect x.p to y.q { flow of F from x.p.o to y.q.i; }",
    "interface (a, b);",
    "abstract interface i = j;",
    "allocate a to b;",
    "allocation al : A allocate l to p;",
    "allocation al allocate (x => l, y => p);",
    "bind a = b;",
    "binding bd bind a.x = b.y;",
    "binding bd : B bind a = b;",
    "flow a.b to c.d;",
    "flow of Fuel from a.o to b.i;",
    "flow f : F from a.o to b.i;",
    "flow f of fuel : Fuel [1] from a to b;",
    "succession flow a.o to b.i;",
    "succession flow f of F from a to b;",
    "message m of M from a to b;",
    "message a to b;",
    "message : M from p to p;",
    "message :>> m = x.y;",
    # behaviour: actions, nodes, successions
    "action a : A { in x : X; out y; }",
    "perform action p : P;",
    "perform a.b :>> c;",
    "perform a { in x = y; }",
    "action a accept s : S via p;",
    "accept when x > 3;",
    "accept at t;",
    "accept after 5 [s];",
    "accept t when x > 1;",
    "accept S;",
    "send S() via p to q;",
    "send x to y;",
    "send via p to q;",
    "action s send new S(a) to b;",
    "assign x := x + 1;",
    "assign a.b := 0;",
    "terminate;",
    "terminate x;",
    "action t terminate;",
    "merge m;",
    "decide;",
    "join j { doc /* d */ }",
    "fork f;",
    "if x > 0 { assign x := 0; } else if x < 0 { assign x := 1; } else { assign x := 2; }",
    "if a { } else action e { }",
    "while x > 0 { assign x := x - 1; } until done;",
    "loop { assign x := x - 1; } until b;",
    "loop action l { }",
    "action l while c { }",
    "for n : Integer in (1, 2, 3) { assign i := i * n; }",
    "first start;",
    "first a;",
    "first a then b;",
    "first a if g then b;",
    "succession s first a then b;",
    "succession s : S first [1] a then [1] b { }",
    "action a; then b;",
    "succession c first causes.startShot[n] then effects[m] { attribute n = 1; }",
    "connect a.b[1] to c[0..*];",
    "action a; then action b;",
    "action a; then [1] action b;",
    "decide; if g then b; else c;",
    "action a; if g then b;",
    # states and transitions
    "state def S parallel { state a; state b; }",
    "state s : S { entry; then off; }",
    "entry action a;",
    "do action b { }",
    "exit c;",
    "entry a { }",
    "do send x to y;",
    "entry assign x := 0;",
    "exit accept e;",
    "state off; accept Go then on;",
    "state s; accept e if g do a then t;",
    "state s; if g do send x to y then t;",
    "state s; then t;",
    "state s; transition then t;",
    "state s; transition accept e via p then t;",
    "transition first a accept e then b;",
    "transition t first a then b;",
    "transition a then b;",
    "transition first a accept s : Sig do action d then b;",
    "transition first a if true do send s to p then b { }",
    "exhibit state s : S;",
    "exhibit s;",
    "exhibit s :>> t parallel { }",
    # calculations, constraints, requirements, cases
    "calc def C { in x : Real; return r : Real = x * 2; }",
    "calc c : C { x }",
    "calc def F { in x; x * x }",
    "constraint def C { in x; x > 0 }",
    "constraint c { a and (b or not c) implies d }",
    "assert constraint c : C;",
    "assert c;",
    "assert not c;",
    "assert not constraint { false }",
    "requirement def R { subject s : S; actor a : A; stakeholder h : H; }",
    "requirement r : R { subject = x.y; require constraint { x > 0 } }",
    "requirement r { assume constraint c : C; require c; require #M c2; }",
    "requirement r { require c [0..*]; assume c { } frame c3; frame concern c4 : C4; }",
    "requirement def R { require constraint c1 :>> c; }",
    "requirement;",
    "requirement r references q { }",
    "concern def C { stakeholder s : S; }",
    "viewpoint def VP { frame c; }",
    "satisfy r by x;",
    "satisfy r;",
    "satisfy requirement r by x;",
    "satisfy requirement r : R by x { }",
    "satisfy requirement : R by x;",
    "assert satisfy r by x;",
    "not satisfy r by x;",
    "assert not satisfy r by x;",
    "satisfy a.b :>> c = d by e.f;",
    "verification def V { subject v : V; objective { verify requirement : R; } PassIf(v.m) }",
    "verification def V { objective o { verify r; } }",
    "verify requirement r : R;",
    "analysis def A { subject s; objective o : O; return r : R; calc c { x } r }",
    "analysis a : A { subject = x; }",
    "use case def U { subject s; actor a; include u; }",
    "include use case u : U;",
    "include u[0..*] { subject; }",
    "use case u { then include v; }",
    "case def C { }",
    "case c : C;",
    # views
    "view def V { filter @S; render asTreeDiagram; }",
    "view v : V { expose P::*; expose P::**[@S]; render rendering r : R[0..1]; }",
    "viewpoint vp : VP { frame concern c1; }",
    "rendering r : R;",
    # expressions
    "attribute x = if a ? b else c;",
    "attribute x = a ?? b;",
    "attribute x = a xor b;",
    "attribute x = a | b & c;",
    "attribute x = a === b != c !== d;",
    "attribute x = a istype T;",
    "attribute x = a hastype T;",
    "attribute x = a @ T;",
    "attribute x = a as T;",
    "attribute x = a @@ M;",
    "attribute x = a meta M;",
    "attribute x = all T;",
    "attribute x = -a + +b - ~c;",
    "attribute x = 2 ** 3 ^ 4 % 5;",
    "attribute x = 1..5;",
    "attribute x = .5e-3 + 1.5E2 + 3;",
    'attribute x = "s\\"t";',
    "attribute x = null;",
    "attribute x = ();",
    "attribute x = (a, b, c,);",
    "attribute x = f(a, b)(c);",
    "attribute x = f(p = 1, q = 2);",
    "attribute x = a.b.c(d);",
    "attribute x = a[1];",
    "attribute x = a#(1, 2);",
    "attribute x = a->collect {in p; p.m};",
    "attribute x = a->reduce '+';",
    "attribute x = a->f(1);",
    "attribute x = a.{in p; p};",
    "attribute x = a.?{in p : P; p > 0};",
    "attribute x = a.metadata;",
    "attribute x = { in y; y * 2 };",
    "attribute x = new T(1);",
    "attribute x = *;",
    "attribute x = 'quoted name'::'b c'.d;",
    "attribute x = true and false or not true;",
]


@pytest.mark.parametrize("text", NOTATION)
def test_every_statement_of_the_notation_reads(text: str) -> None:
    doc = parse_sysml(f"package T {{\n{text}\n}}\n", "t.sysml")
    to_artefacts([("t.sysml", doc)], "t")
    assert doc.elements[0].name == "T"


def test_nesting_past_the_cap_is_refused_not_a_crash() -> None:
    deep = "attribute x = " + "if a ? b else " * 400 + "c;"
    with pytest.raises(InputTooLarge):
        parse_sysml(deep)
    ok = "attribute x = " + "if a ? b else " * 20 + "c;"
    assert parse_sysml(ok).elements[0].value == ok[len("attribute x = ") : -1]
    # prefix operators are read in a loop, not by recursion
    assert parse_sysml("attribute x = " + "- " * 5000 + "1;").elements[0].name == "x"


# --------------------------------------------------------------------------- what is modelled


def test_actions_perform_and_successions() -> None:
    art = _art("""
    package P {
        action def Drive { in item fuel : Fuel; out attribute speed : Real; }
        item def Fuel;
        action def Brake;
        part def Car {
            perform action drive : Drive;
            perform stop.brake :>> halt;
            action halt : Brake;
        }
        action stop { action brake : Brake; }
        action trip {
            first start;
            then action go : Drive;
            then decide;
                if fast then slowDown;
                else cruise;
            action slowDown;
            action cruise;
            then done;
        }
    }""")
    assert element(art, "P::Drive")[0] == "ACTDEF" and element(art, "P::Fuel")[0] == "ITEMDEF"
    assert element(art, "P::Drive::fuel") == ("ITEM", {"name": "fuel", "type": "Fuel", "dir": "in"})
    assert element(art, "P::Car::drive") == (
        "ACT",
        {"name": "drive", "type": "Drive", "role": "perform"},
    )
    assert ("P::Drive::fuel", "P::Fuel") in set(links(art, "TYPED"))
    # performing an existing action is a link from the performer, as the feature it binds
    assert links(art, "PERFORMS") == {("P::Car", "P::stop::brake"): {"as": "halt"}}
    assert element(art, "P::trip::decide1") == ("ACT", {"name": "decide1", "role": "decide"})
    assert links(art, "THEN") == {
        ("P::trip", "P::trip::go"): {},  # `first start; then go`: the trip begins with go
        ("P::trip::go", "P::trip::decide1"): {},
        ("P::trip::decide1", "P::trip::slowDown"): {"if": "fast"},
        ("P::trip::decide1", "P::trip::cruise"): {"if": "else"},
    }
    assert art.warnings == []


def test_states_and_transitions() -> None:
    art = _art("""
    package P {
        attribute def Go; attribute def Stop;
        state def Modes {
            entry; then off;
            state off;
            accept Go if ready do action warmUp then on;
            state on { entry action check; do run; exit action park; }
            accept Stop then off;
            transition reset first on accept after 5 [s] then off;
        }
        action run;
    }""")
    assert element(art, "P::Modes")[0] == "STATEDEF"
    assert element(art, "P::Modes::on::check") == ("ACT", {"name": "check", "role": "entry"})
    assert links(art, "THEN") == {("P::Modes", "P::Modes::off"): {}}  # the initial state
    assert links(art, "TRANSITION") == {
        ("P::Modes::off", "P::Modes::on"): {"accept": "Go", "if": "ready", "do": "action warmUp"},
        ("P::Modes::on", "P::Modes::off"): {"accept": "Stop"},
    }
    # the second transition between on and off is kept as one edge, with a warning
    assert [w.message for w in art.warnings] == [
        "a second transition between the same states is merged into the first (P::Modes::on "
        "to P::Modes::off)"
    ]
    assert links(art, "PERFORMS") == {("P::Modes::on", "P::run"): {"when": "do"}}


def test_requirements_subjects_constraints_and_every_satisfy() -> None:
    art = _art("""
    package P {
        part def Car { attribute mass : Real; }
        requirement def MassLimit {
            subject car : Car;
            attribute limit : Real;
            assume constraint fueled { car.fuel > 0 }
            require constraint { car.mass <= limit }
        }
        constraint light { true }
        requirement <'R1'> r1 : MassLimit { attribute :>> limit = 1500; }
        requirement <'R2'> r2 : MassLimit;
        requirement group {
            subject car : Car;
            require r1;
            assume light;
            requirement nested : MassLimit;
        }
        part car : Car {
            satisfy r2;
            assert light;
        }
        part other : Car;
        satisfy group by car;
        satisfy requirement r2 by other;
        satisfy requirement checked : MassLimit by other;
        satisfy requirement : MassLimit by car;
        assert satisfy r1 by other { doc /* asserted */ }
        not satisfy r2 by car;
    }""")
    assert element(art, "P::MassLimit::car") == (
        "REF",
        {"name": "car", "type": "Car", "role": "subject"},
    )
    assert ("P::MassLimit::car", "P::Car") in set(links(art, "TYPED"))
    assert element(art, "P::MassLimit::fueled") == (
        "CONSTRAINT",
        {"name": "fueled", "role": "assume", "text": "car.fuel > 0"},
    )
    assert element(art, "P::MassLimit::require1")[1]["text"] == "car.mass <= limit"
    assert element(art, "P::r1::limit") == ("ATTR", {"name": "limit", "value": 1500})
    assert ("P::r1::limit", "P::MassLimit::limit") in set(links(art, "REDEFINES"))
    assert set(links(art, "REQUIRES")) == {("P::group", "P::r1")}
    assert set(links(art, "ASSUMES")) == {("P::group", "P::light")}
    assert set(links(art, "ASSERTS")) == {("P::car", "P::light")}
    assert element(art, "P::checked") == (
        "REQ",
        {"name": "checked", "type": "MassLimit", "role": "satisfy"},
    )
    assert links(art, "SATISFIES") == {
        ("P::car", "P::r2"): {},  # no `by`: the enclosing part
        ("P::car", "P::group"): {},
        ("P::car", "P::r1"): {"via": "P::group"},  # what the group requires ...
        ("P::car", "P::group::nested"): {"via": "P::group"},  # ... and holds
        ("P::other", "P::r2"): {},  # `requirement r2` names the existing one
        ("P::other", "P::checked"): {},  # `requirement checked : MassLimit` declares one
        ("P::car", "P::MassLimit"): {},
        ("P::other", "P::r1"): {},
    } | {("P::car", "P::r2"): {"negated": True}}  # `not satisfy` is kept, marked
    assert art.warnings == []
    doc = parse_sysml("satisfy r by x; satisfy q;")
    assert doc.satisfies == [Satisfy("r", "x", 1, 1), Satisfy("q", None, 1, 17)]


def test_verification_cases_verify_what_their_objective_names() -> None:
    art = _art("""
    package P {
        requirement def R; requirement r : R;
        part def V;
        verification def Check {
            subject v : V;
            objective { verify r; verify requirement : R; }
            PassIf(v.ok)
        }
    }""")
    assert element(art, "P::Check") == (
        "CASEDEF",
        {"name": "Check", "role": "verification", "text": "PassIf(v.ok)"},
    )
    assert set(links(art, "VERIFIES")) == {("P::Check", "P::r"), ("P::Check", "P::R")}


def test_interfaces_connections_flows_bindings_allocations() -> None:
    art = _art("""
    package P {
        port def FuelPort { out item fuel : Fuel; }
        item def Fuel;
        interface def FuelLine { end supply : FuelPort; end demand : ~FuelPort; }
        part def Tank { port out1 : FuelPort; }
        part def Engine { port in1 : ~FuelPort; }
        part car {
            part tank : Tank; part engine : Engine; part pump;
            interface line : FuelLine connect supply ::> tank.out1 to demand ::> engine.in1;
            flow of Fuel from tank.out1.fuel to engine.in1.fuel;
            connect (tank, engine, pump);
            bind pump = tank;
            allocate pump to engine;
            dependency engine to tank;
        }
    }""")
    assert element(art, "P::FuelLine")[0] == "IFACEDEF"
    assert element(art, "P::FuelLine::demand") == (
        "REF",
        {"name": "demand", "type": "~FuelPort", "end": True},
    )
    assert element(art, "P::car::line") == ("IFACE", {"name": "line", "type": "FuelLine"})
    assert links(art, "CONNECTS") == {  # ends resolve through the part and port types
        ("P::Tank::out1", "P::Engine::in1"): {"name": "line", "type": "FuelLine"},
        ("P::car::tank", "P::car::engine"): {},
        ("P::car::tank", "P::car::pump"): {},
    }
    assert links(art, "FLOWS") == {
        ("P::FuelPort::fuel", "P::FuelPort::fuel"): {"of": "Fuel"}
    }  # through the port types
    assert set(links(art, "BINDS")) == {("P::car::pump", "P::car::tank")}
    assert set(links(art, "ALLOCATES")) == {("P::car::pump", "P::car::engine")}
    assert set(links(art, "DEPENDS")) == {("P::car::engine", "P::car::tank")}
    assert art.warnings == []


def test_refs_enumerations_values_defaults_and_metadata() -> None:
    art = _art("""
    package P {
        enum def Colour { red; green; enum blue = 3; }
        part def Base { attribute mass; ref driver : Person; }
        part def Person;
        metadata def Safety; metadata def Audit;
        #Safety part def Car :> Base {
            attribute :>> mass default 1000;
            ref owner :> driver;
            lugBoltSize :> mass;
            attribute colour : Colour = Colour::red;
            @Audit;
        }
        alias Vehicle for Car;
        part v : Vehicle;
    }""")
    kinds = {
        q: k for q, k in ((loc.partition("/")[2], el.kind) for loc, el in art.elements.items())
    }
    assert {kinds[f"P::Colour::{c}"] for c in ("red", "green", "blue")} == {"ENUM"}
    assert element(art, "P::Colour::blue")[1]["value"] == 3
    assert element(art, "P::Car") == ("PARTDEF", {"name": "Car", "meta": "Safety, Audit"})
    assert set(links(art, "TAGGED")) == {("P::Car", "P::Safety"), ("P::Car", "P::Audit")}
    assert element(art, "P::Car::mass") == ("ATTR", {"name": "mass", "default": 1000})
    assert element(art, "P::Car::owner") == ("REF", {"name": "owner", "subsets": "driver"})
    assert element(art, "P::Car::lugBoltSize") == (
        "REF",
        {"name": "lugBoltSize", "subsets": "mass"},
    )
    assert element(art, "P::Car::colour")[1]["value"] == "Colour::red"
    assert set(links(art, "REDEFINES")) == {("P::Car::mass", "P::Base::mass")}
    assert set(links(art, "SUBSETS")) == {
        ("P::Car::owner", "P::Base::driver"),
        ("P::Car::lugBoltSize", "P::Car::mass"),
    }
    assert ("P::v", "P::Car") in set(links(art, "TYPED"))  # through the alias
    assert art.warnings == []


def test_calculations_keep_their_result_expression() -> None:
    doc = parse_sysml("calc def Area { in w : Real; in h : Real; return a : Real; w * h }")
    area = doc.elements[0]
    assert (area.kind, area.text) == ("CALCDEF", "w * h")
    assert [(c.name, c.direction, c.role) for c in area.children] == [
        ("w", "in", None),
        ("h", "in", None),
        ("a", None, "return"),
    ]


def test_views_and_renderings_are_read_and_reading_goes_on() -> None:
    doc = parse_sysml(
        """package P {
        view def V {
            filter @S;
            view inner { expose P::*; render asTree; }
        }
        part later;
        rendering r;
        part last;
    }""",
        "v.sysml",
    )
    assert doc.warnings == []
    assert [(e.kind, e.name) for _, e in doc.walk()] == [
        ("PKG", "P"),
        ("VIEWDEF", "V"),
        ("VIEW", "inner"),
        ("PART", "later"),
        ("RENDER", "r"),
        ("PART", "last"),
    ]
    assert dict(doc.elements[0].children[0].props) == {"filter": "@S"}
    art = to_artefacts([("v.sysml", doc)], "v")
    assert links(art, "EXPOSES") == {("P::V::inner", "P"): {"wildcard": "*"}}


def test_a_statement_naming_a_feature_with_members_becomes_an_element_too() -> None:
    doc = parse_sysml("part p { perform a { doc /* bound */ in x = y; } }", "w.sysml")
    assert doc.references == [Reference("PERFORMS", "a", 1, 10, own="a")]
    act = doc.elements[0].children[0]
    assert (act.kind, act.name, act.derived, act.role, act.references, act.doc) == (
        "ACT",
        "a",
        True,
        "perform",
        ("a",),
        "bound",
    )
    assert [(c.name, c.direction, c.value) for c in act.children] == [("x", "in", "y")]
    assert doc.warnings == []
    # a doc alone is no member: the link carries it, and no element is made
    doc = parse_sysml("part p { perform a { doc /* only */ } }")
    assert doc.references == [Reference("PERFORMS", "a", 1, 10, (("doc", "only"),))]
    assert doc.elements[0].children == ()
    # the link looks past the element it made; the element references what it names
    art = _art("""package Q {
        action a { action b; }
        part p { perform a { in x; } perform a.b { out y; } }
        part r { perform a.b; }
        part s { perform a.b :>> c; }
        connect r.b to s.c;
    }""")
    assert links(art, "PERFORMS") == {
        ("Q::p", "Q::a"): {},
        ("Q::p", "Q::a::b"): {},
        ("Q::r", "Q::a::b"): {},
        ("Q::s", "Q::a::b"): {"as": "c"},
    }
    assert set(links(art, "REFERENCES")) == {("Q::p::a", "Q::a"), ("Q::p::b", "Q::a::b")}
    assert element(art, "Q::p::b")[1]["role"] == "perform"
    # `perform a.b;` gives r a feature b, as the language does (so r.b resolves)
    assert set(links(art, "CONNECTS")) == {("Q::a::b", "Q::a::b")}
    assert art.warnings == []


def test_connect_records_keep_names_types_and_edge_kinds() -> None:
    doc = parse_sysml("part p { connection c : C connect a to b; flow of F from x to y; }")
    assert doc.connects == [
        Connect("a", "b", "c", "C", 1, 10),
        Connect("x", "y", line=1, column=43, edge="FLOWS", props=(("of", "F"),)),
    ]


def test_the_reader_never_crashes_on_statement_soup() -> None:
    words = [
        "part",
        "def",
        "action",
        "then",
        "first",
        "if",
        "else",
        "accept",
        "state",
        "transition",
        "{",
        "}",
        ";",
        "a",
        ":",
        ":>",
        "=",
        "(",
        ")",
        "[",
        "]",
        "1",
        "via",
        "to",
        "from",
        "satisfy",
        "by",
        "require",
        "#",
        "@",
        "entry",
        "do",
        "send",
    ]
    import random

    rng = random.Random(7)
    for _ in range(400):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        try:
            doc = parse_sysml(text)
        except MemNetError:
            continue
        to_artefacts([("s.sysml", doc)], "s")
