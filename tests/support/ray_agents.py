"""An agent used only by the Ray executor tests: it reports the job's shared router as its
node sees it (``HARNESS_FLEET_ROUTER``, which the trial's gateway consults) and whether
that router answers from there, then changes nothing."""

from __future__ import annotations

import json
import os

import httpx

from harness.agents.base import AgentContext, AgentResult


class RouterProbe:
    name = "routerprobe"

    def version(self) -> str:
        return "1.0"

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        url = os.environ.get("HARNESS_FLEET_ROUTER")
        answer: object = None
        if url:
            try:
                answer = httpx.get(url.rstrip("/") + "/health", timeout=5).json()
            except (httpx.HTTPError, ValueError) as exc:
                answer = f"{type(exc).__name__}: {exc}"
        seen = {"router": url, "health": answer, "pid": os.getpid()}
        (ctx.out_dir / "transcript.txt").write_text(json.dumps(seen) + "\n")
        return AgentResult(exit="completed", detail="reported the router")
