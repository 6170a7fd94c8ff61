"""One trial, its phases in order: the trial itself (``trial``: entrant, agent turns,
verify, report), its workspace (``workspace``: clone, checkout, copy, patch, exec, spec,
baseline), its secret seed (``seed``) and its sandbox limits (``containment``).

``harness.trial`` re-exports the names ``harness/trial.py`` had before the layout move
(``from harness.trial import execute`` keeps working). They load lazily, so importing
``harness.trial.workspace`` does not import the whole trial runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.trial.entrant import Entrant, RunOptions, resolve_entrant
    from harness.trial.trial import (
        CONTINUE_PROMPT,
        MAX_CONTINUES,
        POINTER,
        Trial,
        TrialResult,
        execute,
        run_agent,
        verify,
    )
    from harness.trial.usage import merge_usage

__all__ = [
    "CONTINUE_PROMPT",
    "MAX_CONTINUES",
    "POINTER",
    "Entrant",
    "RunOptions",
    "Trial",
    "TrialResult",
    "execute",
    "merge_usage",
    "resolve_entrant",
    "run_agent",
    "verify",
]

_SUBMODULES = {"containment", "seed", "trial", "workspace"}


def __getattr__(name: str) -> Any:
    """The old ``harness.trial`` module's names, from ``harness.trial.trial``."""
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib

    if name in _SUBMODULES:  # `from harness.trial import seed`: the module, not a name
        return importlib.import_module(f"harness.trial.{name}")
    module = importlib.import_module("harness.trial.trial")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'harness.trial' has no attribute {name!r}") from None
