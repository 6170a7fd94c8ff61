"""Loading a scenario folder: ``scenario.yml`` parsed and checked (its targets, its
version against the folder's suffix, the files it names), the folder's hash, and the
names of every scenario under a root.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from pydantic import ValidationError

from harness.errors import UserError
from harness.scenario.hints import scenario_hint
from harness.scenario.model import (
    DRAFT_INSTRUCTIONS,
    FOLDER_VERSION,
    SCENARIO_FILE,
    LoadedScenario,
    Scenario,
    format_validation_error,
)
from harness.scenario.targets import TargetError, parse_go_target
from harness.util.fs import in_tool_cache
from harness.util.strict_yaml import parse_yaml, read_text


def parse_scenario(text: str, file: Path) -> Scenario:
    """Parse YAML text into a Scenario, or raise a one-line UserError."""
    data = parse_yaml(text, file)
    if not isinstance(data, dict):
        raise UserError(
            "the file is empty" if data is None else "the file must be a YAML mapping of keys",
            file=file,
            field="(top level)",
            fix="start with 'name:', 'repo:', 'commit:'",
        )
    try:
        scn = Scenario.model_validate(data)
    except ValidationError as err:
        raise format_validation_error(err, file) from None
    check_targets(scn, file)
    return scn


def check_targets(scn: Scenario, file: Path) -> None:
    """Go targets follow goagentbench's grammar; pytest targets must split like a shell."""
    go = scn.runner() == "go"
    for key, entries in (("tests", scn.verify.tests), ("partial-tests", scn.verify.partial_tests)):
        for i, entry in enumerate(entries):
            try:
                if go:
                    parse_go_target(entry)
                else:
                    shlex.split(entry)
            except TargetError as exc:
                raise UserError(
                    f"{exc} in '{entry.strip()}'",
                    file=file,
                    field=f"verify.{key}[{i}]",
                    fix=exc.fix,
                ) from None
            except ValueError as exc:
                raise UserError(
                    f"'{entry}' does not split into words: {exc}",
                    file=file,
                    field=f"verify.{key}[{i}]",
                    fix="close the quote",
                ) from None


def scenario_dir(name: str, root: Path) -> Path:
    """The folder of scenario ``name`` (a path under the scenario root)."""
    candidate = Path(name)
    if candidate.is_absolute() or ((candidate / SCENARIO_FILE).exists() and name.startswith(".")):
        return candidate.resolve()
    return (root / name).resolve()


#: The calibration ledger's file name (``grader.calibration_ledger.LEDGER``): evidence of scorings,
#: not content. Lines added after a scenario is locked (a Docker controls run, another
#: seed) neither grade nor change what the agent sees, so they make no new version.
#: The mutant ledger (``mutants.jsonl``) and its triage (``mutants.yml``) are evidence
#: about the grader too: neither changes what a trial sees or how it is graded.
EVIDENCE_FILES = frozenset({"calibration.jsonl", "mutants.jsonl", "mutants.yml"})


def folder_files(directory: Path) -> list[Path]:
    """The files a scenario folder's hash covers, sorted (tool caches and the evidence
    files left out)."""
    return [
        p
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not in_tool_cache(p, directory) and p.name not in EVIDENCE_FILES
    ]


def folder_hash(directory: Path) -> str:
    """sha256 over every file's relative path and bytes, in sorted order (the calibration
    ledger left out)."""
    digest = hashlib.sha256()
    for path in folder_files(directory):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _check_version(scn: Scenario, directory: Path, file: Path) -> Scenario:
    match = FOLDER_VERSION.search(directory.name)
    if not match:
        return scn
    folder_v = match.group(1)
    if scn.version is None:
        return scn.model_copy(update={"version": folder_v})

    def norm(v: str) -> tuple[int, ...]:
        parts = [int(x) for x in v.split(".")]
        return tuple(parts + [0] * (3 - len(parts)))

    if norm(scn.version) != norm(folder_v):
        raise UserError(
            f"version {scn.version} disagrees with the folder suffix -{folder_v}",
            file=file,
            field="version",
            fix=f'set version: "{folder_v}" or rename the folder',
        )
    return scn


def load_scenario(name: str, root: Path) -> LoadedScenario:
    """Find, parse and check a scenario by its name under ``root``."""
    directory = scenario_dir(name, root)
    file = directory / SCENARIO_FILE
    if not file.is_file():
        raise UserError(
            f"no scenario named '{name}' (no {SCENARIO_FILE} there)",
            file=directory,
            field="SCENARIO",
            fix=scenario_hint(name, list_scenarios(root) if root.is_dir() else [], root),
        )
    scn = _check_version(parse_scenario(read_text(file), file), directory, file)
    try:
        display = directory.relative_to(root.resolve()).as_posix()
    except ValueError:
        display = directory.name
    loaded = LoadedScenario(display, directory, scn, folder_hash(directory))
    _check_files(loaded)
    return loaded


def refuse_draft(loaded: LoadedScenario) -> None:
    """A mined draft (placeholder instructions) is a candidate, not a task."""
    if DRAFT_INSTRUCTIONS in loaded.scenario.agent.instructions:
        raise UserError(
            "the instructions are the placeholder of a mined draft",
            file=loaded.path,
            field="agent.instructions",
            fix="write the task (the API and behaviour wanted) so that an engineer "
            "could do it without seeing the tests",
        )


def _check_files(loaded: LoadedScenario) -> None:
    """Every file the scenario refers to must exist inside its folder."""
    scn = loaded.scenario
    for i, step in enumerate(scn.setup_steps.copy_):
        loaded.file(step.from_, f"setup.copy[{i}].from")
    for i, patch in enumerate(scn.setup_steps.patch):
        loaded.file(patch, f"setup.patch[{i}]")
    for i, step in enumerate(scn.verify.copy_):
        loaded.file(step.from_, f"verify.copy[{i}].from")
    if scn.spec:
        loaded.file(scn.spec, "spec")
    # The solution is not required here: authors set up the workspace to write it
    # (`harness solution save`); the oracle and the controls demand it when they run.
    if scn.verify.suite:
        loaded.file(scn.verify.suite, "verify.suite")
    if not (scn.verify.tests or scn.verify.partial_tests or scn.verify.suite):
        raise UserError(
            "nothing to verify",
            file=loaded.path,
            field="verify",
            fix="add verify.tests, verify.partial-tests or verify.suite",
        )


def list_scenarios(root: Path) -> list[str]:
    """Names of every scenario under ``root`` (folders holding scenario.yml), sorted."""
    if not root.is_dir():
        return []
    return sorted(
        p.parent.relative_to(root).as_posix()
        for p in root.rglob(SCENARIO_FILE)
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
