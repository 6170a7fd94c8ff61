"""A trial's usage: what the gateway measured per turn, and the sum over turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.backends import Gateway


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


__all__ = ["gateway_usage", "merge_usage"]
