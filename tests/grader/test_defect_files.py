"""A defect's .yml: what load_defects takes, and the one-line errors for what it refuses."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.errors import UserError
from harness.grader.controls import load_defects

pytestmark = pytest.mark.unit


def _load(tmp_path: Path, yml: str) -> list:  # type: ignore[type-arg]
    folder = tmp_path / "defects"
    folder.mkdir(exist_ok=True)
    (folder / "racy.patch").write_text("")
    (folder / "racy.yml").write_text(yml)
    return load_defects(SimpleNamespace(directory=tmp_path))  # type: ignore[arg-type]


def test_may_break_is_read_beside_breaks_and_violates(tmp_path: Path) -> None:
    (d,) = _load(
        tmp_path,
        "breaks: [sync.no_concurrent]\nmay_break: [wire.cursor_order]\n"
        "violates: [M-API-2]\nharm: two walks\n",
    )
    assert (d.breaks, d.may_break, d.violates) == (
        ["sync.no_concurrent"],
        ("wire.cursor_order",),
        ("M-API-2",),
    )
    (plain,) = _load(tmp_path, "breaks: [a]\nharm: x\n")
    assert plain.may_break == ()


@pytest.mark.parametrize(
    ("yml", "field"),
    [
        ("breaks: [a]\nmay_break: a\n", "may_break"),  # not a list
        ("breaks: [a, b]\nmay_break: [b]\n", "may_break"),  # required and excused at once
        ("breaks: []\n", "breaks"),
        ("breaks: [a]\nviolates: M-X-1\n", "violates"),
    ],
)
def test_a_malformed_defect_names_its_file_and_field(tmp_path: Path, yml: str, field: str) -> None:
    with pytest.raises(UserError) as err:
        _load(tmp_path, yml)
    assert err.value.field == field and str(err.value.file).endswith("racy.yml")
