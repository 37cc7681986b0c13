"""Requirement traceability (MN-REQ-20): ``memnet ver`` and the ``memnet.ver`` plugin.

The command is run as a user runs it (the installed ``memnet`` script, a real
pytest subprocess) on a tiny model and a tiny test tree written to a temp
directory; the plugin is also checked on this repository itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memnet import Session, ver
from memnet.errors import CODES, TraceFailed
from memnet.ingest import ingest_path
from memnet.ingest.sysml import load_requirements

pytestmark = pytest.mark.req("MN-REQ-20")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("memnet")

MODEL = """\
package Tiny {
    requirement <'T-10'> ten { doc /* Natural order puts this one last. */ }
    requirement <'T-2.1'> twoDotOne { doc /* A refinement of the second. */ }
    requirement <'T-1'> one { doc /* The first promise. */ }
    requirement <'T-2'> two { doc /* The second promise. */ }
}
"""

TESTS = {
    "test_alpha.py": """\
import pytest

ONE, TWO = "T-1", "T-2"
pytestmark = pytest.mark.req(ONE)


def test_a():
    pass


@pytest.mark.req(TWO, "T-10")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_b(n):
    pass
""",
    "test_plain.py": """\
def test_helper_without_a_requirement():
    pass
""",
    "ver/test_beta.py": """\
import pytest


@pytest.mark.req("T-2.1")
def test_c():
    pass


class TestGroup:
    pytestmark = [pytest.mark.req("T-10")]

    def test_d(self):
        pass
