"""Whose a Docker object is: this project's id and this process as its maker, and whether
the maker still lives (unknown when made on another host)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.sandbox.owner import HOST, PID, PROJECT, owner_alive, owner_labels, project_id

pytestmark = pytest.mark.unit


def test_labels_name_the_project_host_and_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):  # two projects (a project is a folder with agents.yml)
        (tmp_path / name).mkdir()
        (tmp_path / name / "agents.yml").write_text("agents: []\n")
    monkeypatch.chdir(tmp_path / "a")
    labels = owner_labels()
    assert labels == {PROJECT: project_id(), HOST: socket.gethostname(), PID: str(os.getpid())}
    assert len(labels[PROJECT]) == 12
    monkeypatch.chdir(tmp_path / "b")
    assert project_id() != labels[PROJECT]  # two projects never share an id


def test_a_maker_alive_dead_or_unknown() -> None:
    here = socket.gethostname()
    assert owner_alive({PID: str(os.getpid()), HOST: here}) is True
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    assert owner_alive({PID: done.stdout.strip(), HOST: here}) is False
    assert owner_alive({PID: str(os.getpid()), HOST: "another-host"}) is None
    assert owner_alive({HOST: here}) is None and owner_alive({PID: "x", HOST: here}) is None
