"""Which runner-steering files are put back to the baseline before the hidden tests run,
and that restoring them works on disk with real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.verify.isolation.restore import (
    blob_id,
    go_redirects,
    pytest_section,
    restore_runner_files,
    to_restore,
    why_runner_file,
)
from tests.conftest import make_repo

pytestmark = pytest.mark.unit


def paths(items: list) -> list[str]:  # type: ignore[type-arg]
    return [i.path for i in items]


def test_runner_files_are_told_from_code() -> None:
    py = ["test_hidden_calc"]
    assert why_runner_file("conftest.py", "pytest", py)
    assert why_runner_file("sub/deep/conftest.py", "pytest", py)
    assert why_runner_file("forge-1.0.dist-info/entry_points.txt", "pytest", py)
    assert why_runner_file("x.pth", "pytest", py) and why_runner_file("pytest.py", "pytest", py)
    assert why_runner_file("test_hidden_calc/test_extra.py", "pytest", py)
    assert why_runner_file("calc/__init__.py", "pytest", py) is None  # the agent's code
    assert why_runner_file("calc/test_own.py", "pytest", py) is None  # outside the tests' scope
    go = ["mathx"]
    assert why_runner_file("mathx/zz_main_test.go", "go", go)
    assert why_runner_file("vendor/modules.txt", "go", go) and why_runner_file("go.work", "go", go)
    assert why_runner_file("mathx/testdata/golden.txt", "go", go)
    assert why_runner_file("mathx/mathx.go", "go", go) is None
    assert why_runner_file("other/x_test.go", "go", go) is None


def test_to_restore_added_changed_deleted_allowed() -> None:
    base = {"pytest.ini": "a", "calc/__init__.py": "b", "tox.ini": "c"}
    tree = {"pytest.ini": "A", "calc/__init__.py": "B", "conftest.py": "d"}  # tox.ini deleted
    got = to_restore(tree, base, "pytest", ["tests"])
    assert [(r.path, r.action) for r in got] == [
        ("conftest.py", "removed"),
        ("pytest.ini", "restored"),
        ("tox.ini", "restored"),
    ]
    assert paths(to_restore(tree, base, "pytest", ["tests"], ["conftest.py", "*.ini"])) == []
    kept = to_restore(tree, base, "pytest", ["tests"], same_settings={"pytest.ini": True})
    assert "pytest.ini" not in paths(kept)


def test_go_mod_counts_only_its_redirects() -> None:
    base = "module example.com/m\n\ngo 1.21\n\nrequire golang.org/x/y v1.0.0\n"
    block = base + "replace (\n\tgolang.org/x/y => ./y // local\n)\n"
    assert go_redirects(base) == ["module example.com/m"]
    assert "replace golang.org/x/y => ./y" in go_redirects(block)
    assert go_redirects(base.replace("v1.0.0", "v1.1.0")) == go_redirects(base)
    assert paths(to_restore({"go.mod": "x"}, {"go.mod": "y"}, "go", ["."])) == ["go.mod"]


def test_pytest_sections_compare_settings_not_text() -> None:
    plain = '[project]\nname = "calc"\n'
    assert pytest_section("pyproject.toml", plain) is None
    assert pytest_section("pyproject.toml", plain + 'version = "2"\n') is None
    added = plain + '[tool.pytest.ini_options]\naddopts = "-p forge"\n'
    assert pytest_section("pyproject.toml", added) is not None
    assert pytest_section("setup.cfg", "[metadata]\nname = x\n") is None
    assert pytest_section("setup.cfg", "[tool:pytest]\naddopts = -p x\n") is not None
    assert pytest_section("tox.ini", "[pytest\n") == "raw:[pytest\n"  # unparsable: any change


def test_restore_on_disk_with_real_git(tmp_path: Path) -> None:
    repo, sha = make_repo(
        tmp_path / "r",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "setup.cfg": "[tool:pytest]\naddopts = -q\n",
            "calc/__init__.py": "x = 1\n",
            "tests/conftest.py": "# baseline conftest\n",
        },
    )
    (repo / "conftest.py").write_text("import forged\n")
    (repo / "tests" / "conftest.py").write_text("# changed\n")
    with (repo / "pyproject.toml").open("a") as fh:
        fh.write('version = "0.2"\n')  # no pytest settings: the agent's edit stays
    (repo / "setup.cfg").unlink()
    (repo / "setup.cfg").symlink_to("/etc/passwd")
    (repo / "calc" / "__init__.py").write_text("x = 2\n")
    (repo / "x.pth").write_text("import forged\n")
    done = restore_runner_files(repo, sha, "pytest", ["tests"], [])
    assert sorted(paths(done)) == ["conftest.py", "setup.cfg", "tests/conftest.py", "x.pth"]
    assert not (repo / "conftest.py").exists() and not (repo / "x.pth").exists()
    assert (repo / "tests" / "conftest.py").read_text() == "# baseline conftest\n"
    assert not (repo / "setup.cfg").is_symlink()
    assert (repo / "setup.cfg").read_text().startswith("[tool:pytest]")
    assert "0.2" in (repo / "pyproject.toml").read_text()
    assert (repo / "calc" / "__init__.py").read_text() == "x = 2\n"


def test_blob_id_is_gits(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"hello\n")
    out = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True)
    assert blob_id(b"hello\n") == out.stdout.decode().strip()
