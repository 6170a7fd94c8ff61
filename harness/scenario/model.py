"""The scenario model: ``scenario.yml`` parsed strictly, validated, and located on disk.

A goagentbench ``scenario.yml`` loads unchanged; harness adds ``version``, ``spec``,
``seed``, ``environment``, ``verify.runner``, ``verify.suite`` and ``solution``.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from harness.config.budget import Budget
from harness.errors import UserError
from harness.scenario.fields import describe
from harness.scenario.hints import scenario_hint
from harness.scenario.policy import SandboxPolicy
from harness.scenario.targets import TargetError, looks_like_go, parse_go_target
from harness.util import strict_yaml
from harness.util.strict_yaml import kebab, parse_yaml, read_text

SCENARIO_FILE = "scenario.yml"
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?$")
FOLDER_VERSION = re.compile(r"-(\d+\.\d+(?:\.\d+)?)$")
SEED = re.compile(r"^[0-9a-f]{16}$")
# The instructions of a draft written by `harness mine`: validate and check refuse it
# until an author writes the task.
DRAFT_INSTRUCTIONS = "TODO: mined draft"
DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h)?$")


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []  # `key: ""` is no entries, as in goagentbench
    return value


def _no_blank_entries(values: list[str]) -> list[str]:
    for i, value in enumerate(values):
        if not value.strip():
            raise PydanticCustomError(
                "blank_entry",
                "entry [{index}] is empty",
                {"index": i, "fix": "remove the empty entry or fill it in"},
            )
    return values


StrList = Annotated[list[str], BeforeValidator(_as_list), AfterValidator(_no_blank_entries)]


_kebab = kebab  # the name other modules imported before harness.util.strict_yaml had it


class Strict(BaseModel):
    """Unknown keys are errors; YAML keys are kebab-case."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=kebab, populate_by_name=True, frozen=True
    )


