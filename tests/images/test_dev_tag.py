"""``python -m harness.images.dev_tag``: the image's tag on stdout, progress on stderr, a
harness error as one line with its exit code."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest

from harness.errors import InfraError
from harness.images import dev_tag

pytestmark = pytest.mark.unit


def test_the_tag_is_printed_and_progress_goes_to_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = []

    def ensure(name: str, progress: Callable[[str], None]) -> SimpleNamespace:
        asked.append(name)
        progress("building base")
        return SimpleNamespace(tag=f"harness/{name}:abc123")

    monkeypatch.setattr(dev_tag, "ensure_image", ensure)
    assert dev_tag.main([]) == 0 and dev_tag.main(["scorer"]) == 0
    assert asked == ["env-python", "scorer"]
    out = capsys.readouterr()
    assert out.out == "harness/env-python:abc123\nharness/scorer:abc123\n"
    assert out.err == "building base\nbuilding base\n"


def test_a_harness_error_is_one_line_and_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(name: str, progress: Callable[[str], None]) -> None:
        raise InfraError("docker is not running")

    monkeypatch.setattr(dev_tag, "ensure_image", broken)
    assert dev_tag.main(["scorer"]) == 3
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("error: docker is not running")
    assert out.err.count("\n") == 1
