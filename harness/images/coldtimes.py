"""How long an image's first build took when measured (seconds, on the project's 2-core
machine), so that a first run says what it is building and about how long it takes.
Figures, not promises: they were taken under the load named in docs/PERFORMANCE.md and
docs/QUICKSTART-REAL-MODEL.md; an image not measured gets no estimate."""

from __future__ import annotations

COLD_BUILD_S = {  # measured at load 4-6 (engine) and 20-32 (the agents); see the docs
    "engine": 86,
    "agent-mini": 774,
    "agent-aider": 630,
    "agent-node": 45,
    "agent-claude": 35,
    "agent-codex": 472,
    "agent-opencode": 720,
    "agent-openhands": 723,
    "agent-qwen": 420,
}


def estimate(name: str) -> str:
    """`` (about N min cold)`` for a measured image, else ``""``."""
    seconds = COLD_BUILD_S.get(name)
    if seconds is None:
        return ""
    return f" (about {max(1, round(seconds / 60))} min cold)"
