"""Walk a repository's first-parent history: the commits a miner looks at.

The repository is a bare mirror or clone on disk, a git bundle, or a URL; the last two
are cloned (``--mirror``) into a scratch folder first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import UserError
from harness.util.git import GitError, git

CANONICAL = re.compile(
    r"(?:^|/)((?:github\.com|gitlab\.com|codeberg\.org)/[\w.-]+/[\w.-]+?)(?:\.git|\.bundle)?/?$"
)


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D (renames are split into D + A)
    path: str


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    date: str  # committer date, UTC, YYYY-MM-DD
    subject: str
    changes: tuple[Change, ...] = field(default_factory=tuple)

    @property
    def parent(self) -> str | None:
        return self.parents[0] if self.parents else None


def canonical_name(source: str) -> str | None:
    """``github.com/org/name`` from a URL, a mirror path or a bundle path, if it has one."""
    text = re.sub(r"^\w+://|^[\w.-]+@", "", source.strip()).replace(":", "/")
    m = CANONICAL.search(text)
    return m.group(1) if m else None


def open_repo(source: str, scratch: Path) -> Path:
    """A local git directory for ``source``: the path itself, or a mirror clone."""
    path = Path(source).expanduser()
    if path.is_dir():
        try:
            git(["rev-parse", "--git-dir"], path)
        except GitError:
            raise UserError(
                f"'{source}' is not a git repository",
                file=path,
                field="REPO",
                fix="give a mirror or clone, a .bundle or a git URL",
            ) from None
        return path.resolve()
    if path.suffix == ".bundle" and not path.is_file():
        raise UserError(
            f"bundle '{source}' not found", file=path, field="REPO", fix="check the path"
        )
    target = scratch / "source.git"
    try:
        git(["clone", "-q", "--mirror", str(path) if path.is_file() else source, str(target)])
    except GitError as exc:
        raise UserError(
            f"cannot clone '{source}': {exc.stderr.splitlines()[-1] if exc.stderr else exc}",
            file=Path(source),
            field="REPO",
            fix="give a mirror or clone, a .bundle or a reachable git URL",
        ) from None
    return target


def first_parent(
    repo: Path, *, since: str | None = None, limit: int | None = None, rev: str = "HEAD"
) -> list[Commit]:
    """Commits of ``rev``'s first-parent line, newest first, each with its change
    against its first parent."""
    args = ["log", "--first-parent", "--format=%H%x00%P%x00%ct%x00%s", rev]
    if since:
        args.append(f"--since={since}")
    if limit:
        args.append(f"--max-count={limit}")
    commits = []
    for line in git(args, repo).stdout.splitlines():
        sha, parents, stamp, subject = line.split("\x00", 3)
        day = datetime.fromtimestamp(int(stamp), UTC).date().isoformat()
        parent_list = tuple(parents.split())
        changes = _changes(repo, parent_list[0], sha) if parent_list else ()
        commits.append(Commit(sha, parent_list, day, subject, changes))
    return commits


def named(repo: Path, shas: list[str]) -> list[Commit]:
    """The named commits (``--commit``), each with its change against its first parent."""
    commits = []
    for sha in shas:
        found = git(["rev-parse", "-q", "--verify", f"{sha}^{{commit}}"], repo, check=False)
        if found.returncode != 0:
            raise UserError(
                f"commit {sha} is not in the repository",
                field="--commit",
                fix="name a commit of REPO (git log --first-parent --oneline)",
            )
        commits += first_parent(repo, limit=1, rev=found.stdout.strip())
    return commits


def _changes(repo: Path, parent: str, sha: str) -> tuple[Change, ...]:
    out = git(["diff", "--name-status", "--no-renames", "-z", parent, sha], repo).stdout
    parts = [p for p in out.split("\x00") if p]
    return tuple(Change(parts[i][0], parts[i + 1]) for i in range(0, len(parts) - 1, 2))
