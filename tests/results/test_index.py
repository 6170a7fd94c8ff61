"""The run index beside the result folders: it answers as reading the folders would,
follows every change made behind its back, parses a finished run once, reads only a
job's rows for ``--job``, and is rebuilt or bypassed when lost or broken."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness.report import collect as collect_mod
from harness.report.collect import Filters, RunResult, collect, from_parts, scan
from harness.results import index as index_mod
from harness.results.index import INDEX_FILE
from harness.results.index import indexed_runs as raw_indexed
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def _view(runs: list[RunResult]) -> list[tuple[Any, ...]]:
    return sorted(
        (r.run_id, r.scenario, r.agent, r.model, r.outcome, r.score, r.era, r.wall_s, r.started_at)
        for r in runs
    )


def indexed_runs(root: Path, job: str | None = None) -> list[RunResult] | None:
    rows = raw_indexed(root, job)
    if rows is None:
        return None
    return [from_parts(r.run_dir, r.report or {}, r.meta, r.progress, True) for r in rows]


def _set(run: Path, rel: str, **fields: Any) -> None:
    path = run / rel
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def _fill(root: Path) -> list[Path]:
    runs = [
        write_result(root, "py/a", "r-a-01", agent="alpha", score=0.5),
        write_result(root, "py/a", "r-a-02", agent="beta", score=0.25, outcome="failed"),
        write_result(root, "go/deep/b", "r-b-03", agent="alpha", outcome="error"),
        write_result(root, "py/b", "r-b-04", agent="alpha", usage={"cost_usd": 0.1}),
    ]
    _set(runs[0], "run.json", job="j1")
    return runs


def test_the_index_answers_as_the_folders_do_and_follows_changes(tmp_path: Path) -> None:
    root = tmp_path / "results"
    runs = _fill(root)
    assert _view(indexed_runs(root) or []) == _view(scan(root)) and len(scan(root)) == 4
    assert (root / INDEX_FILE).is_file()

    write_result(root, "py/c", "r-c-05", agent="gamma", score=0.75)  # a new scenario
    write_result(root, "py/a", "r-a-06", agent="gamma", score=0.1)  # a new run beside others
    shutil.rmtree(runs[1])  # a run removed by hand
    _set(runs[3], "verify/report.json", score=0.9)  # a report written again
    pending = root / "py" / "a" / "r-a-07"  # a trial still running: no report yet
    (pending / "verify").mkdir(parents=True)
    (pending / "run.json").write_text(json.dumps({"run_id": "r-a-07", "scenario": "py/a"}))
    assert _view(indexed_runs(root) or []) == _view(scan(root))
    assert {r.run_id for r in scan(root)} == {"r-a-01", "r-b-03", "r-b-04", "r-c-05", "r-a-06"}
    assert next(r for r in indexed_runs(root) or [] if r.run_id == "r-b-04").score == 0.9

    early = root / "py" / "b" / "r-b-08"  # listed while its folder was still empty
    early.mkdir()
    assert indexed_runs(root) is not None
    shutil.copytree(runs[3], early, dirs_exist_ok=True)
    _set(early, "verify/report.json", run_id="r-b-08")
    assert "r-b-08" in {r.run_id for r in indexed_runs(root) or []}
    shutil.copy(runs[0] / "verify" / "report.json", pending / "verify" / "report.json")
    _set(pending, "verify/report.json", run_id="r-a-07")
    assert "r-a-07" in {r.run_id for r in indexed_runs(root) or []}  # it finished
    shutil.rmtree(root / "go")  # a whole folder of scenarios gone
    assert _view(indexed_runs(root) or []) == _view(scan(root))


def test_a_finished_run_is_parsed_once_and_job_reads_only_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "results"
    _fill(root)
    monkeypatch.setattr(index_mod, "RACY_NS", 0)  # folders older than "now" count as settled
    assert len(indexed_runs(root) or []) == 4
    calls: list[Path] = []
    real = index_mod.read_parts

    def counting(run_dir: Path) -> Any:
        calls.append(run_dir)
        return real(run_dir)

    monkeypatch.setattr(index_mod, "read_parts", counting)
    assert len(indexed_runs(root) or []) == 4 and calls == []  # nothing parsed again
    (only,) = indexed_runs(root, job="j1") or []
    assert only.run_id == "r-a-01" and only.trimmed
    assert only.full().report.get("scoring") is not None  # the board's whole report
    assert only.full().report["score"] == only.report["score"]


def test_a_lost_or_broken_index_is_rebuilt_or_bypassed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "results"
    _fill(root)
    expected = _view(scan(root))
    assert _view(indexed_runs(root) or []) == expected
    (root / INDEX_FILE).unlink()
    assert _view(indexed_runs(root) or []) == expected  # rebuilt from the folders
    for extra in root.glob(INDEX_FILE + "*"):
        extra.unlink()
    (root / INDEX_FILE).write_bytes(b"not a database at all" * 100)
    assert _view(indexed_runs(root) or []) == expected  # damaged: removed and rebuilt
    assert (root / INDEX_FILE).read_bytes()[:15] == b"SQLite format 3"

    def refuse(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(index_mod.sqlite3, "connect", refuse)
    assert indexed_runs(root) is None  # unusable: the caller reads the folders
    assert _view(collect(root)) == _view(collect(root, use_index=False))
    assert [r.run_id for r in collect(root, Filters(job="j1"))] == ["r-a-01"]
    assert indexed_runs(tmp_path / "nowhere") == []


def test_collect_with_and_without_the_index_agree_on_filters(tmp_path: Path) -> None:
    root = tmp_path / "results"
    _fill(root)
    for filters in (Filters(), Filters(limit=1, versions="newest"), Filters(agents=["alpha"])):
        with_index = collect(root, filters)
        assert _view(with_index) == _view(collect(root, filters, use_index=False))
    assert collect_mod.scan(tmp_path / "none") == []
