"""Rendered truth of table rows: a value counts as shown only when it is entirely visible.

For every ``tbody tr`` of a selector's tables, after the page's scripts ran, each cell's
text is read (``innerText``) and judged **shown** when all of these hold:

- displayed and not hidden by style (``checkVisibility`` with opacity and visibility);
- *not clipped*: every rectangle of the cell's text (a ``Range`` over its text nodes)
  lies inside the viewport and inside the padding box of every ancestor that clips
  (``overflow`` other than ``visible``, the cell itself included), so an ellipsis, a
  fixed width with ``overflow: hidden`` or a ``clip-path``-free cropping container all
  count as clipped; ``scrollWidth > clientWidth`` on a clipping element with
  ``text-overflow: ellipsis`` is reported as the reason;
- *not covered*: ``elementFromPoint`` at the centre and near both ends of every text
  rectangle lands inside the cell (with ``pointer-events`` forced on, so a
  click-through overlay, a fixed footer or a sticky header still covers it);
- *reachable*: the row is scrolled into view (centre) first, as a user would scroll.

A row is ``visible`` when every cell with text is shown. ``why`` names the first failure
of each cell that is not shown (``hidden``, ``clipped``, ``ellipsis``, ``covered``,
``offscreen``). The JavaScript runs in the page; the result is plain data.
"""

from __future__ import annotations

from typing import Any

ROWS_JS = """(selector) => {
  const style = document.createElement('style');
  style.textContent = '* { pointer-events: auto !important; }';
  (document.head || document.documentElement).appendChild(style);
  const tol = 1.5;
  const styled = (el) => !el.checkVisibility ||
    el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const clippers = (el) => {
    const found = [];
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') found.push(a);
    }
    return found;
  };
  const padBox = (a) => {
    const b = a.getBoundingClientRect();
    const left = b.left + a.clientLeft, top = b.top + a.clientTop;
    return {left: left, top: top, right: left + a.clientWidth, bottom: top + a.clientHeight};
  };
  const inside = (r, box) => r.left >= box.left - tol && r.right <= box.right + tol &&
    r.top >= box.top - tol && r.bottom <= box.bottom + tol;
  const textRuns = (cell) => {
    const range = document.createRange();
    const runs = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim() || !n.parentElement || !styled(n.parentElement)) continue;
      range.selectNodeContents(n);
      const rects = Array.from(range.getClientRects()).filter(r => r.width > 0 && r.height > 0);
      if (rects.length) runs.push({el: n.parentElement, rects: rects});
    }
    return runs;
  };
  const judge = (cell) => {
    if (!cell.innerText.trim()) return null;
    if (!styled(cell)) return 'hidden';
    const runs = textRuns(cell);
    const rects = runs.flatMap(run => run.rects);
    if (!rects.length) return 'hidden';
    for (const run of runs) {
      for (const a of clippers(run.el)) {
        const cs = getComputedStyle(a);
        if (cs.textOverflow === 'ellipsis' && a.scrollWidth > a.clientWidth + 1) return 'ellipsis';
        const box = padBox(a);
        if (!run.rects.every(r => inside(r, box))) return 'clipped';
      }
    }
    const view = {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight};
    if (!rects.every(r => inside(r, view))) return 'offscreen';
    for (const r of rects) {
      const y = r.top + r.height / 2;
      const xs = [r.left + Math.min(2, r.width / 2), r.left + r.width / 2,
                  r.right - Math.min(2, r.width / 2)];
      for (const x of xs) {
        const el = document.elementFromPoint(x, y);
        if (!el || !cell.contains(el)) return 'covered';
      }
    }
    return '';
  };
  const rows = [];
  for (const r of document.querySelectorAll(selector)) {
    const displayed = r.getClientRects().length > 0;
    const cells = Array.from(r.querySelectorAll('td'));
    if (displayed) r.scrollIntoView({block: 'center', inline: 'nearest'});
    const why = cells.map(c => {
      const got = displayed ? judge(c) : 'hidden';
      return got === null ? '' : got;
    });
    rows.push({id: r.getAttribute('data-id'), displayed: displayed,
               visible: displayed && why.every(w => w === ''),
               shown: why.map(w => w === ''), why: why,
               cells: cells.map(c => c.innerText.trim())});
  }
  style.remove();
  window.scrollTo(0, 0);
  return rows;
}"""

DEFAULT_ROWS = "tbody tr"


def rendered_rows(page: Any, selector: str = DEFAULT_ROWS) -> list[dict[str, Any]]:
    """Every row matching ``selector`` (a playwright page): id, cells, shown, why, visible."""
    return list(page.evaluate(ROWS_JS, selector))


def shown_text(row: dict[str, Any], index: int) -> str | None:
    """The cell's text when it is entirely shown, else None (clipped, covered, missing)."""
    cells = row.get("cells") or []
    shown = row.get("shown") or []
    if index >= len(cells) or index >= len(shown) or not shown[index]:
        return None
    return str(cells[index])


def hidden_reason(row: dict[str, Any]) -> str:
    """``cell i: why`` for the first cell that is not shown ('' when all are)."""
    for i, why in enumerate(row.get("why") or []):
        if why:
            return f"cell {i}: {why}"
    return "" if row.get("displayed", True) else "row not displayed"
