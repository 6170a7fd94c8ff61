"""The attack agent's script, played for real with ``sh``: it plants content, links, pipes
and sparse files where the attack says, fills in the control's placeholders, then runs."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from harness.grader.containment.agent import expand, script
from harness.grader.containment.catalogue import Attack

pytestmark = pytest.mark.unit


def _attack(plant: dict[str, object], run: str = "") -> Attack:
    return Attack.model_validate(
        {"name": "x", "owner": "t", "about": "a", "scenario": "s", "plant": plant, "run": run}
    )


def test_the_script_plants_every_kind_and_then_runs(tmp_path: Path) -> None:
    attack = _attack(
        {
            "deep/er/x.py": {"content": "T='{token}'; d = {1: 2}\n", "mode": "0o700"},
            "link": {"symlink": "{host_secret}"},
            "pipe": {"fifo": True},
            "big.bin": {"sparse": 1 << 20},
            "it's odd.txt": {"content": "quoted"},
        },
        run="echo ran {token} > ran.txt; exit 9",
    )
    (tmp_path / "link").write_text("replaced")  # what was there before is removed
    text = script(attack, {"token": "TOK", "host_secret": "/h/s"})
    done = subprocess.run(["sh", "-c", text], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 9, done.stderr  # the run's own exit, after set +e
    x = tmp_path / "deep" / "er" / "x.py"
    assert x.read_text() == "T='TOK'; d = {1: 2}\n" and stat.S_IMODE(x.stat().st_mode) == 0o700
    assert os.readlink(tmp_path / "link") == "/h/s"
    assert stat.S_ISFIFO((tmp_path / "pipe").lstat().st_mode)
    assert (tmp_path / "big.bin").stat().st_size == 1 << 20
    assert (tmp_path / "it's odd.txt").read_text() == "quoted"
    assert (tmp_path / "ran.txt").read_text() == "ran TOK\n"


def test_a_failed_plant_stops_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file, not a folder")
    text = script(_attack({"file/x.py": {"content": "x"}}, run="touch ran"), {})
    assert subprocess.run(["sh", "-c", text], cwd=tmp_path, capture_output=True).returncode != 0
    assert not (tmp_path / "ran").exists()


def test_only_known_placeholders_are_filled() -> None:
    assert expand("{token} {other} {}", {"token": "T"}) == "T {other} {}"
