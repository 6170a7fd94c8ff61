"""Bad input: one line naming file, field and fix; exit 2; no traceback; nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CLI, make_bundle

pytestmark = pytest.mark.integration

GOOD_FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
SOLUTION = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def scenario_yaml(commit: str, **over: str) -> str:
    fields = {
        "name": "calc",
        "repo": "repo.bundle",
        "commit": commit,
        "classification": "{type: fix-bug}",
        "agent": "{instructions: fix add}",
        "verify": "{tests: test_calc.py, must-modify: calc.py}",
        "solution": "solution.patch",
    }
    fields.update(over)
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v != "")


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> tuple[Path, str]:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", GOOD_FILES)
    (folder / "solution.patch").write_text(SOLUTION)
    (folder / "scenario.yml").write_text(scenario_yaml(sha))
    return folder, sha


def assert_refused(result, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, result.stderr + result.stdout
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for needle in needles:
        assert needle in lines[0], lines[0]


def nothing_written(project: Path) -> None:
    results = project / "results"
    assert not results.exists() or not any(p.is_file() for p in results.rglob("*"))
    ws = project / "workspace"
    assert not ws.exists() or not any(p.is_file() for p in ws.rglob("*"))


def test_good_scenario_passes_with_oracle_locally(
    cli: CLI, calc: tuple[Path, str], project: Path
) -> None:
    ok = cli("exec", "--agent", "oracle", "--sandbox", "local", "t/calc")
    assert ok.returncode == 0, ok.stderr + ok.stdout
    bad = cli("exec", "--agent", "nop", "--sandbox", "local", "t/calc")
    assert bad.returncode == 1, bad.stderr + bad.stdout


def test_bad_yaml(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "scenario.yml").write_text("name: [oops\n")
    assert_refused(
        cli("exec", "--agent", "oracle", "--sandbox", "local", "t/calc"),
        "scenario.yml",
        "(yaml)",
        "fix:",
    )
    nothing_written(project)


def test_unknown_key(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "scenario.yml").write_text(scenario_yaml(calc[1], verfy="{}"))
    assert_refused(cli("validate", "t/calc"), "verfy", "did you mean 'verify'")


def test_bad_commit(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "scenario.yml").write_text(scenario_yaml("deadbeefdeadbeef"))
    assert_refused(
        cli("exec", "--agent", "oracle", "--sandbox", "local", "t/calc"),
        "commit",
        "deadbeefdeadbeef",
        "does not exist",
    )
    nothing_written(project)
    assert cli("validate", "t/calc").returncode == 2


def test_missing_bundle(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "repo.bundle").unlink()
    assert_refused(cli("setup", "t/calc"), "repo", "bundle", "fix:")
    nothing_written(project)


def test_patch_that_fails(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "bad.patch").write_text(SOLUTION.replace("a - b", "a * b"))
    (calc[0] / "scenario.yml").write_text(scenario_yaml(calc[1], setup="{patch: bad.patch}"))
    assert_refused(
        cli("exec", "--agent", "oracle", "--sandbox", "local", "t/calc"),
        "setup.patch[0]",
        "does not apply",
    )
    nothing_written(project)


def test_setup_step_that_fails(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "scenario.yml").write_text(
        scenario_yaml(calc[1], setup='{exec: ["echo half > half.txt && exit 7"]}')
    )
    assert_refused(cli("setup", "t/calc"), "setup.exec[0]", "exited 7")
    nothing_written(project)


def test_setup_sees_seed(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    (calc[0] / "scenario.yml").write_text(
        scenario_yaml(calc[1], setup='{exec: ["echo $HARNESS_SEED > seed.txt"]}')
    )
    assert cli("setup", "--seed", "00000000000000aa", "t/calc").returncode == 0
    assert (project / "workspace/t/calc/seed.txt").read_text().strip() == "00000000000000aa"


def test_unknown_agent(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    assert_refused(
        cli("exec", "--agent", "claude-x", "--sandbox", "local", "t/calc"),
        "agents.yml",
        "--agent",
        "unknown agent",
    )
    nothing_written(project)


def test_model_not_supported(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    llms = project / "llms.yml"
    llms.write_text(llms.read_text() + "  - name: big\n    model: big-1\n")
    assert_refused(
        cli("exec", "--agent", "oracle", "--model", "big", "--sandbox", "local", "t/calc"),
        "does not support model 'big'",
    )
    nothing_written(project)


def test_pin_mismatch(cli: CLI, calc: tuple[Path, str], project: Path) -> None:
    agents = project / "agents.yml"
    agents.write_text(agents.read_text().replace('version: "1.0"', 'version: "9.9"', 1))
    assert_refused(
        cli("exec", "--agent", "oracle", "--sandbox", "local", "t/calc"),
        "agents.oracle.version",
        "pinned to 9.9",
    )
    nothing_written(project)


def test_bad_seed_and_sandbox(cli: CLI, calc: tuple[Path, str]) -> None:
    assert_refused(cli("exec", "--agent", "nop", "--seed", "xyz", "t/calc"), "--seed")
    assert_refused(cli("exec", "--agent", "nop", "--sandbox", "vm", "t/calc"), "--sandbox")


def test_unknown_scenario(cli: CLI) -> None:
    assert_refused(cli("setup", "nope/none"), "no scenario named 'nope/none'")
