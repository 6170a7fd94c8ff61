"""What the verifier is asked to do (``VerifyRequest``), and how a scenario makes one.

The request is serialisable: it crosses into the scorer container as JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from harness.config.settings import read_env
from harness.verify.isolation.test_user import LOCAL_TEST_UID
from harness.verify.rules import Dialect

if TYPE_CHECKING:
    from harness.config.settings import Settings
    from harness.scenario.model import LoadedScenario


class HiddenCopy(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str


class VerifyRequest(BaseModel):
    """Everything the verifier needs, serialisable so it can cross into a container."""

    model_config = ConfigDict(populate_by_name=True)

    scenario: str
    baseline: str
    seed: str
    runner: str
    must_modify: list[str] = Field(default_factory=list)
    no_modify: list[str] = Field(default_factory=list)
    only_modify: list[str] = Field(default_factory=list)
    rules_dialect: Dialect = "harness"  # goagentbench's matching for its unversioned files
    tests: list[str] = Field(default_factory=list)
    partial_tests: list[str] = Field(default_factory=list)
    copy_: list[HiddenCopy] = Field(default_factory=list, alias="copy")
    hidden_root: str
    tests_from_root: str | None = None  # the fix commit's test files (verify.tests-from)
    tests_from: list[str] = Field(default_factory=list)  # their paths in the tree
    suite_dir: str | None = None
    solution_file: str | None = None  # the reference solution (patch or folder): parity, twins
    spec_file: str | None = None  # the scenario's SPEC, staged beside the suite for its MUST ids
    evidence_dir: str | None = None
    python: str = Field(default_factory=lambda: sys.executable)
    timeout_s: float = 600.0
    copy_only: bool = False
    compile_only: bool = False  # validate --deep: build the tests, run none
    env: dict[str, str] = Field(default_factory=dict)  # toolchain + dependency variables
    docker_env: dict[str, str] = Field(default_factory=dict)  # the same, paths inside
    mounts: dict[str, str] = Field(default_factory=dict)  # host folder -> inside, read-only
    provision_error: str | None = None  # preparing the toolchain or dependencies failed
    toolchain: dict[str, Any] = Field(default_factory=dict)  # what the host chose, and why
    runner_files: list[str] = Field(default_factory=list)  # runner-steering paths allowed
    test_uid: int | None = LOCAL_TEST_UID  # the uid hidden tests run as (when root)
    test_reads_all: bool = True  # on a host: the test user may read (not write) any file
    # outcome parity with the reference and negative twins (verify.walls): on unless
    # HARNESS_VERIFY_WALLS=0 (they run each hidden target up to four times)
    walls: bool = Field(default_factory=lambda: read_env(WALLS_ENV) != "0")


WALLS_ENV = "HARNESS_VERIFY_WALLS"
GOSEED_INSIDE = "/opt/harness-goseed"  # the Go seeds, read-only (verify.go.seed)


def make_request(
    loaded: LoadedScenario,
    workspace: Path,
    baseline: str,
    seed: str,
    *,
    copy_only: bool = False,
    on_host: bool = False,
    settings: Settings | None = None,
) -> VerifyRequest:
    """What the verifier is asked; ``settings`` (default: the environment's) says where
    the repository of a ``tests-from`` scenario is read from."""
    scn = loaded.scenario
    v = scn.verify
    chain: dict[str, object] = {}
    if not copy_only:
        chain = _provisioned(loaded, workspace, baseline, on_host)
    from_root = _tests_from(loaded, settings)
    return VerifyRequest(
        **chain,  # type: ignore[arg-type]
        scenario=loaded.name,
        baseline=baseline,
        seed=seed,
        runner=scn.runner(workspace),
        must_modify=v.must_modify,
        no_modify=v.no_modify,
        only_modify=v.only_modify,
        rules_dialect="goagentbench" if scn.version is None else "harness",
        tests=v.tests,
        partial_tests=v.partial_tests,
        runner_files=v.runner_files,
        copy=[HiddenCopy(**{"from": c.from_, "to": c.to}) for c in v.copy_],
        hidden_root=str(loaded.directory),
        tests_from_root=str(from_root) if from_root else None,
        tests_from=v.tests_from.paths if v.tests_from else [],
        suite_dir=str(loaded.directory / v.suite) if v.suite else None,
        spec_file=str(loaded.directory / scn.spec) if v.suite and scn.spec else None,
        solution_file=str(loaded.directory / scn.solution) if scn.solution else None,
        timeout_s=scn.environment.verify_timeout,
        copy_only=copy_only,
    )


def _tests_from(loaded: LoadedScenario, settings: Settings | None) -> Path | None:
    """The fix commit's test files, read from the repository now (verify.tests-from)."""
    if loaded.scenario.verify.tests_from is None:
        return None
    from harness.config.settings import Settings
    from harness.verify.tests_from import materialize

    return materialize(loaded, settings or Settings.from_env())


def _provisioned(
    loaded: LoadedScenario, workspace: Path, baseline: str, on_host: bool
) -> dict[str, object]:
    """The toolchain and dependency fields of the request. A download or resolution
    failure becomes ``provision_error`` (the verdict is then ``error``), never a crash."""
    from harness.errors import InfraError
    from harness.provision import provision
    from harness.provision.toolchain import local_python

    try:
        prov = provision(loaded, workspace, baseline, on_host=on_host)
    except InfraError as exc:
        return {"provision_error": exc.one_line()}
    mounts, docker_env, local_env = prov.mounts(), prov.env(on_host=False), prov.env(on_host=True)
    if prov.runner == "go":
        # cgo off unless declared: nothing of the tree runs while it is built
        cgo = "1" if loaded.scenario.environment.cgo else "0"
        local_env["CGO_ENABLED"] = docker_env["CGO_ENABLED"] = cgo
        # The standard library built by the toolchain alone, read-only to every test and
        # build (verify.go.seed): the local verifier builds its seed itself; a container's
        # is built before it starts (backends.docker.verify) and mounted read-only.
        from harness.config.settings import cache_dir
        from harness.verify.go.seed import ROOT_ENV

        local_env[ROOT_ENV] = str(cache_dir() / "goseed-local")
        if not on_host:
            mounts[str(cache_dir() / "goseed-docker")] = GOSEED_INSIDE
            docker_env[ROOT_ENV] = GOSEED_INSIDE
    python = local_python(prov.python) if on_host else None
    return {
        **({"python": python} if python else {}),
        "env": local_env,
        "docker_env": docker_env,
        "mounts": mounts,
        "toolchain": prov.record(),
    }
