"""The per-trial secret seed: drawn at setup, held by the harness outside the workspace.

Fixture values and fault positions of a trial derive (HMAC) from this seed, so it must be
out of the agent's and the app's reach: it is never written into the workspace (whose
``.git/harness`` the agent can read), never put in the agent's environment, and recorded
in the run's report only after scoring. ``--seed`` replays a trial exactly; without it
every setup draws a fresh seed, so trials of one job get different positions.

Where it lives: ``<workspaces>/.secrets/<scenario>.json`` (folder mode 0700), beside the
workspace, not in it; a Docker agent only ever has its own workspace mounted.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from harness.errors import UserError
from harness.util.fs import write_json

SECRETS_DIR = ".secrets"


def new_seed() -> str:
    """16 hex digits from the OS's CSPRNG (the same shape as scenario.yml's seed)."""
    return secrets.token_hex(8)


def secret_path(workspaces: Path, scenario: str) -> Path:
    """Where the seed of the workspace ``<workspaces>/<scenario>`` is kept."""
    return Path(workspaces) / SECRETS_DIR / f"{scenario}.json"


def store(workspaces: Path, scenario: str, seed: str, baseline: str) -> Path:
    """Keep ``seed`` for the workspace whose baseline commit is ``baseline``."""
    path = secret_path(workspaces, scenario)
    path.parent.mkdir(parents=True, exist_ok=True)
    top = Path(workspaces) / SECRETS_DIR
    for folder in [top, *[p for p in path.parents if top in p.parents]]:
        os.chmod(folder, 0o700)
    write_json(path, {"seed": seed, "baseline": baseline})
    os.chmod(path, 0o600)
    return path


def load(workspaces: Path, scenario: str, baseline: str) -> str:
    """The secret seed of the current workspace (matched on its baseline commit)."""
    path = secret_path(workspaces, scenario)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    if data.get("baseline") != baseline or not data.get("seed"):
        raise UserError(
            "the harness holds no seed for this workspace (set up elsewhere or by hand)",
            file=path,
            field="seed",
            fix=f"run `harness setup {scenario}` again",
        )
    return str(data["seed"])
