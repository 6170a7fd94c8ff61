"""A second board over unchanged results rewrites no run page, a changed input rewrites
its page only, and the pages are the same bytes as a board built from scratch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.report.board.incremental import MANIFEST, run_signature
from harness.report.board.site import build_board
from harness.report.collect import collect
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def _stats(site: Path) -> dict[str, int]:
    return {
        p.relative_to(site).as_posix(): p.stat().st_mtime_ns
        for p in site.rglob("*")
        if p.is_file() and p.name != MANIFEST
    }


def _bytes(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and p.name != MANIFEST
    }


def _results(root: Path) -> list[Path]:
    return [
        write_result(root, "py/a", "r-a-01", agent="alpha", score=0.5, screenshot=b"png-1"),
        write_result(root, "py/a", "r-a-02", agent="beta", score=0.25, outcome="failed"),
        write_result(root, "py/b", "r-b-03", agent="alpha", score=1.0),
    ]


def _set_score(run: Path, score: float) -> None:
    path = run / "verify" / "report.json"
    report = json.loads(path.read_text())
    report["score"] = score
    path.write_text(json.dumps(report))


def test_unchanged_results_rewrite_no_run_page(tmp_path: Path) -> None:
    root, site = tmp_path / "results", tmp_path / "site"
    _results(root)
    build_board(collect(root), site)
    first, content = _stats(site), _bytes(site)
    assert "runs/r-a-01.html" in first and "runs/r-a-01/page.png" in first
    record = (site / MANIFEST).stat().st_mtime_ns
    build_board(collect(root), site)
    assert _stats(site) == first  # nothing written, not even the overview
    assert (site / MANIFEST).stat().st_mtime_ns == record  # nor the page record
    assert _bytes(site) == content


def test_a_changed_input_rewrites_its_page_only_and_matches_a_fresh_build(tmp_path: Path) -> None:
    root, site, fresh = tmp_path / "results", tmp_path / "site", tmp_path / "fresh"
    runs = _results(root)
    build_board(collect(root), site)
    before = _stats(site)
    _set_score(runs[1], 0.75)  # one run's report
    (runs[2] / "workspace.diff").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    build_board(collect(root), site)
    after = _stats(site)
    changed = {k for k in after if after[k] != before.get(k)}
    assert {"runs/r-a-02.html", "runs/r-b-03.html", "index.html"} <= changed
    assert "runs/r-a-01.html" not in changed and "runs/r-a-01/page.png" not in changed
    assert "0.750" in (site / "runs" / "r-a-02.html").read_text()
    build_board(collect(root), fresh)
    assert _bytes(site) == _bytes(fresh)


def test_pages_of_removed_runs_go_and_a_page_touched_by_hand_is_rebuilt(tmp_path: Path) -> None:
    root, site, fresh = tmp_path / "results", tmp_path / "site", tmp_path / "fresh"
    runs = _results(root)
    build_board(collect(root), site)
    shutil.rmtree(runs[0])
    (site / "runs" / "r-a-02.html").write_text("edited")
    (site / "runs" / "stray.html").write_text("not a run")
    build_board(collect(root), site)
    assert not (site / "runs" / "r-a-01.html").exists()
    assert not (site / "runs" / "r-a-01").exists() and not (site / "runs" / "stray.html").exists()
    assert "edited" not in (site / "runs" / "r-a-02.html").read_text()
    build_board(collect(root), fresh)
    assert _bytes(site) == _bytes(fresh)
    (site / MANIFEST).write_text("not json")  # a lost record: everything built again
    build_board(collect(root), site)
    assert _bytes(site) == _bytes(fresh)


def test_the_signature_follows_each_input(tmp_path: Path) -> None:
    run = write_result(tmp_path, "py/a", "r-a-01", agent="alpha")
    base = run_signature(str(run), "", "era", "1.0")
    assert run_signature(str(run), "", "era", "1.0") == base
    assert run_signature(str(run), "", "other era", "1.0") != base
    (run / "gateway" / "turn-2").mkdir(parents=True)
    (run / "gateway" / "turn-2" / "transcript.jsonl").write_text("{}\n")
    with_turn = run_signature(str(run), "", "era", "1.0")
    assert with_turn != base
    assert run_signature(str(run), "sig", "era", "1.0") != with_turn  # the index's signature
    (run / "trial.log").write_text("log")
    assert run_signature(str(run), "", "era", "1.0") not in {base, with_turn}


def test_pages_rendered_by_forked_workers_are_those_of_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.report.board.site as site_module

    root, serial, forked = tmp_path / "results", tmp_path / "serial", tmp_path / "forked"
    _results(root)
    build_board(collect(root), serial)
    monkeypatch.setattr(site_module, "PARALLEL_FROM", 1)
    monkeypatch.setattr(site_module, "_workers", lambda: 2)
    build_board(collect(root), forked)
    assert _bytes(forked) == _bytes(serial)  # screenshots copied by the workers too
    record = json.loads((forked / MANIFEST).read_text())["pages"]
    assert sorted(record) == ["r-a-01", "r-a-02", "r-b-03"]
    stamp = _stats(forked)
    build_board(collect(root), forked)  # the workers' pages are recorded: nothing redone
    assert _stats(forked) == stamp


def test_a_page_that_fails_in_a_worker_fails_the_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.report.board.site as site_module

    root = tmp_path / "results"
    _results(root)
    monkeypatch.setattr(site_module, "PARALLEL_FROM", 1)
    monkeypatch.setattr(site_module, "_workers", lambda: 2)

    def broken(run: object, out: Path) -> str:
        raise RuntimeError("cannot render")

    monkeypatch.setattr(site_module, "_render_run", broken)
    with pytest.raises(RuntimeError, match="cannot render"):
        build_board(collect(root), tmp_path / "site")
