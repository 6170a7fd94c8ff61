"""``harness mutants SCENARIO``: score mutants of the reference through the real verifier.

The reference tree is set up once (solution applied) and scored first: a reference that
fails cannot judge any mutant. Each sampled mutant is a copy of it with one file
changed, verified exactly as a trial is (host or scorer container, one executed-app
scoring at a time per machine). Every scoring is at once a line of the scenario's
``mutants.jsonl`` (the mutant, seed, sandbox, tree digest, reference digest, scorer
fingerprint, outcome), so a long run resumes from the ledger on any machine that has
the commit; a line counts only for the scorer that wrote it.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from harness.agents.builtin import OracleAgent, reference_solution
from harness.config.settings import Settings
from harness.errors import InfraError, UserError
from harness.grader.calibration_ledger import add_lines, read_lines
from harness.grader.controls import ControlRunner
from harness.grader.memo import tree_digest
from harness.grader.mutants.ledger import MUTANTS_LEDGER, scorer_of
from harness.grader.mutants.points import Mutant, enumerate_tree, mutate, sample
from harness.grader.mutants.score import MutantLine, MutationScore, Outcome, mutation_score
from harness.grader.mutants.triage import equivalents
from harness.scenario.model import LoadedScenario
from harness.scoring import Score
from harness.scoring.coverage import succeeds
from harness.trial.workspace import read_state
from harness.util import trialgit
from harness.util.fs import copytree
from harness.verify.proof import thresholds_for


@dataclasses.dataclass
class MutantsRun:
    """What one ``harness mutants`` run found."""

    total: int  # mutants of the reference, before sampling
    sampled: list[Mutant]
    lines: list[MutantLine]
    reused: int
    score: MutationScore


class MutantRunner:
    """Makes and scores the mutants of one scenario's reference tree."""

    def __init__(
        self,
        loaded: LoadedScenario,
        settings: Settings,
        sandbox: str,
        reuse: bool = True,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        reference_solution(loaded, "make mutants of it")
        self.loaded, self.sandbox, self.reuse = loaded, sandbox, reuse
        self.say = progress or (lambda _line: None)
        self.runner = ControlRunner(loaded, settings, sandbox, reuse=reuse)
        self.scorer = scorer_of(loaded)
        self.bar = thresholds_for(loaded).bar
        self.path = loaded.directory / MUTANTS_LEDGER
        self.lines = {
            (line.mutant, line.seed, line.sandbox, line.digest): line
            for line in read_lines(self.path, MutantLine)
        }

    def close(self) -> None:
        self.runner.close()

    def reference(self) -> tuple[Path, dict[str, str], list[Mutant]]:
        """The reference tree, its changed files' text, and every mutant of them."""
        tree = self.runner.fresh("reference")
        OracleAgent.apply(self.loaded, tree)
        baseline = read_state(tree, self.loaded).baseline
        gitdir = trialgit.git_dir(tree)
        changed = trialgit.changed_lines(
            gitdir if gitdir.is_dir() else tree / ".git", tree, baseline
        )
        files: dict[str, str] = {}
        for rel in changed:
            try:
                files[rel] = (tree / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        lines: dict[str, set[int] | None] = {rel: changed[rel] for rel in files}
        return tree, files, enumerate_tree(files, lines)

    def check_reference(self, tree: Path, seed: str) -> None:
        score = self.runner.score(tree, seed)
        if not succeeds(score, self.bar):
            raise UserError(
                f"the reference scores {score.final:.4f} and fails: no mutant can be judged",
                file=self.loaded.path,
                field="solution",
                fix="make the reference pass (harness exec --agent oracle) first",
            )

    def score(
        self, tree: Path, files: dict[str, str], mutant: Mutant, seed: str
    ) -> MutantLine | None:
        """One mutant scored (or read from the ledger); None when it changes nothing."""
        text = mutate(files[mutant.path], mutant)
        if text is None:
            return None
        copy = self.runner.tmp / "mutant"
        shutil.rmtree(copy, ignore_errors=True)
        copytree(tree, copy)
        (copy / mutant.path).write_text(text, encoding="utf-8")
        digest = tree_digest(copy)
        kept = self.lines.get((mutant.id, seed, self.sandbox, digest))
        if self.reuse and kept is not None and kept.scorer == self.scorer:
            shutil.rmtree(copy, ignore_errors=True)
            return kept
        started = time.monotonic()
        try:
            outcome, detail, score = self._verdict(copy, seed)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        line = MutantLine(
            mutant=mutant.id,
            seed=seed,
            sandbox=self.sandbox,
            digest=digest,
            reference=tree_digest(tree),
            scorer=self.scorer,
            outcome=outcome,
            final=None if score is None else score.final,
            spec_met=None if score is None else score.spec_met,
            unmet=[] if score is None else sorted(score.unmet),
            seconds=round(time.monotonic() - started, 1),
            detail=detail,
        )
        self.lines[(mutant.id, seed, self.sandbox, digest)] = line
        add_lines(self.path, MutantLine, _key, [line])
        return line

    def _verdict(self, tree: Path, seed: str) -> tuple[Outcome, str, Score | None]:
        try:
            score = self.runner.score(tree, seed)
        except InfraError as exc:
            text = str(exc)
            return ("timeout" if "timed out" in text or "timeout" in text else "error"), text, None
        killed = not succeeds(score, self.bar)
        return ("killed" if killed else "survived"), "", score


def list_mutants(
    loaded: LoadedScenario, settings: Settings, size: int, seed: str | None = None
) -> list[str]:
    """The sampled mutants' ids with the line each changes, scoring nothing."""
    runner = MutantRunner(loaded, settings, "local", reuse=False)
    try:
        _, files, every = runner.reference()
    finally:
        runner.close()
    out = [f"{len(every)} mutants of the reference"]
    for mutant in sample(every, size, seed or loaded.seed):
        text = files[mutant.path].splitlines()[mutant.line - 1].strip()
        out.append(f"{mutant.id}  {text[:80]}")
    return out


def run_mutants(
    loaded: LoadedScenario,
    settings: Settings,
    sandbox: str,
    size: int = 100,
    seed: str | None = None,
    reuse: bool = True,
    only: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> MutantsRun:
    """Sample ``size`` mutants (or those named in ``only``), score each, tally."""
    seed = seed or loaded.seed
    say = progress or (lambda _line: None)
    runner = MutantRunner(loaded, settings, sandbox, reuse=reuse, progress=progress)
    try:
        tree, files, every = runner.reference()
        chosen = [m for m in every if m.id in set(only)] if only else sample(every, size, seed)
        say(f"{len(every)} mutants of the reference; scoring {len(chosen)} (seed {seed})")
        runner.check_reference(tree, seed)
        lines, reused = [], 0
        for n, mutant in enumerate(chosen, 1):
            before = len(runner.lines)
            line = runner.score(tree, files, mutant, seed)
            if line is None:
                say(f"[{n}/{len(chosen)}] unchanged {mutant.id}")
                continue
            reused += len(runner.lines) == before
            lines.append(line)
            unmet = f" unmet {','.join(line.unmet[:4])}" if line.unmet else ""
            say(f"[{n}/{len(chosen)}] {line.outcome:<8} {mutant.id} ({line.seconds:.1f} s){unmet}")
    finally:
        runner.close()
    score = mutation_score(lines, equivalents(loaded.directory))
    return MutantsRun(len(every), chosen, lines, reused, score)


def _key(line: MutantLine) -> tuple[str, str, str, str]:
    return line.mutant, line.seed, line.sandbox, line.digest


__all__ = ["MutantsRun", "list_mutants", "run_mutants"]
