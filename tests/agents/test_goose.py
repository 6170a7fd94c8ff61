"""goose adapter, at the config level: goose is not installable from a registry here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.goose import (
    CONFIG,
    TASK,
    GooseAgent,
    config_yaml,
    invocation,
    split_gateway,
)
from harness.errors import UserError
from harness.sandbox.base import ExecResult
from tests.agents.test_common import (
    GATEWAY,
    KEY,
    FakeSandbox,
    assert_only_gateway,
    make_ctx,
)

pytestmark = pytest.mark.unit
MODEL = "qwen/qwen3-coder-30b"


def test_split_gateway() -> None:
    assert split_gateway(GATEWAY) == ("http://harness-gw-1a2b:8080", "v1/chat/completions")
    assert split_gateway("http://gw:9") == ("http://gw:9", "chat/completions")


def test_config_points_at_the_gateway() -> None:
    cfg = json.loads(config_yaml(GATEWAY, MODEL))  # JSON is YAML: goose reads it as such
    assert cfg["GOOSE_PROVIDER"] == "openai"
    assert cfg["GOOSE_MODEL"] == MODEL
    assert cfg["OPENAI_HOST"] + "/" + cfg["OPENAI_BASE_PATH"] == GATEWAY + "/chat/completions"
    assert cfg["GOOSE_MODE"] == "auto"
    assert cfg["extensions"]["developer"]["enabled"] is True


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it\n")
    assert_only_gateway(inv)
    assert inv.argv[:2] == ["goose", "run"]
    assert inv.argv[inv.argv.index("--instructions") + 1] == TASK
    assert inv.files[TASK] == "fix it\n"
    assert CONFIG in inv.files
    assert inv.env["OPENAI_API_KEY"] == KEY
    assert inv.env["GOOSE_DISABLE_KEYRING"] == "1"
    assert KEY not in " ".join(inv.argv) + "".join(inv.files.values())


def test_version_says_goose_cannot_be_installed() -> None:
    with pytest.raises(UserError, match="not published on a package registry"):
        GooseAgent().version()


def test_run_with_a_fake_sandbox(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, "done\n", "", 1.0))
    result = GooseAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed"
    assert "calc.clamp" in sandbox.staged[TASK]
