"""Agents used only by tests, loaded through agents.yml ``adapter`` entries."""

from __future__ import annotations

import json
from pathlib import Path

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


PATCHER = r"""
import json, os, subprocess, urllib.request
req = urllib.request.Request(
    os.environ["GW"] + "/chat/completions",
    data=json.dumps({"model": os.environ["MODEL"], "messages": [
        {"role": "user", "content": os.environ["TASK"]}], **(
        {"max_tokens": int(os.environ["MAX_TOKENS"])} if os.environ.get("MAX_TOKENS") else {}
    )}).encode(),
    headers={"Authorization": "Bearer " + os.environ["KEY"], "Content-Type": "application/json"})
body = json.load(urllib.request.urlopen(req, timeout=60))
for call in body["choices"][0]["message"].get("tool_calls") or []:
    cmd = json.loads(call["function"]["arguments"])["command"]
    subprocess.run(["sh", "-c", cmd], check=False)
print(json.dumps(body["usage"]))
"""


class ToolCallAgent:
    """A one-call agent: asks the gateway once and runs the bash tool calls it gets back.

    It stands for a real agent CLI in tests of the trial's gateway wiring.
    """

    name = "toolcall"
    max_tokens: int | None = None  # a cap on the answer (a real model's, in tests)

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        assert ctx.gateway_url and ctx.api_key
        res = ctx.sandbox.exec(
            ["python3", "-c", PATCHER],
            env={
                "GW": ctx.gateway_url,
                "KEY": ctx.api_key,
                "TASK": ctx.instructions,
                "MODEL": ctx.model.id_for(self.name),
                "MAX_TOKENS": str(self.max_tokens or ""),
            },
            timeout=ctx.timeout_s,
        )
        (ctx.out_dir / "stdout.txt").write_text(res.stdout + res.stderr)
        if not res.ok:
            return AgentResult(exit="crashed", detail=res.stderr[-500:], returncode=res.returncode)
        usage = json.loads(res.stdout.strip().splitlines()[-1])
        return AgentResult(exit="completed", self_reported_usage=usage)


class ShortToolCallAgent(ToolCallAgent):
    """``ToolCallAgent`` asking for a short answer: against a real model, a few tokens."""

    max_tokens = 12


class SecondTryAgent:
    """Does nothing on its first turn; fixes ``calc.add`` once told verification failed."""

    name = "second-try"

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        told = "Verification of your work failed" in ctx.instructions
        (ctx.out_dir / "instructions.txt").write_text(ctx.instructions)
        if told:
            ctx.sandbox.exec(["sed", "-i", "s/a - b/a + b/", "calc.py"], timeout=60)
        return AgentResult(exit="completed", detail="fixed" if told else "waited")


class ShellAgent:
    """Runs the scenario's instructions as one shell command (bombs, in tests)."""

    name = "shell"

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        res = ctx.sandbox.exec(["sh", "-c", ctx.instructions], timeout=ctx.timeout_s)
        (ctx.out_dir / "stdout.txt").write_text(res.stdout + res.stderr)
        if res.timed_out:
            return AgentResult(exit="timeout", returncode=None)
        return AgentResult(exit="completed" if res.ok else "crashed", returncode=res.returncode)


RETRIER = r"""
import json, os, time, urllib.error, urllib.request
for attempt in range(600):  # like a real agent's client: retry a failed call for minutes
    req = urllib.request.Request(
        os.environ["GW"] + "/chat/completions",
        data=json.dumps({"model": os.environ["MODEL"], "messages": [
            {"role": "user", "content": os.environ["TASK"]}]}).encode(),
        headers={"Authorization": "Bearer " + os.environ["KEY"],
                 "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=60).read()
        print("answered")
        break
    except urllib.error.HTTPError as exc:
        print("HTTP", exc.code, flush=True)
    except OSError as exc:
        print("error", exc, flush=True)
    time.sleep(1)
"""


class RetryingAgent:
    """Calls the gateway until it answers, retrying every second for up to ten minutes,
    as agent CLIs do on errors: a harness fault must stop it, not its patience."""

    name = "retrier"

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        assert ctx.gateway_url and ctx.api_key
        res = ctx.sandbox.exec(
            ["python3", "-c", RETRIER],
            env={
                "GW": ctx.gateway_url,
                "KEY": ctx.api_key,
                "TASK": ctx.instructions,
                "MODEL": ctx.model.id_for(self.name),
            },
            timeout=ctx.timeout_s,
        )
        (ctx.out_dir / "stdout.txt").write_text(res.stdout + res.stderr)
        return AgentResult(exit="completed" if res.ok else "crashed", returncode=res.returncode)


class PatchAgent:
    """Applies the patch named by ``HARNESS_TEST_PATCH`` (a host path) to the workspace:
    a stand-in for an agent whose answer a test chooses (right, wrong); with
    ``HARNESS_TEST_PATCH_COMMIT`` set it commits the answer too."""

    name = "patcher"

    def version(self) -> str:
        return BUILTIN

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        import os

        ctx.sandbox.copy_in(Path(os.environ["HARNESS_TEST_PATCH"]), "answer.patch")
        script = "git apply answer.patch && rm answer.patch"
        if os.environ.get("HARNESS_TEST_PATCH_COMMIT"):  # an agent that commits (aider)
            script += " && git add -A && git -c user.name=a -c user.email=a@a commit -qm answer"
        res = ctx.sandbox.exec(["sh", "-c", script], timeout=60)
        return AgentResult(exit="completed" if res.ok else "crashed", detail=res.stderr[-300:])
