"""Progress people can read: image builds say what they build and how far (on stderr,
one plain line each); a job's progress is plain text, no redraws, when stdout is not a
terminal."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from harness.images.build import ImageBuilder
from harness.job.progress import LiveProgress, Tally


class FakeAPI:
    def build(self, **kwargs: Any) -> list[dict[str, Any]]:
        return [
            {"stream": "Step 1/2 : FROM harness/base:abc\n"},
            {"stream": " ---> 1234\n"},
            {"stream": "Step 2/2 : RUN pip install mini-swe-agent==2.0\n"},
            {"aux": {"ID": "sha256:" + "e" * 64}},
        ]


@pytest.mark.unit
def test_an_image_build_says_what_and_how_far(tmp_path: Path) -> None:
    said: list[str] = []
    client = SimpleNamespace(api=FakeAPI())
    builder = ImageBuilder(client, root=tmp_path, progress=said.append)  # type: ignore[arg-type]
    image = SimpleNamespace(name="agent-mini", path=tmp_path)
    image_id = builder._run_build(image, "harness/agent-mini:1", "harness/base:abc", tmp_path)  # type: ignore[arg-type]
    assert image_id.startswith("sha256:")
    assert said == [
        "  agent-mini step 1/2: FROM harness/base:abc",
        "  agent-mini step 2/2: RUN pip install mini-swe-agent==2.0",
    ]


@pytest.mark.unit
def test_the_default_build_progress_goes_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = ImageBuilder(SimpleNamespace(api=FakeAPI()), root=tmp_path)  # type: ignore[arg-type]
    builder.progress("building image agent-mini as harness/agent-mini:1 (parent x); once")
    err = capsys.readouterr().err
    assert err == "harness: building image agent-mini as harness/agent-mini:1 (parent x); once\n"


@pytest.mark.unit
def test_job_progress_is_plain_lines_without_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    tally = Tally(total=2)
    with LiveProgress(tally, console) as progress:
        progress.started("a")
        progress.finished("a", "done", "success")
        progress.started("b")
        progress.finished("b", "done", "failed", "0.000")
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert lines[0].startswith("trials: 2")
    assert lines[1].startswith("success     a") and "[1/2]" in lines[1]
    assert lines[2].startswith("failed      b  0.000") and "[2/2]" in lines[2]
    assert "failed 1" in lines[2] and lines[-1].startswith("finished")
