"""Text and JSON forms of a ``Score``: the arithmetic, then every row below 1.0 with harm.

The text names each step (inner, gate, excellence, each critical factor, final) so a
reader can redo the sum by hand; the JSON form is the pydantic dump and carries the same.
"""

from __future__ import annotations

from typing import Any

from harness.scoring.compose import Score
from harness.scoring.rows import Status


def render_json(score: Score) -> dict[str, Any]:
    """JSON-ready dict of the full score (rows, factors, gates, root-block notes)."""
    return score.model_dump(mode="json")


def render_text(score: Score) -> str:
    """Human-readable report: the arithmetic, rows below 1.0 with their harm, notes."""
    fp = (score.fingerprint or "unpinned")[:12]
    lines = [f"suite {score.suite}   era {score.era}   fingerprint {fp}"]
    tiers = ", ".join(
        f"{t} (w {score.tier_weights[t]:g}) {_num(m)}" for t, m in score.tier_means.items()
    )
    lines.append(f"inner       {score.inner:.4f}   tier means: {tiers}")
    if not score.measurable:
        lines.append("            NOT MEASURABLE: every weighted tier was unavailable")
    met = sum(g.met for g in score.gates)
    gates = (
        "; ".join(
            f"{g.gate} [{_num(g.value)} {'met' if g.met else 'not met'}]" for g in score.gates
        )
        or "no gates"
    )
    lines.append(f"gate        {score.gate:.4f}   {met}/{len(score.gates)}: {gates}")
    e = score.excellence_weight
    lines.append(f"excellence  {_num(score.excellence)}   slice {e:g}")
    how = (
        f"= {1 - e:g} x inner + {e:g} x gate x excellence"
        if e and score.excellence is not None
        else "= inner"
    )
    lines.append(f"base        {score.base:.4f}   {how}")
    for f in score.factors:
        covers = f"   folds in {', '.join(f.covers)}" if f.covers else ""
        lines.append(
            f"critical    {f.factor:.4f}   {f.check} [{f.severity}]: "
            f"{f.floor:g} + {1 - f.floor:g} x {f.score:.4f}{covers}"
        )
    product = " x ".join([f"{score.base:.4f}", *(f"{f.factor:.4f}" for f in score.factors)])
    lines.append(f"final       {score.final:.4f}   = {product}")
    if score.spec_met is not None:
        met = len(score.musts) - len(score.unmet)
        word = "SPEC MET" if score.spec_met else "SPEC NOT MET"
        lines.append(f"musts       {word}: {met}/{len(score.musts)} MUSTs met (this decides)")
        for m in score.musts:
            if not m.met:
                why = ", ".join(m.failing) if m.checks else "no check verifies it"
                lines.append(f"  unmet {m.id}: {why}")
        if score.fired:
            lines.append(f"  critical fired: {', '.join(score.fired)}")
    below = [r for r in score.rows if r.score < 1.0 or r.status is not Status.OK]
    if below:
        lines.append("below 1.0:")
    for r in below:
        detail = f" ({r.detail})" if r.detail else ""
        lines.append(f"  {r.score:.4f} [{r.status.value}] {r.check} <{r.tier}>: {r.harm}{detail}")
    lines.extend(f"note: {b.note}" for b in score.blocks)
    if score.unavailable:
        lines.append(f"unavailable (excluded, not the app's zero): {', '.join(score.unavailable)}")
    return "\n".join(lines) + "\n"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"
