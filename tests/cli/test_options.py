"""What the trial and grader commands share: ``--seed`` and ``--sandbox`` checked, and one
trial's options built from the flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.options import check_seed, run_options
from harness.config.budget import Budget
from harness.errors import UserError

pytestmark = pytest.mark.unit


def test_a_seed_is_16_hex_digits_lower_cased() -> None:
    assert check_seed("00C0FFEE00C0FFEE") == "00c0ffee00c0ffee" and check_seed(None) is None
    for bad in ("c0ffee", "00c0ffee00c0ffeg", "00c0ffee00c0ffee0"):
        with pytest.raises(UserError, match="is not 16 hex digits") as info:
            check_seed(bad)
        assert info.value.field == "--seed"


def test_one_trial_s_options_from_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    opts = run_options(
        "codex", "m", "ABCDEF0123456789", "local", Path("tape.jsonl"), True, Budget(calls=2), True
    )
    assert (opts.agent, opts.model, opts.seed, opts.sandbox) == (
        "codex",
        "m",
        "abcdef0123456789",
        "local",
    )
    assert opts.replay == tmp_path / "tape.jsonl" and opts.replay.is_absolute()
    assert opts.record and opts.allow_failing_pairs and opts.budget == Budget(calls=2)
    with pytest.raises(UserError) as info:
        run_options("codex", None, None, "kubernetes", None, False)
    assert "kubernetes" in str(info.value)
