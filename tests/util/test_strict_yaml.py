"""``parse_yaml`` parses with libyaml when it can and falls back to the pure-Python
loader for anything it refuses, so the data and the error messages stay the same."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.util import strict_yaml

pytestmark = pytest.mark.unit

TEXT = """\
base: &base {image: python, timeout: 30}
name: py/x
on: yes
when: 2024-01-02
scores: [1, 2.5, .inf, ~]
steps:
  - <<: *base
    timeout: 60
"""


def test_the_fast_loader_gives_the_pure_python_loaders_data() -> None:
    assert strict_yaml._FastLoader is not None, "PyYAML was built without libyaml"
    slow = yaml.load(TEXT, Loader=strict_yaml._StrictLoader)
    assert yaml.load(TEXT, Loader=strict_yaml._FastLoader) == slow
    assert strict_yaml.parse_yaml(TEXT, Path("s.yml")) == slow
    assert slow["steps"][0] == {"image": "python", "timeout": 60} and slow["when"].year == 2024


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb: 2\na: 3\n", "key 'a' appears twice (lines 1 and 3)"),
        ("a:\n\t- b\n", "a tab character at line 2"),
        ("a: 'open\n", "YAML syntax error at line 2"),
        ("a: !!python/object:os.system x\n", "the tag !!python/object:os.system at line 1"),
        ("a: b\x07\n", "a control character (#x0007)"),
    ],
)
def test_refused_text_is_named_as_the_pure_python_loader_names_it(
    text: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UserError) as fast:
        strict_yaml.parse_yaml(text, Path("s.yml"))
    monkeypatch.setattr(strict_yaml, "_FastLoader", None)
    with pytest.raises(UserError) as slow:
        strict_yaml.parse_yaml(text, Path("s.yml"))
    assert str(fast.value) == str(slow.value) and message in str(fast.value)
