"""``harness calibrate SCENARIO``: derive a suite's success bar from measured spreads.

The reference, the LOW tree and every defect are scored over several seeds (through the
same verification path as a trial, one executed-app scoring at a time). The success bar
is put midway between the worst reference score and the best score of any broken tree,
so every seed's reference passes and every LOW/defect tree fails; the spread is
printed. The thresholds file is rewritten with ``calibrated: true`` and the numbers that
justify it, and its sha256 is pinned in the suite (``thresholds_pin=...``), which makes
the scorer a new, non-``-rc`` era. When no bar separates the trees nothing is written.

The arithmetic (``propose``) is pure; ``calibrate`` does the I/O.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.agents.builtin import OracleAgent
from harness.appkit.seeding import derive_bytes
from harness.config.settings import Settings
from harness.errors import UserError
from harness.grader.calibration_ledger import LEDGER, Entry, Ledger
from harness.grader.controls import LOW_PATCH, ControlRunner, load_defects
from harness.grader.memo import tree_digest
from harness.grader.scoring_progress import Progress, ids
from harness.scenario.model import LoadedScenario
from harness.scoring.coverage import succeeds
from harness.scoring.era import (
    PIN_ARGUMENT,
    PIN_FILE,
    code_fingerprint,
    load_thresholds,
    sha256_file,
)
from harness.util.fs import write_atomic
from harness.verify.scoring_bridge import load_suite_module

_PIN = re.compile(PIN_ARGUMENT)


@dataclass
class Spread:
    """Final scores of one tree over the calibration seeds."""

    tree: str
    finals: list[float] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)  # trial success per seed
    unmet: set[str] = field(default_factory=set)  # SPEC ids left unmet on some seed
    spec_failed: list[bool] = field(default_factory=list)  # per seed: a MUST left unmet

    @property
    def fails_by_spec(self) -> bool:
        """Failed on every seed because a MUST was unmet: its graded score decides nothing."""
        return bool(self.spec_failed) and all(self.spec_failed)

    @property
    def low(self) -> float:
        return min(self.finals)

    @property
    def high(self) -> float:
        return max(self.finals)

    def line(self) -> str:
        mean = statistics.fmean(self.finals)
        sd = statistics.pstdev(self.finals) if len(self.finals) > 1 else 0.0
        return (
            f"  {self.tree:<28} min {self.low:.4f}  mean {mean:.4f}  max {self.high:.4f}  "
            f"sd {sd:.4f}  success {sum(self.verdicts)}/{len(self.verdicts)}"
        )


@dataclass(frozen=True)
class Proposal:
    bar: float | None  # None: no bar separates reference from broken trees
    reference_min: float
    broken_max: float
    broken_worst: str


def propose(reference: Spread, broken: list[Spread], margin: float = 0.01) -> Proposal:
    """The bar midway between the worst reference and the best broken tree (3 decimals).

    A broken tree that failed on every seed with a MUST unmet fails by the SPEC whatever
    it scores, so it does not hold the bar down: a defect that costs one check of a
    hundred may score above a reference that lost some graded points elsewhere. When
    every broken tree fails that way the bar sits ``margin`` under the worst reference.
    The best broken tree is still reported, whichever way it failed."""
    worst = max(broken, key=lambda s: s.high)
    graded = [s for s in broken if not s.fails_by_spec]
    if not graded:
        bar = max(0.0, math.floor((reference.low - margin) * 1000) / 1000)
        return Proposal(bar, reference.low, worst.high, worst.tree)
    closest = max(graded, key=lambda s: s.high)
    if not reference.low > closest.high:
        return Proposal(None, reference.low, closest.high, closest.tree)
    bar = round((reference.low + closest.high) / 2, 3)
    bar = min(max(bar, closest.high + 0.001), reference.low)
    return Proposal(bar, reference.low, worst.high, worst.tree)


def must_failures(spreads: dict[str, Spread], violates: dict[str, tuple[str, ...]]) -> list[str]:
    """MUST verdicts that contradict the trees: the reference must succeed on every seed;
    a defect that declares violations must fail on every seed with those ids unmet."""
    out = []
    ref = spreads["reference"]
    if ref.verdicts and not all(ref.verdicts):
        out.append(f"the reference fails on {len(ref.verdicts) - sum(ref.verdicts)} seeds")
    for name, declared in violates.items():
        got = spreads.get(name)
        if declared and got is not None and any(got.verdicts):
            out.append(f"{name} succeeds on {sum(got.verdicts)} seeds")
    return out


def _progress_text(seed: str, name: str, score: Entry, bar: float) -> str:
    verdict = "success" if succeeds(score, bar) else "failed"
    unmet = f" unmet {ids(score.unmet)}" if score.unmet else ""
    return f"seed {seed} {name}: final {score.final:.4f} {verdict}{unmet}"


def pin_source(suite_dir: Path) -> Path | None:
    """The module of the suite that spells ``thresholds_pin=``: ``suite.py``, else the one
    of a suite package's modules that builds its ``Suite`` (None: the pin goes to its file)."""
    modules = [suite_dir / "suite.py", *sorted(suite_dir.glob("*.py"))]
    return next((m for m in modules if m.is_file() and _PIN.search(m.read_text())), None)


