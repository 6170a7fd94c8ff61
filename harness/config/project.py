"""The project root: the folder holding ``agents.yml``, ``llms.yml`` and ``scenarios/``.

Found from ``HARNESS_HOME`` (alias ``GOAGENTBENCH_HOME``) when set, else by walking up
from the current folder, the way git finds its repository. Commands that need the
project and find none say where they looked (exit 2) instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import UserError

if TYPE_CHECKING:
    from harness.config.settings import Settings

MARKER = "agents.yml"
FIX = "cd into a harness project (agents.yml, llms.yml, scenarios/) or set HARNESS_HOME"


@dataclass(frozen=True)
class Lookup:
    """Where the root was sought, and what was found (``root`` is None when nothing was)."""

    start: Path
    root: Path | None
    home: Path | None
    looked: tuple[Path, ...]

    def where(self) -> str:
        if self.home is not None:
            return f"HARNESS_HOME={self.home}"
        if len(self.looked) > 3:
            return f"{self.looked[0]} and its {len(self.looked) - 1} parent folders"
        return ", ".join(str(p) for p in self.looked)


def find_project(start: Path, home: str | None = None) -> Lookup:
    """The folder holding agents.yml: ``home`` if given, else ``start`` or a parent."""
    start = start.resolve()
    if home:
        folder = Path(home).expanduser().resolve()
        found = folder if (folder / MARKER).is_file() else None
        return Lookup(start, found, folder, (folder,))
    looked: list[Path] = []
    for folder in (start, *start.parents):
        looked.append(folder)
        if (folder / MARKER).is_file():
            return Lookup(start, folder, None, tuple(looked))
    return Lookup(start, None, None, tuple(looked))


def _lookup(settings: Settings) -> Lookup:
    from harness.config.settings import env_value

    # without a project, project_root is the folder the search started from
    return find_project(settings.project_root, env_value("HOME"))


def require_project(settings: Settings) -> Path:
    """The project root, or a UserError naming where harness looked for agents.yml."""
    if settings.project_found:
        return settings.project_root
    lookup = _lookup(settings)
    if lookup.home is not None:
        raise UserError(
            f"HARNESS_HOME has no {MARKER}",
            file=lookup.home / MARKER,
            field="HARNESS_HOME",
            fix="point HARNESS_HOME at the folder holding agents.yml, llms.yml and scenarios/",
        )
    raise UserError(
        f"no harness project here: no {MARKER} in {lookup.where()}",
        file=lookup.start,
        field="(project root)",
        fix=FIX,
    )


def require_scenarios(settings: Settings) -> Path:
    """The scenario root, or a UserError naming where harness looked for scenarios."""
    root = settings.scenario_root
    if root.is_dir():
        return root
    from harness.config.settings import env_value

    if env_value("SCENARIO_ROOT") is None:
        require_project(settings)  # no project and no explicit root: say where harness looked
    raise UserError(
        "scenario folder not found",
        file=root,
        field="HARNESS_SCENARIO_ROOT",
        fix="create scenarios/<family>/<name>/scenario.yml there or set HARNESS_SCENARIO_ROOT",
    )
