"""``harness new`` (a scenario skeleton on a repository's commit) and ``harness bump``
(a scenario's next version in its own folder)."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from harness.errors import UserError
from harness.scenario.model import FOLDER_VERSION, SCENARIO_FILE, LoadedScenario
from harness.scenario.repo import cached_mirror, history_of, objects_dir, remote_source
from harness.util.git import GitError, git

SCENARIO_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$")

TEMPLATE = """\
# Written by `harness new`; every TODO is yours. See scenarios/README.md.
name: {short}
version: "1.0.0"
repo: {repo}
commit: {commit}
spec: SPEC.md
classification:
  type: fix-bug            # build-package | fix-bug | feature | refactor
  has-spec: true
  single-package: true
  sees-failing-tests: false
agent:
  instructions: |
    TODO: what a careful engineer needs to know to do the task (read SPEC.md).
verify:
  runner: {runner}
  copy:
    - from: hidden/{hidden}
      to: {hidden}
  no-modify: {hidden}/**
  tests:
    - {target}
"""

SPEC = """\
# {short}

TODO: the task, as the agent sees it (copied into the workspace as SPEC.md).
"""

PY_TEST = '''\
"""Hidden tests: copied in only at verification. Replace this placeholder."""


def test_todo() -> None:
    raise AssertionError("TODO: write the hidden tests for this scenario")
'''

GO_TEST = """\
package hiddentest

import "testing"

// Hidden tests: copied in only at verification. Replace this placeholder.
func TestTodo(t *testing.T) {
\tt.Fatal("TODO: write the hidden tests for this scenario")
}
"""


def new_scenario(root: Path, name: str, repo: str, commit: str, cache: Path | None = None) -> Path:
    """Scaffold ``root/name``: scenario.yml, SPEC.md, hidden/ (and repo.bundle holding the
    commit's history only, when ``repo`` is a local repository)."""
    if not SCENARIO_NAME.match(name):
        raise UserError(
            f"'{name}' is not FAMILY/NAME",
            field="FAMILY/NAME",
            fix="use lower-case letters, digits and dashes, e.g. py/ledger-rounding",
        )
    folder = root / name
    if folder.exists():
        raise UserError(
            "the scenario folder exists already",
            file=folder,
            field="FAMILY/NAME",
            fix="pick another name, or `harness bump` the existing scenario",
        )
    with tempfile.TemporaryDirectory(prefix="harness-new-") as tmp:
        stage = Path(tmp) / "scenario"
        stage.mkdir()
        remote = remote_source(repo, Path.cwd())
        if remote is None:
            full, runner = _bundle(Path(repo).expanduser(), commit, stage / "repo.bundle")
            repo_field = "repo.bundle"
        else:  # pinned by URL: check the commit when the repository cache has it
            repo_field, full, runner = repo, commit, "pytest"
            mirror = cached_mirror(remote, cache)
            if mirror is not None:
                full, runner = _inspect(mirror, commit)
        hidden = "hiddentest" if runner == "go" else "tests_hidden"
        target = f"./{hidden}" if runner == "go" else hidden
        short = name.split("/", 1)[1]
        (stage / SCENARIO_FILE).write_text(
            TEMPLATE.format(
                short=short,
                repo=repo_field,
                commit=full,
                runner=runner,
                hidden=hidden,
                target=target,
            )
        )
        (stage / "SPEC.md").write_text(SPEC.format(short=short))
        (stage / "hidden" / hidden).mkdir(parents=True)
        if runner == "go":
            (stage / "hidden" / hidden / "hidden_test.go").write_text(GO_TEST)
        else:
            (stage / "hidden" / hidden / f"test_{short.replace('-', '_')}.py").write_text(PY_TEST)
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(stage, folder)
    return folder


def _inspect(repo: Path, commit: str) -> tuple[str, str]:
    """(full sha, runner) of ``commit`` in a local repository."""
    found = git(["rev-parse", "-q", "--verify", f"{commit}^{{commit}}"], repo, check=False)
    if found.returncode != 0:
        raise UserError(
            f"commit {commit} is not in {repo}",
            field="--commit",
            fix="use a commit of that repository (git log --oneline)",
        )
    full = found.stdout.strip()
    names = git(["ls-tree", "--name-only", full], repo).stdout.split()
    return full, "go" if "go.mod" in names else "pytest"


def _bundle(repo: Path, commit: str, out: Path) -> tuple[str, str]:
    """A bundle of ``commit`` and its ancestors only; returns (full sha, runner)."""
    try:
        objects = objects_dir(repo)
    except (GitError, FileNotFoundError, NotADirectoryError):
        raise UserError(
            f"'{repo}' is not a git repository",
            field="--repo",
            fix="give a local clone, or a URL such as github.com/org/name",
        ) from None
    with tempfile.TemporaryDirectory(prefix="harness-bundle-") as tmp:
        history = Path(tmp) / "history"
        full = history_of(objects, commit, history)
        if full is None:
            raise UserError(
                f"commit {commit} is not in {repo}",
                field="--commit",
                fix="use a commit of that repository (git log --oneline)",
            )
        git(["bundle", "create", "-q", str(out), "main"], history)
        names = git(["ls-tree", "--name-only", full], history).stdout.split()
    return full, "go" if "go.mod" in names else "pytest"


def _next(version: str, part: str) -> str:
    major, minor, *rest = (int(x) for x in version.split("."))
    patch = rest[0] if rest else 0
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def bump(loaded: LoadedScenario, root: Path, part: str) -> Path:
    """Copy the scenario to ``<name>-<next version>/`` with its version updated."""
    new = _next(loaded.version, part)
    base = FOLDER_VERSION.sub("", loaded.directory.name)
    target = loaded.directory.with_name(f"{base}-{new}")
    if target.exists():
        raise UserError(
            f"version {new} exists already",
            file=target,
            field="version",
            fix="edit that version, or bump from the newest one",
        )
    shutil.copytree(loaded.directory, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    yml = target / SCENARIO_FILE
    text = yml.read_text(encoding="utf-8")
    line = f'version: "{new}"'
    text, count = re.subn(r"(?m)^version:.*$", line, text, count=1)
    if not count:
        text = f"{line}\n{text}"
    yml.write_text(text, encoding="utf-8")
    return target
