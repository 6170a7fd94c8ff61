"""The attack catalogue: one YAML file per attack, shipped with harness.

```yaml
name: verdict-conftest-forgery       # == the file's stem
owner: verdict                       # who maintains it
about: a root conftest.py marks every test report passed
scenario: smoke/py-fast              # a shipped scenario; the agent leaves the code unfixed
sandboxes: [docker, local]
plant:                               # workspace path -> content | symlink | fifo | sparse
  conftest.py: {content: "..."}
run: "sh command in the agent's sandbox, after planting"
expect: {outcome: failed, score: 0.5, restored: [conftest.py], rejected: false}
victim: {mathx/zz.go: {content: ...}}  # a next trial planting only these earns expect too
```

Placeholders ``{host_marker}``, ``{host_secret}``, ``{host_readable}`` (a host file
anyone may read, on no deny list), ``{host_port}`` (a service on the host's loopback
that leaves the marker when reached), ``{secret}`` and ``{token}`` are expanded in
``content``, ``symlink`` and ``run`` (see ``control.py``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import UserError

Where = Literal["docker", "local"]
SANDBOXES: tuple[Where, ...] = ("docker", "local")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Plant(_Strict):
    """One workspace entry the agent makes: a file, a link, a named pipe or a sparse file."""

    content: str | None = None
    symlink: str | None = None
    fifo: bool = False
    sparse: int | None = None  # apparent size in bytes
    mode: int | None = None

    @field_validator("mode", mode="before")
    @classmethod
    def _octal(cls, v: Any) -> Any:
        return int(v, 0) if isinstance(v, str) else v

    def kind(self) -> str:
        kinds = [
            k
            for k, on in (
                ("content", self.content is not None),
                ("symlink", self.symlink is not None),
                ("fifo", self.fifo),
                ("sparse", self.sparse is not None),
            )
            if on
        ]
        if len(kinds) != 1:
            raise ValueError("give exactly one of content, symlink, fifo, sparse")
        return kinds[0]


class Expect(_Strict):
    outcome: Literal["failed", "success"] = "failed"
    score: float | None = None  # the final score unfixed code earns, when known
    restored: list[str] = Field(default_factory=list)  # in report.containment.restored
    rejected: bool = False  # report.containment.rejected holds a reason


class Attack(_Strict):
    name: str
    owner: str
    about: str
    scenario: str
    sandboxes: list[Where] = Field(default_factory=lambda: list(SANDBOXES))
    plant: dict[str, Plant] = Field(default_factory=dict)
    run: str | None = None
    expect: Expect = Field(default_factory=Expect)
    # a next trial of the same scenario, whose agent plants only these (code unfixed),
    # must earn what the unfixed code earns (expect.outcome and expect.score): what one
    # trial leaves behind reaches no other
    victim: dict[str, Plant] | None = None


def attacks_dir() -> Path:
    return Path(str(resources.files("harness.grader.containment") / "attacks"))


def load_attack(path: Path) -> Attack:
    try:
        attack = Attack.model_validate(yaml.safe_load(path.read_text()) or {})
        for entry in [*attack.plant.values(), *(attack.victim or {}).values()]:
            entry.kind()
    except (ValidationError, ValueError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()
        raise UserError(
            f"bad attack: {first[-1] if first else exc}",
            file=path,
            field="(attack)",
            fix="follow the format in harness/grader/containment/catalogue.py",
        ) from None
    if attack.name != path.stem:
        raise UserError(
            f"attack '{attack.name}' is in {path.name}",
            file=path,
            field="name",
            fix=f"name the file {attack.name}.yml",
        )
    return attack


def load_attacks(folder: Path | None = None, names: list[str] | None = None) -> list[Attack]:
    """Every attack of the catalogue (or those ``names``), sorted by name."""
    attacks = [load_attack(p) for p in sorted((folder or attacks_dir()).glob("*.yml"))]
    if names:
        unknown = sorted(set(names) - {a.name for a in attacks})
        if unknown:
            raise UserError(
                f"no attack named {', '.join(unknown)}",
                field="--attack",
                fix="see harness/grader/containment/attacks/ for the names",
            )
        attacks = [a for a in attacks if a.name in names]
    return attacks
