"""What ends an agent phase early besides its timeout: a sandbox limit or the budget.

``Guard`` stands between the trial and the agent: the agent gets ``guard.sandbox``, a thin
proxy that remembers the first command a limit stopped (``limit: disk``, ``limit: memory``,
``limit: pids``, ``limit: output``); while the agent runs, a thread asks the trial's
gateway ``GET /v1/harness/budget`` and interrupts the running command once the budget is
exhausted. ``guard.verdict`` then turns the agent's own result into the phase outcome
(``limit`` or ``budget``) with a reason, which the trial records as outcome ``failed``.
The same endpoint names a harness fault (a fleet that cannot answer, the trial's own
model not served): the guard stops the agent within seconds and ``raise_fault`` makes the
phase an ``error`` naming it, never the agent's failure. And a request the agent chose
that cannot be served (a call its cassette does not hold, a model it named that nobody
serves: ``refused``) stops it too, as its own failure (``failed``, reason ``refused``):
an agent cannot turn its failure into ``error``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness.config.budget import Budget
from harness.errors import InfraError
from harness.verify.outcome import VerifyOutcome
from harness.verify.verdict import STOP_OUTCOMES

if TYPE_CHECKING:
    from harness.agents.base import AgentResult
    from harness.sandbox.base import ExecResult, Sandbox

BudgetTokensOpt = Annotated[
    int | None,
    typer.Option("--budget-tokens", help="stop each trial past this many tokens", min=1),
]
BudgetCostOpt = Annotated[
    float | None,
    typer.Option("--budget-cost-usd", help="stop each trial past this cost (USD)", min=0.000001),
]
BudgetCallsOpt = Annotated[
    int | None, typer.Option("--budget-calls", help="stop each trial past this many calls", min=1)
]
BudgetCallTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--budget-call-tokens",
        help="at most this many tokens generated per model call",
        min=1,
    ),
]
BUDGET_POLL_S = 1.0
FAULT_POLL_S = 2.0  # without a budget the gateway is still asked for harness faults
HARNESS_FAULT = "harness"  # the interrupt reason when the gateway reports a harness fault
BUDGET_PATH = "/harness/budget"  # under the gateway's /v1


class WatchedSandbox:
    """A sandbox proxy that keeps the first limit any command ran into."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.limit: tuple[str, str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def spec(self) -> Any:
        return self.inner.spec

    @property
    def project_dir(self) -> str:
        return self.inner.project_dir

    def exec(self, cmd: list[str], **kwargs: Any) -> ExecResult:
        res = self.inner.exec(cmd, **kwargs)
        if res.limit and self.limit is None:
            self.limit = (res.limit, res.limit_detail)
        return res


class Guard:
    """Limits and budget of one agent phase (see the module docstring)."""

    def __init__(self, sandbox: Sandbox, budget: Budget | None = None) -> None:
        self.sandbox = WatchedSandbox(sandbox)
        self.budget = budget if budget is not None and not budget.unlimited else None
        self.exhausted: str | None = None
        self.fault: str | None = None  # a harness fault the gateway reported (not the agent's)
        self.refused: str | None = None  # a request of the agent's the gateway could not serve
        self.used: dict[str, Any] = {}
        self._stop = threading.Event()

    @contextlib.contextmanager
    def watching(self, gateway: Any) -> Iterator[None]:
        """While the block runs, stop the agent's command once the budget is exhausted or
        the gateway reports a harness fault (a cassette miss, a fleet that cannot answer)."""
        if gateway is None:
            yield
            return
        thread = threading.Thread(
            target=self._poll, args=(gateway,), name="harness-budget", daemon=True
        )
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join(10)
            self._check(gateway)  # a last look: the agent may have stopped on the refusal

    def _poll(self, gateway: Any) -> None:
        every = BUDGET_POLL_S if self.budget is not None else FAULT_POLL_S
        while not self._stop.wait(every):
            if self._check(gateway):
                why = HARNESS_FAULT if self.fault else "refused" if self.refused else "budget"
                self.sandbox.inner.interrupt(why)
                return

    def _check(self, gateway: Any) -> bool:
        state = budget_state(gateway)
        if state is None:
            return False
        self.used = state.get("used") or {}
        if state.get("fault") and self.fault is None:
            self.fault = str(state["fault"])
        if state.get("refused") and self.refused is None and self.fault is None:
            self.refused = str(state["refused"])
        if self.budget is not None and state.get("exhausted") and self.exhausted is None:
            self.exhausted = str(state["exhausted"])
        return self.exhausted is not None or self.fault is not None or self.refused is not None

    def raise_fault(self) -> None:
        """Raise the harness fault the gateway reported, if any: the phase is an ``error``
        naming the cause, never the agent's failure."""
        if self.fault is not None:
            raise InfraError(f"harness fault, the agent was stopped: {self.fault}")

    def reason(self) -> tuple[str, str, str] | None:
        """``(phase outcome, reason, detail)`` when the phase ended on a limit or budget, or
        on a request of its own the gateway refused."""
        if self.refused is not None and self.fault is None:
            return "limit", "refused", f"the agent's model request cannot be served: {self.refused}"
        if self.sandbox.limit is not None and self.sandbox.limit[0] != HARNESS_FAULT:
            kind, detail = self.sandbox.limit
            if kind == "budget":
                return "budget", "budget", self._budget_detail()
            return "limit", f"limit: {kind}", detail
        if self.exhausted is not None:
            return "budget", "budget", self._budget_detail()
        return None

    def _budget_detail(self) -> str:
        used = ", ".join(f"{k} {v}" for k, v in sorted(self.used.items()))
        return f"{self.exhausted or 'budget'} exhausted ({used})"

    def measured(self, result: AgentResult, usage: dict[str, Any]) -> AgentResult:
        """A budget stop's detail counted again from the gateway's telemetry of the whole
        turn (``usage``): the poll that stopped the agent saw the gateway mid-call (a
        call admitted, its tokens not yet written), so it could say ``tokens 0`` after
        817 were spent."""
        if result.exit != "budget" or not usage:
            return result

        def count(key: str) -> float:
            value = usage.get(key)
            return float(value) if isinstance(value, int | float) else 0.0

        spent = {
            "calls": int(count("calls")),
            "cost_usd": round(count("cost_usd"), 9),
            "tokens": int(count("prompt_tokens") + count("completion_tokens")),
        }
        self.used = {k: max(v, self.used.get(k) or 0) for k, v in spent.items()}
        return replace(result, detail=f"budget: {self._budget_detail()}")

    def verdict(self, result: AgentResult) -> AgentResult:
        """The agent's result, overridden by a limit or budget stop."""
        found = self.reason()
        if found is None:
            return result
        outcome, reason, detail = found
        return replace(result, exit=outcome, detail=f"{reason}: {detail}")  # type: ignore[arg-type]


