"""The board's script, run under node with a stand-in DOM: a header click sorts the rows,
numbers numerically, a second click reverses; the stylesheet styles the classes pages use."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.report.board.assets import CSS, JS

pytestmark = pytest.mark.unit

DOM = """
function cell(t) { return {textContent: t, dataset: {}}; }
function row(cells) { return {cells: cells.map(cell)}; }
const rows = [row(['b', '10']), row(['a', '9']), row(['c', '100'])];
const body = {rows: rows, appendChild(r) { const i = this.rows.indexOf(r);
  this.rows.splice(i, 1); this.rows.push(r); }};
const table = {tBodies: [body]};
const ths = [0, 1].map(() => ({dataset: {}, closest: () => table,
  addEventListener(kind, f) { this.click = f; }}));
globalThis.document = {querySelectorAll(sel) { return sel.includes('th') ? ths : []; }};
"""
RUN = """
const order = () => body.rows.map(r => r.cells[0].textContent).join('');
ths[1].click(); const byNumber = order();
ths[1].click(); const reversed = order();
ths[0].click(); const byText = order();
console.log(JSON.stringify([byNumber, reversed, byText]));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_header_click_sorts_numbers_numerically(tmp_path: Path) -> None:
    script = tmp_path / "board.js"
    script.write_text(DOM + JS + RUN)
    out = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["abc", "cba", "abc"]  # 9 < 10 < 100, not "10" < "100" < "9"


def test_the_stylesheet_styles_what_the_pages_mark() -> None:
    for selector in ("table", ".era", ".plot .point.pareto", "section.why", ".diff .add", ".msg"):
        assert selector in CSS, selector
