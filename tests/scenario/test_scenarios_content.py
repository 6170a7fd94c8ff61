"""The shipped scenarios grade what they claim, checked without harness's engine.

For every scenario under ``scenarios/`` (and the goagentbench fixture): get its repository
at ``commit`` (a bundle in the scenario folder, or a URL-pinned repository from the
repository cache, ``HARNESS_REPO_CACHE``, as harness itself finds it), run the setup steps,
copy the hidden tests in, and run each test target with plain ``python -m pytest`` /
``go test``:

- the untouched workspace fails at least one required target (the nop agent must fail);
- workspace + solution.patch passes every target (the oracle must succeed);
- workspace + solution + each defect fails exactly the checks its ``breaks`` declares.

A check is named ``tests:<target>`` for targets in both ``tests`` and ``partial-tests``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.errors import InfraError, UserError
from harness.scenario.load import list_scenarios, load_scenario
from harness.scenario.model import LoadedScenario
from harness.scenario.repo import cached_mirror, resolve_source
from harness.scenario.repo import clone as harness_clone
from harness.verify.python.layout import src_layout
from tests.support.modules import load_file

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
FIXTURES = ROOT / "tests" / "fixtures" / "goagentbench"
# URL-pinned scenarios come from the repository cache the user points at (read once at
# import, before any fixture isolates the environment); on a machine with network and no
# cache they are cloned from their host, as `harness setup` would.
USER_CACHE = os.environ.get("HARNESS_REPO_CACHE")
SKIP_REMOTE = os.environ.get("HARNESS_SKIP_REMOTE", "").strip().lower() in {"1", "true", "yes"}
IN_CI = bool(os.environ.get("CI"))
# Offline copies of public repositories (<host>/<org>/<name>.bundle) on this project's
# machines, beside the checkout; used when the repository cache lacks a repository.
SHARED_REPOS = ROOT.parent / "shared" / "repos"

SHIPPED = list_scenarios(SCENARIOS)


def _is_repo_task(name: str) -> bool:
    """Scenarios graded by test targets (build-from-spec apps have their own suite tests)."""
    try:
        data = yaml.safe_load((SCENARIOS / name / "scenario.yml").read_text(encoding="utf-8"))
        verify = data.get("verify") or {}
    except (yaml.YAMLError, AttributeError):
        return False  # test_every_shipped_scenario_loads reports the broken file
    return bool(verify.get("tests") or verify.get("partial-tests")) and not verify.get("suite")


REPO_TASKS = [name for name in SHIPPED if _is_repo_task(name)]
CASES = [(SCENARIOS, name) for name in REPO_TASKS] + [(FIXTURES, "sorting")]


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONDONTWRITEBYTECODE="1",
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # scenario tests need no plugins; saves ~2 s a run
        GOPROXY="off",
        GOTOOLCHAIN="local",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    if "HOME" not in env and "GOCACHE" not in env:  # go needs a build cache somewhere
        env["GOCACHE"] = str(tmp / "gocache")
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd, env)
    assert done.returncode == 0, f"git {args} failed: {done.stderr}"


def _copy_into(src: Path, dest_dir: Path) -> None:
    """goagentbench copy semantics: a file goes into ``to``; a folder's contents merge in."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest_dir, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dest_dir / src.name)


def _fixture_cache(dest: Path) -> Path:
    """A repository cache holding the goagentbench fixture's stand-in for its URL."""
    mirror = dest / "github.com" / "example" / "sorting.git"
    if not mirror.exists():
        subprocess.run(
            ["git", "clone", "-q", "--mirror", str(FIXTURES / "sorting.bundle"), str(mirror)],
            check=True,
        )
    return dest


def _cache_for(loaded: LoadedScenario, tmp: Path) -> Path | None:
    """HARNESS_REPO_CACHE, or a cache made from ../shared/repos when only it has the repo."""
    user = Path(USER_CACHE).resolve() if USER_CACHE else None
    source = resolve_source(loaded)
    if source.kind != "remote" or cached_mirror(source, user) is not None:
        return user
    bundle = SHARED_REPOS / f"{source.cache_key}.bundle"
    if not bundle.is_file():
        return user
    mirror = tmp / "shared-cache" / f"{source.cache_key}.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(bundle), str(mirror)], check=True)
    return tmp / "shared-cache"


