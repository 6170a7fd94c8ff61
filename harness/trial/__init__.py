"""One trial, its phases in order: the trial itself (``trial``: entrant, agent turns,
verify, report), its workspace (``workspace``: clone, checkout, copy, patch, exec, spec,
baseline), its secret seed (``seed``) and its sandbox limits (``containment``).

``harness.trial`` lists the main names of its modules (``from harness.trial import
execute``); they load lazily, so importing ``harness.trial.workspace`` does not import the
whole trial runner. ``commands`` holds the calls behind ``run-agent``, ``verify`` and ``exec``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.trial.commands import execute, run_agent, verify
    from harness.trial.entrant import Entrant, RunOptions, resolve_entrant
    from harness.trial.result import TrialResult
    from harness.trial.trial import CONTINUE_PROMPT, MAX_CONTINUES, POINTER, Trial
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

#: Where each listed name lives (loaded on first use).
_HOMES = {
    "CONTINUE_PROMPT": "trial",
    "MAX_CONTINUES": "trial",
    "POINTER": "trial",
    "Trial": "trial",
    "Entrant": "entrant",
    "RunOptions": "entrant",
    "resolve_entrant": "entrant",
    "TrialResult": "result",
    "execute": "commands",
    "run_agent": "commands",
    "verify": "commands",
    "merge_usage": "usage",
}


def __getattr__(name: str) -> Any:
    """The names listed in ``__all__``, each from its module; the submodules by name."""
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib

    if name in _SUBMODULES:  # `from harness.trial import seed`: the module, not a name
        return importlib.import_module(f"harness.trial.{name}")
    if name not in _HOMES:
        raise AttributeError(f"module 'harness.trial' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.trial.{_HOMES[name]}"), name)
