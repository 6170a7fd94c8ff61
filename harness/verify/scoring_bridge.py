"""Attach a graded, era-stamped score to a verification outcome.

Test-based scenarios get the implicit suite (one check per test target, rules as a
critical); scenarios with ``verify.suite`` run their own suite against the tree. Every
report therefore has the same shape: rows, arithmetic, era.
"""

from __future__ import annotations

import hashlib
import http.client
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.appkit.jail import protecting
from harness.appkit.netns import private_network
from harness.errors import UserError
from harness.scoring import (
    Score,
    Scorer,
    TestTargetResult,
    absent,
    check_pin,
    mark_vacuous,
    render_json,
    render_text,
    suite_from_tests,
)
from harness.util.registry import Registry
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import VerifyRequest
from harness.verify.suite_source import import_suite
from harness.verify.verdict import decide

if TYPE_CHECKING:
    from harness.scenario.model import LoadedScenario

TESTS_SUITE_VERSION = "1.0.0"
CHECK_PREFIX = "tests:"


def load_suite_module(suite_dir: Path) -> Any:
    """Import ``<suite_dir>/suite.py`` under a unique module name, from its sources
    (``suite_source``)."""
    path = suite_dir / "suite.py"
    if not path.is_file():
        raise UserError(
            "suite folder has no suite.py",
            file=suite_dir,
            field="verify.suite",
            fix="add suite.py defining `suite` and `context(tree, seed, evidence_dir)`",
        )
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return import_suite(f"harness_suite_{digest}", path)  # the same name in every process


def check_suite_pin(loaded: LoadedScenario) -> None:
    """Refuse, before a run is written, a scenario whose calibrated thresholds miss their
    pin: its scorer would refuse at verification, after the agent's whole run."""
    suite_dir = loaded.scenario.verify.suite
    if suite_dir:
        check_pin(load_suite_module(loaded.directory / suite_dir).suite)


def _graded_counts(t: Any) -> TestTargetResult:
    """A target as the implicit suite grades it. A required target whose command
    succeeded with no tests (goagentbench: "no test files" passes) counts as 1/1; one whose
    command failed although every parsed test passed counts as failed."""
    passed, total, error = t.passed, t.total, t.error
    if t.kind == "required" and t.ok is not None:
        if t.ok and total == 0:
            passed, total = 1, 1
        elif not t.ok and error is None and passed == total:
            error = f"test command failed (exit {t.exit_code})"
    return TestTargetResult(f"{CHECK_PREFIX}{t.target}", t.kind, passed, total, error)


def tests_score(outcome: VerifyOutcome) -> Score:
    targets = [_graded_counts(t) for t in outcome.targets]
    bad = [f"{r.rule} {r.entry}: {r.detail}" for r in outcome.rules if not r.ok]
    suite, rows = suite_from_tests(
        targets,
        not bad,
        "; ".join(bad) or "modification rules hold",
        version=TESTS_SUITE_VERSION,
    )
    return Scorer(suite).score_rows(rows)


def suite_score(request: VerifyRequest, tree: Path) -> tuple[Score, float]:
    """Run the scenario's own suite on ``tree``; returns the score and the success bar."""
    assert request.suite_dir is not None
    module = load_suite_module(Path(request.suite_dir))
    scorer = Scorer(module.suite)
    scorer.start()
    thresholds = scorer.thresholds()
    evidence = Path(request.evidence_dir or tree.parent / "evidence")
    evidence.mkdir(parents=True, exist_ok=True)

    # an app the suite executes must not reach the suite, the hidden material, the
    # evidence (trace) or the tree's original copy (see appkit.jail), nor any network
    # but this scoring's own loopback (appkit.netns)
    hidden: list[Path | str | None] = [request.suite_dir, request.hidden_root, evidence, tree]
    try:
        with (
            private_network(),
            protecting(hidden),
            module.context(tree, request.seed, evidence) as ctx,
        ):
            score = scorer.score(ctx)
    except http.client.HTTPException as exc:
        # the app answered with something that is not HTTP, and the suite's client gave
        # up: the app's doing, never the harness's (an error would charge the harness)
        said = f"the app broke HTTP ({type(exc).__name__}: {str(exc)[:200]})"
        score = scorer.score_rows(mark_vacuous([c.row(absent(said)) for c in module.suite.checks]))
    return score, (thresholds.bar if thresholds else 1.0)


def score_tests(
    outcome: VerifyOutcome, request: VerifyRequest, tree: Path
) -> tuple[Score, float | None]:
    """Scorer kind ``tests``: the implicit suite over the test targets (no bar of its own)."""
    return tests_score(outcome), None


def score_suite(
    outcome: VerifyOutcome, request: VerifyRequest, tree: Path
) -> tuple[Score, float | None]:
    """Scorer kind ``suite``: the scenario's own suite (``verify.suite``) and its bar."""
    return suite_score(request, tree)


ScoreKind = Callable[[VerifyOutcome, VerifyRequest, Path], tuple[Score, "float | None"]]
# the scorer kinds by name; plugins add kinds through the ``harness.scorers`` entry points
SCORER_KINDS: Registry[ScoreKind] = Registry(
    "scorer kind",
    "harness.scorers",
    {
        "tests": "harness.verify.scoring_bridge:score_tests",
        "suite": "harness.verify.scoring_bridge:score_suite",
    },
)


def scorer_kind(request: VerifyRequest) -> str:
    """The kind that grades ``request``: ``suite`` with ``verify.suite``, else ``tests``."""
    return "suite" if request.suite_dir else "tests"


def attach_score(outcome: VerifyOutcome, request: VerifyRequest, tree: Path) -> VerifyOutcome:
    """The outcome with its score, era, success bar and (decided once) success."""
    if request.copy_only:
        return outcome.model_copy(update={"success": decide(outcome).success})
    score, bar = SCORER_KINDS.load(scorer_kind(request))(outcome, request, tree)
    error = outcome.error
    if not score.measurable and error is None:
        error = "the scorer could not measure anything (every check unavailable)"
    if request.suite_dir and score.unavailable and error is None:
        # unmeasurable is not success: a missing browser or tier is infrastructure
        why = next(r.detail for r in score.rows if r.check == score.unavailable[0])
        error = f"not measurable: {', '.join(score.unavailable)} unavailable ({why})"
    scored = outcome.model_copy(
        update={
            "score": render_json(score),
            "era": score.era,
            "report_text": render_text(score),
            "bar": bar,
            "error": error,
        }
    )
    return scored.model_copy(update={"success": decide(scored).success})
