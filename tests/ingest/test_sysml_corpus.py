"""Real SysML v2 models, as modellers write them: files from the public SysML v2
release (EPL-2.0, see ``fixtures/corpus/README.md``). Each ingests whole, and
what it says comes out as elements and links. The whole corpus is measured by
``bench/sysml_corpus.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from memnet.ingest.model import Artefacts
from memnet.ingest.sysml import scan_sysml

from ._sysml import element, links

pytestmark = pytest.mark.req("MN-REQ-21")

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
FILES = sorted(CORPUS.rglob("*.sysml"))


def _scan(name: str) -> Artefacts:
    return scan_sysml(CORPUS / name)


def test_the_fixtures_are_the_licensed_release_files() -> None:
    assert len(FILES) == 16
    assert (CORPUS / "LICENSE").read_text().startswith("Eclipse Public License - v 2.0")
    assert "Eclipse Public License 2.0" in (CORPUS / "README.md").read_text()


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_file_ingests_without_an_error(path: Path) -> None:
    art = scan_sysml(path)
    assert art.elements
    # no statement is skipped; whatever is left over is a name another file declares
    for w in art.warnings:
        assert w.message.startswith("unresolved"), str(w)


def test_lesson_32_every_requirement_has_its_satisfies_links() -> None:
    art = scan_sysml(CORPUS / "32. Requirements")
    assert art.warnings == []
    reqs = {loc.partition("/")[2] for loc, el in art.elements.items() if el.kind == "REQ"}
    assert reqs == {
        "Requirement Usages::fullVehicleMassLimit",
        "Requirement Usages::emptyVehicleMassLimit",
        "Requirement Groups::vehicleSpecification",
        "Requirement Groups::engineSpecification",
        "Requirement Groups::engineSpecification::drivePowerInterface",
        "Requirement Groups::engineSpecification::torqueGeneration",
    }
    design = "Requirement Satisfaction::Vehicle c1 Design Context::vehicle_design"
    engine = "Requirement Satisfaction::vehicle_c1::engine_v1"
    groups = "Requirement Groups::"
    assert links(art, "SATISFIES") == {
        # the satisfier is a `ref`, and the chain walks through what it subsets
        (design, f"{groups}vehicleSpecification"): {},
        (engine, f"{groups}engineSpecification"): {},
        # a satisfied group passes it on to what it requires and what it holds
        (design, "Requirement Usages::fullVehicleMassLimit"): {
            "via": f"{groups}vehicleSpecification"
        },
        (design, "Requirement Usages::emptyVehicleMassLimit"): {
            "via": f"{groups}vehicleSpecification"
        },
        (engine, f"{groups}engineSpecification::drivePowerInterface"): {
            "via": f"{groups}engineSpecification"
        },
        (engine, f"{groups}engineSpecification::torqueGeneration"): {
            "via": f"{groups}engineSpecification"
        },
    }
    assert reqs == {dst for _, dst in links(art, "SATISFIES")}
    assert (design, "Requirement Satisfaction::vehicle_c1") in links(art, "SUBSETS")
    # the subject of a requirement is kept, with its type
    assert element(art, f"{groups}vehicleSpecification::vehicle") == (
        "REF",
        {"name": "vehicle", "type": "Vehicle", "role": "subject"},
    )
    assert (f"{groups}vehicleSpecification::vehicle", "Requirement Definitions::Vehicle") in links(
        art, "TYPED"
    )
    assert set(links(art, "REQUIRES")) == {
        (f"{groups}vehicleSpecification", "Requirement Usages::fullVehicleMassLimit"),
        (f"{groups}vehicleSpecification", "Requirement Usages::emptyVehicleMassLimit"),
    }
    assert links(art, "PERFORMS") == {
        ("Requirement Satisfaction::vehicle_c1", "Requirement Satisfaction::provide power"): {},
        (engine, "Requirement Satisfaction::provide power::generate torque"): {
            "as": "generateTorque"
        },
    }
    # require/assume constraints keep their text, defaults and values their value
    assert element(art, "Requirement Definitions::MassLimitationRequirement::require1")[1] == {
        "name": "require1",
        "role": "require",
        "text": "massActual <= massReqd",
    }
    assert element(art, "Requirement Usages::fullVehicleMassLimit::assume1")[1] == {
        "name": "assume1",
        "role": "assume",
        "doc": "Full tank is full.",
        "text": "vehicle.fuelMass == vehicle.fuelFullMass",
    }
    assert (
        element(art, "Requirement Usages::fullVehicleMassLimit::massReqd")[1]["value"] == "2000[kg]"
    )


def test_states_transitions_and_their_actions() -> None:
    art = _scan("Transition Actions.sysml")
    states = "Transition Actions::vehicleStates"
    assert element(art, states) == ("STATE", {"name": "vehicleStates", "type": "VehicleStates"})
    assert links(art, "THEN") == {(states, f"{states}::off"): {}}
    assert links(art, "TRANSITION") == {
        (f"{states}::off", f"{states}::starting"): {"accept": "VehicleStartSignal"},
        (f"{states}::starting", f"{states}::on"): {
            "accept": "VehicleOnSignal",
            "if": "operatingVehicle.brakePedalDepressed",
            "do": "send new ControllerStartSignal() to controller",
        },
        (f"{states}::on", f"{states}::off"): {"accept": "VehicleOffSignal"},
    }
    assert element(art, f"{states}::on::providePower") == (
        "ACT",
        {"name": "providePower", "role": "do"},
    )
    assert links(art, "PERFORMS") == {
        (f"{states}::on", "Transition Actions::performSelfTest"): {"when": "entry"}
    }


def test_decisions_and_merges_give_guarded_successions() -> None:
    art = _scan("Decision Example.sysml")
    act = "Decision Example::ChargeBattery"
    assert element(art, f"{act}::continueCharging")[1]["role"] == "merge"
    assert links(art, "THEN") == {
        (act, f"{act}::continueCharging"): {},
        (f"{act}::continueCharging", f"{act}::monitor"): {},
        (f"{act}::monitor", f"{act}::decide1"): {},
        (f"{act}::decide1", f"{act}::addCharge"): {"if": "monitor.batteryCharge < 100"},
        (f"{act}::decide1", f"{act}::endCharging"): {"if": "monitor.batteryCharge >= 100"},
        (f"{act}::addCharge", f"{act}::continueCharging"): {},
    }


def test_connections_with_named_ends_and_cross_multiplicities() -> None:
    art = _scan("Connections Example.sysml")
    hub = "Connections Example::wheelHubAssembly"
    assert element(art, "Connections Example::PressureSeat::bead") == (
        "PART",
        {"name": "bead", "type": "TireBead", "end": True},
    )
    assert links(art, "CONNECTS") == {
        (f"{hub}::wheel::t::bead", f"{hub}::wheel::w::rim"): {"type": "PressureSeat"},
        (f"{hub}::lugBoltJoints", f"{hub}::wheel::w::mountingHoles"): {},
        (f"{hub}::lugBoltJoints", f"{hub}::hub::h"): {},
    }
    art = _scan("Interface Decomposition Example.sysml")
    iface = "Interface Decomposition Example::WaterDelivery"
    assert element(art, f"{iface}::suppliedBy")[0] == "PORT"
    assert set(links(art, "CONNECTS")) == {
        (f"{iface}::suppliedBy::hot", f"{iface}::deliveredTo::hot"),
        (f"{iface}::suppliedBy::cold", f"{iface}::deliveredTo::cold"),
    }


def test_actions_send_accept_and_flow_between_steps() -> None:
    art = _scan("Messaging Example.sysml")
    take = "Messaging Example::takePicture"
    assert element(art, f"{take}::trigger") == ("ACT", {"name": "trigger", "role": "accept"})
    assert element(art, f"{take}::focus::scene") == (
        "ITEM",
        {"name": "scene", "value": "trigger.scene", "dir": "in"},
    )
    assert set(links(art, "THEN")) == {
        (f"{take}::trigger", f"{take}::focus"),
        (f"{take}::focus", f"{take}::shoot"),
        (f"{take}::shoot", f"{take}::send1"),
    }
    assert set(links(art, "FLOWS")) == {(f"{take}::focus::image", f"{take}::shoot::image")}


def test_defaults_constraint_assertions_and_derived_values() -> None:
    art = _scan("MassRollup2.sysml")
    assert element(art, "MassRollup2::MassedThing::totalMass")[1] == {
        "name": "totalMass",
        "subsets": "ISQ::mass",
        "default": "simpleMass",
    }
    assert (
        element(art, "MassRollup2::compositeThing::totalMass")[1]["default"]
        == "simpleMass + sum(subcomponents.totalMass)"
    )
    assert (
        "MassRollup2::filteredMassThing::totalMass",
        "MassRollup2::compositeThing::totalMass",
    ) in links(art, "REDEFINES")
    art = _scan("Time Constraints.sysml")
    states = "Time Constraints::healthStates"
    assert (
        element(art, f"{states}::maintenance::assert1")[1]["text"]
        == "TimeOf(maintenance) > vehicle.maintenanceTime"
    )
    assert links(art, "TRANSITION")[(f"{states}::normal", f"{states}::maintenance")] == {
        "accept": "at vehicle.maintenanceTime"
    }
    assert art.warnings == []  # ISQ::TemperatureValue and the like are the library's


def test_use_cases_analysis_cases_and_metadata() -> None:
    art = _scan("18-Use Case.sysml")
    uc = "18-Use Case::provide transportation"
    assert element(art, uc)[0] == "CASE"
    assert element(art, f"{uc}::driver") == (
        "PART",
        {"name": "driver", "type": "Person", "role": "actor"},
    )
    assert set(links(art, "INCLUDES")) >= {
        (uc, "18-Use Case::enter vehicle"),
        (uc, "18-Use Case::exit vehicle"),
    }
    # an include with members of its own is a step of its own, referencing the use case
    assert element(art, f"{uc}::enter vehicle")[1]["role"] == "include"
    assert (f"{uc}::enter vehicle", "18-Use Case::enter vehicle") in links(art, "REFERENCES")
    assert set(links(art, "THEN")) >= {
        (uc, f"{uc}::enter vehicle"),
        (f"{uc}::enter vehicle", f"{uc}::drive vehicle"),
    }
    art = _scan("Analysis Case Definition Example.sysml")
    fea = "Analysis Case Definition Example::FuelEconomyAnalysis"
    assert element(art, fea)[1]["role"] == "analysis"
    assert (
        element(art, f"{fea}::fuelEconomyAnalysisObjective::require1")[1]["text"]
        == "fuelEconomyResult > 30 [mi / gal]"
    )
    art = _scan("Filtering Example-2.sysml")
    safe = {
        loc.rpartition("::")[2]
        for loc, el in art.elements.items()
        if el.props.get("meta") == "Safety"
    }
    assert safe == {"seatBelt", "driverAirBag", "bumper", "antilockBrakes"}
    assert {src.rpartition("::")[2] for src, dst in links(art, "TAGGED")} == safe
    assert {dst for src, dst in links(art, "TAGGED")} == {"Filtering Example-2::Safety"}
    assert element(art, "Filtering Example-2::Safety")[0] == "METADEF"
    assert art.warnings == []


def test_a_skipped_definition_does_not_swallow_what_follows() -> None:
    art = _scan("Model Library Example.sysml")
    assert element(art, "Model Library Example::Causation")[0] == "CONNDEF"
    assert element(art, "Model Library Example::scenarios")[0] == "ITEM"
    art = _scan("Interaction Realization-1.sysml")
    cc = "Interaction Realization-1::cruiseControlInteraction_a"
    assert (
        element(art, f"{cc}::driver::setSpeedSent")[1]["references"]
        == "driverBehavior.sendSetSpeed"
    )
    assert element(art, f"{cc}::setSpeedMessage")[0] == "FLOW"
