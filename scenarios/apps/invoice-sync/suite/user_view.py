"""The page as a user sees it: scrolled with the wheel (or the keyboard), watched throughout.

Two readers the console checks grade (``console``, ``money``), both in the browser the
``PageWatch`` drives:

- ``user_rows``: the rendered table judged the way a user reaches it. The page is never
  scrolled programmatically: the mouse wheel turns (down half a screen, sideways a
  quarter of a screen, snaking over both axes), the keyboard (PageDown, arrows) when
  the wheel moves nothing, until neither moves the page nor a scroller holding the
  table. At every position each cell's text lines are measured; the part of a line
  that is inside the viewport, inside every clipping ancestor (body and html aside:
  their clip is the page's edge) and not covered (``elementFromPoint`` with pointer
  events forced on, every 12 px) counts as seen. A cell is shown when every line of
  it was seen entirely, over the positions a user could reach (a name wider than the
  window, read by scrolling sideways, counts). ``html,body{overflow:hidden}`` then
  leaves rows never seen; a page wider than the window is read sideways. The output
  has the app kit's row shape (``id, displayed, visible, shown, why, cells``), plus
  the page's structure (tables, bodies).
- ``WATCH_JS``: installed with ``add_init_script`` before the first navigation, it
  reports every text any ``tbody`` cell displays (a ``MutationObserver``, flushed before
  the page paints, and a sweep every second for a style that reveals a cell; while the
  page is parsed, a row is read once the parser moved past it) with the
  number of tables and bodies, through an exposed function, across reloads: the
  checks judge every value ever shown, not the page at moments.
"""

from __future__ import annotations

import json
from typing import Any

#: the scan's steps, as shares of the viewport: a line is seen in parts over sideways
#: positions (the parts' union must cover it); a row lies, at one vertical position, at
#: least half a screen clear of a sticky header or footer
STEP_DOWN = 0.5
STEP_SIDE = 0.8
MAX_STEPS_DOWN = 600  # 600 half screens: ~12 000 rows of 16 px
MAX_STEPS_SIDE = 60
SETTLE_POLL_MS = 20
SETTLE_QUIET_MS = 100  # no move this long after a turn: nothing moves
SETTLE_MAX_MS = 1500

