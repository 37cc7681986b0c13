"""The memnet CLI as a user runs it: a real subprocess on a real LMDB cabinet (the table
of error paths goes through `main(argv)` in-process; its codes are the same)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the console script pip installed beside this interpreter (pip install -e .)
SCRIPT = Path(sys.executable).with_name("memnet")


def run(*args: str, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.exists(), (
        f"the memnet command is not installed beside {sys.executable}: pip install -e '.[dev]'"
    )
    env = dict(os.environ, MEMNET_HOME=str(home))
    return subprocess.run(
        [str(SCRIPT), *args], input=stdin, text=True, capture_output=True, env=env, timeout=120
    )


@pytest.mark.req("MN-REQ-13.1", "MN-REQ-13")
def test_demo_persists_between_processes(tmp_path):
    first = run("demo", home=tmp_path / "cab")
    assert first.returncode == 0, first.stderr
    assert "created session 'demo'" in first.stdout
    assert "holds_answer=true" in first.stdout
    second = run("demo", home=tmp_path / "cab")
    assert second.returncode == 0, second.stderr
    assert "is in the cabinet at version 1" in second.stdout
    # the Shape text printed by both runs is the same bytes
    shape1 = first.stdout.split("# recall", 1)[1].split("# receipt")[0]
    shape2 = second.stdout.split("# recall", 1)[1].split("# receipt")[0]
    assert shape1 == shape2


@pytest.mark.req("MN-REQ-13", "MN-REQ-15")
def test_commit_then_recall_in_the_next_process(tmp_path):
    home = tmp_path / "cab"
    assert run("session", "create", "work", home=home).returncode == 0
    c = run(
        "commit",
        "work",
        "-",
        home=home,
        stdin="INSERT (t:TSK {title: 'Ship the CLI', status: 'open'})",
    )
    assert c.returncode == 0, c.stderr
    out = json.loads(c.stdout)
    handle = out["ids"]["t"]
    r = run("recall", "work", "TSK status:open", "--format", "json", home=home)
    assert r.returncode == 0, r.stderr
    shape = json.loads(r.stdout)
    assert shape["receipt"]["seeds"] == [handle]
    assert "Ship the CLI" in shape["text"]


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
def test_errors_exit_1_with_code_on_stderr(tmp_path):
    home = tmp_path / "cab"
    r = run("recall", "nosuch", home=home)
    assert r.returncode == 1
    assert r.stderr.strip().startswith("memnet: error: session_not_found:")
    assert run("session", "create", "s", home=home).returncode == 0
    bad = run("commit", "s", "-", home=home, stdin="INSERT (t:TSK {title: 'x'")
    assert bad.returncode == 1 and "gql_syntax" in bad.stderr
    usage = run("recall", home=home)
    assert usage.returncode == 2


@pytest.mark.req("MN-REQ-15")
def test_every_command_has_help():
    from memnet.faces.cli import build_parser

    parser = build_parser()
    seen = []

    def walk(p, path):
        for action in p._actions:
            if action.__class__.__name__ == "_SubParsersAction":
                for name, sub in action.choices.items():
                    assert sub.description, f"{' '.join(path + [name])} has no description"
                    seen.append(" ".join(path + [name]))
                    walk(sub, path + [name])
            elif action.dest not in ("help",) and action.option_strings:
                assert action.help, f"{path} {action.option_strings} has no help"

    walk(parser, [])
    assert "demo" in seen and "recall" in seen and "session create" in seen


@pytest.mark.req("MN-REQ-15", "MN-REQ-19")
@pytest.mark.parametrize(
    "args,stdin,code",
    [
        (("session", "create", "Bad/Id"), None, "invalid_session_id"),
        (("session", "create", "s"), None, "session_exists"),
        (("recall", "nosuch"), None, "session_not_found"),
        (("session", "drop", "nosuch"), None, "session_not_found"),
        (("session", "log", "nosuch"), None, "session_not_found"),
        (("commit", "s", "-"), "INSERT (t:TSK {title: 'x'", "gql_syntax"),
        (("commit", "s", "-"), "SET task9.title = 'x'", "commit_rejected"),
        (("commit", "s", "-"), "INSERT (na1:TSK {title: 'echo'})", "echo_refused"),
        (("commit", "s", "-"), "SET na1.n = 99999999999999999999", "commit_rejected"),
        (("commit", "s", "-"), "SET a.x = '" + "x" * (4 * 1024 * 1024) + "'", "input_too_large"),
        (("recall", "s", "TSK", "--hops", "99"), None, "bad_query"),
        (("recall", "s", "TSK", "--view", "shell", "--rows", "0"), None, "bad_query"),
        (("recall", "s", "TSK", "--at", "42"), None, "version_not_found"),
        (("recall", "s", "MATCH (n:TSK) LIMIT 0"), None, "gql_syntax"),
    ],
)
def test_every_error_path_exits_1_with_its_code(tmp_path, monkeypatch, capsys, args, stdin, code):
    # in-process through main(argv): the exit status and the one stderr line are
    # what is checked; the tests around this one run the real command
    import io

    from memnet.faces.cli import main

    def call(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        rc = main(["--home", str(tmp_path / "cab"), *argv])
        out, err = capsys.readouterr()
        return rc, out, err

    assert call("session", "create", "s")[0] == 0
    assert call("commit", "s", "-", stdin="INSERT (t:TSK {title: 'there'})")[0] == 0
    rc, out, err = call(*args, stdin=stdin)
    assert rc == 1, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"memnet: error: {code}:"), err
    # a refused commit changed nothing
    rc, log, _ = call("session", "log", "s", "--format", "json")
    assert rc == 0 and len(json.loads(log)) == 1
