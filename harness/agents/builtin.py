"""Built-in agents: ``oracle`` applies the reference solution, ``nop`` changes nothing.

They prove the pipeline and serve as the HIGH and LOW grader controls. Neither calls a
model. The oracle applies the solution from the host: the solution is hidden material
and never enters the agent's container.
"""

from __future__ import annotations

from harness.agents.base import AgentContext, AgentResult
from harness.errors import UserError
from harness.fsutil import copy_destinations, copy_pairs
from harness.gitutil import GitError, git

BUILTIN_VERSION = "1.0"


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

    def run(self, ctx: AgentContext) -> AgentResult:
        loaded = ctx.scenario
        if not loaded.scenario.solution:
            raise UserError(
                "the scenario has no reference solution",
                file=loaded.path,
                field="solution",
                fix="add solution: solution.patch (or a folder of files) to use --agent oracle",
            )
        src = loaded.file(loaded.scenario.solution, "solution")
        if src.is_dir():
            pairs = copy_destinations(src, ".", ctx.workspace)
            copy_pairs(pairs)
            applied = f"copied {len(pairs)} files from {src.name}/"
        else:
            try:
                git(["apply", "--whitespace=nowarn", str(src)], ctx.workspace)
            except GitError as exc:
                raise UserError(
                    f"solution does not apply: {exc.stderr.splitlines()[-1:]}",
                    file=loaded.path,
                    field="solution",
                    fix="regenerate it with `git diff` in a freshly set-up workspace",
                ) from None
            applied = f"applied {src.name}"
        (ctx.out_dir / "transcript.txt").write_text(f"oracle: {applied}\n")
        return AgentResult(exit="completed", detail=applied)
