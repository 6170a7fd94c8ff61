"""crush adapter, at the config level: its npm launcher downloads a release binary from a
host that is not reachable here, so there is no image to run it in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.crush import CONFIG, DATA, CrushAgent, config, invocation
from harness.errors import UserError
from harness.sandbox.base import ExecResult
from tests.agents.test_common import GATEWAY, KEY, FakeSandbox, assert_only_gateway, make_ctx

pytestmark = pytest.mark.unit
MODEL = "qwen/qwen3-coder-30b"


def test_config_has_the_gateway_as_its_only_provider() -> None:
    cfg = config(GATEWAY, MODEL)
    assert list(cfg["providers"]) == ["harness"]
    provider = cfg["providers"]["harness"]
    assert provider["type"] == "openai-compat" and provider["base_url"] == GATEWAY
    assert provider["api_key"] == "$HARNESS_API_KEY"
    assert [m["id"] for m in provider["models"]] == [MODEL]
    assert {s["model"] for s in cfg["models"].values()} == {MODEL}
    assert cfg["options"]["disable_provider_auto_update"] is True
    assert cfg["options"]["disable_metrics"] is True


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    assert inv.argv[:2] == ["crush", "run"] and "--yolo" in inv.argv
    assert inv.argv[-1] == "fix it"
    assert json.loads(inv.files[CONFIG])["options"]["data_directory"] == DATA
    assert inv.env["HARNESS_API_KEY"] == KEY
    assert KEY not in " ".join(inv.argv) + "".join(inv.files.values())
    assert CONFIG.startswith("/tmp/") and DATA.startswith("/tmp/")


def test_version_says_crush_cannot_be_installed() -> None:
    with pytest.raises(UserError, match="downloads a release binary"):
        CrushAgent().version()


def test_run_with_a_fake_sandbox(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, "done\n", "", 1.0))
    result = CrushAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed"
    assert CONFIG in sandbox.staged