def pin_thresholds(suite_dir: Path, thresholds_file: Path) -> tuple[str, str]:
    """Pin the thresholds' sha256 where the suite pins it; (the pin, where it went)."""
    pin = sha256_file(thresholds_file)
    pinning = pin_source(suite_dir)
    if pinning is not None:
        text = pinning.read_text()
        write_atomic(pinning, _PIN.sub(f'thresholds_pin="{pin}"', text, count=1))
        (suite_dir / PIN_FILE).unlink(missing_ok=True)  # an older pin there would mislead
        return pin, f"pinned in {pinning.name}"
    # adding the argument would change the scorer fingerprint the ledger holds
    write_atomic(suite_dir / PIN_FILE, pin + "\n")
    return pin, f"pinned in {PIN_FILE} (the suite's code names no thresholds_pin=)"


def calibration_seeds(loaded: LoadedScenario, count: int) -> list[str]:
    """The scenario's own seed, then ``count - 1`` derived from it (the same on every
    machine). Seed 0 is the one the controls score, so they read its ledger lines."""
    derived = [derive_bytes(loaded.seed, f"calibrate:{i}").hex()[:16] for i in range(1, count)]
    return [loaded.seed, *derived]


def _unrecorded(stamped: str, host: str) -> str:
    return (
        f"warning: the sandbox's scorer stamped {(stamped or 'nothing')[:16]}, the host "
        f"fingerprints {host[:16]}, so the ledger keeps none of its scorings (rebuild the "
        "scorer image from this tree)"
    )


