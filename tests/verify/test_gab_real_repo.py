"""goagentbench's own repository and its own ``smoke/easy_success``, offline: the verdicts
goagentbench gives (issue 50).

The repository (``tests/fixtures/goagentbench/goagentbench.bundle``, goagentbench's
history up to 77dcbfd) carries the real go.mod and go.sum: go 1.24.4 and third-party
modules that no cache here holds. The scenario file and its hidden test are read from
that repository, unchanged. With no module proxy (``GOPROXY=off``), a test of a package
the main module lacks makes go load the whole module graph and fail with "module lookup
disabled" on some unrelated module: that must not turn goagentbench's failure (the
must-modify rule already failed, or the package was never written) into ``error``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLI, git
from tests.support.cache import own_cache

pytestmark = pytest.mark.integration

BUNDLE = Path(__file__).resolve().parents[1] / "fixtures" / "goagentbench" / "goagentbench.bundle"
SCENARIO = "testdata/smoke/easy_success"
COMMIT = "ef870776d6eb5a24690accf00617f8dad7fb0d48"  # smoke/easy_success's commit
AGENT = """
  - name: patcher
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:PatchAgent
"""
RIGHT = """package sorting

// IsSorted reports whether nums is in non-decreasing order.
func IsSorted(nums []int) bool {
\tfor i := 1; i < len(nums); i++ {
\t\tif nums[i] < nums[i-1] {
\t\t\treturn false
\t\t}
\t}
\treturn true
}
"""
OWN_TEST = """package sorting

import "testing"

func TestAgentsOwn(t *testing.T) { t.Fatal("the agent's own test fails") }
"""
WRONG = RIGHT.replace("nums[i] < nums[i-1]", "nums[i] <= nums[i-1]")


def _patch(project: Path, mirror: Path, name: str, files: dict[str, str]) -> Path:
    work = project / f"work-{name}"
    git(["clone", "-q", str(mirror), str(work)], project)
    git(["checkout", "-q", COMMIT], work)
    for rel, body in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(body)
    git(["add", "-A"], work)
    out = project / f"{name}.patch"
    out.write_text(git(["diff", "--cached"], work) + "\n")
    return out


@pytest.fixture
def real(project: Path, tmp_path: Path) -> dict[str, Path]:
    repos = tmp_path / "repos"
    mirror = repos / "github.com" / "codalotl" / "goagentbench.git"
    mirror.parent.mkdir(parents=True)
    subprocess.run(
        ["git", "clone", "-q", "--mirror", str(BUNDLE), str(mirror)], check=True, timeout=120
    )
    folder = project / "scenarios" / "smoke" / "easy_success"
    folder.mkdir(parents=True)
    for name in ("scenario.yml", "gab_sorted_partial_test.go"):
        text = git(["show", f"main:{SCENARIO}/{name}"], mirror)
        (folder / name).write_text(text if text.endswith("\n") else text + "\n")
    assert "version:" not in (folder / "scenario.yml").read_text()  # goagentbench's own file
    with (project / "agents.yml").open("a") as fh:
        fh.write(AGENT)
    return {
        "repos": repos,
        "cache": own_cache(tmp_path),
        "right": _patch(project, mirror, "right", {"internal/sorting/sorting.go": RIGHT}),
        "wrong": _patch(project, mirror, "wrong", {"internal/sorting/sorting.go": WRONG}),
        "sub": _patch(project, mirror, "sub", {"internal/sorting/impl/sorting.go": RIGHT}),
        "notes": _patch(project, mirror, "notes", {"internal/sorting/NOTES.md": "todo\n"}),
        "own-test": _patch(
            project,
            mirror,
            "own-test",
            {"internal/sorting/sorting.go": RIGHT, "internal/sorting/own_test.go": OWN_TEST},
        ),
    }


def _run(cli: CLI, real: dict[str, Path], answer: str, *sandbox: str, commit: bool = False) -> Any:
    env = {
        "GOPROXY": "off",
        "GOSUMDB": "off",
        "HARNESS_CACHE_DIR": str(real["cache"]),
        "HARNESS_REPO_CACHE": str(real["repos"]),
    }
    if answer == "none":
        agent = ["--agent", "nop"]
    else:
        agent = ["--agent", "patcher"]
        env["HARNESS_TEST_PATCH"] = str(real[answer])
    if commit:
        env["HARNESS_TEST_PATCH_COMMIT"] = "1"
    return cli("exec", "smoke/easy_success", *agent, *sandbox, env=env)


def _report(project: Path) -> dict[str, Any]:
    runs = sorted((project / "results" / "smoke" / "easy_success").iterdir())
    return dict(json.loads((runs[-1] / "verify" / "report.json").read_text()))


@pytest.mark.parametrize(
    ("answer", "code", "outcome"),
    [
        ("none", 1, "failed"),  # must-modify fails: goagentbench runs no test
        ("sub", 1, "failed"),  # internal/sorting/impl is not internal/sorting
        ("notes", 1, "failed"),  # the rule holds, the package was never written
        ("wrong", 1, "failed"),
        ("right", 0, "success"),
    ],
)
def test_smoke_easy_success_on_the_real_repository_offline_local(
    project: Path, real: dict[str, Path], cli: CLI, answer: str, code: int, outcome: str
) -> None:
    done = _run(cli, real, answer, "--sandbox", "local")
    assert done.returncode == code, done.stdout + done.stderr
    report = _report(project)
    assert report["outcome"] == outcome
    assert report.get("error") is None
    rules_ok = all(r["ok"] for r in report["rules"])
    assert rules_ok == (answer not in ("none", "sub"))


@pytest.mark.docker
@pytest.mark.parametrize("answer", ["none", "sub"])
def test_smoke_easy_success_no_change_and_sub_folder_fail_in_docker(
    project: Path, real: dict[str, Path], cli: CLI, answer: str
) -> None:
    done = _run(cli, real, answer)
    assert done.returncode == 1, done.stdout + done.stderr
    report = _report(project)
    assert report["outcome"] == "failed" and report.get("error") is None
    assert not all(r["ok"] for r in report["rules"])


# Deliberate differences (docs/GOAGENTBENCH.md, "Where harness decides otherwise").


def test_an_agent_s_own_test_file_in_a_tested_package_is_removed_not_run(
    project: Path, real: dict[str, Path], cli: CLI
) -> None:
    """goagentbench runs the agent's failing own_test.go and fails; harness removes a
    test file the agent added to a tested package (it could steer the run: a TestMain,
    an init) and grades the hidden tests: success, with the removal in the report."""
    done = _run(cli, real, "own-test", "--sandbox", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(project)
    assert report["outcome"] == "success"
    assert "internal/sorting/own_test.go" in json.dumps(report["containment"]["restored"])


def test_a_committed_answer_counts(project: Path, real: dict[str, Path], cli: CLI) -> None:
    """goagentbench diffs against HEAD and sees no change in a committed answer (fails);
    harness diffs against the scenario's commit, so an agent that commits (aider does by
    default) is graded on its work."""
    done = _run(cli, real, "right", "--sandbox", "local", commit=True)
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(project)
    assert report["outcome"] == "success"
    assert "internal/sorting/sorting.go" in report["changed_files"]
