"""Strict validation (goagentbench's rules and more): each mistake is one line naming the
file, the field and the fix; YAML errors name their real cause; nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scenario.load import parse_scenario
from harness.scenario.targets import parse_go_target
from tests.cli.test_cli_errors import GOOD_FILES, assert_refused, scenario_yaml
from tests.conftest import CLI, make_bundle

GO = """\
name: x
repo: repo.bundle
commit: abcdef1
classification: {type: fix-bug}
environment: {image: go}
agent: {instructions: do it}
verify:
  copy: [{from: hidden, to: pkg}]
  tests: ['./pkg -run TestA']
"""


def _err(text: str) -> str:
    with pytest.raises(UserError) as info:
        parse_scenario(text, Path("s/scenario.yml"))
    line = info.value.one_line()
    assert line.startswith("s/scenario.yml: ") and "(fix: " in line and "\n" not in line
    return line


@pytest.mark.unit
@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        (
            "agent: {instructions: do it}",
            "agent: {instructions: '   '}",
            "agent.instructions",
            "blank",
        ),
        ("  tests:", "  must-modify: ['']\n  tests:", "verify.must-modify", "entry [0] is empty"),
        ("agent:", "setup: {exec: ['']}\nagent:", "setup.exec", "entry [0] is empty"),
        ("agent:", "setup: {patch: ['  ']}\nagent:", "setup.patch", "entry [0] is empty"),
        ("TestA']", "TestA', '']", "verify.tests", "entry [1] is empty"),
        ("'./pkg -run TestA'", "'./... --run X'", "verify.tests[0]", "unknown flag '--run'"),
        ("'./pkg -run TestA'", "'./pkg -v'", "verify.tests[0]", "unknown flag '-v'"),
        ("'./pkg -run TestA'", "'./pkg -run A -count=1'", "verify.tests[0]", "'-count=1' after"),
        ("'./pkg -run TestA'", "'./... -run X'", "verify.tests[0]", "has a -run"),
        ("'./pkg -run TestA'", "'pkg/x.go'", "verify.tests[0]", "not a _test.go"),
        ("{from: hidden, to: pkg}", "{from: hidden}", "verify.copy[0]", "has no 'to'"),
        ("{from: hidden, to: pkg}", "{from: hidden, to: ''}", "verify.copy[0]", "has no 'to'"),
        ("{from: hidden, to: pkg}", "{to: pkg}", "verify.copy[0]", "without 'from'"),
        ("agent:", "setup: {copy: [{from: a}]}\nagent:", "setup.copy[0]", "has no 'to'"),
    ],
)
def test_bad_field_is_one_line(old: str, new: str, field: str, words: str) -> None:
    assert old in GO
    line = _err(GO.replace(old, new, 1))
    assert f": {field}: " in line and words in line, line


@pytest.mark.unit
def test_go_fixture_and_goagentbench_forms_are_valid() -> None:
    s = parse_scenario(GO, Path("s.yml"))
    assert s.runner() == "go" and s.verify.copy_[0].to == "pkg"
    assert parse_scenario(GO.replace("  copy:", "  must-modify: ''\n  copy:"), Path("s.yml"))
    for entry, run in [
        ("./pkg -run 'TestA|TestB'", "TestA|TestB"),
        ('./pkg -run="Test A"', "Test A"),
        ("./pkg -run=TestA", "TestA"),
        ("internal/x/*_test.go", None),
        ("./...", None),
    ]:
        assert parse_go_target(entry).run == run


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "words", "fix"),
    [
        ("name: a\x00b\n", "NUL byte", "remove the NUL"),
        ("name: !!python/object/apply:os.system ['id']\n", "!!python/object/apply", "plain"),
        ("name: a\nagent:\n\tinstructions: x\n", "tab character at line 3", "spaces"),
        ("name: a\nrepo: b\nname: c\n", "'name' appears twice (lines 1 and 3)", "keep one"),
        ("name: [oops\n", "expected ',' or ']'", "close the ["),
        ("name: a\x07b\n", "control character", "remove it"),
        ("name: !foo bar\n", "unknown tag !foo", "remove the tag"),
        ("", "the file is empty", "name:"),
    ],
)
def test_yaml_errors_name_their_cause(text: str, words: str, fix: str) -> None:
    line = _err(text)
    assert words in line, line
    assert fix in line.split("(fix: ", 1)[1], line
    if "tab" not in words and "expected" not in words:
        assert "indent" not in line, line  # no indentation hint where it does not apply


@pytest.mark.unit
def test_not_utf8(tmp_path: Path) -> None:
    from harness.scenario.load import load_scenario

    folder = tmp_path / "t" / "x"
    folder.mkdir(parents=True)
    (folder / "scenario.yml").write_bytes(b"name: caf\xe9\n")
    with pytest.raises(UserError, match="not UTF-8 text"):
        load_scenario("t/x", tmp_path)


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", GOOD_FILES)
    (folder / "scenario.yml").write_text(scenario_yaml(sha, solution=""))
    return folder


def _nothing_in(project: Path) -> None:
    for name in ("workspace", "results"):
        assert not (project / name).exists(), sorted((project / name).rglob("*"))


@pytest.mark.integration
def test_cli_refuses_each_mistake_and_writes_nothing(
    cli: CLI, calc: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    monkeypatch.chdir(project)
    good = (calc / "scenario.yml").read_text()
    cases = [
        ("agent: {instructions: fix add}", "agent: {instructions: '   '}", "agent.instructions"),
        ("must-modify: calc.py", "must-modify: ['']", "verify.must-modify"),
        ("verify:", "setup: {exec: ['']}\nverify:", "setup.exec"),
        ("name: calc", "name: calc\nname: calc", "appears twice"),
        ("name: calc", "name: calc\x00", "NUL byte"),
    ]
    for old, new, needle in cases:
        (calc / "scenario.yml").write_text(good.replace(old, new, 1))
        result = CliRunner().invoke(app, ["validate", "t/calc"])
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert result.exit_code == 2 and len(lines) == 1, result.stderr
        assert "scenario.yml" in lines[0] and needle in lines[0] and "fix:" in lines[0]
    # and the real command line, once: exec refuses before anything is written
    assert_refused(cli("exec", "--agent", "nop", "--sandbox", "local", "t/calc"), "NUL byte")
    _nothing_in(project)


@pytest.mark.integration
def test_failed_setup_leaves_no_empty_folder(cli: CLI, calc: Path, project: Path) -> None:
    text = (calc / "scenario.yml").read_text()
    (calc / "scenario.yml").write_text(text + "setup: {exec: ['exit 7']}\n")
    assert_refused(cli("setup", "t/calc"), "setup.exec[0]", "exited 7")
    assert not (project / "workspace").exists()
