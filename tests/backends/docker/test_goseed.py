"""The Go seed of a Docker verification, built once before the verifier starts
(backends/docker/goseed.py); the container is a stand-in here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness.backends.docker.goseed as goseed
from harness.errors import InfraError
from harness.sandbox.base import ExecResult
from harness.scenario.policy import SandboxPolicy
from harness.verify.go.seed import ROOT_ENV
from harness.verify.request import GOSEED_INSIDE, VerifyRequest

pytestmark = pytest.mark.unit


def request(root: Path | None, env: dict[str, str] | None = None) -> VerifyRequest:
    mounts = {"/opt/go": "/usr/local/go"}
    if root is not None:
        mounts[str(root)] = GOSEED_INSIDE
    docker_env = env if env is not None else {ROOT_ENV: GOSEED_INSIDE, "PATH": "/usr/local/go/bin",
                                              "GOFLAGS": "-mod=mod", "SECRET": "x"}  # fmt: skip
    return VerifyRequest(
        scenario="s", baseline="b", seed="1", runner="go", hidden_root="/h",
        mounts=mounts, docker_env=docker_env,
    )  # fmt: skip


class FakeSandbox:
    made: list[FakeSandbox] = []
    code = 0
    fails: InfraError | None = None

    def __init__(self, spec: Any, create_project: bool = True) -> None:
        self.spec, self.create_project = spec, create_project
        self.calls: list[Any] = []
        FakeSandbox.made.append(self)

    def start(self) -> None:
        self.calls.append("start")
        if FakeSandbox.fails is not None:
            raise FakeSandbox.fails

    def exec(self, cmd: list[str], **kw: Any) -> ExecResult:
        self.calls.append(cmd)
        return ExecResult(returncode=FakeSandbox.code, stdout="", stderr="", duration_s=1.0)

    def stop(self) -> None:
        self.calls.append("stop")


@pytest.fixture(autouse=True)
def fake(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeSandbox.made, FakeSandbox.code, FakeSandbox.fails = [], 0, None
    monkeypatch.setattr(goseed, "DockerSandbox", FakeSandbox)


def ensure(req: VerifyRequest, image_id: str = "sha256:1") -> bool:
    return goseed.ensure_seed("scorer", image_id, req, SandboxPolicy(), {"trial": "t"})


def test_the_seeds_folder_is_the_mount_at_the_seed_path(tmp_path: Path) -> None:
    assert goseed.seed_root(request(tmp_path)) == tmp_path
    assert goseed.seed_root(request(None)) is None
    ro = request(None).model_copy(update={"mounts": {str(tmp_path): f"{GOSEED_INSIDE}:ro"}})
    assert goseed.seed_root(ro) == tmp_path


def test_no_seeds_folder_or_no_seed_variable_builds_nothing(tmp_path: Path) -> None:
    assert not ensure(request(None))
    assert not ensure(request(tmp_path, env={"PATH": "/bin"}))
    assert FakeSandbox.made == []


def test_a_seed_is_built_once_in_a_network_less_container(tmp_path: Path) -> None:
    root = tmp_path / "seeds"
    assert ensure(request(root))
    [box] = FakeSandbox.made
    assert box.calls[0] == "start" and box.calls[-1] == "stop" and not box.create_project
    spec = box.spec
    assert spec.network == "none" and spec.workspace is None and spec.phase == "verify"
    assert (
        spec.mounts[str(root)] == f"{GOSEED_INSIDE}:rw"
        and spec.mounts["/opt/go"] == "/usr/local/go"
    )
    assert spec.labels == {"trial": "t", "harness.goseed": "1"}
    cmd = box.calls[1]
    assert cmd[:4] == ["python3", "-m", "harness.verify.go.seed", GOSEED_INSIDE]
    assert json.loads(cmd[4]) == {"PATH": "/usr/local/go/bin", "GOFLAGS": "-mod=mod"}  # tools only
    assert len(list(root.glob(".ready-*"))) == 1
    assert ensure(request(root)) and len(FakeSandbox.made) == 1  # ready: not built again
    assert ensure(request(root), image_id="sha256:2") and len(FakeSandbox.made) == 2  # new image


@pytest.mark.parametrize("how", ["exit", "infra"])
def test_a_seed_that_cannot_be_built_is_no_failure(tmp_path: Path, how: str) -> None:
    if how == "exit":
        FakeSandbox.code = 1
    else:
        FakeSandbox.fails = InfraError("docker is gone")
    assert not ensure(request(tmp_path / "seeds"))
    assert FakeSandbox.made[0].calls[-1] == "stop"
    assert list((tmp_path / "seeds").glob(".ready-*")) == []
