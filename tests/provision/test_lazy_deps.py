"""Dependencies prepared lazily: setup prepares what it can and goes on when the module
proxy or the package index cannot be reached; verification is ``error`` only when a build
really needs what is missing.

The Go case is shaped like goagentbench's smoke/easy_success: a go 1.24 module whose
go.mod requires third-party modules, and a task (a new ``internal/sorting`` package and
its hidden test) that imports only the standard library. Offline (``GOPROXY=off``, or a
proxy on loopback that refuses connections) it gets goagentbench's verdicts: a correct
package succeeds, a wrong one fails, no change fails.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLI, git, make_bundle
from tests.support.cache import own_cache
from tests.support.pywheel import py_scenario

pytestmark = pytest.mark.integration

GO_MOD = """module example.com/gab

go 1.24.4

require (
\tgithub.com/spf13/cobra v1.10.2
\tgopkg.in/yaml.v3 v3.0.1
)
"""
MAIN = """package main

import "fmt"

func main() { fmt.Println("gab") }
"""
HIDDEN = """package sorting_test

import (
\t"testing"

\t"example.com/gab/internal/sorting"
)

func TestIsSorted(t *testing.T) {
\tcases := map[string]struct {
\t\tnums []int
\t\twant bool
\t}{
\t\t"empty":      {nil, true},
\t\t"one":        {[]int{4}, true},
\t\t"increasing": {[]int{1, 2, 2, 5}, true},
\t\t"decreasing": {[]int{3, 1}, false},
\t}
\tfor name, c := range cases {
\t\tif got := sorting.IsSorted(c.nums); got != c.want {
\t\t\tt.Errorf("%s: IsSorted(%v) = %v", name, c.nums, got)
\t\t}
\t}
}
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
WRONG = RIGHT.replace("nums[i] < nums[i-1]", "nums[i] <= nums[i-1]")
AGENT = """
  - name: patcher
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:PatchAgent
"""


def _patch(project: Path, bundle: Path, name: str, body: str) -> Path:
    work = project / f"work-{name}"
    git(["clone", "-q", str(bundle), str(work)], project)
    (work / "internal" / "sorting").mkdir(parents=True)
    (work / "internal" / "sorting" / "sorting.go").write_text(body)
    git(["add", "-A"], work)
    out = project / f"{name}.patch"
    out.write_text(git(["diff", "--cached"], work) + "\n")
    return out


@pytest.fixture
def gab(project: Path, tmp_path: Path) -> dict[str, Path]:
    folder = project / "scenarios" / "smoke" / "easy_success"
    folder.mkdir(parents=True)
    files = {"go.mod": GO_MOD, "main.go": MAIN}
    sha = make_bundle(project / "work-repo", folder / "repo.bundle", files)
    (folder / "gab_sorted_test.go").write_text(HIDDEN)
    (folder / "scenario.yml").write_text(
        f"""name: easy success
repo: repo.bundle
commit: {sha}
classification:
  type: build-package
  single-package: true
setup: null
agent:
  instructions: |
    Write a new package at internal/sorting with func IsSorted(nums []int) bool.
verify:
  copy:
    - from: gab_sorted_test.go
      to: internal/sorting/gab
  must-modify:
    - internal/sorting
  tests:
    - ./internal/sorting
    - ./internal/sorting/gab
"""
    )
    with (project / "agents.yml").open("a") as fh:
        fh.write(AGENT)
    bundle = folder / "repo.bundle"
    return {
        "right": _patch(project, bundle, "right", RIGHT),
        "wrong": _patch(project, bundle, "wrong", WRONG),
        "cache": own_cache(tmp_path),
    }


def _refusing_proxy() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # closed again: connections refused


def _report(project: Path) -> dict[str, Any]:
    runs = sorted((project / "results" / "smoke" / "easy_success").iterdir())
    return dict(json.loads((runs[-1] / "verify" / "report.json").read_text()))


@pytest.mark.parametrize(
    ("answer", "proxy", "code", "outcome"),
    [
        ("right", "off", 0, "success"),
        ("wrong", "loopback", 1, "failed"),
        ("empty", "off", 1, "failed"),
    ],
)
def test_goagentbench_smoke_gets_its_verdicts_offline(
    project: Path, gab: dict[str, Path], cli: CLI, answer: str, proxy: str, code: int, outcome: str
) -> None:
    env = {
        "GOPROXY": _refusing_proxy() if proxy == "loopback" else "off",
        "GOSUMDB": "off",
        "HARNESS_CACHE_DIR": str(gab["cache"]),
    }
    if answer == "empty":
        args = ["--agent", "nop"]
    else:
        args = ["--agent", "patcher"]
        env["HARNESS_TEST_PATCH"] = str(gab[answer])
    done = cli("exec", "smoke/easy_success", *args, "--sandbox", "local", env=env)
    assert done.returncode == code, done.stdout + done.stderr
    report = _report(project)
    assert report["outcome"] == outcome
    notes = " ".join(report["toolchain"].get("notes") or [])
    assert "Go modules not prepared" in notes  # said, and not held against anyone
    if answer == "right":
        assert report["toolchain"]["ran"] == "go1.24.11"


@pytest.mark.docker
def test_goagentbench_smoke_succeeds_offline_in_docker(
    project: Path, gab: dict[str, Path], cli: CLI
) -> None:
    env = {
        "GOPROXY": "off",
        "HARNESS_CACHE_DIR": str(gab["cache"]),
        "HARNESS_TEST_PATCH": str(gab["right"]),
    }
    done = cli("exec", "smoke/easy_success", "--agent", "patcher", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _report(project)["outcome"] == "success"


def test_python_index_unreachable_setup_goes_on_and_a_needed_package_is_an_error(
    project: Path, cli: CLI, tmp_path: Path
) -> None:
    """The package index refuses connections: the trial still runs; the tests import the
    declared requirement, so the baseline fails the same way and the outcome is error."""
    py_scenario(project)
    env = {
        "PIP_INDEX_URL": _refusing_proxy() + "/simple",
        "PIP_RETRIES": "0",
        "PIP_FIND_LINKS": "",
        "HARNESS_CACHE_DIR": str(own_cache(tmp_path)),
    }
    done = cli("exec", "pydeps/quad", "--agent", "oracle", "--sandbox", "local", env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    runs = sorted((project / "results" / "pydeps" / "quad").iterdir())
    report = json.loads((runs[-1] / "verify" / "report.json").read_text())
    assert report["outcome"] == "error" and "dependency" in report["error"]
    assert any("not prepared" in n for n in report["toolchain"]["notes"])
    if os.geteuid() == 0:  # the import failed under the test user, and was still seen
        assert report["containment"]["test_user"].startswith("enforced: tests ran as uid")
