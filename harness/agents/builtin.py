"""Built-in agents: ``oracle`` applies the reference solution, ``nop`` changes nothing.

They prove the pipeline and serve as the HIGH and LOW grader controls. Neither calls a
model. The oracle applies the solution from the host: the solution is hidden material
and never enters the agent's container.
"""

from __future__ import annotations

from pathlib import Path

from harness.agents.base import AgentContext, AgentResult
from harness.errors import UserError
from harness.scenario.model import LoadedScenario
from harness.util.fs import copy_destinations, copy_pairs
from harness.util.git import apply_patch

BUILTIN_VERSION = "1.0"


def reference_solution(loaded: LoadedScenario, use: str) -> Path:
    """The scenario's reference solution (a patch or a folder); refuses when it has none.

    ``use`` finishes the fix: "add solution: ... to <use>"."""
    if not loaded.scenario.solution:
        raise UserError(
            "the scenario has no reference solution",
            file=loaded.path,
            field="solution",
            fix=f"add solution: solution.patch (or a folder of files) to {use}",
        )
    return loaded.file(loaded.scenario.solution, "solution")


class NopAgent:
    name = "nop"

    def version(self) -> str:
        return BUILTIN_VERSION

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        probe = ctx.sandbox.exec(["sh", "-c", "pwd && ls -A | head -50"], timeout=60)
        (ctx.out_dir / "transcript.txt").write_text(
            f"nop: looked at the workspace and changed nothing\n{probe.stdout}"
        )
        return AgentResult(exit="completed", detail="changed nothing")


class OracleAgent:
    name = "oracle"

    def version(self) -> str:
        return BUILTIN_VERSION

    def image(self, toolchain: str) -> str | None:
        return None

    @staticmethod
    def apply(loaded: LoadedScenario, workspace: Path) -> str:
        """Apply the reference solution to ``workspace``; return what was done."""
        src = reference_solution(loaded, "use --agent oracle")
        if src.is_dir():
            pairs = copy_destinations(src, ".", workspace)
            copy_pairs(pairs)
            return f"copied {len(pairs)} files from {src.name}/"
        apply_patch(
            src,
            workspace,
            "solution",
            file=loaded.path,
            field="solution",
            fix="regenerate it with `git diff` in a freshly set-up workspace",
        )
        return f"applied {src.name}"

    def run(self, ctx: AgentContext) -> AgentResult:
        applied = self.apply(ctx.scenario, ctx.workspace)
        (ctx.out_dir / "transcript.txt").write_text(f"oracle: {applied}\n")
        return AgentResult(exit="completed", detail=applied)
