"""Git for harness: commands without hooks or signing, a failure named by its last line,
commits of everything, files changed since a base, and patches that do not apply as the
input's fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InfraError, UserError
from harness.util.git import GitError, apply_patch, changed_files, commit_all, git, has_commit, head
from tests.conftest import make_repo

pytestmark = pytest.mark.unit


def test_a_failed_command_is_an_infrastructure_error_naming_its_last_line(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        git(["rev-parse", "--verify", "nope"], tmp_path)
    assert isinstance(info.value, InfraError)
    assert str(info.value).startswith("git rev-parse --verify nope failed: ")
    assert "\n" not in str(info.value)
    assert git(["rev-parse", "nope"], tmp_path, check=False).returncode != 0


def test_commits_run_no_hook_and_record_everything(tmp_path: Path) -> None:
    repo, sha = make_repo(tmp_path / "r", {"a.py": "1\n"})
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho ran > hook-ran\nexit 1\n")
    hook.chmod(0o755)
    (repo / "b.py").write_text("2\n")
    new = commit_all(repo, "more")
    assert new == head(repo) != sha and has_commit(repo, sha) and not has_commit(repo, "f" * 40)
    assert not (repo / "hook-ran").exists()
    assert commit_all(repo, "empty") != new  # an empty commit is still a commit
    assert changed_files(repo, sha) == ["b.py"]
    (repo / "a.py").write_text("changed\n")
    (repo / "c.py").write_text("new\n")
    assert sorted(changed_files(repo, sha)) == ["a.py", "b.py", "c.py"]


def test_a_patch_that_does_not_apply_is_the_input_s_fault(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path / "r", {"calc.py": "def add(a, b):\n    return a - b\n"})
    good = tmp_path / "good.patch"
    good.write_text(
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    return a - b\n+    return a + b\n"
    )
    apply_patch(good, repo, "solution", file=good, field="solution", fix="regenerate it")
    assert (repo / "calc.py").read_text().endswith("a + b\n")
    with pytest.raises(UserError, match="solution does not apply: ") as info:
        apply_patch(good, repo, "solution", file=good, field="solution", fix="regenerate it")
    assert info.value.field == "solution" and info.value.fix == "regenerate it"
