"""The runner map: each runner name to its package's ``run``, and the environment
``run_target`` gives every runner (no startup hooks of the controller's, the seed, the
scenario's variables)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.verify import go, python, runners
from harness.verify.outcome import TargetResult

pytestmark = pytest.mark.unit


def test_each_runner_name_maps_to_its_package() -> None:
    assert {"go": go.run, "pytest": python.run} == runners.RUNNERS


@pytest.mark.parametrize(("runner", "ran"), [("go", "go"), ("pytest", "pytest"), ("", "pytest")])
def test_run_target_hands_the_shared_environment_to_the_runner(
    runner: str, ran: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def fake(name: str) -> Any:
        def run(
            target: str, kind: Any, tree: Path, env: dict[str, str], timeout: float, **kw: Any
        ) -> TargetResult:
            seen.update(name=name, target=target, tree=tree, env=env, timeout=timeout, **kw)
            return TargetResult(target=target, kind=kind)

        return run

    monkeypatch.setattr(runners, "RUNNERS", {"go": fake("go"), "pytest": fake("pytest")})
    monkeypatch.setenv("PYTHONSTARTUP", "/evil.py")
    monkeypatch.setenv("LD_PRELOAD", "/evil.so")
    monkeypatch.setenv("PATH", "/usr/bin")
    result = runners.run_target(
        runner,
        "t",
        "required",
        tmp_path,
        seed="abc",
        timeout=9.0,
        python="py",
        extra_env={"PATH": "/opt/go/bin:$PATH", "EXTRA": "1"},
        canary=True,
        agent_files=(["a.py"], ["h.py"]),
    )
    assert result.target == "t" and seen["name"] == ran
    env = seen["env"]
    assert "PYTHONSTARTUP" not in env and "LD_PRELOAD" not in env
    assert env["HARNESS_SEED"] == "abc" and env["EXTRA"] == "1"
    assert env["PATH"] == "/opt/go/bin:/usr/bin"
    assert seen["python"] == "py" and seen["canary"] is True and seen["user"] is None
    assert seen["agent_files"] == (["a.py"], ["h.py"]) and seen["timeout"] == 9.0
