"""What doctor says of Go and the fleet file: the pinned Go a module needs, a host Go too
old where it runs, the fleet file there or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import toolcheck
from harness.config.settings import Settings
from tests.conftest import REPO_ROOT, make_repo


def _go_project(tmp_path: Path, go_line: str, declared: str | None = None) -> Settings:
    root = tmp_path / "project"
    (root / "scenarios" / "g" / "one").mkdir(parents=True)
    for name in ("agents.yml", "llms.yml"):
        (root / name).write_text((REPO_ROOT / name).read_text())
    repo, sha = make_repo(tmp_path / "repo", {"go.mod": f"module x\n\ngo {go_line}\n"})
    env = f"environment: {{go: '{declared}'}}\n" if declared else ""
    (root / "scenarios" / "g" / "one" / "scenario.yml").write_text(
        f"name: one\nrepo: {repo}\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        f"agent: {{instructions: x}}\n{env}verify:\n  tests: [./...]\n"
    )
    return Settings.from_env(root)


@pytest.mark.unit
def test_doctor_names_the_pinned_go_a_go124_module_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolcheck, "host_go", lambda: ("/usr/bin/go", (1, 19, 8)))
    checks = {c.name: c for c in toolcheck.go_checks(_go_project(tmp_path, "1.24.4"))}
    assert checks["go"].ok and "go1.19.8" in checks["go"].detail
    pinned = checks["go 1.24.11"]
    assert "g/one" in pinned.detail and "too old" in pinned.detail


@pytest.mark.unit
def test_doctor_misses_a_host_go_too_old_for_the_scenario_that_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolcheck, "host_go", lambda: ("/usr/bin/go", (1, 17, 0)))
    (check,) = toolcheck.go_checks(_go_project(tmp_path, "1.19", declared="system"))
    assert not check.ok and "too old for g/one@1.19" in check.detail and check.fix


@pytest.mark.unit
def test_doctor_says_whether_the_fleet_file_exists(tmp_path: Path) -> None:
    settings = _go_project(tmp_path, "1.24.4")
    missing = toolcheck.fleet_check(settings)
    assert "none at" in missing.detail and "fleet.yml.example" in missing.detail
    settings.fleet_file.write_text("hosts:\n  - {name: a, base_url: 'http://127.0.0.1:9'}\n")
    assert toolcheck.fleet_check(settings).detail.endswith("1 host(s), 0 model(s)")
    settings.fleet_file.write_text("hosts: 3\n")
    broken = toolcheck.fleet_check(settings)
    assert not broken.ok and "fleet.yml" in broken.detail


@pytest.mark.unit
def test_go_versions_are_read_from_go_version_output() -> None:
    assert toolcheck.parse_go_version("go version go1.22.3 linux/amd64") == (1, 22, 3)
    assert toolcheck.parse_go_version("go version go1.21 linux/amd64") == (1, 21, 0)
    assert toolcheck.parse_go_version("no go here") is None
