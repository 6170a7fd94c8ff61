"""The attack catalogue loads, an attack's plant plays as a shell script, and the
containment control names what differs from an attack's expectations."""

from __future__ import annotations

import pytest

from harness.grader.containment.agent import script
from harness.grader.containment.catalogue import Attack, load_attacks
from harness.grader.containment.control import expectations

pytestmark = pytest.mark.unit


def test_the_catalogue_loads_and_plays_in_the_sandbox() -> None:
    attacks = load_attacks()
    prefixes = ("verdict-", "host-", "redteam-", "redteam2-")  # redteam2: this wave's
    assert len(attacks) >= 13 and all(a.name.startswith(prefixes) for a in attacks)
    attack = Attack.model_validate(
        {
            "name": "x",
            "owner": "t",
            "about": "a",
            "scenario": "smoke/py-fast",
            "plant": {
                "a/b.py": {"content": "M={token}\n", "mode": "0o755"},
                "l": {"symlink": "{host_secret}"},
                "p": {"fifo": True},
                "s": {"sparse": 10},
            },
            "run": "echo {token}",
        }
    )
    text = script(attack, {"token": "TOK", "host_secret": "/h/s"})
    assert "base64 -d > a/b.py" in text and "chmod 755 a/b.py" in text
    assert "ln -s /h/s l" in text and "mkfifo p" in text and "truncate -s 10 s" in text
    assert text.rstrip().endswith("echo TOK")


def test_expectations_name_what_differs() -> None:
    attack = Attack.model_validate(
        {
            "name": "x",
            "owner": "t",
            "about": "a",
            "scenario": "s",
            "expect": {"score": 0.5, "restored": ["conftest.py"], "rejected": True},
        }
    )
    good = {
        "score": 0.5,
        "containment": {"restored": ["conftest.py (hook: removed)"], "rejected": ["t: why"]},
    }
    assert expectations(attack, "failed", good) == []
    bad = expectations(attack, "success", {"score": 1.0, "containment": {}})
    assert len(bad) == 4 and bad[0].startswith("verdict success")
