"""Run one Go target: ``go test -json``, the shared build cache, the canary in every test
binary, and the checks of what the run reported (``verify.go``'s ``run``)."""

from __future__ import annotations

import glob
import json
import re
import shlex
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from harness.provision.envcheck import classify_go
from harness.verify.go import linkname
from harness.verify.go.cache import read_only_cache
from harness.verify.go.canary import GoCanary, judge
from harness.verify.go.unrun import unrun, unselected
from harness.verify.isolation.held_names import reject
from harness.verify.isolation.test_command import home_env, run_command, tail
from harness.verify.isolation.test_user import TestUser, test_home
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
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
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
) -> TargetResult:
    cmd = go_command(target, tree)
    run = cmd[cmd.index("-run") + 1] if "-run" in cmd[:-1] else None  # the target's own
    bird = GoCanary.plan(cmd[4], tree) if canary else None  # go test -json -count=1 PATTERN
    run_cmd = bird.command(cmd) if bird else cmd
    cache = Path(tempfile.gettempdir()) / "harness-go"
    go_env = {
        "GOCACHE": str(cache / "cache"),
        "GOPATH": str(cache / "path"),
        "GOFLAGS": "-buildvcs=false",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        **env,
    }
    if "-buildvcs" not in go_env["GOFLAGS"]:
        go_env["GOFLAGS"] = f"-buildvcs=false {go_env['GOFLAGS']}".strip()
    go_env["GOWORK"] = "off"  # a go.work of the tree's own never redirects the build
    start = time.monotonic()
    with test_home(user.uid if user else None) as home:
        shared = None
        if user is not None:  # a warm build cache it can read, not write (verify.go.cache)
            shared = read_only_cache(cmd, tree, go_env, timeout, user)  # no canary in it
            go_env = shared.env
        try:
            if bird:
                bird.write(tree)
            code, output = run_command(run_cmd, tree, {**go_env, **home_env(home)}, timeout, user)
            if shared is not None and code != 0 and shared.refused(output):
                if bird:
                    bird.remove(tree)
                shared.warm(force=True)  # a miss Go had to store: build it, run once more
                if bird:
                    bird.write(tree)
                code, output = run_command(
                    run_cmd, tree, {**go_env, **home_env(home)}, timeout, user
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
    return reject(result, forged) if forged else result
