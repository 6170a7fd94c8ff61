"""The test agent that plays one attack: it plants files and runs a command, in its sandbox.

Planting happens inside the agent's sandbox with ``sh`` and coreutils (``base64 -d``,
``ln -s``, ``mkfifo``, ``truncate``), as a hostile agent would do it; the host writes
nothing into the workspace. The agent never fixes the code.
"""

from __future__ import annotations

import base64
import shlex

from harness.agents.base import AgentContext, AgentResult
from harness.grader.containment.catalogue import Attack

AGENT_NAME = "containment-attack"
AGENT_VERSION = "1.0"


def expand(text: str, values: dict[str, str]) -> str:
    """``{placeholder}`` -> value, for the known placeholders only (other braces stay)."""
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def script(attack: Attack, values: dict[str, str]) -> str:
    """The shell script that plants the attack's entries, then runs its command."""
    lines = ["set -e"]
    for rel, entry in sorted(attack.plant.items()):
        path = shlex.quote(rel)
        parent = shlex.quote(rel.rsplit("/", 1)[0]) if "/" in rel else "."
        lines += [f"mkdir -p {parent}", f"rm -rf {path}"]
        kind = entry.kind()
        if kind == "content":
            data = base64.b64encode(expand(entry.content or "", values).encode()).decode()
            lines.append(f"printf %s {data} | base64 -d > {path}")
        elif kind == "symlink":
            lines.append(f"ln -s {shlex.quote(expand(entry.symlink or '', values))} {path}")
        elif kind == "fifo":
            lines.append(f"mkfifo {path}")
        else:
            lines.append(f"truncate -s {int(entry.sparse or 0)} {path}")
        if entry.mode is not None:
            lines.append(f"chmod {entry.mode:o} {path}")
    if attack.run:
        lines += ["set +e", expand(attack.run, values)]
    return "\n".join(lines) + "\n"


class AttackAgent:
    """Plays ``attack`` with the control's placeholder ``values``."""

    name = AGENT_NAME

    def __init__(self, attack: Attack, values: dict[str, str]) -> None:
        self.attack = attack
        self.values = values

    def version(self) -> str:
        return AGENT_VERSION

    def image(self, toolchain: str) -> str | None:
        return None  # the scenario's environment image, like the built-ins

    def run(self, ctx: AgentContext) -> AgentResult:
        res = ctx.sandbox.exec(
            ["sh", "-c", script(self.attack, self.values)], timeout=min(ctx.timeout_s, 300)
        )
        (ctx.out_dir / "attack.txt").write_text(
            f"attack {self.attack.name} (exit {res.returncode})\n{res.stdout}{res.stderr}"
        )
        return AgentResult(exit="completed", detail=f"played {self.attack.name}")
