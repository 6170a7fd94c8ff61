"""``harness compare A B`` and ``harness report --power``: one pair in full, and the
scenarios and trials a chosen difference needs. Pure: tables in, text or dicts out.

An entrant is named ``AGENT[@VERSION][:MODEL]`` (the model may itself contain colons).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.errors import UserError
from harness.report.paired import Paired, Plan, compare, plan, varies
from harness.report.stats import Estimate, clustered, mean, sample_var
from harness.report.summary import EntrantSummary, EraTable, detectable, pair_detail

DEFAULT_DELTA = 0.10


@dataclass(frozen=True)
class Spec:
    agent: str
    version: str | None
    model: str | None

    @classmethod
    def parse(cls, text: str) -> Spec:
        head, _, model = text.partition(":")
        agent, _, version = head.partition("@")
        if not agent.strip():
            raise UserError(
                f"'{text}' names no agent", field="ENTRANT", fix="e.g. claude@1.0:sonnet or nop"
            )
        return cls(agent.strip(), version.strip() or None, model.strip() or None)

    def matches(self, e: EntrantSummary) -> bool:
        return (
            e.agent == self.agent
            and self.version in (None, e.agent_version)
            and self.model in (None, e.model)
        )


@dataclass(frozen=True)
class Comparison:
    era: str
    a: EntrantSummary
    b: EntrantSummary
    paired: Paired  # errors excluded (the ranking's test)
    paired_zero: Paired  # errors as zeros
    a_shared: Estimate  # each side's mean on the shared scenarios only
    b_shared: Estimate
    plan: Plan
    table_mde: float | None = None  # the era table's (what `report` prints), all entrants
    table_entrants: int = 2


def _pick(table: EraTable, spec: Spec, text: str) -> EntrantSummary | None:
    found = [e for e in table.entrants if spec.matches(e)]
    if len(found) > 1:
        names = ", ".join(f"{e.agent}@{e.agent_version}:{e.model}" for e in found)
        raise UserError(
            f"'{text}' matches {len(found)} entrants in era {table.era}: {names}",
            field="ENTRANT",
            fix="name the version and model, e.g. AGENT@VERSION:MODEL",
        )
    return found[0] if found else None


def _within(e: EntrantSummary, names: Sequence[str]) -> float | None:
    """Mean trial-to-trial variance over the scenarios with repeated trials."""
    return mean([v for n in names if (v := sample_var(e.clusters[n])) is not None])


def build(table: EraTable, a: EntrantSummary, b: EntrantSummary, delta: float) -> Comparison:
    """Everything ``compare`` prints for one pair within one table."""
    pr = compare(a.clusters, b.clusters)
    shared = sorted(k for k in a.clusters.keys() & b.clusters.keys())
    wa, wb = _within(a, shared), _within(b, shared)
    within = None if wa is None or wb is None else wa + wb
    k = min((min(len(a.clusters[n]), len(b.clusters[n])) for n in shared), default=1)
    return Comparison(
        table.era,
        a,
        b,
        pr,
        compare(a.clusters_zero, b.clusters_zero),
        clustered({n: a.clusters[n] for n in shared}),
        clustered({n: b.clusters[n] for n in shared}),
        plan(delta, pr.var_d, within, k),
        table.mde,
        len(table.entrants),
    )


def find(tables: Sequence[EraTable], a: str, b: str, delta: float) -> list[Comparison]:
    """The pair in every table where both appear; a user error when in none."""
    sa, sb = Spec.parse(a), Spec.parse(b)
    out = []
    for t in tables:
        ea, eb = _pick(t, sa, a), _pick(t, sb, b)
        if ea is not None and eb is not None and ea is not eb:
            out.append(build(t, ea, eb, delta))
    if not out:
        raise UserError(
            f"no era where both '{a}' and '{b}' have results",
            field="ENTRANT",
            fix="see `harness report` for the entrants of each era",
        )
    return out


def _est(e: Estimate) -> str:
    if e.mean is None:
        return "-"
    se = "?" if e.se is None else f"{e.se:.3f}"
    ci = "" if e.low is None or e.high is None else f"  95% CI [{e.low:.3f}, {e.high:.3f}]"
    return f"{e.mean:.3f} ± {se}{ci}{' (Wilson)' if e.method == 'wilson' else ''}"


def _opt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def plan_lines(p: Plan) -> list[str]:
    trials = ", ".join(f"{k} trial(s): {n} scenarios" for k, n in p.needed.items())
    lines = [f"to detect a difference of {p.delta:.2f} at 80% power (alpha 0.05): {trials}"]
    lines.append(
        f"  between-scenario variance {p.between:.4f}, within-scenario "
        + ("unknown (no repeated trials: more trials are assumed not to help)"
           if p.within is None else f"{p.within:.4f}")
        + f"; {p.source}"
    )  # fmt: skip
    return lines


def text(c: Comparison) -> str:
    """The human form of one comparison."""
    a, b, p = c.a, c.b, c.paired
    out = [f"era {c.era}", f"  A = {a.label}", f"  B = {b.label}"]
    out.append(
        f"shared scenarios: {p.t} (A ran {len(a.clusters)}, B ran {len(b.clusters)}; "
        "compared only on the scenarios both ran)"
    )
    for name, e, s in (("A", a, c.a_shared), ("B", b, c.b_shared)):
        out.append(f"{name}: score {_est(e.score)} over {e.score.n} scenario(s)")
        out.append(f"   on the shared set {_est(s)}")
        out.append(
            f"   success {_opt(e.success.mean)} (errors excluded), "
            f"{_opt(e.success_as_zero.mean)} (errors as 0); infra errors {e.infra_errors}; "
            f"trials per scenario {e.trials}; pass@{e.trials} {_opt(e.pass_at_k)}, "
            f"pass^{e.trials} {_opt(e.pass_hat_k)}; flip rate {_opt(e.flip_rate)}"
        )
    out.append(f"difference A - B (errors excluded): {pair_detail(p)}")
    if p.se is not None:
        unpaired = "-" if p.unpaired_se is None else f"{p.unpaired_se:.3f}"
        out.append(f"   paired SE {p.se:.3f} (unpaired would be {unpaired})")
    method = (
        "exact McNemar on the discordant scenarios"
        if p.method == "mcnemar"
        else "paired bootstrap over scenarios (10,000 resamples, fixed seed); p is the "
        "larger of the bootstrap's and the exact sign test's"
    )
    out.append(f"   test: {method}")
    out.append(f"   scenarios A did better on: {p.b}, B did better on: {p.c}")
    out.append(f"difference A - B (errors as 0): {pair_detail(c.paired_zero)}")
    out.append(f"correlation of per-scenario scores: {_opt(p.correlation)}")
    value, source = detectable([p], p.t)  # report's own rule, for this pair
    if value is not None:
        out.append(
            f"minimum detectable difference (80% power, alpha 0.05, paired, T={p.t}): "
            f"{value:.3f} ({source})"
        )
    else:
        out.append(f"minimum detectable difference: none ({source})")
    if c.table_entrants > 2 and c.table_mde is not None:  # report's figure is the table's
        out.append(
            f"   (`harness report` prints the era table's, over {c.table_entrants} entrants: "
            f"{c.table_mde:.3f})"
        )
    out += plan_lines(c.plan)
    separable = p.method != "none" and p.p <= 0.05 and (p.diff or 0.0) != 0.0
    out.append(
        "verdict: "
        + ("separable" if separable else "not separable")
        + f" at alpha 0.05 (p={p.p:.3g}; this pair alone, no multiple-comparison correction)"
    )
    return "\n".join(out) + "\n"


def _paired_dict(p: Paired) -> dict[str, Any]:
    return {
        "shared": p.t,
        "diff": p.diff,
        "se": p.se,
        "unpaired_se": p.unpaired_se,
        "low": p.low,
        "high": p.high,
        "p": p.p,
        "method": p.method,
        "correlation": p.correlation,
        "a_better": p.b,
        "b_better": p.c,
        "mde": detectable([p], p.t)[0],
    }


def as_dict(c: Comparison) -> dict[str, Any]:
    return {
        "era": c.era,
        "a": c.a.as_dict(),
        "b": c.b.as_dict(),
        "a_shared_mean": c.a_shared.mean,
        "b_shared_mean": c.b_shared.mean,
        "paired": _paired_dict(c.paired),
        "paired_errors_as_zero": _paired_dict(c.paired_zero),
        "plan": {"delta": c.plan.delta, "needed": c.plan.needed, "source": c.plan.source},
    }


def power_text(tables: Sequence[EraTable], delta: float) -> str:
    """``report --power``: per table, the scenarios and trials ``delta`` needs, from the
    table's own paired variances (or planning defaults when it has no pair)."""
    if not tables:
        return "\n".join(plan_lines(plan(delta, None, None, 1))) + "\n"
    out = []
    for t in tables:
        var_ds = [p.var_d for p in t.pairs.values() if varies(p.var_d)]
        var_d = statistics.median(var_ds) if var_ds else None
        withins = [
            w
            for e in t.entrants
            if (w := _within(e, list(e.clusters))) is not None and e.trials > 1
        ]
        within = 2 * sum(withins) / len(withins) if withins else None
        k = min((e.trials for e in t.entrants), default=1)
        out.append(f"era {t.era} ({len(t.entrants)} entrant(s), {t.union} scenario(s))")
        if t.mde is not None:
            out.append(f"  today: the smallest detectable difference is {t.mde:.3f}")
        out += ["  " + line for line in plan_lines(plan(delta, var_d, within, k))]
    return "\n".join(out) + "\n"
