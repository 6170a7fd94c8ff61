"""No trial can change what another trial links or imports (real Docker and local trials).

A trial's test-time code (the agent's package, linked into the hidden tests' binary)
walks every Go build cache, seed, module cache and toolchain it can see, rewrites each
action record it can open for writing and plants a file in each folder it can write;
then a next trial of the same scenario, code unfixed, must still fail with the unfixed
score, and nothing under the harness cache may carry a planted file or belong to a uid
that a tree's code runs as (the test user, the builder). Before issue 46 the verifier's
``umask(0)`` left the shared Docker build cache (owned by the builder, who compiled the
agent's tree into it) open to both."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.grader.containment.catalogue import load_attacks
from harness.grader.containment.control import run_attack
from harness.sandbox.docker import SANDBOX_UID
from harness.verify.go.build import BUILDER_OFFSET
from harness.verify.isolation.test_user import LOCAL_TEST_UID
from tests.grader.test_containment_trials import settings
from tests.support.cache import own_cache

pytestmark = pytest.mark.integration
ATTACK = "verdict-go-cache-poison-next-trial"
TRIAL_UIDS = {u + d for u in (SANDBOX_UID, LOCAL_TEST_UID) for d in (0, BUILDER_OFFSET)}


def reached(cache: Path) -> list[str]:
    """Files under ``cache`` (its shared folders followed) that a trial planted or owns."""
    found: list[str] = []
    for top in cache.iterdir():
        for folder, dirs, files in os.walk(top.resolve()):
            for name in [*dirs, *files]:
                path = Path(folder, name)
                try:
                    owner = path.lstat().st_uid
                except OSError:
                    continue
                if name.startswith(("zz-harness-poison-", "zz-harness-linker-")):
                    found.append(f"planted: {path}")
                elif owner in TRIAL_UIDS:
                    found.append(f"owned by uid {owner}: {path}")
                if len(found) > 20:
                    return found
    return found


def _play(sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(own_cache(tmp_path)))
    (attack,) = load_attacks(names=[ATTACK])
    assert attack.victim is not None
    result = run_attack(attack, settings(tmp_path, monkeypatch), sandbox)
    assert result.contained, result.line()  # the next, unfixed trial: failed, 0.5
    assert reached(tmp_path / "cache") == []


@pytest.mark.docker
def test_no_docker_trial_changes_what_the_next_one_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _play("docker", tmp_path, monkeypatch)


@pytest.mark.skipif(os.geteuid() != 0, reason="the users are enforced only for root")
def test_no_local_trial_changes_what_the_next_one_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _play("local", tmp_path, monkeypatch)
