"""The verify report: goagentbench's fields plus harness's, as JSON and as text."""

from __future__ import annotations

from typing import Any

from harness.results import REPORT_SCHEMA_VERSION, now_iso
from harness.results.report import Report
from harness.results.report.targets import CaseRow, RuleRow, RulesRow, TargetRow, TestRow
from harness.results.report.trial import Containment
from harness.util.escape import for_terminal, one_line
from harness.verify.outcome import TargetResult, VerifyOutcome

RULES_ROW = "verify.modification-rules"  # goagentbench's name for a rules violation


def target_row(t: TargetResult) -> TestRow:
    """One row per target, as goagentbench writes it (``name`` is the entry, ``passed``
    its verdict), with harness's per-test detail nested under ``cases``."""
    failing = [c for c in t.tests if not c.passed]
    return TestRow(
        name=t.target,
        passed=t.all_passed,
        output=failing[0].output if failing else "",
        error=t.error or (f"exit status {t.exit_code}" if not t.all_passed else None),
        kind=t.kind,
        passed_tests=t.passed,
        total_tests=t.total,
        cases=[CaseRow.model_validate(c.model_dump()) for c in t.tests],
    )


def rules_row(outcome: VerifyOutcome) -> RulesRow | None:
    """goagentbench's row for the broken modification rules; None when every rule holds."""
    bad = [f"{r.rule} {r.entry}: {r.detail}" for r in outcome.rules if not r.ok]
    if not bad:
        return None
    return RulesRow(
        name=RULES_ROW, passed=False, output="", kind="rules", error="\n".join(bad), cases=[]
    )


def target_record(t: TargetResult) -> TargetRow:
    """One row per target as harness ran it."""
    return TargetRow(
        target=t.target,
        kind=t.kind,
        ok=t.all_passed,
        exit_code=t.exit_code,
        passed=t.passed,
        total=t.total,
        error=t.error,
        env_error=t.env_error,
        command=t.command,
        duration_s=round(t.duration_s, 3),
    )


def build_report(
    run: dict[str, Any],
    outcome: VerifyOutcome,
    result: str,
    progress: dict[str, Any] | None = None,
    *,
    grader: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Report:
    """report.json's ``Report`` (the one place it is built; ``Report.as_json()`` is what
    is written).

    ``run`` is run.json's content; ``result`` the trial outcome word; ``progress``
    goagentbench's run-progress record (token usage, times), when an agent ran;
    ``grader`` the grader's proof verdict; ``extra`` the trial's further fields
    (containment's stop reason and policy, the scoring slot), written after the rest."""
    broken = rules_row(outcome)
    tests: list[TestRow | RulesRow] = [] if broken is None else [broken]
    tests += [target_row(t) for t in outcome.targets if t.kind == "required"]
    partial_tests = [target_row(t) for t in outcome.targets if t.kind == "partial"]
    score = outcome.score or {}
    fields: dict[str, Any] = {
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
        "sandboxes": run.get("sandboxes") or {},  # where each phase ran
        "turns": run.get("turns", 1),
        "success": outcome.success,
        "outcome": result,
        "partial_score": outcome.partial_score,
        "score": score.get("final"),
        "era": outcome.era,
        "started_at": run.get("started_at"),
        "verified_at": now_iso(),
        "progress": progress,
        "toolchain": outcome.toolchain or {},  # an ungraded (refused) outcome ran none
        "tests": tests,
        "partial_tests": partial_tests,
        "targets": [target_record(t) for t in outcome.targets],
        "rules": [RuleRow.model_validate(r.model_dump()) for r in outcome.rules],
        "changed_files": outcome.changed_files,
        "hidden_files": outcome.hidden_files,
        "scoring": outcome.score,
        "verify_duration_s": round(outcome.duration_s, 3),
        "error": outcome.error,
        # what kept the verdict out of the code's reach (verify/guard.py)
        "containment": Containment(
            restored=outcome.restored, rejected=outcome.rejected, test_user=outcome.test_user
        ),
        # every MUST of the SPEC met (None: the scenario's grading has no MUST ids)
        "spec_met": score.get("spec_met"),
        "unmet_musts": score.get("unmet") or [],
    }
    if grader is not None:
        fields["grader"] = grader
    if outcome.review_flags:  # only when found: a report without flags reads as before
        fields["review_flags"] = outcome.review_flags
    return Report.model_validate({**fields, **(extra or {})})


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
    ]
    lines += [f"model     {note}" for note in report.get("model_notes") or []]
    if report.get("spec_met") is not None:
        unmet = report.get("unmet_musts") or []
        lines.append(
            "spec      every MUST met"
            if report["spec_met"]
            else f"spec      MUSTs not met: {', '.join(unmet) or 'a critical fired'}"
        )
    lines += [
        "",
        "rules:",
    ]
    lines += [
        f"  [{mark[r['ok']]}] {r['rule']} {one_line(r['entry'])}: {one_line(r['detail'])}"
        for r in report["rules"]
    ]
    if not report["rules"]:
        lines.append("  (none)")
    lines += ["", "tests:"]
    for t in report["targets"]:
        lines.append(
            f"  [{mark[t.get('ok', t['passed'] == t['total'] and not t['error'])]}] {t['kind']:8} "
            f"{one_line(t['target'])}: {t['passed']}/{t['total']} passed"
            + (f" ({one_line(t['error'])})" if t["error"] else "")
        )
    failing = [
        {"name": f"{row['name']} :: {c['name']}", **{k: c[k] for k in ("passed", "output")}}
        for row in report["tests"] + report.get("partial_tests", [])
        for c in row.get("cases", [])
        if not c["passed"]
    ]
    for t in failing[:20]:
        first = (t.get("output") or "").strip().splitlines()[-1:] or [""]
        lines.append(f"      x {one_line(t['name'])}  {first[0][:120]}")
    if len(failing) > 20:
        lines.append(f"      ... {len(failing) - 20} more failing")
    held = report.get("containment") or {}
    if held.get("restored") or held.get("rejected"):
        lines += ["", "restored before the hidden tests ran (runner-steering files):"]
        lines += [f"  {one_line(r)}" for r in held.get("restored", [])] or ["  (none)"]
        lines += [f"  REJECTED {one_line(r)}" for r in held.get("rejected", [])]
    flags = report.get("review_flags") or []
    if flags:
        lines += ["", "review flags (for a person to look at; they never change the verdict):"]
        lines += [f"  {one_line(f)}" for f in flags[:30]]
        lines += [f"  ... {len(flags) - 30} more"] if len(flags) > 30 else []
    chain = report.get("toolchain") or {}
    if chain.get("ran") or chain.get("go"):
        verifier = (report.get("sandboxes") or {}).get("verify")
        where = chain.get("go_reason") or ("host" if verifier == "local" else "image")
        lines += ["", f"toolchain {chain.get('ran') or '-'}  ({where})"]
    if scoring_text:
        lines += ["", scoring_text.rstrip()]
    if report.get("error"):
        lines += ["", f"error: {one_line(report['error'])}"]
    return for_terminal("\n".join(lines) + "\n")  # names and output are the workspace's


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def diff_note(diff: dict[str, Any] | None) -> str:
    """A line for report.txt when workspace.diff is not the whole change."""
    if not diff or (diff.get("status") == "ok" and not diff.get("skipped")):
        return ""
    left = "; ".join(f"{k}: {v}" for k, v in sorted((diff.get("skipped") or {}).items())[:10])
    detail = diff.get("detail") or ""
    return f"workspace.diff: {diff.get('status')} {detail}".rstrip() + (
        f" (not diffed: {left})\n" if left else "\n"
    )