SCAN_JS = """(arg) => {
  const tol = 1.5;
  if (arg.op === 'reset' || !window.__isScan) window.__isScan = {cells: new Map()};
  const st = window.__isScan;
  const styled = (el) => !el.checkVisibility ||
    el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const covers = (ivs, w) => {
    const s = ivs.slice().sort((a, b) => a[0] - b[0]);
    let reach = 2;
    for (const [a, b] of s) { if (a > reach + tol) break; reach = Math.max(reach, b); }
    return reach >= w - 2;
  };
  const rowsOf = () => Array.from(document.querySelectorAll(arg.selector || 'tbody tr'));
  if (arg.op === 'result') {
    const order = ['ellipsis', 'clipped', 'covered', 'hidden'];
    const rows = rowsOf().map((r) => {
      const displayed = r.getClientRects().length > 0;
      const cells = Array.from(r.querySelectorAll('td'));
      const why = cells.map((c) => {
        if (!c.innerText.trim()) return '';
        if (!displayed) return 'hidden';
        const rec = st.cells.get(c);
        if (!rec || !rec.n) return (rec && rec.why.has('hidden')) ? 'hidden' : 'offscreen';
        let all = true;
        for (let i = 0; i < rec.n; i++) {
          if (!covers(rec.seen[i] || [], rec.w[i] || 0)) { all = false; break; }
        }
        if (all) return '';
        return order.find((w) => rec.why.has(w)) || 'offscreen';
      });
      return {id: r.getAttribute('data-id'), displayed: displayed,
              visible: displayed && why.every((w) => w === ''),
              shown: why.map((w) => w === ''), why: why,
              cells: cells.map((c) => c.innerText.trim())};
    });
    return {rows: rows, tables: document.querySelectorAll('table').length,
            bodies: document.querySelectorAll('tbody').length};
  }
  const style = document.createElement('style');
  style.textContent = '* { pointer-events: auto !important; }';
  (document.head || document.documentElement).appendChild(style);
  const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
  const clippers = (el) => {
    const found = [];
    for (let a = el; a && a !== document.body && a !== document.documentElement;
         a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') found.push(a);
    }
    return found;
  };
  const range = document.createRange();
  for (const r of rowsOf()) {
    const rb = r.getBoundingClientRect();
    if (!r.getClientRects().length || rb.bottom < 0 || rb.top > vh) continue;
    for (const cell of r.querySelectorAll('td')) {
      const box = cell.getBoundingClientRect();
      if (box.bottom < 0 || box.top > vh || box.right < 0 || box.left > vw) continue;
      let rec = st.cells.get(cell);
      if (!rec) { rec = {n: 0, w: [], seen: [], why: new Set()}; st.cells.set(cell, rec); }
      if (rec.done) continue;
      if (!styled(cell)) { rec.why.add('hidden'); continue; }
      const lines = [];
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!n.textContent.trim() || !n.parentElement || !styled(n.parentElement)) continue;
        range.selectNodeContents(n);
        for (const q of range.getClientRects()) {
          if (q.width > 0 && q.height > 0) lines.push({el: n.parentElement, q: q});
        }
      }
      if (!lines.length) { if (cell.innerText.trim()) rec.why.add('hidden'); continue; }
      if (rec.n !== lines.length) { rec.n = lines.length; rec.seen = []; }
      lines.forEach((line, i) => {
        const q = line.q;
        rec.w[i] = q.width;
        if (!rec.seen[i]) rec.seen[i] = [];
        if (q.top < -tol || q.bottom > vh + tol) return;
        let a = Math.max(q.left, 0), b = Math.min(q.right, vw);
        for (const c of clippers(line.el)) {
          const cs = getComputedStyle(c);
          if (cs.textOverflow === 'ellipsis' && c.scrollWidth > c.clientWidth + 1) {
            rec.why.add('ellipsis');
          }
          const cb = c.getBoundingClientRect();
          const left = cb.left + c.clientLeft, top = cb.top + c.clientTop;
          const right = left + c.clientWidth, bottom = top + c.clientHeight;
          if (q.top < top - tol || q.bottom > bottom + tol) {
            if (q.bottom > top && q.top < bottom) rec.why.add('clipped');
            a = b;
            break;
          }
          if ((q.left < left - tol && a < left) || (q.right > right + tol && b > right)) {
            if (q.right > left && q.left < right) rec.why.add('clipped');
          }
          a = Math.max(a, left); b = Math.min(b, right);
        }
        if (b - a < 1) return;
        const y = q.top + q.height / 2;
        const xs = [];
        for (let x = a + Math.min(2, (b - a) / 2); x < b - 2; x += 12) xs.push(x);
        xs.push(b - Math.min(2, (b - a) / 2));
        let start = null, last = null;
        const close = () => {
          if (start !== null) rec.seen[i].push([start - q.left - 2, last - q.left + 2]);
          start = null;
        };
        for (const x of xs) {
          const el = document.elementFromPoint(x, y);
          if (el && cell.contains(el)) {
            if (start === null) start = x === xs[0] ? a : x;
            last = x === xs[xs.length - 1] ? b : x;
          } else { rec.why.add('covered'); close(); }
        }
        close();
      });
      rec.done = rec.seen.length === rec.n &&
        rec.seen.every((ivs, i) => covers(ivs, rec.w[i] || 0));
    }
  }
  style.remove();
  return null;
}"""

