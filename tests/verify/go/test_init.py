"""The Go runner's entry in the runner map hands its arguments on (verify/go/__init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

import harness.verify.go as go_runner
from harness.verify.isolation.test_user import TestUser
from harness.verify.outcome import TargetResult

pytestmark = pytest.mark.unit


def test_run_hands_the_target_to_run_go(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[tuple[Any, ...]] = []
    user = cast(TestUser, object())  # handed on, never looked into
    done = TargetResult(target="./...", kind="partial")

    def fake(*args: Any, **kwargs: Any) -> TargetResult:
        seen.append((args, kwargs))
        return done

    monkeypatch.setattr(go_runner, "run_go", fake)
    env = {"GOFLAGS": "-mod=mod"}
    got = go_runner.run(
        "./...", "partial", tmp_path, env, 12.5,
        python="/unused/python", user=user, canary=True,
        agent_files=(["a.go"], ["a_hidden_test.go"]), twin=True,
    )  # fmt: skip
    assert got is done
    args, kwargs = seen[0]
    # (target, kind, tree, env, timeout, user, canary, hidden, changed), twin by name
    assert args == ("./...", "partial", tmp_path, env, 12.5, user, True,
                    ["a_hidden_test.go"], ["a.go"])  # fmt: skip
    assert kwargs == {"twin": True}