""",
}


def env() -> dict[str, str]:
    """The environment of the pytest subprocesses: no model from the outer run, and
    no plugins loaded from entry points (the tiny projects use none; hypothesis's
    and anyio's cost more than a second per process). ``memnet.ver`` is named
    with ``-p`` and still loads."""
    out = dict(os.environ)
    out.pop(ver.ENV_MODELS, None)
    out.pop("PYTEST_ADDOPTS", None)
    out["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return out


def memnet(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.exists(), "the memnet command is not installed: pip install -e '.[dev]'"
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        env=env(),
        timeout=300,
        check=False,
    )


def pytest_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        env=env(),
        timeout=300,
        check=False,
    )


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A tiny project: ``sysml-models/`` with four requirements, ``tests/`` covering them."""
    proj = tmp_path / "proj"
    (proj / "sysml-models").mkdir(parents=True)
    (proj / "sysml-models" / "reqs.sysml").write_text(MODEL, encoding="utf-8")
    for rel, body in TESTS.items():
        p = proj / "tests" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body, encoding="utf-8")
    (proj / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return proj


def add_requirement(proj: Path, rid: str, text: str) -> None:
    with open(proj / "sysml-models" / "more.sysml", "a", encoding="utf-8") as f:
        f.write(f"requirement <'{rid}'> extra{len(text)} {{ doc /* {text} */ }}\n")


def error_line(r: subprocess.CompletedProcess[str]) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


# --------------------------------------------------------------------------- memnet ver


def test_all_covered_exits_0_and_lists_each_requirement_with_its_tests(project: Path) -> None:
    r = memnet("ver", cwd=project)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    heads = [ln.split()[:2] for ln in lines if ln.startswith("T-")]
    # natural id order, with the number of tests naming each
    assert heads == [["T-1", "4"], ["T-2", "3"], ["T-2.1", "1"], ["T-10", "4"]]
    assert any(ln.startswith("T-1 ") and "The first promise." in ln for ln in lines)
    text = r.stdout
    block = text[text.index("T-10 ") :]
    assert "tests/test_alpha.py: test_b ×3" in block
    assert "tests/ver/test_beta.py: TestGroup::test_d" in block
    assert "T-1 " in text and "tests/test_alpha.py: test_a, test_b ×3" in text
    assert "(no test)" not in text
    assert lines[-1].startswith(
        "total: 4 requirements, 4 with a test, 0 without; 6 of 7 tests name a requirement"
    )


def test_a_requirement_without_a_test_exits_1_naming_it(project: Path) -> None:
    add_requirement(project, "T-3", "Nobody tests this one.")
    r = memnet("ver", cwd=project)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert error_line(r) == "memnet: error: trace_failed: requirement T-3 has no test"
    assert "trace_failed" in CODES and TraceFailed.code == "trace_failed"
    after = r.stdout[r.stdout.index("T-3 ") :].splitlines()
    assert after[0].split()[:2] == ["T-3", "0"] and after[1].strip() == "(no test)"
    assert "1 without (T-3)" in r.stdout


def test_a_test_naming_an_unknown_id_exits_1_naming_test_and_id(project: Path) -> None:
    (project / "tests" / "test_gamma.py").write_text(
        "import pytest\n\n\n@pytest.mark.req('T-1', 'T-99')\ndef test_typo():\n    pass\n",
        encoding="utf-8",
    )
    r = memnet("ver", cwd=project)
    assert r.returncode == 1, (r.stdout, r.stderr)
    line = error_line(r)
    assert line.startswith("memnet: error: trace_failed: ")
    assert "tests/test_gamma.py::test_typo names unknown requirement 'T-99'" in line
    assert "unknown: tests/test_gamma.py::test_typo names unknown requirement 'T-99'" in r.stdout


def test_an_unmarked_mn_ver_test_exits_1(project: Path) -> None:
    (project / "tests" / "ver" / "test_delta.py").write_text(
        "def test_forgot_the_marker():\n    pass\n", encoding="utf-8"
    )
    r = memnet("ver", cwd=project)
    assert r.returncode == 1, (r.stdout, r.stderr)
    line = error_line(r)
    assert "tests/ver/test_delta.py::test_forgot_the_marker is an MN-VER test" in line
    assert "names no requirement" in line


def test_json_format_parses_and_has_the_keys(project: Path) -> None:
    add_requirement(project, "T-3", "Nobody tests this one.")
    r = memnet(
        "ver", "--format", "json", "--models", "sysml-models", "--tests", "tests", cwd=project
    )
    assert r.returncode == 1 and "T-3" in error_line(r)
    data = json.loads(r.stdout)
    assert {"requirements", "tests", "matrix", "missing", "unknown", "unmarked"} <= set(data)
    assert list(data["requirements"]) == ["T-1", "T-2", "T-2.1", "T-3", "T-10"]
    assert data["requirements"]["T-2.1"] == "A refinement of the second."
    assert data["missing"] == ["T-3"] and data["unknown"] == {} and data["unmarked"] == []
    assert data["matrix"]["T-2.1"] == ["tests/ver/test_beta.py::test_c"]
    assert data["matrix"]["T-2"] == [f"tests/test_alpha.py::test_b[{n}]" for n in (1, 2, 3)]
    assert data["tests"]["tests/test_plain.py::test_helper_without_a_requirement"] == []
    assert data["tests"]["tests/test_alpha.py::test_b[2]"] == ["T-1", "T-2", "T-10"]


def test_the_directories_can_be_given_from_elsewhere(project: Path, tmp_path: Path) -> None:
    r = memnet(
        "ver",
        "--models",
        str(project / "sysml-models"),
        "--tests",
        str(project / "tests"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    # a model outside the project does not move pytest's rootdir away from the tests
    (project / "sysml-models").rename(tmp_path / "models")
    r = memnet(
        "ver", "--models", "models", "--tests", "proj/tests", "--format", "json", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["missing"] == [] and "tests/ver/test_beta.py::test_c" in data["tests"]
    (tmp_path / "models").rename(project / "sysml-models")
    missing = memnet("ver", "--models", str(tmp_path / "nowhere"), cwd=project)
    assert missing.returncode == 1
    assert error_line(missing).startswith("memnet: error: path_not_found: ")
    no_tests = memnet("ver", "--tests", "nowhere", cwd=project)
    assert error_line(no_tests).startswith("memnet: error: path_not_found: ")


def test_a_broken_test_module_fails_the_trace(project: Path) -> None:
    (project / "tests" / "test_broken.py").write_text(
        "import no_such_module_here\n", encoding="utf-8"
    )
    r = memnet("ver", cwd=project)
    assert r.returncode == 1
    assert "could not collect tests/test_broken.py" in error_line(r)


def test_without_pytest_it_is_dependency_missing(project: Path) -> None:
    code = (
        "import sys; sys.modules['pytest'] = None\n"
        "from memnet.faces.cli import main\nraise SystemExit(main(['ver']))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        text=True,
        capture_output=True,
        env=env(),
        timeout=120,
        check=False,
    )
    assert r.returncode == 1
    assert error_line(r).startswith("memnet: error: dependency_missing: ")
    assert "pip install" in r.stderr


# --------------------------------------------------------------------------- into a session


def _verifies(s: Session) -> dict[tuple[str, str], dict[str, object]]:
    """(test file, requirement id) → properties of every live VERIFIES edge."""
    st = s.store
    out = {}
    for e in st.live_edge_ids():
        if st.edge_type(e) == "VERIFIES":
            src, dst = st.edge_ends(e)
            out[(str(st.node_props(src)["path"]), str(st.node_props(dst)["rid"]))] = dict(
                st.edge_props(e)
            )
    return out


def test_commit_writes_the_trace_into_a_session_and_a_recall_shows_it(project: Path) -> None:
    trace = ver.collect(project / "sysml-models", project / "tests")
    s = Session("trace")
    model, tests = ver.commit_trace(s, trace, project / "sysml-models")
    # the session held no requirement: the model was ingested first, then the tests
    assert model is not None and model.changed and tests.changed
    assert (model.version, tests.version) == (1, 2)
    assert tests.created == 2 and tests.links_added == 5  # two files, five (file, id) pairs
    assert _verifies(s) == {
        ("tests/test_alpha.py", "T-1"): {"tests": "test_a, test_b ×3", "cases": 4},
        ("tests/test_alpha.py", "T-2"): {"tests": "test_b ×3", "cases": 3},
        ("tests/test_alpha.py", "T-10"): {"tests": "test_b ×3", "cases": 3},
        ("tests/ver/test_beta.py", "T-2.1"): {"tests": "test_c", "cases": 1},
        ("tests/ver/test_beta.py", "T-10"): {"tests": "TestGroup::test_d", "cases": 1},
    }
    # which tests verify T-10? one Recall answers it
    shape = s.recall("REQ rid:T-10")
    assert shape.receipt.seed_mode == "match"
    assert "test:tests/test_alpha.py" in shape.text and "test:tests/ver/test_beta.py" in shape.text
    assert "VERIFIES {cases: 1, tests: 'TestGroup::test_d'}" in shape.text
    # again: nothing changes
    model, again = ver.commit_trace(s, trace, project / "sysml-models")
    assert model is None and not again.changed and s.version == 2
    # a test that stops naming T-1: only its link goes
    alpha = project / "tests" / "test_alpha.py"
    alpha.write_text(
        alpha.read_text(encoding="utf-8").replace("pytestmark = pytest.mark.req(ONE)", ""),
        encoding="utf-8",
    )
    _model, third = ver.commit_trace(
        s, ver.collect(project / "sysml-models", project / "tests"), project / "sysml-models"
    )
    assert (third.created, third.updated, third.recycled) == (0, 1, 0)  # alpha: 1 test, 3 cases
    assert (third.links_added, third.links_updated, third.links_removed) == (0, 0, 1)
    assert ("tests/test_alpha.py", "T-1") not in _verifies(s)
    assert _verifies(s)[("tests/test_alpha.py", "T-2")] == {"tests": "test_b ×3", "cases": 3}


def test_commit_links_to_the_requirements_wherever_the_session_holds_them(
    project: Path, tmp_path: Path
) -> None:
    s = Session("mixed")
    # the model came in with the whole project (another root): its nodes are used as they are
    ingest_path(s, project)
    before = s.store.live_count("REQ")
    trace = ver.collect(project / "sysml-models", project / "tests")
    model, tests = ver.commit_trace(s, trace, project / "sysml-models")
    assert model is None and s.store.live_count("REQ") == before == 4
    assert len(_verifies(s)) == 5
    # a trace whose collection failed writes nothing
    broken = ver.Trace(
        requirements=trace.requirements, tests=trace.tests, errors=["tests/test_gone.py"]
    )
    with pytest.raises(TraceFailed, match="nothing was written"):
        ver.commit_trace(s, broken, project / "sysml-models")
    assert s.version == tests.version


def test_memnet_ver_commit_writes_flushes_and_reports(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "cab"
    r = memnet("--home", str(home), "ver", "--commit", "mn", cwd=project)
    assert r.returncode == 1 and "session_not_found" in r.stderr  # the session must exist
    assert memnet("--home", str(home), "session", "create", "mn", cwd=project).returncode == 0
    r = memnet("--home", str(home), "ver", "--commit", "mn", cwd=project)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "traced into mn: version 2: +2 ~0 -0 elements, +5 ~0 -0 links"
    )
    r = memnet("--home", str(home), "ver", "--commit", "mn", "--format", "json", cwd=project)
    assert json.loads(r.stdout)["commit"]["changed"] is False
    out = memnet("--home", str(home), "recall", "mn", "REQ rid:T-2.1", cwd=project).stdout
    assert "test:tests/ver/test_beta.py" in out and "tests: 'test_c'" in out


# --------------------------------------------------------------------------- the plugin


def test_the_plugin_fails_a_whole_run_only(project: Path) -> None:
    add_requirement(project, "T-3", "Nobody tests this one.")
    whole = pytest_run("--collect-only", "-q", "-p", "memnet.ver", cwd=project)
    assert whole.returncode == pytest.ExitCode.USAGE_ERROR, whole.stdout
    assert "requirement T-3 has no test" in whole.stderr
    part = pytest_run("--collect-only", "-q", "-p", "memnet.ver", "tests/ver", cwd=project)
    assert part.returncode == 0, part.stderr
    one = pytest_run(
        "--collect-only", "-q", "-p", "memnet.ver", "tests/test_alpha.py::test_a", cwd=project
    )
    assert one.returncode == 0, one.stderr
    # -k deselects but still collects everything: the run stays whole
    k = pytest_run("--collect-only", "-q", "-p", "memnet.ver", "-k", "test_a", cwd=project)
    assert k.returncode == pytest.ExitCode.USAGE_ERROR
    forced = pytest_run(
        "--collect-only", "-q", "-p", "memnet.ver", "--memnet-ver", "tests/ver", cwd=project
    )
    assert forced.returncode == pytest.ExitCode.USAGE_ERROR
    assert "requirement T-1 has no test" in forced.stderr
    assert "requirement × test matrix" in forced.stdout


def test_the_plugin_refuses_unknown_ids_even_in_a_partial_run(project: Path) -> None:
    (project / "tests" / "test_gamma.py").write_text(
        "import pytest\n\n\n@pytest.mark.req('T-99')\ndef test_typo():\n    pass\n",
        encoding="utf-8",
    )
    r = pytest_run("--collect-only", "-q", "-p", "memnet.ver", "tests/test_gamma.py", cwd=project)
    assert r.returncode == pytest.ExitCode.USAGE_ERROR
    assert "tests/test_gamma.py::test_typo names unknown requirement 'T-99'" in r.stderr


def test_the_models_come_from_the_option_or_the_environment(project: Path) -> None:
    moved = project.parent / "elsewhere"
    (project / "sysml-models").rename(moved)
    # no model at all: the plugin stays quiet
    quiet = pytest_run("--collect-only", "-q", "-p", "memnet.ver", cwd=project)
    assert quiet.returncode == 0, quiet.stderr
    opt = pytest_run(
        "--collect-only", "-q", "-p", "memnet.ver", f"--memnet-models={moved}", cwd=project
    )
    assert opt.returncode == 0, opt.stderr
    (moved / "more.sysml").write_text(
        "requirement <'T-4'> four { doc /* Untested. */ }\n", encoding="utf-8"
    )
    opt = pytest_run(
        "--collect-only", "-q", "-p", "memnet.ver", f"--memnet-models={moved}", cwd=project
    )
    assert opt.returncode == pytest.ExitCode.USAGE_ERROR
    assert "requirement T-4 has no test" in opt.stderr
    by_env = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "memnet.ver"],
        cwd=project,
        text=True,
        capture_output=True,
        env={**env(), ver.ENV_MODELS: str(moved)},
        timeout=300,
        check=False,
    )
    assert by_env.returncode == pytest.ExitCode.USAGE_ERROR
    assert "requirement T-4 has no test" in by_env.stderr
    wrong = pytest_run(
        "--collect-only", "-q", "-p", "memnet.ver", "--memnet-models=no-such-dir", cwd=project
    )
    assert wrong.returncode == pytest.ExitCode.USAGE_ERROR and "no-such-dir" in wrong.stderr


# --------------------------------------------------------------------------- this repository


def test_the_repository_requirements_are_those_of_the_model(pytestconfig: pytest.Config) -> None:
    from_file = load_requirements(ROOT / "sysml-models" / "models" / "requirements.sysml")
    models = ver.default_models(ROOT)
    assert models == ROOT / "sysml-models"
    assert ver.load_model(models) == from_file
    assert {f"MN-REQ-{n:02d}" for n in range(23)} | {
        "MN-REQ-00.1",
        "MN-REQ-06.1",
        "MN-REQ-13.1",
        "MN-REQ-14.1",
        "MN-REQ-14.2",
        "MN-REQ-14.3",
    } == set(from_file)
    assert not (ROOT / "tests" / "requirements.py").exists()
    # when this run uses the default model, the plugin checked against exactly these ids
    if (
        pytestconfig.pluginmanager.get_plugin("memnet.ver") is not None
        and not pytestconfig.getoption("memnet_models")
        and not os.environ.get(ver.ENV_MODELS)
    ):
        assert ver.requirements_of(pytestconfig) == from_file


def test_a_partial_run_of_this_repository_does_not_fail_for_coverage() -> None:
    part = pytest_run("--collect-only", "-q", "tests/gql", cwd=ROOT)
    assert part.returncode == 0, part.stdout + part.stderr
    assert "has no test" not in part.stdout + part.stderr
    # the same collection counted as whole does check coverage
    forced = pytest_run("--collect-only", "-q", "--memnet-ver", "tests/gql", cwd=ROOT)
    assert forced.returncode == pytest.ExitCode.USAGE_ERROR
    assert "requirement MN-REQ-16 has no test" in forced.stderr


# --------------------------------------------------------------------------- the library


def test_natural_id_order() -> None:
    ids = [
        "MN-REQ-14.1",
        "MN-REQ-2",
        "MN-REQ-13.1",
        "MN-REQ-14",
        "MN-REQ-13",
        "MN-REQ-00",
        "MN-REQ-14.10",
        "MN-REQ-14.2",
        "MN-REQ-21",
    ]
    assert sorted(ids, key=ver.id_key) == [
        "MN-REQ-00",
        "MN-REQ-2",
        "MN-REQ-13",
        "MN-REQ-13.1",
        "MN-REQ-14",
        "MN-REQ-14.1",
        "MN-REQ-14.2",
        "MN-REQ-14.10",
        "MN-REQ-21",
    ]


def test_trace_round_trips_and_formats() -> None:
    trace = ver.build_trace(
        {"R-1": "one " * 40, "R-2": "two", "R-1.1": "sub"},
        [
            ("a.py::t[1]", False, ["R-1"]),
            ("a.py::t[2]", False, ["R-1", "R-1"]),
            ("ver/b.py::u", True, []),
            ("c.py::v", False, ["R-9", "R-2"]),
        ],
    )
    assert trace.tests["a.py::t[2]"] == ["R-1"]
    assert trace.unknown == {"c.py::v": ["R-9"]} and trace.unmarked == ["ver/b.py::u"]
    assert trace.missing == ["R-1.1"] and not trace.ok
    assert list(trace.matrix) == ["R-1", "R-1.1", "R-2"]
    again = ver.Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again.to_dict() == trace.to_dict()
    text = ver.format_matrix(trace, width=70)
    assert all(len(ln) <= 70 for ln in text.splitlines() if not ln.startswith("total"))
    assert "a.py: t ×2" in text and "…" in text
    assert trace.summary().startswith("c.py::v names unknown requirement 'R-9'; ver/b.py::u")
    assert trace.summary().endswith("requirement R-1.1 has no test")


@pytest.mark.req("MN-REQ-15")
def test_collect_refuses_arguments_it_cannot_use(tmp_path: Path) -> None:
    from memnet.errors import MemNetError

    (tmp_path / "models").mkdir()
    (tmp_path / "tests").mkdir()
    m, t = tmp_path / "models", tmp_path / "tests"
    for call, code in (
        (lambda: ver.collect(None, t), "path_not_found"),
        (lambda: ver.collect("mod\x00els", t), "path_not_found"),
        (lambda: ver.collect(m, t, timeout=float("nan")), "invalid_argument"),
        (lambda: ver.collect(m, t, timeout="x"), "invalid_argument"),
        (lambda: ver.collect(m, t, python=str(tmp_path / "no-python")), "path_not_found"),
    ):
        with pytest.raises(MemNetError) as e:
            call()
        assert e.value.code == code
