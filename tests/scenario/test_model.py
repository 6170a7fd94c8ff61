"""The scenario model: goagentbench files load unchanged; mistakes are one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scenario.load import list_scenarios, load_scenario, parse_scenario
from harness.scenario.model import json_schema

pytestmark = pytest.mark.unit

BASE = """\
name: x
repo: repo.bundle
commit: abcdef1
classification: {type: fix-bug}
agent: {instructions: do it}
verify: {tests: ./pkg}
"""

GOAGENTBENCH = """\
name: Tests partial credit with hidden tests
repo: github.com/codalotl/goagentbench
commit: aefb88dbb06595bbb763a885413cfc3fa93f234c
classification:
  type: build-package
  has-spec: false
  single-package: true
  sees-failing-tests: false
setup:
  copy:
    - from: a_test.go
      to: internal/sorting
  patch: fix.patch
  exec:
    - git switch -c gab && git add -A && git commit -m "update tests"
agent:
  instructions: |
    Write a new package at internal/sorting.
  allow-multiple-turns-on-failed-verify: true
verify:
  must-modify: internal/sorting
  no-modify:
    - internal/q/tui/golden*
  only-modify:
    - internal/sorting
  copy:
    - from: gab_sorted_partial_test.go
      to: internal/sorting
  tests:
    - ./mypkg -run "TestImportant|TestThing"
  partial-tests:
    - ./internal/sorting
"""


def _err(text: str) -> UserError:
    with pytest.raises(UserError) as info:
        parse_scenario(text, Path("s/scenario.yml"))
    return info.value


def test_goagentbench_file_loads_unchanged() -> None:
    s = parse_scenario(GOAGENTBENCH, Path("scenario.yml"))
    assert s.classification.type == "build-package"
    assert s.setup_steps.copy_[0].from_ == "a_test.go"
    assert s.setup_steps.patch == ["fix.patch"]  # string-or-list
    assert s.verify.must_modify == ["internal/sorting"]
    assert s.agent.allow_multiple_turns_on_failed_verify is True
    assert s.runner() == "go"


def test_setup_null_and_defaults() -> None:
    s = parse_scenario(BASE + "setup: null\n", Path("s.yml"))
    assert s.setup_steps.copy_ == [] and s.environment.agent_timeout == 1800.0


def test_unknown_key_suggests_the_right_one() -> None:
    err = _err(BASE.replace("verify: {tests: ./pkg}", "verify: {tets: ./pkg}"))
    assert err.field == "verify.tets" and "did you mean 'tests'" in err.one_line()
    assert "\n" not in err.one_line() and "s/scenario.yml" in err.one_line()


def test_bad_type_names_field_and_choices() -> None:
    err = _err(BASE.replace("fix-bug", "fix-bugs"))
    assert err.field == "classification.type" and "'fix-bug'" in err.message


def test_missing_required_field() -> None:
    err = _err(BASE.replace("commit: abcdef1\n", ""))
    assert err.field == "commit" and "missing" in err.message


def test_bad_yaml_reports_position() -> None:
    err = _err("name: [unclosed\n")
    assert err.field == "(yaml)" and "line" in err.message


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ("seed: nothex\n", "seed"),
        ("version: one\n", "version"),
        ("environment: {agent-timeout: soon}\n", "environment.agent-timeout"),
    ],
)
def test_extension_fields_are_validated(extra: str, field: str) -> None:
    assert _err(BASE + extra).field == field


def test_extensions_parse() -> None:
    s = parse_scenario(
        BASE + 'seed: "00C0FFEE00C0FFEE"\nversion: "1.2"\n'
        "environment: {image: go, agent-timeout: 30m, verify-timeout: 90s}\n",
        Path("s.yml"),
    )
    assert s.seed == "00c0ffee00c0ffee" and s.version == "1.2"
    assert s.environment.agent_timeout == 1800 and s.environment.verify_timeout == 90
    assert s.toolchain() == "go"


def test_runner_inference() -> None:
    assert parse_scenario(BASE.replace("./pkg", "tests/test_a.py"), Path("s")).runner() == "pytest"
    assert parse_scenario(BASE.replace("./pkg", "./..."), Path("s")).runner() == "go"


def _folder(
    tmp_path: Path, name: str, text: str, files: tuple[str, ...] = ("repo.bundle",)
) -> Path:
    d = tmp_path / name
    d.mkdir(parents=True)
    (d / "scenario.yml").write_text(text)
    for f in files:
        (d / f).write_text("x")
    return d


def test_folder_version_suffix_must_agree(tmp_path: Path) -> None:
    _folder(tmp_path, "fam/thing-1.1", BASE + 'version: "1.2"\n')
    with pytest.raises(UserError) as info:
        load_scenario("fam/thing-1.1", tmp_path)
    assert info.value.field == "version"
    _folder(tmp_path, "fam/other-1.1", BASE + 'version: "1.1.0"\n')
    assert load_scenario("fam/other-1.1", tmp_path).version == "1.1.0"
    _folder(tmp_path, "fam/implied-2.0", BASE)
    assert load_scenario("fam/implied-2.0", tmp_path).version == "2.0"


def test_referenced_files_must_exist(tmp_path: Path) -> None:
    _folder(tmp_path, "a/b", BASE + "spec: SPEC.md\n")
    with pytest.raises(UserError) as info:
        load_scenario("a/b", tmp_path)
    assert info.value.field == "spec" and "SPEC.md" in info.value.one_line()


def test_unknown_scenario_lists_known(tmp_path: Path) -> None:
    _folder(tmp_path, "fam/one", BASE)
    with pytest.raises(UserError) as info:
        load_scenario("fam/two", tmp_path)
    assert "fam/one" in info.value.one_line()
    assert list_scenarios(tmp_path) == ["fam/one"]


def test_sha_changes_with_content(tmp_path: Path) -> None:
    d = _folder(tmp_path, "fam/one", BASE)
    first = load_scenario("fam/one", tmp_path).sha256
    (d / "hidden.txt").write_text("new")
    assert load_scenario("fam/one", tmp_path).sha256 != first


def test_json_schema_uses_yaml_names() -> None:
    text = json.dumps(json_schema())
    assert "partial-tests" in text and "has-spec" in text and "copy_" not in text
