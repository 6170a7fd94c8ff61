"""Repository sources: a git URL, ``github.com/org/name``, a bundle in the scenario
folder, or a local path. Remote ones are looked up first in the mirror cache."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import UserError
from harness.gitutil import GitError, git, has_commit
from harness.scenario import LoadedScenario

URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")
HOSTED = re.compile(r"^[\w.-]+\.[a-z]{2,}/[\w.-]+/[\w.-]+$")

Kind = Literal["bundle", "path", "remote"]


@dataclass(frozen=True)
class RepoSource:
    kind: Kind
    location: str  # a path for bundle/path, a clone URL for remote
    cache_key: str | None = None  # e.g. github.com/org/name


def resolve_source(loaded: LoadedScenario) -> RepoSource:
    """Classify ``repo:`` and check that local sources exist."""
    repo = loaded.scenario.repo.strip()
    if URL.match(repo):
        key = re.sub(r"^\w+://|^[\w.-]+@", "", repo).replace(":", "/").removesuffix(".git")
        return RepoSource("remote", repo, key)
    if HOSTED.match(repo) and not (loaded.directory / repo).exists():
        return RepoSource("remote", f"https://{repo}.git", repo)
    path = Path(repo).expanduser()
    if not path.is_absolute():
        path = loaded.directory / path
    if repo.endswith(".bundle"):
        if not path.is_file():
            raise UserError(
                f"bundle '{repo}' not found",
                file=loaded.path,
                field="repo",
                fix=f"put the bundle at {path} (git bundle create {Path(repo).name} --all)",
            )
        return RepoSource("bundle", str(path.resolve()))
    if not path.exists():
        raise UserError(
            f"repository path '{repo}' does not exist",
            file=loaded.path,
            field="repo",
            fix="give a git URL, github.com/org/name, a .bundle in the scenario folder or a path",
        )
    return RepoSource("path", str(path.resolve()))


def cached_mirror(source: RepoSource, cache: Path | None) -> Path | None:
    """The local mirror for a remote source, if the cache has one."""
    if cache is None or source.cache_key is None:
        return None
    for candidate in (cache / f"{source.cache_key}.git", cache / source.cache_key):
        if candidate.exists():
            return candidate
    return None


def clone(
    loaded: LoadedScenario, dest: Path, cache: Path | None, *, allow_remote: bool = True
) -> None:
    """Clone the scenario's repo into ``dest`` and check out its commit (detached)."""
    source = resolve_source(loaded)
    origin = source.location
    if source.kind == "remote":
        mirror = cached_mirror(source, cache)
        if mirror is not None:
            origin = str(mirror)
        elif not allow_remote:
            raise UserError(
                f"'{source.location}' is not in the mirror cache and remote access is off",
                file=loaded.path,
                field="repo",
                fix="set HARNESS_REPO_CACHE to a folder holding <host>/<org>/<name>.git "
                "or unset HARNESS_SKIP_REMOTE",
            )
    try:
        git(["clone", "-q", "--no-checkout", origin, str(dest)])
    except GitError as exc:
        raise UserError(
            f"cannot clone '{loaded.scenario.repo}': {exc.stderr.splitlines()[-1:] or ''}",
            file=loaded.path,
            field="repo",
            fix="check the repo location and your access to it",
        ) from None
    commit = loaded.scenario.commit
    if not has_commit(dest, commit):
        raise UserError(
            f"commit {commit} does not exist in {loaded.scenario.repo}",
            file=loaded.path,
            field="commit",
            fix="use a commit that is in the repository (git log --oneline)",
        )
    git(["checkout", "-q", "--detach", commit], dest)
    git(["remote", "remove", "origin"], dest, check=False)


def commit_exists(loaded: LoadedScenario, cache: Path | None, skip_remote: bool) -> bool | None:
    """Check the commit without a full setup; None when the check was skipped."""
    source = resolve_source(loaded)
    if source.kind == "remote" and cached_mirror(source, cache) is None and skip_remote:
        return None
    with tempfile.TemporaryDirectory(prefix="harness-validate-") as tmp:
        try:
            clone(loaded, Path(tmp) / "repo", cache)
        except UserError as exc:
            if exc.field == "commit":
                return False
            raise
    return True
