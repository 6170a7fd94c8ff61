"""Finding the project root: the folder holding ``agents.yml``, as git finds its repository.

``find_project`` looks in ``HARNESS_HOME`` when set, else in the start folder and its
parents; ``Lookup`` records where it looked, so a refusal can say so
(``config/project.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MARKER = "agents.yml"


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