#: where the page stands: the window's scroll and every scroller holding the table, and
#: where a user's pointer rests (the visible middle of the table's body, else the window's)
POS_JS = """() => {
  const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
  const body = document.querySelector('tbody');
  const at = [window.scrollX, window.scrollY];
  const root = document.scrollingElement || document.documentElement;
  let left = window.scrollX > 0.5, right = window.scrollX + vw < root.scrollWidth - 0.5;
  let x = vw / 2, y = vh / 2;
  if (body) {
    for (let a = body.parentElement; a; a = a.parentElement) {
      at.push(a.scrollLeft, a.scrollTop);
      const ox = getComputedStyle(a).overflowX;
      if (a !== root && (ox === 'auto' || ox === 'scroll')) {
        left = left || a.scrollLeft > 0.5;
        right = right || a.scrollLeft + a.clientWidth < a.scrollWidth - 0.5;
      }
    }
    const b = body.getBoundingClientRect();
    const l = Math.max(b.left, 0), r = Math.min(b.right, vw);
    const t = Math.max(b.top, 0), u = Math.min(b.bottom, vh);
    if (r - l > 4 && u - t > 4) { x = (l + r) / 2; y = (t + u) / 2; }
  }
  return {at: at.map((v) => Math.round(v)).join(','), x: x, y: y, vw: vw, vh: vh,
          left: left, right: right};
}"""


def _pos(page: Any) -> dict[str, Any]:
    return dict(page.evaluate(POS_JS))


def _settle(page: Any, before: str) -> str:
    """Wait until the page stops moving (a wheel's scroll may be animated)."""
    waited, now = 0, before
    while waited < SETTLE_MAX_MS:
        page.wait_for_timeout(SETTLE_POLL_MS)
        waited += SETTLE_POLL_MS
        now = str(_pos(page)["at"])
        if now != before or waited >= SETTLE_QUIET_MS:
            break
    return now


def _step(page: Any, dx: float, dy: float, wheeled: set[str]) -> bool:
    """One turn of the wheel (the keyboard when the wheel moves nothing, unless the
    wheel moved this axis before: then the page's end is reached); True when the page
    or a scroller holding the table moved."""
    pos = _pos(page)
    before = str(pos["at"])
    axis = "x" if dx else "y"
    if dx and not pos["right" if dx > 0 else "left"]:
        return False  # at the edge: a sideways wheel there is the browser's "back"
    page.mouse.move(pos["x"], pos["y"])
    page.mouse.wheel(dx, dy)
    if _settle(page, before) != before:
        wheeled.add(axis)
        return True
    if axis in wheeled:
        return False
    keys = (["PageDown"] if dy > 0 else ["PageUp"]) if dy else []
    keys += (["ArrowRight"] if dx > 0 else ["ArrowLeft"]) * 8 if dx else []
    for key in keys:
        page.keyboard.press(key)
    return _settle(page, before) != before


def user_rows(page: Any, selector: str = "tbody tr") -> dict[str, Any]:
    """Scroll the page as a user does, over both axes, judging every cell at every
    position; ``{"rows": [...], "tables": n, "bodies": n, "positions": n}``."""
    page.evaluate(SCAN_JS, {"op": "reset", "selector": selector})
    pos = _pos(page)
    dx, dy = max(40.0, pos["vw"] * STEP_SIDE), max(40.0, pos["vh"] * STEP_DOWN)
    page.evaluate(SCAN_JS, {"op": "scan", "selector": selector})
    positions, side, sideways = 1, 1, True
    wheeled: set[str] = set()
    for _ in range(MAX_STEPS_DOWN):
        for k in range(MAX_STEPS_SIDE if sideways else 0):
            if not _step(page, side * dx, 0, wheeled):
                sideways = sideways and (k > 0 or side < 0)  # never moved: not wider
                break
            page.evaluate(SCAN_JS, {"op": "scan", "selector": selector})
            positions += 1
        side = -side
        if not _step(page, 0, dy, wheeled):
            break
        page.evaluate(SCAN_JS, {"op": "scan", "selector": selector})
        positions += 1
    got = dict(page.evaluate(SCAN_JS, {"op": "result", "selector": selector}))
    got["positions"] = positions
    return got