def budget_flags(
    tokens: int | None,
    cost_usd: float | None,
    calls: int | None,
    call_tokens: int | None = None,
) -> Budget | None:
    """The job's ``--budget-*`` limits (None when none is given)."""
    if tokens is None and cost_usd is None and calls is None and call_tokens is None:
        return None
    return Budget(tokens=tokens, cost_usd=cost_usd, calls=calls, call_tokens=call_tokens)


def budget_state(gateway: Any) -> dict[str, Any] | None:
    """The gateway's ``GET /v1/harness/budget`` answer, or None when it cannot tell.

    A gateway object may answer itself (``budget_state()``); a container gateway is asked
    from inside its own container (the host has no route to an internal network); a local
    gateway over HTTP.
    """
    own = getattr(gateway, "budget_state", None)
    if callable(own):
        try:
            answer = own()
        except Exception:
            return None
        return answer if isinstance(answer, dict) else None
    url, key = getattr(gateway, "url", None), getattr(gateway, "key", None)
    if not url or not key:
        return None
    box = getattr(gateway, "sandbox", None)
    try:
        if box is not None and hasattr(box, "container_id"):
            port = url.rsplit(":", 1)[-1].split("/", 1)[0]
            res = box.exec(
                [
                    "curl",
                    "-sf",
                    "-H",
                    f"Authorization: Bearer {key}",
                    f"http://127.0.0.1:{port}/v1{BUDGET_PATH}",
                ],
                timeout=10,
            )
            text = res.stdout if res.ok else ""
        else:
            req = urllib.request.Request(
                url.rstrip("/") + BUDGET_PATH, headers={"Authorization": f"Bearer {key}"}
            )
            with urllib.request.urlopen(req, timeout=5) as resp:
                text = resp.read().decode()
        data = json.loads(text) if text else None
    except Exception:
        return None
    return data if isinstance(data, dict) else None


def stopped(run: Any) -> Any:
    """An ungraded outcome when the last agent turn was stopped by a limit or the budget.

    The trial is over (outcome ``failed``); its workspace is not graded: it may hold what
    the bomb left (over the size the verifier's copy gets) and the budget's cut is final.
    """

    agents = [p for p in run.phases if p.name == "agent"]
    if not agents or agents[-1].outcome not in STOP_OUTCOMES:
        return None
    return VerifyOutcome.ungraded(report_text=f"not graded: {agents[-1].detail}\n")


def record(meta: dict[str, Any], policy: Any, budget: Budget | None) -> None:
    """Put the sandbox policy and the trial's budget into run.json's ``meta``."""
    meta["sandbox_policy"] = policy.record()
    if budget is not None and not budget.unlimited:
        meta["budget"] = budget.model_dump(by_alias=True, exclude_none=True)


def report_fields(meta: dict[str, Any], agent_phase: Any) -> dict[str, Any]:
    """Fields report.json gets from run.json and the last agent phase (reason, policy)."""
    out: dict[str, Any] = {}
    if "sandbox_policy" in meta:
        out["sandbox_policy"] = meta["sandbox_policy"]
    if "budget" in meta:
        out["budget"] = meta["budget"]
    if agent_phase is not None and agent_phase.outcome in STOP_OUTCOMES:
        parts = agent_phase.detail.split(": ")
        out["reason"] = ": ".join(parts[:2]) if agent_phase.outcome == "limit" else "budget"
        out["reason_detail"] = agent_phase.detail
    return out
