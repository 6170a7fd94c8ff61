"""What a carry writes (grader/carried_files.py): the thresholds' text with the new scorer
and one more ``carried:`` entry, everything else as it was; a top-level key cut out of a
YAML mapping's lines; a ledger's lines of the old scorer rekeyed, every other line byte
for byte; the old scorer's lines at the commit found changed or gone in the work tree (the
whole carry: tests/grader/test_carry.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.grader.carried_files import carried_text, lines_changed, rekey, without_key

pytestmark = pytest.mark.unit

OLD, NEW = "a" * 64, "b" * 64
SAID = {"from": OLD, "commit": "c" * 40}


def test_the_scorer_line_is_rewritten_and_every_other_line_kept() -> None:
    text = f"# calibrated by hand\ncalibrated: true\nscorer: '{OLD}'  # the stamp\nhigh: 0.9\n"
    got = carried_text(text, OLD, NEW, SAID)
    assert got.startswith(f"# calibrated by hand\ncalibrated: true\nscorer: {NEW}\nhigh: 0.9\n")
    assert yaml.safe_load(got)["carried"] == [SAID]


def test_an_earlier_carry_is_kept_first_whether_one_entry_or_a_list() -> None:
    first = {"from": "0" * 64}
    for earlier in (f"carried:\n  from: '{'0' * 64}'\n", f"carried:\n- from: '{'0' * 64}'\n"):
        text = f"scorer: {OLD}\n{earlier}high: 0.9\n"
        got = carried_text(text, OLD, NEW, SAID, ["harness.x: its code changed"])
        data = yaml.safe_load(got)
        assert data["carried"] == [first, {**SAID, "unproven": ["harness.x: its code changed"]}]
        assert data["high"] == 0.9 and got.count("carried:") == 1


def test_a_scorer_other_than_the_old_one_is_refused() -> None:
    with pytest.raises(UserError, match="scorer"):
        carried_text(f"scorer: {NEW}\n", OLD, NEW, SAID)
    with pytest.raises(UserError, match="carried"):
        carried_text(f"scorer: {OLD}\ncarried: yes\n", OLD, NEW, SAID)


def test_without_key_drops_the_key_and_what_is_under_it_only() -> None:
    lines = ["a: 1\n", "carried:\n", "  - x: 1\n", "\n", "- y\n", "\tz\n", "b: 2\n"]
    lines += ["carried_by: 3\n", "# a comment\n"]
    assert without_key(lines, "carried") == ["a: 1\n", "b: 2\n", "carried_by: 3\n", "# a comment\n"]
    assert without_key(lines, "absent") == lines


def test_rekey_moves_the_old_scorers_lines_and_keeps_the_rest_byte_for_byte(
    tmp_path: Path,
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    other = b'{"scorer": "x", "n": 1}\r\n'  # another scorer's line, spaced and CRLF
    torn = b'{"scorer": "' + OLD.encode() + b'", "n"\n'  # does not parse
    mine = json.dumps({"n": 2, "scorer": OLD, "note": "café"}, ensure_ascii=False).encode()
    ledger.write_bytes(other + mine + b"\n" + torn + b"\xff\n")
    assert rekey(ledger, OLD, NEW) == 1
    lines = ledger.read_bytes().splitlines(keepends=True)
    assert lines[0] == other and lines[2:] == [torn, b"\xff\n"]
    assert json.loads(lines[1]) == {"n": 2, "scorer": NEW, "note": "café"}
    assert list(json.loads(lines[1])) == ["n", "scorer", "note"]  # the keys' order kept


def test_rekey_writes_nothing_when_nothing_moves(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b'{"scorer": "x"}\n')
    before = ledger.stat().st_mtime_ns
    assert rekey(ledger, OLD, NEW) == 0
    assert ledger.read_bytes() == b'{"scorer": "x"}\n' and ledger.stat().st_mtime_ns == before
    assert rekey(tmp_path / "missing.jsonl", OLD, NEW) == 0


def test_a_ledger_line_of_the_carried_scorer_edited_since_the_commit_is_named(
    tmp_path: Path,
) -> None:
    # the red team's H7: the LOW tree's 0.0358 made 0.9958, then carried to the new scorer
    def line(tree: str, final: float, scorer: str = OLD) -> str:
        return json.dumps({"tree": tree, "final": final, "scorer": scorer}) + "\n"

    then, now = tmp_path / "then.jsonl", tmp_path / "now.jsonl"
    then.write_text(line("low", 0.0358) + line("ref", 1.0) + line("x", 0.5, scorer=NEW))
    now.write_text(line("ref", 1.0) + line("low", 0.0358) + line("late", 0.2))
    assert lines_changed(then, now, OLD) == []  # reordered, and a line scored since: kept
    now.write_text(line("ref", 1.0) + line("low", 0.9958))
    (why,) = lines_changed(then, now, OLD)
    assert why == f"now.jsonl: 1 line(s) of scorer {OLD[:16]} changed or gone since the commit"
    now.write_text(line("ref", 1.0))
    assert lines_changed(then, now, OLD) != []
    assert lines_changed(tmp_path / "none.jsonl", now, OLD) == []
