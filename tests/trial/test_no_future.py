"""No future in the workspace: after setup, git reaches the scenario commit and its
ancestors only, whatever the source (mirror cache, bundle, path), on the host and in the
agent's container. The upstream repository's later commit holds the fix; no git command
in the workspace may find it."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.config.settings import Settings
from harness.scenario.load import load_scenario
from harness.trial.workspace import setup
from tests.conftest import git, write_scenario

BUG = "def add(a, b):\n    return a - b\n"
FIX = "def add(a, b):\n    return a + b  # FIXED-UPSTREAM\n"


@dataclasses.dataclass
class Upstream:
    repo: Path
    start: str  # the scenario's commit
    future: list[str]  # every object id the start commit does not reach


def _upstream(root: Path) -> Upstream:
    repo = root / "upstream"
    repo.mkdir(parents=True)
    git(["init", "-q"], repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return 0\n")
    git(["add", "-A"], repo)
    git(["commit", "-qm", "first"], repo)
    (repo / "calc.py").write_text(BUG)
    git(["add", "-A"], repo)
    git(["commit", "-qm", "start"], repo)
    start = git(["rev-parse", "HEAD"], repo)
    git(["tag", "v1", start], repo)
    (repo / "calc.py").write_text(FIX)
    git(["commit", "-qam", "fix add"], repo)
    git(["tag", "-a", "v2", "-m", "release"], repo)
    git(["checkout", "-qb", "feature"], repo)
    (repo / "notes.txt").write_text("later work\n")
    git(["add", "-A"], repo)
    git(["commit", "-qm", "feature"], repo)
    git(["checkout", "-q", "main"], repo)
    every = set(git(["rev-list", "--objects", "--all"], repo).split("\n"))
    past = set(git(["rev-list", "--objects", start], repo).split("\n"))
    future = sorted({line.split()[0] for line in every - past if line})
    return Upstream(repo, start, future)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return _upstream(tmp_path_factory.mktemp("nofuture"))


def _scenario(project: Path, repo: str, commit: str) -> str:
    write_scenario(
        project,
        "t/calc",
        f"name: calc\nrepo: {repo}\ncommit: {commit}\n"
        "classification: {type: fix-bug}\n"
        "agent: {instructions: fix add}\n"
        "verify: {tests: ['.']}\n",
    )
    return "t/calc"


def _settings(project: Path, cache: Path | None) -> Settings:
    return Settings(
        workspace=project / "workspace",
        results=project / "results",
        scenario_root=project / "scenarios",
        repo_cache=cache,
        skip_remote=True,
        project_root=project,
    )


def _sources(kind: str, up: Upstream, project: Path) -> tuple[str, Path | None]:
    if kind == "mirror":
        cache = project / "cache"
        mirror = cache / "github.com" / "acme" / "calc.git"
        subprocess.run(["git", "clone", "-q", "--mirror", str(up.repo), str(mirror)], check=True)
        return "github.com/acme/calc", cache
    if kind == "bundle":
        folder = project / "scenarios" / "t" / "calc"
        folder.mkdir(parents=True, exist_ok=True)
        git(["bundle", "create", "-q", str(folder / "calc.bundle"), "--all"], up.repo)
        return "calc.bundle", None
    return str(up.repo), None


def assert_no_future(run: object, up: Upstream) -> None:
    """``run(args) -> (exit code, stdout)`` runs git in the workspace (host or container)."""

    def out(*args: str) -> str:
        code, text = run(list(args))  # type: ignore[operator]
        assert code == 0, f"git {args} failed: {text}"
        return str(text)

    logged = out("log", "--all", "--format=%H %s")
    assert "fix add" not in logged and "feature" not in logged, logged
    assert up.start in logged
    for sha in up.future:
        code, _ = run(["cat-file", "-e", sha])  # type: ignore[operator]
        assert code != 0, f"object {sha} of the future is reachable"
    assert run(["show", "master:calc.py"])[0] != 0  # type: ignore[operator]
    assert run(["show", "v2:calc.py"])[0] != 0  # type: ignore[operator]
    assert out("branch", "-a", "--format=%(refname)").split() == ["refs/heads/main"]
    assert out("tag") == "" and out("remote") == "" and out("stash", "list") == ""
    assert out("reflog", "--all") == ""
    assert out("for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]
    fsck = out("fsck", "--lost-found", "--unreachable", "--dangling", "--no-progress")
    assert "unreachable" not in fsck and "dangling" not in fsck, fsck
    stored = set(out("cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
    reached = {line.split()[0] for line in out("rev-list", "--objects", "--all").splitlines()}
    assert stored == reached, "the object store holds objects the branch does not reach"
    revisions = out("rev-list", "--all").split()
    code, found = run(["grep", "-l", "FIXED-UPSTREAM", *revisions])  # type: ignore[operator]
    assert code == 1, f"the fix is in the history: {found}"


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["mirror", "bundle", "path"])
def test_workspace_holds_no_future(kind: str, upstream: Upstream, project: Path) -> None:
    repo, cache = _sources(kind, upstream, project)
    name = _scenario(project, repo, upstream.start)
    ws = setup(load_scenario(name, project / "scenarios"), _settings(project, cache))

    def run(args: list[str]) -> tuple[int, str]:
        done = subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    assert_no_future(run, upstream)
    assert (ws / "calc.py").read_text() == BUG
    # The verifier grades a copy of the workspace (staged for the scorer container).
    from harness.backends.docker.verify import stage
    from harness.trial.workspace import read_state
    from harness.verify.request import make_request

    loaded = load_scenario(name, project / "scenarios")
    state = read_state(ws, loaded)
    stage(ws, make_request(loaded, ws, state.baseline, state.seed), project / "stage")
    tree = project / "stage" / "tree"

    def run_copy(args: list[str]) -> tuple[int, str]:
        done = subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    assert_no_future(run_copy, upstream)
    # The working tree is the scenario's commit and the baseline sits on top of it.
    assert run(["rev-parse", "HEAD~1"])[1].strip() == upstream.start
    assert run(["status", "--porcelain"])[1] == ""


@pytest.mark.integration
def test_setup_steps_cannot_leave_refs_behind(upstream: Upstream, project: Path) -> None:
    """A setup step that makes branches, tags or stray objects leaves nothing behind."""
    repo, cache = _sources("mirror", upstream, project)
    name = _scenario(project, repo, upstream.start)
    yml = project / "scenarios" / name / "scenario.yml"
    steps = (
        "git tag -a keep -m x && git checkout -qb side && "
        "echo stray | git hash-object -w --stdin && git stash list"
    )
    yml.write_text(yml.read_text() + f"setup:\n  exec: ['{steps}']\n")
    ws = setup(load_scenario(name, project / "scenarios"), _settings(project, cache))

    def run(args: list[str]) -> tuple[int, str]:
        done = subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    assert_no_future(run, upstream)
    assert run(["symbolic-ref", "HEAD"])[1].strip() == "refs/heads/main"


@pytest.mark.integration
def test_short_commit_and_missing_commit(upstream: Upstream, project: Path) -> None:
    from harness.errors import UserError

    repo, cache = _sources("mirror", upstream, project)
    name = _scenario(project, repo, upstream.start[:10])
    ws = setup(load_scenario(name, project / "scenarios"), _settings(project, cache))
    assert (ws / "calc.py").read_text() == BUG
    name = _scenario(project, repo, "0" * 40)
    with pytest.raises(UserError) as err:
        setup(load_scenario(name, project / "scenarios"), _settings(project, cache))
    assert err.value.field == "commit"


@pytest.mark.docker
def test_agent_container_sees_no_future(upstream: Upstream, project: Path, image: str) -> None:
    """The agent's container sees the workspace as mounted; git there finds no future."""
    from harness.sandbox.base import SandboxSpec
    from harness.sandbox.docker import DockerSandbox
    from tests._docker import new_trial

    repo, cache = _sources("mirror", upstream, project)
    name = _scenario(project, repo, upstream.start)
    ws = setup(load_scenario(name, project / "scenarios"), _settings(project, cache))
    spec = SandboxSpec(
        phase="agent", image=image, workspace=ws, labels={"harness.trial": new_trial()}
    )
    box = DockerSandbox(spec)
    box.start()
    try:

        def run(args: list[str]) -> tuple[int, str]:
            quoted = " ".join(f"'{a}'" for a in args)
            res = box.exec(["sh", "-c", f"git -c safe.directory='*' {quoted}"], cwd="/workspace")
            return int(res.returncode or 0), res.stdout + res.stderr

        assert run(["rev-parse", "HEAD~1"])[1].strip() == upstream.start
        assert_no_future(run, upstream)
    finally:
        box.stop()
    shutil.rmtree(ws)
