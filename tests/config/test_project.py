"""A command that needs the project, outside one: the refusal says where harness looked."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config.project import require_project, require_scenarios
from harness.config.settings import Settings
from harness.errors import UserError

pytestmark = pytest.mark.unit


def test_outside_a_project_the_error_says_where_it_looked(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    s = Settings.from_env(cwd=empty, environ={})
    assert not s.project_found
    with pytest.raises(UserError) as err:
        require_project(s)
    line = err.value.one_line()
    assert "agents.yml" in line and str(empty.resolve()) in line and "HARNESS_HOME" in line
    with pytest.raises(UserError, match=r"agents\.yml"):
        require_scenarios(s)


def test_harness_home_without_agents_yml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_HOME", str(tmp_path))
    s = Settings.from_env(cwd=tmp_path)
    with pytest.raises(UserError, match=r"HARNESS_HOME has no agents\.yml"):
        require_project(s)
