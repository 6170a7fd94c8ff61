"""Test runners: ``go test -json`` and pytest (JUnit XML), giving per-test results."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import stat
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from harness.provision.envcheck import classify_go, classify_pytest
from harness.provision.toolchain import expand
from harness.util import bounded
from harness.verify import (
    eqguard,
    gobuild,
    godirectives,
    golinkname,
    outputpipe,
    peekguard,
    reportstream,
    runnerguard,
    skipcharge,
)
from harness.verify.canary import Canary, applies, split
from harness.verify.gocanary import GoCanary, judge
from harness.verify.gounrun import unrun, unselected
from harness.verify.heldnames import reject
from harness.verify.outcome import TargetResult, TestCase
from harness.verify.pylayout import src_layout
from harness.verify.testuser import TestUser, run_reaped, test_home
from harness.verify.twins import go as gotwins
from harness.verify.twins import verdict as twins

Kind = Literal["required", "partial"]
AgentFiles = tuple[Sequence[str], Sequence[str]]  # (changed files, hidden files)
TEST_FUNC = re.compile(r"^func\s+(Test\w+)\s*\(", re.MULTILINE)
OUTPUT_CAP = 4000
# pytest and its plugins are imported before the tree joins sys.path, and the tree comes
# after the standard library: a tree module cannot stand in for either
PYTEST_BOOT = (
    "import sys\n"
    "sys.path[:] = [p for p in sys.path if p not in ('', '.')]\n"
    "import pytest\n"
    "import types as _types\n"
    "_harness_plugins = []  # given to pytest.main: registered as they are, not rewritten\n"
    "{plugins}"
    "std = [i for i, p in enumerate(sys.path) if '-packages' not in p]\n"
    "sys.path.insert(max(std, default=-1) + 1, '')\n"
    "{src}"
    "sys.argv[0] = 'pytest'\n"
    "raise SystemExit(int(pytest.main(plugins=_harness_plugins)))\n"
)
# a src-layout project's package, where an install would put it: right after the tree root
PYTEST_SRC = "sys.path.insert(sys.path.index('') + 1, 'src')\n"


def pytest_boot(tree: Path) -> str:
    """The boot script for ``tree``: ``src`` joins the path after the tree root when the
    tree is a src-layout project (``pylayout.src_layout``)."""
    plugins = skipcharge.PLUGIN + runnerguard.PLUGIN + eqguard.PLUGIN + peekguard.PLUGIN
    plugins += reportstream.PLUGIN
    boot = PYTEST_BOOT.replace("{plugins}", plugins)
    return boot.replace("{src}", PYTEST_SRC if src_layout(tree) else "")


STARTUP_ENV = frozenset(
    {"PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONEXECUTABLE"}
    | {"PYTEST_ADDOPTS", "PYTEST_PLUGINS", "GOENV", "LD_PRELOAD"}
)


def _tail(text: str, limit: int = OUTPUT_CAP) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float, user: TestUser | None = None
) -> tuple[int | None, str]:
    """Run a test command under the reaper (as ``user``): every process of it is dead
    when this returns, so nothing of the run can touch what is parsed afterwards."""
    if shutil.which(cmd[0], path=env.get("PATH")) is None and not Path(cmd[0]).is_file():
        return 127, f"{cmd[0]}: command not found"
    ran = run_reaped(cmd, cwd, env, timeout, user)
    return ran.returncode, ran.output


def go_command(target: str, tree: Path) -> list[str]:
    """Translate a goagentbench test entry into a ``go test -json`` command line."""
    tokens = shlex.split(target)
    pattern, rest = tokens[0], tokens[1:]
    run: str | None = None
    for i, tok in enumerate(rest):
        if tok.startswith("-run="):
            run = tok.split("=", 1)[1]
        elif tok == "-run" and i + 1 < len(rest):
            run = rest[i + 1]
    if pattern.endswith(".go") or any(c in pattern for c in "*?["):
        files = sorted(glob.glob(str(tree / pattern)))
        names = sorted({n for f in files for n in TEST_FUNC.findall(Path(f).read_text())})
        pkg_dir = Path(files[0]).parent if files else tree / Path(pattern).parent
        pattern = "./" + (pkg_dir.relative_to(tree).as_posix() if pkg_dir != tree else "")
        pattern = pattern.rstrip("/") or "."
        run = run or ("^(" + "|".join(names) + ")$" if names else "^$")
    elif not pattern.startswith((".", "/")):
        pattern = "./" + pattern
    cmd = ["go", "test", "-json", "-count=1", pattern]
    if run:
        cmd += ["-run", run]
    return cmd


def parse_go_json(stdout: str) -> list[TestCase]:
    """Per-test pass/fail from ``go test -json`` events (subtests included)."""
    outputs: dict[str, list[str]] = {}
    results: dict[str, TestCase] = {}
    build_lines: list[str] = []
    for line in stdout.splitlines():
        parsed, ev = bounded.json_value(line)  # a line the code under test printed, too
        if not parsed or not isinstance(ev, dict):
            build_lines.append(line)
            continue
        test, action = ev.get("Test"), ev.get("Action")
        if not test:
            if action in {"output", "build-output"}:  # go 1.24+: build errors as events
                build_lines.append(ev.get("Output", "").rstrip("\n"))
            elif action == "fail" and not any(k.startswith(ev.get("Package", "")) for k in results):
                pkg = ev.get("Package", "package")
                results[f"{pkg} [build]"] = TestCase(
                    name=f"{pkg} [build]",
                    passed=False,
                    error="package failed",
                    synthetic=True,
                    output=_tail("\n".join(build_lines)),
                )
            continue
        key = f"{ev.get('Package', '')}.{test}"
        if action == "output":
            outputs.setdefault(key, []).append(ev.get("Output", ""))
        elif action in {"pass", "fail"}:
            if key in results and not results[key].passed:
                # a test runs once (-count=1): a pass after its failure is a line the
                # code under test printed ("--- PASS: Name"), which go 1.19's test2json
                # takes for a result; a failure stays a failure
                continue
            out = "".join(outputs.get(key, []))
            results[key] = TestCase(
                name=test,
                passed=action == "pass",
                output=_tail(out),
                error=None if action == "pass" else "failed",
            )
    return list(results.values())


def run_go(
    target: str,
    kind: Kind,
    tree: Path,
    env: dict[str, str],
    timeout: float,
    user: TestUser | None = None,
    canary: bool = False,
    hidden: Sequence[str] = (),
    changed: Sequence[str] = (),
) -> TargetResult:
    cmd = go_command(target, tree)
    run = cmd[cmd.index("-run") + 1] if "-run" in cmd[:-1] else None  # the target's own
    start = time.monotonic()
    if why := godirectives.refusal(tree, changed, hidden):
        return refused_target(target, kind, cmd, why)
    bird = GoCanary.plan(cmd[4], tree) if canary else None  # go test -json -count=1 PATTERN
    run_cmd = bird.command(cmd) if bird else cmd
    go_env = {
        "GOFLAGS": "-buildvcs=false",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",  # nothing of the tree runs while building (environment.cgo)
        **env,
    }
    if "-buildvcs" not in go_env["GOFLAGS"]:
        go_env["GOFLAGS"] = f"-buildvcs=false {go_env['GOFLAGS']}".strip()
    go_env["GOWORK"] = "off"  # a go.work of the tree's own never redirects the build
    # Go 1.19 indexes packages into the cache and insists on storing the index: off
    go_env["GODEBUG"] = ",".join(filter(None, [go_env.get("GODEBUG", ""), "goindex=0"]))
    closed = [tree / h for h in hidden]
    try:
        if bird:
            bird.write(tree)
            closed += [tree / rel / bird.file for rel, _ in bird.dirs]
        pattern = run_cmd[4]
        wanted = run_cmd[run_cmd.index("-run") + 1] if "-run" in run_cmd[:-1] else None
        code, output = gobuild.build_and_run(
            pattern, wanted, tree, go_env, timeout, user, closed, _home_env
        )
    finally:
        if bird:
            bird.remove(tree)
    tests = parse_go_json(output)
    forged = None
    if bird:
        tests, forged, only_canaries = judge(bird, output, tests, code)
        if only_canaries and forged is None:  # the canary ran: did the suite's tests?
            forged = unrun(tree, bird, hidden, run, output)
            only_canaries = forged is None
        if code == 1 and only_canaries:
            code = 0  # only the canaries failed, as they must
    error = env_error = None
    if code is None:
        error = "timeout"
    elif code != 0:
        env_error = classify_go(output, tree, modcache=go_env.get("GOMODCACHE"))
        if not tests:  # a build or toolchain failure before any test ran
            error = env_error or f"go test failed before running tests (exit {code})"
            tests = [
                TestCase(
                    name=target, passed=False, output=_tail(output), error=error, synthetic=True
                )
            ]
    # goagentbench: a target passes iff `go test` exits 0 ("no test files" included)
    result = TargetResult(
        target=target,
        kind=kind,
        command=cmd,
        tests=tests,
        error=error,
        duration_s=time.monotonic() - start,
        exit_code=code,
        ok=code == 0,
        env_error=env_error,
    )
    if bird and forged is None:  # a pass the target's -run cannot have produced
        forged = unselected(tests, run)
    if canary and forged is None:  # the agent's code rewrote the binary's test table
        forged = golinkname.reach(tree, changed, hidden)
    if canary and forged is None and result.ok:  # passed: does it pass its twin too?
        forged = _twin(cmd[4], run, tree, go_env, timeout, user, hidden, result)
    return reject(result, forged) if forged else result


def _twin(
    pattern: str,
    run: str | None,
    tree: Path,
    go_env: dict[str, str],
    timeout: float,
    user: TestUser | None,
    hidden: Sequence[str],
    result: TargetResult,
) -> str | None:
    """Why a passing Go target is forged by its negative twin (``verify.twins``)."""
    seed = gobuild.seed_for(go_env)
    twin = gotwins.plan(pattern, tree, hidden, go_env, gobuild.builder_of(user), seed)
    passed = {c.name for c in result.tests if c.passed}
    if twin is None or not twin.tests & passed:  # no test it changes ran here
        return None
    closed = [tree / h for h in hidden]
    with gotwins.swapped(twin):
        _, output = gobuild.build_and_run(
            pattern, run, tree, go_env, timeout, user, closed, _home_env
        )
    return twins.forged(result.tests, parse_go_json(output), twin.tests)


def refused_target(target: str, kind: Kind, cmd: list[str], why: str) -> TargetResult:
    """A target not built: the agent's files steer the build (``verify.godirectives``)."""
    case = TestCase(name=target, passed=False, error="refused", synthetic=True, output=why)
    result = TargetResult(target=target, kind=kind, command=cmd, tests=[case], ok=False)
    return reject(result, why)


