"""Pack a source directory into a git bundle holding ONE deterministic commit.

Scenario authors keep a scenario's repository only inside ``repo.bundle`` (never as a
second source tree in the scenario folder). This tool makes that bundle:

    python scripts/make_repo_bundle.py /tmp/ledger-src scenarios/py/ledger-rounding/repo.bundle

It prints the commit sha; put it in ``scenario.yml`` as ``commit:``. The same input
always gives the same sha: author, committer, dates and message are fixed, the branch is
``main``, signing and hooks are off, and files are added in sorted order. ``.git``,
``__pycache__``, ``*.pyc`` and ``.pytest_cache`` in the source are ignored.

To edit a scenario's repository later: ``git clone repo.bundle /tmp/x``, change it,
remove ``/tmp/x/.git`` and run this tool again (then update ``commit:``, regenerate the
solution and defect patches, and bump the scenario's version).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

FIXED_NAME = "harness scenarios"
FIXED_EMAIL = "scenarios@harness.invalid"
FIXED_DATE = "2024-01-01T00:00:00+00:00"
DEFAULT_MESSAGE = "scenario repository"
IGNORED_PARTS = {".git", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}
IGNORED_SUFFIXES = (".pyc", ".pyo")

# fmt: off
GIT_CONFIG = [
    "-c", "init.defaultBranch=main",
    "-c", "commit.gpgsign=false",
    "-c", "tag.gpgsign=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.autocrlf=false",
    "-c", "core.fileMode=true",
    "-c", f"user.name={FIXED_NAME}",
    "-c", f"user.email={FIXED_EMAIL}",
]
# fmt: on


def _git(args: list[str], cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": FIXED_NAME,
        "GIT_AUTHOR_EMAIL": FIXED_EMAIL,
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_NAME": FIXED_NAME,
        "GIT_COMMITTER_EMAIL": FIXED_EMAIL,
        "GIT_COMMITTER_DATE": FIXED_DATE,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    done = subprocess.run(
        ["git", *GIT_CONFIG, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def source_files(source: Path) -> list[str]:
    """Relative POSIX paths of every file to commit, sorted."""
    files: list[str] = []
    for path in source.rglob("*"):
        rel = path.relative_to(source)
        if any(part in IGNORED_PARTS for part in rel.parts):
            continue
        if path.is_file() and not path.name.endswith(IGNORED_SUFFIXES):
            files.append(rel.as_posix())
    return sorted(files)


def make_bundle(source: Path, out: Path, message: str = DEFAULT_MESSAGE) -> str:
    """Commit ``source`` once, deterministically, bundle it to ``out``; return the sha."""
    files = source_files(source)
    if not files:
        raise ValueError(f"{source} holds no files to commit")
    with tempfile.TemporaryDirectory(prefix="make-bundle-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        _git(["init", "-q"], repo)
        for rel in files:
            src = source / rel
            dst = repo / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
            dst.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
        _git(["add", "--", *files], repo)
        _git(["commit", "-q", "--no-verify", "-m", message], repo)
        sha = _git(["rev-parse", "HEAD"], repo)
        out.parent.mkdir(parents=True, exist_ok=True)
        _git(["bundle", "create", str(out.resolve()), "--all"], repo)
    return sha


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("source", type=Path, help="directory whose files become the commit")
    parser.add_argument("out", type=Path, help="bundle file to write (e.g. .../repo.bundle)")
    parser.add_argument("--message", default=DEFAULT_MESSAGE, help="commit message")
    args = parser.parse_args(argv)
    if not args.source.is_dir():
        print(f"error: {args.source} is not a directory", file=sys.stderr)
        return 2
    print(make_bundle(args.source, args.out, args.message))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