def scan_first(page: Any, selector: str = "tbody tr") -> None:
    """Judge the first screen (before any scroll)."""
    page.evaluate(SCAN_JS, {"op": "reset", "selector": selector})
    page.evaluate(SCAN_JS, {"op": "scan", "selector": selector})


WATCH_BINDING = "__invoiceSyncShown"

WATCH_JS = (
    """(() => {
  if (window.__isWatch) return;
  window.__isWatch = true;
  const send = (out) => {
    try { if (window.BINDING) window.BINDING(JSON.stringify(out)); } catch (e) {}
  };
  const seen = new Set();
  let pending = new Set();
  const visible = (el) => !el.checkVisibility ||
    el.checkVisibility({visibilityProperty: true});
  const flush = () => {
    const out = [];
    const t = Math.round(performance.now());
    const parsing = document.readyState === 'loading';
    const later = new Set();
    for (const cell of pending) {
      if (!cell.isConnected) continue;
      const tr = cell.closest('tr');
      if (!tr || !tr.closest('tbody')) continue;
      // while the parser may still be inside it (a network chunk ends mid-text), the
      // last row is not shown yet as it will be: read it once the parser moved on
      if (parsing && !tr.nextElementSibling) { later.add(cell); continue; }
      if (!visible(cell)) continue;
      const idx = Array.prototype.indexOf.call(tr.querySelectorAll('td'), cell);
      const text = cell.innerText.trim();
      if (!text || idx < 0) continue;
      const key = tr.getAttribute('data-id') + '\\u0001' + idx + '\\u0001' + text;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push([tr.getAttribute('data-id'), idx, text, t]);
    }
    pending = later;
    if (document.querySelector('tbody tr')) {
      const shape = 'tables=' + document.getElementsByTagName('table').length +
        ',bodies=' + document.getElementsByTagName('tbody').length;
      if (!seen.has(shape)) { seen.add(shape); out.push([null, -1, shape, t]); }
    }
    if (out.length) send(out);
  };
  const add = (n) => {
    if (!n || n.nodeType !== 1) return;
    const c = n.closest('td');
    if (c) pending.add(c);
    for (const d of n.querySelectorAll('td')) pending.add(d);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      const t = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (t) { const c = t.closest('td'); if (c) pending.add(c); }
      if (r.type === 'childList') r.addedNodes.forEach(add);
      else if (r.type === 'attributes') add(t);
    }
    flush();
  }).observe(document, {childList: true, subtree: true, characterData: true,
                        attributes: true});
  window.__isWatchSweep = () => {
    for (const d of document.querySelectorAll('tbody td')) pending.add(d);
    flush();
  };
  document.addEventListener('DOMContentLoaded', window.__isWatchSweep);
  setInterval(window.__isWatchSweep, 1000);
})();"""
).replace("BINDING", WATCH_BINDING)


class ShownLog:
    """What the watch reported: (row id, cell index, text, ms into that page load)."""

    def __init__(self) -> None:
        self.values: list[tuple[str | None, int, str, int]] = []
        self.shapes: set[str] = set()
        self.loads = 0

    def receive(self, payload: str) -> None:
        try:
            items = json.loads(payload)
        except ValueError:
            return
        if not isinstance(items, list):
            return
        for item in items[:20000]:
            if not (isinstance(item, list) and len(item) == 4):
                continue
            rid, idx, text, t = item
            if idx == -1:
                self.shapes.add(str(text))
            elif isinstance(idx, int) and len(self.values) < 200000:
                self.values.append((None if rid is None else str(rid), idx, str(text), int(t)))


def install_watch(page: Any, log: ShownLog) -> None:
    """Before the first navigation: every later load of the page reports to ``log``."""
    page.expose_function(WATCH_BINDING, log.receive)
    page.add_init_script(WATCH_JS)


def sweep(page: Any) -> None:
    """A last report of the watch (values shown since its last sweep)."""
    page.evaluate("() => window.__isWatchSweep && window.__isWatchSweep()")
