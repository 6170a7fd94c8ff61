"""Cloning a scenario's repository: a network failure is told from a wrong location, and a
clone that fails names the repository cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario.repo import network_failure
from tests.support.authoring import cli, draft


@pytest.mark.unit
def test_network_failures_are_told_from_wrong_locations() -> None:
    assert network_failure("fatal: unable to access 'https://x/': Could not resolve host: x")
    assert network_failure("fatal: unable to access 'http://127.0.0.1:9/x.git/': Failed to connect")
    assert network_failure("error: RPC failed; curl 56 GnuTLS recv error\nfatal: early EOF")
    assert not network_failure("remote: Repository not found.\nfatal: repository not found")
    assert not network_failure("fatal: '/nowhere' does not appear to be a git repository")
    assert not network_failure("git@x: Permission denied (publickey).")


@pytest.mark.integration
def test_clone_error_names_the_repo_cache(project: Path, tmp_path: Path) -> None:
    folder = draft(project)
    yml = folder / "scenario.yml"
    missing = (tmp_path / "nowhere" / "acme.git").as_uri()
    yml.write_text(yml.read_text().replace("repo: repo.bundle", f"repo: {missing}"))
    done = cli(project, "validate", "t/clamp")
    assert done.returncode == 2 and "cannot clone" in done.stderr
    assert "HARNESS_REPO_CACHE" in done.stderr
