"""The one registry idiom (harness.util.registry) and the five registries built on it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.util.registry import LazyMap, Registry, import_spec

pytestmark = pytest.mark.unit


def test_names_load_lazily_and_unknown_names_list_the_choices() -> None:
    reg: Registry[object] = Registry(
        "widget", "harness.test-widgets", {"path": "pathlib:Path", "gone": "no_such_mod:X"}
    )
    assert reg.names() == ["path", "gone"]
    assert reg.load("path") is Path
    with pytest.raises(UserError, match=r"unknown widget 'vm'.*use one of: path, gone"):
        reg.load("vm")
    with pytest.raises(UserError, match="widget 'gone' cannot be imported"):
        reg.load("gone")
    reg.register("vm", int)
    assert reg.load("vm") is int and "vm" in reg.names()


def test_a_missing_module_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    reg: Registry[object] = Registry(
        "executor", "harness.test-executors", {"ray": "ray:init"}, extras={"ray": "ray"}
    )
    with pytest.raises(UserError) as err:
        reg.load("ray")
    assert "executor 'ray' needs the ray extra: pip install -e '.[ray]'" in err.value.one_line()


def test_a_bad_spec_is_a_user_error() -> None:
    reg: Registry[object] = Registry("format", "harness.test-formats", {"x": "pathlib:Nope"})
    with pytest.raises(UserError, match="cannot be loaded"):
        reg.load("x")
    with pytest.raises(ValueError):
        import_spec("pathlib")


def test_lazy_map_imports_only_the_asked_for_key() -> None:
    probe = (
        "import sys; from harness.agents.registry import AGENTS, REAL_AGENTS; "
        "names = set(REAL_AGENTS) | set(AGENTS.names()); "
        "loaded = [m for m in sys.modules if m.startswith('harness.agents.') "
        "and m.rsplit('.', 1)[1] in ('openhands', 'codex', 'aider', 'claude')]; "
        "print(len(names), loaded, REAL_AGENTS['openhands'].name)"
    )
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=root, check=True
    )
    # listing names imports no adapter; asking for one imports only that one
    assert done.stdout.split() == ["11", "[]", "openhands"], done.stdout + done.stderr
    from harness.agents.registry import REAL_AGENTS

    assert isinstance(REAL_AGENTS, LazyMap)


def test_every_extension_kind_uses_the_idiom() -> None:
    from harness.agents.registry import AGENTS
    from harness.backends import BACKENDS
    from harness.job.executors.base import EXECUTOR_REGISTRY
    from harness.report.formats import REPORT_FORMATS
    from harness.verify.scoring_bridge import SCORER_KINDS

    groups = {r.group for r in (AGENTS, BACKENDS, EXECUTOR_REGISTRY, REPORT_FORMATS, SCORER_KINDS)}
    assert groups == {
        "harness.agents",
        "harness.backends",
        "harness.executors",
        "harness.report_formats",
        "harness.scorers",
    }
    assert EXECUTOR_REGISTRY.names() == ["local", "ray"]
    assert REPORT_FORMATS.names() == ["table", "csv", "json", "md"]
    assert SCORER_KINDS.names() == ["tests", "suite"]
    assert {"oracle", "nop", "codex"} <= set(AGENTS.names())
    with pytest.raises(UserError, match="unknown format 'xml'"):
        REPORT_FORMATS.load("xml")


def test_every_scenario_field_is_described() -> None:
    from harness.scenario.model import json_schema

    schema = json_schema()
    models = [schema, *schema["$defs"].values()]
    undescribed = [
        f"{m.get('title')}.{name}"
        for m in models
        for name, prop in (m.get("properties") or {}).items()
        if "description" not in prop
    ]
    assert undescribed == []
