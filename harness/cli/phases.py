"""Phase lines on stderr for one trial (``harness exec``): a trial whose images are
built already can still run minutes (an agent's turns, the verifier), and a newcomer
should see which phase it is in and where its log is, not a silent terminal."""

from __future__ import annotations

import sys

from harness.trial.hooks import TrialEvent, register_hook


def phase_line(ev: TrialEvent) -> str | None:
    """The line for a lifecycle event, or None for events said elsewhere."""
    f = ev.fields
    if ev.event == "agent-start":
        return (
            f"harness: agent {f.get('agent')} + {f.get('model')} turn {f.get('turn')} "
            f"running ({f.get('sandbox')}); log: {ev.run_dir / 'trial.log'}"
        )
    if ev.event == "agent-end":
        calls = (f.get("usage") or {}).get("calls")
        said = f"; {calls} model call(s)" if calls is not None else ""
        return f"harness: agent turn {f.get('turn')} ended: {f.get('exit')}{said}"
    if ev.event == "verify-start":
        return f"harness: verifying ({f.get('sandbox')}, {f.get('scorer')})"
    return None


def _print(ev: TrialEvent) -> None:
    line = phase_line(ev)
    if line:
        print(line, file=sys.stderr, flush=True)


def announce_phases() -> None:
    """Print each phase of the trials this process runs to stderr."""
    register_hook("cli-phases", _print)
