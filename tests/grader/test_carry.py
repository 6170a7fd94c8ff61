"""Carrying a calibration across a move (grader/carry.py; the comparison itself is
tests/grader/test_same_code.py's).

The whole carry replays the app kit's real move in a git repository of its own; the
refusals are members of the
classes a red team found open (what the comparison reads is narrower than what grades;
the commit and the thresholds trusted as given; a refusal or a bad result that leaves
files written), and each must leave every file as it was."""

from __future__ import annotations

import os
import py_compile
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.grader.calibration_ledger import LEDGER, Entry, read_lines, write_lines
from harness.grader.carried_files import carried_text
from harness.grader.carry import Lock, carry, listing, moves_of
from harness.grader.same_code import moved_name
from harness.scenario.load import folder_hash
from harness.scenario.lock import HEADER
from harness.scoring.era import load_thresholds, sha256_file
from tests.conftest import REPO_ROOT

MOVES = {"harness.scoring.appkit": "harness.appkit"}


# -- the comparison ------------------------------------------------------------------------


@pytest.mark.unit
def test_moves_are_module_names_inside_the_harness_package() -> None:
    assert moves_of(["harness.a.b=harness.c"]) == {"harness.a.b": "harness.c"}
    assert moved_name("harness.a.bc", {"harness.a.b": "harness.c"}) == "harness.a.bc"
    assert moved_name("a.b.d", {"a": "x", "a.b": "c"}) == "c.d"  # the longest move wins
    for bad in ["a.b", "a.b=", "=c", "a b=c", "a.b=c/d", "harness.a=harness.a"]:
        with pytest.raises(UserError, match="is not OLD=NEW") as err:
            moves_of([bad])
        assert err.value.field == "--moved"
    for outside in ["approval=down", "harness.appkit=appkit", "this=harness.this"]:
        with pytest.raises(UserError, match="leaves the harness package"):
            moves_of([outside])


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


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def _copy_harness(repo: Path) -> None:
    shutil.copytree(
        REPO_ROOT / "harness", repo / "harness", ignore=shutil.ignore_patterns("__pycache__")
    )


def _old_layout(repo: Path) -> None:
    """The harness as it was before the move: the app kit under ``scoring/``."""
    shutil.move(repo / "harness" / "appkit", repo / "harness" / "scoring" / "appkit")
    for path in [*repo.rglob("*.py")]:
        text = path.read_text()
        moved = text.replace("harness.appkit", "harness.scoring.appkit")
        moved = moved.replace('_SCORING.parent / "appkit"', '_SCORING / "appkit"')
        if moved != text:
            path.write_text(moved)


