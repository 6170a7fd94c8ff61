"""What a finished trial hands back: its outcome word, its run folder, report.json's object
and report.txt's text."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TrialResult:
    outcome: str
    run_dir: Path
    report: dict[str, Any]
    text: str = ""  # report.txt


__all__ = ["TrialResult"]
