"""Prove a candidate in the verifier: the new or changed tests fail (or do not build)
before the fix and pass after it, the old ones keep passing, every run the same.

Both trees go through the verifier a real trial uses (``harness.backends``: the
network-less scorer container, or the host with ``--sandbox local``), with the hidden
tests taken from the fix commit (``verify.tests-from``). Each tree is verified ``runs``
times; a test whose status differs between runs of one tree is flaky and dropped.
The classification (``classify``) is pure.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.agents.builtin import OracleAgent
from harness.backends import VerifySpec, get_backend
from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.scenario.model import LoadedScenario
from harness.trial.workspace import read_state, setup
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import make_request

RUNS = 3
Status = dict[tuple[str, str], bool]  # (target, test name) -> passed


@dataclass
class Runs:
    """Per-test statuses of one tree over its runs, and what stopped a run."""

    statuses: list[Status] = field(default_factory=list)
    build_failed: bool = False  # a test package did not build (counts as every test failing)
    timeout: str | None = None
    error: str | None = None
    passed: list[bool] = field(default_factory=list)  # per run: every target's command passed


@dataclass
class Proof:
    f2p: list[tuple[str, str]]
    p2p: list[tuple[str, str]]
    flaky: list[tuple[str, str]]
    problem: str | None  # why the candidate is rejected; None when it is proven
    before_build_failed: bool = False


def statuses(outcome: VerifyOutcome) -> tuple[Status, bool, str | None]:
    found: Status = {}
    build_failed = False
    timeout = None
    for target in outcome.targets:
        if target.error == "timeout":
            timeout = target.target
        for case in target.tests:
            if case.synthetic:
                build_failed = True
                continue
            found[(target.target, case.name)] = case.passed
    return found, build_failed, timeout


def classify(before: Runs, after: Runs) -> Proof:
    """F2P, P2P and flaky tests from the runs of both trees, and the verdict."""
    for runs, which in ((before, "before"), (after, "after")):
        if runs.error:
            return Proof([], [], [], f"environment error {which} the fix: {runs.error}")
        if runs.timeout:
            return Proof([], [], [], f"timeout {which} the fix: {runs.timeout}")
    if after.build_failed:
        return Proof([], [], [], "the tests do not build after the fix")
    names = sorted({k for s in before.statuses + after.statuses for k in s})
    flaky, f2p, p2p, p2f, f2f = [], [], [], [], []
    for key in names:
        b = {s.get(key) for s in before.statuses}
        a = {s.get(key) for s in after.statuses}
        if len(b) > 1 or len(a) > 1:
            flaky.append(key)
            continue
        was, now = b.pop(), a.pop()
        if now is True and was is True:
            p2p.append(key)
        elif now is True:
            f2p.append(key)  # failed, or absent (new, or its package did not build)
        elif was is True:
            p2f.append(key)
        elif now is False:
            f2f.append(key)
    problem = None
    if p2f:
        problem = f"the fix breaks tests that passed before: {_names(p2f)}"
    elif f2f:
        problem = f"tests fail after the fix too: {_names(f2f)}"
    elif not f2p:
        problem = "no test fails before and passes after" + (
            f" (flaky dropped: {_names(flaky)})" if flaky else ""
        )
    return Proof(f2p, p2p, flaky, problem, before.build_failed)


def _names(keys: list[tuple[str, str]], most: int = 4) -> str:
    shown = ", ".join(name for _, name in keys[:most])
    return shown + (f" and {len(keys) - most} more" if len(keys) > most else "")


class Prover:
    """Verifies trees of draft scenarios in one sandbox, under one scratch folder."""

    def __init__(self, settings: Settings, sandbox: str, runs: int = RUNS) -> None:
        self.settings = settings
        self.sandbox = sandbox
        self.backend = get_backend(sandbox)
        self.runs = runs
        self.tmp = Path(tempfile.mkdtemp(prefix="harness-mine-"))

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def tree_runs(
        self, loaded: LoadedScenario, tag: str, fixed: bool, runs: int | None = None
    ) -> Runs:
        result = Runs()
        try:
            settings = dataclasses.replace(self.settings, workspace=self.tmp / tag)
            ws = setup(loaded, settings)
            if fixed:
                OracleAgent.apply(loaded, ws)
            state = read_state(ws, loaded)
            for _ in range(runs or self.runs):
                request = make_request(
                    loaded,
                    ws,
                    state.baseline,
                    loaded.seed,
                    on_host=self.backend.on_host,
                    settings=self.settings,
                )
                spec = VerifySpec(loaded, ws, request, labels={"harness.phase": "mine"})
                outcome, _ = self.backend.verify(spec)
                if outcome.error:
                    result.error = outcome.error
                    break
                found, build_failed, timeout = statuses(outcome)
                result.statuses.append(found)
                result.passed.append(all(t.all_passed for t in outcome.targets))
                result.build_failed |= build_failed
                if timeout:
                    result.timeout = timeout
                    break
        except HarnessError as exc:
            result.error = exc.one_line()
        finally:
            shutil.rmtree(self.tmp / tag, ignore_errors=True)
        return result

    def separates(self, loaded: LoadedScenario, target: str) -> bool:
        """``target`` alone fails before the fix and passes after it, once each (a
        narrowed target can fail for its own reasons: a parent test that asserts which
        of its subtests ran)."""
        verify = loaded.scenario.verify.model_copy(update={"tests": [target], "partial_tests": []})
        probe = dataclasses.replace(
            loaded, scenario=loaded.scenario.model_copy(update={"verify": verify})
        )
        before = self.tree_runs(probe, "narrow-before", fixed=False, runs=1)
        after = self.tree_runs(probe, "narrow-after", fixed=True, runs=1)
        clean = not (before.error or before.timeout or after.error or after.timeout)
        return clean and before.passed == [False] and after.passed == [True]

    def prove(self, loaded: LoadedScenario) -> Proof:
        before = self.tree_runs(loaded, "before", fixed=False)
        if before.error or before.timeout:
            return classify(before, Runs())
        return classify(before, self.tree_runs(loaded, "after", fixed=True))