def calibrate(
    loaded: LoadedScenario,
    settings: Settings,
    sandbox: str,
    seeds: int = 3,
    progress: Callable[[str], None] | None = None,
    reuse: bool = False,
) -> tuple[str, Proposal]:
    """Score every tree over ``seeds`` seeds; write the calibrated thresholds and pin.

    ``progress`` gets one line per scoring as it ends (a calibration takes hours). Every
    scoring is kept (``grader.memo``); with ``reuse`` a kept scoring whose key matches is
    read instead, so an interrupted calibration resumes where it stopped. Every scoring is
    also a line of the suite's ledger (``grader.calibration_ledger``), which ``reuse`` reads
    first: it is committed with the scenario, so the calibration resumes on another machine
    too."""
    suite = loaded.scenario.verify.suite
    if not suite:
        raise UserError(
            "only scenarios with their own suite are calibrated",
            file=loaded.path,
            field="verify.suite",
            fix="test-based scenarios need no calibration",
        )
    suite_dir = loaded.directory / suite
    thresholds_file = suite_dir / "thresholds.yml"
    current = load_thresholds(thresholds_file)
    if seeds < 2:
        raise UserError("calibration needs at least 2 seeds", field="--seeds", fix="e.g. --seeds 3")
    if not (loaded.directory / LOW_PATCH).is_file():
        raise UserError(
            "calibration needs a LOW tree",
            file=loaded.directory / LOW_PATCH,
            field="(low patch)",
            fix=f"add {LOW_PATCH}",
        )
    defects = load_defects(loaded)
    ledger = Ledger(suite_dir / LEDGER, code_fingerprint(load_suite_module(suite_dir).suite))
    runner = ControlRunner(loaded, settings, sandbox, reuse=reuse)
    spreads: dict[str, Spread] = {}
    scorer: str | None = None
    from_ledger, unrecorded, stamped = 0, 0, ""
    try:
        reference = runner.fresh("reference")
        OracleAgent.apply(loaded, reference)
        trees = {"reference": reference}
        trees["LOW"] = runner.patched(reference, loaded.directory / LOW_PATCH, "low", "low patch")
        for d in defects:
            trees[d.name] = runner.patched(reference, d.patch, f"defects/{d.name}", "defect")
        digests = {name: tree_digest(tree) for name, tree in trees.items()}
        total = seeds * len(trees)
        steps = Progress(total, progress)
        for seed in calibration_seeds(loaded, seeds):
            for name, tree in trees.items():
                started, kept = time.monotonic(), len(runner.reused)
                entry = ledger.get(name, seed, sandbox, digests[name]) if reuse else None
                fresh = entry is None
                if entry is None:
                    score = runner.score(tree, seed)
                    fresh = len(runner.reused) == kept
                    entry = Entry.of(name, seed, sandbox, digests[name], score)
                    if not ledger.add(entry):
                        unrecorded, stamped = unrecorded + 1, entry.scorer
                        if progress is not None and unrecorded == 1:
                            progress(_unrecorded(stamped, ledger.scorer))
                else:
                    from_ledger += 1
                text = _progress_text(seed, name, entry, current.bar)
                steps.step(text, time.monotonic() - started, scored=fresh)
                spread = spreads.setdefault(name, Spread(name))
                spread.finals.append(entry.final)
                spread.verdicts.append(succeeds(entry, current.bar))
                spread.unmet.update(entry.unmet)
                spread.spec_failed.append(entry.spec_met is False)
                scorer = entry.scorer or None
    finally:
        runner.close()
    broken = [s for n, s in spreads.items() if n != "reference"]
    proposal = propose(spreads["reference"], broken, current.epsilon)
    lines = [f"calibration of {loaded.name} over {seeds} seeds ({sandbox})"]
    if runner.reused or from_ledger:
        lines.append(
            f"{len(runner.reused)} of {total} scorings read from kept ones and {from_ledger} "
            f"from the ledger ({LEDGER}; --reuse)"
        )
    if unrecorded:
        warning = _unrecorded(stamped, ledger.scorer)
        lines.append(f"{unrecorded} of {total} scorings not in the ledger; {warning}")
    lines += [s.line() for s in spreads.values()]
    wrong = must_failures(spreads, {d.name: d.violates for d in defects})
    if wrong:
        lines.append(f"NOT CALIBRATED: {'; '.join(wrong)}; nothing written")
        return "\n".join(lines) + "\n", dataclasses.replace(proposal, bar=None)
    if proposal.bar is None:
        lines.append(
            f"NOT CALIBRATED: the reference's worst {proposal.reference_min:.4f} does not beat "
            f"{proposal.broken_worst}'s best {proposal.broken_max:.4f}; nothing written"
        )
        return "\n".join(lines) + "\n", proposal
    data = {
        "calibrated": True,
        "high": proposal.bar,
        "low": current.low,
        "success_bar": proposal.bar,
        "epsilon": current.epsilon,
        "budgets": dict(current.budgets),
        **({"scorer": scorer} if scorer else {}),
        "calibration": {
            "seeds": seeds,
            "sandbox": sandbox,
            "reference_min": round(proposal.reference_min, 4),
            "broken_max": round(proposal.broken_max, 4),
            "closest_broken": proposal.broken_worst,
        },
    }
    write_atomic(thresholds_file, yaml.safe_dump(data, sort_keys=False))
    pin, pinned = pin_thresholds(suite_dir, thresholds_file)
    above = " (above the bar: it fails by the MUSTs it leaves unmet)"
    lines.append(
        f"success bar {proposal.bar:.3f} (reference min {proposal.reference_min:.4f}, best "
        f"broken {proposal.broken_worst} {proposal.broken_max:.4f}"
        f"{above if proposal.broken_max >= proposal.bar else ''}); thresholds sha256 {pin} "
        f"{pinned}; run `harness controls {loaded.name}` again (new era)"
    )
    return "\n".join(lines) + "\n", proposal