def _clone(loaded: LoadedScenario, base: Path, cache: Path | None) -> None:
    """The repository at ``commit``, found the way `harness setup` finds it."""
    source = resolve_source(loaded)
    hint = "build one with ../shared/repos/make-cache.sh DEST and set HARNESS_REPO_CACHE=DEST"
    if source.kind == "remote" and cached_mirror(source, cache) is None:
        reason = f"{loaded.name}: {source.cache_key} is not in the repository cache ({hint})"
        if IN_CI:
            pytest.fail(reason)
        if SKIP_REMOTE:
            pytest.skip(reason)
    try:
        harness_clone(loaded, base, cache, allow_remote=not SKIP_REMOTE)
    except UserError as exc:
        pytest.fail(f"{loaded.name}: {exc.one_line()}")
    except InfraError as exc:  # no route to the repository's host: a machine without both
        if IN_CI:
            pytest.fail(f"{loaded.name}: {exc.one_line()}")
        pytest.skip(f"{loaded.name}: {exc.one_line()} (or a repository cache: {hint})")


def _checks(loaded: LoadedScenario) -> dict[str, str]:
    """Check name -> test target, for tests and partial-tests."""
    verify = loaded.scenario.verify
    return {f"tests:{t}": t for t in [*verify.tests, *verify.partial_tests]}


def _prepare(loaded: LoadedScenario, base: Path, env: dict[str, str], cache: Path | None) -> Path:
    """The workspace after setup, with a commit so that patches apply to a clean tree."""
    _clone(loaded, base, cache)
    setup = loaded.scenario.setup_steps
    for step in setup.copy_:
        _copy_into(loaded.file(step.from_, "setup.copy"), base / step.to)
    for patch in setup.patch:
        _git(["apply", str(loaded.file(patch, "setup.patch"))], base, env)
    for command in setup.exec:
        done = _run(["bash", "-c", command], base, env)
        assert done.returncode == 0, f"setup exec {command!r} failed: {done.stderr}"
    _git(["add", "-A"], base, env)
    _git(["commit", "-q", "--allow-empty", "-m", "setup"], base, env)
    return base


@dataclass(frozen=True)
class Variant:
    name: str
    patches: tuple[Path, ...]


EPSILON = 0.01  # a check is broken when its score drops by more than this (README)


@dataclass(frozen=True)
class Held:
    """How a target held: every test passed (``fully``), or fewer than EPSILON of its
    tests failed (``nearly``: a drop the controls do not count as a cascade)."""

    fully: bool
    nearly: bool


def _target_passes(runner: str, workspace: Path, target: str, env: dict[str, str]) -> Held:
    """Whether the target holds: it passes, or (a check scored by the fraction of its
    tests that pass) fewer than EPSILON of its tests fail."""
    with tempfile.TemporaryDirectory(prefix="content-junit-") as tmp:
        junit = Path(tmp) / "junit.xml"
        if runner == "go":
            args = ["go", "test", "-json", *shlex.split(target)]
        else:
            args = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",  # as the verifier runs pytest: the repository's plugin options off
                f"--junitxml={junit}",
                *shlex.split(target),
            ]
        if runner == "pytest" and src_layout(workspace):  # as the verifier runs it
            env = {
                **env,
                "PYTHONPATH": os.pathsep.join(filter(None, ["src", env.get("PYTHONPATH")])),
            }
        done = _run(args, workspace, env)
        if runner == "pytest":
            assert done.returncode in (0, 1), (
                f"pytest could not run {target}: {done.stdout[-2000:]}"
            )
        if done.returncode == 0:
            return Held(True, True)
        passed, total = _counts(runner, done.stdout, junit)
    return Held(False, total > 0 and passed / total >= 1 - EPSILON)


def _counts(runner: str, stdout: str, junit: Path) -> tuple[int, int]:
    """(passed, total) test cases of a run: go test -json events, or pytest's JUnit XML."""
    if runner == "go":
        results: dict[tuple[str, str], bool] = {}
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                return 0, 0  # a build failure: no test ran
            if event.get("Test") and event.get("Action") in {"pass", "fail"}:
                results[(event.get("Package", ""), event["Test"])] = event["Action"] == "pass"
        return sum(results.values()), len(results)
    if not junit.is_file():
        return 0, 0
    cases = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("skipped") is None]
    bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    return len(cases) - len(bad), len(cases)


def _tests_from(loaded: LoadedScenario, tree: Path, cache: Path | None) -> None:
    """``verify.tests-from``: the fix commit's test files, read with plain git from the
    repository the scenario pins (the cache mirror, or the bundle beside the checkout)."""
    source = loaded.scenario.verify.tests_from
    if source is None:
        return
    mirror = cached_mirror(resolve_source(loaded), cache)
    assert mirror is not None, f"{loaded.name}: no mirror to read tests-from"
    archive = subprocess.run(
        ["git", "--git-dir", str(mirror), "archive", source.commit, "--", *source.paths],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)


