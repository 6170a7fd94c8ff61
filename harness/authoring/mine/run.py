"""``harness mine``: walk, split, prove and draft, one commit at a time."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from harness.authoring.leaks import find_leaks, watch_list
from harness.authoring.mine.draft import Draft, draft_name, solution_diff, write_draft
from harness.authoring.mine.funnel import Entry, Funnel
from harness.authoring.mine.prove import RUNS, Proof, Prover
from harness.authoring.mine.split import Runner, shape_problem, split, targets_for
from harness.authoring.mine.walk import Commit, canonical_name, first_parent, named, open_repo
from harness.config.settings import Settings
from harness.scenario.load import load_scenario
from harness.util.git import git


@dataclass(frozen=True)
class MineOptions:
    out: Path
    since: str | None = None
    limit: int | None = None
    sandbox: str = "docker"
    runs: int = RUNS
    repo_name: str | None = None  # what drafts say in repo:; default from the source
    commits: tuple[str, ...] = ()  # only these commits (else the first-parent walk)


def has_go_mod(repo: Path, sha: str) -> bool:
    return git(["cat-file", "-e", f"{sha}:go.mod"], repo, check=False).returncode == 0


def runner_of(repo: Path, sha: str, tests: list[str] | None = None) -> Runner:
    """Go when the tree has a go.mod, or (a Go repository from before modules: pflag
    until 2019) when the changed test files are Go tests and none is Python."""
    if has_go_mod(repo, sha):
        return "go"
    tests = tests or []
    go = any(t.endswith("_test.go") for t in tests)
    return "go" if go and not any(t.endswith(".py") for t in tests) else "pytest"


def module_path(repo_name: str) -> str:
    """The module path a Go repository without go.mod is given (its import path)."""
    name = repo_name.rstrip("/").removesuffix(".git").removesuffix(".bundle")
    if re.match(r"^[a-z0-9.-]+\.[a-z]+/", name):
        return name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name.rsplit("/", 1)[-1]) or "repo"


def final_targets(
    runner: Runner,
    proof: Proof,
    targets: list[str],
    separates: Callable[[str], bool] = lambda _: True,
) -> list[str]:
    """The graded targets: first the fail-to-pass tests of each target (a check that
    one wrong behaviour breaks clearly; for Go, the failing subtests when their table
    test also holds passing ones and ``separates`` confirms the narrowed target fails
    before and passes after), then each whole target when it also holds pass-to-pass
    tests, narrowed to leave out flaky tests when there are any."""
    focused, whole = [], []
    for target in targets:
        f2p = sorted({n for t, n in proof.f2p if t == target})
        p2p = sorted({n for t, n in proof.p2p if t == target})
        flaky = sorted({n for t, n in proof.flaky if t == target})
        if f2p:
            narrow = _go_subtests(target, f2p, p2p) if runner == "go" else None
            if narrow and not separates(narrow):
                narrow = None
            focused.append(narrow or _only(runner, target, f2p, []))
        if p2p:
            whole.append(target if not flaky else _only(runner, target, f2p + p2p, flaky))
    return focused + whole


GO_REGEXP_SPECIAL = frozenset("\\.+*?()|[]{}^$")


def _go_quote(name: str) -> str:
    return "".join("\\" + c if c in GO_REGEXP_SPECIAL else c for c in name)


def _go_subtests(target: str, f2p: list[str], p2p: list[str]) -> str | None:
    """``target`` narrowed to the failing subtests, level by level (``go test -run
    '^(A)$/^(b)$'``), when their top-level tests also hold passing subtests: a table test
    with a thousand passing cases hides one failing case from a graded fraction. None
    when the top-level names are narrow enough (or a name cannot be quoted)."""
    tops = {n.split("/")[0] for n in f2p}
    if not any(n.split("/")[0] in tops and "/" in n for n in p2p):
        return None
    leaves = [n for n in f2p if not any(o.startswith(n + "/") for o in f2p)]
    if any("/" not in n for n in leaves) or any("'" in n for n in leaves):
        return None  # a top-level test fails by itself: all of it must run
    parts = [n.split("/") for n in leaves]
    levels = []
    for depth in range(max(len(p) for p in parts)):
        names = sorted({p[depth] for p in parts if len(p) > depth})
        levels.append(f"^({'|'.join(_go_quote(n) for n in names)})$")
    return f"{target} -run '{'/'.join(levels)}'"


def _only(runner: Runner, target: str, names: list[str], flaky: list[str]) -> str:
    """``target`` narrowed to the tests ``names`` (Go: top-level names, anchored), or,
    for pytest with flaky tests, to everything but them."""
    if runner == "go":
        bad = {n.split("/")[0] for n in flaky}
        tops = sorted({n.split("/")[0] for n in names} - bad)
        return f"{target} -run '^({'|'.join(tops)})$'"

    def funcs(ns: list[str]) -> list[str]:
        return sorted({re.sub(r"\[.*$", "", n.split("::")[-1]) for n in ns})

    if flaky:
        return f"{target} -k 'not ({' or '.join(funcs(flaky))})'"
    return f"{target} -k '{' or '.join(funcs(names))}'"


def mine(
    source: str,
    options: MineOptions,
    settings: Settings,
    progress: Callable[[str], None] = lambda _: None,
) -> Funnel:
    funnel = Funnel(source, options.since, options.limit, options.sandbox, options.runs)
    scratch = Path(tempfile.mkdtemp(prefix="harness-mine-src-"))
    prover = Prover(settings, options.sandbox, options.runs)
    try:
        repo = open_repo(source, scratch)
        name_in_yml = options.repo_name or canonical_name(source) or str(repo)
        walk = (
            named(repo, list(options.commits))
            if options.commits
            else first_parent(repo, since=options.since, limit=options.limit)
        )
        for commit in walk:
            entry = one(commit, repo, name_in_yml, options, prover, scratch)
            progress(f"{commit.sha[:10]} {entry.stage}: {entry.reason}")
            funnel.add(entry)
    finally:
        prover.close()
        shutil.rmtree(scratch, ignore_errors=True)
    funnel.write(options.out)
    return funnel


def one(
    commit: Commit, repo: Path, repo_name: str, options: MineOptions, prover: Prover, tmp: Path
) -> Entry:
    parts = split(commit)
    problem = shape_problem(commit, parts)
    head = (commit.sha, commit.date, commit.subject)
    if problem:
        return Entry(*head, "shape", problem)
    assert commit.parent is not None  # shape_problem refuses root commits
    runner = runner_of(repo, commit.parent, parts.tests)
    targets = targets_for(runner, parts.tests)
    if not targets:
        return Entry(
            *head,
            "shape",
            f"no runnable {runner} test target among the changed test files "
            f"({', '.join(parts.tests[:4])})",
        )
    synthesized = None
    if runner == "go" and not has_go_mod(repo, commit.parent):
        synthesized = module_path(repo_name)  # GOPATH-era code: a module of its import path
    draft = Draft(
        name=draft_name(repo_name, commit.sha),
        runner=runner,
        repo=str(repo),
        parent=commit.parent,
        sha=commit.sha,
        date=commit.date,
        subject=commit.subject,
        tests=parts.tests,
        code=parts.code,
        targets=targets,
        go_module=synthesized,
    )
    solution = solution_diff(repo, commit.parent, commit.sha, parts.code + parts.other)
    probe_root = tmp / "probe" / commit.sha[:12]
    folder = write_draft(probe_root, draft, solution)
    try:
        loaded = load_scenario(f"{draft.family}/{draft.name}", probe_root)
        proof = prover.prove(loaded)
        counts = (len(proof.f2p), len(proof.p2p), len(proof.flaky))
        if proof.problem:
            return Entry(*head, "proven", proof.problem, *counts)
        draft.targets = final_targets(runner, proof, targets, partial(prover.separates, loaded))
    finally:
        shutil.rmtree(probe_root, ignore_errors=True)
    draft.repo = repo_name
    draft.provenance = {
        "fix_commit": commit.sha,
        "parent": commit.parent,
        "date": commit.date,
        "subject": commit.subject,
        "sandbox": options.sandbox,
        "runs": options.runs,
        "before_build_failed": proof.before_build_failed,
        "fail_to_pass": [f"{t} :: {n}" for t, n in proof.f2p],
        "pass_to_pass": [f"{t} :: {n}" for t, n in proof.p2p],
        "flaky_dropped": [f"{t} :: {n}" for t, n in proof.flaky],
    }
    text = solution.decode(errors="replace")
    draft.provenance["do_not_tell"] = watch_list(text)  # what the task text must not spell out
    said = find_leaks(f"{commit.subject}\n{commit.sha}", text)  # the subject the draft quotes
    draft.provenance["leaks"] = [f.line() for f in said]
    folder = write_draft(options.out, draft, solution)
    return Entry(*head, "drafted", folder.relative_to(options.out).as_posix(), *counts)
