"""Cloning a scenario's repository: a network failure is told from a wrong location."""

from __future__ import annotations

import pytest

from harness.scenario.repo import network_failure


@pytest.mark.unit
def test_network_failures_are_told_from_wrong_locations() -> None:
    assert network_failure("fatal: unable to access 'https://x/': Could not resolve host: x")
    assert network_failure("fatal: unable to access 'http://127.0.0.1:9/x.git/': Failed to connect")
    assert network_failure("error: RPC failed; curl 56 GnuTLS recv error\nfatal: early EOF")
    assert not network_failure("remote: Repository not found.\nfatal: repository not found")
    assert not network_failure("fatal: '/nowhere' does not appear to be a git repository")
    assert not network_failure("git@x: Permission denied (publickey).")
