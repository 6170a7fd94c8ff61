"""The conditions a grader's proof holds under.

``harness controls`` proves the grader for one scenario *in one environment*: the scorer
image (Docker) or the host's toolchain (local), and the dependency lock files of the
scenario's baseline. A proof made elsewhere says nothing about here, so a report compares
the environment it was verified in with the one recorded in ``controls.json`` and says
NOT PROVEN FOR THIS ENVIRONMENT when they differ.

A reference solution that cannot even run (an import error, a package that does not
build, a missing toolchain) is an environment error, never a low score.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import InfraError
from harness.results import now_iso
from harness.scenario.model import LoadedScenario
from harness.scoring import Thresholds
from harness.scoring.era import load_thresholds
from harness.util import trialgit
from harness.util.fs import read_json, write_json

NOT_PROVEN_HERE = "NOT PROVEN FOR THIS ENVIRONMENT"
CONTROLS_FILE = "controls.json"
# A test target passes only when every test of it passes (goagentbench's rule): a
# defect declaring a target proves it broken with one failing test, however big the
# target, and a tree succeeds (as its trial would) only with every test passing
TEST_SUITE_THRESHOLDS = Thresholds(
    calibrated=False, high=0.99, low=0.2, declared_epsilon=0.0, success_bar=1.0
)

# Files that pin what a scenario's code depends on (their content is the "lock").
LOCK_FILES = frozenset(
    {
        "go.mod",
        "go.sum",
        "requirements.txt",
        "requirements-dev.txt",
        "requirements-test.txt",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "Pipfile.lock",
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
    }
)

# Output that says the code could not run at all, rather than that a test failed.
ENVIRONMENT_MARKERS = (
    "ModuleNotFoundError",
    "ImportError",
    "No module named",
    "cannot find package",
    "no required module provides package",
    "cannot find module providing package",
    "missing go.sum entry",
    "invalid go version",
    "requires go >=",
    "command not found",
    "executable file not found",
    "No such file or directory: 'go'",
)


@functools.lru_cache(maxsize=8)
def _tool_version(*cmd: str) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else None


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def local_toolchain(runner: str | None) -> dict[str, str | None]:
    """What grades a tree on the host: the interpreter, the test runner, go."""
    info: dict[str, str | None] = {"python": ".".join(map(str, sys.version_info[:3]))}
    if runner in (None, "pytest"):
        info["pytest"] = _package_version("pytest")
    if runner in (None, "go"):
        info["go"] = _tool_version("go", "version")
    return info


def dependency_lock(workspace: Path, baseline: str) -> str | None:
    """sha256 over the lock files of the baseline tree (by git blob id); None if none."""
    listing = trialgit.baseline_read(workspace, ["ls-tree", "-r", "--full-tree", baseline]) or ""
    rows = sorted(
        f"{path}\0{fields.split()[2]}"
        for fields, _, path in (line.partition("\t") for line in listing.splitlines())
        if Path(path).name in LOCK_FILES
    )
    if not rows:
        return None
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def environment(
    loaded: LoadedScenario,
    sandbox: str,
    workspace: Path,
    baseline: str,
    *,
    on_host: bool,
    image: str | None = None,
) -> dict[str, Any]:
    """The conditions of one verification: where it ran (``sandbox``, a backend on this host
    or not) and what the code depends on."""
    env: dict[str, Any] = {"sandbox": sandbox}
    if not on_host:  # graded in an image
        env["verify_image"] = image
    else:
        try:
            runner = loaded.scenario.runner(workspace)
        except Exception:  # an app scenario has no test runner
            runner = None
        env["toolchain"] = local_toolchain(runner)
    env["dependencies"] = dependency_lock(workspace, baseline)
    return env


def mismatch(proven: dict[str, Any] | None, here: dict[str, Any]) -> str | None:
    """Why a proof made in ``proven`` does not hold ``here``; None when it does."""
    if not proven:
        return "the proof records no environment"
    for key in sorted(set(proven) | set(here)):
        if proven.get(key) != here.get(key):
            return f"{key}: proven with {short(proven.get(key))}, here {short(here.get(key))}"
    return None


def short(value: Any) -> str:
    if isinstance(value, str) and len(value) > 24:
        return value.removeprefix("sha256:")[:12]
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def write_proof(path: Path, record: dict[str, Any]) -> None:
    """Write ``record`` (one environment's proof) to ``controls.json``: it is the file's
    latest proof (its top level, as before), and ``proofs`` keeps the latest proof of every
    environment (by sandbox) of the same scenario content, so proving the grader on local
    does not erase the proof on Docker, nor the other way round."""
    record = {k: v for k, v in record.items() if k != "proofs"}
    proofs: dict[str, Any] = {}
    try:
        old = read_json(path) if path.is_file() else {}
    except (OSError, ValueError):
        old = {}
    if isinstance(old, dict) and old.get("scenario_sha") == record.get("scenario_sha"):
        proofs = dict(old.get("proofs") or {})
        if not proofs and old.get("sandbox"):  # a file written before proofs were kept
            proofs[str(old["sandbox"])] = {k: v for k, v in old.items() if k != "proofs"}
    proofs[str(record.get("sandbox"))] = record
    write_json(path, {**record, "proofs": dict(sorted(proofs.items()))})


def proof_for(data: dict[str, Any], here: dict[str, Any] | None) -> dict[str, Any]:
    """The proof in ``controls.json`` that speaks for ``here``: the one made on the same
    sandbox when the file keeps it, else the latest."""
    proofs = data.get("proofs")
    if here and isinstance(proofs, dict):
        found = proofs.get(str(here.get("sandbox")))
        if isinstance(found, dict):
            return found
    return data


def verdict_here(recorded: dict[str, Any], here: dict[str, Any] | None) -> str | None:
    """NOT PROVEN FOR THIS ENVIRONMENT (with the reason), or None when the proof holds."""
    if here is None:
        return None
    why = mismatch(recorded.get("environment"), here)
    return None if why is None else f"{NOT_PROVEN_HERE} ({why}; run `harness controls`)"


def reference_error(outcome: Any) -> str | None:
    """Why the reference solution could not run at all, or None if it ran (even badly).

    ``outcome`` is a VerifyOutcome of the reference tree."""
    if outcome is None:
        return None
    if getattr(outcome, "error", None):
        return str(outcome.error)
    for target in getattr(outcome, "targets", []) or []:
        for case in target.tests:
            if case.passed:
                continue
            text = f"{case.error or ''}\n{case.output or ''}"
            marker = next((m for m in ENVIRONMENT_MARKERS if m in text), None)
            broken = case.error in {"error", "package failed"} or "ran no tests" in text
            if marker or broken:
                line = next(
                    (ln.strip() for ln in text.splitlines() if marker and marker in ln),
                    (case.error or "error").strip(),
                )
                return f"{target.target}: {case.name}: {line[:200]}"
    return None


def refuse_errored_reference(
    outcome: Any,
    loaded: LoadedScenario,
    sandbox: str,
    here: dict[str, Any],
    record: Path,
) -> None:
    """Raise an environment error (exit 3) when the reference cannot run here, and
    withdraw any earlier proof for this scenario in this environment (``record``)."""
    why = reference_error(outcome)
    if why is not None:
        write_proof(
            record,
            {
                "scenario": loaded.name,
                "scenario_version": loaded.version,
                "scenario_sha": loaded.sha256,
                "at": now_iso(),
                "sandbox": sandbox,
                "environment": here,
                "verdict": f"GRADER NOT PROVEN (the reference solution errors here: {why})",
                "trusted": False,
            },
        )
        raise InfraError(
            f"{loaded.name}: the reference solution errors in this environment ({sandbox}), "
            f"so nothing is proven: {why}. Fix the environment (toolchain, prepared "
            "dependencies) or the solution, then run `harness controls` again"
        )


def thresholds_for(loaded: LoadedScenario) -> Thresholds:
    """The scenario suite's thresholds.yml, or the fixed ones of a test-based scenario."""
    suite = loaded.scenario.verify.suite
    if suite and (loaded.directory / suite / "thresholds.yml").is_file():
        return load_thresholds(loaded.directory / suite / "thresholds.yml")
    return TEST_SUITE_THRESHOLDS


def grader_verdict(
    results: Path,
    loaded_name: str,
    scenario_sha: str | None,
    environment: dict[str, Any] | None = None,
) -> str:
    """The verdict of the latest controls for this exact scenario content (and, when
    ``environment`` is given, for the environment the tree was verified in)."""
    path = results / loaded_name / CONTROLS_FILE
    if not path.is_file():
        return f"GRADER NOT PROVEN (run `harness controls {loaded_name}`)"
    data = proof_for(read_json(path), environment)
    if data.get("scenario_sha") != scenario_sha:
        return f"GRADER NOT PROVEN (scenario changed since `harness controls {loaded_name}`)"
    elsewhere = verdict_here(data, environment)
    if elsewhere is not None:
        return elsewhere
    return str(data.get("verdict"))
