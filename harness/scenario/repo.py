"""Repository sources: a git URL, ``github.com/org/name``, a bundle in the scenario
folder, or a local path. Remote ones are looked up first in the mirror cache."""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import InfraError, UserError
from harness.scenario.model import LoadedScenario
from harness.util.git import GitError, git

URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")
HOSTED = re.compile(r"^[\w.-]+\.[a-z]{2,}/[\w.-]+/[\w.-]+$")

Kind = Literal["bundle", "path", "remote"]


@dataclass(frozen=True)
class RepoSource:
    kind: Kind
    location: str  # a path for bundle/path, a clone URL for remote
    cache_key: str | None = None  # e.g. github.com/org/name


def remote_source(repo: str, directory: Path) -> RepoSource | None:
    """``repo`` as a remote source (URL or host/org/name), or None when it is local."""
    if URL.match(repo):
        key = re.sub(r"^\w+://|^[\w.-]+@", "", repo).replace(":", "/").removesuffix(".git")
        return RepoSource("remote", repo, key)
    if HOSTED.match(repo) and not (directory / repo).exists():
        return RepoSource("remote", f"https://{repo}.git", repo)
    return None


def resolve_source(loaded: LoadedScenario) -> RepoSource:
    """Classify ``repo:`` and check that local sources exist."""
    repo = loaded.scenario.repo.strip()
    remote = remote_source(repo, loaded.directory)
    if remote is not None:
        return remote
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


WORKSPACE_BRANCH = "main"
CACHE_HINT = "HARNESS_REPO_CACHE (a folder holding <host>/<org>/<name>.git mirrors)"


def objects_dir(repo: Path) -> Path:
    """The object store of a bare or non-bare repository."""
    out = git(["rev-parse", "--path-format=absolute", "--git-path", "objects"], repo).stdout
    return Path(out.strip())


def source_repo(
    loaded: LoadedScenario, source: RepoSource, cache: Path | None, allow_remote: bool, tmp: Path
) -> Path:
    """A local repository holding the scenario's history: the cached mirror, the path
    itself, or a bare copy (of a bundle or a remote) made in ``tmp``."""
    if source.kind == "path":
        return Path(source.location)
    origin = source.location
    if source.kind == "remote":
        mirror = cached_mirror(source, cache)
        if mirror is not None:
            return mirror
        if not allow_remote:
            raise UserError(
                f"'{source.location}' is not in the mirror cache and remote access is off",
                file=loaded.path,
                field="repo",
                fix=f"set {CACHE_HINT} or unset HARNESS_SKIP_REMOTE",
            )
    bare = tmp / "source.git"
    try:
        git(["clone", "-q", "--bare", origin, str(bare)])
    except GitError as exc:
        last = exc.stderr.splitlines()[-1] if exc.stderr else "git clone failed"
        if source.kind == "remote" and network_failure(exc.stderr or ""):
            raise InfraError(
                f"cannot reach '{loaded.scenario.repo}' to clone it: {last}",
                fix=f"check the network, or set {CACHE_HINT}",
            ) from None
        raise UserError(
            f"cannot clone '{loaded.scenario.repo}': {last}",
            file=loaded.path,
            field="repo",
            fix=f"check the repo location and your access to it, or set {CACHE_HINT}",
        ) from None
    return bare


NETWORK_SIGNS = (
    "could not resolve host",
    "failed to connect",
    "connection refused",
    "connection timed out",
    "operation timed out",
    "network is unreachable",
    "no route to host",
    "temporary failure in name resolution",
    "connection reset",
    "early eof",
    "rpc failed",
    "the remote end hung up unexpectedly",
    "ssl",
    "tls",
    "proxy connect",
)


def network_failure(stderr: str) -> bool:
    """Whether git's error says the network failed (a harness fault, exit 3), rather than
    that the location is wrong (bad input, exit 2)."""
    text = stderr.lower()
    wrong = ("repository not found", "does not appear to be a git repository", "permission denied")
    if any(sign in text for sign in wrong):
        return False
    return any(sign in text for sign in NETWORK_SIGNS)


def clone(
    loaded: LoadedScenario, dest: Path, cache: Path | None, *, allow_remote: bool = True
) -> str:
    """Make ``dest`` a fresh repository holding the scenario's commit and its ancestors
    only, checked out on one branch (no tags, remotes, reflog or later commits: no
    future an agent could read the answer from). Returns the full commit sha."""
    source = resolve_source(loaded)
    commit = loaded.scenario.commit
    with tempfile.TemporaryDirectory(prefix="harness-clone-") as tmp:
        src = source_repo(loaded, source, cache, allow_remote, Path(tmp))
        try:
            objects = objects_dir(src)
        except GitError:
            raise UserError(
                f"'{loaded.scenario.repo}' is not a git repository",
                file=loaded.path,
                field="repo",
                fix=f"give a git URL, a .bundle, a repository path, or set {CACHE_HINT}",
            ) from None
        full = history_of(objects, commit, dest)
        if full is None:
            raise UserError(
                f"commit {commit} does not exist in {loaded.scenario.repo}",
                file=loaded.path,
                field="commit",
                fix="use a commit that is in the repository (git log --oneline)",
            )
    git(["reset", "-q", "--hard"], dest)
    return full


def history_of(objects: Path, commit: str, dest: Path) -> str | None:
    """Make ``dest`` a new repository whose one branch is ``commit`` (found in the object
    store ``objects``), holding only that commit's history. Returns the full sha, or None
    when the commit is not there. The working tree is left empty."""
    git(["init", "-q", "-b", WORKSPACE_BRANCH, str(dest)])
    alternates = dest / ".git" / "objects" / "info" / "alternates"
    # Borrow the source's objects, keep only what the commit reaches, then let go.
    alternates.write_text(f"{objects}\n")
    try:
        found = git(["rev-parse", "-q", "--verify", f"{commit}^{{commit}}"], dest, check=False)
        if found.returncode != 0:
            return None
        full = found.stdout.strip()
        git(["update-ref", f"refs/heads/{WORKSPACE_BRANCH}", full], dest)
        git(["repack", "-a", "-d", "-q"], dest)
    finally:
        alternates.unlink()
    return full


def seal(repo: Path) -> None:
    """Forget how the repository was made: one branch, no other refs, remotes or reflog,
    and no object the branch does not reach."""
    keep = f"refs/heads/{WORKSPACE_BRANCH}"
    if git(["symbolic-ref", "-q", "HEAD"], repo, check=False).stdout.strip() != keep:
        # a setup step moved HEAD (another branch, detached): the branch follows it
        git(["update-ref", keep, "HEAD"], repo)
        git(["symbolic-ref", "HEAD", keep], repo)
    dropped = False
    for ref in git(["for-each-ref", "--format=%(refname)"], repo).stdout.split():
        if ref != keep:
            git(["update-ref", "-d", ref], repo)
            dropped = True
    for remote in git(["remote"], repo).stdout.split():
        git(["remote", "remove", remote], repo)
        dropped = True
    for name in ("FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD"):
        (repo / ".git" / name).unlink(missing_ok=True)
    shutil.rmtree(repo / ".git" / "logs", ignore_errors=True)
    if dropped:  # packed objects only those refs reached go with a full repack
        git(["repack", "-a", "-d", "-q"], repo)
    git(["prune", "--expire=now"], repo)


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
