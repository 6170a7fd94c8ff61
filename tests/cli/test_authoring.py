"""The authoring commands' own work (cli/authoring.py): flags parsed and checked, results
printed, exit codes; the authoring functions are stand-ins here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import harness.cli.authoring as authoring

pytestmark = pytest.mark.unit


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(authoring, "_load", lambda name: f"loaded:{name}")
    monkeypatch.setattr(authoring, "_settings", lambda: SimpleNamespace(scenario_root=tmp_path))

    def save_defect(loaded: str, settings: Any, name: str, **kw: Any) -> Any:
        seen.append(("defect", (loaded, name, kw)))
        path = tmp_path / "defects" / f"{name}.patch"
        return SimpleNamespace(path=path, breaks=kw["breaks"] or ["total", "rows"])

    def bump(loaded: str, root: Path, part: str) -> Path:
        seen.append(("bump", (loaded, part)))
        return root / "py" / "x-2.0.0"

    def check(loaded: str, settings: Any, sandbox: str, entrants: tuple[str, ...]) -> Any:
        seen.append(("check", (loaded, sandbox, entrants)))
        return SimpleNamespace(markdown=lambda: "# summary\n", ok=entrants != ("oracle", "bad"))

    def lock(loaded: list[str], root: Path) -> list[str]:
        seen.append(("lock", loaded))
        return [f"{name.split(':')[1]}@1.0.0" for name in loaded]

    monkeypatch.setattr(authoring, "save_defect", save_defect)
    monkeypatch.setattr(authoring, "bump", bump)
    monkeypatch.setattr(authoring, "check", check)
    monkeypatch.setattr(authoring, "lock", lock)
    monkeypatch.setattr(authoring, "list_scenarios", lambda root: ["py/a", "go/b"])
    return seen


def invoke(command: Any, *args: str) -> Any:
    app = typer.Typer()
    app.command()(command)
    return CliRunner().invoke(app, list(args))


def test_defect_save_reads_breaks_as_auto_or_a_list(
    calls: list[tuple[str, Any]], tmp_path: Path
) -> None:
    app = authoring.defect_app
    auto = CliRunner().invoke(app, ["off-by-one", "py/x", "--harm", "wrong total"])
    assert auto.exit_code == 0, auto.output
    assert auto.output.splitlines() == [
        f"wrote {tmp_path / 'defects' / 'off-by-one.patch'} and off-by-one.yml",
        "breaks: total, rows",
    ]
    named = CliRunner().invoke(
        app, ["d", "py/x", "--harm", "h", "--breaks", "total, rows,", "--sandbox", "local"]
    )
    assert named.exit_code == 0, named.output
    kw = calls[1][1][2]
    assert kw == {"breaks": ["total", "rows"], "harm": "h", "sandbox": "local"}
    assert calls[0][1][2]["breaks"] is None and calls[0][1][2]["sandbox"] == "docker"
    spaced = CliRunner().invoke(app, ["d", "py/x", "--harm", "h", "--breaks", " auto "])
    assert spaced.exit_code == 0 and calls[2][1][2]["breaks"] is None


def test_bump_needs_exactly_one_part(calls: list[tuple[str, Any]]) -> None:
    assert invoke(authoring.bump_command, "py/x").exit_code == 2
    assert invoke(authoring.bump_command, "py/x", "--minor", "--major").exit_code == 2
    done = invoke(authoring.bump_command, "py/x", "--major")
    assert done.exit_code == 0 and "x-2.0.0" in done.output
    assert invoke(authoring.bump_command, "py/x", "--minor").exit_code == 0
    assert [c[1] for c in calls] == [("loaded:py/x", "major"), ("loaded:py/x", "minor")]


def test_lock_records_the_named_scenarios_or_all(calls: list[tuple[str, Any]]) -> None:
    some = invoke(authoring.lock_command, "py/a")
    assert some.exit_code == 0 and some.output.endswith(": 1 recorded (py/a@1.0.0)\n")
    every = invoke(authoring.lock_command)
    assert every.output.endswith(": 2 recorded (py/a@1.0.0, go/b@1.0.0)\n")


def test_check_runs_two_entrants_and_exits_by_the_report(
    calls: list[tuple[str, Any]], tmp_path: Path
) -> None:
    one = invoke(authoring.check_command, "py/x", "--entrant", "oracle", "--entrant", "oracle")
    assert one.exit_code == 2 and "two or more entrants" in one.output and calls == []
    out = tmp_path / "summary.md"
    ready = invoke(authoring.check_command, "py/x", "--sandbox", "local", "--out", str(out))
    assert (
        ready.exit_code == 0 and ready.output == "# summary\n" and out.read_text() == "# summary\n"
    )
    assert calls[0] == ("check", ("loaded:py/x", "local", ("oracle", "nop")))
    bad = invoke(authoring.check_command, "py/x", "--entrant", "oracle", "--entrant", "bad")
    assert bad.exit_code == 1
    nowhere = invoke(authoring.check_command, "py/x", "--sandbox", "nowhere")
    assert nowhere.exit_code == 2
