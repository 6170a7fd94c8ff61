"""Carrying a calibration across a move (grader/carry.py): the comparison holds a moved
import, a re-sorted import run and a string naming a moved module for the same code, and
any other change for a change; the whole carry replays the app kit's real move in a git
repository of its own and refuses a move that also changed a number, a move not named,
and a commit whose scorer is not the calibrated one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.grader.calibration_ledger import LEDGER, Entry, read_lines, write_lines
from harness.grader.carry import canonical, carry, differences, moved_name, moves_of
from harness.scoring.era import digest_of, load_thresholds, sha256_file
from tests.conftest import REPO_ROOT

MOVES = {"harness.scoring.appkit": "harness.appkit"}


@pytest.mark.unit
def test_a_moved_import_is_the_same_code() -> None:
    old = b"from harness.scoring.appkit.fetch import get\nx = get('/a')\n"
    new = b"from harness.appkit.fetch import get\n\nx = get('/a')  # a comment\n"
    assert canonical(old, MOVES) == canonical(new, {})
    assert canonical(old, {}) != canonical(new, {})  # the move has to be named


@pytest.mark.unit
def test_a_resorted_import_run_and_a_module_named_in_a_string_are_the_same_code() -> None:
    old = (
        b"import os\nfrom harness.scoring.appkit import jail\nfrom harness.errors import E\n"
        b"def f():\n    import json\n    import ast\n"
        b"    return import_module('harness.scoring.appkit.procs')\n"
    )
    new = (
        b"import os\nfrom harness.appkit import jail\nfrom harness.errors import E\n"
        b"def f():\n    import ast\n    import json\n"
        b"    return import_module('harness.appkit.procs')\n"
    )
    assert canonical(old, MOVES) == canonical(new, {})


@pytest.mark.unit
@pytest.mark.parametrize(
    "after",
    [
        b"from harness.appkit.fetch import get\nx = get('/b')\n",  # a string
        b"from harness.appkit.fetch import get\nx = get('/a', 1)\n",  # a call
        b"from harness.appkit.fetch import get as x\n",  # what a name means
        b"from harness.appkit.fetch import post\nx = post('/a')\n",  # another function
        b'"""a docstring"""\nfrom harness.appkit.fetch import get\nx = get(\'/a\')\n',
        b"x = get('/a')\nfrom harness.appkit.fetch import get\n",  # an import moved past code
    ],
)
def test_any_other_change_is_a_change(after: bytes) -> None:
    old = [("f.py", b"from harness.scoring.appkit.fetch import get\nx = get('/a')\n")]
    assert differences(old, [("f.py", after)], MOVES) == [
        "f.py: its code changed, not only where the modules it imports live"
    ]


@pytest.mark.unit
def test_files_other_than_python_and_the_file_list_must_be_the_same() -> None:
    assert differences([("SPEC.md", b"a")], [("SPEC.md", b"b")], MOVES) == [
        "SPEC.md: its bytes changed"
    ]
    assert differences([("a.py", b"")], [("b.py", b"")], MOVES) == [
        "other files: a.py gone, b.py new"
    ]
    assert differences([("a.py", b"x = 1\n")], [("a.py", b"x = 1\n")], {}) == []


@pytest.mark.unit
def test_moves_are_module_names() -> None:
    assert moves_of(["a.b=c"]) == {"a.b": "c"}
    assert moved_name("a.bc", {"a.b": "c"}) == "a.bc"  # a module boundary, not a prefix
    assert moved_name("a.b.d", {"a": "x", "a.b": "c"}) == "c.d"  # the longest move wins
    for bad in ["a.b", "a.b=", "=c", "a b=c", "a.b=c/d"]:
        with pytest.raises(UserError, match="is not OLD=NEW") as err:
            moves_of([bad])
        assert err.value.field == "--moved"


# -- the real move, replayed ------------------------------------------------------------

SUITE = """\
from pathlib import Path

from harness.appkit.seeding import derive
from harness.scoring import Suite, graded

suite = Suite(
    name="tiny",
    version="1.0.0",
    tier_weights={"core": 1.0},
    thresholds=Path(__file__).with_name("thresholds.yml"),
)
suite.add("a", lambda c: graded(1.0 if derive("s", "x") else 0.5), tier="core", harm="h")
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _old_layout(repo: Path) -> None:
    """The harness as it was before the move: the app kit under ``scoring/``."""
    shutil.move(repo / "harness" / "appkit", repo / "harness" / "scoring" / "appkit")
    for path in [*repo.rglob("*.py")]:
        text = path.read_text()
        moved = text.replace("harness.appkit", "harness.scoring.appkit")
        moved = moved.replace('_SCORING.parent / "appkit"', '_SCORING / "appkit"')
        if moved != text:
            path.write_text(moved)


def _copy_harness(repo: Path) -> None:
    shutil.copytree(
        REPO_ROOT / "harness", repo / "harness", ignore=shutil.ignore_patterns("__pycache__")
    )