def _state(suite_dir: Path) -> dict[str, bytes]:
    """Every file of the suite's folder and its mutant ledger: what a refusal must keep."""
    files = [p for p in suite_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return {str(p): p.read_bytes() for p in sorted(files)}


def _moved(tmp_path: Path, pinned: bool) -> tuple[Path, Path, str]:
    """A repository whose first commit calibrated a suite against the old layout (its
    thresholds pinned, or not) and whose second is the move; (the repository, the suite
    folder, the old scorer)."""
    repo = tmp_path / "repo"
    _copy_harness(repo)
    suite_dir = repo / "scenarios" / "tiny" / "suite"
    suite_dir.mkdir(parents=True)
    (suite_dir / "suite.py").write_text(SUITE)
    _old_layout(repo)
    old = listing(repo, suite_dir).scorer
    (suite_dir / "thresholds.yml").write_text(
        f"calibrated: true\nhigh: 0.9\nlow: 0.2\nscorer: {old}\n"
    )
    if pinned:
        pin = sha256_file(suite_dir / "thresholds.yml")
        (suite_dir / "thresholds.pin").write_text(pin + "\n")
    (repo / "outside").symlink_to("/etc/hostname")  # a link out of the tree, in the commit
    entry = Entry(tree="reference", seed="s", sandbox="local", digest="d", scorer=old,
                  final=1.0, measurable=True)  # fmt: skip
    write_lines(suite_dir / LEDGER, [entry, entry.model_copy(update={"scorer": "0" * 64})])
    with (suite_dir / LEDGER).open("ab") as fh:
        fh.write(b"a torn line{\n\xff\xfe not UTF-8\n")
    _git(repo, "init", "-q")
    _commit(repo, "calibrated")
    shutil.rmtree(repo / "harness")
    _copy_harness(repo)
    (suite_dir / "suite.py").write_text(SUITE)
    _commit(repo, "the move")
    return repo, suite_dir, old


@pytest.fixture
def moved_repo(tmp_path: Path) -> tuple[Path, Path, str]:
    return _moved(tmp_path, pinned=True)


@pytest.mark.integration
def test_the_app_kit_s_move_carries_the_calibration(moved_repo: tuple[Path, Path, str]) -> None:
    repo, suite_dir, old = moved_repo
    new = listing(repo, suite_dir).scorer
    assert new != old
    done = carry(repo, suite_dir, MOVES)
    assert (done.old, done.new, done.lines) == (old, new, 1)
    thresholds = load_thresholds(suite_dir / "thresholds.yml")
    assert thresholds.calibrated and thresholds.scorer == new
    (said,) = yaml.safe_load((suite_dir / "thresholds.yml").read_text())["carried"]
    # where the fingerprint's files are is not grading, and no fingerprint covers it
    assert [u.split(":")[0] for u in said.pop("unproven")] == ["harness.scoring.era"]
    commit, checker = _git(repo, "rev-parse", "HEAD~1"), _git(repo, "rev-parse", "HEAD")
    assert said == {"from": old, "commit": commit, "checker": checker, "moved": MOVES,
                    "proved": "files"}  # fmt: skip
    assert done.proved == "files" and "(file by file)" in done.line()
    assert (suite_dir / "thresholds.pin").read_text().strip() == sha256_file(
        suite_dir / "thresholds.yml"
    )
    scorers = sorted(e.scorer for e in read_lines(suite_dir / LEDGER, Entry))
    assert scorers == sorted([new, "0" * 64])  # another scorer's line is left as it was
    assert (suite_dir / LEDGER).read_bytes().endswith(b"a torn line{\n\xff\xfe not UTF-8\n")
    assert listing(repo, suite_dir).stamp["calibrated"]
    with pytest.raises(UserError, match="nothing to carry"):
        carry(repo, suite_dir, MOVES)


def _refused(repo: Path, suite_dir: Path, match: str, **kw: object) -> None:
    before = _state(suite_dir)
    moves = kw.pop("moves", MOVES)
    with pytest.raises(UserError, match=match):
        carry(repo, suite_dir, moves, **kw)  # type: ignore[arg-type]
    assert _state(suite_dir) == before  # nothing written


@pytest.mark.integration
def test_a_move_that_also_changed_code_is_not_carried(moved_repo: tuple[Path, Path, str]) -> None:
    repo, suite_dir, _ = moved_repo
    suite_py = suite_dir / "suite.py"
    suite_py.write_text(suite_py.read_text().replace("else 0.5", "else 0.4"))
    # the suite's files differ: compared by definitions, which names the one that changed
    _refused(repo, suite_dir, r'<lambda> \(suite\.py:12\).*"0\.5" is not "0\.4"')
    suite_py.write_text(SUITE)
    kit = repo / "harness" / "appkit" / "seeding.py"  # fingerprinted, moved and changed
    kit.write_text(kit.read_text().replace("sha256", "sha224"))
    _refused(repo, suite_dir, r"seeding\.py: its code changed")


@pytest.mark.integration
def test_reached_code_no_fingerprint_covers_is_compared_and_named(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """The package the suite imports ``graded`` from is code it runs that no scorer
    fingerprint has ever covered: a change there is named in the carry and kept in the
    thresholds (``unproven``), for the reviewer of the commit."""
    repo, suite_dir, _ = moved_repo
    init = repo / "harness" / "scoring" / "__init__.py"
    init.write_text(init.read_text() + "\ngraded = fraction  # noqa\n")
    done = carry(repo, suite_dir, MOVES)
    assert any(u.startswith("harness.scoring: its code changed") for u in done.unproven)
    assert "differing outside every scorer fingerprint: harness.scoring" in done.line()
    (said,) = yaml.safe_load((suite_dir / "thresholds.yml").read_text())["carried"]
    assert said["unproven"] == list(done.unproven)


@pytest.mark.integration
def test_an_old_module_left_in_place_and_still_imported_is_not_carried(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """The kit's seeding "moved" to util, but the old copy (changed) stays and the suite
    still imports it from the old place beside the new one."""
    repo, suite_dir, _ = moved_repo
    kit = repo / "harness" / "appkit" / "seeding.py"
    (repo / "harness" / "util" / "seeds.py").write_text(kit.read_text())
    kit.write_text(kit.read_text().replace("sha256", "sha224"))
    suite_py = suite_dir / "suite.py"
    suite_py.write_text(SUITE.replace("from pathlib import Path\n", "from pathlib import Path\n"
                                      "import harness.util.seeds\n"))  # fmt: skip
    moves = {**MOVES, "harness.scoring.appkit.seeding": "harness.util.seeds"}
    _refused(repo, suite_dir, "its code changed|reached in the work tree only", moves=moves)


@pytest.mark.integration
def test_a_move_into_a_cache_folder_or_onto_compiled_code_is_not_carried(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, _ = moved_repo
    kit = repo / "harness" / "appkit"
    (kit / "__pycache__").mkdir(exist_ok=True)
    (kit / "__pycache__" / "seeding.py").write_text((kit / "seeding.py").read_text())
    suite_py = suite_dir / "suite.py"
    suite_py.write_text(SUITE.replace("appkit.seeding", "appkit.__pycache__.seeding"))
    moves = {**MOVES, "harness.scoring.appkit.seeding": "harness.appkit.__pycache__.seeding"}
    _refused(repo, suite_dir, "lies in a cache folder", moves=moves)
    suite_py.write_text(SUITE)
    py_compile.compile(str(kit / "seeding.py"), cfile=str(kit / "seeding.pyc"), doraise=True)
    (kit / "seeding.py").unlink()  # a sourceless module: Python imports the .pyc as it
    _refused(repo, suite_dir, "compiled code")


@pytest.mark.integration
def test_the_thresholds_and_the_commit_are_the_calibrated_ones(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, _ = moved_repo
    thresholds = suite_dir / "thresholds.yml"
    text = thresholds.read_text()
    thresholds.write_text(text.replace("high: 0.9", "high: 0.5"))  # a looser bar, re-pinned
    (suite_dir / "thresholds.pin").write_text(sha256_file(thresholds) + "\n")
    _refused(repo, suite_dir, "differs from commit")
    thresholds.write_text(text)
    (suite_dir / "thresholds.pin").write_text(sha256_file(thresholds) + "\n")
    _refused(repo, suite_dir, "not the calibrated", commit="HEAD")  # the move itself
    _refused(repo, suite_dir, "no commit", commit="no-such-commit")
    _refused(repo, suite_dir, "no commit", commit="--output=/tmp/x")
    # a side commit that hashes to the scorer but is not in HEAD's history
    _git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    (repo / "side.txt").write_text("x")
    _commit(repo, "side")
    side = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-")
    _refused(repo, suite_dir, "not in the history of HEAD", commit=side)


@pytest.mark.integration
def test_a_commit_that_was_never_calibrated_is_not_carried_from(tmp_path: Path) -> None:
    """Thresholds that say calibrated with a hand-written scorer but no pin: the commit's
    own harness does not stamp them calibrated."""
    repo, suite_dir, _ = _moved(tmp_path, pinned=False)
    _refused(repo, suite_dir, "is not calibrated and pinned")


@pytest.mark.unit
def test_the_carried_thresholds_say_where_from_and_name_their_scorer_once() -> None:
    old, new = "a" * 64, "b" * 64
    said = {"from": old, "commit": "c" * 40, "checker": "d" * 40, "moved": MOVES}
    text = f"calibrated: true\nhigh: 0.9\nlow: 0.2\nscorer: {old}\n"
    carried = yaml.safe_load(carried_text(text, old, new, said, ["harness.x: d"]))
    assert carried["scorer"] == new and carried["high"] == 0.9
    assert carried["carried"] == [{**said, "unproven": ["harness.x: d"]}]
    again = yaml.safe_load(carried_text(carried_text(text, old, new, said), new, "e" * 64, said))
    assert [c["from"] for c in again["carried"]] == [old, old] and again["scorer"] == "e" * 64
    crlf = carried_text(text.replace("\n", "\r\n"), old, new, said)
    assert yaml.safe_load(crlf)["scorer"] == new and "\n" not in crlf.replace("\r\n", "")
    for bad in [text + f"scorer: {old}\n", text + "carried: 3\n", "[1]\n"]:
        with pytest.raises(UserError, match=r"scorer|carried"):
            carried_text(bad, old, new, said)


@pytest.mark.integration
def test_a_carry_whose_result_does_not_stamp_is_put_back(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """The pin written where the suite does not read it (a comment that looks like the
    argument): the carried suite would refuse to score, so every file is put back."""
    repo, suite_dir, _ = moved_repo
    suite_py = suite_dir / "suite.py"
    suite_py.write_text('# thresholds_pin="0"\n' + SUITE)
    _commit(repo, "a comment")
    _refused(repo, suite_dir, "does not stamp calibrated")


@pytest.mark.unit
def test_the_command_refuses_half_an_option() -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    result = CliRunner().invoke(app, ["calibrate", "apps/invoice-sync", "--moved", "a=b"])
    assert result.exit_code == 2 and "--moved and --from go with --carry" in result.output


@pytest.mark.integration
def test_a_fingerprint_left_on_a_copy_nobody_runs_is_not_carried(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """The kit copied, the suite pointed at the copy, the fingerprint left on the old one:
    the code that runs would go uncovered, and an edit to it would void nothing."""
    repo, suite_dir, _ = moved_repo
    shutil.copytree(repo / "harness" / "appkit", repo / "harness" / "kit")
    for kit in ("kit", "appkit"):  # the dead copy the same code as the live one
        for path in (repo / "harness" / kit).glob("*.py"):
            path.write_text(path.read_text().replace("harness.appkit", "harness.kit"))
    (suite_dir / "suite.py").write_text(SUITE.replace("harness.appkit", "harness.kit"))
    moves = {"harness.scoring.appkit": "harness.kit"}
    _refused(repo, suite_dir, "the commit's fingerprint covered it", moves=moves)


@pytest.mark.integration
def test_fingerprinted_code_the_suite_does_not_import_is_compared_too(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """The kit's payments helpers are fingerprinted though this suite never imports them
    (the verifier or another suite may): a change there is a change."""
    repo, suite_dir, _ = moved_repo
    payments = repo / "harness" / "appkit" / "payments.py"
    payments.write_text(payments.read_text() + "\nCHANGED = True\n")
    _refused(repo, suite_dir, r"payments\.py: its code changed")


@pytest.mark.integration
def test_a_checker_other_than_the_committed_one_does_not_carry(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, _ = moved_repo
    checker = repo / "harness" / "grader" / "same_code.py"
    checker.write_text(checker.read_text() + "\n# judged by itself\n")
    _commit(repo, "a checker of its own")
    _refused(repo, suite_dir, "is not HEAD's harness/grader/same_code.py")


@pytest.mark.integration
def test_a_commit_without_the_suite_s_thresholds_is_a_refusal(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, _ = moved_repo
    index = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "bare-index")}
    for args in (["read-tree", "HEAD"], ["rm", "-q", "--cached", "-r", "scenarios"]):
        subprocess.run(["git", "-C", str(repo), *args], env=index, check=True)
    tree = subprocess.run(["git", "-C", str(repo), "write-tree"], env=index, text=True,
                          capture_output=True, check=True).stdout.strip()  # fmt: skip
    bare = _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree,
                "-p", "HEAD", "-m", "no scenarios")  # fmt: skip
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "-s", "ours", bare,
         "-m", "a history with a commit that has no scenarios")  # fmt: skip
    _refused(repo, suite_dir, "has no scenarios/tiny/suite/thresholds.yml", commit=bare)


def _locked_repo(moved_repo: tuple[Path, Path, str]) -> tuple[Path, Path, Lock]:
    """The carried repository with its scenario locked at the calibrated commit (a lock
    line written into that commit, as `harness lock` writes it)."""
    repo, suite_dir, _ = moved_repo
    lock = Lock(repo / "scenarios" / "scenarios.lock", "tiny@1.0.0")
    _git(repo, "checkout", "-q", "HEAD~1")
    lock.file.write_text(f"# lock\n{lock.key} {folder_hash(suite_dir.parent)}\n")
    _commit(repo, "locked")
    locked = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", locked, "-m", "m")
    return repo, suite_dir, lock


@pytest.mark.integration
def test_a_locked_version_is_locked_again_when_only_carried_files_changed(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, lock = _locked_repo(moved_repo)
    done = carry(repo, suite_dir, MOVES, commit="HEAD^2", lock=lock)
    assert done.relocked == lock.key and "tiny@1.0.0 locked again" in done.line()
    # written as `harness lock` writes the file (harness.scenario.lock)
    assert lock.file.read_text() == f"{HEADER}{lock.key} {folder_hash(suite_dir.parent)}\n"


@pytest.mark.integration
def test_a_locked_version_whose_other_files_changed_is_not_carried(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, lock = _locked_repo(moved_repo)
    (suite_dir.parent / "SPEC.md").write_text("another SPEC\n")  # beside the suite
    before = lock.file.read_text()
    _refused(repo, suite_dir, r"holds other files \(\['SPEC\.md'\]\)", commit="HEAD^2", lock=lock)
    assert lock.file.read_text() == before
    (suite_dir.parent / "SPEC.md").unlink()
    lock.file.write_text(before.replace(before.split()[-1], "0" * 64))  # edited by hand
    _refused(repo, suite_dir, "the lock's line for tiny@1.0.0 changed", commit="HEAD^2", lock=lock)


SPLIT_SUITE = '''\
"""The suite as a package: the harness imports this file alone."""

from __future__ import annotations

from pathlib import Path

__path__ = [str(Path(__file__).resolve().parent)]
__package__ = __name__
if __spec__ is not None:
    __spec__.submodule_search_locations = __path__

from .checks import suite  # noqa: E402

__all__ = ["suite"]
'''
SPLIT_CHECKS = """\
from pathlib import Path

from harness.scoring import Suite, graded
from harness.appkit.seeding import derive

suite: Suite = Suite(
    name="tiny",
    version="1.0.0",
    tier_weights={"core": 1.0},
    thresholds=Path(__file__).with_name("thresholds.yml"),
)
suite.add("a", lambda c: graded(1.0 if derive("s", "x") else 0.5), tier="core", harm="h")
"""


def _split(suite_dir: Path, checks: str = SPLIT_CHECKS) -> None:
    (suite_dir / "suite.py").write_text(SPLIT_SUITE)
    (suite_dir / "checks.py").write_text(checks)


@pytest.mark.integration
def test_a_suite_split_into_a_package_is_carried_by_its_definitions(
    moved_repo: tuple[Path, Path, str],
) -> None:
    """The move and a split of the suite into modules (annotations added, imports
    reordered) at once: the files differ, the definitions are proved the same."""
    repo, suite_dir, old = moved_repo
    _split(suite_dir, SPLIT_CHECKS.replace("else 0.5", "else 0.4"))
    _commit(repo, "split, and a bar lowered")
    _refused(repo, suite_dir, r'<lambda> \(checks\.py:12\).*"0\.5" is not "0\.4"')
    _split(suite_dir)
    _commit(repo, "split")
    done = carry(repo, suite_dir, MOVES)
    assert done.proved == "definitions" and "(definition by definition)" in done.line()
    (said,) = yaml.safe_load((suite_dir / "thresholds.yml").read_text())["carried"]
    assert said["proved"] == "definitions" and said["from"] == old
    assert listing(repo, suite_dir).stamp["calibrated"]


@pytest.mark.integration
def test_a_locked_version_split_into_a_package_is_locked_again(
    moved_repo: tuple[Path, Path, str],
) -> None:
    repo, suite_dir, lock = _locked_repo(moved_repo)
    _split(suite_dir)
    _commit(repo, "split")
    done = carry(repo, suite_dir, MOVES, commit="HEAD^^2", lock=lock)
    assert done.relocked == lock.key and done.proved == "definitions"
