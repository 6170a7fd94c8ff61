"""Build a VerifyRequest from a scenario and a workspace state."""

from __future__ import annotations

from pathlib import Path

from harness.scenario import LoadedScenario
from harness.verify.engine import HiddenCopy, VerifyRequest


def make_request(
    loaded: LoadedScenario, workspace: Path, baseline: str, seed: str, *, copy_only: bool = False
) -> VerifyRequest:
    scn = loaded.scenario
    v = scn.verify
    return VerifyRequest(
        scenario=loaded.name,
        baseline=baseline,
        seed=seed,
        runner=scn.runner(workspace),
        must_modify=v.must_modify,
        no_modify=v.no_modify,
        only_modify=v.only_modify,
        tests=v.tests,
        partial_tests=v.partial_tests,
        copy=[HiddenCopy(**{"from": c.from_, "to": c.to}) for c in v.copy_],
        hidden_root=str(loaded.directory),
        suite_dir=str(loaded.directory / v.suite) if v.suite else None,
        timeout_s=scn.environment.verify_timeout,
        copy_only=copy_only,
    )
