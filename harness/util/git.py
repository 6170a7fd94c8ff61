"""Thin wrappers over the ``git`` command line: real git, no library."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness.errors import InfraError, UserError

# Fixed identity and dates so harness-made commits are reproducible.
BOT_ENV = {
    "GIT_AUTHOR_NAME": "harness",
    "GIT_AUTHOR_EMAIL": "harness@localhost",
    "GIT_COMMITTER_NAME": "harness",
    "GIT_COMMITTER_EMAIL": "harness@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_TERMINAL_PROMPT": "0",
}


class GitError(InfraError):
    """A git command failed; callers turn this into a UserError when it is input's fault."""

    def __init__(self, args: list[str], result: subprocess.CompletedProcess[str]) -> None:
        self.args_ = args
        self.stderr = (result.stderr or result.stdout or "").strip()
        last = self.stderr.splitlines()[-1] if self.stderr else f"exit {result.returncode}"
        super().__init__(f"git {' '.join(args[:3])} failed: {last}")


def git(
    args: list[str],
    cwd: Path | None = None,
    *,
    check: bool = True,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
    timeout: float | None = 600,
) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` in ``cwd``; raise GitError on a non-zero exit when ``check``."""
    full_env = {**os.environ, **BOT_ENV, **(env or {})}
    result = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        input=input_text,
        timeout=timeout,
        check=False,
    )
    if check and result.returncode != 0:
        raise GitError(args, result)
    return result


def has_commit(repo: Path, sha: str) -> bool:
    return git(["cat-file", "-e", f"{sha}^{{commit}}"], repo, check=False).returncode == 0


def head(repo: Path) -> str:
    return git(["rev-parse", "HEAD"], repo).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Stage everything and commit (even if empty); return the new HEAD."""
    git(["add", "-A"], repo)
    git(["commit", "-q", "--allow-empty", "--no-verify", "-m", message], repo)
    return head(repo)


def changed_files(repo: Path, base: str) -> list[str]:
    """Files that differ from ``base``: committed, staged, unstaged and untracked."""
    diff = git(["diff", "--name-only", "-z", "--no-renames", base], repo).stdout
    untracked = git(["ls-files", "--others", "--exclude-standard", "-z"], repo).stdout
    names = {n for n in (diff + untracked).split("\0") if n}
    return sorted(names)


def full_diff(repo: Path, base: str) -> str:
    """The whole change since ``base`` (untracked files included) without touching the
    repository's own index: a throwaway index file is used."""
    index = repo / ".git" / "harness-diff-index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git(["read-tree", base], repo, env=env)
        git(["add", "-A"], repo, env=env)
        return git(["diff", "--cached", "--binary", base], repo, env=env).stdout
    finally:
        index.unlink(missing_ok=True)


def apply_patch(patch: Path, tree: Path, what: str, *, file: Path, field: str, fix: str) -> None:
    """``git apply`` a patch; a patch that does not apply is the input's fault (UserError)."""
    try:
        git(["apply", "--whitespace=nowarn", str(patch)], tree)
    except GitError as exc:
        last = exc.stderr.splitlines()[-1] if exc.stderr else "git apply failed"
        raise UserError(f"{what} does not apply: {last}", file=file, field=field, fix=fix) from None
