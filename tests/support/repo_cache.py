"""The repository cache that real-repository scenarios are served from in tests.

Scenarios such as ``go/uuid-validate`` pin ``repo: github.com/<org>/<name>``. Tests never
reach the network: they build a cache of bare mirrors (the ``HARNESS_REPO_CACHE``
layout, ``<cache>/github.com/<org>/<name>.git``) from the offline git bundles in
``../shared/repos`` (the folder beside the checkout) and point harness at it.

When that folder is absent, a test that needs it fails in CI (``CI`` set) and is
skipped elsewhere, with the reason.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_REPOS = REPO_ROOT.parent / "shared" / "repos"

_built: Path | None = None


def missing_reason() -> str:
    return (
        f"real-repository scenarios need the offline repositories in {SHARED_REPOS} "
        "(git bundles beside the checkout; see its README.md)"
    )


def require_shared_repos() -> None:
    """Fail in CI, skip elsewhere, when ``../shared/repos`` is not there."""
    if any(SHARED_REPOS.glob("*/*/*.bundle")):
        return
    if os.environ.get("CI"):
        pytest.fail(missing_reason())
    pytest.skip(missing_reason())


def shared_repo_cache() -> Path:
    """Bare mirrors of every bundle in ``../shared/repos``, built once per test session."""
    global _built
    require_shared_repos()
    if _built is not None and _built.is_dir():
        return _built
    cache = Path(tempfile.mkdtemp(prefix="harness-repo-cache-"))
    atexit.register(shutil.rmtree, cache, True)
    for bundle in sorted(SHARED_REPOS.glob("*/*/*.bundle")):
        rel = bundle.relative_to(SHARED_REPOS).with_suffix(".git")
        target = cache / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "clone", "-q", "--mirror", str(bundle), str(target)],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
    _built = cache
    return cache


def is_real_repo(repo: str) -> bool:
    """``repo:`` names a public repository (``github.com/<org>/<name>``)."""
    return repo.startswith("github.com/") and repo.count("/") == 2