def _failing_checks(
    loaded: LoadedScenario,
    base: Path,
    variants: list[Variant],
    tmp: Path,
    env: dict[str, str],
    cache: Path | None = None,
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Variant name -> names of the checks that do not fully pass, and of those that
    fail past EPSILON."""
    runner = loaded.scenario.runner(base)
    checks = _checks(loaded)
    trees: dict[str, Path] = {}
    for variant in variants:
        tree = tmp / f"v-{variant.name}"
        shutil.copytree(base, tree, symlinks=True)
        for patch in variant.patches:
            _git(["apply", str(patch)], tree, env)
        for step in loaded.scenario.verify.copy_:
            _copy_into(loaded.file(step.from_, "verify.copy"), tree / step.to)
        _tests_from(loaded, tree, cache)
        trees[variant.name] = tree
    jobs = [(v, c) for v in trees for c in checks]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        outcomes = list(
            pool.map(lambda job: _target_passes(runner, trees[job[0]], checks[job[1]], env), jobs)
        )
    failing: dict[str, set[str]] = {v: set() for v in trees}
    clearly: dict[str, set[str]] = {v: set() for v in trees}
    for (variant, check), held in zip(jobs, outcomes, strict=True):
        if not held.fully:
            failing[variant].add(check)
        if not held.nearly:
            clearly[variant].add(check)
    return failing, clearly


def _defects(loaded: LoadedScenario) -> dict[str, tuple[Path, set[str]]]:
    folder = loaded.directory / "defects"
    out: dict[str, tuple[Path, set[str]]] = {}
    for meta in sorted(folder.glob("*.yml")) if folder.is_dir() else []:
        data = yaml.safe_load(meta.read_text(encoding="utf-8"))
        assert set(data) == {"breaks", "harm"}, f"{meta}: keys must be breaks and harm"
        assert str(data["harm"]).strip(), f"{meta}: harm must name what a user suffers"
        out[meta.stem] = (meta.with_suffix(".patch"), set(data["breaks"]))
    return out


def _patched_paths(patch: Path) -> list[str]:
    return [
        line.split(" b/", 1)[1]
        for line in patch.read_text(encoding="utf-8").splitlines()
        if line.startswith("diff --git ")
    ]


def _matches(path: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return path == pattern or path.startswith(pattern + "/") or fnmatch.fnmatch(path, pattern)


@pytest.mark.parametrize(("root", "name"), CASES, ids=[n for _, n in CASES])
def test_scenario_grades_as_declared(root: Path, name: str, tmp_path: Path) -> None:
    loaded = load_scenario(name, root)
    scn = loaded.scenario
    if scn.runner() == "go" and shutil.which("go") is None:
        pytest.skip("go is not installed")
    assert scn.solution, f"{name}: a shipped scenario needs a solution"
    solution = loaded.file(scn.solution, "solution")
    checks = _checks(loaded)
    required = {f"tests:{t}" for t in scn.verify.tests}
    defects = _defects(loaded)
    for defect, (patch, breaks) in defects.items():
        assert patch.is_file(), f"{name}: defect {defect} has no .patch"
        assert breaks and breaks <= set(checks), f"{name}: {defect} breaks unknown checks"

    # The solution respects the scenario's own modification rules.
    touched = _patched_paths(solution)
    for pattern in scn.verify.must_modify:
        assert any(_matches(p, pattern) for p in touched), f"solution misses {pattern}"
    for pattern in scn.verify.no_modify:
        assert not any(_matches(p, pattern) for p in touched), f"solution touches {pattern}"
    for path in touched if scn.verify.only_modify else []:
        assert any(_matches(path, p) for p in scn.verify.only_modify), f"{path} not allowed"

    env = _env(tmp_path)
    if root == FIXTURES:
        cache: Path | None = _fixture_cache(tmp_path / "fixture-cache")
    else:
        cache = _cache_for(loaded, tmp_path)
    base = _prepare(loaded, tmp_path / "base", env, cache)
    variants = [Variant("plain", ()), Variant("solution", (solution,))]
    variants += [Variant(f"defect-{d}", (solution, p)) for d, (p, _) in defects.items()]
    failing, clearly = _failing_checks(loaded, base, variants, tmp_path, env, cache)

    assert failing["plain"] & required, f"{name}: the untouched workspace passes every target"
    assert clearly["solution"] == set(), f"{name}: the solution fails {failing['solution']}"
    # as the controls judge a defect: every declared target fails (one failing test
    # fails a target), and no undeclared one fails past EPSILON (no cascade)
    for defect, (_, breaks) in defects.items():
        broken, past = failing[f"defect-{defect}"], clearly[f"defect-{defect}"]
        assert past <= breaks <= broken, (
            f"{name}: defect {defect} breaks {sorted(broken)} ({sorted(past)} past "
            f"{EPSILON}), declared {sorted(breaks)}"
        )


def test_every_shipped_scenario_loads() -> None:
    root = Path("scenarios") if Path("scenarios").is_dir() else SCENARIOS
    for name in SHIPPED:
        assert load_scenario(name, root).name == name


def test_repo_task_scenarios_ship_bundle_version_and_defects() -> None:
    assert {"py/ledger-rounding", "go/wordfreq", "smoke/py-fast", "smoke/go-fast"} <= set(
        REPO_TASKS
    )
    for name in REPO_TASKS:
        loaded = load_scenario(name, SCENARIOS)
        assert loaded.scenario.version, f"{name}: shipped scenarios declare a version"
        kind = resolve_source(loaded).kind
        assert kind in {"bundle", "remote"}, (
            f"{name}: ship the repo as a bundle or pin it by URL (github.com/org/name)"
        )
        assert _defects(loaded), f"{name}: add at least one defect"
        assert not (loaded.directory / "src").exists(), f"{name}: source lives in the bundle"


def test_goagentbench_fixture_uses_only_goagentbench_fields() -> None:
    data = yaml.safe_load((FIXTURES / "sorting" / "scenario.yml").read_text(encoding="utf-8"))
    assert set(data) == {
        "name",
        "repo",
        "commit",
        "classification",
        "setup",
        "agent",
        "verify",
        "solution",
    }
    assert set(data["classification"]) == {
        "type",
        "has-spec",
        "single-package",
        "sees-failing-tests",
    }
    assert set(data["setup"]) == {"copy", "patch", "exec"}
    assert set(data["agent"]) == {"instructions", "allow-multiple-turns-on-failed-verify"}
    assert set(data["verify"]) == {
        "must-modify",
        "no-modify",
        "only-modify",
        "copy",
        "tests",
        "partial-tests",
    }
    assert load_scenario("sorting", FIXTURES).scenario.repo == "github.com/example/sorting"


def _bundle_tool() -> object:
    return load_file(ROOT / "scripts" / "make_repo_bundle.py")


def test_make_repo_bundle_is_deterministic(tmp_path: Path) -> None:
    tool = _bundle_tool()
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "b.py").write_text("B = 2\n")
    (src / "a.txt").write_text("a\n")
    (src / "pkg" / "__pycache__").mkdir()
    (src / "pkg" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"junk")
    first = tool.make_bundle(src, tmp_path / "one.bundle")  # type: ignore[attr-defined]
    second = tool.make_bundle(src, tmp_path / "two.bundle")  # type: ignore[attr-defined]
    assert first == second and len(first) == 40
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "two.bundle"), str(clone)], check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert head == first
    assert sorted(
        p.relative_to(clone).as_posix()
        for p in clone.rglob("*")
        if p.is_file() and ".git" not in p.parts
    ) == ["a.txt", "pkg/b.py"]
    (src / "a.txt").write_text("changed\n")
    assert tool.make_bundle(src, tmp_path / "three.bundle") != first  # type: ignore[attr-defined]


def test_url_pinned_scenario_is_checked_through_the_repo_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scenario pinned by URL (as goagentbench's are) is graded from HARNESS_REPO_CACHE;
    without a cache, and with remote access off, the skip says how to build one."""
    root = tmp_path / "scenarios"
    folder = root / "x" / "pinned"
    shutil.copytree(SCENARIOS / "smoke" / "py-fast", folder)
    cache = tmp_path / "cache"
    mirror = cache / "github.com" / "acme" / "pinned.git"
    subprocess.run(
        ["git", "clone", "-q", "--mirror", str(folder / "repo.bundle"), str(mirror)], check=True
    )
    (folder / "repo.bundle").unlink()
    yml = folder / "scenario.yml"
    yml.write_text(yml.read_text().replace("repo: repo.bundle", "repo: github.com/acme/pinned"))
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "USER_CACHE", str(cache))
    (tmp_path / "run").mkdir()
    test_scenario_grades_as_declared(root, "x/pinned", tmp_path / "run")
    monkeypatch.setattr(module, "USER_CACHE", None)
    monkeypatch.setattr(module, "SKIP_REMOTE", True)
    monkeypatch.setattr(module, "IN_CI", False)
    (tmp_path / "again").mkdir()
    with pytest.raises(pytest.skip.Exception) as skipped:
        test_scenario_grades_as_declared(root, "x/pinned", tmp_path / "again")
    assert "HARNESS_REPO_CACHE" in str(skipped.value)
    # Beside the checkout, ../shared/repos/<host>/<org>/<name>.bundle stands in for a cache.
    shared = tmp_path / "shared"
    (shared / "github.com" / "acme").mkdir(parents=True)
    bundle = shared / "github.com" / "acme" / "pinned.bundle"
    subprocess.run(
        ["git", "-C", str(mirror), "bundle", "create", "-q", str(bundle), "--all"], check=True
    )
    monkeypatch.setattr(module, "SHARED_REPOS", shared)
    made = _cache_for(load_scenario("x/pinned", root), tmp_path / "made")
    assert made is not None and (made / "github.com" / "acme" / "pinned.git").is_dir()
