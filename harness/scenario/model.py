"""The scenario model: ``scenario.yml``'s fields, validated strictly, and a loaded
scenario (``LoadedScenario``); reading a folder into one is ``load``.

A goagentbench ``scenario.yml`` loads unchanged; harness adds ``version``, ``spec``,
``seed``, ``environment``, ``verify.runner``, ``verify.suite`` and ``solution``.
"""

from __future__ import annotations

import hashlib
import re
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
from harness.scenario.policy import SandboxPolicy
from harness.scenario.targets import looks_like_go
from harness.util import strict_yaml
from harness.util.strict_yaml import kebab

SCENARIO_FILE = "scenario.yml"
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?$")
FOLDER_VERSION = re.compile(r"-(\d+\.\d+(?:\.\d+)?)$")


def base_name(name: str) -> str:
    """``go/wordfreq-1.2.0`` -> ``go/wordfreq``: a scenario's name without its folder's version."""
    return FOLDER_VERSION.sub("", name)


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
