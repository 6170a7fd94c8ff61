"""Whether two trees grade with the same code (grader/same_code.py): a moved import, a
re-sorted import run and a string naming a moved module are the same code; any other change
is a change; an import order that can matter is kept; what cannot be compared (compiled
code, cache folders, what does not compile) is a refusal, never a crash; ``reach`` follows
the suite's imports into the harness and no further."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.grader.same_code import canonical, compare, reach
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
    assert canonical(old, MOVES, ["harness.scoring.appkit.procs"]) == canonical(new, {})


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
    before = b"from harness.scoring.appkit.fetch import get\nx = get('/a')\n"
    assert canonical(before, MOVES) != canonical(after, {})


@pytest.mark.unit
def test_an_import_order_that_can_matter_is_kept() -> None:
    """Two imports binding one name (the later wins), and ``__future__`` imports, which
    must come first: sorting them would make other code the same."""
    a = b"from harness.x import f\nfrom harness.y import f\n"
    b = b"from harness.y import f\nfrom harness.x import f\n"
    assert canonical(a, {}) != canonical(b, {})
    good = b"from __future__ import annotations\nimport os\n"
    with pytest.raises(ValueError, match="does not compile"):
        canonical(b"import os\nfrom __future__ import annotations\n", {})
    assert canonical(good, {})


@pytest.mark.unit
def test_what_cannot_be_compared_is_a_refusal_not_a_crash() -> None:
    deep = b"x = " + b"+".join([b"1"] * 50_000) + b"\n"
    with pytest.raises(ValueError):
        canonical(deep, {})
    with pytest.raises(ValueError, match="does not compile"):
        canonical(b"x = \x00\n", {})


@pytest.mark.unit
def test_reached_compiled_code_or_cache_folders_cannot_be_compared(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    for folder in ("harness", "harness/util"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "harness/util/fast.py").write_text("x = 1\n")
    (tmp_path / "harness/util/fast.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (suite_dir / "suite.py").write_text("import harness.util.fast\n")
    with pytest.raises(ValueError, match=r"harness\.util\.fast is compiled code"):
        reach(tmp_path, suite_dir)  # Python would load the extension, not the source
    (suite_dir / "suite.py").write_text("from harness.util.__pycache__ import fast\n")
    with pytest.raises(ValueError, match="lies in a cache folder"):
        reach(tmp_path, suite_dir)


@pytest.mark.unit
def test_reach_follows_imports_into_the_harness_and_no_further() -> None:
    found = reach(REPO_ROOT, REPO_ROOT / "scenarios" / "apps" / "meridian-ledger" / "suite")
    assert {"suite:suite.py", "suite:vendor.py", "harness.appkit.jail"} <= set(found)
    assert {"harness", "harness.scoring", "harness.scoring.rows", "harness.errors"} <= set(found)
    assert not any(k.startswith(("harness.cli", "harness.report")) for k in found)
    same = compare(found, found, {}, lambda *_: True)
    assert same.problems == [] and same.unproven == []


@pytest.mark.unit
def test_two_modules_moved_onto_one_name_are_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("x = 1\n")
    old = {"harness.a": a, "harness.b": b}
    moves = {"harness.a": "harness.c", "harness.b": "harness.c"}
    got = compare(old, {"harness.c": a}, moves, lambda *_: True)
    assert got.problems == ["harness.a and harness.b: both moved to harness.c"]


@pytest.mark.unit
def test_a_compiled_package_init_cannot_be_compared(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "__init__.py").write_text("")
    (tmp_path / "harness" / "__init__.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (suite_dir / "suite.py").write_text("import harness\n")
    with pytest.raises(ValueError, match="harness is compiled code"):
        reach(tmp_path, suite_dir)
