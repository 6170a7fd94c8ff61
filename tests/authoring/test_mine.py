"""``harness mine`` on three shared repositories (from their bundles, offline).

Each run walks a small window (``--since`` + ``--limit``). The drafts' claims are then
checked independently, with plain git and go test / pytest (no harness code): at the
fix's parent with the fix commit's test files the targets fail, with the draft's
solution.patch applied as well they pass. The funnel names every commit of the window
exactly once, with a reason for each rejection. One case proves in Docker.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.scenario.model import DRAFT_INSTRUCTIONS
from tests.conftest import REPO_ROOT
from tests.support.repo_cache import SHARED_REPOS, shared_repo_cache

pytestmark = pytest.mark.integration

CASES = {
    # repository: (--since, --limit, drafts at least)
    "julienschmidt/httprouter": ("2020-08-01", 17, 2),
    "keleshev/schema": ("2026-06-01", 5, 2),
    "pytoolz/toolz": ("2025-10-15", 7, 1),
}


def mine(repo: str, since: str, limit: int, out: Path, sandbox: str = "local") -> str:
    cache = shared_repo_cache()
    env = {
        **os.environ,
        "HARNESS_REPO_CACHE": str(cache),
        "HARNESS_SKIP_REMOTE": "1",
        "HARNESS_WORKSPACE": str(out.parent / "ws"),
    }
    args = [
        sys.executable,
        "-m",
        "harness.cli",
        "mine",
        str(SHARED_REPOS / "github.com" / f"{repo}.bundle"),
    ]
    args += ["--since", since, "--limit", str(limit), "--sandbox", sandbox, "--out", str(out)]
    done = subprocess.run(
        args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def first_parent(repo: str, since: str, limit: int) -> list[str]:
    mirror = shared_repo_cache() / "github.com" / f"{repo}.git"
    out = subprocess.run(
        ["git", "log", "--first-parent", "--format=%H", f"--since={since}", f"--max-count={limit}"],
        cwd=mirror,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def run_targets(tree: Path, runner: str, targets: list[str]) -> bool:
    """Whether every target passes, run with the plain toolchain."""
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = str(tree / "src") if (tree / "src").is_dir() else str(tree)
    for target in targets:
        import shlex

        tokens = shlex.split(target)
        if runner == "go":
            cmd = ["go", "test", "-count=1", *tokens]
        else:
            cmd = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",
                *tokens,
            ]
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            return False
    return True


def check_draft(folder: Path, repo: str, tmp: Path) -> None:
    data = yaml.safe_load((folder / "scenario.yml").read_text())
    assert data["repo"] == f"github.com/{repo}"
    assert DRAFT_INSTRUCTIONS in data["agent"]["instructions"]
    source = data["verify"]["tests-from"]
    mined = json.loads((folder / "mined.json").read_text())
    assert mined["fix_commit"] == source["commit"] and mined["parent"] == data["commit"]
    assert mined["fail_to_pass"], mined
    assert str(data["task-date"]) == mined["date"]
    assert not (folder / "hidden").exists(), "the tests stay in the repository"
    tree = tmp / folder.name
    mirror = shared_repo_cache() / "github.com" / f"{repo}.git"
    subprocess.run(["git", "clone", "-q", str(mirror), str(tree)], check=True)
    subprocess.run(["git", "checkout", "-q", data["commit"]], cwd=tree, check=True)
    subprocess.run(
        ["git", "checkout", source["commit"], "--", *source["paths"]], cwd=tree, check=True
    )
    runner, targets = data["verify"]["runner"], data["verify"]["tests"]
    assert not run_targets(tree, runner, targets), f"{folder.name}: tests pass before the fix"
    subprocess.run(["git", "apply", str(folder / "solution.patch")], cwd=tree, check=True)
    assert run_targets(tree, runner, targets), f"{folder.name}: tests fail after the fix"


_MINED: dict[str, Path] = {}


def mined(repo: str, factory: pytest.TempPathFactory) -> Path:
    """The output of `harness mine` on one CASES window (mined once per module)."""
    if repo not in _MINED:
        since, limit, _ = CASES[repo]
        out = factory.mktemp(repo.replace("/", "-")) / "mined"
        mine(repo, since, limit, out)
        _MINED[repo] = out
    return _MINED[repo]


@pytest.mark.parametrize("repo", sorted(CASES))
def test_mine_proves_candidates_and_explains_every_rejection(
    repo: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    since, limit, least = CASES[repo]
    out = mined(repo, tmp_path_factory)
    funnel = json.loads((out / "funnel.json").read_text())
    walked = first_parent(repo, since, limit)
    assert [c["sha"] for c in funnel["commits"]] == walked  # every commit, once, in order
    assert funnel["counts"]["walked"] == len(walked)
    for entry in funnel["commits"]:
        assert entry["stage"] in {"shape", "proven", "drafted"}
        assert entry["reason"].strip(), entry
    drafted = [c for c in funnel["commits"] if c["stage"] == "drafted"]
    assert len(drafted) >= least, (out / "funnel.md").read_text()
    assert funnel["counts"]["drafted"] == len(drafted)
    text = (out / "funnel.md").read_text()
    for entry in funnel["commits"]:
        assert entry["sha"][:10] in text and entry["reason"].replace("|", "\\|") in text
    for entry in drafted:
        check_draft(out / entry["reason"], repo, tmp_path)


def test_a_draft_is_refused_until_its_instructions_are_written(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    out = tmp_path / "mined"
    shutil.copytree(mined("keleshev/schema", tmp_path_factory), out)
    env = {
        **os.environ,
        "HARNESS_SCENARIO_ROOT": str(out),
        "HARNESS_REPO_CACHE": str(shared_repo_cache()),
        "HARNESS_SKIP_REMOTE": "1",
    }
    name = sorted(p.name for p in (out / "py").iterdir())[0]
    cmd = [sys.executable, "-m", "harness.cli", "validate", f"py/{name}"]
    done = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "agent.instructions" in done.stderr, done.stderr
    scenario = out / "py" / name / "scenario.yml"
    data = yaml.safe_load(scenario.read_text())
    data["agent"]["instructions"] = "Make wrong-key errors keep the key schema's custom error."
    scenario.write_text(yaml.safe_dump(data, sort_keys=False))
    done = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.docker
def test_mine_proves_in_docker(tmp_path: Path) -> None:
    from tests._docker import client_or_skip

    client_or_skip()
    out = tmp_path / "mined"
    mine("keleshev/schema", "2026-06-15", 1, out, sandbox="docker")
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["sandbox"] == "docker" and funnel["counts"]["drafted"] == 1, funnel
    check_draft(out / funnel["commits"][0]["reason"], "keleshev/schema", tmp_path)


def mine_commit(repo: str, sha: str, out: Path) -> dict[str, object]:
    """``harness mine --commit SHA`` on a shared bundle; its one funnel entry."""
    env = {
        **os.environ,
        "HARNESS_REPO_CACHE": str(shared_repo_cache()),
        "HARNESS_SKIP_REMOTE": "1",
        "HARNESS_WORKSPACE": str(out.parent / "ws"),
    }
    bundle = str(SHARED_REPOS / "github.com" / f"{repo}.bundle")
    args = [sys.executable, "-m", "harness.cli", "mine", bundle, "--commit", sha]
    args += ["--sandbox", "local", "--runs", "2", "--out", str(out)]
    done = subprocess.run(
        args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (entry,) = json.loads((out / "funnel.json").read_text())["commits"]
    return dict(entry)


def test_mine_drafts_tomli_from_its_src_layout(tmp_path: Path) -> None:
    """Issue 50: tomli's pyproject.toml never names src; its package is src/tomli."""
    entry = mine_commit("hukkin/tomli", "8b962e1", tmp_path / "mined")
    assert entry["stage"] == "drafted", entry
    folder = tmp_path / "mined" / str(entry["reason"])
    check_draft(folder, "hukkin/tomli", tmp_path)
    mined = json.loads((folder / "mined.json").read_text())
    # the leak check's list for the author: the message the fix raises
    assert any("TypeError" in m or "binary" in m for m in mined["do_not_tell"]["messages"])
    assert mined["leaks"] == []


@pytest.mark.parametrize(
    ("repo", "sha", "cause"),
    [
        # a Go repository from before go.mod: Go, and its vet failure named
        ("spf13/pflag", "298182f", "the tests do not build after the fix: build failure: "),
        # humanize imports its build-generated _version.py
        ("python-humanize/humanize", "a47a89e", "No module named 'humanize._version'"),
    ],
)
def test_a_rejection_names_its_real_cause(repo: str, sha: str, cause: str, tmp_path: Path) -> None:
    entry = mine_commit(repo, sha, tmp_path / "mined")
    assert entry["stage"] == "proven" and cause in str(entry["reason"]), entry
    assert "no runnable" not in str(entry["reason"])
