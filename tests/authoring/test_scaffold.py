"""A new scenario from a repository and commit, locked, and bumped to its next version."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.support.authoring import cli, upstream


@pytest.mark.integration
def test_new_lock_bump(project: Path, tmp_path: Path) -> None:
    repo, start, _later = upstream(tmp_path)
    made = cli(project, "new", "py/demo", "--repo", str(repo), "--commit", start[:8])
    assert made.returncode == 0, made.stderr
    folder = project / "scenarios" / "py" / "demo"
    files = {p.name for p in folder.iterdir()}
    assert files == {"repo.bundle", "scenario.yml", "SPEC.md", "hidden"}
    assert start in (folder / "scenario.yml").read_text()  # the full sha
    copy = tmp_path / "copy"
    git(["clone", "-q", "--mirror", str(folder / "repo.bundle"), str(copy)], tmp_path)
    assert git(["rev-list", "--all"], copy) == start  # no future in the bundle either
    assert cli(project, "setup", "py/demo").returncode == 0
    from harness.authoring.check import _todos
    from harness.scenario.load import load_scenario

    todos = _todos(load_scenario("py/demo", project / "scenarios"))
    assert not todos.ok and "scenario.yml" in todos.detail and "SPEC.md" in todos.detail
    # Pinned by URL: the commit is checked (and completed) in the repository cache.
    cache = tmp_path / "cache"
    git(["clone", "-q", "--mirror", str(repo), str(cache / "github.com/acme/calc.git")], tmp_path)
    pinned = cli(
        project,
        "new",
        "py/pinned",
        "--repo",
        "github.com/acme/calc",
        "--commit",
        start[:8],
        cache=cache,
    )
    assert pinned.returncode == 0, pinned.stderr
    text = (project / "scenarios" / "py" / "pinned" / "scenario.yml").read_text()
    assert "repo: github.com/acme/calc" in text and f"commit: {start}" in text
    assert not (project / "scenarios" / "py" / "pinned" / "repo.bundle").exists()
    assert cli(project, "setup", "py/pinned", cache=cache).returncode == 0
    again = cli(project, "new", "py/demo", "--repo", str(repo), "--commit", start)
    assert again.returncode == 2 and "exists" in again.stderr

    # Drafts change freely; a locked version may not.
    assert cli(project, "validate", "py/demo").returncode == 0
    locked = cli(project, "lock", "py/demo")
    assert locked.returncode == 0 and "py/demo@1.0.0" in locked.stdout
    assert "py/demo@1.0.0" in (project / "scenarios" / "scenarios.lock").read_text()
    assert cli(project, "validate", "py/demo").returncode == 0
    (folder / "SPEC.md").write_text("# demo\n\nAdd two numbers.\n")
    refused = cli(project, "validate", "py/demo")
    assert refused.returncode == 2 and "harness bump py/demo" in refused.stderr
    bumped = cli(project, "bump", "py/demo", "--minor")
    assert bumped.returncode == 0, bumped.stderr
    new = project / "scenarios" / "py" / "demo-1.1.0"
    assert 'version: "1.1.0"' in (new / "scenario.yml").read_text()
    assert cli(project, "validate", "py/demo-1.1.0").returncode == 0
    assert cli(project, "bump", "py/demo", "--minor").returncode == 2  # 1.1.0 exists
    assert cli(project, "lock", "py/demo-1.1.0").returncode == 0
    assert "py/demo@1.1.0" in (project / "scenarios" / "scenarios.lock").read_text()