def _scorer(repo: Path, suite_dir: Path) -> str:
    from harness.grader.carry import graded_files

    return digest_of(graded_files(repo, suite_dir).files)


@pytest.fixture
def moved_repo(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository whose first commit calibrated a suite against the old layout and
    whose second is the move; (the repository, the suite folder, the old scorer)."""
    repo = tmp_path / "repo"
    shutil.copytree(
        REPO_ROOT / "harness", repo / "harness", ignore=shutil.ignore_patterns("__pycache__")
    )
    suite_dir = repo / "scenarios" / "tiny" / "suite"
    suite_dir.mkdir(parents=True)
    (suite_dir / "suite.py").write_text(SUITE)
    _old_layout(repo)
    old = _scorer(repo, suite_dir)
    (suite_dir / "thresholds.yml").write_text(
        f"calibrated: true\nhigh: 0.9\nlow: 0.2\nscorer: {old}\n"
    )
    (suite_dir / "thresholds.pin").write_text(sha256_file(suite_dir / "thresholds.yml") + "\n")
    entry = Entry(tree="reference", seed="s", sandbox="local", digest="d", scorer=old,
                  final=1.0, measurable=True)  # fmt: skip
    write_lines(suite_dir / LEDGER, [entry, entry.model_copy(update={"scorer": "0" * 64})])
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "calibrated")
    shutil.rmtree(repo / "harness")
    shutil.copytree(
        REPO_ROOT / "harness", repo / "harness", ignore=shutil.ignore_patterns("__pycache__")
    )
    (suite_dir / "suite.py").write_text(SUITE)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the move")
    return repo, suite_dir, old


@pytest.mark.integration
def test_the_app_kit_s_move_carries_the_calibration(moved_repo: tuple[Path, Path, str]) -> None:
    repo, suite_dir, old = moved_repo
    new = _scorer(repo, suite_dir)
    assert new != old
    done = carry(repo, suite_dir, MOVES)
    assert (done.old, done.new, done.lines) == (old, new, 1)
    thresholds = load_thresholds(suite_dir / "thresholds.yml")
    assert thresholds.calibrated and thresholds.scorer == new
    said = yaml.safe_load((suite_dir / "thresholds.yml").read_text())["carried"]
    assert said == {"from": old, "commit": _git(repo, "rev-parse", "HEAD~1"), "moved": MOVES}
    assert (suite_dir / "thresholds.pin").read_text().strip() == sha256_file(
        suite_dir / "thresholds.yml"
    )
    scorers = sorted(e.scorer for e in read_lines(suite_dir / LEDGER, Entry))
    assert scorers == sorted([new, "0" * 64])  # another scorer's line is left as it was
    with pytest.raises(UserError, match="nothing to carry"):
        carry(repo, suite_dir, MOVES)


@pytest.mark.integration
def test_a_move_that_also_changed_a_number_is_not_carried(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, _ = moved_repo
    suite_py = suite_dir / "suite.py"
    suite_py.write_text(suite_py.read_text().replace("else 0.5", "else 0.4"))
    before = (suite_dir / "thresholds.yml").read_text(), (suite_dir / LEDGER).read_text()
    with pytest.raises(UserError, match=r"suite\.py: its code changed"):
        carry(repo, suite_dir, MOVES)
    assert ((suite_dir / "thresholds.yml").read_text(), (suite_dir / LEDGER).read_text()) == before


@pytest.mark.integration
def test_an_unnamed_move_or_a_wrong_commit_is_not_carried(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, _ = moved_repo
    with pytest.raises(UserError, match=r"appkit/__init__\.py: its code changed"):
        carry(repo, suite_dir, {})
    with pytest.raises(UserError, match="not the calibrated") as err:
        carry(repo, suite_dir, MOVES, commit="HEAD")  # the move itself: another scorer
    assert err.value.field == "--from"
    with pytest.raises(UserError, match="no commit"):
        carry(repo, suite_dir, MOVES, commit="no-such-commit")


@pytest.mark.integration
def test_a_move_must_stay_inside_what_the_fingerprint_covers(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """A move to a module nobody fingerprints would let its code change unseen: the suite
    imports its helper from a module outside the scorer's files, named as moved."""
    repo, suite_dir, _ = moved_repo
    kit = repo / "harness" / "appkit" / "seeding.py"
    (repo / "harness" / "util" / "seeds.py").write_text(kit.read_text().replace("256", "224"))
    suite_py = suite_dir / "suite.py"
    suite_py.write_text(suite_py.read_text().replace("appkit.seeding", "util.seeds"))
    helper = {"harness.scoring.appkit.seeding": "harness.util.seeds"}
    with pytest.raises(UserError, match="is not among the files that grade") as err:
        carry(repo, suite_dir, {**MOVES, **helper})
    assert err.value.field == "--moved"


@pytest.mark.unit
def test_the_command_refuses_half_an_option() -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    result = CliRunner().invoke(app, ["calibrate", "apps/invoice-sync", "--moved", "a=b"])
    assert result.exit_code == 2 and "--moved and --from go with --carry" in result.output
