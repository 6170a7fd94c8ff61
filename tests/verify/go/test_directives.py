"""Build-steering directives in the agent's Go files are refused before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.verify.go.directives import refusal

pytestmark = pytest.mark.unit


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    "text",
    [
        'package m\n\n//go:cgo_ldflag "-B/verify/tree/bin"\n',
        "package m\n//go:cgo_import_dynamic x y\n",
        "//line _cgo_x.go:1\npackage m\n",
        "package m\nvar x = 1 /*line a.go:3*/\n",
        "package m\n\t//line a.go:3:1\n",
    ],
)
def test_a_changed_file_with_a_directive_is_refused(tmp_path: Path, text: str) -> None:
    tree = _tree(tmp_path, {"m/zz.go": text})
    why = refusal(tree, ["m/zz.go"], [])
    assert why is not None and why.startswith("m/zz.go:")


def test_plain_comments_unchanged_files_and_hidden_tests_are_not_judged(tmp_path: Path) -> None:
    text = "//line _cgo_x.go:1\npackage m\n"
    tree = _tree(
        tmp_path,
        {
            "m/ok.go": "package m\n// line up the numbers; see go:cgo_ldflag docs\n",
            "m/old.go": text,  # the baseline's (not changed)
            "m/h_test.go": text,  # a hidden test
            "m/notes.txt": text,
        },
    )
    assert refusal(tree, ["m/ok.go", "m/h_test.go", "m/notes.txt"], ["m/h_test.go"]) is None


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.go"
    outside.write_text("//line x.go:1\npackage m\n")
    tree = tmp_path / "tree"
    (tree / "m").mkdir(parents=True)
    (tree / "m" / "zz.go").symlink_to(outside)
    assert refusal(tree, ["m/zz.go"], []) is None
