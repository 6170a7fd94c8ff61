"""The run page's trial viewer: first the outcome and why (``why_html``) and the failing
checks with their output folded (``failing_html``); then the agent's conversation step
by step (one ``<details>`` per model call, with its tokens and time) and the commands it
ran (``trial_html``). Built from ``harness.report.trialview``; static HTML, no script."""

from __future__ import annotations

from typing import Any

from harness.report.board.pages import esc
from harness.report.trialview import TrialView, _text, command_of


def _message(role: Any, text: str) -> str:
    return f'<div class="msg role-{esc(role)}"><b>{esc(role)}</b><pre>{esc(text)}</pre></div>'


def _step(n: int, step: Any) -> str:
    t = step.telemetry
    head = (
        f"call {n} &middot; {esc(step.turn)} &middot; {esc(t.get('prompt_tokens', '?'))} in / "
        f"{esc(t.get('completion_tokens', '?'))} out &middot; {esc(t.get('total_s', '?'))} s"
        + (" &middot; error" if step.error else "")
        + (f" &middot; {len(step.tool_calls)} tool call(s)" if step.tool_calls else "")
    )
    body = [_message(m.get("role"), _text(m.get("content"))) for m in step.messages]
    if step.error:
        body.append(f'<p class="error">{esc(step.error)}</p>')
    if step.reply is not None:
        body.append(_message("assistant", _text(step.reply.get("content"))))
        body += [f'<pre class="tool-call">$ {esc(command_of(tc))}</pre>' for tc in step.tool_calls]
    return f'<details class="step" id="step-{n}"><summary>{head}</summary>{"".join(body)}</details>'


def why_html(view: TrialView) -> str:
    """The first screen: outcome, cause, failing MUSTs or tests, the agent's exit,
    tokens, cost, time, host failovers (``trialview.Why``)."""
    if view.why is None:
        return '<p class="note">not verified (no verify/report.json)</p>'
    rows = "".join(
        f'<tr class="why-{esc(k.replace(" ", "-"))}"><th>{esc(k)}</th><td>{esc(v)}</td></tr>'
        for k, v in view.why.rows()
    )
    return (
        f'<section class="why outcome-{esc(view.why.outcome)}"><table class="why">'
        f"{rows}</table></section>"
    )


def failing_html(view: TrialView, shots: dict[str, str]) -> str:
    """Each failing check with its detail, evidence links and its output folded."""
    if view.why is not None and view.why.outcome == "error":
        return (
            '<h2>failing checks</h2><p class="note">not graded: the run ended in an '
            "infrastructure error (its cause is above), never charged to the agent</p>"
        )
    parts = ["<h2>failing checks</h2>"]
    if not view.failing:
        parts.append('<p class="note">none</p>')
    for f in view.failing:
        links = []
        for item in f.evidence:
            name = item.replace("\\", "/").rsplit("/", 1)[-1]
            links.append(
                f'<a href="{esc(shots[name])}">{esc(name)}</a>' if name in shots else esc(item)
            )
        lines = f.output.count("\n") + 1
        output = (
            f'<details class="output"><summary>output ({lines} line(s))</summary>'
            f'<pre class="evidence">{esc(f.output)}</pre></details>'
            if f.output
            else ""
        )
        parts.append(
            f'<div class="failing"><h3><code>{esc(f.name)}</code></h3><p>{esc(f.detail)}</p>'
            + output
            + (f"<p>evidence: {', '.join(links)}</p>" if links else "")
            + "</div>"
        )
    return "".join(parts)


def trial_html(view: TrialView) -> str:
    """The conversation, the commands and the trial log, below the page's first screen."""
    parts = ["<h2>conversation</h2>"]
    if view.steps:
        parts += [_step(n, s) for n, s in enumerate(view.steps, 1)]
        if view.truncated:
            parts.append('<p class="note">the transcript was cut at its size bound</p>')
    else:
        parts.append('<p class="note">no model calls recorded</p>')
    parts.append("<h2>commands the agent ran</h2>")
    if view.commands:
        parts.append(
            '<details class="commands"><summary>'
            f"{len(view.commands)} command(s)</summary>"
            '<ol class="commands">'
            + "".join(f"<li><pre>{esc(c)}</pre></li>" for c in view.commands)
            + "</ol></details>"
        )
    else:
        parts.append('<p class="note">none recorded</p>')
    if view.flags:  # for a person to review; they never change the verdict
        parts.append("<h2>review flags</h2>")
        parts.append(
            '<p class="note">what a fix rarely needs and a forger usually does; never a verdict</p>'
        )
        items = "".join(f"<li><code>{esc(f)}</code></li>" for f in view.flags[:50])
        parts.append(f'<ul class="flags">{items}</ul>')
    if view.log:
        parts.append(f'<details class="log"><summary>trial log</summary><pre>{esc(view.log)}</pre>')
        parts.append("</details>")
    return "".join(parts)
