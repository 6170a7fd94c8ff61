"""App-execution kit: run a built app, drive it against a seeded mock, look at it.

The swarm-bench lineage scores build-from-spec apps by *executing* them. This package
holds the pieces a scenario's suite composes: seed derivation (``seeding``), process
control with SIGKILL/respawn (``procs``), a seeded mock dependency that writes a JSONL
trace (``mockdep``) and a headless-browser probe (``browser``).
"""

from harness.scoring.appkit.seeding import between, derive, derive_bytes, pick, rng

__all__ = ["between", "derive", "derive_bytes", "pick", "rng"]
