"""What the agent did in one trial, read from its run folder for ``harness view RUN`` and
the board's run page: the conversation as the gateway recorded it (``gateway/
transcript.jsonl``, every turn's folder), each call's tokens and time (``telemetry.jsonl``,
joined on the call id), the commands the agent ran (its tool calls), the diff, and each
failing check's evidence (test output, scoring rows with their evidence files). Anything
missing (an older run, a built-in agent, no trial log yet) is left out, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.fleet.calltimes import call_times, describe, trial_times

MAX_LOG = 20_000  # characters of trial.log shown
MAX_FAILING = 8  # failing MUSTs or tests named in the "why" summary


def check_state(row: dict[str, Any]) -> str:
    """A scoring row as a reader should see it, in agreement with its score: ``pass``,
    ``partial``, ``fail``, ``absent`` or ``vacuous`` (real zeros), or ``unavailable``
    (the harness could not measure). The row's own ``status`` says only how to read the
    score (``ok``: measured), so it is never shown alone."""
    status = str(row.get("status") or "ok")
    if status != "ok":
        return status
    score = row.get("score")
    if not isinstance(score, int | float):
        return "unavailable"
    tolerance = row.get("tolerance")
    bar = 1.0 - (float(tolerance) if isinstance(tolerance, int | float) else 0.0)
    if score >= bar - 1e-9:
        return "pass"
    return "fail" if score <= 0 else "partial"


@dataclass
class Why:
    """What a reader asks first: the outcome and why, in the order the page and
    ``harness view`` show it."""

    outcome: str
    score: Any
    cause: str = ""  # an error run's cause, or what stopped the agent (budget, limit)
    failing: list[str] = field(default_factory=list)  # unmet MUSTs, else failing tests
    more_failing: int = 0  # failing ones not named
    agent_exit: str = ""
    tokens: str = ""
    cost: str = ""
    time: str = ""
    failovers: list[str] = field(default_factory=list)
    grader: str = ""

    def rows(self) -> list[tuple[str, str]]:
        """``(label, text)`` pairs, empty ones left out, in the reading order."""
        failing = ", ".join(self.failing) + (
            f" and {self.more_failing} more" if self.more_failing else ""
        )
        pairs = [
            ("outcome", f"{self.outcome.upper()}  score {_num(self.score)}"),
            ("cause" if self.outcome == "error" else "stopped by", self.cause),
            ("failing", failing),
            ("agent exit", self.agent_exit),
            ("tokens", self.tokens),
            ("cost", self.cost),
            ("time", self.time),
            ("host failover", "; ".join(self.failovers)),
            ("grader", self.grader),
        ]
        return [(k, v) for k, v in pairs if v]


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.{digits}f}"
    return "-"


def _failing_names(report: dict[str, Any]) -> list[str]:
    """Unmet MUSTs when the scenario names them, else the failing tests and checks."""
    musts = [f"MUST {m}" for m in report.get("unmet_musts") or []]
    if musts:
        return musts
    names = [f"rule {r.get('rule')} {r.get('entry')}" for r in report.get("rules") or []
             if not r.get("ok")]  # fmt: skip
    for row in [*(report.get("tests") or []), *(report.get("partial_tests") or [])]:
        if row.get("kind") == "rules":
            continue
        cases = [str(c.get("name")) for c in row.get("cases") or [] if not c.get("passed")]
        if cases:
            names += cases
        elif not row.get("passed"):
            names.append(str(row.get("name")))
    if not names:
        for row in (report.get("scoring") or {}).get("rows") or []:
            if check_state(row) not in ("pass", "unavailable"):
                names.append(str(row.get("check")))
    return names


def _failovers(run_dir: Path, usage: dict[str, Any]) -> list[str]:
    """Calls the gateway sent to more than one host (from its telemetry), e.g.
    ``call c3: h1 (503) -> h2``; else a count from the usage when attempts failed on
    several hosts."""
    out = []
    if os.path.isdir(f"{run_dir}/gateway"):
        attempts: dict[str, list[dict[str, Any]]] = {}
        for path in sorted((run_dir / "gateway").rglob("telemetry.jsonl")):
            for line in _jsonl(path):
                attempts.setdefault(str(line.get("call")), []).append(line)
        for call, tries in attempts.items():
            if len({t.get("host") for t in tries}) > 1:
                hops = [
                    str(t.get("host"))
                    + ("" if t.get("status") == 200 else f" ({t.get('status') or t.get('error')})")
                    for t in tries
                ]
                out.append(f"call {call}: " + " -> ".join(hops))
    hosts = usage.get("hosts")
    if not out and isinstance(hosts, dict) and len(hosts) > 1 and usage.get("failed_attempts"):
        used = ", ".join(f"{h} ({n})" for h, n in hosts.items())
        out.append(f"{usage['failed_attempts']} failed attempt(s); attempts by host: {used}")
    return out


def _usage_text(usage: dict[str, Any]) -> tuple[str, str]:
    def count(key: str) -> str:
        value = usage.get(key)
        return f"{int(value):,}" if isinstance(value, int | float) else "?"

    if not usage:
        return "none recorded", "none recorded"
    tokens = f"{count('prompt_tokens')} in / {count('completion_tokens')} out"
    if usage.get("cached_tokens"):
        tokens += f" ({count('cached_tokens')} cached)"
    tokens += f"; {count('calls')} model call(s)"
    cost = usage.get("cost_usd")
    return tokens, (f"${cost:.4f}" if isinstance(cost, int | float) else "unknown")


def build_why(
    run_dir: Path,
    report: dict[str, Any],
    usage: dict[str, Any] | None = None,
    phases: list[dict[str, Any]] | None = None,
) -> Why:
    """The "why" summary of one run from its report, usage and phases."""
    usage = usage or {}
    outcome = str(report.get("outcome") or "?")
    why = Why(outcome, report.get("score"), grader=str(report.get("grader") or ""))
    if outcome == "error":
        why.cause = str(report.get("error") or "no cause recorded")
    else:
        reason = report.get("reason")
        if reason:
            detail = report.get("reason_detail")
            why.cause = f"{reason}: {detail}" if detail else str(reason)
        if outcome != "success":
            names = _failing_names(report)
            why.failing, why.more_failing = names[:MAX_FAILING], max(0, len(names) - MAX_FAILING)
    by_name = {str(p.get("name")): p for p in phases or []}
    agent = by_name.get("agent")
    if agent:
        detail = agent.get("detail")
        why.agent_exit = str(agent.get("outcome") or "?") + (f": {detail}" if detail else "")
    why.tokens, why.cost = _usage_text(usage)
    times = [
        f"{name} {float(by_name[name]['duration_s']):.1f} s"
        for name in ("setup", "agent", "verify")
        if isinstance(by_name.get(name, {}).get("duration_s"), int | float)
    ]
    why.time = ", ".join(times)
    why.failovers = _failovers(run_dir, usage)
    return why


@dataclass
class Step:
    """One model call: what was new in the request, the reply, its tokens and time."""

    call: str
    turn: str
    messages: list[dict[str, Any]]
    reply: dict[str, Any] | None
    error: str | None
    tools: list[str]
    telemetry: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        calls = (self.reply or {}).get("tool_calls") or []
        return [c for c in calls if isinstance(c, dict)]


@dataclass
class Failing:
    """A check that did not pass, with what shows why."""

    name: str
    detail: str
    output: str = ""
    evidence: list[str] = field(default_factory=list)


@dataclass
class TrialView:
    run_dir: Path
    steps: list[Step]
    commands: list[str]
    diff: str
    failing: list[Failing]
    log: str
    truncated: bool = False
    verdict: str = ""  # "<scenario> <agent> + <model>: <outcome> score <s>", "" without a report
    why: Why | None = None  # None without a report
    flags: list[str] = field(default_factory=list)  # review flags (report.json), never a verdict


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def _arguments(tool_call: dict[str, Any]) -> tuple[str, Any]:
    """``(name, arguments)`` of a tool call in the OpenAI or the cassette shape."""
    inner = tool_call.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else tool_call
    name = str(fn.get("name") or "?")
    args = fn.get("arguments")
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    return name, args


def command_of(tool_call: dict[str, Any]) -> str:
    """A tool call as one readable command line (``bash``'s command as it is)."""
    name, args = _arguments(tool_call)
    if isinstance(args, dict) and isinstance(args.get("command"), str):
        return str(args["command"])
    return f"{name}({json.dumps(args, ensure_ascii=False)[:300]})"


def _steps(run_dir: Path) -> tuple[list[Step], bool]:
    if not os.path.isdir(f"{run_dir}/gateway"):  # most runs: one stat, no Path
        return [], False
    gateway = run_dir / "gateway"
    folders = [gateway, *sorted(p for p in gateway.iterdir() if p.is_dir())]
    steps: list[Step] = []
    truncated = False
    for folder in folders:
        turn = folder.name if folder != gateway else "turn-1"
        timing = {str(t.get("call")): t for t in _jsonl(folder / "telemetry.jsonl")}
        for line in _jsonl(folder / "transcript.jsonl"):
            if line.get("truncated"):
                truncated = True
                continue
            call = str(line.get("call"))
            steps.append(
                Step(
                    call=call,
                    turn=turn,
                    messages=[m for m in line.get("messages") or [] if isinstance(m, dict)],
                    reply=line.get("reply") if isinstance(line.get("reply"), dict) else None,
                    error=line.get("error"),
                    tools=list(line.get("tools") or []),
                    telemetry=timing.get(call, {}),
                )
            )
    return steps, truncated


def _failing(report: dict[str, Any]) -> list[Failing]:
    """The failing checks with their output; none for an ``error`` run (its tests were
    not the agent's to pass: the run shows its cause instead)."""
    if report.get("outcome") == "error":
        return []
    out = []
    for rule in report.get("rules") or []:
        if not rule.get("ok"):
            out.append(Failing(f"{rule.get('rule')} {rule.get('entry')}", str(rule.get("detail"))))
    for row in [*(report.get("tests") or []), *(report.get("partial_tests") or [])]:
        cases = [c for c in row.get("cases") or [] if not c.get("passed")]
        if row.get("passed") and not cases:
            continue
        output = "\n\n".join(
            f"{c.get('name')}:\n{c.get('output') or ''}".rstrip() for c in cases
        ) or str(row.get("output") or "")
        names = [str(c.get("name")) for c in cases]
        detail = str(row.get("error") or "failed")
        if names:
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            detail = f"{len(names)} failing: {', '.join(names[:5])}{more}"
        out.append(Failing(str(row.get("name")), detail, output))
    for row in (report.get("scoring") or {}).get("rows") or []:
        if check_state(row) not in ("pass", "unavailable"):
            if str(row.get("check", "")).startswith(("tests:", "modification-rules")):
                continue  # shown above, from the test rows and the rules
            out.append(
                Failing(
                    str(row.get("check")),
                    f"{row.get('harm') or ''}: {row.get('detail') or ''}".strip(": "),
                    evidence=[str(e) for e in row.get("evidence") or []],
                )
            )
    return out


def load_view(
    run_dir: Path, report: dict[str, Any] | None = None, diff: str | None = None
) -> TrialView:
    """The trial view of ``run_dir`` (every part optional); a caller that has already
    read the run's ``report`` or ``diff`` passes them, so they are not read twice (the
    board reads every run's report for its page)."""
    steps, truncated = _steps(run_dir)
    commands = [command_of(tc) for s in steps for tc in s.tool_calls]
    if diff is None:
        diff_path = run_dir / "workspace.diff"
        diff = diff_path.read_text(errors="replace") if diff_path.is_file() else ""
    if report is None:
        report_path = run_dir / "verify" / "report.json"
        report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    log_path = f"{run_dir}/trial.log"
    log = Path(log_path).read_text(errors="replace")[-MAX_LOG:] if os.path.isfile(log_path) else ""
    verdict = ""
    why = None
    if report:
        progress = _json(run_dir / "progress.json")
        usage = progress.get("usage") if isinstance(progress.get("usage"), dict) else {}
        phases = progress.get("phases") if isinstance(progress.get("phases"), list) else []
        why = build_why(run_dir, report, usage, phases)
        verdict = (
            f"{report.get('scenario')}  {report.get('agent')} + {report.get('model')}: "
            f"{str(report.get('outcome', '?')).upper()}  score {report.get('score')}"
        )
        if report.get("error"):
            verdict += f"  ({report['error']})"
    failing = _failing(report)
    flags = [str(f) for f in report.get("review_flags") or []] if report else []
    return TrialView(run_dir, steps, commands, diff, failing, log, truncated, verdict, why, flags)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def find_run(results: Path, name: str) -> Path | None:
    """A run folder from a path or a run id (searched under ``results``)."""
    given = Path(name)
    if (given / "run.json").is_file():
        return given
    hits = sorted(p.parent for p in results.glob(f"**/{name}/run.json"))
    return hits[-1] if hits else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return _tool_result(content)
    if isinstance(content, list):  # content parts
        return "\n".join(str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _tool_result(text: str) -> str:
    """A tool result an agent sends as JSON (``{"returncode": 0, "output": "..."}``, as
    mini-swe-agent does) shown as the command's output, escapes undone."""
    if not text.startswith("{") or '"output"' not in text:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or not isinstance(data.get("output"), str):
        return text
    code, output = data.get("returncode"), str(data["output"])
    return (f"(exit {code}) " if code is not None else "") + output


def render_view(view: TrialView) -> str:
    """The trial as text, in the run page's order: the outcome and why (failing MUSTs or
    tests, the agent's exit, tokens, cost, time, host failovers), the failing checks
    with their output, each call (new messages, reply, tool calls, tokens, time), the
    commands, and the diff's size."""
    lines = [f"run {view.run_dir}"]
    lines.append(view.verdict or "not verified (no verify/report.json)")
    if view.why is not None:  # first: the outcome and why
        lines += [f"  {k:<13}  {v}" for k, v in view.why.rows()]
    if view.failing:
        lines.append("\nfailing checks:")
        for f in view.failing:
            lines.append(f"  x {f.name}: {f.detail}")
            lines += [f"      {ln}" for ln in f.output.strip().splitlines()[-15:]]
            lines += [f"      evidence: {e}" for e in f.evidence]
    elif view.why is not None and view.why.outcome == "error":
        lines.append("\nnot graded: the run ended in an infrastructure error (cause above)")
    lines.append("\nconversation:")
    if not view.steps:
        lines.append("no model calls recorded (a built-in agent, or an older run)")
    for n, step in enumerate(view.steps, 1):
        t = step.telemetry
        tokens = f"{t.get('prompt_tokens', '?')} in / {t.get('completion_tokens', '?')} out"
        lines.append(
            f"\n-- call {n} ({step.turn}, {step.call}): {tokens}, {t.get('total_s', '?')} s"
        )
        if t:
            lines.append(f"  [timing] {describe(call_times(t))}")
        for m in step.messages:
            lines.append(f"  [{m.get('role')}] {_text(m.get('content'))[:600]}")
        if step.error:
            lines.append(f"  [error] {step.error}")
        if step.reply is not None:
            lines.append(f"  [assistant] {_text(step.reply.get('content'))[:600]}")
            lines += [f"  [tool call] {command_of(tc)[:600]}" for tc in step.tool_calls]
    if view.truncated:
        lines.append("\n(the transcript was cut at its size bound)")
    summed = trial_times([s.telemetry for s in view.steps if s.telemetry])
    if summed:
        lines.append(f"\nengine telemetry over {summed['timed_calls']} call(s): {describe(summed)}")
    if view.commands:
        lines.append("\ncommands the agent ran:")
        lines += [f"  $ {c.splitlines()[0][:200]}" for c in view.commands]
    if view.flags:
        lines.append("\nreview flags (for a person to look at; they never change the verdict):")
        lines += [f"  ! {f}" for f in view.flags[:30]]
    changed = sum(1 for ln in view.diff.splitlines() if ln.startswith("diff --git"))
    lines.append(f"\ndiff: {changed} file(s) changed ({view.run_dir / 'workspace.diff'})")
    return "\n".join(lines) + "\n"
