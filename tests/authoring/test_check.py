"""``harness check``: the summary an author pastes (validate, controls, entrants, lock)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.support.authoring import PY_FAST, cli


@pytest.mark.integration
def test_check_prints_a_summary_to_paste(project: Path) -> None:
    shutil.copytree(PY_FAST, project / "scenarios" / "smoke" / "py-fast")
    done = cli(project, "check", "smoke/py-fast", "--sandbox", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "### harness check: smoke/py-fast v1.0.0" in out and "**READY**" in out
    assert re.search(r"\| validate[^|]* \| ok \|", out)
    assert "| controls | ok | GRADER TRUSTED" in out
    assert "| entrant oracle | ok | success" in out and "| entrant nop | ok | failed" in out
    assert "| lock | ok | draft" in out and "| placeholders | ok |" in out
