"""The verify report: goagentbench's fields plus harness's, as JSON and as text."""

from __future__ import annotations

from typing import Any

from harness.results import REPORT_SCHEMA_VERSION
from harness.verify.results import VerifyOutcome


def build_report(run: dict[str, Any], outcome: VerifyOutcome, result: str) -> dict[str, Any]:
    """``run`` is run.json's content; ``result`` the trial outcome word."""
    tests = [
        {
            "name": f"{t.target} :: {c.name}" if c.name != t.target else c.name,
            "passed": c.passed,
            "output": c.output,
            "error": c.error,
            "target": t.target,
            "kind": t.kind,
        }
        for t in outcome.targets
        for c in t.tests
    ]
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "run_id": run.get("run_id"),
        "scenario": run.get("scenario"),
        "scenario_version": run.get("scenario_version"),
        "scenario_sha": run.get("scenario_sha"),
        "spec_sha256": run.get("spec_sha256"),
        "seed": run.get("seed"),
        "agent": run.get("agent"),
        "agent_version": run.get("agent_version"),
        "model": run.get("model"),
        "harness_version": run.get("harness_version"),
        "turns": run.get("turns", 1),
        "success": outcome.success,
        "outcome": result,
        "partial_score": outcome.partial_score,
        "score": (outcome.score or {}).get("final"),
        "era": outcome.era,
        "tests": tests,
        "targets": [
            {
                "target": t.target,
                "kind": t.kind,
                "passed": t.passed,
                "total": t.total,
                "error": t.error,
                "command": t.command,
                "duration_s": round(t.duration_s, 3),
            }
            for t in outcome.targets
        ],
        "rules": [r.model_dump() for r in outcome.rules],
        "changed_files": outcome.changed_files,
        "hidden_files": outcome.hidden_files,
        "scoring": outcome.score,
        "verify_duration_s": round(outcome.duration_s, 3),
        "error": outcome.error,
    }


def render_text(report: dict[str, Any], scoring_text: str = "") -> str:
    """A readable summary: verdict, rules, targets, failing tests, score arithmetic."""
    mark = {True: "PASS", False: "FAIL"}
    lines = [
        f"scenario  {report['scenario']} v{report.get('scenario_version')}  "
        f"seed {report.get('seed')}",
        f"entrant   {report['agent']} {report.get('agent_version')} + {report['model']}",
        f"outcome   {report['outcome'].upper()}  success={report['success']}  "
        f"partial={_fmt(report.get('partial_score'))}  score={_fmt(report.get('score'))}  "
        f"era={report.get('era') or '-'}",
        f"grader    {report.get('grader', '-')}",
        "",
        "rules:",
    ]
    lines += [
        f"  [{mark[r['ok']]}] {r['rule']} {r['entry']}: {r['detail']}" for r in report["rules"]
    ]
    if not report["rules"]:
        lines.append("  (none)")
    lines += ["", "tests:"]
    for t in report["targets"]:
        lines.append(
            f"  [{mark[t['passed'] == t['total'] and not t['error']]}] {t['kind']:8} "
            f"{t['target']}: {t['passed']}/{t['total']} passed"
            + (f" ({t['error']})" if t["error"] else "")
        )
    failing = [t for t in report["tests"] if not t["passed"]]
    for t in failing[:20]:
        first = (t.get("output") or "").strip().splitlines()[-1:] or [""]
        lines.append(f"      x {t['name']}  {first[0][:120]}")
    if len(failing) > 20:
        lines.append(f"      ... {len(failing) - 20} more failing")
    if scoring_text:
        lines += ["", scoring_text.rstrip()]
    if report.get("error"):
        lines += ["", f"error: {report['error']}"]
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