class CopyStep(Strict):
    """``{from: hidden/x, to: dir}``: both required and non-empty, as in goagentbench."""

    from_: str
    to: str

    @model_validator(mode="before")
    @classmethod
    def _both_given(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        source = data.get("from", data.get("from_"))
        if source is None or not str(source).strip():
            raise PydanticCustomError(
                "copy_from",
                "a copy entry without 'from'",
                {"fix": "add from: <a file or folder in the scenario folder>"},
            )
        if data.get("to") is None or not str(data["to"]).strip():
            raise PydanticCustomError(
                "copy_to",
                "the copy entry from '{source}' has no 'to'",
                {
                    "source": source,
                    "fix": "add to: <folder in the workspace> (to: . for its root); "
                    "goagentbench requires both from and to",
                },
            )
        return data


CopyList = Annotated[list[CopyStep], BeforeValidator(_as_list)]


class Classification(Strict):
    type: Literal["build-package", "fix-bug", "feature", "refactor"]
    has_spec: bool = False
    single_package: bool = False
    sees_failing_tests: bool = False


class Setup(Strict):
    copy_: CopyList = Field(default_factory=list)
    patch: StrList = Field(default_factory=list)
    exec: StrList = Field(default_factory=list)


class AgentSection(Strict):
    package: str | None = None
    instructions: str
    allow_multiple_turns_on_failed_verify: bool = False

    @field_validator("instructions")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise PydanticCustomError(
                "blank_instructions",
                "the instructions are blank",
                {"fix": "write the task the agent is given (what to build or fix, and where)"},
            )
        return v


class TestsFrom(Strict):
    """Hidden tests taken from the repository's own fix commit at verification time:
    ``tests-from: {commit: <sha>, paths: [tests/test_x.py]}``. The files are read from
    the repository (cache, bundle or URL) when a tree is verified; they are never copied
    into the project and never reachable from the workspace (its history stops at
    ``commit:``, an ancestor of the fix)."""

    commit: str
    paths: StrList

    @field_validator("commit", mode="before")
    @classmethod
    def _full_sha(cls, v: Any) -> str:
        text = str(v).strip().lower()
        if not re.fullmatch(r"[0-9a-f]{40}", text):
            raise ValueError(f"'{v}' is not a full commit sha (40 hex digits)")
        return text

    @field_validator("paths")
    @classmethod
    def _relative(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("list at least one test file of the fix commit")
        for path in v:
            if path.startswith("/") or ".." in Path(path).parts:
                raise ValueError(f"'{path}' must be a path inside the repository")
        return v


class VerifySection(Strict):
    must_modify: StrList = Field(default_factory=list)
    no_modify: StrList = Field(default_factory=list)
    only_modify: StrList = Field(default_factory=list)
    copy_: CopyList = Field(default_factory=list)
    tests: StrList = Field(default_factory=list)
    partial_tests: StrList = Field(default_factory=list)
    runner: Literal["go", "pytest"] | None = None
    suite: str | None = None
    # paths (globs) whose runner-steering files (conftest.py, ini sections, go.mod
    # redirects, ...) keep the agent's version; every other one is restored to the baseline
    runner_files: StrList = Field(default_factory=list)
    tests_from: TestsFrom | None = None


def parse_duration(value: Any) -> float:
    """``90``, ``"90s"``, ``"30m"``, ``"1.5h"`` -> seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = DURATION.match(str(value).strip())
    if not match:
        raise ValueError(f"'{value}' is not a duration; write seconds or e.g. 30m, 90s, 1h")
    scale = {"s": 1, "m": 60, "h": 3600, None: 1}[match.group(2)]
    return float(match.group(1)) * scale


Duration = Annotated[float, BeforeValidator(parse_duration)]


class Environment(Strict):
    """Where the agent and the verifier run: a toolchain image and resources."""

    image: str | None = None
    cpus: float = 2.0
    memory: str = "4g"
    pids: int = 1024
    agent_timeout: Duration = 1800.0
    verify_timeout: Duration = 600.0
    go: str | None = None  # "1.24": a pinned Go release (else go.mod's); "system": the image's
    python: str | None = None  # e.g. "3.11": refused where no such interpreter exists
    cgo: bool = False  # the hidden Go tests are built with cgo (else CGO_ENABLED=0)

    @field_validator("go", "python", mode="before")
    @classmethod
    def _quoted_version(cls, v: Any) -> Any:
        if isinstance(v, float | int) and not isinstance(v, bool):
            raise ValueError(f'{v} must be quoted (YAML reads 1.20 as 1.2), e.g. "1.24"')
        return v


class Scenario(Strict):
    name: str
    repo: str
    commit: str
    classification: Classification
    setup: Setup | None = None
    agent: AgentSection
    verify: VerifySection
    version: str | None = None
    spec: str | None = None
    seed: str | None = None
    environment: Environment = Field(default_factory=Environment)
    solution: str | None = None
    task_date: date | None = None  # when the task arose upstream (a mined fix's commit date)
    # harden (#16): how tightly the sandbox holds the agent, and what a trial may spend
    sandbox: SandboxPolicy = Field(default_factory=SandboxPolicy)
    budget: Budget = Field(default_factory=Budget)

    @field_validator("version")
    @classmethod
    def _semver(cls, v: str | None) -> str | None:
        if v is not None and not SEMVER.match(str(v)):
            raise ValueError(f"'{v}' is not a version; write MAJOR.MINOR or MAJOR.MINOR.PATCH")
        return v

    @field_validator("seed", mode="before")
    @classmethod
    def _seed(cls, v: Any) -> str | None:
        if v is None:
            return None
        text = str(v).lower()
        if not SEED.match(text):
            raise ValueError(
                f"'{v}' is not 16 hex digits; quote it, e.g. seed: \"00c0ffee00c0ffee\""
            )
        return text

    @field_validator("commit", mode="before")
    @classmethod
    def _commit(cls, v: Any) -> str:
        text = str(v).strip()
        if not re.fullmatch(r"[0-9a-fA-F]{7,40}", text):
            raise ValueError(f"'{v}' is not a commit sha (7 to 40 hex digits)")
        return text.lower()

    @property
    def setup_steps(self) -> Setup:
        return self.setup or Setup()

    def runner(self, workspace: Path | None = None) -> Literal["go", "pytest"]:
        """The test runner: declared, else inferred from the targets or the workspace."""
        if self.verify.runner:
            return self.verify.runner
        targets = [*self.verify.tests, *self.verify.partial_tests]
        if self.environment.image == "go" or any(looks_like_go(t) for t in targets):
            return "go"
        if any(".py" in t or "::" in t for t in targets):
            return "pytest"
        if workspace is not None and (workspace / "go.mod").exists():
            return "go"
        return "pytest"

    def toolchain(self) -> str:
        """Environment image name (``python``, ``go``...), declared or from the runner."""
        return self.environment.image or ("go" if self.runner() == "go" else "python")


@dataclass(frozen=True)
class LoadedScenario:
    """A validated scenario plus where it lives and a hash of its whole folder."""

    name: str
    directory: Path
    scenario: Scenario
    sha256: str

    @property
    def path(self) -> Path:
        return self.directory / SCENARIO_FILE

    @property
    def version(self) -> str:
        return self.scenario.version or "0.0.0"

    @property
    def family(self) -> str:
        return self.name.split("/", 1)[0]

    @property
    def is_smoke(self) -> bool:
        return self.family == "smoke"

    def file(self, relative: str, field: str) -> Path:
        """A path inside the scenario folder that must exist (for copy, patch, spec...)."""
        target = (self.directory / relative).resolve()
        if not target.is_relative_to(self.directory.resolve()):
            raise UserError(
                f"'{relative}' points outside the scenario folder",
                file=self.path,
                field=field,
                fix="use a path inside the scenario folder",
            )
        if not target.exists():
            raise UserError(
                f"'{relative}' does not exist",
                file=self.path,
                field=field,
                fix=f"add {relative} to {self.directory} or correct the path",
            )
        return target

    @property
    def seed(self) -> str:
        """The scenario's default seed; derived from its name when none is declared."""
        if self.scenario.seed:
            return self.scenario.seed
        return hashlib.sha256(self.name.encode()).hexdigest()[:16]


def format_validation_error(
    err: ValidationError,
    file: Path,
    model: type[BaseModel] | None = None,
    schema_hint: str = "see `harness schema scenario`",
) -> UserError:
    """Turn pydantic's report into one line (``model`` defaults to ``Scenario``)."""
    return strict_yaml.format_validation_error(err, file, model or Scenario, schema_hint)


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


def folder_hash(directory: Path) -> str:
    """sha256 over every file's relative path and bytes, in sorted order (the calibration
    ledger left out)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts or path.name in EVIDENCE_FILES:
            continue
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


describe(
    TestsFrom,
    SandboxPolicy,
    CopyStep,
    Classification,
    Setup,
    AgentSection,
    VerifySection,
    Environment,
)
describe(Scenario)


def json_schema() -> dict[str, Any]:
    """JSON Schema of scenario.yml (by alias), for editors."""
    schema = Scenario.model_json_schema(by_alias=True)
    schema["title"] = "harness scenario.yml"
    return schema
