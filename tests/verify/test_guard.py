"""The verdict out of the code's reach: which runner-steering files are restored, which
results are rejected, and that nothing of a test run outlives it (unit, real git and
real processes, no Docker)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.grader.containment.agent import script
from harness.grader.containment.catalogue import Attack, load_attacks
from harness.grader.containment.control import expectations, token_processes
from harness.verify import outcome as results
from harness.verify.guard import target_scopes
from harness.verify.isolation import test_user
from harness.verify.isolation.held_names import pytest_names, reject, rejection
from harness.verify.isolation.restore import (
    blob_id,
    go_redirects,
    pytest_section,
    restore_runner_files,
    to_restore,
    why_runner_file,
)
from harness.verify.isolation.test_user import TestUser, run_reaped
from harness.verify.outcome import TargetResult
from tests.conftest import make_repo

pytestmark = pytest.mark.unit


def paths(items: list) -> list[str]:  # type: ignore[type-arg]
    return [i.path for i in items]


def test_runner_files_are_told_from_code() -> None:
    py = ["test_hidden_calc"]
    assert why_runner_file("conftest.py", "pytest", py)
    assert why_runner_file("sub/deep/conftest.py", "pytest", py)
    assert why_runner_file("forge-1.0.dist-info/entry_points.txt", "pytest", py)
    assert why_runner_file("x.pth", "pytest", py) and why_runner_file("pytest.py", "pytest", py)
    assert why_runner_file("test_hidden_calc/test_extra.py", "pytest", py)
    assert why_runner_file("calc/__init__.py", "pytest", py) is None  # the agent's code
    assert why_runner_file("calc/test_own.py", "pytest", py) is None  # outside the tests' scope
    go = ["mathx"]
    assert why_runner_file("mathx/zz_main_test.go", "go", go)
    assert why_runner_file("vendor/modules.txt", "go", go) and why_runner_file("go.work", "go", go)
    assert why_runner_file("mathx/testdata/golden.txt", "go", go)
    assert why_runner_file("mathx/mathx.go", "go", go) is None
    assert why_runner_file("other/x_test.go", "go", go) is None


def test_to_restore_added_changed_deleted_allowed() -> None:
    base = {"pytest.ini": "a", "calc/__init__.py": "b", "tox.ini": "c"}
    tree = {"pytest.ini": "A", "calc/__init__.py": "B", "conftest.py": "d"}  # tox.ini deleted
    got = to_restore(tree, base, "pytest", ["tests"])
    assert [(r.path, r.action) for r in got] == [
        ("conftest.py", "removed"),
        ("pytest.ini", "restored"),
        ("tox.ini", "restored"),
    ]
    assert paths(to_restore(tree, base, "pytest", ["tests"], ["conftest.py", "*.ini"])) == []
    kept = to_restore(tree, base, "pytest", ["tests"], same_settings={"pytest.ini": True})
    assert "pytest.ini" not in paths(kept)


def test_go_mod_counts_only_its_redirects() -> None:
    base = "module example.com/m\n\ngo 1.21\n\nrequire golang.org/x/y v1.0.0\n"
    block = base + "replace (\n\tgolang.org/x/y => ./y // local\n)\n"
    assert go_redirects(base) == ["module example.com/m"]
    assert "replace golang.org/x/y => ./y" in go_redirects(block)
    assert go_redirects(base.replace("v1.0.0", "v1.1.0")) == go_redirects(base)
    assert paths(to_restore({"go.mod": "x"}, {"go.mod": "y"}, "go", ["."])) == ["go.mod"]


def test_pytest_sections_compare_settings_not_text() -> None:
    plain = '[project]\nname = "calc"\n'
    assert pytest_section("pyproject.toml", plain) is None
    assert pytest_section("pyproject.toml", plain + 'version = "2"\n') is None
    added = plain + '[tool.pytest.ini_options]\naddopts = "-p forge"\n'
    assert pytest_section("pyproject.toml", added) is not None
    assert pytest_section("setup.cfg", "[metadata]\nname = x\n") is None
    assert pytest_section("setup.cfg", "[tool:pytest]\naddopts = -p x\n") is not None
    assert pytest_section("tox.ini", "[pytest\n") == "raw:[pytest\n"  # unparsable: any change


def test_restore_on_disk_with_real_git(tmp_path: Path) -> None:
    repo, sha = make_repo(
        tmp_path / "r",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "setup.cfg": "[tool:pytest]\naddopts = -q\n",
            "calc/__init__.py": "x = 1\n",
            "tests/conftest.py": "# baseline conftest\n",
        },
    )
    (repo / "conftest.py").write_text("import forged\n")
    (repo / "tests" / "conftest.py").write_text("# changed\n")
    with (repo / "pyproject.toml").open("a") as fh:
        fh.write('version = "0.2"\n')  # no pytest settings: the agent's edit stays
    (repo / "setup.cfg").unlink()
    (repo / "setup.cfg").symlink_to("/etc/passwd")
    (repo / "calc" / "__init__.py").write_text("x = 2\n")
    (repo / "x.pth").write_text("import forged\n")
    done = restore_runner_files(repo, sha, "pytest", ["tests"], [])
    assert sorted(paths(done)) == ["conftest.py", "setup.cfg", "tests/conftest.py", "x.pth"]
    assert not (repo / "conftest.py").exists() and not (repo / "x.pth").exists()
    assert (repo / "tests" / "conftest.py").read_text() == "# baseline conftest\n"
    assert not (repo / "setup.cfg").is_symlink()
    assert (repo / "setup.cfg").read_text().startswith("[tool:pytest]")
    assert "0.2" in (repo / "pyproject.toml").read_text()
    assert (repo / "calc" / "__init__.py").read_text() == "x = 2\n"


def test_blob_id_is_gits(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"hello\n")
    out = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True)
    assert blob_id(b"hello\n") == out.stdout.decode().strip()


def case(name: str, passed: bool = True) -> results.TestCase:
    return results.TestCase(name=name, passed=passed)


def test_results_naming_unheld_tests_are_rejected() -> None:
    held = pytest_names(
        "import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_a(x): pass\n\n"
        "class TestB:\n    def test_m(self): pass\n"
    )
    fine = TargetResult(
        target="t",
        kind="required",
        tests=[case("tests.test_x::test_a[1]"), case("tests.test_x.TestB::test_m")],
    )
    assert rejection(fine, held, "pytest") is None
    forged = fine.model_copy(update={"tests": [*fine.tests, case("tests.test_x::test_bonus")]})
    why = rejection(forged, held, "pytest")
    assert why is not None and "test_bonus" in why
    twice = fine.model_copy(update={"tests": [case("m::test_a[1]"), case("m::test_a[1]")]})
    assert "more often" in (rejection(twice, held, "pytest") or "")
    go = TargetResult(target="./m", kind="required", tests=[case("TestAbs/sub")])
    assert rejection(go, {"TestAbs"}, "go") is None
    assert rejection(go, {"TestOther"}, "go") is not None
    out = reject(forged, why)
    assert out.ok is False and out.passed == 0 and out.error and out.error.startswith("rejected")


def test_target_scopes(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    assert target_scopes("pytest", "tests/test_a.py::test_x -k y", tmp_path) == ["tests"]
    assert target_scopes("pytest", "tests", tmp_path) == ["tests"]
    assert target_scopes("go", "./mathx -run 'TestAbs'", tmp_path) == ["mathx"]
    assert target_scopes("go", "./...", tmp_path) == ["."]
    assert target_scopes("go", "./pkg/...", tmp_path) == ["pkg"]


def test_nothing_of_a_test_run_outlives_it(tmp_path: Path) -> None:
    token = "harness-token-" + secrets.token_hex(6)
    daemon = f"(setsid sh -c 'sleep 60; echo {token}' &) ; (sleep 60 # {token}\n) & echo started"
    began = time.monotonic()
    ran = run_reaped(["sh", "-c", daemon], tmp_path, dict(os.environ), 30, None)
    assert "started" in ran.output and ran.returncode == 0
    assert ran.killed >= 2 and time.monotonic() - began < 20
    assert token_processes(token) == []


def test_a_test_run_that_hangs_is_killed(tmp_path: Path) -> None:
    ran = run_reaped(["sh", "-c", "sleep 60"], tmp_path, dict(os.environ), 1, None)
    assert ran.returncode is None and "timed out" in ran.output


def test_a_test_run_that_writes_without_end_is_kept_to_a_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(test_user, "OUTPUT_KEEP", 4096)
    flood = "head -c 3000000 /dev/zero | tr '\\0' x; echo done >&2"
    ran = run_reaped(["sh", "-c", flood], tmp_path, dict(os.environ), 30, None)
    assert ran.returncode == 0 and "done" in ran.output  # stderr read to its end too
    assert ran.output.startswith("x" * 4096) and ran.output.count("x") == 4096
    assert f"cut after 4096 bytes ({3000000 - 4096} more)" in ran.output


@pytest.mark.skipif(os.geteuid() != 0, reason="switching user needs root")
def test_tests_run_as_their_own_user(tmp_path: Path) -> None:
    mine = tmp_path / "outcome.json"
    mine.write_text("{}")
    probe = (
        "import os\nprint(os.getuid())\n"
        f"try:\n    open({str(mine)!r}, 'w').write('forged')\n"
        "except OSError:\n    print('denied')\n"
    )
    tmp_path.chmod(0o755)
    ran = run_reaped(
        [sys.executable, "-c", probe], tmp_path, dict(os.environ), 30, TestUser(61001, True)
    )
    assert "61001" in ran.output and "denied" in ran.output
    assert mine.read_text() == "{}"


def test_the_catalogue_loads_and_plays_in_the_sandbox() -> None:
    attacks = load_attacks()
    assert len(attacks) >= 13 and all(a.name.startswith(("verdict-", "host-")) for a in attacks)
    attack = Attack.model_validate(
        {
            "name": "x",
            "owner": "t",
            "about": "a",
            "scenario": "smoke/py-fast",
            "plant": {
                "a/b.py": {"content": "M={token}\n", "mode": "0o755"},
                "l": {"symlink": "{host_secret}"},
                "p": {"fifo": True},
                "s": {"sparse": 10},
            },
            "run": "echo {token}",
        }
    )
    text = script(attack, {"token": "TOK", "host_secret": "/h/s"})
    assert "base64 -d > a/b.py" in text and "chmod 755 a/b.py" in text
    assert "ln -s /h/s l" in text and "mkfifo p" in text and "truncate -s 10 s" in text
    assert text.rstrip().endswith("echo TOK")


def test_expectations_name_what_differs() -> None:
    attack = Attack.model_validate(
        {
            "name": "x",
            "owner": "t",
            "about": "a",
            "scenario": "s",
            "expect": {"score": 0.5, "restored": ["conftest.py"], "rejected": True},
        }
    )
    good = {
        "score": 0.5,
        "containment": {"restored": ["conftest.py (hook: removed)"], "rejected": ["t: why"]},
    }
    assert expectations(attack, "failed", good) == []
    bad = expectations(attack, "success", {"score": 1.0, "containment": {}})
    assert len(bad) == 4 and bad[0].startswith("verdict success")


def test_without_root_nobody_else_runs_the_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.verify.isolation import test_user

    monkeypatch.setattr(test_user.os, "geteuid", lambda: 1000)
    assert test_user.effective_user(61001, True) is None
    assert test_user.statement(None).startswith("NOT enforced")
    monkeypatch.setattr(test_user.os, "geteuid", lambda: 0)
    assert test_user.effective_user(61001, False) == TestUser(61001, False)
    assert test_user.effective_user(None, False) is None
    assert test_user.statement(TestUser(10001)).startswith("enforced: tests ran as uid 10001")
