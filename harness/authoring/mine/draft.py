"""Write a draft scenario for a mined fix commit.

The draft pins the repository at the fix's parent, takes the hidden tests from the fix
commit itself (``verify.tests-from``: nothing of the tests is copied here), uses the
commit's code change as the reference solution, and records the commit's date as the
task's date. Its instructions are a placeholder that ``harness validate`` and
``harness check`` refuse until an author writes the task.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.authoring.mine.split import Runner
from harness.scenario.model import DRAFT_INSTRUCTIONS

SOLUTION = "solution.patch"
PROVENANCE = "mined.json"


@dataclass
class Draft:
    name: str  # e.g. decimal-7b4ffbc (the folder under go/ or py/)
    runner: Runner
    repo: str  # what scenario.yml's repo: says
    parent: str
    sha: str
    date: str
    subject: str
    tests: list[str]
    code: list[str]
    targets: list[str]
    provenance: dict[str, Any] = field(default_factory=dict)
    go_module: str | None = None  # a Go tree without go.mod: setup writes one of this path

    @property
    def family(self) -> str:
        return "go" if self.runner == "go" else "py"


def draft_name(repo: str, sha: str) -> str:
    short = repo.rstrip("/").split("/")[-1].removesuffix(".git").removesuffix(".bundle")
    short = re.sub(r"^(go-|python-)|(\.py|\.go)$", "", short.lower())
    return f"{re.sub(r'[^a-z0-9-]+', '-', short).strip('-') or 'repo'}-{sha[:7]}"


def solution_diff(repo: Path, parent: str, sha: str, paths: list[str]) -> bytes:
    """The fix commit's change to ``paths`` (its non-test files) as a git patch."""
    done = subprocess.run(
        ["git", "-C", str(repo), "diff", "--binary", "--no-renames", parent, sha, "--", *paths],
        capture_output=True,
        timeout=300,
        check=True,
    )
    return done.stdout


def scenario_data(d: Draft) -> dict[str, Any]:
    go = d.runner == "go"
    packages = {p.rsplit("/", 1)[0] if "/" in p else "." for p in d.code}
    setup = None
    if d.go_module:
        # GOPATH-era code (no go.mod): a module of its import path, in the baseline, at
        # go 1.19 (the images' Go; no dependency can be required offline anyway)
        setup = {"exec": [f"printf 'module {d.go_module}\\n\\ngo 1.19\\n' > go.mod"]}
    return {
        "name": d.name,
        "version": "0.1.0",
        "repo": d.repo,
        "commit": d.parent,
        "task-date": d.date,
        "seed": d.sha[:16],
        "solution": SOLUTION,
        "classification": {
            "type": "fix-bug",
            "has-spec": False,
            "single-package": len(packages) == 1,
            "sees-failing-tests": False,
        },
        "setup": setup,
        "environment": {
            "image": "go" if go else "python",
            "agent-timeout": "20m",
            "verify-timeout": "10m",
        },
        "agent": {
            "instructions": (
                f"{DRAFT_INSTRUCTIONS}: write the task (the API and behaviour wanted) so that "
                "an engineer could do it without seeing the tests.\n"
                f"Upstream commit {d.sha[:12]} ({d.date}): {d.subject}\n"
            )
        },
        "verify": {
            "runner": d.runner,
            "must-modify": sorted(d.code),
            "tests-from": {"commit": d.sha, "paths": sorted(d.tests)},
            "tests": list(d.targets),
        },
    }


def write_draft(folder: Path, d: Draft, solution: bytes) -> Path:
    """``folder/<family>/<name>/`` with scenario.yml, solution.patch and mined.json."""
    target = folder / d.family / d.name
    target.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(scenario_data(d), sort_keys=False, width=100)
    (target / "scenario.yml").write_text(text)
    (target / SOLUTION).write_bytes(solution)
    if d.provenance:
        (target / PROVENANCE).write_text(json.dumps(d.provenance, indent=2) + "\n")
    return target
