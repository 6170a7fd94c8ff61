"""The trial's own git directory: made beside the workspace from its fresh ``.git`` and
hardened; what changed is read with the baseline's ignore rules and none of the agent's
git settings; the diff is written from it; the baseline read without a work tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.util import trialgit
from tests.conftest import make_repo

pytestmark = pytest.mark.unit


@pytest.fixture
def ws(tmp_path: Path) -> tuple[Path, str]:
    repo, sha = make_repo(
        tmp_path / "w" / "calc",
        {
            "calc.py": "a = 1\n",
            ".gitignore": "*.log\nbuild/\n",
            "pkg/.gitignore": "/gen.py\n*.tmp\n",
        },
    )
    trialgit.make_private(repo, repo / ".git")
    return repo, sha


def test_the_private_git_dir_sits_beside_the_workspace_hardened(ws: tuple[Path, str]) -> None:
    repo, _ = ws
    gitdir = trialgit.git_dir(repo)
    assert gitdir == repo.parent / ".calc.harness" / "git" and (gitdir / "HEAD").is_file()
    assert (
        not (gitdir / "hooks").exists() and (gitdir / "config").read_text() == trialgit.FRESH_CONFIG
    )
    assert (gitdir / "info" / "attributes").read_text() == trialgit.NEUTRAL_ATTRIBUTES
    exclude = (gitdir / "info" / "exclude").read_text().splitlines()
    assert exclude == [
        "/.run-start.json",
        "/.run-progress.json",
        "*.log",
        "build/",
        "/pkg/gen.py",
        "/pkg/**/*.tmp",
    ]


def test_changes_are_read_without_the_agent_s_git_settings(ws: tuple[Path, str]) -> None:
    repo, sha = ws
    (repo / "calc.py").write_text("a = 2\n")
    (repo / "new.py").write_text("b = 1\n")
    (repo / "x.log").write_text("ignored by the baseline\n")
    (repo / ".gitignore").write_text("*.log\nbuild/\nhidden.py\n")  # the agent's own rule
    (repo / "hidden.py").write_text("c = 1\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("new.py\n")
    with (repo / ".git" / "config").open("a") as fh:
        fh.write("[core]\n\tfsmonitor = touch owned\n")
    changed = trialgit.changed(trialgit.git_dir(repo), repo, sha)
    assert changed == [".gitignore", "calc.py", "hidden.py", "new.py"]
    assert trialgit.changed_lines(trialgit.git_dir(repo), repo, sha)["calc.py"] == {1}
    dest = repo.parent / "workspace.diff"
    record = trialgit.write_diff(repo, sha, dest)
    assert record.status == "ok" and record.bytes == dest.stat().st_size
    assert "+a = 2" in dest.read_text() and "x.log" not in dest.read_text()
    assert not (repo / "owned").exists()  # the agent's fsmonitor never ran


def test_the_baseline_is_read_from_harness_s_copy(ws: tuple[Path, str]) -> None:
    repo, sha = ws
    (repo / ".git").rename(repo / "moved-git")  # whatever the agent did to its .git
    assert trialgit.baseline_read(repo, ["show", f"{sha}:calc.py"]) == "a = 1\n"
    assert trialgit.baseline_read(repo, ["show", f"{sha}:none.py"]) is None


def test_a_workspace_without_any_git_dir_is_an_infrastructure_error(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    with pytest.raises(InfraError, match="no harness git directory"):
        trialgit.ensure_private(tmp_path / "bare")
