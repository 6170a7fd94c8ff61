"""Run one pytest target: the boot script, the canary, the agent's and the hidden files'
listings, and the checks of what the run reported (``verify.python``'s ``run``)."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from harness.provision.envcheck import classify_pytest
from harness.verify.isolation import output_pipe
from harness.verify.isolation.held_names import reject
from harness.verify.isolation.test_command import home_env, run_command, tail
from harness.verify.isolation.test_user import TestUser, test_home
from harness.verify.outcome import AgentFiles, Kind, TargetResult, TestCase
from harness.verify.python import agent_files as agent_listing
from harness.verify.python import hidden_files, logged_outcomes
from harness.verify.python.boot import pytest_boot
from harness.verify.python.canary import Canary, applies, split
from harness.verify.python.junit import read_junit


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
        listing = agent_listing.write_listing(home, *agent_files)
        if listing is not None:  # a skip the agent's code raised is a failure
            env = {**env, agent_listing.ENV: str(listing)}
        hidden = hidden_files.write_listing(home, agent_files[1])
        if hidden is not None:  # the agent's code may not read them as they run
            env = {**env, hidden_files.ENV: str(hidden)}
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
        code, output = run_command(
            cmd,
            tree,
            {
                **env,
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                **home_env(home),
            },
            timeout,
            user,
        )
        # every process of the run is dead by now: the report cannot change any more
        tests = read_junit(junit)
        if bird:
            bird.remove(tree)
    try:  # a report changed after pytest wrote it
        streamed = logged_outcomes.rejection(tests, output)
    except RecursionError:  # a tagged line the code under test printed, nested to crash json
        streamed = "results forged: a report-stream line nested too deep to read"
    output = logged_outcomes.without(output)
    forged = None
    if bird:
        tests, forged = split(bird, tests)
        if code == 1 and tests and all(c.passed for c in tests):
            code = 0  # only the canary failed, as it must
    forged = output_pipe.rejection(code) or forged or streamed  # the stream was taken over
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
            TestCase(name=target, passed=False, output=tail(output), error=error, synthetic=True)
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
