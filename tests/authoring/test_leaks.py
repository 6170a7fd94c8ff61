"""The leak check (issue 50): the task text against the solution's new conditions,
messages and internal names; the two shipped scenarios that leaked, fixed in new
versions; ``harness check`` reports a finding until it is fixed or accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.authoring.check import _leaks
from harness.authoring.leaks import ACCEPTED, find_leaks, scenario_leaks, watch_list
from harness.scenario.load import load_scenario
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit
SCENARIOS = REPO_ROOT / "scenarios"
PATCH = """diff --git a/tree.go b/tree.go
--- a/tree.go
+++ b/tree.go
@@ -1,3 +1,3 @@
 n = n.children[0]
-tsr = (n.path == "/" && n.handle != nil)
+tsr = (n.path == "/" && n.handle != nil) || (n.path == "" && n.indices == "/")
+if count < 1 { return errors.New("the sequence has an invalid length") }
+pad := lastIndex(prev)
diff --git a/tree_test.go b/tree_test.go
--- a/tree_test.go
+++ b/tree_test.go
@@ -1 +1,2 @@
+	if got.path == "/x" { t.Fatal("a message only a test writes") }
"""


def _keys(text: str) -> list[str]:
    return [f.key for f in find_leaks(text, PATCH)]


def test_a_condition_on_a_field_is_a_leak_when_the_text_states_it() -> None:
    assert _keys('the child whose path is "" and whose indices are "/"') == [
        'condition n.path == ""',
        'condition n.indices == "/"',
    ]
    assert _keys("it returns tsr when the catch-all can be reached") == []
    assert _keys("an empty path") == []  # the field named, not its value


def test_a_message_and_an_internal_name_are_leaks() -> None:
    said = 'raise with "The sequence has an invalid length" using lastIndex'
    assert _keys(said) == ["literal the sequence has an invalid length", "lastIndex"]
    assert _keys("when count is below 1 return an error") == []  # a parameter: behaviour
    assert _keys("a message only a test writes") == []  # test files are not the solution


def test_watch_list_names_what_the_text_must_not_spell_out() -> None:
    watch = watch_list(PATCH)
    assert watch["conditions"] == ['n.indices == "/"', 'n.path == ""']
    assert watch["messages"] == ["the sequence has an invalid length"]
    assert watch["internal_names"] == ["lastIndex"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("go/httprouter-tsr-catchall", "go/httprouter-tsr-catchall-2.0.0"),
        ("py/toolz-partition-all-bad-len", "py/toolz-partition-all-bad-len-2.0.0"),
    ],
)
def test_the_two_leaking_scenarios_are_fixed_in_new_versions(old: str, new: str) -> None:
    def leaks(name: str) -> list[str]:
        folder = SCENARIOS / name
        data = yaml.safe_load((folder / "scenario.yml").read_text())
        found, _ = scenario_leaks(
            folder, data["agent"]["instructions"], data.get("spec"), data.get("solution")
        )
        return [f.key for f in found]

    assert leaks(old)  # 1.0.0 stays as locked; its text gives the fix away
    assert leaks(new) == []
    assert load_scenario(new, SCENARIOS).version == "2.0.0"


def test_check_reports_a_leak_until_accepted(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS / "go" / "httprouter-tsr-catchall", root / "go" / "leaky")
    step = _leaks(load_scenario("go/leaky", root))
    assert not step.ok and 'condition n.path == ""' in step.detail and ACCEPTED in step.detail
    (root / "go" / "leaky" / ACCEPTED).write_text(
        '# the internals are the task here\ncondition n.path == ""\ncondition n.indices == "/"\n'
    )
    step = _leaks(load_scenario("go/leaky", root))
    assert step.ok and "2 accepted" in step.detail
