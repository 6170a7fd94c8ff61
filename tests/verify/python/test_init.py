"""The pytest runner's entry in the runner map hands its arguments on
(verify/python/__init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

import harness.verify.python as pytest_runner
from harness.verify.isolation.test_user import TestUser
from harness.verify.outcome import TargetResult

pytestmark = pytest.mark.unit


def test_run_hands_the_target_to_run_pytest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[tuple[Any, ...]] = []
    user = cast(TestUser, object())  # handed on, never looked into
    done = TargetResult(target="t.py", kind="required")

    def fake(*args: Any, **kwargs: Any) -> TargetResult:
        seen.append((args, kwargs))
        return done

    monkeypatch.setattr(pytest_runner, "run_pytest", fake)
    files = (["calc.py"], ["test_hidden.py"])
    got = pytest_runner.run(
        "t.py", "required", tmp_path, {"A": "1"}, 30.0,
        python="/opt/py/bin/python", user=user, canary=False, agent_files=files, twin=True,
    )  # fmt: skip
    assert got is done
    # (target, kind, tree, env, timeout, python, user, canary, agent files); twins are walls'
    assert seen == [
        (("t.py", "required", tmp_path, {"A": "1"}, 30.0, "/opt/py/bin/python", user, False,
          files), {}),
    ]  # fmt: skip
