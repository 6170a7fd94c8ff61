"""The reference's outcome, measured before the agent's code runs (verify/reference.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.verify.outcome import TargetResult
from harness.verify.outcome import TestCase as Case
from harness.verify.reference import (
    CopyHidden,
    Reference,
    build_tree,
    measure,
    reference_failure,
    request_hidden,
)
from harness.verify.request import VerifyRequest
from tests.conftest import git, make_repo

pytestmark = pytest.mark.integration  # real git

BROKEN = "def clamp(v, lo, hi):\n    return v\n"
FIXED = "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n"


def scenario(tmp_path: Path) -> tuple[Path, VerifyRequest]:
    """An agent's tree (its baseline broken), a patch fixing it, hidden tests to copy."""
    tree, sha = make_repo(tmp_path / "tree", {"calc.py": BROKEN})
    (tree / "calc.py").write_text(FIXED)
    patch = tmp_path / "solution.patch"
    patch.write_text(git(["diff"], tree) + "\n")
    (tree / "calc.py").write_text("agent's work\n")  # the reference never sees it
    hidden = tmp_path / "scenario" / "hidden" / "tests"
    hidden.mkdir(parents=True)
    (hidden / "test_calc.py").write_text("from calc import clamp\n")
    request = VerifyRequest.model_validate(
        {
            "scenario": "s", "baseline": sha, "seed": "1", "runner": "pytest",
            "hidden_root": str(tmp_path / "scenario"), "solution_file": str(patch),
            "copy": [{"from": "hidden/tests", "to": "tests"}],
        }
    )  # fmt: skip
    return tree, request


def copier(request: VerifyRequest) -> CopyHidden:
    def copy(dest: Path) -> list[str]:
        src = Path(request.hidden_root) / "hidden" / "tests" / "test_calc.py"
        (dest / "tests").mkdir(exist_ok=True)
        (dest / "tests" / "test_calc.py").write_text(src.read_text())
        return ["tests/test_calc.py"]

    return copy


def test_the_reference_tree_is_the_baseline_the_solution_and_the_hidden_tests(
    tmp_path: Path,
) -> None:
    tree, request = scenario(tmp_path)
    dest = tmp_path / "ref"
    build_tree(tree, request, dest, copier(request))
    assert (dest / "calc.py").read_text() == FIXED
    assert (dest / "tests" / "test_calc.py").read_text() == "from calc import clamp\n"


def test_a_solution_folder_is_copied_over_the_baseline(tmp_path: Path) -> None:
    tree, request = scenario(tmp_path)
    folder = tmp_path / "solution"
    folder.mkdir()
    (folder / "calc.py").write_text(FIXED)
    request = request.model_copy(update={"solution_file": str(folder)})
    dest = tmp_path / "ref"
    build_tree(tree, request, dest, copier(request))
    assert (dest / "calc.py").read_text() == FIXED


def test_a_solution_that_does_not_apply_or_is_missing_is_the_scenarios_fault(
    tmp_path: Path,
) -> None:
    tree, request = scenario(tmp_path)
    Path(request.solution_file or "").write_text(
        "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n"
    )
    with pytest.raises(InfraError, match="does not apply to the baseline"):
        build_tree(tree, request, tmp_path / "ref", copier(request))
    gone = request.model_copy(update={"solution_file": str(tmp_path / "gone.patch")})
    with pytest.raises(InfraError, match="solution is missing"):
        build_tree(tree, gone, tmp_path / "ref2", copier(gone))


def result(target: str, *cases: Case, ok: bool | None = None) -> TargetResult:
    return TargetResult(target=target, kind="required", tests=list(cases), ok=ok)


def test_measure_keeps_what_passed_and_what_the_twins_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, request = scenario(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    runs: list[tuple[str, str, str]] = []

    def run_one(target: str, kind: str, base: Path) -> TargetResult:
        runs.append((target, kind, (base / "calc.py").read_text()))
        twin = (base / "twin").exists()
        return result(
            target,
            Case(name="a", passed=not twin),
            Case(name="b", passed=True),
            Case(name="c", passed=False),
            Case(name="build", passed=not twin, synthetic=True),  # no test: never counted
            ok=not twin or None,
        )

    def twins(base: Path) -> bool:
        (base / "twin").write_text("")
        return True

    got = measure(
        tree, request, [("t1", "required"), ("t2", "partial")], run_one,
        copier(request), None, twins,
    )  # fmt: skip
    assert got.passed == {"t1": ["a", "b"], "t2": ["a", "b"]}
    assert got.twin_failed == {"t1": ["a", "c"], "t2": ["a", "c"]}
    assert got.expected("t1") == {"a", "b"} and got.expected("t3") is None
    assert "before the agent's code ran" in got.note
    assert [r[:2] for r in runs] == [("t1", "required"), ("t2", "partial")] * 2
    assert all(r[2] == FIXED for r in runs)  # the reference's tree, never the agent's
    assert list(scratch.iterdir()) == []  # the reference tree is removed


def test_measure_without_twins_or_targets_or_solution(tmp_path: Path) -> None:
    tree, request = scenario(tmp_path)

    def run_one(target: str, kind: str, base: Path) -> TargetResult:
        return result(target, Case(name="a", passed=True))

    copy = copier(request)
    got = measure(tree, request, [("t", "required")], run_one, copy, None)
    assert got.passed == {"t": ["a"]} and got.twin_failed == {}
    assert measure(tree, request, [], run_one, copy, None) == Reference()
    none = request.model_copy(update={"solution_file": None})
    alone = measure(tree, none, [("t", "required")], run_one, copy, None)
    assert alone.passed == {} and "no reference solution" in alone.note


def test_the_reference_failing_a_required_target_is_the_environments(tmp_path: Path) -> None:
    tree, request = scenario(tmp_path)

    def run_one(target: str, kind: str, base: Path) -> TargetResult:
        return result(target, Case(name="a", passed=False, error="ImportError", output="no\nmod"))

    with pytest.raises(InfraError, match="fails required target t "):
        measure(tree, request, [("t", "required")], run_one, copier(request), None)
    # a partial target the reference fails is only recorded
    got = measure(tree, request, [("p", "partial")], run_one, copier(request), None)
    assert got.passed == {"p": []}


def test_the_reference_failure_says_why_in_one_line() -> None:
    ran = result("t", Case(name="a", passed=False, error="ImportError", output="no\n  module"))
    why = reference_failure("t", ran)
    assert "required target t" in why and "(ImportError: no module)" in why
    env = TargetResult(target="t", kind="required", env_error="go not found", error="x")
    assert "(go not found)" in reference_failure("t", env)
    assert "(failed)" in reference_failure("t", TargetResult(target="t", kind="required"))
    long = result("t", Case(name="a", passed=False, error="E", output="x" * 1000))
    assert len(reference_failure("t", long)) < 450


def test_the_hidden_files_places_in_the_tree(tmp_path: Path) -> None:
    _, request = scenario(tmp_path)
    dest = tmp_path / "ref"
    dest.mkdir()
    assert request_hidden(request, dest) == ["tests/test_calc.py"]
    outside = request.model_copy(
        update={"copy_": [*request.copy_, request.copy_[0].model_copy(update={"to": "../x"})]}
    )
    assert request_hidden(outside, dest) == ["tests/test_calc.py"]  # refused, left out