def parse_junit(xml_text: str) -> list[TestCase]:
    """Per-test results from a JUnit XML file (skipped tests are left out)."""
    root = ET.fromstring(xml_text)
    cases: list[TestCase] = []
    for case in root.iter("testcase"):
        name = "::".join(p for p in (case.get("classname", ""), case.get("name", "")) if p)
        if case.find("skipped") is not None:
            continue
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is None:
            cases.append(TestCase(name=name, passed=True))
        else:
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            cases.append(
                TestCase(name=name, passed=False, output=_tail(text.strip()), error=bad.tag)
            )
    return cases


JUNIT_CAP = 64 * 1024 * 1024


def read_junit(path: Path) -> list[TestCase]:
    """The report the run left, when it is a plain, sane file (a link, a huge or a
    malformed report counts as no report: the run reported nothing usable)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return []
    if not stat.S_ISREG(st.st_mode) or st.st_size > JUNIT_CAP:
        return []
    try:
        return parse_junit(path.read_text(errors="replace"))
    except ET.ParseError:
        return []


def run_pytest(
    target: str,
    kind: Kind,
    tree: Path,
    env: dict[str, str],
    timeout: float,
    python: str,
    user: TestUser | None = None,
    canary: bool = False,
    agent_files: AgentFiles = ((), ()),
) -> TargetResult:
    tokens = shlex.split(target)
    bird = Canary.fresh() if canary and applies(tokens) else None
    with test_home(user.uid if user else None) as home:
        junit = home / "junit.xml"
        listing = skipcharge.write_listing(home, *agent_files)
        if listing is not None:  # a skip the agent's code raised is a failure
            env = {**env, skipcharge.ENV: str(listing)}
        hidden = peekguard.write_listing(home, agent_files[1])
        if hidden is not None:  # the agent's code may not read them as they run
            env = {**env, peekguard.ENV: str(hidden)}
        cmd = [
            python,
            "-s",  # no user site (a .pth there would run first)
            "-c",
            pytest_boot(tree),
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            f"--rootdir={tree}",
            "-o",
            "addopts=",
            *tokens,
            *([bird.rel] if bird else []),
        ]
        if bird:
            bird.write(tree)
        start = time.monotonic()
        code, output = _run(
            cmd,
            tree,
            {
                **env,
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                **_home_env(home),
            },
            timeout,
            user,
        )
        # every process of the run is dead by now: the report cannot change any more
        tests = read_junit(junit)
        if bird:
            bird.remove(tree)
    try:  # a report changed after pytest wrote it
        streamed = reportstream.rejection(tests, output)
    except RecursionError:  # a tagged line the code under test printed, nested to crash json
        streamed = "results forged: a report-stream line nested too deep to read"
    output = reportstream.without(output)
    forged = None
    if bird:
        tests, forged = split(bird, tests)
        if code == 1 and tests and all(c.passed for c in tests):
            code = 0  # only the canary failed, as it must
    forged = outputpipe.rejection(code) or forged or streamed  # the stream was taken over
    cmd[3] = "<harness: import pytest before the tree is on sys.path>"
    if bird:
        cmd[-1] = "<harness: a canary test that must fail>"
    error = env_error = None
    if "--collect-only" in tokens:  # validate --deep: collecting (importing) is the build
        tests = [] if code == 0 else tests
        if code == 0:
            return TargetResult(
                target=target,
                kind=kind,
                command=[Path(cmd[0]).name, *cmd[1:]],
                exit_code=0,
                ok=True,
            )
    if code is None:
        error = "timeout"
    elif code != 0:
        env_error = classify_pytest(output, tree)
    if code is not None and not tests:
        error = env_error or f"pytest ran no tests (exit {code})"
        tests = [
            TestCase(name=target, passed=False, output=_tail(output), error=error, synthetic=True)
        ]
    result = TargetResult(
        target=target,
        kind=kind,
        command=[Path(cmd[0]).name, *cmd[1:]],
        tests=tests,
        error=error,
        duration_s=time.monotonic() - start,
        exit_code=code,
        ok=code == 0 and bool(tests) and error is None,
        env_error=env_error,
    )
    return reject(result, forged) if forged else result


def run_target(
    runner: str,
    target: str,
    kind: Kind,
    tree: Path,
    *,
    seed: str,
    timeout: float,
    python: str,
    extra_env: dict[str, str] | None = None,
    user: TestUser | None = None,
    canary: bool = False,
    agent_files: AgentFiles = ((), ()),
) -> TargetResult:
    """Run one target (as ``user`` when given); ``extra_env`` (the scenario's toolchain
    and dependency variables, ``$PATH``/``$PYTHONPATH`` standing for the current values)
    wins over the process's. ``canary``: a pytest target runs a failing canary beside the
    suite, a Go target one in each package it tests, and a report where one passed is
    rejected as forged (``verify.canary``, ``verify.gocanary``). ``agent_files``: the
    tree's changed files and the hidden ones; a pytest skip raised from one of the
    agent's is a failure (``verify.skipcharge``)."""

    env = {k: v for k, v in os.environ.items() if k not in STARTUP_ENV}
    env["HARNESS_SEED"] = seed  # nothing of the controller's own steers the tests
    env.update(expand(extra_env or {}, env))
    if runner == "go":
        return run_go(target, kind, tree, env, timeout, user, canary, *agent_files[::-1])
    return run_pytest(target, kind, tree, env, timeout, python, user, canary, agent_files)


def _home_env(home: Path) -> dict[str, str]:
    """The test user's own home and temp folder (the caller's TMPDIR, e.g. a Ray worker's
    0700 folder, may not be theirs to write)."""
    tmp = str(home / "tmp")
    return {
        "HOME": str(home),
        "USER": "harness-tests",
        "LOGNAME": "harness-tests",
        "TMPDIR": tmp,
        "GOTMPDIR": tmp,
    }
