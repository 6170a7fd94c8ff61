"""A trial's usage: what the gateway measured per turn, the sum over turns, and
goagentbench's run-progress record built from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.backends import Gateway
from harness.results import RunDir, RunMeta, gab, now_iso


def merge_usage(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Add one turn's usage to the run's: numbers add up, host counts merge."""
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            if isinstance(value, dict) and isinstance(out.get(key), dict) and key == "hosts":
                merged = dict(out[key])
                for host, n in value.items():
                    merged[host] = merged.get(host, 0) + n
                out[key] = merged
            else:
                out[key] = value
        else:
            out[key] = out.get(key, 0) + value
    return out


def gateway_usage(gateway: Gateway, dest: Path, self_reported: dict[str, Any]) -> dict[str, Any]:
    """Tokens, calls, time and cost from the gateway's own record; the agent's claim beside."""
    usage = dict(gateway.collect(dest))
    if self_reported:
        usage["self_reported"] = self_reported
        measured = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        claimed = self_reported.get("total_tokens")
        if claimed is not None and measured and abs(claimed - measured) > 0.05 * measured:
            usage["self_report_disagrees"] = True
    return usage


def gab_progress(
    run: RunDir, meta: RunMeta, workspace: Path, *, write: bool = False
) -> dict[str, Any] | None:
    """goagentbench's run progress (None when no agent ran); written to the
    workspace's ``.run-progress.json`` when ``write``."""
    if not any(p.name == "agent" for p in run.phases):
        return None
    phases = [p.as_dict() for p in run.phases]
    progress = gab.run_progress(meta.as_json(), phases, run.usage, now_iso())
    if write:
        gab.write_run_progress(workspace, progress)
    return progress


__all__ = ["gab_progress", "gateway_usage", "merge_usage"]
