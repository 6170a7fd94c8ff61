"""Hidden tests taken from the repository's own fix commit (``verify.tests-from``).

At verification time the host reads the listed paths at the fix commit from the
repository source (the mirror cache, a bundle, a path or the URL) into a folder of the
harness cache, keyed by commit and paths. Nothing is copied into the project, and the
workspace never holds the fix commit (its history stops at the scenario's ``commit:``).
The verifier then writes those files over the tree, like ``verify.copy``.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from harness.config.settings import Settings
from harness.errors import UserError
from harness.scenario.model import LoadedScenario
from harness.scenario.repo import objects_dir, resolve_source, source_repo
from harness.util.git import git

FOLDER = "tests-from"


def cache_key(commit: str, paths: list[str]) -> str:
    digest = hashlib.sha256("\0".join([commit, *paths]).encode()).hexdigest()[:16]
    return f"{commit[:12]}-{digest}"


def materialize(loaded: LoadedScenario, settings: Settings) -> Path | None:
    """The folder holding the ``tests-from`` files (None when the scenario has none)."""
    source = loaded.scenario.verify.tests_from
    if source is None:
        return None
    root = settings.cache_root / FOLDER / cache_key(source.commit, source.paths)
    if (root / ".complete").is_file():
        return root
    with tempfile.TemporaryDirectory(prefix="harness-tests-from-") as tmp:
        src = source_repo(
            loaded,
            resolve_source(loaded),
            settings.repo_cache,
            not settings.skip_remote,
            Path(tmp),
        )
        archive = extract(src, source.commit, source.paths, loaded)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=_parent(root)))
        try:
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(staging, filter="data")
            (staging / ".complete").write_text(source.commit + "\n")
            if root.exists():
                shutil.rmtree(root)
            staging.rename(root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return root


def _parent(root: Path) -> Path:
    root.parent.mkdir(parents=True, exist_ok=True)
    return root.parent


def extract(repo: Path, commit: str, paths: list[str], loaded: LoadedScenario) -> bytes:
    """A tar of ``paths`` at ``commit`` in ``repo``; a UserError naming what is missing."""
    git_dir = objects_dir(repo).parent
    found = git(["--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"], check=False)
    if found.returncode != 0:
        raise UserError(
            f"the fix commit {commit} is not in {loaded.scenario.repo}",
            file=loaded.path,
            field="verify.tests-from.commit",
            fix="name a commit of the repository (a descendant of commit:)",
        )
    for path in paths:
        there = git(["--git-dir", str(git_dir), "cat-file", "-e", f"{commit}:{path}"], check=False)
        if there.returncode != 0:
            raise UserError(
                f"'{path}' does not exist at {commit[:12]}",
                file=loaded.path,
                field="verify.tests-from.paths",
                fix="list files (or folders) that the fix commit holds",
            )
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", *paths],
        capture_output=True,
        timeout=300,
        check=True,
    )
    return done.stdout
