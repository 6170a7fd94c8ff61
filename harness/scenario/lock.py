"""The scenario lock: each published scenario version and the sha256 of its folder.

``scenarios/scenarios.lock`` holds one line per version, ``<name>@<version> <sha256>``,
where ``name`` is the scenario's folder path without a ``-<semver>`` suffix. A locked
version is frozen: if its folder changes, results made before and after would carry the
same version, so ``validate`` refuses it and says to ``harness bump`` it. A scenario
that is not locked yet is a draft (being written) and may change freely; ``harness lock``
records it when it is ready.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.scenario.model import LoadedScenario, base_name
from harness.util.fs import write_atomic

LOCK_FILE = "scenarios.lock"
HEADER = (
    "# harness scenario lock: <family/name>@<version> <sha256 of the scenario folder>\n"
    "# A locked version must not change: `harness bump SCENARIO --minor|--major` makes a\n"
    "# new version; `harness lock SCENARIO` records a new or bumped one.\n"
)


def key(loaded: LoadedScenario) -> str:
    return f"{base_name(loaded.name)}@{loaded.version}"


def lock_path(root: Path) -> Path:
    return root / LOCK_FILE


def read_lock(root: Path) -> dict[str, str]:
    path = lock_path(root)
    if not path.is_file():
        return {}
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or "@" not in parts[0] or len(parts[1]) != 64:
            raise UserError(
                f"line {number} is not '<name>@<version> <sha256>'",
                file=path,
                field=f"line {number}",
                fix="restore the line from git, or delete it and run `harness lock`",
            )
        entries[parts[0]] = parts[1]
    return entries


def write_lock(root: Path, entries: dict[str, str]) -> None:
    body = "".join(f"{k} {v}\n" for k, v in sorted(entries.items()))
    write_atomic(lock_path(root), HEADER + body)


def lock_status(loaded: LoadedScenario, root: Path) -> str:
    """``locked`` (unchanged), ``draft`` (not locked yet) or ``changed``."""
    locked = read_lock(root).get(key(loaded))
    if locked is None:
        return "draft"
    return "locked" if locked == loaded.sha256 else "changed"


def check_lock(loaded: LoadedScenario, root: Path) -> str:
    """Refuse a locked version whose folder changed; return its status otherwise."""
    status = lock_status(loaded, root)
    if status == "changed":
        raise UserError(
            f"version {loaded.version} is locked and its folder changed since",
            file=loaded.path,
            field="version",
            fix=f"undo the change, or run `harness bump {loaded.name} --minor` (or --major) "
            "and make it in the new version",
        )
    return status


def lock(loaded: list[LoadedScenario], root: Path, *, force: bool = False) -> list[str]:
    """Record each scenario's version; a changed locked version needs ``force``."""
    entries = read_lock(root)
    done = []
    for item in loaded:
        k = key(item)
        if entries.get(k) not in (None, item.sha256) and not force:
            check_lock(item, root)
        if entries.get(k) != item.sha256:
            entries[k] = item.sha256
            done.append(k)
    write_lock(root, entries)
    return done
