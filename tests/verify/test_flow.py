"""The verifier's order (issue 50): a modification rule that already failed decides the
verdict; an environment failure found afterwards is a note, never ``error``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.verify.flow import verify_tree
from harness.verify.request import VerifyRequest
from harness.verify.verdict import decide
from tests.conftest import git

pytestmark = pytest.mark.integration


def _tree(tmp_path: Path) -> tuple[Path, str]:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("A = 1\n")
    (tree / "test_a.py").write_text("from pkg.a import A\n\ndef test_a():\n    assert A == 2\n")
    git(["init", "-q"], tree)
    git(["add", "-A"], tree)
    git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"], tree)
    return tree, git(["rev-parse", "HEAD"], tree).strip()


@pytest.mark.parametrize("changed", [False, True])
def test_an_unprepared_environment_does_not_overrule_a_broken_rule(
    tmp_path: Path, changed: bool
) -> None:
    tree, base = _tree(tmp_path)
    if changed:
        (tree / "pkg" / "a.py").write_text("A = 2\n")
    request = VerifyRequest(
        scenario="t/x",
        baseline=base,
        seed="0000000000000000",
        runner="pytest",
        must_modify=["pkg"],
        tests=["test_a.py"],
        hidden_root=str(tmp_path),
        provision_error="dependency: the package index cannot be reached",
        test_uid=None,
        rules_dialect="goagentbench",
    )
    outcome = verify_tree(tree, request)
    if changed:  # the rules hold: the environment decides, error
        assert outcome.error and decide(outcome).outcome == "error"
    else:  # must-modify failed first: failed, the environment only noted
        assert outcome.error is None and decide(outcome).outcome == "failed"
        assert "cannot be reached" in " ".join((outcome.toolchain or {}).get("notes", []))
