"""The run page's engine telemetry section: each model call's time to first token,
prefill and decode rates and prompt-cache share (from the engine's own timings where it
sent them, the gateway's clock otherwise), and the trial's sums. Its own section, kept
apart from the page's layout (``board/pages.py``) and the conversation
(``board/trialpage.py``)."""

from __future__ import annotations

from typing import Any

from harness.fleet.calltimes import call_times, describe, trial_times
from harness.report.board.pages import esc, table
from harness.report.trialview import TrialView


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else esc(format(value, fmt))


def engine_html(view: TrialView) -> str:
    """``<h2>engine telemetry</h2>`` and a table of the calls (empty: a note)."""
    rows = []
    timed = [s for s in view.steps if s.telemetry]
    for n, step in enumerate(view.steps, 1):
        if not step.telemetry:
            continue
        t = call_times(step.telemetry)
        rows.append(
            [
                f'<a href="#step-{n}">{n}</a>',
                esc(step.telemetry.get("prompt_tokens", "?")),
                esc(step.telemetry.get("completion_tokens", "?")),
                _cell(t["ttft_s"], ".3g"),
                _cell(t["prefill_tps"], ".4g"),
                _cell(t["decode_tps"], ".4g"),
                "-" if t["cache_share"] is None else esc(f"{100 * t['cache_share']:.0f}%"),
                esc(t["source"]),
            ]
        )
    parts = ['<section class="engine-telemetry"><h2>engine telemetry</h2>']
    if not rows:
        parts.append('<p class="note">no timed model calls</p></section>')
        return "".join(parts)
    summed = trial_times([s.telemetry for s in timed])
    parts.append(f'<p class="engine-sum">trial: {esc(describe(summed))}</p>')
    headers = ["call", "tok in", "tok out", "ttft s", "prefill tok/s", "decode tok/s"]
    parts.append(table([*headers, "cache", "timed by"], rows, "engine-calls"))
    parts.append("</section>")
    return "".join(parts)
