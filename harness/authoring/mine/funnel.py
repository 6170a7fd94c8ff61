"""The mining funnel: how many commits reached each stage, and why each one stopped.

Written as ``funnel.json`` (for tools and tests) and ``funnel.md`` (for people) in the
output folder; every commit walked appears exactly once, kept or with its reason.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

STAGES = ("walked", "shape", "proven", "drafted")


@dataclass(frozen=True)
class Entry:
    sha: str
    date: str
    subject: str
    stage: str  # the stage it failed ("shape", "proven"), or "drafted" when kept
    reason: str  # why it was rejected; for a kept one, the draft's folder
    f2p: int = 0
    p2p: int = 0
    flaky: int = 0


@dataclass
class Funnel:
    repo: str
    since: str | None
    limit: int | None
    sandbox: str
    runs: int
    entries: list[Entry] = field(default_factory=list)

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)

    @property
    def kept(self) -> list[Entry]:
        return [e for e in self.entries if e.stage == "drafted"]

    @property
    def rejected(self) -> list[Entry]:
        return [e for e in self.entries if e.stage != "drafted"]

    def counts(self) -> dict[str, int]:
        """Commits that reached each stage (passed every stage before it)."""
        reached = [
            len(STAGES) if e.stage == "drafted" else STAGES.index(e.stage) for e in self.entries
        ]
        return {stage: sum(1 for r in reached if r > i) for i, stage in enumerate(STAGES)}

    def to_json(self) -> dict[str, object]:
        return {
            "repo": self.repo,
            "since": self.since,
            "limit": self.limit,
            "sandbox": self.sandbox,
            "runs": self.runs,
            "counts": self.counts(),
            "commits": [asdict(e) for e in self.entries],
        }

    def markdown(self) -> str:
        c = self.counts()
        lines = [
            f"# harness mine {self.repo}",
            "",
            f"window: since {self.since or '-'}, limit {self.limit or '-'}; "
            f"proved {self.runs}x per tree in the {self.sandbox} verifier",
            "",
            " -> ".join(f"{stage} {c[stage]}" for stage in STAGES),
            "",
            "| commit | date | stage | F2P | P2P | flaky | reason / draft | subject |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for e in self.entries:
            subject = e.subject.replace("|", "\\|")[:70]
            reason = e.reason.replace("|", "\\|")
            lines.append(
                f"| {e.sha[:10]} | {e.date} | {e.stage} | {e.f2p} | {e.p2p} | {e.flaky} "
                f"| {reason} | {subject} |"
            )
        return "\n".join(lines) + "\n"

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "funnel.json").write_text(json.dumps(self.to_json(), indent=2) + "\n")
        (folder / "funnel.md").write_text(self.markdown())
