"""One line per scoring for the long proofs (controls, calibration), with the time left.

A flagship's controls score 75 trees and its calibration over 200, 70-170 s apiece and
one at a time: hours in which a silent command looks hung. Each scoring ends with a line
naming the tree, its final and how long it took, and, once one tree has been scored for
real, an estimate of what is left (the mean of the real scorings so far times the trees
still to come; a tree read from the ledger or a kept scoring takes no time, so once one
was read the estimate is a bound).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field


def ids(unmet: list[str], most: int = 6) -> str:
    """SPEC ids for a progress line: a count past ``most`` (a dead app leaves all 54)."""
    names = sorted(unmet)
    return ",".join(names) if len(names) <= most else f"{len(names)} MUSTs"


def duration(seconds: float) -> str:
    """``42 s``, ``17 min``, ``3.4 h``."""
    if seconds < 89.5:
        return f"{int(seconds + 0.5)} s"
    if seconds < 5400:
        return f"{int(seconds / 60 + 0.5)} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class Progress:
    """Counts scorings and says each one (``emit``: None keeps quiet)."""

    total: int
    emit: Callable[[str], None] | None = None
    done: int = 0
    scored: list[float] = field(default_factory=list)  # seconds of each real scoring

    def left_s(self) -> float | None:
        """Seconds still to go if every remaining tree is scored for real."""
        if not self.scored:
            return None
        return statistics.fmean(self.scored) * max(0, self.total - self.done)

    def step(self, text: str, seconds: float, *, scored: bool) -> str:
        """Count one tree (``scored``: for real, not read) and emit its line."""
        self.done += 1
        if scored:
            self.scored.append(seconds)
        left = self.left_s()
        about = "at most about" if len(self.scored) < self.done else "about"  # some were read
        tail = f"; {about} {duration(left)} left" if left and self.done < self.total else ""
        how = duration(seconds) if scored else "read, not scored"
        line = f"[{self.done}/{self.total}] {text} ({how}{tail})"
        if self.emit is not None:
            self.emit(line)
        return line


__all__ = ["Progress", "duration", "ids"]
