"""Agents used only by tests, loaded through agents.yml ``adapter`` entries."""

from __future__ import annotations

import json

from harness.agents.base import AgentContext, AgentResult

BUILTIN = "1.0"


class ProbeAgent:
    """Searches its own container for hidden material and records what it finds."""

    name = "probe"

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        scn = ctx.scenario.scenario
        names = sorted(
            {
                p.split("/")[-1]
                for p in [c.from_ for c in scn.verify.copy_]
                + ([scn.solution] if scn.solution else [])
            }
            | {"defects"}
        )
        exprs = " -o ".join(f"-name '{n}'" for n in names)
        find = ctx.sandbox.exec(
            ["sh", "-c", f"find / -xdev \\( {exprs} \\) -print 2>/dev/null; true"], timeout=300
        )
        marker = ctx.sandbox.exec(
            [
                "sh",
                "-c",
                "grep -rIl --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
                f"-e 'HIDDEN-MARKER-{ctx.scenario.name}' / 2>/dev/null; true",
            ],
            timeout=600,
        )
        found = [ln for ln in (find.stdout + marker.stdout).splitlines() if ln.strip()]
        (ctx.out_dir / "probe.json").write_text(json.dumps({"names": names, "found": found}))
        return AgentResult(exit="completed", detail=f"{len(found)} hits")


class SleeperAgent:
    """Hangs until the scenario's agent timeout kills it."""

    name = "sleeper"

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        (ctx.out_dir / "started").write_text("sleeping\n")
        res = ctx.sandbox.exec(["sleep", "3600"], timeout=ctx.timeout_s)
        if res.timed_out:
            return AgentResult(
                exit="timeout", detail=f"killed after {ctx.timeout_s:.0f}s", returncode=None
            )
        return AgentResult(exit="completed")
