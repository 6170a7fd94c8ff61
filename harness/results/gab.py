"""goagentbench compatibility: its environment variables, its run files in the workspace.

goagentbench reads ``GOAGENTBENCH_WORKSPACE``, ``_RESULTS``, ``_SCENARIO_ROOT`` and
``_SKIP_REMOTE``; harness honours each as an alias of its ``HARNESS_*`` name (the
``HARNESS_*`` value wins when both are set). ``run-agent`` writes
``<workspace>/.run-start.json`` and keeps ``<workspace>/.run-progress.json`` up to date, in
goagentbench's shapes, beside harness's own run folder (which stays the record of
truth). Both files are root dotfiles, which goagentbench's modification rules ignore;
harness keeps them out of the agent's diff through the workspace's git exclude file.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

from harness.util.fs import write_json
from harness.config.settings import env_value  # noqa: F401  (re-exported: goagentbench aliases)

RUN_START, RUN_PROGRESS = ".run-start.json", ".run-progress.json"


def _go_version() -> str:
    go = shutil.which("go")
    if not go:
        return ""
    try:
        out = subprocess.run(
            [go, "env", "GOVERSION"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip()


def _exclude(ws: Path) -> None:
    """Keep the run files out of ``git status`` (and so out of the agent's changes)."""
    exclude = ws / ".git" / "info" / "exclude"
    if not (ws / ".git").is_dir():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text() if exclude.exists() else ""
    missing = [f"/{n}" for n in (RUN_START, RUN_PROGRESS) if f"/{n}" not in text.split()]
    if missing:
        exclude.write_text(
            text + ("" if text.endswith("\n") or not text else "\n") + "\n".join(missing) + "\n"
        )


def run_start(meta: dict[str, Any], ws: Path, go_version: str | None = None) -> dict[str, Any]:
    """goagentbench's RunStart from run.json's content (``go_version``: the scenario's
    pinned Go when run.json names one, else the host's)."""
    pinned = (meta.get("toolchain") or {}).get("go") or ""
    if go_version is None and pinned.startswith("go1"):
        go_version = pinned.split()[0]
    return {
        "run_id": meta.get("run_id"),
        "scenario": meta.get("scenario"),
        "workspace": str(ws),
        "agent": meta.get("agent"),
        "agent_version": meta.get("agent_version"),
        "model": meta.get("model"),
        "started_at": meta.get("started_at"),
        "system": {
            "os": platform.system().lower(),
            "arch": {"x86_64": "amd64", "aarch64": "arm64"}.get(
                platform.machine(), platform.machine()
            ),
            "go_version": go_version if go_version is not None else _go_version(),
        },
    }


def token_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """goagentbench's TokenUsage from the gateway's measured usage."""
    cached = int(usage.get("cached_tokens") or 0)
    prompt = int(usage.get("prompt_tokens") or 0)
    output = int(usage.get("completion_tokens") or 0)
    return {
        "input": max(prompt - cached, 0),
        "cached_input": cached,
        "write_cached_input": 0,
        "output": output,
        "total": prompt + output,
        "cost": float(usage.get("cost_usd") or 0.0),
    }


def run_progress(
    meta: dict[str, Any], phases: list[dict[str, Any]], usage: dict[str, Any], now: str
) -> dict[str, Any]:
    """goagentbench's RunProgress from run.json, the agent phases and the usage."""
    agent = [p for p in phases if p.get("name") == "agent"]
    ended = agent[-1].get("ended_at") if agent and agent[-1].get("ended_at") else None
    return {
        "run_id": meta.get("run_id"),
        "scenario": meta.get("scenario"),
        "agent": meta.get("agent"),
        "agent_version": meta.get("agent_version"),
        "model": meta.get("model"),
        "started_at": meta.get("started_at"),
        "updated_at": now,
        "ended_at": ended,
        "duration_seconds": round(sum(float(p.get("duration_s") or 0) for p in agent), 3),
        "token_usage": token_usage(usage),
        "transcripts": [],
        "turns": len(agent),
    }


def write_run_start(ws: Path, meta: dict[str, Any]) -> None:
    _exclude(ws)
    write_json(ws / RUN_START, run_start(meta, ws))


def write_run_progress(ws: Path, progress: dict[str, Any]) -> None:
    _exclude(ws)
    write_json(ws / RUN_PROGRESS, progress)
