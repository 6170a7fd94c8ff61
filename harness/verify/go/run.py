"""Run one Go target: its test binaries built by the builder and run by the test user
(``build``), the canary in every test binary, the checks of what the run reported, and
the negative twin of a passing target (``verify.go``'s ``run``)."""

from __future__ import annotations

import glob
import re
import shlex
import time
from collections.abc import Sequence
from pathlib import Path

from harness.provision.envcheck import classify_go
from harness.util import bounded
from harness.verify.go import build, directives, linkname, twin, twin_verdict
from harness.verify.go.canary import GoCanary, judge
from harness.verify.go.unrun import unrun, unselected
from harness.verify.isolation.held_names import reject
from harness.verify.isolation.test_command import home_env, tail
from harness.verify.isolation.test_user import TestUser
from harness.verify.outcome import Kind, TargetResult, TestCase

TEST_FUNC = re.compile(r"^func\s+(Test\w+)\s*\(", re.MULTILINE)


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
                    output=tail("\n".join(build_lines)),
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
                output=tail(out),
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
    *,
    twin: bool = True,
) -> TargetResult:
    cmd = go_command(target, tree)
    run = cmd[cmd.index("-run") + 1] if "-run" in cmd[:-1] else None  # the target's own
    start = time.monotonic()
    if why := directives.refusal(tree, changed, hidden):
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
        code, output = build.build_and_run(
            pattern, wanted, tree, go_env, timeout, user, closed, home_env
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
                    name=target, passed=False, output=tail(output), error=error, synthetic=True
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
        forged = linkname.reach(tree, changed, hidden)
    if twin and canary and forged is None and result.ok:  # passed: its twin too?
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
    """Why a passing Go target is forged by its negative twin (``verify.go.twin``)."""
    seed = build.seed_for(go_env)
    made = twin.plan(pattern, tree, hidden, go_env, build.builder_of(user), seed)
    passed = {c.name for c in result.tests if c.passed}
    if made is None or not made.tests & passed:  # no test it changes ran here
        return None
    closed = [tree / h for h in hidden]
    with twin.swapped(made):
        _, output = build.build_and_run(pattern, run, tree, go_env, timeout, user, closed, home_env)
    return twin_verdict.forged(result.tests, parse_go_json(output), made.tests)


def refused_target(target: str, kind: Kind, cmd: list[str], why: str) -> TargetResult:
    """A target not built: the agent's files steer the build (``verify.go.directives``)."""
    case = TestCase(name=target, passed=False, error="refused", synthetic=True, output=why)
    result = TargetResult(target=target, kind=kind, command=cmd, tests=[case], ok=False)
    return reject(result, why)
