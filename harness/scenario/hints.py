"""What to suggest for a scenario name that names nothing: the closest names."""

from __future__ import annotations

import difflib
from pathlib import Path


def scenario_hint(name: str, known: list[str], root: Path) -> str:
    """The fix for an unknown scenario ``name``: up to three close names (whole or by
    their last part, so ``wordfreq`` finds ``go/wordfreq``), else where they live."""
    if not known:
        return f"no scenarios under {root}: set HARNESS_HOME to a project, or add one there"
    tails = {k.rpartition("/")[2]: k for k in known}
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    close += [tails[t] for t in difflib.get_close_matches(name, list(tails), n=3, cutoff=0.6)]
    close = list(dict.fromkeys(close))[:3]
    if close:
        return f"did you mean {' or '.join(close)}? `harness scenarios` lists all {len(known)}"
    return f"`harness scenarios` lists the {len(known)} scenarios under {root}"
