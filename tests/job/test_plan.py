"""Matrix expansion, scenario selection, resume classification and progress bookkeeping
(no processes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config.entrants import Registry
from harness.errors import UserError
from harness.job.ledger import RunRecord, TrialEntry
from harness.job.plan import JobConfig, Trial, expand, select_scenarios
from harness.job.progress import Tally
from harness.job.runner import classify

pytestmark = pytest.mark.unit


def _registry(project: Path) -> Registry:
    (project / "agents.yml").write_text(
        "agents:\n"
        "  - {name: a, version: '1', supports-llms: [x, y]}\n"
        "  - {name: b, version: '1', supports-llms: [y]}\n"
    )
    (project / "llms.yml").write_text("llms:\n  - {name: x, model: x}\n  - {name: y, model: y}\n")
    return Registry.load(project)


def test_expand_skips_unsupported_pairs_and_names_them(tmp_path: Path) -> None:
    config = JobConfig(
        agents=["a", "b"],
        models=["x", "y"],
        scenarios=["s1", "s2"],
        reps=2,
        seeds=["00000000000000aa"],
    )
    plan = expand(config, _registry(tmp_path))
    assert plan.skipped == ["b + x: not in the agent's supports-llms"]
    assert len(plan.trials) == 2 * 3 * 2  # scenarios x pairs x reps
    assert len({t.key for t in plan.trials}) == len({t.slug for t in plan.trials}) == 12
    assert {(t.agent, t.model) for t in plan.trials} == {("a", "x"), ("a", "y"), ("b", "y")}


def test_expand_defaults_and_refusals(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    plan = expand(JobConfig(agents=["a", "b"], scenarios=["s"]), reg)
    assert [(t.agent, t.model, t.seed) for t in plan.trials] == [("a", "x", None), ("b", "y", None)]
    with pytest.raises(UserError, match="unknown agent"):
        expand(JobConfig(agents=["zz"], scenarios=["s"]), reg)
    with pytest.raises(UserError, match="unknown model"):
        expand(JobConfig(agents=["a"], models=["zz"], scenarios=["s"]), reg)
    assert (
        JobConfig(agents=["a"], scenarios=["s"]).fingerprint()
        != JobConfig(agents=["a"], scenarios=["s"], reps=2).fingerprint()
    )


def _rec(outcome: str | None) -> RunRecord:
    return RunRecord(Path(f"/r/{outcome}"), outcome, 1.0 if outcome == "success" else 0.0)


def test_classify_from_results() -> None:
    trial = Trial("s", "a", "x", None, 0)
    fresh = TrialEntry.new(trial)
    assert classify(trial, fresh, [], 2).status == "pending"
    running = fresh.model_copy(update={"status": "running"})
    assert classify(trial, running, [_rec(None)], 2).status == "interrupted"
    done = classify(trial, running, [_rec(None), _rec("failed")], 2)
    assert (done.status, done.outcome, done.run_dir) == ("done", "failed", "/r/failed")
    retry = classify(trial, fresh, [_rec("error"), _rec("error")], 2)
    assert retry.status == "pending" and retry.infra_errors == 2
    assert classify(trial, fresh, [_rec("error")] * 3, 2).status == "error"


def test_tally_keeps_infra_errors_apart_from_failures() -> None:
    t = Tally(total=4)
    for _ in range(4):
        t.start()
    t.finish("done", "success")
    t.finish("done", "failed")
    t.retry()
    t.finish("error", "error")
    t.finish("interrupted", None)
    assert (t.done, t.failed, t.errors, t.retries, t.interrupted, t.running) == (3, 1, 1, 1, 1, 0)


SCENARIOS = ["go/a", "go/b", "py/a", "py/b", "py/c", "smoke/py-fast"]


@pytest.mark.unit
def test_globs_exclude_and_limit_pick_scenarios() -> None:
    assert select_scenarios(["py/*"], SCENARIOS) == ["py/a", "py/b", "py/c"]
    assert select_scenarios(["py/*", "go/a"], SCENARIOS, exclude=["py/b"]) == [
        "py/a",
        "py/c",
        "go/a",
    ]
    assert select_scenarios([], SCENARIOS, all_=True, limit=2) == ["go/a", "go/b"]
    assert "smoke/py-fast" not in select_scenarios(["*"], SCENARIOS)  # only when named
    assert select_scenarios(["smoke/*"], SCENARIOS) == ["smoke/py-fast"]
    for args, kwargs, field in (
        (["rust/*"], {}, "--scenarios"),
        (["py/*"], {"exclude": ["py/*"]}, "--exclude"),
        (["py/*"], {"limit": 0}, "--limit"),
    ):
        with pytest.raises(Exception) as err:
            select_scenarios(args, SCENARIOS, **kwargs)  # type: ignore[arg-type]
        assert field in str(err.value)
